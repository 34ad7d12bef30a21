"""``papergym new-family NAME``: the skeleton of a new family, working from the first minute.

Writes, under the repository root, the problem (``envs/NAME``: a Gymnasium env carrying every
docstring section, registered with smoke and standard tiers and scored by the default
:class:`papergym.EnvTask`), two agents (``agents/NAME``: the method, a proportional
controller with one tuned gain, and a zero-action baseline), a benchmark spec
(``benchmarks/specs/NAME.yaml``: smoke and standard tiers, one claim) and the family's tests
(``tests/envs/test_NAME.py``, ``tests/agents/test_NAME.py``). It is the harness's own
fixture problem (tests/fixtures/toy_problem.py) made into a family: a point on [-1, 1] must
reach a target drawn at reset. The generated family passes ``papergym check`` and its own
tests as written; replace the env, the agents and the claim with the paper's.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path
from string import Template

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")

ENV_INIT = '''\
"""$name: <one line on the paper and its problem>.

Problems: ``papergym/$Camel-v0`` (a point on [-1, 1] reaching a target; replace with the
paper's problem). Modules: ``env`` (the environment).
"""

from papergym.registry import register

register(
    "papergym/$Camel-v0",
    entry_point="papergym.envs.$name.env:${Camel}Env",
    kind="env",
    family="$name",
    paper="${name}2026",
    # Task kwargs (EnvTask: train_steps, eval_episodes) and env kwargs travel together.
    tiers={
        "smoke": {"horizon": 16, "train_steps": 64, "eval_episodes": 4},
        "standard": {"horizon": 32, "train_steps": 512, "eval_episodes": 16},
        "full": {"horizon": 64, "train_steps": 4096, "eval_episodes": 64},
    },
    changelog={"v0": "initial release"},
)
'''

ENV = '''\
"""``${Camel}Env``: the $name family's problem (generated skeleton: replace with the paper's)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

MAX_STEP = 0.25  # largest move per step


class ${Camel}Env(gym.Env):
    """Move a point on [-1, 1] to a target drawn at reset.

    ## Description
    A one-dimensional reaching task: the point starts at 0 and the target is uniform on
    [-0.9, 0.9]. Each step moves the point by the action (at most ``MAX_STEP``). The
    closed-form optimum moves straight to the target.

    ## Action Space
    ``Box(-0.25, 0.25, (1,), float32)``: the move. Non-finite actions raise ``ValueError``;
    larger moves are clipped to ``MAX_STEP`` and counted in ``info["n_clipped"]``.

    ## Observation Space
    ``Box(-1, 1, (2,), float32)``: (position, target).

    ## Rewards
    ``-|position - target|`` after each step.

    ## Starting State
    Position 0; target uniform on [-0.9, 0.9] from the reset seed.

    ## Episode End
    Truncated after ``horizon`` steps; never terminated.

    ## Arguments
    ``horizon`` (default 16): steps per episode.

    ## Tiers
    smoke: horizon 16, 64 training steps, 4 evaluation episodes; standard: horizon 32, 512
    steps, 16 episodes; full: horizon 64, 4,096 steps, 64 episodes.

    ## Reference
    <the paper: authors, venue, arXiv id, code>; what is reconstructed is marked [recon].

    ## Version History
    * v0: initial release.
    """

    metadata = {"render_modes": []}

    def __init__(self, horizon: int = 16) -> None:
        if int(horizon) < 1:
            raise ValueError(f"${Camel}Env: horizon must be >= 1, got {horizon!r}")
        self.horizon = int(horizon)
        self.observation_space = gym.spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = gym.spaces.Box(-MAX_STEP, MAX_STEP, shape=(1,), dtype=np.float32)
        self.position, self.target, self.t = 0.0, 0.0, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):  # noqa: ANN201
        super().reset(seed=seed)
        self.position = 0.0
        self.target = float(self.np_random.uniform(-0.9, 0.9))
        self.t = 0
        return self._obs(), {}

    def _obs(self) -> np.ndarray:
        return np.array([self.position, self.target], dtype=np.float32)

    def step(self, action: Any):  # noqa: ANN201
        move = np.asarray(action, dtype=np.float64).reshape(-1)
        if move.shape != (1,) or not np.all(np.isfinite(move)):
            raise ValueError(f"${Camel}Env: action must be one finite number, got {action!r}")
        clipped = bool(abs(move[0]) > MAX_STEP)
        self.position = float(np.clip(self.position + np.clip(move[0], -MAX_STEP, MAX_STEP), -1, 1))
        self.t += 1
        reward = -abs(self.position - self.target)
        return self._obs(), reward, False, self.t >= self.horizon, {"n_clipped": int(clipped)}
