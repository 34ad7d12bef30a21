"""A synthetic language with exact likelihood: a sparse random hidden Markov model.

S hidden states, V symbols, fixed length L. The initial law is Dir(1); every row of the
transition and emission matrices is Dir(c) with a small concentration c (0.1: strong sequential
structure, so a parallel decoder that reveals many tokens at once makes visible errors). Each
row is then mixed with the uniform law at weight ``smoothing`` (1e-3), so every sequence has a
finite likelihood (uniform random tokens included) [recon].

Everything exact goes through :mod:`papergym.hmm`'s forward(-backward) recursions:
- ``log_prob(x)``: log p(x) by the forward algorithm, O(L S^2) per sequence;
- ``posterior(x)``: p(x^l | revealed tokens) at every position (MASK = V marks the hidden
  ones: emission likelihood 1 there), the oracle an ideal masked-diffusion denoiser converges
  to; revealed positions are one-hot (they are copied);
- ``unigram_marginals()`` (L, V) and ``pair_marginals()`` (L-1, V, V), exact;
- ``entropy_rate(n, rng)``: the mean of -log p(x)/L over n exact samples, with its standard error.

numpy float64 throughout; every draw comes from an explicit ``numpy.random.Generator``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from papergym.hmm import forward_backward_batch, log_likelihood_batch


@dataclass(frozen=True, eq=False)
class HMMLanguage:
    initial: np.ndarray  # (S,)
    transition: np.ndarray  # (S, S), rows: from
    emission: np.ndarray  # (S, V)
    length: int

    @classmethod
    def random(cls, states: int, vocab: int, length: int, rng: np.random.Generator,
               concentration: float = 0.1, smoothing: float = 1e-3) -> HMMLanguage:
        if min(states, vocab, length) < 1 or states < 2 or vocab < 2:
            raise ValueError(f"need states >= 2, vocab >= 2, length >= 1; got {states}, {vocab}, "
                             f"{length}")
        if not (concentration > 0 and 0 <= smoothing < 1):
            raise ValueError(f"need concentration > 0 and 0 <= smoothing < 1, got {concentration}, "
                             f"{smoothing}")

        def rows(n: int, k: int, c: float) -> np.ndarray:
            # Dirichlet through normalized Gammas, floored so tiny c cannot give an all-zero row
            g = np.maximum(rng.gamma(c, 1.0, size=(n, k)), 1e-300)
            return (1 - smoothing) * g / g.sum(1, keepdims=True) + smoothing / k

        return cls(initial=rows(1, states, 1.0)[0], transition=rows(states, states, concentration),
                   emission=rows(states, vocab, concentration), length=int(length))

    @property
    def n_states(self) -> int:
        return self.initial.shape[0]

    @property
    def vocab_size(self) -> int:
        return self.emission.shape[1]

    @property
    def mask_id(self) -> int:
        return self.vocab_size

    # ------------------------------------------------------------------ sampling
    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n exact sequences (n, L) of ids in [0, V)."""
        cum_a, cum_b = self.transition.cumsum(1), self.emission.cumsum(1)
        u = rng.random((n, self.length, 2))
        z = np.minimum((u[:, 0, 0, None] > self.initial.cumsum()).sum(1), self.n_states - 1)
        out = np.empty((n, self.length), dtype=np.int64)
        for t in range(self.length):
            if t:
                z = np.minimum((u[:, t, 0, None] > cum_a[z]).sum(1), self.n_states - 1)
            out[:, t] = np.minimum((u[:, t, 1, None] > cum_b[z]).sum(1), self.vocab_size - 1)
        return out

    # ------------------------------------------------------------------ exact inference
    def _log_emissions(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x)
        if x.ndim != 2 or x.shape[1] != self.length:
            raise ValueError(f"sequences must be (n, {self.length}), got shape {x.shape}")
        if x.size and (x.min() < 0 or x.max() > self.mask_id):
            raise ValueError(f"token ids must lie in [0, {self.mask_id}] (MASK = {self.mask_id})")
        log_b = np.concatenate([np.log(self.emission), np.zeros((self.n_states, 1))], axis=1)
        return log_b[:, x].transpose(1, 2, 0)  # (n, L, S); 0 at MASK: likelihood 1

    def log_prob(self, x: np.ndarray) -> np.ndarray:
        """log p(x) of complete sequences (n,), by the forward algorithm."""
        x = np.asarray(x)
        if x.size and x.max() >= self.mask_id:
            raise ValueError("log_prob needs complete sequences (no MASK)")
        return log_likelihood_batch(self._log_emissions(x), np.log(self.transition),
                                    np.log(self.initial))

    def posterior(self, x: np.ndarray) -> np.ndarray:
        """p(x^l = v | the revealed tokens of x) for every position: (n, L, V); MASK = V marks
        the hidden positions, revealed ones are one-hot."""
        x = np.asarray(x)
        gamma, _ = forward_backward_batch(self._log_emissions(x), np.log(self.transition),
                                          np.log(self.initial))
        probs = gamma @ self.emission  # p(x^l | revealed) = sum_k p(z_l = k | revealed) B[k, .]
        revealed = x < self.mask_id
        probs[revealed] = np.eye(self.vocab_size)[x[revealed]]
        return probs

    def state_marginals(self) -> np.ndarray:
        """p(z_l) for every position: (L, S)."""
        out = np.empty((self.length, self.n_states))
        out[0] = self.initial
        for t in range(1, self.length):
            out[t] = out[t - 1] @ self.transition
        return out

    def unigram_marginals(self) -> np.ndarray:
        """p(x^l = v): (L, V)."""
        return self.state_marginals() @ self.emission

    def pair_marginals(self) -> np.ndarray:
        """p(x^l = a, x^{l+1} = b): (L-1, V, V)."""
        z = self.state_marginals()[:-1]  # (L-1, S)
        joint = z[:, :, None] * self.transition[None]  # p(z_l = i, z_{l+1} = j)
        return np.einsum("ia,lij,jb->lab", self.emission, joint, self.emission)

    def entropy_rate(self, n: int, rng: np.random.Generator) -> tuple[float, float]:
        """Monte Carlo mean of the exact -log p(x)/L over n samples, and its standard error."""
        nll = -self.log_prob(self.sample(n, rng)) / self.length
        return float(nll.mean()), float(nll.std(ddof=1) / np.sqrt(n))
