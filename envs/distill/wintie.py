"""Win-and-Tie rates and the critical tolerance (Hauzenberger et al. 2026, App. A, Eqs. 15-17).

For eligible tasks j = 1..M with student score S_j and teacher score T_j (higher better):
- r_j = S_j / T_j, the teacher-recovery rate;
- 1_α(j) = 1[S_j >= (1 − α) T_j];  C_α = (1/M) Σ_j 1_α(j)  (lossless: C_0 >= 1/2);
- α* = inf{α >= 0 : C_α >= 1/2}; with shortfalls s_j = max(0, 1 − S_j/T_j) it is the ⌈M/2⌉-th
  smallest s_j [derived here];
- α_all = max_j s_j (every task within α) [ours]; C_α^abs = (1/M) Σ_j 1[S_j >= T_j − α] [ours].

Scores of exact-match tasks are :class:`fractions.Fraction` of item counts, so a tie is exact
(``S = (5/6) T`` is within α = 1/6); float scores (the ``hmm`` task) compare as floats.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from numbers import Real

ALPHA_GRID = (0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4)


def _check(S: Sequence[Real], T: Sequence[Real]) -> None:
    if len(S) != len(T) or not S:
        raise ValueError(f"need equally many (>= 1) student and teacher scores, got {len(S)} and {len(T)}")
    if any(t <= 0 for t in T) or any(s < 0 for s in S):
        raise ValueError("teacher scores must be > 0 and student scores >= 0")


def _alpha(alpha: Real | str) -> Real:
    return Fraction(alpha) if isinstance(alpha, str) else alpha


def shortfalls(S: Sequence[Real], T: Sequence[Real]) -> list[Real]:
    _check(S, T)
    return [max(0, 1 - s / t) for s, t in zip(S, T)]


def win_tie(S: Sequence[Real], T: Sequence[Real], alpha: Real | str) -> Fraction:
    """C_α: the share of tasks with S_j >= (1 − α) T_j."""
    _check(S, T)
    a = _alpha(alpha)
    return Fraction(sum(1 for s, t in zip(S, T) if s >= (1 - a) * t), len(S))


def win_tie_abs(S: Sequence[Real], T: Sequence[Real], alpha: Real | str) -> Fraction:
    """C_α^abs: the share of tasks with S_j >= T_j − α (α in score points)."""
    _check(S, T)
    a = _alpha(alpha)
    return Fraction(sum(1 for s, t in zip(S, T) if s >= t - a), len(S))


def critical_tolerance(S: Sequence[Real], T: Sequence[Real]) -> Real:
    """α*: the ⌈M/2⌉-th smallest shortfall (the smallest α with C_α >= 1/2)."""
    gaps = sorted(shortfalls(S, T))
    return gaps[math.ceil(len(gaps) / 2) - 1]


def full_tolerance(S: Sequence[Real], T: Sequence[Real]) -> Real:
    """α_all = max_j s_j: the smallest α with C_α = 1."""
    return max(shortfalls(S, T))


def curve_area(S: Sequence[Real], T: Sequence[Real], grid: Sequence[float] = ALPHA_GRID) -> float:
    """The mean of C_α over the α grid (the area under the Win-and-Tie curve, grid-weighted)."""
    return float(sum(win_tie(S, T, Fraction(a).limit_denominator(1000)) for a in grid) / len(grid))
