"""Agents of the llmserve family: ScaleSim (``scalesim``, the method, and its variants) and the
classic cache baselines (``classic_cache``: LRU, FIFO, LFU, random)."""

from papergym.agents.llmserve import classic_cache, scalesim  # noqa: F401  (importing registers them)
