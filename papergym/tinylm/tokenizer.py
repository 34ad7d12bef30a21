"""A fixed-vocabulary character tokenizer: one id per symbol plus four special tokens."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

SPECIALS = ("<bos>", "<sep>", "<eos>", "<pad>")


class CharTokenizer:
    """Characters ``symbols[i]`` get id ``i``; BOS, SEP, EOS, PAD follow them.

    A sequence is ``BOS prompt SEP response EOS``, right-padded with PAD for training.
    """

    def __init__(self, symbols: str) -> None:
        if len(set(symbols)) != len(symbols):
            raise ValueError(f"tokenizer symbols must be distinct, got {symbols!r}")
        self.symbols = symbols
        self._ids = {c: i for i, c in enumerate(symbols)}
        base = len(symbols)
        self.bos, self.sep, self.eos, self.pad = base, base + 1, base + 2, base + 3
        self.vocab_size = base + len(SPECIALS)

    def encode(self, text: str) -> list[int]:
        try:
            return [self._ids[c] for c in text]
        except KeyError as err:
            raise ValueError(f"character {err.args[0]!r} is not in the vocabulary "
                             f"{self.symbols!r}") from None

    def decode(self, ids: Iterable[int], stop_at_eos: bool = True) -> str:
        """Text of ``ids``; special tokens other than EOS are written as ``?`` (never valid)."""
        out = []
        for i in ids:
            i = int(i)
            if i == self.eos and stop_at_eos:
                break
            out.append(self.symbols[i] if 0 <= i < len(self.symbols) else "?")
        return "".join(out)

    def prompt_ids(self, prompt: str) -> list[int]:
        """``BOS prompt SEP``: what a model is conditioned on."""
        return [self.bos, *self.encode(prompt), self.sep]

    def sequence_ids(self, prompt: str, response: str, eos: bool = True) -> list[int]:
        return [*self.prompt_ids(prompt), *self.encode(response), *([self.eos] if eos else [])]

    def pad_batch(self, rows: Sequence[Sequence[int]], length: int | None = None) -> list[list[int]]:
        width = length if length is not None else max(len(r) for r in rows)
        return [list(r) + [self.pad] * (width - len(r)) for r in rows]
