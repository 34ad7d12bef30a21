"""FedRounds-v0: federated learning rounds with exact communication accounting."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from papergym.actions import check_action, check_actions
from papergym.envs.fedlearn import codec
from papergym.envs.fedlearn.codec import InvalidAction
from papergym.envs.fedlearn.data import make_instance
from papergym.envs.fedlearn.protocol import (
    DOWNLINK_SLOTS,
    UPLINK_SLOTS,
    AveragingServer,
    FedSetting,
    ServerStrategy,
)
from papergym.problem import BudgetExceeded

# kwargs that the Task reads and the env ignores (tier defaults carry both)
TASK_ONLY_KWARGS = ("tier", "bit_budget_rounds", "tuning_seeds", "tuning_runs_limit")
SAMPLING = ("without_replacement", "with_replacement")  # minibatch rows of the oracle


class _RoundState:
    """What the oracles share with the env: who participates, calls left, gradients counted.

    Holds no test data, no model parameters of the server and no reference to the env, so a
    client policy that inspects its oracle handle finds only its own training rows."""

    def __init__(self, num_clients: int, local_steps: int) -> None:
        self.local_steps = local_steps
        self.open = False  # False between episodes
        self.round = 0
        self.participating = np.zeros(num_clients, dtype=bool)
        self.calls_left = np.zeros(num_clients, dtype=np.int64)
        self.sample_gradients = np.zeros(num_clients, dtype=np.int64)


class ClientOracle:
    """One client's stochastic-gradient oracle: ``oracle(points) -> (losses, grads)``.

    ``points`` is one parameter vector (p,) or two (2, p), evaluated on the same minibatch
    drawn from the client's own stream (without replacement, or with replacement when the
    env's ``sampling`` says so). The env allows K calls per participating client per round;
    one more, or any call by a non-participant, raises ``BudgetExceeded``. The handle holds
    only this client's training rows, its minibatch stream and the shared round counters.
    """

    def __init__(self, client: int, name: str, dim: int, state: _RoundState) -> None:
        self.client, self._name, self._dim, self._state = client, name, dim, state
        self._X = self._y = self._rng = self._model = None
        self._batch: int | None = None
        self._replace = False

    def _bind(self, X, y, model, rng, batch: int | None, replace: bool) -> None:
        self._X, self._y, self._model, self._rng = X, y, model, rng
        self._batch, self._replace = batch, replace

    def __call__(self, points) -> tuple[np.ndarray, np.ndarray]:
        state, name, client = self._state, self._name, self.client
        if not state.open or not state.participating[client]:
            raise BudgetExceeded(f"{name} is not participating in round {state.round}; "
                                 "its oracle is closed")
        if state.calls_left[client] <= 0:
            raise BudgetExceeded(f"{name} used its {state.local_steps} oracle calls "
                                 f"in round {state.round}")
        pts = np.asarray(points, dtype=np.float64)
        single = pts.ndim == 1
        pts = pts.reshape(1, -1) if single else pts
        if pts.ndim != 2 or pts.shape[1] != self._dim or not 1 <= len(pts) <= 2:
            raise ValueError(f"{name}: oracle points must have shape (p,) or (m<=2, p) with "
                             f"p={self._dim}, got {np.shape(points)}")
        if not np.all(np.isfinite(pts)):
            raise ValueError(f"{name}: non-finite point passed to the oracle")
        state.calls_left[client] -= 1
        X, y, batch = self._X, self._y, self._batch
        if batch is not None and (self._replace or batch < len(y)):
            rows = self._rng.choice(len(y), size=batch, replace=self._replace)
            X, y = X[rows], y[rows]
        state.sample_gradients[client] += len(y) * len(pts)
        losses, grads = np.empty(len(pts)), np.empty_like(pts)
        with np.errstate(over="ignore", invalid="ignore"):
            for j, point in enumerate(pts):
                losses[j], grads[j] = self._model.loss_grad(point, X, y)
        return (losses[0], grads[0]) if single else (losses, grads)


ENV_ID = "papergym/FedRounds-v0"

class FedRoundsEnv(ParallelEnv):
    """Federated learning, one communication round per step; every bit is counted.

    ## Description
    N clients (`client_0 ... client_{N-1}`, the PettingZoo agents) hold private shards of a
    heterogeneous dataset; together they minimize F(theta) = (1/N) sum_i f_i(theta). The
    server is not an agent: it is the algorithm's `ServerStrategy` (`server=` argument;
    default plain averaging). Round t: at the end of step t-1 (or at `reset`) the env draws
    the participants S_t (S of N, uniform without replacement, from the participation
    stream), calls `server.downlink(S_t)`, encodes/decodes the message and places the
    decoded payload in the observations of the participants only. In step t each
    participant's action is its uplink message, computed from the downlink and at most K
    calls to its gradient oracle (`env.oracle(agent)`); the env encodes each uplink,
    charges its bits, and hands the decoded payloads to `server.aggregate`, which returns
    theta^{t+1}. Non-participants' actions are ignored and cost 0 bits.

    ## Action Space
    Per client, the uplink message (U = 2 vector slots of length p):
    `Dict{codec: MultiDiscrete([3]*U), values: Box(-inf, inf, (U, p), float32),
    support: MultiBinary((U, p)), scale: Box(0, inf, (U,), float32), used: MultiBinary(U),
    scalars: Box(-inf, inf, (4,), float32), n_scalars: Discrete(5)}`.
    Codec 0 dense: float32(values), 32p bits. Codec 1 sparse: float32(values) * support,
    nnz (32 + ceil(log2 p)) bits. Codec 2 scaled sign: scale * sign(values) (sign(0) = +1),
    32 + p bits. Scalars: the first n_scalars, 32 bits each. Unused slots cost 0. Every key
    but `n_scalars` (default 0) is required. Wrong shapes/dtypes, fractional or complex
    entries, an unknown key, a non-finite `n_scalars`, or non-finite values in a used slot or
    scalar raise `InvalidAction` (a `ValueError`) naming the env and the agent; non-finite
    values in an unused slot are never sent and are fine. `step(actions)` takes a dict; a
    client absent from it, or mapped to `None`, sends nothing this round (0 bits).

    ## Observation Space
    Per client: `Dict{round: Discrete(T_max+1), participating: Discrete(2),
    downlink: Box(-inf, inf, (D, p), float32), downlink_used: MultiBinary(D),
    scalars: Box(-inf, inf, (4,), float32)}`, D = 3. Non-participants see zeros.

    ## Rewards
    Shared by all clients: r_t = -F(theta^{t+1}) - lambda_comm * bits_t / (32 p), with
    F the training objective with uniform client weights. Test metrics never reach the
    agents; they are appended to `env.metrics_log` (problem side).

    ## Starting State
    `reset(seed)` spawns independent streams from the seed (SeedSequence): partition (the
    instance), participation, theta_0, one minibatch stream per client. A seed gives every
    algorithm the same data, participation sequence and theta_0.

    ## Episode End
    Truncation after T_max rounds (`rounds`); no termination.

    ## Arguments
    data ("logreg_synth" | "lsq_synth" | "digits_dirichlet"), alpha (Dirichlet, or "iid"),
    synth_alpha, synth_beta (logreg_synth), zeta, kappa (lsq_synth), num_clients (N),
    participants (S), local_steps (K), batch_size (B; None = full local batch), rounds
    (T_max), lambda_comm (0), server (a ServerStrategy), validation (hold out 15% of each
    client's rows and score on them: tuning mode), sampling ("without_replacement": a
    client whose shard is no larger than B gets its full, noise-free batch;
    "with_replacement": B rows drawn with replacement, so every client's gradient is noisy),
    warmup_round (round 0 has all N clients participating, once, before the S-of-N rounds:
    the round in which methods initialise per-client state such as momenta; charged as any
    round).

    ## Tiers
    smoke: logreg_synth(0.5, 0.5), N/S/K/B/T = 10/5/5/16/20. standard: digits_dirichlet,
    50/10/5/32/50 (spec: K = 10, T = 200; scaled to the 2-core budget); lsq_synth side
    problem. full: the paper's N/S/K/T = 100/10/2/150 on digits (the paper's MNIST/FMNIST
    CNN needs data that no installed package ships).

    ## Reference
    Yan, Zhong, Zhang, "ParFreFL / ComParFreFL", ICML 2026 (yan26x); problem design from
    papergym's spec (shared/specs/fedlearn.md). The environment itself is not
    reconstructed; the algorithms run on it are (see agents/fedlearn).

    ## Version History
    v1: minibatches drawn with replacement (every client's gradient is stochastic, as in
    the paper's setting; in v0 most Dirichlet(0.1) clients held <= B rows and got exact
    gradients), a warm-up round with all N clients, and the standard tier in the paper's
    momentum regime (K = 2, T = 100, SK/T = 0.2). The oracle handle holds only its
    client's training rows.
    v0: initial release (superseded by v1; still registered, results reproducible).
    """

    env_id = ENV_ID  # named in error messages; FedRounds-v1's entry point sets its own
    metadata = {"name": "fedrounds_v0", "render_modes": [], "is_parallelizable": True}
    optional_action_keys = ("n_scalars",)  # the message keys a client may omit
    lenient_action_keys = ("values", "scale", "scalars")  # finite where used (codec.encode)

    def __init__(self, data: str = "logreg_synth", alpha: Any = 0.5, synth_alpha: float = 0.5,
                 synth_beta: float = 0.5, zeta: float = 1.0, kappa: float = 10.0,
                 num_clients: int = 10, participants: int = 5, local_steps: int = 5,
                 batch_size: int | None = 16, rounds: int = 20, lambda_comm: float = 0.0,
                 server: ServerStrategy | None = None, validation: bool = False,
                 sampling: str = "without_replacement", warmup_round: bool = False,
                 **task_kwargs: Any) -> None:
        unknown = set(task_kwargs) - set(TASK_ONLY_KWARGS)
        if unknown:
            raise TypeError(f"FedRoundsEnv: unknown arguments {sorted(unknown)}")
        if not 1 <= participants <= num_clients:
            raise ValueError(f"participants must be in 1..num_clients={num_clients}")
        if local_steps < 1 or rounds < 1:
            raise ValueError("local_steps and rounds must be at least 1")
        if sampling not in SAMPLING:
            raise ValueError(f"sampling must be one of {SAMPLING}, got {sampling!r}")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer or None, got {batch_size}")
        self.sampling, self.warmup_round = sampling, bool(warmup_round)
        self.data_kwargs = dict(alpha=alpha, synth_alpha=synth_alpha, synth_beta=synth_beta,
                                zeta=zeta, kappa=kappa, validation=validation)
        self.data = data
        self.server = server if server is not None else AveragingServer()
        self.lambda_comm = float(lambda_comm)
        self.possible_agents = [f"client_{i}" for i in range(num_clients)]
        self.agents: list[str] = []
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        # the model (hence p) does not depend on the seed: probe it once
        probe = make_instance(data, np.random.default_rng(0), num_clients, **self.data_kwargs)
        self.setting = FedSetting(num_clients=num_clients, participants=participants,
                                  local_steps=local_steps, batch_size=batch_size,
                                  rounds=rounds, dim=probe.model.p, data=data)
        self.instance = probe
        self._round_state = _RoundState(num_clients, local_steps)
        self._oracles = [ClientOracle(i, name, probe.model.p, self._round_state)
                         for i, name in enumerate(self.possible_agents)]
        self._np_random, _ = seeding.np_random(None)
        self.metrics_log: list[dict[str, float]] = []
        p, T = self.setting.dim, rounds
        self._observation_space = spaces.Dict({
            "round": spaces.Discrete(T + 1),
            "participating": spaces.Discrete(2),
            "downlink": spaces.Box(-np.inf, np.inf, (DOWNLINK_SLOTS, p), np.float32),
            "downlink_used": spaces.MultiBinary(DOWNLINK_SLOTS),
            "scalars": spaces.Box(-np.inf, np.inf, (codec.NUM_SCALARS,), np.float32),
        })
        self._action_space = spaces.Dict({
            "codec": spaces.MultiDiscrete([3] * UPLINK_SLOTS),
            "values": spaces.Box(-np.inf, np.inf, (UPLINK_SLOTS, p), np.float32),
            "support": spaces.MultiBinary((UPLINK_SLOTS, p)),
            "scale": spaces.Box(0.0, np.inf, (UPLINK_SLOTS,), np.float32),
            "used": spaces.MultiBinary(UPLINK_SLOTS),
            "scalars": spaces.Box(-np.inf, np.inf, (codec.NUM_SCALARS,), np.float32),
            "n_scalars": spaces.Discrete(codec.NUM_SCALARS + 1),
        })
        self._idle_downlink = np.zeros((DOWNLINK_SLOTS, p), dtype=np.float32)
        self._idle_downlink.flags.writeable = False

    # -- spaces -------------------------------------------------------------------------
    @functools.cache  # noqa: B019 - one space object per agent, as required
    def observation_space(self, agent: str) -> spaces.Dict:
        return self._observation_space

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.Dict:
        return self._action_space

    @property
    def num_agents(self) -> int:
        return len(self.agents)

    @property
    def max_num_agents(self) -> int:
        return len(self.possible_agents)

    def oracle(self, agent: str) -> ClientOracle:
        """The gradient-oracle handle of ``agent`` (stays valid across resets)."""
        return self._oracles[self._index[agent]]

    # -- episode ------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
            root = np.random.SeedSequence(seed)
        else:
            root = np.random.SeedSequence(int(self._np_random.integers(2**63)))
        n = self.setting.num_clients
        partition, participation, init, *minibatch = root.spawn(3 + n)
        self.instance = make_instance(self.data, np.random.default_rng(partition), n,
                                      **self.data_kwargs)
        self._participation_rng = np.random.default_rng(participation)
        replace = self.sampling == "with_replacement"
        for i, oracle in enumerate(self._oracles):
            oracle._bind(self.instance.client_X[i], self.instance.client_y[i],
                         self.instance.model, np.random.default_rng(minibatch[i]),
                         self.setting.batch_size, replace)
        self.theta0 = self.instance.model.init(np.random.default_rng(init))
        self.theta = self.theta0.copy()
        self.server.reset(self.theta0.copy(), self.setting)
        self.agents = list(self.possible_agents)
        self.round = 0
        self.bits_up_total = 0
        self.bits_down_total = 0
        self._round_state.sample_gradients = self.sample_gradients = np.zeros(n, dtype=np.int64)
        self._round_state.open = True
        self.train_loss, _ = self._objective(self.theta)
        self.metrics_log = [self._metrics(self.theta, 0, 0, 0)]
        self._start_round()
        infos = {a: self._info(a, 0, 0) for a in self.agents}
        return self._observations(), infos

    def _start_round(self) -> None:
        s = self.setting
        if self.warmup_round and self.round == 0:  # every client acts once before training
            self.participants = np.arange(s.num_clients)
        else:
            self.participants = np.sort(self._participation_rng.choice(
                s.num_clients, size=s.participants, replace=False))
        state = self._round_state
        state.round = self.round
        state.participating[:] = False
        state.participating[self.participants] = True
        state.calls_left[:] = np.where(state.participating, s.local_steps, 0)
        self._participating = state.participating
        message = self.server.downlink([int(i) for i in self.participants])
        payload, bits = codec.encode(message, DOWNLINK_SLOTS, s.dim, who="server downlink")
        self._downlink = payload.slots
        self._downlink.flags.writeable = False
        self._downlink_used = payload.used.astype(np.int8)
        self._downlink_scalars = np.zeros(codec.NUM_SCALARS, dtype=np.float32)
        self._downlink_scalars[: len(payload.scalars)] = payload.scalars
        self._pending_down_bits = bits * len(self.participants)  # one copy per recipient

    def _observations(self) -> dict[str, dict]:
        round_index = self.round
        observations = {}
        for agent in self.agents:
            if self._participating[self._index[agent]]:
                observations[agent] = {
                    "round": round_index, "participating": 1, "downlink": self._downlink,
                    "downlink_used": self._downlink_used, "scalars": self._downlink_scalars,
                }
            else:
                observations[agent] = {
                    "round": round_index, "participating": 0, "downlink": self._idle_downlink,
                    "downlink_used": np.zeros(DOWNLINK_SLOTS, dtype=np.int8),
                    "scalars": np.zeros(codec.NUM_SCALARS, dtype=np.float32),
                }
        return observations

    def step(self, actions: dict[str, dict]):
        if not self.agents:
            raise RuntimeError("FedRoundsEnv.step called after the episode ended; call reset")
        s = self.setting
        uplinks, bits_up = {}, 0
        if not isinstance(actions, Mapping):
            check_actions(actions, self.agents, self.action_space, self.env_id)  # raises, naming it
        for agent, message in actions.items():
            if agent not in self._index:
                raise InvalidAction(f"{self.env_id}: unknown agent {agent!r}; agents are client_0.."
                                    f"client_{s.num_clients - 1}")
            if message is None:
                continue  # sending nothing costs nothing
            # every entry in the space (shape, integer codes, finite numbers), used slot or not
            message = check_action(self.action_space(agent), message, self.env_id,
                                   f"actions[{agent!r}]", optional=self.optional_action_keys,
                                   lenient=self.lenient_action_keys)
            # every action must be well-formed; only participants' actions are delivered
            payload, bits = codec.encode(message, UPLINK_SLOTS, s.dim, who=agent)
            i = self._index[agent]
            if self._participating[i]:
                uplinks[i] = payload
                bits_up += bits
        bits_down = self._pending_down_bits
        theta = np.asarray(self.server.aggregate(uplinks), dtype=np.float64)
        if theta.shape != (s.dim,):
            raise ValueError(f"server.aggregate returned shape {theta.shape}, expected ({s.dim},)")
        if not np.all(np.isfinite(theta)):
            raise FloatingPointError(f"the server's model is non-finite after round {self.round}")
        self.theta = theta.copy()
        self.bits_up_total += bits_up
        self.bits_down_total += bits_down
        self.round += 1
        self.train_loss, grad = self._objective(theta)
        self.metrics_log.append(self._metrics(theta, bits_up, bits_down, float(grad @ grad)))
        bits_round = bits_up + bits_down
        reward = -self.train_loss - self.lambda_comm * bits_round / (32 * s.dim)
        rewards = dict.fromkeys(self.agents, float(reward))
        terminations = dict.fromkeys(self.agents, False)
        done = self.round >= s.rounds
        truncations = dict.fromkeys(self.agents, done)
        if done:
            self._participating[:] = False
            self._round_state.calls_left[:] = 0
            self._round_state.open = False
            self._downlink = self._idle_downlink
        else:
            self._start_round()
        observations = self._observations()
        infos = {a: self._info(a, bits_up, bits_down) for a in self.agents}
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    # -- problem-side accounting ----------------------------------------------------------
    def _objective(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        with np.errstate(over="ignore", invalid="ignore"):
            loss, grad = self.instance.objective(theta)
        return float(loss), grad

    def _metrics(self, theta, bits_up: int, bits_down: int, grad_norm_sq: float) -> dict:
        record = {
            "round": self.round, "bits_up": bits_up, "bits_down": bits_down,
            "bits_up_total": self.bits_up_total, "bits_down_total": self.bits_down_total,
            "bits_total": self.bits_up_total + self.bits_down_total,
            "train_loss": self.train_loss, "grad_norm_sq": grad_norm_sq,
        }
        inst = self.instance
        if inst.f_star is not None:
            record["gap"] = max(self.train_loss - inst.f_star, 0.0)
        if inst.eval_X is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                record["test_loss"], record["test_acc"] = inst.model.loss_and_accuracy(
                    theta, inst.eval_X, inst.eval_y)
        return record

    def _info(self, agent: str, bits_up: int, bits_down: int) -> dict:
        return {
            "bits_round": bits_up + bits_down, "bits_up_round": bits_up,
            "bits_down_round": bits_down, "bits_total": self.bits_up_total + self.bits_down_total,
            "bits_up_total": self.bits_up_total, "bits_down_total": self.bits_down_total,
            "sample_gradients": int(self.sample_gradients[self._index[agent]]),
            "train_loss": self.train_loss,
        }

    def render(self) -> None:
        return None

    def close(self) -> None:
        return None

    def state(self) -> np.ndarray:
        return self.theta.astype(np.float32)


def parallel_env(**kwargs: Any) -> FedRoundsEnv:
    """Build FedRounds-v0 (``papergym.make("papergym/FedRounds-v0", tier=...)`` calls this)."""
    return FedRoundsEnv(**kwargs)


V1_DEFAULTS = {"sampling": "with_replacement", "warmup_round": True}


def parallel_env_v1(**kwargs: Any) -> FedRoundsEnv:
    """Build FedRounds-v1: v0's env with minibatches drawn with replacement and a warm-up
    round in which every client participates (see the Version History)."""
    env = FedRoundsEnv(**{**V1_DEFAULTS, **kwargs})
    env.env_id = "papergym/FedRounds-v1"
    return env


