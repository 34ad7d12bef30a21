"""The cost of agent isolation: per trial, per 1,000 policy calls, per 1,000 env steps.

Before = the old in-process path (agent and problem in one process,
``runner.execute_trial_in_process``); after = the isolated path the runner uses (the agent
in a sandboxed child process, reached over a socket, ``runner.execute_trial``). Both run in
this process on the same trials, so the printed ratios compare like with like here.

- no-op trial: a Task whose view is the seed and an agent that returns it;
- 1,000 policy calls: the problem calls the agent's policy (a closure, so it stays in the
  agent process) on an 8-float observation;
- 1,000 env steps: the agent steps a metered env of the view (a proxy env: each step runs
  and is counted in the problem process).

    python benchmarks/perf/isolation_overhead.py [--trials 50] [--calls 1000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np
from _noop import NOOP_ID  # a sibling module: this folder is sys.path[0]

from papergym import Agent, Budget
from papergym.benchmarks.runner import Trial, execute_trial, execute_trial_in_process
from papergym.isolation import AgentProcess, Limits
from papergym.problem import EnvView


class PolicyAgent(Agent):
    id, family, role, paper = "policy", "perf", "baseline", "-"

    def solve(self, view, budget, seed):
        gain = np.float32(0.5)
        return lambda obs: obs * gain


class ConstantEnv(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, shape=(8,), dtype=np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, shape=(8,), dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(8, dtype=np.float32), {}

    def step(self, action):
        return np.asarray(action, dtype=np.float32), 0.0, False, False, {}


class StepperAgent(Agent):
    """Steps the view's env ``seed`` times and returns the seconds it took."""

    id, family, role, paper = "stepper", "perf", "baseline", "-"

    def solve(self, view, budget, seed):
        env = view.make_env()
        env.reset(seed=0)
        action = np.zeros(8, dtype=np.float32)
        start = time.perf_counter()
        for _ in range(seed):
            env.step(action)
        return time.perf_counter() - start


def noop_trial(seed: int) -> Trial:
    return Trial(benchmark="perf", section="noop", tier="smoke",
                 problem_id=NOOP_ID, problem_kwargs={}, agent="noop",
                 agent_ref="perf/noop", agent_role="baseline", agent_config={},
                 seed=seed, timeout_s=60, problem_hash="-", agent_hash="-", key=f"k{seed}")


def per_trial(run: Any, trials: int) -> float:
    start = time.perf_counter()
    for seed in range(trials):
        row = run(noop_trial(seed))
        assert row.ok and row.metrics == {"value": 1.0}, row.error
    return (time.perf_counter() - start) / trials


def policy_calls(calls: int, isolated: bool) -> float:
    obs = np.linspace(-1, 1, 8, dtype=np.float32)
    if not isolated:
        policy = PolicyAgent().solve(None, None, 0)
        start = time.perf_counter()
        for _ in range(calls):
            policy(obs)
        return time.perf_counter() - start
    sandbox = AgentProcess(PolicyAgent, Limits())
    sandbox.start()
    try:
        policy = sandbox.solve(0, None, 0)
        policy(obs)  # the first call also resolves the remote object
        start = time.perf_counter()
        for _ in range(calls):
            policy(obs)
        return time.perf_counter() - start
    finally:
        sandbox.close()


def env_steps(steps: int, isolated: bool) -> float:
    budget = Budget(env_steps=steps + 10)
    view = EnvView(ConstantEnv, budget, 0)
    if not isolated:
        return StepperAgent().solve(view, budget, steps)
    sandbox = AgentProcess(StepperAgent, Limits())
    sandbox.start()
    try:
        elapsed = sandbox.solve(view, budget, steps)
        assert budget.used["env_steps"] == steps  # counted here, in the problem process
        return elapsed
    finally:
        sandbox.close()


def median_of(repeats: int, measure: Any) -> float:
    return statistics.median(measure() for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    per_trial(execute_trial, 3)  # warm up: imports, first fork
    rows = [
        ("no-op trial", median_of(args.repeats, lambda: per_trial(execute_trial_in_process,
                                                                  args.trials)),
         median_of(args.repeats, lambda: per_trial(execute_trial, args.trials))),
        (f"{args.calls} policy calls", median_of(args.repeats, lambda: policy_calls(args.calls,
                                                                                  False)),
         median_of(args.repeats, lambda: policy_calls(args.calls, True))),
        (f"{args.calls} env steps", median_of(args.repeats, lambda: env_steps(args.calls, False)),
         median_of(args.repeats, lambda: env_steps(args.calls, True))),
    ]
    print(f"{'':>20} {'in-process ms':>14} {'isolated ms':>12} {'ratio':>8} {'added ms':>9}")
    for name, before, after in rows:
        print(f"{name:>20} {before * 1e3:14.3f} {after * 1e3:12.3f} {after / before:8.1f} "
              f"{(after - before) * 1e3:9.3f}")
    print(f"(median of {args.repeats} repeats; no-op trial averaged over {args.trials} trials)")


if __name__ == "__main__":
    main()
