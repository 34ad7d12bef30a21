"""papergym: the problems of ICML 2026 papers as environments, agents and a leaderboard.

    import gymnasium as gym
    env = gym.make("papergym:papergym/<Name>-v0")      # or papergym.make(id, tier="smoke")

Importing papergym registers every built-in problem with gymnasium under the ``papergym``
namespace. Families register with string entry points, so this import stays light.
"""

from papergym.agent import Agent, AgentConfig, AgentError
from papergym.problem import (
    TIERS,
    Budget,
    BudgetExceeded,
    EnvTask,
    EvalResult,
    Policy,
    Task,
)
from papergym.registry import make, make_task, problems, register, spec

__version__ = "0.1.0"

__all__ = [
    "TIERS",
    "Agent",
    "AgentConfig",
    "AgentError",
    "Budget",
    "BudgetExceeded",
    "EnvTask",
    "EvalResult",
    "Policy",
    "Task",
    "__version__",
    "make",
    "make_task",
    "problems",
    "register",
    "spec",
]

problems()  # import the built-in families so gymnasium.make("papergym:...") finds them
