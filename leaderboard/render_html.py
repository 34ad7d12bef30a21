"""Static HTML renderer: one self-contained page per benchmark, with plots.

A page reads top to bottom like a results page: the headline (each section's leader and the
agents tied with it, the paper claims by verdict), then per section its table with rank
groups, a dot plot of IQMs with CI bars, a performance profile where the section has several
cells, and its curves; then the claims board, the failed trials with their one-line error,
and the provenance as a table. The figures are explained in ``leaderboard/plots.py``.

Every user-supplied string (agent names, labels, claim texts, errors, paths) goes through
``html.escape``; plots are inline SVG made by matplotlib, their text escaped by matplotlib's
SVG writer. Tables sort on a header click (a few lines of inline JavaScript, no network).
"""

from __future__ import annotations

import datetime as dt
import html
import json
from pathlib import Path
from typing import Any

import numpy as np

from papergym.safe import href

from . import plots
from .numbers import fmt, fmt_ci
from .render_markdown import render_markdown
from .report import BenchmarkReport, SectionReport
from .summary import rank_groups, summarize

VERDICT_CLASSES = ("holds", "fails", "inconclusive", "underpowered", "not evaluable")
STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:76rem;color:#222;padding:0 1rem}
table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f3f3;cursor:pointer} tr.reference{color:#777} td.num{text-align:right;white-space:nowrap}
tr.tied td.group{background:#e6f0ff;font-weight:bold}
.holds{color:#17803d;font-weight:bold}.fails{color:#b3261e;font-weight:bold}
.inconclusive{color:#a86b00;font-weight:bold}.underpowered{color:#7b2d8e;font-weight:bold}
.not-evaluable{color:#1f4e99;font-weight:bold}
.figures{display:flex;flex-wrap:wrap;gap:1rem} figure{margin:.5rem 0;flex:1 1 30rem;max-width:37rem}
figure svg{width:100%;height:auto} figcaption{font-size:.8rem;color:#555}
.scroll{overflow-x:auto} td.small{font-size:.75rem;max-width:14rem} .badge{white-space:nowrap}
code{background:#f6f6f6} .headline{background:#f8f9fb;border:1px solid #dde;padding:.5rem 1rem}
.badge{display:inline-block;padding:0 .4rem;border-radius:.6rem;background:#e6f0ff;font-size:.8rem}
.error{font-family:monospace;font-size:.8rem;color:#8a1c1c} .note{color:#555;font-size:.85rem}
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


def _verdict_class(verdict: str) -> str:
    return verdict.replace(" ", "-") if verdict in VERDICT_CLASSES else "other"


def _when(epoch: float | None) -> str:
    if not epoch:
        return "–"
    return dt.datetime.fromtimestamp(float(epoch), dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _table(head: list[str], rows: list[str], sortable: bool = True, cls: str = "") -> str:
    classes = " ".join(c for c in ("sortable" if sortable else "", cls) if c)
    header = "".join(f"<th>{esc(h)}</th>" for h in head)
    return (f'<div class="scroll"><table class="{classes}"><thead><tr>{header}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{esc(caption)}</figcaption></figure>" if svg else ""


# ------------------------------------------------------------------------------ the headline


def _headline_html(report: BenchmarkReport) -> str:
    summary = summarize(report)
    items = []
    for s in summary.sections:
        if s.leader is None:
            items.append(f"<li><b>{esc(s.section)}</b>: no scored agent</li>")
            continue
        tied = (f" — tied with {', '.join(f'<b>{esc(a)}</b>' for a in s.tied)}" if s.tied
                else " — ahead of every other ranked agent")
        items.append(f"<li><b>{esc(s.section)}</b>: <b>{esc(s.leader)}</b> leads on "
                     f"<code>{esc(s.metric)}</code> with IQM {esc(fmt_ci(s.iqm, s.ci))}{tied}</li>")
    counts = ", ".join(f'<span class="{_verdict_class(k)}">{n} {esc(k)}</span>'
                       for k, n in summary.claims.items()) or "none"
    failed = (f', <a href="#failed">{summary.failed_trials} failed</a>' if summary.failed_trials
              else "")
    return (f'<div class="headline"><p>Tier <b>{esc(report.tier)}</b>: {summary.stored_trials} '
            f"of {summary.expected_trials} trials stored{failed}. {esc(summary.claims_counted)}: "
            f"{counts}.</p><ul>{''.join(items)}</ul></div>")


# ------------------------------------------------------------------------------ a section


def _section_html(sec: SectionReport) -> str:
    metric = sec.section.metric
    arrow = "higher is better" if metric.direction == "max" else "lower is better"
    groups = rank_groups(sec)
    head = ["#", "rank group", "agent", "role", f"{metric.name} IQM [95% CI]", "mean",
            "trials ok/failed"]
    if metric.normalize:
        head.append("normalized IQM [95% CI]")
    head += [f"P(> {b})" for b in sec.baselines]
    rows = []
    for s in sec.scores:
        group = groups.get(s.agent)
        group_text = "–" if group is None else (
            f'{group} <span class="badge">tied with leader</span>' if group == 1 and s.rank != 1
            else f"{group} <span class=\"badge\">leader</span>" if s.rank == 1 else str(group))
        cells = [
            f'<td data-sort="{s.rank or 999}">{s.rank or "–"}</td>',
            f'<td class="group" data-sort="{group or 999}">{group_text}</td>',
            f"<td>{esc(s.agent)}" + (f' <span class="badge" title="{esc(s.tuned)}">tuned</span>'
                                     if s.tuned else "") + f"</td><td>{esc(s.role)}</td>",
            f'<td class="num" data-sort="{_sort_value(s.iqm)}">{esc(fmt_ci(s.iqm, s.ci))}</td>',
            f'<td class="num" data-sort="{_sort_value(s.mean)}">{esc(fmt(s.mean))}</td>',
            f"<td>{s.n_ok}/{s.n_failed}</td>",
        ]
        if metric.normalize:
            norm = s.normalized
            cells.append(f'<td class="num" data-sort="{_sort_value(norm[0] if norm else None)}">'
                         f"{esc(fmt_ci(norm[0], norm[1:]) if norm else 'n/a')}</td>")
        for b in sec.baselines:
            poi = s.poi.get(b)
            cells.append(f'<td class="num" data-sort="{_sort_value(poi[0] if poi else None)}">'
                         f"{esc(fmt_ci(poi[0], poi[1:]) if poi else '–')}</td>")
        tied = " tied" if group == 1 else ""
        rows.append(f'<tr class="{esc(s.role)}{tied}">{"".join(cells)}</tr>')
    figures = [
        _figure(plots.figure("score_plot", sec, groups),
                f"{sec.section.name}: IQM of {metric.name} per agent with its 95% CI. The shaded "
                "band is the leader's interval; filled dots are tied with the leader (rank "
                "group 1), hollow dots are separated from it."),
        _figure(plots.figure("performance_profile", sec),
                f"{sec.section.name}: performance profile (rliable) over every seed and cell."),
        *(_figure(plots.figure("curve_plot", sec, name), f"{sec.section.name}: {name}")
          for name in plots.curve_names(sec)),
    ]
    return (f'<h2 id="section-{esc(sec.section.name)}">{esc(sec.section.name)}: '
            f"<code>{esc(sec.section.problem)}</code></h2>"
            f"<p>Primary metric <code>{esc(metric.name)}</code> ({arrow}). Rank group 1 holds "
            "the leader and every agent whose 95% CI overlaps the leader's: the data do not "
            "order them.</p>"
            f"{_discrimination_html(sec)}{_scale_html(sec)}"
            f'{_table(head, rows, cls="leaderboard")}{_tuning_html(sec)}'
            f'<div class="figures">{"".join(f for f in figures if f)}</div>')


def _tuning_html(sec: SectionReport) -> str:
    tuned = [s for s in sec.scores if s.tuned]
    if not tuned:
        return ""
    items = "".join(f"<li><b>{esc(s.agent)}</b>: {esc(s.tuned)}</li>" for s in tuned)
    return (f"<details><summary>How the {len(tuned)} tuned agents were tuned</summary>"
            f"<ul>{items}</ul></details>")


def _discrimination_html(sec: SectionReport) -> str:
    """The section's check (does its reference beat its trivial agent), where the report has it."""
    check = getattr(sec, "check", None)
    if check is None or getattr(check, "status", "not declared") == "not declared":
        return ""
    effect = (f": <code>{esc(check.reference)}</code> over <code>{esc(check.trivial)}</code> by "
              f"{esc(fmt_ci(check.effect, check.ci))}" if check.effect is not None else "")
    detail = f" ({esc(check.detail)})" if getattr(check, "detail", "") else ""
    status = esc(check.status)
    cls = "fails" if check.status == "non-discriminative" else "note"
    return f'<p>Discrimination: <span class="{cls}">{status}</span>{effect}{detail}</p>'


def _scale_html(sec: SectionReport) -> str:
    """The paper's budgets beside each tier's, and the departures, where the report has them."""
    out = ""
    scale_rows = getattr(sec, "scale_rows", None) or []
    if scale_rows:
        tiers = [t for t in ("smoke", "standard", "full") if t in getattr(sec, "tier_scale", {})]
        body = ["<tr><td>" + esc(name) + "</td><td>" + esc("–" if paper is None else paper) + "</td>"
                + "".join(f"<td>{esc(per_tier.get(t, '–'))}</td>" for t in tiers) + "</tr>"
                for name, paper, per_tier in scale_rows]
        out += _table(["budget", "paper", *tiers], body, sortable=False, cls="scale")
    departures = getattr(sec.section, "departures", None) or []
    if departures:
        out += ("<p>Departures from the paper:</p><ul>"
                + "".join(f"<li>{esc(d)}</li>" for d in departures) + "</ul>")
    return out


# ------------------------------------------------------------------------------ claims, failures, provenance


def _claims_html(report: BenchmarkReport) -> str:
    known = {"id", "statement", "kind", "verdict", "role", "effect", "ci", "detail", "requires",
             "n_units", "n_declared", "effect_name", "ci_level", "p_value", "best_p", "n_pairs"}
    rows = []
    for v in report.verdicts:
        d = v.as_dict()
        level = d.get("ci_level")
        effect = fmt_ci(d.get("effect"), d.get("ci")) if d.get("effect") is not None else "–"
        if d.get("effect_name"):
            effect += f" ({d['effect_name']}"
            effect += f", {100 * level:g}% CI)" if level else ")"
        units = str(d.get("n_units", ""))
        if d.get("n_declared") not in (None, d.get("n_units")):
            units += f" of {d['n_declared']}"
        if d.get("n_pairs") is not None:
            units += f" runs, {d['n_pairs']} pairs"
        extra = "; ".join(f"{k}: {fmt(x) if isinstance(x, float) else x}"
                          for k, x in d.items() if k not in known and x not in (None, "", [], {}))
        detail = d.get("detail", "") + (f" ({extra})" if extra else "")
        requires = ", ".join(d.get("requires") or []) or "–"
        rows.append(
            f'<tr class="role-{esc(d.get("role", "paper"))}"><td>{esc(d["id"])}</td>'
            f'<td>{esc(d.get("role", "paper"))}</td><td>{esc(d["statement"])}</td>'
            f'<td class="{_verdict_class(d["verdict"])}">{esc(d["verdict"])}</td>'
            f'<td class="num" data-sort="{_sort_value(d.get("effect"))}">{esc(effect)}</td>'
            f'<td>{esc(d.get("p_value") is not None and fmt(d["p_value"]) or "–")}</td>'
            f"<td>{esc(units)}</td><td>{esc(requires)}</td><td>{esc(detail)}</td></tr>")
    head = ["id", "role", "claim", "verdict", "effect [CI]", "p", "units", "requires", "detail"]
    return ('<h2 id="claims">Claims</h2><p class="note">Roles: <b>paper</b> claims are the '
            "paper's results (counted in the headline), <b>sanity</b> claims check the harness "
            "and agents, <b>diagnostic</b> claims explain a result.</p>"
            + _table(head, rows, cls="claims"))


def first_line(error: str | None) -> str:
    """The one line of a stored error that says what went wrong (its last non-empty line, where a
    traceback ends with the exception; the first line otherwise)."""
    lines = [line.strip() for line in (error or "").strip().splitlines() if line.strip()]
    if not lines:
        return "no error recorded"
    return lines[-1] if lines[0].startswith("Traceback") else lines[0]


def _failed_html(report: BenchmarkReport) -> str:
    failed = [r for sec in report.sections for r in sec.rows if not r.ok]
    if not failed:
        return '<h2 id="failed">Failed trials</h2><p>None.</p>'
    rows = [f"<tr><td>{esc(r.section)}</td><td>{esc(r.agent)}</td><td>{r.seed}</td>"
            f"<td><code>{esc(json.dumps(r.problem_kwargs, sort_keys=True))}</code></td>"
            f'<td class="error">{esc(first_line(r.error))}</td></tr>' for r in failed]
    return (f'<h2 id="failed">Failed trials ({len(failed)})</h2>'
            + _table(["section", "agent", "seed", "cell", "error"], rows, cls="failed"))


def _scale_text(scale: Any) -> str:
    """``{section: {budget: value}}`` as ``section: budget value, ...; ...``."""
    if not isinstance(scale, dict):
        return str(scale)
    parts = []
    for name, budgets in scale.items():
        if isinstance(budgets, dict):
            values = ", ".join(f"{k} {fmt(v) if isinstance(v, (int, float)) else v}"
                               for k, v in budgets.items())
            parts.append(f"{name}: {values}")
        else:
            parts.append(f"{name}: {budgets}")
    return "; ".join(parts)


def _provenance_html(report: BenchmarkReport) -> str:
    prov = report.provenance
    git = ", ".join(f"{k} ({v} trials)" for k, v in prov.get("git", {}).items()) or "–"
    hosts = ", ".join(f"{k} ({v} trials)" for k, v in prov.get("hosts", {}).items()) or "–"
    items = [
        ("trials stored / expected", f"{prov.get('stored_trials', 0)} / "
                                     f"{prov.get('expected_trials', 0)} "
                                     f"({prov.get('failed_trials', 0)} failed)"),
        ("first trial", _when(prov.get("first_created"))),
        ("last trial", _when(prov.get("last_created"))),
        ("git sha", git), ("hosts", hosts), ("platform", prov.get("platform") or "–"),
        ("Python", prov.get("python") or "–"), ("CPUs", prov.get("cpu_count") or "–"),
        ("trial time", f"{fmt(prov.get('trial_wall_s_total'))} s wall, "
                       f"{fmt(prov.get('trial_cpu_s_total'))} s CPU in total"),
        ("peak memory of one trial", f"{fmt(prov.get('peak_rss_mib_max'))} MiB"),
    ]
    scale = getattr(report.spec, "scale", None)
    if scale:
        items.append(("scale (the paper's budgets)", _scale_text(scale)))
    versions = ", ".join(f"{k} {v}" for k, v in sorted(prov.get("versions", {}).items()))
    items.append(("versions", versions or "–"))
    rows = [f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in items]
    return ('<h2 id="provenance">Provenance</h2><table class="provenance"><tbody>'
            + "".join(rows) + "</tbody></table>")


def render_html(report: BenchmarkReport) -> str:
    spec = report.spec
    url = getattr(spec.paper, "url", None)
    paper = (f'<p>Paper: <a href="{esc(url)}">{esc(spec.paper.title)}</a></p>'
             if url and str(url).startswith(("https://", "http://")) else "")
    sections = "".join(_section_html(s) for s in report.sections)
    departures = "".join(f"<li>{esc(d)}</li>" for d in getattr(spec, "departures", None) or [])
    departures = f"<p>Departures from the paper:</p><ul>{departures}</ul>" if departures else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>{esc(spec.name)} — papergym leaderboard</title><style>{STYLE}</style></head>
<body><h1>{esc(spec.name)}: {esc(spec.paper.title)}</h1>{paper}
<p>{esc(spec.description.strip())}</p>{departures}
{_headline_html(report)}
{sections}
{_claims_html(report)}
{_failed_html(report)}
{_provenance_html(report)}
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
        f'<tr><td><a href="{esc(href(*filter(None, e["name"].split("/")), "index.html"))}">'
        f'{esc(e["name"])}</a></td>'
        + "".join(f'<td class="{_verdict_class(k)}">{e["counts"].get(k, 0)}</td>'
                  for k in (*VERDICT_CLASSES, "other"))
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
<p>Counts of the papers' claims (role <code>paper</code>) by verdict.</p>
<table class="sortable"><thead><tr><th>benchmark</th>{"".join(f"<th>{v}</th>" for v in VERDICT_CLASSES)}
<th>other</th></tr></thead><tbody>{rows}</tbody></table>
{throughput}<script>{SORT_SCRIPT}</script></body></html>
"""
