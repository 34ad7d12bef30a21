"""Static HTML renderer: one self-contained page per benchmark, with plots.

Every user-supplied string (agent names, labels, claim texts, errors) goes through
``html.escape``; plots are inline SVG made by matplotlib, their text escaped by matplotlib's
SVG writer. Tables sort on a header click (a few lines of inline JavaScript, no network).
"""

from __future__ import annotations

import html
import io
import json
from pathlib import Path

import numpy as np

from .render_markdown import render_markdown
from .report import BenchmarkReport, SectionReport, fmt, fmt_ci

STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:72rem;color:#222}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3;cursor:pointer} tr.reference{color:#777}
.holds{color:#17803d;font-weight:bold}.fails{color:#b3261e;font-weight:bold}
.inconclusive{color:#a86b00;font-weight:bold} figure{margin:1rem 0} code{background:#f6f6f6}
"""
SORT_SCRIPT = """
document.querySelectorAll('table.sortable th').forEach((th, col) => {
  th.addEventListener('click', () => {
    const table = th.closest('table'), body = table.tBodies[0];
    const asc = th.dataset.order !== 'asc'; th.dataset.order = asc ? 'asc' : 'desc';
    const key = r => { const t = r.cells[col].dataset.sort ?? r.cells[col].textContent;
                       const n = parseFloat(t); return isNaN(n) ? t : n; };
    [...body.rows].sort((a, b) => { const x = key(a), y = key(b);
      return (x > y ? 1 : x < y ? -1 : 0) * (asc ? 1 : -1); }).forEach(r => body.appendChild(r));
  });
});
"""


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _sort_value(x: float | None) -> str:
    return "" if x is None or not np.isfinite(x) else repr(float(x))


def _svg(fig) -> str:
    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def score_plot(sec: SectionReport) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scored = [s for s in sec.scores if np.isfinite(s.iqm)]
    if not scored:
        return ""
    fig, ax = plt.subplots(figsize=(6, 0.45 * len(scored) + 1))
    y = np.arange(len(scored))
    iqm = np.array([s.iqm for s in scored])
    err = np.array([[s.iqm - s.ci[0], s.ci[1] - s.iqm] for s in scored]).T
    colors = ["#999" if s.role == "reference" else "#1f6feb" if s.role == "method" else "#555"
              for s in scored]
    ax.errorbar(iqm, y, xerr=np.clip(err, 0, None), fmt="none", ecolor="#333", capsize=3)
    ax.scatter(iqm, y, c=colors, zorder=3)
    ax.set_yticks(y, [s.agent for s in scored])
    ax.invert_yaxis()
    ax.set_xlabel(f"{sec.section.metric.name} (IQM, 95% CI)")
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig)


def curve_plots(sec: SectionReport) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = []
    for name, per_agent in sec.mean_curves().items():
        fig, ax = plt.subplots(figsize=(6, 3.2))
        for agent, (x, y) in sorted(per_agent.items()):
            ax.plot(x, y, label=agent)
        ax.set_title(f"{name} (mean over trials)")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        figures.append(_svg(fig))
    return figures


def _section_html(sec: SectionReport) -> str:
    metric = sec.section.metric
    arrow = "higher is better" if metric.direction == "max" else "lower is better"
    head = ["#", "agent", "role", f"{metric.name} IQM [95% CI]", "trials ok/failed"]
    if metric.normalize:
        head.append("normalized")
    head += [f"P(&gt; {esc(b)})" for b in sec.baselines] + ["tuning"]
    rows = []
    for s in sec.scores:
        cells = [
            f'<td data-sort="{s.rank or 999}">{s.rank or "–"}</td>',
            f"<td>{esc(s.agent)}</td>", f"<td>{esc(s.role)}</td>",
            f'<td data-sort="{_sort_value(s.iqm)}">{esc(fmt_ci(s.iqm, s.ci))}</td>',
            f"<td>{s.n_ok}/{s.n_failed}</td>",
        ]
        if metric.normalize:
            norm = s.normalized
            cells.append(f'<td data-sort="{_sort_value(norm[0] if norm else None)}">'
                         f"{esc(fmt_ci(norm[0], norm[1:]) if norm else 'n/a')}</td>")
        for b in sec.baselines:
            poi = s.poi.get(b)
            cells.append(f'<td data-sort="{_sort_value(poi[0] if poi else None)}">'
                         f"{esc(fmt_ci(poi[0], poi[1:]) if poi else '–')}</td>")
        cells.append(f"<td>{esc(s.tuned or '')}</td>")
        rows.append(f'<tr class="{esc(s.role)}">{"".join(cells)}</tr>')
    header_cells = "".join(
        f"<th>{h}</th>" if h.startswith("P(") else f"<th>{esc(h)}</th>" for h in head)
    plots = [score_plot(sec), *curve_plots(sec)]
    figures = "".join(f"<figure>{p}</figure>" for p in plots if p)
    return (f"<h2>{esc(sec.section.name)}: <code>{esc(sec.section.problem)}</code></h2>"
            f"<p>Primary metric <code>{esc(metric.name)}</code> ({arrow}).</p>"
            f'<table class="sortable"><thead><tr>{header_cells}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>{figures}")


def render_html(report: BenchmarkReport) -> str:
    spec, prov = report.spec, report.provenance
    claims = "".join(
        f'<tr><td>{esc(v.id)}</td><td>{esc(v.statement)}</td>'
        f'<td class="{esc(v.verdict)}">{esc(v.verdict)}</td>'
        f"<td>{esc(fmt_ci(v.effect, v.ci) if v.effect is not None else '–')}</td>"
        f"<td>{esc(v.detail)}</td></tr>"
        for v in report.verdicts
    )
    provenance = esc(json.dumps(prov, indent=2, sort_keys=True, default=str))
    sections = "".join(_section_html(s) for s in report.sections)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{esc(spec.name)} — papergym leaderboard</title><style>{STYLE}</style></head>
<body><h1>{esc(spec.name)}: {esc(spec.paper.title)}</h1>
<p>{esc(spec.description.strip())}</p>
<p>Tier <b>{esc(report.tier)}</b>; {prov.get('stored_trials', 0)} of
{prov.get('expected_trials', 0)} trials stored ({prov.get('failed_trials', 0)} failed).
Total trial time {esc(fmt(prov.get('trial_wall_s_total')))} s.</p>
{sections}
<h2>Claims</h2><table class="sortable"><thead><tr><th>id</th><th>claim</th><th>verdict</th>
<th>effect [95% CI]</th><th>detail</th></tr></thead><tbody>{claims}</tbody></table>
<h2>Provenance</h2><pre>{provenance}</pre>
<script>{SORT_SCRIPT}</script></body></html>
"""


def write_report(report: BenchmarkReport, folder: str | Path) -> dict[str, Path]:
    """Markdown and HTML of one report into ``folder``; returns the written paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    md = folder / "leaderboard.md"
    md.write_text(render_markdown(report))
    page = folder / "index.html"
    page.write_text(render_html(report))
    claims = folder / "claims.json"
    claims.write_text(json.dumps([v.as_dict() for v in report.verdicts], indent=2, default=str))
    return {"markdown": md, "html": page, "claims": claims}


def render_index_html(entries: list[dict], throughput_json: Path | None = None) -> str:
    """The index page: one row per benchmark page, verdict counts, and the throughput table."""
    rows = "".join(
        f'<tr><td><a href="{esc(e["name"])}/index.html">{esc(e["name"])}</a></td>'
        + "".join(f'<td class="{k}">{e["counts"][k]}</td>'
                  for k in ("holds", "fails", "inconclusive", "other"))
        + "</tr>"
        for e in entries
    )
    throughput = ""
    if throughput_json is not None and throughput_json.is_file():
        data = json.loads(throughput_json.read_text())
        prov = data.get("provenance", {})
        body = "".join(
            f'<tr><td><code>{esc(pid)}</code></td>'
            f'<td data-sort="{_sort_value(r.get("steps_per_second"))}">'
            f'{esc(fmt(r.get("steps_per_second")))}</td><td>{"yes" if r.get("ok") else "no"}</td></tr>'
            for pid, r in sorted(data.get("problems", {}).items())
        )
        throughput = (
            "<h2>Environment throughput</h2>"
            f"<p>{esc(prov.get('processor', ''))}, {esc(prov.get('cpu_count', ''))} CPUs, "
            f"{esc(prov.get('platform', ''))}; git {esc(str(prov.get('git_sha', ''))[:12])}</p>"
            '<table class="sortable"><thead><tr><th>problem</th><th>steps/s</th>'
            f"<th>check passed</th></tr></thead><tbody>{body}</tbody></table>"
        )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>papergym leaderboards</title>
<style>{STYLE}</style></head><body><h1>papergym leaderboards</h1>
<table class="sortable"><thead><tr><th>benchmark</th><th>holds</th><th>fails</th>
<th>inconclusive</th><th>other</th></tr></thead><tbody>{rows}</tbody></table>
{throughput}<script>{SORT_SCRIPT}</script></body></html>
"""
