"""papergym.tinylm: a tiny causal language-model toolkit shared by the language families.

Family-neutral: it knows characters, tokens and transformers, never a task.

- :mod:`~papergym.tinylm.tokenizer`: fixed-vocabulary character tokenizer with BOS/SEP/EOS/PAD.
- :mod:`~papergym.tinylm.gpt`: pre-LN causal GPT (learned positions, GELU MLP) with a KV cache
  and ``forward(tokens, return_hidden=l)`` exposing the input of block ``l``.
- :mod:`~papergym.tinylm.sampling`: batched temperature / top-p sampling from an explicit
  ``torch.Generator``, with or without the KV cache (identical draws either way); top-K and
  Gumbel-top-K choice of positions.
- :mod:`~papergym.tinylm.pergrad`: per-sample gradient norms via ``torch.func`` (vmap of grad).
- :mod:`~papergym.tinylm.bidir`: bidirectional encoder with a MASK token, optional time embedding,
  a vocabulary or a scalar head (masked diffusion denoisers, remaskers); SUBS probabilities.
- :mod:`~papergym.tinylm.synthlang`: a sparse random HMM language with exact likelihood, oracle
  posteriors and marginals (through :mod:`papergym.hmm`).
- :mod:`~papergym.tinylm.train`: a deterministic AdamW loop (warm-up, clipping, EMA).

Heavy imports (torch) happen only when a submodule is imported.
"""
