"""The one number formatter every renderer uses (terminal, Markdown, HTML, summaries).

Three significant digits, positional notation, thousands separators: 37,850 (not 3.785e+04),
0.953, 12.3. Magnitudes of 1,000 and more keep every integer digit, because dropping them
(37,900) would show a count or a cost that was never measured; below 1e-4 scientific notation
is the readable form (1.23e-05).
"""

from __future__ import annotations

import math

SIGNIFICANT = 3


def fmt(x: float | int | None, digits: int = SIGNIFICANT) -> str:
    """``x`` for a reader: ``n/a`` for missing or NaN, ``inf``/``-inf``, else ``digits``
    significant digits."""
    if x is None or isinstance(x, bool):
        return "n/a" if x is None else str(x)
    try:
        x = float(x)
    except (TypeError, ValueError):
        return str(x)
    if math.isinf(x):  # an unbounded side of a one-sided interval
        return "-inf" if x < 0 else "inf"
    if math.isnan(x):
        return "n/a"
    if x == 0:
        return "0"
    rounded = float(f"{x:.{digits}g}")  # 999.7 rounds to 1,000 before choosing the form
    if abs(rounded) >= 1000:
        return f"{x:,.0f}"
    if abs(rounded) < 1e-4:
        return f"{x:.{digits - 1}e}"
    return f"{rounded:.{digits}g}"


def fmt_ci(point: float | None, ci: tuple[float, float] | list[float] | None) -> str:
    """``point [low, high]`` with the same formatter for all three numbers."""
    if ci is None or len(ci) < 2:
        return fmt(point)
    return f"{fmt(point)} [{fmt(ci[0])}, {fmt(ci[1])}]"
