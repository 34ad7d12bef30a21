"""The task suite: four domains standing in for math / code / STEM / chat [recon].

Every item is ``BOS TAG prompt SEP answer EOS`` over one character vocabulary (digits, letters a-p,
brackets, operators, the domain tags A C M L, then BOS SEP EOS PAD). Exact-match tasks are scored
by greedy decoding of the answer; ``hmm`` (text of a sparse random HMM, no prompt) by
exp(−mean per-token cross-entropy).

| domain | tasks | item |
|---|---|---|
| arith | add3, add5 | ``123+456=`` -> the sum's n+1 digits, least significant first [recon: reversed] |
| arith | mul2 | ``12*34=`` -> the product's 4 digits, least significant first |
| code | dyck | a prefix over ``()[]{}<>`` with unclosed brackets -> the closing sequence |
| code | vartrack | ``a=3;b=a;c=b;?c`` -> the value, chains of n assignments (copy or +1 mod 10) |
| code | sortN | N letters -> sorted |
| memory | recallN | N pairs key letter + value digit, ``|`` and a key -> its value |
| memory | copyN | N letters -> the same letters |
| lang | hmm | N symbols a-p of a random sparse HMM (one per seed) |

Train/eval separation: an item is eval-only iff crc32(prompt) mod 10 == 0; the training stream
skips those, the evaluator draws only those (rejection sampling from its own sealed generator).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from papergym.tinylm import synthlang
from papergym.tinylm.tokenizer import CharTokenizer

LETTERS = "abcdefghijklmnop"
BRACKETS = "()[]{}<>"
TAGS = {"arith": "A", "code": "C", "memory": "M", "lang": "L"}
TOKENIZER = CharTokenizer("0123456789" + LETTERS + BRACKETS + "+*=;?:|," + "".join(TAGS.values()))
EVAL_MOD = 10


@dataclass(frozen=True)
class Item:
    task: str
    prompt: str
    answer: str

    def ids(self) -> list[int]:
        return [TOKENIZER.bos, *TOKENIZER.encode(TAGS[domain_of(self.task)] + self.prompt), TOKENIZER.sep,
                *TOKENIZER.encode(self.answer), TOKENIZER.eos]

    def answer_span(self) -> tuple[int, int]:
        """[start, end) of the positions predicted in the answer (answer tokens and EOS)."""
        start = len(self.prompt) + 3  # BOS TAG prompt SEP: the first answer token is at this index
        return start, start + len(self.answer) + 1


def is_eval(prompt: str) -> bool:
    return zlib.crc32(prompt.encode()) % EVAL_MOD == 0


def _digits(rng: np.random.Generator, n: int) -> str:
    return "".join(str(d) for d in rng.integers(0, 10, n))


def _add(n: int) -> Callable[[np.random.Generator], tuple[str, str]]:
    def gen(rng: np.random.Generator) -> tuple[str, str]:
        a, b = _digits(rng, n), _digits(rng, n)
        return f"{a}+{b}=", str(int(a) + int(b)).zfill(n + 1)[::-1]
    return gen


def _mul(rng: np.random.Generator) -> tuple[str, str]:
    a, b = _digits(rng, 2), _digits(rng, 2)
    return f"{a}*{b}=", str(int(a) * int(b)).zfill(4)[::-1]


def _dyck(max_len: int) -> Callable[[np.random.Generator], tuple[str, str]]:
    def gen(rng: np.random.Generator) -> tuple[str, str]:
        length = int(rng.integers(2, max_len + 1))
        stack: list[int] = []
        out = []
        for _ in range(length):
            if stack and (rng.random() < 0.4 or len(stack) >= 4):
                out.append(BRACKETS[2 * stack.pop() + 1])
            else:
                kind = int(rng.integers(0, 4))
                stack.append(kind)
                out.append(BRACKETS[2 * kind])
        if not stack:
            kind = int(rng.integers(0, 4))
            stack.append(kind)
            out.append(BRACKETS[2 * kind])
        return "".join(out), "".join(BRACKETS[2 * k + 1] for k in reversed(stack))
    return gen


def _vartrack(n: int) -> Callable[[np.random.Generator], tuple[str, str]]:
    def gen(rng: np.random.Generator) -> tuple[str, str]:
        names = rng.permutation(list(LETTERS[:8]))[:n]
        value = int(rng.integers(0, 10))
        parts = [f"{names[0]}={value}"]
        for prev, name in zip(names[:-1], names[1:]):
            if rng.random() < 0.5:
                parts.append(f"{name}={prev}")
            else:
                value = (value + 1) % 10
                parts.append(f"{name}={prev}+1")
        return ";".join(parts) + f";?{names[-1]}", str(value)
    return gen


def _sort(n: int) -> Callable[[np.random.Generator], tuple[str, str]]:
    def gen(rng: np.random.Generator) -> tuple[str, str]:
        s = "".join(rng.choice(list(LETTERS), n))
        return s, "".join(sorted(s))
    return gen


def _recall(n: int) -> Callable[[np.random.Generator], tuple[str, str]]:
    def gen(rng: np.random.Generator) -> tuple[str, str]:
        keys = rng.permutation(list(LETTERS))[:n] if n <= len(LETTERS) else rng.choice(list(LETTERS), n)
        values = rng.integers(0, 10, n)
        query = int(rng.integers(0, n))
        first = {k: i for i, k in reversed(list(enumerate(keys)))}  # a repeated key: its first value
        return "".join(f"{k}{v}" for k, v in zip(keys, values)) + f"|{keys[query]}", str(
            values[first[keys[query]]])
    return gen


def _copy(n: int) -> Callable[[np.random.Generator], tuple[str, str]]:
    def gen(rng: np.random.Generator) -> tuple[str, str]:
        s = "".join(rng.choice(list(LETTERS), n))
        return s, s
    return gen


def _parse(task: str) -> tuple[str, int]:
    head = task.rstrip("0123456789")
    return head, int(task[len(head):]) if task[len(head):] else 0


def domain_of(task: str) -> str:
    head, _ = _parse(task)
    domains = {"add": "arith", "mul": "arith", "dyck": "code", "vartrack": "code", "sort": "code",
               "recall": "memory", "copy": "memory", "hmm": "lang"}
    if head not in domains:
        raise ValueError(f"unknown task {task!r}; tasks: add<n>, mul2, dyck<n>, vartrack<n>, sort<n>, "
                         "recall<n>, copy<n>, hmm<n>")
    return domains[head]


def generator(task: str) -> Callable[[np.random.Generator], tuple[str, str]]:
    """The item generator of an exact-match task (``hmm`` has none: see :class:`Suite`)."""
    head, n = _parse(task)
    domain_of(task)
    if n < 1 and head != "mul":
        raise ValueError(f"task {task!r} needs a size, e.g. {head}8")
    if head == "add":
        return _add(n)
    if head == "mul":
        return _mul
    if head == "dyck":
        return _dyck(n)
    if head == "vartrack":
        if n > 8:
            raise ValueError("vartrack chains have at most 8 variables")
        return _vartrack(n)
    if head == "sort":
        return _sort(n)
    if head == "recall":
        return _recall(n)
    if head == "copy":
        return _copy(n)
    raise ValueError(f"task {task!r} is not an exact-match task")


class Suite:
    """The tasks of one problem instance; ``hmm<n>`` uses the HMM language of the seed."""

    def __init__(self, tasks: list[str], language: synthlang.HMMLanguage | None = None) -> None:
        self.tasks = list(tasks)
        for task in self.tasks:
            domain_of(task)
            if task.startswith("hmm") and language is None:
                raise ValueError("an hmm task needs its language")
        self.language = language
        self._gens = {t: generator(t) for t in self.tasks if not t.startswith("hmm")}

    def domains(self) -> list[str]:
        return sorted({domain_of(t) for t in self.tasks})

    def tasks_of(self, domain: str) -> list[str]:
        return [t for t in self.tasks if domain == "mix" or domain_of(t) == domain]

    def draw(self, task: str, rng: np.random.Generator, held_out: bool) -> Item:
        """One item of ``task``: training (``held_out=False``) or eval-only, by rejection."""
        for _ in range(10_000):
            if task.startswith("hmm"):
                return self.draw_many(task, 1, rng, held_out)[0]
            else:
                prompt, answer = self._gens[task](rng)
                key = prompt
            if is_eval(key) == held_out:
                return Item(task, prompt, answer)
        raise RuntimeError(f"{task}: no {'eval' if held_out else 'training'} item in 10,000 draws")

    def draw_many(self, task: str, n: int, rng: np.random.Generator, held_out: bool) -> list[Item]:
        """n items of ``task``; HMM text is sampled in vectorized blocks (then filtered)."""
        if not task.startswith("hmm"):
            return [self.draw(task, rng, held_out) for _ in range(n)]
        out: list[Item] = []
        length = int(task[3:])
        while len(out) < n:
            block = self.language.sample(max(16, (12 if held_out else 2) * (n - len(out))), rng)[:, :length]
            for seq in block:
                text = "".join(LETTERS[s] for s in seq)
                if is_eval(text) == held_out and len(out) < n:
                    out.append(Item(task, "", text))
        return out

    def max_length(self, rng: np.random.Generator, draws: int = 64) -> int:
        return max(len(self.draw(t, rng, False).ids()) for t in self.tasks for _ in range(draws))


def batch_ids(items: list[Item]) -> np.ndarray:
    """Right-padded (B, T) ids of the items."""
    rows = [it.ids() for it in items]
    width = max(len(r) for r in rows)
    return np.array([r + [TOKENIZER.pad] * (width - len(r)) for r in rows], dtype=np.int64)
