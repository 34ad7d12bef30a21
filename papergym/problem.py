"""The problem side of the contract: budgets, training views, evaluation results, tasks.

Every benchmark trial runs the same three lines (see ``docs/contract.md``)::

    task = papergym.make_task(problem_id, tier=tier, **kwargs)
    artifact = agent.solve(task.train_view(seed), task.budget, seed)
    result = task.evaluate(artifact, seed)

A :class:`Task` owns everything that makes a number trustworthy: what the agent may see
(``train_view``), how much it may spend (``budget``, enforced by the view it hands out),
and how the returned artifact is scored (``evaluate``, on seeds, instances or splits the
agent never saw). A Gymnasium or PettingZoo problem gets its Task through
:class:`EnvTask`, which scores a policy by running it on held-out episode seeds.

Sealed held-out data: every evaluation seed or instance is drawn from the trial seed *and*
a secret 128-bit salt (:func:`set_eval_salt`), kept in a 0600 file beside the results store
(:func:`load_or_create_salt`) and set only in the process that evaluates, never in the one
that runs the agent. Without the salt the held-out draws would be a public function of the
seed that an agent could compute and train on. With no salt set (a notebook, the unit tests)
the documented public default applies: no extra entropy, i.e. ``Task.eval_seeds(seed, n)``
is ``SeedSequence([10**6, seed])``, deterministic for everyone.

Privileged modes (an oracle's view of the instance, kgqa's gold path) are granted by the
problem to ``reference``-role agents only (:meth:`Task.set_agent_role`); a Task records in
``privileged_used`` whether it granted one, and such a row is never ranked.

Shared agent runs (a pretraining stage that several seeds or sections start from) are
memoized by the problem through :class:`SharedRuns`, whose cache key always holds the trial's
agent identity as the harness knows it: an agent names its own runs, never another's.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import secrets
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv, VectorWrapper

if TYPE_CHECKING:
    from papergym.cache import Entry

TIERS = ("smoke", "standard", "full")

# Seeds handed to agents for training come from [0, EVAL_SEED_OFFSET); evaluation seeds are
# derived at or above it, so a problem that draws instances from seeds can keep the two
# disjoint by construction.
EVAL_SEED_OFFSET = 1_000_000
PUBLIC_SALT_ID = "public"
SALT_SUFFIX = ".salt"

_eval_salt: bytes | None = None


# ----------------------------------------------------------------------------- the eval salt


def set_eval_salt(salt: bytes | str | None) -> None:
    """Seal this process's held-out draws with ``salt`` (16 bytes or 32 hex digits); ``None``
    restores the public default. Call it only in the process that evaluates."""
    global _eval_salt
    if salt is None:
        _eval_salt = None
        return
    raw = bytes.fromhex(salt) if isinstance(salt, str) else bytes(salt)
    if len(raw) != 16:
        raise ValueError(f"an eval salt is 16 bytes (32 hex digits), got {len(raw)} bytes")
    _eval_salt = raw


def eval_salt() -> bytes | None:
    """The salt set in this process, or ``None`` (the public default)."""
    return _eval_salt


# How held-out draws use the salt; part of the salt id, so rows drawn under an earlier scheme
# (10^6 + salted word mod 10^6) read as drawn under another salt, and the runner says so.
DRAW_SCHEME = b"hmac-sha256-63"


def salt_id(salt: bytes | None) -> str:
    """What provenance records: a hash naming the salt (and the draw scheme) without
    revealing it."""
    if salt is None:
        return PUBLIC_SALT_ID
    return hashlib.sha256(b"papergym-eval-salt-id|" + DRAW_SCHEME + b"|" + salt).hexdigest()[:16]


def eval_entropy() -> tuple[int, ...]:
    """The salt as four 32-bit words to mix into a ``SeedSequence``; ``()`` when unset."""
    if _eval_salt is None:
        return ()
    return tuple(int.from_bytes(_eval_salt[i : i + 4], "little") for i in range(0, 16, 4))


def eval_seed_sequence(*parts: int) -> np.random.SeedSequence:
    """A held-out random stream: ``SeedSequence([*parts, *salt words])``. Use it for every
    held-out draw not made through :meth:`Task.eval_seeds` (with no salt set it is exactly
    ``SeedSequence(list(parts))``)."""
    return np.random.SeedSequence([int(p) for p in parts] + list(eval_entropy()))


def sealed_seed(seed: int, *parts: int) -> int:
    """A held-out draw's integer seed: ``seed`` itself under the public default (so a family's
    public test split is what an unsalted evaluation uses), else a 63-bit value of the salted
    stream of ``(seed, *parts)`` that the agent cannot compute."""
    if _eval_salt is None:
        return int(seed)
    words = eval_seed_sequence(int(seed), *parts).generate_state(2, dtype=np.uint32)
    return (int(words[0]) << 31) | (int(words[1]) >> 1)


_held_out_data: list[Callable[[], Iterable[str | Path]]] = []


def register_held_out_data(paths: Callable[[], Iterable[str | Path]]) -> None:
    """Declare the files of a family's held-out split (``paths()`` lists them; called when an
    agent process starts, so a missing optional package is no error here). Agent processes
    of a root runner see each as an unreadable file (a private mount namespace)."""
    _held_out_data.append(paths)


def held_out_data_files() -> list[str]:
    """Every declared held-out data file that exists, as a resolved path."""
    found: set[str] = set()
    for paths in _held_out_data:
        try:
            found.update(str(Path(p).resolve()) for p in paths())
        except (OSError, ImportError, ValueError):
            continue
    return sorted(p for p in found if os.path.isfile(p))


SEED_SPACE = 1 << 63  # held-out seeds are below it (numpy, torch and gymnasium take them)


def keyed_eval_seeds(salt: bytes, seed: int, n: int) -> list[int]:
    """``n`` held-out seeds of trial ``seed`` under ``salt``: HMAC-SHA256(salt, trial and
    index) read as an integer in [EVAL_SEED_OFFSET, 2^63). Without the salt nobody can
    enumerate them: the space has ~9.2e18 values and the stream is keyed."""
    span = SEED_SPACE - EVAL_SEED_OFFSET
    return [EVAL_SEED_OFFSET + int.from_bytes(
        hmac.new(salt, f"papergym-eval-seeds|{int(seed)}|{i}".encode(), "sha256").digest()[:8],
        "big") % span for i in range(n)]


def instance_id(eval_seed: int) -> str:
    """The opaque name of a held-out instance in stored and published units: a keyed hash of
    its seed (stable under one store's salt), never the seed that regenerates it."""
    key = _eval_salt if _eval_salt is not None else PUBLIC_SALT_ID.encode()
    return hmac.new(key, f"papergym-instance|{int(eval_seed)}".encode(),
                    "sha256").hexdigest()[:16]


def salt_path(store_path: str | Path) -> Path:
    store = Path(store_path)
    return store.with_name(store.name + SALT_SUFFIX)


def load_or_create_salt(store_path: str | Path | None) -> bytes | None:
    """The salt of a results store: read from ``<store>.salt`` (mode 0600), created once;
    ``None`` without a store (the public default).

    One salt per store, so a rerun on the same store reproduces its held-out instances; copy
    the file beside another store to reproduce them there."""
    if store_path is None:
        return None
    path = salt_path(store_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        text = path.read_text().strip()
        try:
            raw = bytes.fromhex(text)
        except ValueError:
            raw = b""
        if len(raw) != 16:
            raise ValueError(f"{path}: not an eval salt (expected 32 hex digits)") from None
        return raw
    raw = secrets.token_bytes(16)
    with os.fdopen(fd, "w") as fh:
        fh.write(raw.hex() + "\n")
    return raw


def check_training_seed(seed: int, where: str) -> int:
    """Views accept only training seeds (below :data:`EVAL_SEED_OFFSET`)."""
    value = int(seed)
    if not 0 <= value < EVAL_SEED_OFFSET:
        raise PermissionError(
            f"{where}: seed {value} is not a training seed; training instances use seeds in "
            f"[0, {EVAL_SEED_OFFSET}) and held-out ones are sealed")
    return value


# ----------------------------------------------------------------------------- metric declarations

MetricDeclaration = str | tuple[str, float | None, float | None]


class MetricOutOfBounds(ValueError):
    """A metric outside the bounds its problem declares: the trial fails."""


def metric_direction(declaration: MetricDeclaration) -> str:
    """``"max"`` or ``"min"`` of a ``Task.metrics`` entry (a string or ``(dir, lo, hi)``)."""
    return declaration if isinstance(declaration, str) else declaration[0]


def metric_bounds(declaration: MetricDeclaration) -> tuple[float, float]:
    if isinstance(declaration, str):
        return -math.inf, math.inf
    _, low, high = declaration
    return (-math.inf if low is None else float(low)), (math.inf if high is None else float(high))


class BudgetExceeded(RuntimeError):
    """Raised by a problem's view when an agent asks for more than its budget allows."""


class Budget:
    """Named, problem-enforced limits (environment steps, oracle calls, bits, tokens...).

    ``spend(name, n)`` is called by the problem's own code (a view, a wrapper, an oracle
    handle) every time the agent consumes a resource; it raises :class:`BudgetExceeded`
    the moment a limit would be crossed. Agents read ``remaining(name)`` to plan.
    """

    def __init__(self, **limits: float) -> None:
        for name, limit in limits.items():
            if limit is not None and (not isinstance(limit, (int, float)) or limit < 0):
                raise ValueError(f"budget {name!r} must be a non-negative number, got {limit!r}")
        self.limits: dict[str, float] = {k: v for k, v in limits.items() if v is not None}
        self.used: dict[str, float] = {k: 0 for k in self.limits}

    def spend(self, name: str, amount: float = 1) -> None:
        if name not in self.limits:
            raise KeyError(f"unknown budget {name!r}; this problem meters {sorted(self.limits)}")
        if self.used[name] + amount > self.limits[name]:
            raise BudgetExceeded(
                f"budget {name!r} exhausted: used {self.used[name]:g} of {self.limits[name]:g}, "
                f"asked for {amount:g} more"
            )
        self.used[name] += amount

    def remaining(self, name: str) -> float:
        return self.limits[name] - self.used[name]

    def as_dict(self) -> dict[str, dict[str, float]]:
        return {k: {"limit": self.limits[k], "used": self.used[k]} for k in self.limits}

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}={self.used[k]:g}/{self.limits[k]:g}" for k in self.limits)
        return f"Budget({parts})"


@runtime_checkable
class Policy(Protocol):
    """An artifact that acts: ``policy(observation) -> action``.

    Multi-agent policies map a dict of observations to a dict of actions. A stateful policy
    may define ``reset()``, which the evaluator calls at the start of every episode.
    """

    def __call__(self, observation: Any) -> Any: ...


@dataclass
class EvalResult:
    """What ``Task.evaluate`` returns; every number in it is computed by the problem.

    metrics: scalar metrics of this trial (the primary metric among them).
    curves: optional learning or convergence curves, ``name -> [(x, y), ...]``.
    units: optional per-instance metrics, each a dict with an ``"instance"`` key, for
        claims that pair agents over (instance x seed) units rather than trials.
    info: optional facts the problem recorded about the trial that are not scores (the
        tuning runs it ran for the agent and their results, the configuration they chose),
        JSON-serializable; the row keeps them as ``provenance["problem_info"]``.
    """

    metrics: dict[str, float]
    curves: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    units: list[dict[str, Any]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        clean: dict[str, float] = {}
        for name, value in self.metrics.items():
            if isinstance(value, (bool, np.bool_)):
                value = float(value)
            if not isinstance(value, (int, float, np.integer, np.floating)):
                raise TypeError(f"metric {name!r} must be a number, got {type(value).__name__}")
            clean[name] = float(value)
        self.metrics = clean
        self.curves = {
            k: [(float(x), float(y)) for x, y in points] for k, points in self.curves.items()
        }

    def non_finite(self) -> list[str]:
        return [k for k, v in self.metrics.items() if not math.isfinite(v)]


@dataclass
class Privileges:
    """Oracle / privileged modes of one trial: ``allowed`` for a reference agent only (set by
    the harness through :meth:`Task.set_agent_role`); ``used`` once one was granted."""

    allowed: bool = False
    used: bool = False

    def grant(self, requested: Any) -> bool:
        """Whether a requested privileged mode is granted (and record that it was)."""
        granted = bool(requested) and self.allowed
        self.used = self.used or granted
        return granted


@dataclass(frozen=True)
class SharedRuns:
    """Deterministic runs of the trial's agent that a problem memoizes across trials.

    A problem may offer an agent to run a stage once and share it (a pretraining run that every
    seed, or a fine-tuning section, starts from): the view calls :meth:`get` with the agent's
    ``key`` (naming every setting of the run) and the problem's own ``setting``. The cache entry
    is keyed by both and by ``agent``, the trial agent's registry id (or plug-in path) and code
    hash, which the harness sets (:meth:`Task.set_agent_role`) and the agent cannot choose: an
    agent can neither read nor plant another agent's run, and a code change is a new run. With
    no identity (a view used outside the runner) nothing is shared: ``build`` runs each time.
    The value is the problem's to keep: plain data, treated as read-only by every reader.
    """

    agent: str | None = None

    def get(self, namespace: str, key: str, setting: Mapping[str, Any], build: Callable[[], Any],
            code: Sequence[Path]) -> Any:
        if not isinstance(key, str) or not key:
            raise TypeError(f"a shared run's key must be a non-empty string naming every setting "
                            f"of the run, got {key!r}")
        if self.agent is None:
            return build()
        from papergym import cache

        config = {**setting, "agent": self.agent, "key": key}
        return cache.get(cache.Entry(namespace, config, build=build, code=tuple(code)))


class Task(ABC):
    """A problem as the harness sees it. Subclasses fill in the class attributes.

    Class attributes:
        id: registered id, ``papergym/<Name>-v<N>``.
        family: the problem family (folder name under envs/).
        paper: the paper key the family reproduces.
        metrics: ``name -> "max" | "min"`` for every metric ``evaluate`` returns, or
            ``name -> (direction, low, high)`` where the metric has bounds (``None`` = open);
            a value outside its bounds fails the trial.
        nondeterministic_metrics: the metrics that are not a function of the seed (wall-clock
            timings); determinism checks leave them out (:func:`deterministic_metrics`).

    Held-out draws go through :meth:`eval_seeds` or :func:`eval_seed_sequence` (salted);
    privileged modes are given only when :attr:`oracle_allowed` (a ``reference`` agent),
    and a Task that gave one sets ``privileged_used``.
    """

    id: ClassVar[str] = ""
    family: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = {}
    nondeterministic_metrics: ClassVar[frozenset[str]] = frozenset()
    # Arguments the Task consumes itself; ``papergym.make`` keeps them from the env.
    task_kwargs: ClassVar[tuple[str, ...]] = ()
    # Arguments accepted through a ``**kwargs`` catch-all and passed on to a builder (e.g. a
    # world generator); named here so a spec's kwargs can be checked before a trial runs.
    extra_arguments: ClassVar[tuple[str, ...]] = ()

    def __init__(self, tier: str = "smoke", **kwargs: Any) -> None:
        from papergym.isolation import refuse_problem_in_agent

        refuse_problem_in_agent(f"building {type(self).__name__}, a problem's Task,")
        if tier not in TIERS:
            raise ValueError(f"unknown tier {tier!r}; choose one of {', '.join(TIERS)}")
        self.tier = tier
        self.kwargs = kwargs

    @property
    def privileges(self) -> Privileges:
        """Who may use oracle/privileged modes in this trial, and whether one was used; a
        view gets this record (never the Task) to grant and log them."""
        if "_privileges" not in self.__dict__:
            self._privileges = Privileges()
        return self._privileges

    def set_agent_role(self, role: str | None, identity: str | None = None) -> None:
        """Tell the problem whose artifact it scores: only ``reference`` gets privileges;
        ``identity`` (``<agent ref>@<code hash>``, set by the harness) keys its shared runs."""
        if role not in (None, "method", "baseline", "reference"):
            raise ValueError(f"agent role must be method, baseline or reference, got {role!r}")
        self.privileges.allowed = role == "reference"
        self._shared_runs = SharedRuns(identity)

    @property
    def shared_runs(self) -> SharedRuns:
        """The memo of this trial agent's shared runs (:class:`SharedRuns`); hand it to a view."""
        return self.__dict__.get("_shared_runs") or SharedRuns()

    @property
    def oracle_allowed(self) -> bool:
        return self.privileges.allowed

    @property
    def privileged_used(self) -> bool:
        return self.privileges.used

    def grant_privilege(self, requested: Any) -> bool:
        return self.privileges.grant(requested)

    @classmethod
    def metric_directions(cls) -> dict[str, str]:
        return {name: metric_direction(d) for name, d in cls.metrics.items()}

    def check_metric_bounds(self, metrics: Mapping[str, float]) -> None:
        """Raise :class:`MetricOutOfBounds` for a metric outside its declared bounds."""
        bad = []
        for name, value in metrics.items():
            if name in self.metrics and math.isfinite(value):
                low, high = metric_bounds(self.metrics[name])
                if not low <= value <= high:
                    bad.append(f"{name}={value:g} outside [{low:g}, {high:g}]")
        if bad:
            raise MetricOutOfBounds(f"{self.id or type(self).__name__}: {'; '.join(bad)}")

    @property
    @abstractmethod
    def budget(self) -> Budget:
        """A fresh budget for one trial (the view handed out by ``train_view`` spends it)."""

    @abstractmethod
    def train_view(self, seed: int, budget: Budget) -> Any:
        """Everything the agent may use to train or tune, metered against ``budget``."""

    @abstractmethod
    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        """Score ``artifact`` on held-out seeds, instances or splits derived from ``seed``."""

    def cache_entries(self, seeds: Sequence[int]) -> list[Entry]:
        """The :mod:`papergym.cache` entries that trials of ``seeds`` will read: references
        and shared preparation the problem computes once (default: none). The runner builds
        the missing ones before any trial starts; the trials read them with ``cache.get``."""
        return []

    @staticmethod
    def eval_seeds(seed: int, n: int) -> list[int]:
        """``n`` held-out seeds for trial ``seed``, disjoint from every training seed.

        With the process's eval salt set they are a keyed stream over the 63-bit seed space
        (:func:`keyed_eval_seeds`: HMAC-SHA256 of the salt and the trial), so no table of a
        public range holds them; with none set, the public default in
        [EVAL_SEED_OFFSET, 2 * EVAL_SEED_OFFSET)."""
        if _eval_salt is not None:
            return keyed_eval_seeds(_eval_salt, seed, n)
        ss = eval_seed_sequence(EVAL_SEED_OFFSET, seed)
        return [EVAL_SEED_OFFSET + int(s) % EVAL_SEED_OFFSET for s in ss.generate_state(n)]

    @staticmethod
    def public_eval_seeds(seed: int, n: int) -> list[int]:
        """The unsalted held-out seeds: for fixed references measured once for everyone
        (never for scoring a trial)."""
        ss = np.random.SeedSequence([EVAL_SEED_OFFSET, seed])
        return [EVAL_SEED_OFFSET + int(s) % EVAL_SEED_OFFSET for s in ss.generate_state(n)]


def deterministic_metrics(task: Task | type[Task], metrics: Mapping[str, float]) -> dict[str, float]:
    """``metrics`` without those ``task`` marks non-deterministic: what must repeat by seed."""
    skip = task.nondeterministic_metrics
    return {k: v for k, v in metrics.items() if k not in skip}


class EnvTask(Task):
    """The default Task of an environment: score a policy by its return on held-out seeds.

    The agent's view is an env factory (``view.make_env()``) whose environments count every
    ``step`` against the ``env_steps`` budget. Evaluation runs the returned policy for
    ``eval_episodes`` episodes on seeds from :meth:`Task.eval_seeds`. Families subclass it
    to add problem-computed metrics through :meth:`episode_metrics`.
    """

    metrics: ClassVar[Mapping[str, str]] = {"return": "max", "episode_length": "max"}
    task_kwargs: ClassVar[tuple[str, ...]] = ("train_steps", "eval_episodes")
    env_factory: Callable[..., Any]

    def __init__(
        self,
        env_factory: Callable[..., Any],
        tier: str = "smoke",
        train_steps: int = 10_000,
        eval_episodes: int = 10,
        **env_kwargs: Any,
    ) -> None:
        super().__init__(tier=tier, **env_kwargs)
        self.env_factory = env_factory
        self.env_kwargs = env_kwargs
        self.train_steps = int(train_steps)
        self.eval_episodes = int(eval_episodes)

    @property
    def budget(self) -> Budget:
        return Budget(env_steps=self.train_steps)

    def train_view(self, seed: int, budget: Budget) -> EnvView:
        # a partial, not a lambda over self: the view must not reach the Task (its evaluator)
        return EnvView(partial(self.env_factory, **self.env_kwargs), budget, seed)

    def episode_metrics(self, env: Any, episode_return: float, length: int) -> dict[str, float]:
        return {"return": episode_return, "episode_length": float(length)}

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not callable(artifact):
            raise TypeError(
                f"{type(self).__name__} expects a policy (a callable observation -> action), "
                f"got {type(artifact).__name__}"
            )
        per_episode = []
        env = self.env_factory(**self.env_kwargs)
        try:
            for episode, eval_seed in enumerate(self.eval_seeds(seed, self.eval_episodes)):
                per_episode.append(
                    {"instance": episode, **run_episode(env, artifact, eval_seed, self)}
                )
        finally:
            env.close()
        names = [k for k in per_episode[0] if k != "instance"]
        metrics = {k: float(np.mean([row[k] for row in per_episode])) for k in names}
        return EvalResult(metrics=metrics, units=per_episode)


def run_episode(env: Any, policy: Any, seed: int, task: EnvTask) -> dict[str, float]:
    """One evaluation episode of a Gymnasium env; metrics come from ``task.episode_metrics``."""
    if hasattr(policy, "reset"):
        policy.reset()
    observation, _ = env.reset(seed=seed)
    total, length, done = 0.0, 0, False
    while not done:
        observation, reward, terminated, truncated, _ = env.step(policy(observation))
        total += float(reward)
        length += 1
        done = terminated or truncated
    return task.episode_metrics(env, total, length)


class EnvView:
    """What an agent gets from an :class:`EnvTask`: metered environments and its seed.

    ``options`` names the training-env arguments an agent may choose (e.g. the humanoid
    family's ``randomization``, for an ablation); anything else raises, so a training env can
    never be pointed at evaluation data. With ``training_seeds_only`` its envs reset only on
    training seeds (below :data:`EVAL_SEED_OFFSET`): for a view on a held-out instance (an
    adaptation view, see :func:`adapted`). :meth:`make_vector_env` serves ``n`` of its envs
    as one vector env, built by ``vectorize`` (a callable of the list of metered envs; default
    :func:`papergym.vector.sequential`). :meth:`close` ends the view: its envs and vector envs
    refuse to step or reset, and it makes no more."""

    def __init__(self, make: Callable[..., gym.Env], budget: Budget, seed: int,
                 options: tuple[str, ...] = (), training_seeds_only: bool = False,
                 vectorize: Callable[[list[MeteredEnv]], VectorEnv] | None = None) -> None:
        self._make = make
        self.budget = budget
        self.seed = seed
        self.options = tuple(options)
        self._training_seeds_only = training_seeds_only
        self._vectorize = vectorize
        self._envs: weakref.WeakSet[MeteredEnv] = weakref.WeakSet()  # to close, not to keep
        self._vector_envs: weakref.WeakSet[MeteredVectorEnv] = weakref.WeakSet()
        self._closed = False

    def make_env(self, **options: Any) -> gym.Env:
        self._check_options("make_env", options)
        env = MeteredEnv(self._make(**options), self.budget,
                         training_seeds_only=self._training_seeds_only)
        self._envs.add(env)
        return env

    def make_vector_env(self, n: int, **options: Any) -> VectorEnv:
        """``n`` training envs (``make_env(**options)`` each) as one gymnasium vector env with
        same-step autoreset (:mod:`papergym.vector`): one call steps them all, and charges
        ``n`` env steps; with fewer than ``n`` left it raises :class:`BudgetExceeded` before
        stepping any. Its ``envs`` are the metered sub-envs."""
        self._check_options("make_vector_env", options)
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"make_vector_env: n must be a positive integer, got {n!r}")
        envs = [self.make_env(**options) for _ in range(int(n))]
        if self._vectorize is None:
            from papergym.vector import sequential

            inner = sequential(envs)
        else:
            inner = self._vectorize(envs)
        vec = MeteredVectorEnv(inner, envs)
        self._vector_envs.add(vec)
        return vec

    def _check_options(self, where: str, options: Mapping[str, Any]) -> None:
        if self._closed:
            raise RuntimeError("this view is closed: its training phase has ended")
        refused = sorted(set(options) - set(self.options))
        if refused:
            raise ValueError(f"{where}: {refused} cannot be chosen by an agent here; "
                             f"the training env takes {list(self.options) or 'no options'}")

    def close(self) -> None:
        self._closed = True
        for env in list(self._envs):
            env._closed = True
        for vec in list(self._vector_envs):  # its resources (a thread pool), then the envs
            vec.close()
        for env in list(self._envs):
            env.env.close()
        self._envs.clear()
        self._vector_envs.clear()


def adapted(artifact: Any, view: EnvView, seed: int) -> Any:
    """The evaluation protocol's adaptation phase, for problems that grant each held-out unit
    a training budget before it is scored (the humanoid family's per-body fine-tuning, the
    paper's Generalist-FT).

    An artifact with an ``adapt(view, budget, seed)`` method trains on ``view`` (a metered
    view of the held-out unit that resets only on training seeds, its budget
    ``view.budget``) and returns the artifact to score on that unit; one without it is
    scored as it is (zero-shot). The view closes when ``adapt`` returns, so nothing the agent
    kept of it steps again; the problem reads ``view.budget.used`` for its metrics."""
    method = getattr(artifact, "adapt", None)
    if method is None:
        return artifact
    try:
        return method(view, view.budget, seed)
    finally:
        view.close()


class MeteredEnv(gym.Wrapper):
    """A transparent wrapper that charges every ``step`` to the budget entry ``name``
    (``env_steps`` by default; e.g. ``deployments`` where a step is one deployment)."""

    def __init__(self, env: gym.Env, budget: Budget, name: str = "env_steps",
                 training_seeds_only: bool = False) -> None:
        super().__init__(env)
        self.budget, self.budget_name = budget, name
        self.training_seeds_only = training_seeds_only
        self._closed = False  # set by the view that made it, when it closes

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
        self._check_open()
        # where a reset seed picks the instance (performative), only training seeds
        if seed is not None and self.training_seeds_only:
            check_training_seed(seed, f"{type(self.env.unwrapped).__name__} training env")
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        self.charge()
        return self.env.step(action)

    def charge(self) -> None:
        """What a step costs, without the step: check the view is open and spend 1 of the
        budget entry (a vector env that steps the raw env itself calls this first)."""
        self._check_open()
        self.budget.spend(self.budget_name, 1)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this env's view is closed: its training phase has ended")


class MeteredVectorEnv(VectorWrapper):
    """What :meth:`EnvView.make_vector_env` returns: a vector env of metered sub-envs whose
    ``step`` costs ``num_envs`` steps of their budget, all or none: it checks that the view is
    open and that enough budget is left before any sub-env steps (each sub-env then charges
    its own step). Only ``reset``, ``step``, ``close``, the spaces and ``envs`` (the metered
    sub-envs) are offered; nothing reaches past the metering."""

    def __init__(self, env: VectorEnv, envs: Sequence[MeteredEnv]) -> None:
        super().__init__(env)
        if len(envs) != env.num_envs:
            raise ValueError(f"{len(envs)} metered envs for a vector env of {env.num_envs}")
        self._metered = list(envs)
        self.budget, self.budget_name = envs[0].budget, envs[0].budget_name

    @property
    def envs(self) -> list[MeteredEnv]:
        return list(self._metered)

    def step(self, actions: Any) -> Any:
        for env in self._metered:
            env._check_open()
        n = len(self._metered)
        left = self.budget.remaining(self.budget_name)
        if left < n:
            raise BudgetExceeded(
                f"budget {self.budget_name!r} exhausted: a vector step of {n} envs costs {n}, "
                f"{left:g} left (used {self.budget.used[self.budget_name]:g} of "
                f"{self.budget.limits[self.budget_name]:g})")
        return self.env.step(actions)
