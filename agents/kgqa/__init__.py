"""kgqa agents: BoG-lite (the paper's method, LLM-free), ToG-lite, RoG-lite, greedy SFT
(no-backjump ablation), chronological DFS, and the oracle / random-walk references."""

from papergym.agents.kgqa import (  # noqa: F401 - importing registers the agents
    bog_lite,
    chrono_dfs,
    greedy_sft,
    oracle,
    random_walk,
    rog_lite,
    tog_lite,
)