'''

AGENTS_INIT = '''\
"""Agents of the $name family: the method (``proportional``) and a baseline (``zero``)."""

from papergym.agents.$name import proportional, zero  # noqa: F401  (importing registers them)
'''

METHOD = '''\
"""The method: a proportional controller whose gain is tuned on training episodes."""

from __future__ import annotations

import numpy as np

from papergym import Agent, AgentConfig


class Proportional(Agent):
    id, family, role, paper = "proportional", "$name", "method", "${name}2026"

    class Config(AgentConfig):
        gains: tuple[float, ...] = (0.25, 0.5, 1.0)

    def solve(self, view, budget, seed):
        # Tune the gain on training episodes (metered by the budget's env_steps).
        env = view.make_env()
        best_gain, best_return = self.config.gains[0], -np.inf
        for gain in self.config.gains:
            obs, _ = env.reset(seed=seed)
            total, done = 0.0, False
            while not done:
                obs, reward, terminated, truncated, _ = env.step(policy(gain)(obs))
                total, done = total + reward, terminated or truncated
            if total > best_return:
                best_gain, best_return = gain, total
        return policy(best_gain)


def policy(gain: float):
    return lambda obs: np.array([gain * (obs[1] - obs[0])], dtype=np.float32)
'''

BASELINE = '''\
"""The baseline: never move."""

from __future__ import annotations

import numpy as np

from papergym import Agent


class Zero(Agent):
    id, family, role, paper = "zero", "$name", "baseline", "${name}2026"

    def solve(self, view, budget, seed):
        return lambda obs: np.zeros(1, dtype=np.float32)
'''

SPEC = '''\
# $name: <the paper>. Generated skeleton: replace problems, agents and claims with the paper's.
name: $name
family: $name
paper: {key: ${name}2026, title: "<paper title>"}
description: A point on [-1, 1] must reach a target; the method tunes a proportional gain.
problems:
  - name: reach
    problem: papergym/$Camel-v0
    metric: {name: return, direction: max}
    secondary: [episode_length]
    tiers:
      smoke:
        seeds: 6
        timeout_s: 60
      standard:
        seeds: 10
        grid: {horizon: [16, 32]}
    agents:
      - proportional
      - zero
    # the discrimination check: the reference must beat the trivial agent with a CI that
    # excludes zero, or the section's paper claims are "not evaluable"
    trivial: zero
    reference: proportional
claims:
  - id: C1
    role: paper  # paper: the paper's claim; sanity: true by construction; diagnostic: shown only
    statement: the tuned proportional controller earns more return than standing still
    problem: reach
    kind: compare
    agent: proportional
    baseline: zero
'''

ENV_TESTS = '''\
"""The $name family's problem: dynamics, rewards, bad actions, seeding (generic checks run
for every registered problem in tests/envs/test_registered.py)."""

from __future__ import annotations

import numpy as np
import pytest

import papergym
from papergym.envs.$name.env import MAX_STEP, ${Camel}Env


