"""The best evidence a claim can reach with n units (the power check of docs/contract.md),
and the power at a smallest effect of interest (``power_at``, ``n_for_power``).

Pure arithmetic (no numpy, no scipy), so that loading a spec stays light. Every verdict of
papergym.leaderboard.claims is a one-sided level-``alpha`` decision; the best case is the data
that favour the claim most: every paired difference on the claimed side, every unit a hit.

- ``wilcoxon`` (exact signed rank) and ``sign`` (exact binomial / McNemar): the smallest
  one-sided p is 2^-n; Holm over m baselines multiplies the smallest by m. The Walsh-average
  confidence bound of the Hodges–Lehmann shift exists only when 2^-n <= alpha.
- ``sign`` also needs its paired-proportion bound (Agresti–Min) beyond the margin.
- ``trend``: the sign test over seeds, 2^-n, and the same proportion bound beyond 0.
- ``rate``: the Clopper-Pearson bound at k = n (``at_least``: alpha^(1/n)) or k = 0
  (``at_most``); over clustered items (seeds) the sign-flip test of the per-seed shares, 2^-n.
- ``threshold``: the Student t (mean) or Yuen (iqm) bound needs 2 values left after trimming;
  the median's order-statistic bound needs 2^-n <= alpha; max and min have no interval.
- Clustered items (papergym.leaderboard.clustered): n counts seeds, and the sign-flip test of
  the seed means has the signed-rank test's best case, 2^-n.
- ``correlation`` (a Spearman rho pooled over runs, bootstrapped over runs): the percentile
  bootstrap has no exact best case (a bootstrap over two runs that agree gives a bound of -1),
  so the kind is held to the run-level test it stands in for: the smallest one-sided p of an
  exact test that flips each run's association, 2^-n over n runs (5 runs at alpha 0.05, as
  ``trend``), and at least the claim's ``min_runs``.
- ``rate_trend``: the best split of n units is half at the first level of the axis with no
  hit and half at the last with every hit: the Cochran-Armitage p is then 1 - Phi(sqrt(n)),
  and the Newcombe lower bound of the difference of the two shares must exceed 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist


def z_one_sided(alpha: float) -> float:
    return NormalDist().inv_cdf(1.0 - alpha)


def wilson(hits: int, n: int, alpha: float) -> tuple[float, float]:
    """Wilson score bounds of a proportion, each one-sided at level ``alpha``."""
    if n == 0:
        return 0.0, 1.0
    z = z_one_sided(alpha)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe(hits_a: int, n_a: int, hits_b: int, n_b: int, alpha: float
             ) -> tuple[float, float, float]:
    """Difference of two independent shares, a minus b, with Newcombe's (1998, method 10)
    hybrid Wilson bounds, each one-sided at level ``alpha``."""
    pa, pb = hits_a / n_a, hits_b / n_b
    la, ua = wilson(hits_a, n_a, alpha)
    lb, ub = wilson(hits_b, n_b, alpha)
    diff = pa - pb
    return (diff, diff - math.sqrt((pa - la) ** 2 + (ub - pb) ** 2),
            diff + math.sqrt((ua - pa) ** 2 + (pb - lb) ** 2))


def agresti_min_centre(wins: int, losses: int, n: int) -> tuple[float, float]:
    """Agresti–Min (2005) adjusted paired difference and its standard error: half a count
    added to each cell of the 2x2 table."""
    pb, pc = (wins + 0.5) / (n + 2), (losses + 0.5) / (n + 2)
    return pb - pc, math.sqrt(max(((pb + pc) - (pb - pc) ** 2) / (n + 2), 0.0))


def agresti_min(wins: int, losses: int, n: int, alpha: float) -> tuple[float, float, float]:
    """Paired proportion difference (wins - losses) / n and its Agresti–Min bounds, each
    one-sided at level ``alpha``."""
    if n == 0:
        return 0.0, -1.0, 1.0
    centre, se = agresti_min_centre(wins, losses, n)
    half = z_one_sided(alpha) * se
    return (wins - losses) / n, max(-1.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Power:
    """The best case of one claim at ``n`` units."""

    n: int
    reachable: bool
    best: float | None  # best p (tests) or best bound (rate); None where n cannot matter
    what: str  # how ``best`` was computed, for messages

    def describe(self) -> str:
        return f"n={self.n}: {self.what}"


def best_case(kind: str, n: int, *, test: str = "wilcoxon", baselines: int = 1,
              alpha: float = 0.05, expect: str = "better", margin: float = 0.0,
              at_least: float | None = None, at_most: float | None = None,
              min_n: int | None = None, stat: str = "iqm", clustered: bool = False) -> Power:
    """Whether ``n`` units can possibly give ``holds`` (see the module docstring). With
    ``clustered`` the units are seeds: a rate is then the sign-flip test of the per-seed
    shares (2^-n, as a compare)."""
    if n <= 0:
        return Power(n, False, None, "no units")
    if kind == "rate" and clustered:
        kind = "compare"
    if kind == "correlation":
        best_p = 2.0 ** -n
        enough = min_n is None or n >= min_n
        floor = f" and the claim's min_runs {min_n}" if min_n is not None else ""
        return Power(n, best_p < alpha and enough, best_p,
                     f"{n} runs: best run-level one-sided p {best_p:.4g} = 2^-{n} vs alpha "
                     f"{alpha:g}{floor}")
    if kind == "threshold":
        if stat in ("max", "min"):
            return Power(n, True, None, f"threshold on the {stat}: no interval")
        if stat == "median":
            best_p = 2.0 ** -n
            return Power(n, best_p <= alpha, best_p, f"median order-statistic bound: best "
                         f"one-sided level 2^-{n} = {best_p:.4g} vs alpha {alpha:g}")
        left = n - 2 * math.floor(0.25 * n) if stat == "iqm" else n
        return Power(n, left >= 2, None, f"{'Yuen' if stat == 'iqm' else 'Student'} t bound "
                     f"needs 2 values after trimming ({left} of {n})")
    if kind == "rate":  # Clopper-Pearson: at n/n the lower bound is alpha^(1/n)
        if at_least is not None:
            lo = alpha ** (1.0 / n)
            return Power(n, lo >= at_least, lo, f"best Clopper-Pearson lower bound {lo:.4f} "
                         f"(at {n}/{n}) vs required {at_least:g}")
        hi = 1.0 - alpha ** (1.0 / n)
        return Power(n, hi <= at_most, hi, f"best Clopper-Pearson upper bound {hi:.4f} "
                     f"(at 0/{n}) vs allowed {at_most:g}")
    if kind == "rate_trend":
        half = n // 2
        if half < 1:
            return Power(n, False, None, "rate_trend: fewer than 2 units")
        best_p = 1.0 - NormalDist().cdf(math.sqrt(2 * half))
        _, lo, _ = newcombe(half, half, 0, half, alpha)
        return Power(n, best_p < alpha and lo > 0, best_p,
                     f"best Cochran-Armitage p {best_p:.4g} vs alpha {alpha:g} and best Newcombe "
                     f"lower bound {lo:.3f} vs 0 (n/2 units at each end of the axis)")
    m = 1 if kind == "trend" else max(1, baselines)
    best_p = min(1.0, m * 2.0 ** -n)
    ok = best_p < alpha and 2.0 ** -n <= alpha
    what = (f"best one-sided p {best_p:.4g} = {m} x 2^-{n} (Holm over {m})" if m > 1
            else f"best one-sided p {best_p:.4g} = 2^-{n}") + f" vs alpha {alpha:g}"
    if kind == "trend" or test == "sign":
        target = 0.0 if kind == "trend" else (margin if expect == "better" else -margin)
        _, lo, _ = agresti_min(n, 0, n, alpha)
        ok = ok and lo > target
        what += f"; best paired-proportion lower bound {lo:.3f} vs {target:g}"
    return Power(n, ok, best_p, what)


def needed_n(kind: str, **kw: object) -> int | None:
    """The smallest n at which ``best_case`` is reachable (None if no n up to 2^24 is)."""
    hi = 1
    while not best_case(kind, hi, **kw).reachable:  # type: ignore[arg-type]
        hi *= 2
        if hi > 2 ** 24:
            return None
    lo = hi // 2  # unreachable (or 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if best_case(kind, mid, **kw).reachable:  # type: ignore[arg-type]
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------------------------------------
# Power at the smallest effect of interest (sesoi)


def power_at(sesoi: float, sd: float, n: int, alpha: float = 0.05, baselines: int = 1,
             efficiency: float = 1.0, floor_ok: bool = True) -> float:
    """Power of the one-sided level-``alpha`` test of a mean-type estimand to reach ``holds``
    when the true effect is ``sesoi``: the noncentral t with n - 1 degrees of freedom and
    noncentrality sesoi * sqrt(efficiency * n) / sd (the one-sample t, which the sign-flip test
    over seed means approaches; ``efficiency`` 3/pi for the signed-rank test, its asymptotic
    relative efficiency at the normal). Over ``baselines`` the level is alpha / baselines (the
    first Holm step: every baseline must be beaten). 0 when the test's best case cannot reach
    alpha (``floor_ok`` False) or n < 2; 1 when sd is 0 and the sesoi positive."""
    from scipy import stats

    if n < 2 or not floor_ok:
        return 0.0
    if sd <= 0:
        return 1.0
    level = alpha / max(1, baselines)
    df = n - 1
    critical = stats.t.ppf(1 - level, df)
    return float(stats.nct.sf(critical, df, sesoi * math.sqrt(efficiency * n) / sd))


def n_for_power(sesoi: float, sd: float, target: float = 0.8, alpha: float = 0.05,
                baselines: int = 1, efficiency: float = 1.0, limit: int = 10_000) -> int | None:
    """The smallest n at which :func:`power_at` reaches ``target`` and the sign-flip best case
    (baselines x 2^-n) is below alpha; None beyond ``limit``."""
    n = 2
    while n <= limit:
        reachable = max(1, baselines) * 2.0 ** -n < alpha
        if reachable and power_at(sesoi, sd, n, alpha, baselines, efficiency) >= target:
            return n
        n += 1 if n < 64 else n // 8
    return None
