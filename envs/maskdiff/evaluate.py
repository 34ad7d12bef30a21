"""What the evaluator measures on a sample set: exact gen-NLL and the diversity guard.

- gen-NLL = mean over samples of -(1/L) log p_true(x), nats per token, by the forward algorithm.
- Diversity guard [recon thresholds]: the pooled unigram entropy of the samples against the exact
  pooled marginal entropy (ratio), the duplicate rate (1 - distinct / n), and the total-variation
  distance between pooled adjacent-pair frequencies and the exact pooled pair marginals, minus
  the exact sampler's TV at the same n (its noise floor). A set is **flagged** when its entropy
  ratio is below 0.9 or its duplicate rate exceeds the exact sampler's by more than 0.05; a
  flagged set's guarded NLL is NLL_unif (it cannot support a claim: it scores as uniform noise).
- Remasker ROC-AUC: how well a remasker's scores rank the wrong tokens of one-step proposals
  (x_t filled from the denoiser at t ~ U(eps, 1)) above the right ones, on held-out sequences.
"""

from __future__ import annotations

import numpy as np
import torch

from papergym.tinylm.synthlang import HMMLanguage

ENTROPY_FLOOR, DUPLICATE_SLACK = 0.9, 0.05


def gen_nll(language: HMMLanguage, samples: np.ndarray) -> float:
    return float(np.mean(-language.log_prob(samples) / language.length))


def pooled_entropy(samples: np.ndarray, vocab: int) -> float:
    freq = np.bincount(samples.reshape(-1), minlength=vocab) / samples.size
    nz = freq[freq > 0]
    return float(-(nz * np.log(nz)).sum())


def marginal_entropy(language: HMMLanguage) -> float:
    p = language.unigram_marginals().mean(0)
    return float(-(p * np.log(p)).sum())


def pair_tv(samples: np.ndarray, pooled_pairs: np.ndarray) -> float:
    vocab = pooled_pairs.shape[0]
    codes = (samples[:, :-1] * vocab + samples[:, 1:]).reshape(-1)
    freq = np.bincount(codes, minlength=vocab * vocab).reshape(vocab, vocab) / codes.size
    return float(0.5 * np.abs(freq - pooled_pairs).sum())


def duplicate_rate(samples: np.ndarray) -> float:
    return float(1.0 - len(np.unique(samples, axis=0)) / len(samples))


def guard(samples: np.ndarray, language: HMMLanguage, exact: np.ndarray) -> dict[str, float]:
    """Entropy ratio, duplicate rate, excess pair TV and the flag of one sample set, against an
    exact sample set ``exact`` of the same size."""
    pairs = language.pair_marginals().mean(0)
    ratio = pooled_entropy(samples, language.vocab_size) / marginal_entropy(language)
    dup, dup_exact = duplicate_rate(samples), duplicate_rate(exact)
    flag = ratio < ENTROPY_FLOOR or dup > dup_exact + DUPLICATE_SLACK
    return {"entropy_ratio": ratio, "dup": dup,
            "tv": pair_tv(samples, pairs) - pair_tv(exact, pairs), "flag": float(flag)}


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """P(score of a positive > score of a negative) + ties / 2 (Mann-Whitney); 0.5 without both."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    if not len(pos) or not len(neg):
        return 0.5
    order = np.argsort(np.concatenate([pos, neg]), kind="stable")
    allv = np.concatenate([pos, neg])[order]
    ranks = np.empty(len(allv))
    # average ranks of ties
    _, start, counts = np.unique(allv, return_index=True, return_counts=True)
    for s, c in zip(start, counts):
        ranks[s:s + c] = s + (c + 1) / 2.0
    rank_of = np.empty(len(allv))
    rank_of[order] = ranks
    r_pos = rank_of[:len(pos)].sum()
    return float((r_pos - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def remasker_labels(x0: torch.Tensor, probs_fn, mask_id: int, generator: torch.Generator,
                    t: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """G-Star's labels (strategy ``default``): x_t ~ q(. | x_0), x_hat = x_t with every mask
    filled by a draw of p_theta(. | x_t) (nucleus 1.0: one step t -> 0), y = 1[x_hat != x_0]
    (0 wherever x_t was revealed). Returns (x_hat, y, x_t)."""
    from papergym.envs.maskdiff.denoiser import mask_batch
    from papergym.envs.maskdiff.steps import draw_tokens

    xt, _ = mask_batch(x0, mask_id, generator, t)
    filled = draw_tokens(probs_fn(xt), generator, 1.0)
    x_hat = torch.where(xt == mask_id, filled, xt)
    return x_hat, (x_hat != x0).float(), xt
