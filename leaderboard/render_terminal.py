"""Terminal renderer: tables of a BenchmarkReport and the end-of-run summary.

On a terminal the tables are rich tables (colour, wrapped to the window). Anywhere else
(a pipe, a file, a test) they are plain text: a title line, then one tab-separated line per
row with every cell in full, so ``papergym list | grep`` and ``cut -f`` see whole values.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from papergym.safe import term_text

from .entrants import budget_text, budgets, plain_label, submission_hashes
from .fairness import claim_fairness, method_note
from .numbers import fmt, fmt_ci
from .report import BenchmarkReport, fmt_check, fmt_design, fmt_tally, fmt_units
from .summary import BenchmarkSummary, rank_groups

VERDICT_STYLE = {"holds": "green", "fails": "red", "inconclusive": "yellow",
                 "underpowered": "magenta", "not evaluable": "blue"}


def is_terminal(stream: TextIO | None = None) -> bool:
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[object]],
                styles: Sequence[str | None] | None = None, stream: TextIO | None = None) -> None:
    """One table: rich on a terminal, plain tab-separated text otherwise. ``styles`` gives an
    optional rich style per row (ignored in plain text)."""
    stream = stream or sys.stdout
    # spec and plug-in strings reach the terminal: no escapes or control characters, and in
    # rich only Text objects (a "[/]" in a title or cell is text, not markup)
    title, columns = term_text(title), [term_text(c) for c in columns]
    cells = [["" if c is None else term_text(c) for c in row] for row in rows]
    if not is_terminal(stream):
        lines = [title, "\t".join(columns), *("\t".join(c.replace("\t", " ") for c in row)
                                               for row in cells)]
        stream.write("\n".join(lines) + "\n\n")
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title), title_justify="left")
    for col in columns:
        table.add_column(Text(col), overflow="fold")
    for i, row in enumerate(cells):
        table.add_row(*(Text(c) for c in row), style=styles[i] if styles else None)
    Console(file=stream).print(table)


def _say(text: str, stream: TextIO | None = None) -> None:
    (stream or sys.stdout).write(term_text(text) + "\n")


def print_leaderboard(report: BenchmarkReport, stream: TextIO | None = None) -> None:
    spec = report.spec
    _say(f"{spec.name} — {spec.paper.title} (tier {report.tier})", stream)
    for sec in report.sections:
        metric = sec.section.metric
        arrow = "↑" if metric.direction == "max" else "↓"
        groups = rank_groups(sec)
        submissions = submission_hashes(sec.rows)
        columns = ["#", "group", "agent", "role", f"IQM [95% CI] of {metric.name}", "ok/failed"]
        if metric.normalize:
            columns.append("normalized")
        columns += [f"P(>{b})" for b in sec.baselines]
        rows, styles = [], []
        for s in sec.scores:
            cells = [s.rank or "–", groups.get(s.agent, "–"),
                     plain_label(s.agent, submissions, bool(s.tuned)),
                     s.role, fmt_ci(s.iqm, s.ci), f"{s.n_ok}/{s.n_failed}"]
            if metric.normalize:
                cells.append(fmt_ci(s.normalized[0], s.normalized[1:]) if s.normalized else "n/a")
            for b in sec.baselines:
                poi = s.poi.get(b)
                cells.append(fmt_ci(poi[0], poi[1:]) if poi else "–")
            rows.append(cells)
            styles.append("dim" if s.role == "reference" else None)
        print_table(f"{sec.section.name}: {sec.section.problem} — {metric.name} {arrow}",
                    columns, rows, styles, stream)
        _say(fmt_check(sec.check).replace("**", "").replace("`", ""), stream)
        for agent, meters in budgets(sec.rows).items():
            _say(f"budget of {plain_label(agent, submissions)}: {budget_text(meters)}", stream)
        if method_note(sec.check):
            _say(method_note(sec.check).replace("`", ""), stream)


def print_claims(report: BenchmarkReport, stream: TextIO | None = None) -> None:
    columns = ["id", "role", "claim", "verdict", "effect [CI]", "units", "design", "detail"]
    rows, styles = [], []
    for v in report.verdicts:
        rows.append([v.id, v.role, v.statement, v.verdict,
                     fmt_ci(v.effect, v.ci) if v.effect is not None else "–", fmt_units(v),
                     fmt_design(v),
                     "; ".join(filter(None, (claim_fairness(v), v.detail)))])
        styles.append(VERDICT_STYLE.get(v.verdict))
    print_table(f"claims of {report.spec.paper.key} at tier {report.tier}", columns, rows, styles,
                stream)
    _say(fmt_tally(report.verdicts), stream)


def summary_lines(summaries: Sequence[BenchmarkSummary], reports: dict[str, str],
                  index: str | None) -> list[str]:
    """The one-screen end of a run: per benchmark its trials, each section's leader with IQM
    and interval (and who it is tied with), the claim verdict counts, and where the pages are."""
    lines = []
    for b in summaries:
        failed = f", {b.failed_trials} failed" if b.failed_trials else ""
        lines.append(f"{b.benchmark} [{b.tier}]: {b.stored_trials}/{b.expected_trials} trials"
                     f"{failed}")
        for s in b.sections:
            arrow = "↑" if s.direction == "max" else "↓"
            if s.leader is None:
                lines.append(f"  {s.section}: no scored agent")
                continue
            tied = f" (tied with {', '.join(s.tied)})" if s.tied else ""
            lines.append(f"  {s.section}: {s.leader} {s.metric}{arrow} {fmt_ci(s.iqm, s.ci)}{tied}")
        counts = ", ".join(f"{n} {k}" for k, n in b.claims.items()) or "none"
        lines.append(f"  {b.claims_counted}: {counts}")
        if b.tally_families:
            families = ", ".join(f"{n} {k}" for k, n in b.tally_families.items() if n)
            lines.append(f"  by family: {families or 'none'}; holds after Benjamini-Hochberg: "
                         f"{b.bh_holds}")
        if b.benchmark in reports:
            lines.append(f"  report: {reports[b.benchmark]}")
    if index:
        lines.append(f"all reports: {index}")
    return lines


def print_summary(summaries: Sequence[BenchmarkSummary], reports: dict[str, str],
                  index: str | None, stream: TextIO | None = None) -> None:
    for line in summary_lines(summaries, reports, index):
        _say(line, stream)


__all__ = ["fmt", "fmt_ci", "is_terminal", "print_claims", "print_leaderboard", "print_summary",
           "print_table", "summary_lines"]
