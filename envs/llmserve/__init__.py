"""llmserve: ScaleSim (ICML 2026, arXiv 2601.21473), memory-efficient serving of LLM multi-agent
simulations: invocation-distance eviction and prefetch of per-agent state in accelerator memory.

Problems: ``papergym/AgentMemory-v0`` (one tick per step; the action scores every agent's state
for eviction and prefetch; its Task scores a policy on held-out traces against LRU and a Belady
oracle on the same trace). Modules: ``costmodel`` (sizes, bandwidth, batch compute), ``traces``
(the three workload generators and their estimates), ``sim`` (the NumPy memory simulator),
``oracle`` (the problem's references), ``env`` (the env), ``evaluate`` (the Task).
"""

from papergym.registry import register

register(
    "papergym/AgentMemory-v0",
    entry_point="papergym.envs.llmserve.env:AgentMemoryEnv",
    kind="env",
    max_episode_steps="n_ticks",
    task="papergym.envs.llmserve.evaluate:AgentMemoryTask",
    family="llmserve",
    paper="scalesim2026",
    tiers={
        "smoke": {"workload": "independent", "N": 64, "n_ticks": 200, "pressure": 0.3,
                  "train_steps": 400, "eval_episodes": 1},
        "standard": {"workload": "independent", "N": 1000, "n_ticks": 1000, "pressure": 0.3,
                     "train_steps": 2000, "eval_episodes": 1},
        "full": {"workload": "independent", "N": 16000, "n_ticks": 2000, "pressure": 0.3,
                 "train_steps": 4000, "eval_episodes": 1},
    },
    changelog={"v0": "initial release"},
)
