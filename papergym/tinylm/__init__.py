"""papergym.tinylm: a tiny causal language-model toolkit shared by the language families.

Family-neutral: it knows characters, tokens and transformers, never a task.

- :mod:`~papergym.tinylm.tokenizer`: fixed-vocabulary character tokenizer with BOS/SEP/EOS/PAD.
- :mod:`~papergym.tinylm.gpt`: pre-LN causal GPT (learned positions, GELU MLP) with a KV cache
  and ``forward(tokens, return_hidden=l)`` exposing the input of block ``l``.
- :mod:`~papergym.tinylm.sampling`: batched temperature / top-p sampling from an explicit
  ``torch.Generator``, with or without the KV cache (identical draws either way).
- :mod:`~papergym.tinylm.pergrad`: per-sample gradient norms via ``torch.func`` (vmap of grad).

Heavy imports (torch) happen only when a submodule is imported.
"""
