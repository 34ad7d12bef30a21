"""llmserve: ScaleSim (ICML 2026, arXiv 2601.21473), memory-efficient serving of LLM multi-agent
simulations: invocation-distance eviction and prefetch of per-agent state in accelerator memory.

Problems: ``papergym/AgentMemory-v1`` (one tick per step; the action scores every agent's state
for eviction and prefetch; its Task scores a policy on held-out traces against LRU and a Belady
oracle on the same trace). Modules: ``costmodel`` (sizes, bandwidth, batch compute), ``traces``
(the three workload generators and their estimates), ``sim`` (the NumPy memory simulator),
``oracle`` (the problem's references), ``env`` (the env), ``evaluate`` (the Task).
``AgentMemory-v0`` is superseded and stays registered (its diffusion estimate read each frontier
agent's drawn future share tick; v1 uses expected delays only).
"""

from papergym.registry import register

_TIERS = {
    "smoke": {"workload": "independent", "N": 64, "n_ticks": 200, "pressure": 0.3,
              "train_steps": 400, "eval_episodes": 1},
    "standard": {"workload": "independent", "N": 1000, "n_ticks": 1000, "pressure": 0.3,
                 "train_steps": 2000, "eval_episodes": 1},
    "full": {"workload": "independent", "N": 16000, "n_ticks": 2000, "pressure": 0.3,
             "train_steps": 4000, "eval_episodes": 1},
}

register(
    "papergym/AgentMemory-v0",
    entry_point="papergym.envs.llmserve.env:AgentMemoryEnv",
    kind="env",
    max_episode_steps="n_ticks",
    task="papergym.envs.llmserve.evaluate:AgentMemoryTask",
    family="llmserve",
    paper="scalesim2026",
    tiers={k: dict(v) for k, v in _TIERS.items()},
    changelog={"v0": "initial release (superseded by v1)"},
)

register(
    "papergym/AgentMemory-v1",
    entry_point="papergym.envs.llmserve.env:AgentMemoryEnvV1",
    kind="env",
    max_episode_steps="n_ticks",
    task="papergym.envs.llmserve.evaluate:AgentMemoryTaskV1",
    family="llmserve",
    paper="scalesim2026",
    tiers={k: dict(v) for k, v in _TIERS.items()},
    changelog={"v0": "initial release",
               "v1": "diffusion estimate from expected delays only (v0 read the drawn future "
                     "share tick)"},
)
