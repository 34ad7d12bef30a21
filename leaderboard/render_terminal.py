"""Terminal renderer: rich tables of a BenchmarkReport."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .report import BenchmarkReport, fmt_ci

VERDICT_STYLE = {"holds": "green", "fails": "red", "inconclusive": "yellow"}


def print_leaderboard(report: BenchmarkReport, console: Console | None = None) -> None:
    console = console or Console()
    spec = report.spec
    console.print(f"[bold]{spec.name}[/] — {spec.paper.title} [dim](tier {report.tier})[/]")
    for sec in report.sections:
        metric = sec.section.metric
        arrow = "↑" if metric.direction == "max" else "↓"
        table = Table(title=f"{sec.section.name}: {sec.section.problem} — {metric.name} {arrow}",
                      title_justify="left")
        for col in ("#", "agent", "role", f"IQM [95% CI] of {metric.name}", "ok/failed"):
            table.add_column(col, overflow="fold")
        if metric.normalize:
            table.add_column("normalized")
        for b in sec.baselines:
            table.add_column(f"P(>{b})", overflow="fold")
        for s in sec.scores:
            cells = [str(s.rank or "–"), s.agent + (" (tuned)" if s.tuned else ""), s.role,
                     fmt_ci(s.iqm, s.ci), f"{s.n_ok}/{s.n_failed}"]
            if metric.normalize:
                cells.append(fmt_ci(s.normalized[0], s.normalized[1:]) if s.normalized else "n/a")
            for b in sec.baselines:
                poi = s.poi.get(b)
                cells.append(fmt_ci(poi[0], poi[1:]) if poi else "–")
            table.add_row(*cells, style="dim" if s.role == "reference" else None)
        console.print(table)


def print_claims(report: BenchmarkReport, console: Console | None = None) -> None:
    console = console or Console()
    table = Table(title=f"claims of {report.spec.paper.key} at tier {report.tier}",
                  title_justify="left")
    for col in ("id", "claim", "verdict", "effect [95% CI]", "detail"):
        table.add_column(col, overflow="fold")
    for v in report.verdicts:
        style = VERDICT_STYLE.get(v.verdict, "dim")
        table.add_row(v.id, v.statement, f"[{style}]{v.verdict}[/]",
                      fmt_ci(v.effect, v.ci) if v.effect is not None else "–", v.detail)
    console.print(table)
