"""papergym: the problems of ICML 2026 papers as environments, agents and a leaderboard.

    import gymnasium as gym
    env = gym.make("papergym:papergym/<Name>-v0")      # or papergym.make(id, tier="smoke")

Importing papergym registers every built-in problem with gymnasium under the ``papergym``
namespace. Families register with string entry points, so this import stays light.

    trials = papergym.run("performative", tier="smoke")   # pandas DataFrame, one line a trial
    verdicts = papergym.claims("performative", tier="smoke")
"""

from papergym.agent import Agent, AgentConfig, AgentError
from papergym.api import claims, run, trials  # notebook API; imports its machinery lazily
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
    "claims",
    "make",
    "make_task",
    "problems",
    "register",
    "run",
    "spec",
    "trials",
]

problems()  # import the built-in families so gymnasium.make("papergym:...") finds them
