"""Agent contract: declarations checked, configs validated, plug-ins loaded from files."""

from __future__ import annotations

import textwrap

import pytest
from pydantic import ValidationError

from papergym.agent import REGISTRY, Agent, AgentConfig, AgentError, load_agent_file


def test_config_rejects_unknown_and_mistyped_fields(toy_spec):
    greedy = REGISTRY.get("greedy", family="fixture")
    assert greedy(None).config.gain == 1.0
    with pytest.raises(AgentError, match=r"fixture/greedy.*gian.*fields are gain"):
        greedy({"gian": 2})
    with pytest.raises(AgentError, match="gain"):
        greedy({"gain": "fast"})


def test_unknown_agent_lists_known_ones(toy_spec):
    with pytest.raises(AgentError, match="known agents: .*fixture/greedy"):
        REGISTRY.get("nope", family="fixture")


def test_declarations_are_checked():
    with pytest.raises(AgentError, match="role must be one of"):
        class BadRole(Agent):  # noqa: F841
            id, family, role, paper = "badrole", "fixture", "champion", "x"

            def solve(self, view, budget, seed):
                return None


def test_plugin_from_file_registers(tmp_path):
    plugin = tmp_path / "my_agent.py"
    plugin.write_text(textwrap.dedent("""
        import numpy as np
        from papergym import Agent, AgentConfig

        class Halfway(Agent):
            id, family, role, paper = "halfway", "fixture", "method", "mine"

            class Config(AgentConfig):
                fraction: float = 0.5

            def solve(self, view, budget, seed):
                f = self.config.fraction
                return lambda obs: np.array([f * (obs[1] - obs[0])], dtype=np.float32)
    """))
    cls = load_agent_file(f"{plugin}:Halfway")
    assert issubclass(cls, Agent) and cls.Config().fraction == 0.5
    assert REGISTRY.get("fixture/halfway") is cls
    with pytest.raises(AgentError, match="not a papergym.Agent"):
        load_agent_file(f"{plugin}:np")
    with pytest.raises(AgentError, match="no such file"):
        load_agent_file(f"{tmp_path}/missing.py:Halfway")


def test_agent_config_base_is_frozen():
    class C(AgentConfig):
        x: int = 1

    with pytest.raises(ValidationError):
        C().x = 2  # type: ignore[misc]
