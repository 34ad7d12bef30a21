"""The raw wire format across a real agent process (papergym/isolation.py + papergym/wire.py):
steps and policy calls cross raw with the same results as pickled, a vector step is one
crossing, malformed frames from the agent are refused, timeouts and deaths still surface."""

from __future__ import annotations

import fcntl
import os
import stat
import struct
import time

import gymnasium as gym
import numpy as np
import pytest

from papergym import Agent, Budget, isolation, wire
from papergym.isolation import AgentDied, AgentProcess, CallTimeout, IsolationError, Limits
from papergym.problem import EnvView

LIMITS = Limits(memory_mb=4096)


class _Walk(Agent):
    """Steps Pendulum with a fixed action sequence; returns everything the env gave back."""

    id, family, role, paper = "walk", "isolation_test", "baseline", "-"

    def __init__(self, steps: int = 30, vector: int = 0) -> None:
        self.steps, self.vector = steps, vector

    def solve(self, view, budget, seed):
        rng = np.random.default_rng(seed)
        if self.vector:
            env = view.make_vector_env(self.vector)
            seen = [env.reset(seed=list(range(self.vector)))]
            for _ in range(self.steps):
                seen.append(env.step(rng.uniform(-2, 2, (self.vector, 1)).astype(np.float32)))
            return seen
        env = view.make_env()
        seen = [env.reset(seed=seed)]
        for _ in range(self.steps):
            seen.append(env.step(rng.uniform(-2, 2, 1).astype(np.float32)))
        return seen


def _run(agent, *, fast: bool, received: list[bytes] | None = None, steps: int = 30):
    budget = Budget(env_steps=10_000)
    view = EnvView(lambda: gym.make("Pendulum-v1"), budget, 0)
    isolation.FAST_WIRE = fast
    try:
        sandbox = AgentProcess(lambda: agent, LIMITS)
        sandbox.start()
    finally:
        isolation.FAST_WIRE = True
    try:
        assert sandbox.endpoint is not None
        if received is not None:  # record every message the problem side reads
            endpoint = sandbox.endpoint
            decode = endpoint.decode

            def recording(data):
                received.append(data)
                return decode(data)

            endpoint.decode = recording
        return sandbox.solve(view, budget, 7), budget.used["env_steps"]
    finally:
        sandbox.close()
        view.close()


def _flat(value):
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flat(v)]
    if isinstance(value, dict):
        return [(k, x) for k, v in sorted(value.items()) for x in _flat(v)]
    if isinstance(value, np.ndarray):
        return [(value.dtype.str, value.shape, value.tobytes())]
    return [(type(value).__name__, value)]


def test_env_steps_cross_raw_and_give_what_pickled_steps_give():
    received: list[bytes] = []
    raw, used = _run(_Walk(), fast=True, received=received)
    received_pickled: list[bytes] = []
    pickled, used_pickled = _run(_Walk(), fast=False, received=received_pickled)
    assert used == used_pickled == 30
    assert _flat(raw) == _flat(pickled) and len(raw) == 31
    assert sum(m[0] == wire.MAGIC for m in received) >= 31  # the reset and every step
    assert all(m[0] == 0x80 for m in received_pickled)  # the old path: every message pickled


def test_a_vector_step_is_one_crossing():
    counts = {}
    for steps in (5, 25):
        received: list[bytes] = []
        seen, used = _run(_Walk(steps=steps, vector=4), fast=True, received=received)
        assert used == 4 * steps and len(seen) == steps + 1
        counts[steps] = len(received)
    assert counts[25] - counts[5] == 20  # one message in per vector step of 4 envs


def _pipe_to_problem() -> int:
    """The agent process's one write-only pipe: the channel to the problem process."""
    for fd in range(3, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) \
                    and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                return fd
        except OSError:
            continue
    raise RuntimeError("no pipe to the problem process")


class _Forger(Agent):
    """Writes one forged frame straight onto its pipe to the problem, then waits."""

    id, family, role, paper = "forger", "isolation_test", "baseline", "-"

    def __init__(self, payload: bytes) -> None:
        self.payload = payload

    def solve(self, view, budget, seed):
        os.write(_pipe_to_problem(), struct.pack("!i", len(self.payload)) + self.payload)
        time.sleep(30)


def _array(dtype_code: int, shape: tuple[int, ...], data: bytes) -> bytes:
    head = struct.pack(f"<BbBB{len(shape)}q", wire.MAGIC, ord("a"), dtype_code, len(shape),
                       *shape)
    return head + data


