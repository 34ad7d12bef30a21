"""Exact power of rlvr_vcpo's per-seed sign tests (B3: collapse flags, B5: censored time to
target) at their smallest effect of interest, by enumeration of every outcome over n seeds.

Each seed pairs VCPO with a baseline and is a win (only the baseline collapses), a loss (only
VCPO collapses) or a tie. The engine's verdict (papergym.leaderboard.claims, ``test: sign``)
holds when the exact one-sided binomial p of wins among the untied seeds is below alpha and
the Agresti-Min lower bound of (wins - losses) / n is above 0; this script applies that same
rule to every (wins, losses) outcome and sums the multinomial probabilities of those that
hold. The engine's own power figure is a noncentral-t approximation at the observed spread.

    .venv/bin/python benchmarks/perf/rlvr_vcpo_power.py            # sesoi 0.5, n = 5..16
"""

from __future__ import annotations

import sys

from scipy import stats

from papergym.leaderboard.power import agresti_min


def holds(wins: int, losses: int, n: int, alpha: float = 0.05) -> bool:
    """The engine's sign-test decision against margin 0 for one outcome."""
    untied = wins + losses
    if untied == 0:
        return False
    p = stats.binomtest(wins, untied, 0.5, alternative="greater").pvalue
    return p < alpha and agresti_min(wins, losses, n, alpha)[1] > 0


def exact_power(p_win: float, p_loss: float, n: int, alpha: float = 0.05) -> float:
    """P(holds) when each of n seeds is a win w.p. ``p_win``, a loss w.p. ``p_loss``."""
    total = 0.0
    for wins in range(n + 1):
        for losses in range(n - wins + 1):
            if holds(wins, losses, n, alpha):
                total += stats.multinomial.pmf([wins, losses, n - wins - losses], n,
                                               [p_win, p_loss, 1 - p_win - p_loss])
    return float(total)


def scenarios(sesoi: float) -> dict[str, tuple[float, float]]:
    """Win / loss probabilities with a difference in collapse rates of ``sesoi``: VCPO never
    collapses (the paper's picture), or both collapse independently, VCPO at 0.1."""
    p_base, p_method = sesoi + 0.1, 0.1
    return {f"VCPO 0, baseline {sesoi:g}": (sesoi, 0.0),
            f"VCPO {p_method:g}, baseline {p_base:g} (independent)":
                (p_base * (1 - p_method), p_method * (1 - p_base))}


def main(sesoi: float = 0.5) -> None:
    ns = range(5, 17)
    print(f"exact power of the sign test at sesoi {sesoi:g} (alpha 0.05, one-sided)")
    print("seeds: " + " ".join(f"{n:>5d}" for n in ns))
    for name, (p_win, p_loss) in scenarios(sesoi).items():
        print(f"{name}: " + " ".join(f"{exact_power(p_win, p_loss, n):5.2f}" for n in ns))


if __name__ == "__main__":
    main(*(float(a) for a in sys.argv[1:]))
