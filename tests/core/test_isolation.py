"""The object RPC between the problem and the agent process (papergym/isolation.py): what
crosses as data, what stays behind a proxy, what the problem side refuses."""

from __future__ import annotations

import os
import pickle
import signal
import socket
import time
from multiprocessing.connection import Connection

import numpy as np
import pytest
import torch

from papergym import Agent, Budget
from papergym.isolation import AgentProcess, Endpoint, Limits, Proxy
from papergym.problem import EnvView


def _problem_endpoint() -> Endpoint:
    ours, _ = socket.socketpair()
    return Endpoint(Connection(ours.detach()), side="problem")


class _Evil:
    def __reduce__(self):
        return os.system, ("echo pwned",)


def test_agent_bytes_cannot_name_arbitrary_globals():
    endpoint = _problem_endpoint()
    for payload in (pickle.dumps(_Evil()), pickle.dumps(_Evil, protocol=4),
                    b"cbuiltins\neval\n(S'1'\ntR."):
        with pytest.raises(pickle.UnpicklingError, match="not allowed from agents"):
            endpoint.decode(payload)


def test_arrays_tensors_and_modules_cross_as_data():
    endpoint = _problem_endpoint()
    module = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    value = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "s": np.float64(2.5),
             "t": torch.ones(2, dtype=torch.bfloat16), "m": module, "g": np.random.default_rng(1)}
    agent = Endpoint(endpoint.conn, side="agent")  # encodes as the agent process would
    back = endpoint.decode(agent.encode(value))
    assert np.array_equal(back["a"], value["a"]) and back["s"] == 2.5
    assert back["t"].dtype == torch.bfloat16 and isinstance(back["m"], torch.nn.Sequential)
    assert torch.equal(back["m"][0].weight, module[0].weight)
    assert back["g"].random() == np.random.default_rng(1).random()


class _Probe(Agent):
    id, family, role, paper = "probe", "isolation_test", "baseline", "-"

    def solve(self, view, budget, seed):
        env = view.make_env()
        outcome = {"is_proxy_view": type(view).__name__, "env_type": type(env).__name__}
        for name, attempt in [("private", lambda: view._make),
                              ("budget_spend", lambda: budget.spend("env_steps", -5)),
                              ("raw_step", lambda: env.unwrapped.step(0)),
                              ("set_attr", lambda: setattr(budget, "limits", {}))]:
            try:
                attempt()
                outcome[name] = "allowed"
            except Exception as err:  # noqa: BLE001
                outcome[name] = type(err).__name__
        env.reset(seed=0)
        env.step(np.zeros(1, dtype=np.float32))
        outcome["remaining"] = budget.remaining("env_steps")
        return outcome


def test_the_view_is_a_proxy_and_guards_its_insides():
    import gymnasium as gym

    budget = Budget(env_steps=10)
    view = EnvView(lambda: gym.make("Pendulum-v1"), budget, 0)
    sandbox = AgentProcess(_Probe, Limits(memory_mb=4096))
    sandbox.start()
    try:
        outcome = sandbox.solve(view, budget, 0)
    finally:
        sandbox.close()
    assert outcome["is_proxy_view"] == Proxy.__name__ and outcome["env_type"] == "RemoteEnv"
    assert outcome["private"] == "AttributeError"
    assert outcome["budget_spend"] == outcome["raw_step"] == outcome["set_attr"] \
        == "PermissionError"
    assert outcome["remaining"] == 9 and budget.used["env_steps"] == 1  # counted here


class _Drawer(Agent):
    id, family, role, paper = "drawer", "isolation_test", "baseline", "-"

    def solve(self, view, budget, seed):
        rng = np.random.default_rng(seed)
        first = view.draw(rng)  # the problem draws from the agent's generator ...
        return [first, float(rng.random())]  # ... and the agent's copy moved on with it


class _DrawView:
    def draw(self, rng):
        return float(rng.random())


def test_a_generator_passed_to_the_problem_advances_as_in_process():
    sandbox = AgentProcess(_Drawer, Limits(memory_mb=4096))
    sandbox.start()
    try:
        isolated = sandbox.solve(_DrawView(), Budget(calls=1), 3)
    finally:
        sandbox.close()
    assert isolated == _Drawer().solve(_DrawView(), None, 3)


class _Sleeper(Agent):
    id, family, role, paper = "sleeper", "isolation_test", "baseline", "-"

    def solve(self, view, budget, seed):
        import time

        time.sleep(60)


def test_the_agent_process_dies_with_a_killed_problem_process():
    read, write = os.pipe()
    problem = os.fork()
    if problem == 0:  # a problem process that is SIGKILLed mid-solve (as on a timeout)
        try:
            sandbox = AgentProcess(_Sleeper, Limits(memory_mb=4096))
            sandbox.start()
            os.write(write, str(sandbox.pid).encode())
            sandbox.solve(0, Budget(calls=1), 0)
        finally:
            os._exit(0)
    agent = int(os.read(read, 32))
    os.kill(problem, signal.SIGKILL)
    os.waitpid(problem, 0)
    deadline = time.time() + 5
    while _alive(agent) and time.time() < deadline:
        time.sleep(0.05)
    alive = _alive(agent)
    if alive:
        os.kill(agent, signal.SIGKILL)
    assert not alive


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
