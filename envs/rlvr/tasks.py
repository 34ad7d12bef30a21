"""The four verifiable tasks: instance generators, exact verifiers, exhaustive solvers.

Every task is a small class with the same interface:

- ``sample(rng)`` draws one instance (a :class:`Instance` with its prompt string);
- ``verify(instance, response)`` is the exact 0/1 verifier of a response *text*;
- ``solutions(instance)`` lists every correct answer in canonical form (countdown: every AST
  with the operands of + and × sorted; subset-sum: every index set; mod-linear / addition:
  the unique answer);
- ``render(instance, rng)`` prints one uniformly random valid solution with random operand
  order (the SFT target), ``corrupt(text, rng)`` changes one number/index/digit/operator;
- ``canonical(instance, response)`` is the canonical form of a correct response (distinct
  correct solutions are counted in it).

Formats (all [recon], spec rlvr.md): ``C3,7,12;33`` -> an expression; ``S4,9,2;15`` ->
increasing 0-based indices ``0,2``; ``M5x+3=7;11`` -> ``x``; ``A4821+9670`` -> per-digit
``<sum digit><carry>`` pairs from the least significant digit, comma-separated, ``=``, the sum.

Train/eval separation: an instance is eval-only if sha256(prompt) mod 10 == 0; validation
(learning curves, tuning) uses sha256(prompt) mod 10 == 1 [recon: the spec names no
validation split]; training draws reject both.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

SYMBOLS = "0123456789+-*/()=,;xCSMA"
SPLITS = ("train", "validation", "eval")


@dataclass(frozen=True)
class Instance:
    prompt: str
    data: tuple[Any, ...] = field(compare=False)


def split_of(prompt: str) -> str:
    bucket = int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 10
    return "eval" if bucket == 0 else "validation" if bucket == 1 else "train"


def sample_split(task: RLVRTaskDef, rng: np.random.Generator, split: str) -> Instance:
    """Rejection-sample an instance of ``split`` (train rejects eval and validation prompts)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    for _ in range(100_000):
        instance = task.sample(rng)
        if split_of(instance.prompt) == split:
            return instance
    raise RuntimeError(f"could not draw a {split} instance of {task.name}")


class RLVRTaskDef:
    name = ""
    tag = ""

    size_range = (1, 10**6)  # valid sizes, inclusive

    def __init__(self, size: int) -> None:
        self.size = int(size)
        low, high = self.size_range
        if not low <= self.size <= high:
            raise ValueError(f"rlvr {self.name}: size must lie in [{low}, {high}], got {size!r}")

    @property
    def max_response_tokens(self) -> int:  # including EOS
        raise NotImplementedError

    def sample(self, rng: np.random.Generator) -> Instance:
        raise NotImplementedError

    def verify(self, instance: Instance, response: str) -> bool:
        raise NotImplementedError

    def solutions(self, instance: Instance) -> list[str]:
        raise NotImplementedError

    def render(self, instance: Instance, rng: np.random.Generator) -> str:
        raise NotImplementedError

    def canonical(self, instance: Instance, response: str) -> str:
        return response

    def prompt_length_bound(self) -> int:
        """The longest prompt text this task size can produce."""
        raise NotImplementedError

    def corrupt(self, text: str, rng: np.random.Generator) -> str:
        """Change one character among the answer-bearing ones (digits and operators)."""
        positions = [i for i, c in enumerate(text) if c in "0123456789+-*/"]
        if not positions:
            return text
        i = positions[int(rng.integers(len(positions)))]
        pool = "0123456789" if text[i].isdigit() else "+-*/"
        choices = [c for c in pool if c != text[i]]
        return text[:i] + choices[int(rng.integers(len(choices)))] + text[i + 1:]


# ----------------------------------------------------------------------------- countdown

class ParseError(ValueError):
    pass


def _tokenize_expression(text: str) -> list[str]:
    tokens, i = [], 0
    while i < len(text):
        c = text[i]
        if c.isdigit():
            j = i
            while j < len(text) and text[j].isdigit():
                j += 1
            if text[i] == "0" and j - i > 1:
                raise ParseError("leading zero")
            tokens.append(text[i:j])
            i = j
        elif c in "+-*/()":
            tokens.append(c)
            i += 1
        else:
            raise ParseError(f"unexpected character {c!r}")
    return tokens


