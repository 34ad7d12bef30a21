"""Every registered Gymnasium env with a natural episode length tells gymnasium that length:
``gymnasium.make(id).spec.max_episode_steps`` is the env's own length at its defaults and at the
smoke tier, and the ``TimeLimit`` this adds never ends an episode the env would not end itself.
An env without one is listed here with the reason."""

from __future__ import annotations

import warnings

import gymnasium
import pytest

import papergym

SPECS = {s.id: s for s in papergym.problems()
         if s.kind == "env" and isinstance(s.entry_point, str)
         and s.entry_point.startswith("papergym.envs.")}

# (length with no arguments, length at the smoke tier), as each docstring's Episode End and
# Arguments give them: the step at which the env itself ends every episode that lasts that long.
NATURAL_LENGTH = {
    "papergym/AbstractedGrid-v0": (100, 100),       # max_steps
    "papergym/AgentMemory-v0": (200, 200),          # n_ticks: one step per tick of the trace
    "papergym/AgentMemory-v1": (200, 200),
    "papergym/DragFFD2D-v0": (20, 20),              # horizon
    "papergym/DragFFD2D-v1": (20, 20),
    "papergym/KGBackjump-v0": (20, 20),             # 2 x call_budget
    "papergym/KGBackjump-v1": (20, 20),
    "papergym/KolmogorovCycling-v0": (10, 6),       # horizon (cycles)
    "papergym/KolmogorovCycling-v1": (10, 6),
    "papergym/Lorenz96Cycling-v0": (20, 20),
    "papergym/MDMRemask-v0": (1, 1),                # decisions(T): T = 8 leaves one
    "papergym/MDMRemask-v1": (8, 3),                # decisions(T): T = 32, 16
    "papergym/PerformativeAffine-v0": (50, 50),     # T deployments
    "papergym/PerformativeAffine-v1": (50, 50),
    "papergym/StrategicCredit-v0": (5, 5),
    "papergym/StrategicJury-v0": (120, 120),        # the flip budget 4 n_pts (STOP ends sooner)
    "papergym/XEmbodiedHumanoid-v0": (1000, 100),   # max_steps
    "papergym/XEmbodiedHumanoid-v1": (1000, 40),
    "papergym/XEmbodiedWalker-v0": (1000, 200),
    "papergym/XEmbodiedWalker-v1": (1000, 60),
    "papergym/XEmbodiedWalker-v2": (1000, 60),
    # max_response_tokens (EOS ends a response sooner)
    **{f"papergym/RLVR{task}-v{version}": (length, length)
       for task, length in (("AddScratch", 18), ("Countdown", 13), ("ModLinear", 3))
       for version in range(3)},
    "papergym/RLVRSubsetSum-v0": (12, 12),
    "papergym/RLVRSubsetSum-v1": (12, 8),
    "papergym/RLVRSubsetSum-v2": (12, 8),
}

NO_NATURAL_LENGTH = {
    "papergym/QAOA2Partition-v0": "one step per partition level until a level's graph has at most "
                                  "n_max nodes: the count depends on the instance drawn at reset",
    "papergym/QAOA2Partition-v1": "as v0",
    "papergym/QAOA2Partition-v2": "as v0",
    "papergym/QAOA2Assign-v0": "one step per node of the instance drawn at reset (N differs "
                               "across the instance set)",
}

# Every episode of these lasts exactly its length (no early termination).
FIXED_LENGTH = {"papergym/AgentMemory-v0", "papergym/AgentMemory-v1",
                "papergym/DragFFD2D-v0", "papergym/DragFFD2D-v1",
                "papergym/KolmogorovCycling-v0", "papergym/KolmogorovCycling-v1",
                "papergym/Lorenz96Cycling-v0", "papergym/MDMRemask-v0", "papergym/MDMRemask-v1",
                "papergym/StrategicCredit-v0"}


def test_every_registered_env_is_listed_once():
    assert set(NATURAL_LENGTH).isdisjoint(NO_NATURAL_LENGTH)
    assert set(NATURAL_LENGTH) | set(NO_NATURAL_LENGTH) == set(SPECS)
    assert FIXED_LENGTH <= set(NATURAL_LENGTH)


@pytest.mark.parametrize("problem_id", sorted(NATURAL_LENGTH))
def test_max_episode_steps_is_the_envs_own_length_at_defaults_and_smoke(problem_id):
    default, smoke = NATURAL_LENGTH[problem_id]
    assert isinstance(SPECS[problem_id].max_episode_steps, str)  # follows the built env
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert gymnasium.make(f"papergym:{problem_id}").spec.max_episode_steps == default
        assert papergym.make(problem_id, tier="smoke").spec.max_episode_steps == smoke


@pytest.mark.parametrize("problem_id", sorted(NO_NATURAL_LENGTH))
def test_env_without_a_natural_length_registers_none(problem_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        assert gymnasium.make(f"papergym:{problem_id}").spec.max_episode_steps is None


def _episode(env: gymnasium.Env, seed: int, limit: int) -> tuple[int, bool, bool]:
    """Length, terminated, truncated of one episode under seeded uniform actions."""
    env.reset(seed=seed)
    env.action_space.seed(seed)
    for t in range(1, limit + 1):
        *_, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            return t, bool(terminated), bool(truncated)
    return limit, False, False


@pytest.mark.parametrize("problem_id", sorted(NATURAL_LENGTH))
def test_time_limit_never_ends_an_episode_the_env_would_not_end(problem_id):
    """The raw env (no TimeLimit) ends its episode by the registered length, truncates only
    there, and the registered env's episode is exactly as long, with the same termination."""
    length = NATURAL_LENGTH[problem_id][1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        registered = papergym.make(problem_id, tier="smoke")
        raw = papergym.make(problem_id, tier="smoke").unwrapped
        for seed in (0, 1):
            steps, terminated, truncated = _episode(raw, seed, limit=5 * length)
            assert (terminated or truncated) and steps <= length, (
                f"{problem_id}: the env alone ran {steps} steps (registered length {length})")
            if truncated and not terminated or problem_id in FIXED_LENGTH:
                assert steps == length
            wrapped_steps, wrapped_terminated, wrapped_truncated = _episode(registered, seed, length)
            assert (wrapped_steps, wrapped_terminated) == (steps, terminated)
            assert wrapped_truncated == (truncated or steps == length)