@pytest.mark.parametrize(("payload", "match"), [
    (_array(17, (2,), bytes(16)), "plain number dtypes"),  # an object dtype cannot be named
    (_array(10, (4,), bytes(12)), "16 bytes with 12 left"),  # wrong size
    (_array(10, (1 << 30, 1 << 10), bytes(8)), "at most"),  # oversized
    (bytes([wire.MAGIC]) + b"(" + struct.pack("<I", 9) + b"N", "9 items in 1 bytes"),
    (bytes([wire.MAGIC, 0x51]), "unknown tag"),  # a malformed header
])
def test_a_forged_raw_frame_from_the_agent_is_refused(payload, match):
    budget = Budget(env_steps=10)
    view = EnvView(lambda: gym.make("Pendulum-v1"), budget, 0)
    sandbox = AgentProcess(lambda: _Forger(payload), LIMITS)
    sandbox.start()
    try:
        with pytest.raises(IsolationError, match=f"malformed message from the agent.*{match}"):
            sandbox.solve(view, budget, 0)
    finally:
        sandbox.close()
    assert budget.used.get("env_steps", 0) == 0


class _Policy:
    def __init__(self, nap_s: float = 0.0, die: bool = False) -> None:
        self.nap_s, self.die = nap_s, die

    def __call__(self, obs):
        if self.die:
            os._exit(3)
        time.sleep(self.nap_s)
        return -obs


class _PolicyAgent(Agent):
    id, family, role, paper = "policy", "isolation_test", "baseline", "-"

    def __init__(self, **kwargs) -> None:
        self.kwargs = kwargs

    def solve(self, view, budget, seed):
        return _Policy(**self.kwargs)


def _policy(**kwargs):
    sandbox = AgentProcess(lambda: _PolicyAgent(**kwargs), LIMITS)
    sandbox.start()
    policy = sandbox.solve(0, None, 0)
    assert sandbox.endpoint is not None
    sandbox.endpoint.revoke()
    sandbox.endpoint.reply_timeout = 0.5
    return sandbox, policy


def test_policy_calls_cross_raw_and_time_out():
    sandbox, policy = _policy(nap_s=0.0)
    try:
        obs = np.arange(3, dtype=np.float32)
        action = policy(obs)
        assert action.dtype == np.float32 and np.array_equal(action, -obs)
    finally:
        sandbox.close()
    sandbox, policy = _policy(nap_s=5.0)
    try:
        start = time.monotonic()
        with pytest.raises(CallTimeout, match="within 0.5s"):
            policy(np.zeros(3, np.float32))
        assert time.monotonic() - start < 3.0
    finally:
        sandbox.close()


def test_an_agent_that_dies_mid_call_is_agent_died():
    sandbox, policy = _policy(die=True)
    try:
        with pytest.raises(AgentDied):
            policy(np.zeros(3, np.float32))
        deadline = time.monotonic() + 10  # its pipe closes a moment before it is reaped
        while sandbox.died() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert sandbox.died() == "exit code 3"
    finally:
        sandbox.close()


# -- framing: the problem side's reader over a bare socket ---------------------------------


def _pair():
    import socket
    from multiprocessing.connection import Connection

    ours, theirs = socket.socketpair()
    return isolation.Endpoint(Connection(ours.detach()), side="problem"), theirs


def _frame(message) -> bytes:
    data = wire.encode(message)
    return struct.pack("!i", len(data)) + data


def test_the_reader_splits_joined_frames_and_joins_split_ones():
    endpoint, theirs = _pair()
    big = np.arange(40_000, dtype=np.float32)  # 160 kB: more than one read
    theirs.sendall(_frame((1, 1, "first")) + _frame((1, 2, big))[:1000])
    assert endpoint.receive() == (1, 1, "first")
    theirs.sendall(_frame((1, 2, big))[1000:] + _frame((1, 3, None))[:3])
    kind, rid, value = endpoint.receive()
    assert (kind, rid) == (1, 2) and np.array_equal(value, big)
    theirs.sendall(_frame((1, 3, None))[3:])
    assert endpoint.receive() == (1, 3, None)


def test_a_cut_frame_times_out_and_a_bad_length_is_agent_died():
    endpoint, theirs = _pair()
    endpoint.reply_timeout = 0.2
    theirs.sendall(_frame((1, 1, "cut short"))[:-2])
    with pytest.raises(CallTimeout):
        endpoint.receive()
    endpoint, theirs = _pair()
    theirs.sendall(struct.pack("!i", -5) + bytes(8))
    with pytest.raises(AgentDied):
        endpoint.receive()
    endpoint, theirs = _pair()
    theirs.sendall(_frame((1, 1, None))[:-1])
    theirs.close()
    with pytest.raises(AgentDied):
        endpoint.receive()