def parse_expression(text: str) -> tuple[Any, list[int]]:
    """Strict grammar: expr := term (('+'|'-') term)*; term := factor (('*'|'/') factor)*;
    factor := literal | '(' expr ')'. No unary minus. Returns (AST, literals)."""
    tokens = _tokenize_expression(text)
    literals: list[int] = []
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise ParseError("unexpected end")
        pos += 1
        return tokens[pos - 1]

    def factor() -> Any:
        tok = take()
        if tok == "(":
            node = expr()
            if take() != ")":
                raise ParseError("unbalanced parentheses")
            return node
        if tok.isdigit():
            literals.append(int(tok))
            return int(tok)
        raise ParseError(f"unexpected token {tok!r}")

    def term() -> Any:
        node = factor()
        while peek() in ("*", "/"):
            node = (take(), node, factor())
        return node

    def expr() -> Any:
        node = term()
        while peek() in ("+", "-"):
            node = (take(), node, term())
        return node

    tree = expr()
    if pos != len(tokens):
        raise ParseError("trailing tokens")
    return tree, literals


def evaluate_ast(node: Any) -> Fraction:
    if isinstance(node, int):
        return Fraction(node)
    op, left, right = node
    a, b = evaluate_ast(left), evaluate_ast(right)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        raise ZeroDivisionError
    return a / b


def canonical_ast(node: Any) -> str:
    """Canonical text of an AST: fully parenthesized, operands of + and × sorted."""
    if isinstance(node, int):
        return str(node)
    op, left, right = node
    a, b = canonical_ast(left), canonical_ast(right)
    if op in "+*" and b < a:
        a, b = b, a
    return f"({a}{op}{b})"


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def print_ast(node: Any) -> str:
    """Minimal-parenthesis text of an AST that parses back to the same tree."""
    if isinstance(node, int):
        return str(node)
    op, left, right = node
    a, b = print_ast(left), print_ast(right)
    if not isinstance(left, int) and _PRECEDENCE[left[0]] < _PRECEDENCE[op]:
        a = f"({a})"
    if not isinstance(right, int) and (
        _PRECEDENCE[right[0]] < _PRECEDENCE[op]
        or (_PRECEDENCE[right[0]] == _PRECEDENCE[op] and op in "-/")
        or (_PRECEDENCE[right[0]] == _PRECEDENCE[op])  # keep right-nested trees explicit
    ):
        b = f"({b})"
    return f"{a}{op}{b}"


def _all_trees(indices: tuple[int, ...], numbers: tuple[int, ...], memo: dict) -> list[tuple]:
    """Every (value, AST) over exactly the numbers at ``indices`` (each used once)."""
    if indices in memo:
        return memo[indices]
    if len(indices) == 1:
        out = [(Fraction(numbers[indices[0]]), numbers[indices[0]])]
    else:
        out = []
        first, rest = indices[0], indices[1:]
        # split into (left, right) ordered pairs of non-empty disjoint subsets
        for r in range(0, len(rest) + 1):
            for chosen in itertools.combinations(rest, r):
                left = (first, *chosen)
                right = tuple(i for i in rest if i not in chosen)
                if not right:
                    continue
                for sides in ((left, right), (right, left)):
                    for va, ta in _all_trees(sides[0], numbers, memo):
                        for vb, tb in _all_trees(sides[1], numbers, memo):
                            out.append((va + vb, ("+", ta, tb)))
                            out.append((va - vb, ("-", ta, tb)))
                            out.append((va * vb, ("*", ta, tb)))
                            if vb != 0:
                                out.append((va / vb, ("/", ta, tb)))
    memo[indices] = out
    return out


