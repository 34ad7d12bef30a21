"""The cost of agent isolation: per trial, per policy call, per env step, per vector step.

In-process = agent and problem in one process (``runner.execute_trial_in_process``);
isolated = the agent in a sandboxed child process reached over two pipes (``AgentProcess``,
``runner.execute_trial``), with each message either in the raw wire format
(``papergym.wire``, the default) or pickled as every message was before it
(``papergym.isolation.FAST_WIRE = False``). Everything runs in this process on the same
calls, so the ratios compare like with like on this machine.

- no-op trial: a Task whose view is the seed and an agent that returns it;
- policy call: the problem calls the agent's policy (an object of the agent, so it stays in
  the agent process) on an 8-float observation, with the runner's per-call timeout set;
- env step: the agent steps a metered env of the view (a proxy env: each step runs and is
  counted in the problem process);
- vector step: the same through ``view.make_vector_env(8)``: one crossing steps 8 envs;
- pipe floor: a bare round trip of 64 bytes over a pair of pipes between two processes (one
  write and one read a side), the least any call across the boundary can cost here.

Every isolated way runs twice: with this process free to use every CPU (its agent too), and
pinned to one CPU (``1 cpu``), as the local executor pins each worker, whose forked agent
inherits the CPU: a round trip is then a switch on one core, not a wake-up across cores.

Per call it prints the wall microseconds (median of the repeats) and the CPU microseconds of
both processes together (what a loaded machine pays; wall time there also waits for a core).
Run with the main checkout's interpreter to measure a tree without the wire format: only
the pickled path is printed then.

    python benchmarks/perf/isolation_overhead.py [--trials 50] [--calls 2000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np
from _noop import NOOP_ID  # a sibling module: this folder is sys.path[0]

from papergym import Agent, Budget, isolation
from papergym.benchmarks.runner import Trial, execute_trial, execute_trial_in_process
from papergym.isolation import AgentProcess, Limits
from papergym.problem import EnvView

VECTOR_ENVS = 8
HAS_WIRE = hasattr(isolation, "FAST_WIRE")


class Policy:
    """The artifact: a policy object of the agent, plus its process's CPU clock."""

    def __init__(self) -> None:
        self.gain = np.float32(0.5)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        return obs * self.gain

    def cpu_s(self) -> float:
        return time.process_time()


class PolicyAgent(Agent):
    id, family, role, paper = "policy", "perf", "baseline", "-"

    def solve(self, view, budget, seed):
        return Policy()