def test_moving_to_the_target_earns_the_best_return():
    env = ${Camel}Env(horizon=8)
    obs, _ = env.reset(seed=3)
    rewards = []
    for _ in range(8):
        obs, reward, terminated, truncated, _ = env.step([np.clip(obs[1] - obs[0], -MAX_STEP, MAX_STEP)])
        rewards.append(reward)
    assert not terminated and truncated
    assert rewards[-1] == pytest.approx(0.0, abs=1e-6)  # at most 0.9 away: reached in 4 steps


def test_large_moves_are_clipped_and_counted_and_nan_is_refused():
    env = ${Camel}Env()
    env.reset(seed=0)
    obs, _, _, _, info = env.step([5.0])
    assert obs[0] == pytest.approx(MAX_STEP) and info["n_clipped"] == 1
    with pytest.raises(ValueError, match="finite"):
        env.step([np.nan])


def test_the_seed_decides_the_target():
    env = papergym.make("papergym/$Camel-v0", tier="smoke")
    targets = {float(env.reset(seed=s)[0][1]) for s in (0, 0, 1)}
    assert len(targets) == 2
'''

AGENT_TESTS = '''\
"""The $name agents on the smoke tier: the method beats the baseline, and the claim holds."""

from __future__ import annotations

import papergym
from papergym.agent import REGISTRY
from papergym.benchmarks.runner import rows_for, run_benchmark
from papergym.benchmarks.spec import find_spec
from papergym.leaderboard.claims import evaluate_claims
from papergym.leaderboard.store import Store

PROBLEM = "papergym/$Camel-v0"


def _score(agent_id: str, seed: int = 0) -> float:
    task = papergym.make_task(PROBLEM, tier="smoke")
    budget = task.budget
    artifact = REGISTRY.get(f"$name/{agent_id}")().solve(task.train_view(seed, budget), budget, seed)
    return task.evaluate(artifact, seed).metrics["return"]


def test_the_method_beats_the_baseline_on_held_out_seeds():
    assert _score("proportional") > _score("zero")


def test_the_smoke_benchmark_runs_and_its_claim_holds(tmp_path):
    spec = find_spec("$name")
    store = tmp_path / "$name.sqlite"
    summary = run_benchmark(spec, "smoke", store=store, workers=1)
    assert summary.failed == 0 and summary.ran == summary.total > 0
    with Store(store) as db:
        _, rows = rows_for(spec, "smoke", db)
    assert {v.id: v.verdict for v in evaluate_claims(spec, "smoke", rows)} == {"C1": "holds"}
'''

FILES = {
    "envs/{name}/__init__.py": ENV_INIT,
    "envs/{name}/env.py": ENV,
    "agents/{name}/__init__.py": AGENTS_INIT,
    "agents/{name}/proportional.py": METHOD,
    "agents/{name}/zero.py": BASELINE,
    "benchmarks/specs/{name}.yaml": SPEC,
    "tests/envs/test_{name}.py": ENV_TESTS,
    "tests/agents/test_{name}.py": AGENT_TESTS,
}


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_") if part)


def new_family(name: str, root: str | Path = ".") -> list[Path]:
    """Write the skeleton of family ``name`` under the repository ``root``; return the files."""
    root = Path(root)
    if not NAME_PATTERN.match(name) or keyword.iskeyword(name):
        raise ValueError(f"family name {name!r} must be a lowercase Python identifier (a-z, 0-9, _)")
    missing = [d for d in ("envs", "agents", "benchmarks/specs", "tests") if not (root / d).is_dir()]
    if missing:
        raise FileNotFoundError(f"{root.resolve()} is not a papergym repository (no {', '.join(missing)})")
    targets = {root / pattern.format(name=name): text for pattern, text in FILES.items()}
    taken = [str(p.relative_to(root)) for p in targets if p.exists()]
    taken += [f"{d}/{name}" for d in ("envs", "agents") if (root / d / name).exists()]
    if taken:
        raise FileExistsError(f"family {name!r} exists already: {', '.join(sorted(set(taken)))}")
    values = {"name": name, "Camel": camel(name)}
    for path, text in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template(text).substitute(values))
    return list(targets)