class Countdown(RLVRTaskDef):
    name, tag = "countdown", "C"
    size_range = (2, 10)  # numbers in the prompt (at least two, to form an expression)

    def prompt_length_bound(self) -> int:
        return 1 + 3 * self.size - 1 + 1 + 2

    @property
    def max_response_tokens(self) -> int:
        # n literals of <= 2 digits, n-1 operators, up to 2(n-1) parentheses, EOS
        return 2 * self.size + (self.size - 1) + 2 * (self.size - 1) + 1

    def sample(self, rng: np.random.Generator) -> Instance:
        while True:
            numbers = tuple(int(v) for v in rng.integers(1, 21, size=self.size))
            k = int(rng.integers(2, self.size + 1))
            subset = tuple(sorted(rng.choice(self.size, size=k, replace=False).tolist()))
            value = self._random_tree_value(subset, numbers, rng)
            if value is not None and value.denominator == 1 and 1 <= value <= 99:
                target = int(value)
                prompt = f"C{','.join(map(str, numbers))};{target}"
                return Instance(prompt, (numbers, target))

    @staticmethod
    def _random_tree_value(subset, numbers, rng) -> Fraction | None:  # noqa: ANN001
        nodes = [Fraction(numbers[i]) for i in rng.permutation(subset)]
        while len(nodes) > 1:
            i, j = sorted(rng.choice(len(nodes), size=2, replace=False).tolist())
            a, b = nodes[i], nodes[j]
            op = "+-*/"[int(rng.integers(4))]
            if op == "/" and b == 0:
                return None
            value = a + b if op == "+" else a - b if op == "-" else a * b if op == "*" else a / b
            nodes = [n for t, n in enumerate(nodes) if t not in (i, j)] + [value]
        return nodes[0]

    def verify(self, instance: Instance, response: str) -> bool:
        numbers, target = instance.data
        try:
            tree, literals = parse_expression(response)
            remaining = list(numbers)
            for lit in literals:  # the literals must be a sub-multiset of the numbers
                remaining.remove(lit)
            return evaluate_ast(tree) == target
        except (ParseError, ValueError, ZeroDivisionError):
            return False

    def _solution_trees(self, instance: Instance) -> dict[str, Any]:
        # the exhaustive search is the slow part of SFT data: memoize per prompt (bounded)
        memo_all = self.__dict__.setdefault("_solved", {})
        if instance.prompt in memo_all:
            return memo_all[instance.prompt]
        if len(memo_all) > 20_000:
            memo_all.clear()
        memo_all[instance.prompt] = found = self._search(instance)
        return found

    def _search(self, instance: Instance) -> dict[str, Any]:
        numbers, target = instance.data
        memo: dict = {}
        found: dict[str, Any] = {}
        for r in range(1, len(numbers) + 1):
            for subset in itertools.combinations(range(len(numbers)), r):
                for value, tree in _all_trees(subset, numbers, memo):
                    if value == target:
                        found.setdefault(canonical_ast(tree), tree)
        return found

    def solutions(self, instance: Instance) -> list[str]:
        return sorted(self._solution_trees(instance))

    def render(self, instance: Instance, rng: np.random.Generator) -> str:
        trees = self._solution_trees(instance)
        keys = sorted(trees)
        tree = trees[keys[int(rng.integers(len(keys)))]]
        return print_ast(self._shuffle(tree, rng))

    def _shuffle(self, node: Any, rng: np.random.Generator) -> Any:
        if isinstance(node, int):
            return node
        op, a, b = node
        a, b = self._shuffle(a, rng), self._shuffle(b, rng)
        if op in "+*" and rng.random() < 0.5:
            a, b = b, a
        return (op, a, b)

    def canonical(self, instance: Instance, response: str) -> str:
        return canonical_ast(parse_expression(response)[0])


# ----------------------------------------------------------------------------- subset-sum

class SubsetSum(RLVRTaskDef):
    name, tag = "subset_sum", "S"
    size_range = (1, 10)  # single-digit indices

    def prompt_length_bound(self) -> int:
        return 1 + 3 * self.size - 1 + 1 + 3

    @property
    def max_response_tokens(self) -> int:
        return 2 * self.size  # n single-digit indices, n-1 commas, EOS

    def sample(self, rng: np.random.Generator) -> Instance:
        if not 1 <= self.size <= 10:
            raise ValueError(f"subset-sum needs 1 <= n <= 10 (single-digit indices), got {self.size}")
        values = tuple(int(v) for v in rng.integers(1, 31, size=self.size))
        k = int(rng.integers(1, self.size + 1))
        chosen = rng.choice(self.size, size=k, replace=False)
        target = int(sum(values[i] for i in chosen))
        return Instance(f"S{','.join(map(str, values))};{target}", (values, target))

    def verify(self, instance: Instance, response: str) -> bool:
        values, target = instance.data
        parts = response.split(",")
        if not response or any(not p.isdigit() or (len(p) > 1 and p[0] == "0") for p in parts):
            return False
        indices = [int(p) for p in parts]
        if any(i >= len(values) for i in indices):
            return False
        if any(b <= a for a, b in zip(indices, indices[1:])):  # strictly increasing => distinct
            return False
        return sum(values[i] for i in indices) == target

    def solutions(self, instance: Instance) -> list[str]:
        values, target = instance.data
        out = []
        for r in range(1, len(values) + 1):
            for subset in itertools.combinations(range(len(values)), r):
                if sum(values[i] for i in subset) == target:
                    out.append(",".join(map(str, subset)))
        return sorted(out)

    def render(self, instance: Instance, rng: np.random.Generator) -> str:
        options = self.solutions(instance)
        return options[int(rng.integers(len(options)))]