class ConstantEnv(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, shape=(8,), dtype=np.float32)
    action_space = gym.spaces.Box(-1.0, 1.0, shape=(8,), dtype=np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(8, dtype=np.float32), {}

    def step(self, action):
        return np.asarray(action, dtype=np.float32), 0.0, False, False, {}


class StepperAgent(Agent):
    """Steps the view's env (``vector`` > 0: a vector env of that many) ``steps`` times;
    returns the wall and CPU seconds of its own process over the steps."""

    id, family, role, paper = "stepper", "perf", "baseline", "-"

    def __init__(self, steps: int, vector: int = 0) -> None:
        self.steps, self.vector = steps, vector

    def solve(self, view, budget, seed):
        if self.vector:
            env = view.make_vector_env(self.vector)
            env.reset(seed=list(range(self.vector)))
            action = np.zeros((self.vector, 8), dtype=np.float32)
        else:
            env = view.make_env()
            env.reset(seed=0)
            action = np.zeros(8, dtype=np.float32)
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(self.steps):
            env.step(action)
        return time.perf_counter() - start, time.process_time() - cpu


def noop_trial(seed: int) -> Trial:
    return Trial(benchmark="perf", section="noop", tier="smoke",
                 problem_id=NOOP_ID, problem_kwargs={}, agent="noop",
                 agent_ref="perf/noop", agent_role="baseline", agent_config={},
                 seed=seed, timeout_s=60, problem_hash="-", agent_hash="-", key=f"k{seed}")


def per_trial(run: Callable[[Trial], Any], trials: int) -> float:
    start = time.perf_counter()
    for seed in range(trials):
        row = run(noop_trial(seed))
        assert row.ok and row.metrics == {"value": 1.0}, row.error
    return (time.perf_counter() - start) / trials


def sandboxed(agent: Callable[[], Agent], fast_wire: bool) -> AgentProcess:
    if HAS_WIRE:
        isolation.FAST_WIRE = fast_wire  # read by both endpoints as they are built
    sandbox = AgentProcess(agent, Limits())
    sandbox.start()
    if HAS_WIRE:
        isolation.FAST_WIRE = True
    return sandbox


def policy_calls(calls: int, way: str) -> tuple[float, float]:
    """(wall, CPU of both processes) seconds for ``calls`` policy calls."""
    obs = np.linspace(-1, 1, 8, dtype=np.float32)
    if way == "in-process":
        policy = PolicyAgent().solve(None, None, 0)
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(calls):
            policy(obs)
        return time.perf_counter() - start, time.process_time() - cpu
    sandbox = sandboxed(PolicyAgent, way == "wire")
    try:
        policy = sandbox.solve(0, None, 0)
        assert sandbox.endpoint is not None
        sandbox.endpoint.revoke()
        sandbox.endpoint.reply_timeout = Limits().call_timeout_s  # as the runner evaluates
        policy(obs)  # the first call also resolves the remote object
        agent_cpu = policy.cpu_s()
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(calls):
            policy(obs)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        return wall, cpu + policy.cpu_s() - agent_cpu
    finally:
        sandbox.close()


def env_steps(steps: int, way: str, vector: int = 0) -> tuple[float, float]:
    """(wall, CPU of both processes) seconds for ``steps`` steps of the agent."""
    budget = Budget(env_steps=(steps + 10) * max(1, vector))
    view = EnvView(ConstantEnv, budget, 0)
    agent = StepperAgent(steps, vector)
    if way == "in-process":
        return agent.solve(view, budget, 0)
    sandbox = sandboxed(lambda: agent, way == "wire")
    try:
        cpu = time.process_time()
        wall, agent_cpu = sandbox.solve(view, budget, 0)
        cpu = time.process_time() - cpu  # the problem side: the steps and a few set-up calls
        assert budget.used["env_steps"] == steps * max(1, vector)  # counted here
        return wall, cpu + agent_cpu
    finally:
        sandbox.close()


def pipe_floor(round_trips: int) -> tuple[float, float]:
    """(wall, CPU of both processes) seconds for ``round_trips`` bare 64-byte round trips over
    a pair of pipes, the channel ``AgentProcess`` opens (one write(2) and one read(2) a side)."""
    to_child, from_parent = os.pipe()
    to_parent, from_child = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(from_parent)
        os.close(to_parent)
        cpu = time.process_time()
        while (data := os.read(to_child, 64)) != b"stop":
            os.write(from_child, data)
        os.write(from_child, str(time.process_time() - cpu).encode())
        os._exit(0)
    os.close(to_child)
    os.close(from_child)
    message = bytes(64)
    try:
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(round_trips):
            os.write(from_parent, message)
            os.read(to_parent, 64)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        os.write(from_parent, b"stop")
        return wall, cpu + float(os.read(to_parent, 64))
    finally:
        os.close(from_parent)
        os.close(to_parent)
        os.waitpid(pid, 0)


@contextmanager
def one_cpu():
    """This process on one CPU (as a local executor's worker); what it forks inherits it."""
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(allowed)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


def placed(way: str) -> contextlib.AbstractContextManager:
    """Where ``way`` runs: on one CPU if it ends in `` 1 cpu``, else anywhere."""
    return one_cpu() if way.endswith(" 1 cpu") else contextlib.nullcontext()


def measure_way(measure: Callable[[str], tuple[float, float]], way: str) -> tuple[float, float]:
    """``way`` is in-process, pickled or wire, with `` 1 cpu`` for the same on one CPU."""
    with placed(way):
        return measure(way.removesuffix(" 1 cpu"))


def median_of(repeats: int, measure: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    runs = [measure() for _ in range(repeats)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = args.calls
    ways = ["in-process", "pickled", "wire"] if HAS_WIRE else ["in-process", "pickled"]
    ways += [f"{way} 1 cpu" for way in ways[1:]]
    per_trial(execute_trial, 3)  # warm up: imports, first fork

    print(f"per call, microseconds (median of {args.repeats} repeats of {n} calls); "
          "wall and CPU of both processes; x = ratio to in-process wall")
    print(f"{'':>26} " + " ".join(f"{w + ' wall':>16} {'cpu':>7} {'x':>6}" for w in ways))
    rows: list[tuple[str, Callable[[str], tuple[float, float]]]] = [
        ("policy call", lambda w: policy_calls(n, w)),
        ("env step", lambda w: env_steps(n, w)),
        (f"vector step ({VECTOR_ENVS} envs)", lambda w: env_steps(n, w, VECTOR_ENVS)),
    ]
    for name, measure in rows:
        runs: dict[str, list[tuple[float, float]]] = {way: [] for way in ways}
        for _ in range(args.repeats):  # interleaved: a change of load hits every way alike
            for way in ways:
                runs[way].append(measure_way(measure, way))
        results = {way: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs))
                   for way, rs in runs.items()}
        base = results["in-process"][0]
        print(f"{name:>26} " + " ".join(
            f"{wall / n * 1e6:16.2f} {cpu / n * 1e6:7.2f} {wall / base:6.1f}"
            for wall, cpu in results.values()))
    for way in ("", " 1 cpu"):
        with placed(way):
            wall, cpu = median_of(args.repeats, lambda: pipe_floor(n))
        print(f"{'pipe floor (round trip)' + way:>26} {wall / n * 1e6:16.2f} "
              f"{cpu / n * 1e6:7.2f}")
    inside = statistics.median(per_trial(execute_trial_in_process, args.trials)
                               for _ in range(args.repeats))
    isolated = statistics.median(per_trial(execute_trial, args.trials)
                                 for _ in range(args.repeats))
    with one_cpu():
        pinned = statistics.median(per_trial(execute_trial, args.trials)
                                   for _ in range(args.repeats))
    print(f"no-op trial: {inside * 1e3:.3f} ms in-process, {isolated * 1e3:.3f} ms isolated "
          f"(+{(isolated - inside) * 1e3:.3f} ms), {pinned * 1e3:.3f} ms isolated on 1 cpu; "
          f"averaged over {args.trials} trials")


if __name__ == "__main__":
    main()
