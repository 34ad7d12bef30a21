"""Agents of the llmserve family: ScaleSim (``scalesim``, the method, and its variants), its
policy on request-history estimates (``history_prefetch``, the control of its invocation-distance
estimate) and the classic cache baselines (``classic_cache``: LRU, FIFO, LFU, random)."""

from papergym.agents.llmserve import classic_cache, history_prefetch, scalesim  # noqa: F401  (importing registers them)