# ----------------------------------------------------------------------------- mod-linear

def primes_up_to(limit: int) -> list[int]:
    return [p for p in range(2, limit + 1) if all(p % d for d in range(2, int(p ** 0.5) + 1))]


class ModLinear(RLVRTaskDef):
    """``size`` is p_max; primes from 5 up to it."""

    name, tag = "mod_linear", "M"
    size_range = (5, 10**4)  # p_max: the smallest prime used is 5

    def prompt_length_bound(self) -> int:
        return 4 * len(str(self.size)) + 5

    @property
    def max_response_tokens(self) -> int:
        return len(str(self.size)) + 1

    def sample(self, rng: np.random.Generator) -> Instance:
        primes = [p for p in primes_up_to(self.size) if p >= 5]
        if not primes:
            raise ValueError(f"mod-linear needs p_max >= 5, got {self.size}")
        p = primes[int(rng.integers(len(primes)))]
        a, b, c = int(rng.integers(1, p)), int(rng.integers(0, p)), int(rng.integers(0, p))
        return Instance(f"M{a}x+{b}={c};{p}", (a, b, c, p))

    def verify(self, instance: Instance, response: str) -> bool:
        a, b, c, p = instance.data
        if not response.isdigit() or (len(response) > 1 and response[0] == "0"):
            return False
        x = int(response)
        return x < p and (a * x + b - c) % p == 0

    def solutions(self, instance: Instance) -> list[str]:
        a, b, c, p = instance.data
        return [str(((c - b) * pow(a, -1, p)) % p)]  # x = (c - b) a^{-1} mod p

    def render(self, instance: Instance, rng: np.random.Generator) -> str:
        return self.solutions(instance)[0]


# ----------------------------------------------------------------------------- add-scratch

class AddScratch(RLVRTaskDef):
    """``size`` is the number of digits of both addends (leading digit non-zero)."""

    name, tag = "add_scratch", "A"
    size_range = (1, 30)

    def prompt_length_bound(self) -> int:
        return 2 * self.size + 2

    @property
    def max_response_tokens(self) -> int:
        return 3 * self.size - 1 + 1 + (self.size + 1) + 1

    def sample(self, rng: np.random.Generator) -> Instance:
        low, high = 10 ** (self.size - 1), 10 ** self.size
        a, b = int(rng.integers(low, high)), int(rng.integers(low, high))
        return Instance(f"A{a}+{b}", (a, b))

    def verify(self, instance: Instance, response: str) -> bool:
        a, b = instance.data
        answer = response.rsplit("=", 1)[-1] if "=" in response else ""
        return answer.isdigit() and (len(answer) == 1 or answer[0] != "0") and int(answer) == a + b

    def scratchpad(self, a: int, b: int) -> str:
        digits_a, digits_b = str(a)[::-1], str(b)[::-1]
        carry, pairs = 0, []
        for i in range(self.size):
            total = int(digits_a[i]) + int(digits_b[i]) + carry
            carry = total // 10
            pairs.append(f"{total % 10}{carry}")
        return ",".join(pairs)

    def solutions(self, instance: Instance) -> list[str]:
        a, b = instance.data
        return [f"{self.scratchpad(a, b)}={a + b}"]  # the answer is unique; so is this scratchpad

    def render(self, instance: Instance, rng: np.random.Generator) -> str:
        return self.solutions(instance)[0]

    def canonical(self, instance: Instance, response: str) -> str:
        return response.rsplit("=", 1)[-1]


TASKS: dict[str, type[RLVRTaskDef]] = {
    t.name: t for t in (Countdown, SubsetSum, ModLinear, AddScratch)
}


# The size each task gets when none is given (the smoke tier's): every task is valid with it.
DEFAULT_SIZES = {"countdown": 3, "subset_sum": 6, "mod_linear": 13, "add_scratch": 4}


def make_task_def(name: str, size: int | None = None) -> RLVRTaskDef:
    if name not in TASKS:
        raise ValueError(f"unknown rlvr task {name!r}; choose one of {sorted(TASKS)}")
    return TASKS[name](DEFAULT_SIZES[name] if size is None else size)
