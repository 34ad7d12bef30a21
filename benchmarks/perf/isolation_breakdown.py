"""Where one call across the agent sandbox spends its time, in microseconds per message.

A policy call is one round trip: the problem encodes the request and writes it, the agent
process wakes, reads and decodes it, runs the policy (dispatch: object lookup, access
checks, the call, the result guard), encodes and writes the answer, and the problem process
wakes, reads and decodes it. An env step is the same with the sides swapped and a metered
``step`` as the call. Each part but the wake-ups is timed here in one process (best of
``--repeats`` timeit runs, so free of scheduling): encode and decode in both formats
(pickled, ``papergym.wire``), dispatch, and a write + poll + read of one message on a
socket pair. The wake-ups are what a two-process round trip of bare 64-byte messages costs
beyond its two write + read pairs.

    python benchmarks/perf/isolation_breakdown.py [--number 20000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import socket
import timeit
from collections.abc import Callable
from multiprocessing.connection import Connection

import numpy as np
from isolation_overhead import ConstantEnv, Policy, pipe_floor  # sibling: sys.path[0]

from papergym import Budget
from papergym.isolation import _CALL, _CALLMETHOD, _OK, _REQ, Endpoint
from papergym.problem import EnvView


def costs_of(caller: Endpoint, server: Endpoint, request: tuple, answer: tuple, fast: bool,
             us: Callable[[Callable[[], object]], float], peer_fd: int,
             syscalls: float) -> dict[str, float]:
    """Microseconds of each codec step in one format, and of serving the request less
    encoding its answer and its write + read (``syscalls``)."""
    caller.fast_wire = server.fast_wire = fast
    request_bytes, answer_bytes = caller.encode(request), server.encode(answer)
    message = server.decode(request_bytes)

    def serve() -> None:
        server._serve(message)
        os.read(peer_fd, 1 << 16)

    costs = {
        "encode request": us(lambda: caller.encode(request)),
        "decode request": us(lambda: server.decode(request_bytes)),
        "encode answer": us(lambda: server.encode(answer)),
        "decode answer": us(lambda: caller.decode(answer_bytes)),
    }
    costs["dispatch (lookup, checks, call)"] = max(
        0.0, us(serve) - costs["encode answer"] - syscalls)
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    def us(call: Callable[[], object]) -> float:
        return min(timeit.repeat(call, number=args.number, repeat=args.repeats)) \
            / args.number * 1e6

    ours, theirs = socket.socketpair()
    problem = Endpoint(Connection(ours.detach()), side="problem")
    agent = Endpoint(Connection(theirs.detach()), side="agent")
    problem_fd, agent_fd = problem.conn.fileno(), agent.conn.fileno()
    budget = Budget(env_steps=10**9)
    env = EnvView(ConstantEnv, budget, 0).make_env()
    env.reset(seed=0)
    env_oid, policy_oid = problem.export(env), agent.export(Policy())
    obs = np.linspace(-1, 1, 8, dtype=np.float32)
    calls = {
        # (name, sender, receiver, request, answer)
        "policy call": (problem, agent, (_REQ, 1, _CALL, policy_oid, None, (obs,), {}),
                        (_OK, 1, obs * np.float32(0.5))),
        "env step": (agent, problem, (_REQ, 1, _CALLMETHOD, env_oid, "step", (obs,), {}),
                     (_OK, 1, (obs, 0.0, False, False, {}))),
    }

    def write_read() -> None:
        os.write(problem_fd, bytes(100))
        agent._readable(60.0)  # the poll(2) a reply with a timeout waits in
        os.read(agent_fd, 1 << 16)

    syscalls = us(write_read)
    floor_wall, _ = pipe_floor(args.number)
    wake_ups = floor_wall / args.number * 1e6 - 2 * syscalls
    print(f"{'per round trip, us':>34} {'pickled':>9} {'wire':>9}")
    for name, (caller, server, request, answer) in calls.items():
        peer_fd = problem_fd if server is agent else agent_fd  # where the answer arrives
        parts: dict[str, list[float]] = {}
        for fast in (False, True):
            costs = costs_of(caller, server, request, answer, fast, us, peer_fd, syscalls)
            costs["2 x (write, poll, read)"] = 2 * syscalls
            costs["2 x wake-up (pipe floor - syscalls)"] = wake_ups
            costs["total"] = sum(costs.values())
            for part, cost in costs.items():
                parts.setdefault(part, []).append(cost)
        print(name)
        for part, (pickled, raw) in parts.items():
            print(f"{part:>34} {pickled:9.2f} {raw:9.2f}")
    print(f"(best of {args.repeats} x {args.number}; wake-ups from one {args.number}-round-trip "
          f"run: {floor_wall / args.number * 1e6:.2f} us per bare round trip)")


if __name__ == "__main__":
    main()
