"""The family's language: one sparse HMM per trial seed (``papergym.tinylm.synthlang``), drawn
from a sealed seed so an agent cannot rebuild it, with its exact reference statistics.

``Reference statistics`` (per language, cached with the denoiser): the entropy rate H_rate
(exact -log p(x)/L averaged over exact samples, with its standard error) and NLL_unif (the
same for uniform random tokens): the normalized score's 1 and 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.problem import sealed_seed
from papergym.tinylm.synthlang import HMMLanguage

LANGUAGE_TAG, STATS_TAG = 21, 22


def language_seed(seed: int) -> int:
    """The HMM's seed: the public seed when no eval salt is set, else a salted one."""
    return sealed_seed(int(seed), LANGUAGE_TAG)


def make_language(lang_seed: int, states: int, vocab: int, length: int) -> HMMLanguage:
    return HMMLanguage.random(states, vocab, length, np.random.default_rng([LANGUAGE_TAG, lang_seed]))


def reference_stats(language: HMMLanguage, lang_seed: int, n: int) -> dict[str, Any]:
    rng = np.random.default_rng([STATS_TAG, lang_seed])
    h_rate, h_se = language.entropy_rate(n, rng)
    uniform = rng.integers(0, language.vocab_size, size=(n, language.length))
    nll_unif = float(np.mean(-language.log_prob(uniform) / language.length))
    return {"h_rate": h_rate, "h_rate_se": h_se, "nll_unif": nll_unif}
