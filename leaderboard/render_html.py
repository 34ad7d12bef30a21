"""Static HTML renderer: one self-contained page per benchmark, with plots.

A page reads top to bottom like a results page: the headline (each section's leader and the
agents tied with it, the paper claims by verdict), the claims board (statement, verdict and
its one-line reason, effect with its interval, units, the control's verdict; the rest under
each claim's details), then per section its table with rank groups, each agent's budgets, a
dot plot of IQMs with CI bars, a performance profile where the section has several cells,
and its curves; then the failed trials with their one-line error, and the provenance as a
table. The figures are explained in ``leaderboard/plots.py``. A submission (a plug-in agent)
carries its own badge and the hash of its source wherever its name appears.

The markup lives in Jinja2 templates (``leaderboard/templates/``) with autoescaping on, so
every user-supplied string (agent names, labels, claim texts, errors, paths) is escaped; the
functions here only turn a report into plain values for them. Plots are inline SVG made by
matplotlib (its SVG writer escapes their text) and are the only markup passed through. Tables
sort on a header click (a few lines of inline JavaScript, no network).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
from markupsafe import Markup

from papergym.safe import href

from . import plots
from .entrants import budget_text, budgets, short_hash, submission_hashes
from .numbers import fmt, fmt_ci
from .render_markdown import render_markdown
from .report import BenchmarkReport, SectionReport
from .summary import rank_groups, summarize

TEMPLATES = Path(__file__).resolve().parent / "templates"
VERDICT_CLASSES = ("holds", "fails", "inconclusive", "underpowered", "not evaluable")
# claim keys shown in the board's columns; every other non-empty key goes under its details
BOARD_KEYS = {"id", "statement", "verdict", "role", "effect", "ci", "effect_name", "ci_level",
              "p_value", "n_units", "n_declared", "n_pairs", "unit", "control_verdict", "control"}
DETAIL_LABELS = {  # key -> label, in the order the details list them
    "kind": "kind", "family": "family (one headline)", "sesoi": "smallest effect of interest",
    "power": "power at the smallest effect", "unit": "independent unit",
    "n_clusters": "clusters", "icc": "intra-cluster correlation", "design_effect": "design effect",
    "post_hoc": "post hoc", "matched": "matched settings", "control": "control",
    "control_reason": "control: why", "requires": "requires", "best_p": "best p these units allow",
    "p_value": "p (one-sided, toward the claim)", "detail": "reason",
}
REASON_CHARS = 160  # the one-line reason shown under a verdict; the whole text is in details


@functools.cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    env.globals["style"] = Markup((TEMPLATES / "style.css").read_text())
    env.globals["script"] = Markup((TEMPLATES / "sort.js").read_text())
    return env


def _render(template: str, **context: Any) -> str:
    return _environment().get_template(template).render(**context)


def _sort_value(x: float | None) -> str:
    return "" if x is None or not np.isfinite(x) else repr(float(x))


def verdict_class(verdict: str) -> str:
    """CSS class of a verdict: ``not evaluable`` -> ``not-evaluable``, ``holds, not specific``
    -> ``holds-not-specific``; anything unknown -> ``other``."""
    known = (*VERDICT_CLASSES, "holds, not specific")
    return verdict.replace(", ", "-").replace(" ", "-") if verdict in known else "other"


def _when(epoch: float | None, with_time: bool = True) -> str:
    if not epoch:
        return "–"
    form = "%Y-%m-%d %H:%M:%S UTC" if with_time else "%Y-%m-%d"
    return dt.datetime.fromtimestamp(float(epoch), dt.UTC).strftime(form)


def _value(x: Any) -> str:
    """A claim field for a reader: numbers through the one formatter, lists joined."""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return fmt(x)
    if isinstance(x, (list, tuple)):
        return ", ".join(_value(v) for v in x)
    if isinstance(x, dict):
        return "; ".join(f"{k}: {_value(v)}" for k, v in x.items())
    return str(x)


def _empty(x: Any) -> bool:
    return x is None or (isinstance(x, (str, list, tuple, dict)) and not x)


def _submission(agent: str, hashes: dict[str, str]) -> dict[str, str] | None:
    sha = hashes.get(agent)
    return {"agent": agent, "short": short_hash(sha), "full": sha} if sha else None


# ------------------------------------------------------------------------------ the claims board


def one_line_reason(detail: str | None) -> str:
    """The first clause of a verdict's reason (up to the first ``;``), cut to REASON_CHARS."""
    first = (detail or "").strip().split(";")[0].strip()
    return first if len(first) <= REASON_CHARS else first[: REASON_CHARS - 1].rstrip() + "…"


def claim_view(d: dict[str, Any]) -> dict[str, Any]:
    """One row of the claims board from a claim's dict (``Verdict.as_dict()`` or an entry of
    claims.json); every key but id, statement and verdict may be absent."""
    level = d.get("ci_level")
    effect = fmt_ci(d.get("effect"), d.get("ci")) if d.get("effect") is not None else "–"
    label = d.get("effect_name") or ""
    if level:
        label = f"{label}, {100 * level:g}% CI" if label else f"{100 * level:g}% CI"
    p = d.get("p_value")
    p_text = f"p = {fmt(p)} toward the claim" if p is not None else ""
    units = "–" if d.get("verdict") == "not run at this tier" else str(d.get("n_units", "–"))
    if d.get("n_declared") not in (None, d.get("n_units")):
        units += f" of {d['n_declared']}"
    if d.get("n_pairs") is not None:
        units += f" runs, {d['n_pairs']} pairs"
    elif d.get("unit"):
        units += f" {d['unit']}s" if units != "1" else f" {d['unit']}"
    control = None
    if not _empty(d.get("control_verdict")):
        control = {"verdict": str(d["control_verdict"]), "cls": verdict_class(str(d["control_verdict"])),
                   "id": _value(d["control"]) if not _empty(d.get("control")) else ""}
    details = [(label_, _value(d[k])) for k, label_ in DETAIL_LABELS.items()
               if not _empty(d.get(k)) and not (k == "control" and control is not None)]
    details += [(k, _value(x)) for k, x in d.items()
                if k not in DETAIL_LABELS and k not in BOARD_KEYS and not _empty(x)]
    role = d.get("role") or "paper"
    return {
        "id": d["id"], "role": role, "statement": d["statement"], "verdict": d["verdict"],
        "cls": verdict_class(d["verdict"]), "reason": one_line_reason(d.get("detail")),
        "effect": effect, "effect_label": label, "effect_sort": _sort_value(d.get("effect")),
        "p": p_text, "units": units, "control": control, "details": details,
    }


def _counts(counts: dict[str, int]) -> list[dict[str, Any]]:
    return [{"verdict": k, "cls": verdict_class(k), "n": n} for k, n in counts.items() if n]


def _headline(report: BenchmarkReport, hashes: dict[str, str]) -> dict[str, Any]:
    summary = summarize(report)
    families, bh_holds = summary.tally_families, summary.bh_holds
    return {
        "tier": report.tier, "stored": summary.stored_trials, "expected": summary.expected_trials,
        "failed": summary.failed_trials, "claims_counted": summary.claims_counted,
        "counts": _counts(summary.claims),
        "families": _counts(families) if isinstance(families, dict) else [],
        "bh_holds": bh_holds,
        "submissions": [_submission(a, hashes) for a in sorted(hashes)],
        "sections": [{"name": s.section, "leader": s.leader, "metric": s.metric,
                      "iqm": fmt_ci(s.iqm, s.ci), "tied": s.tied,
                      "leader_submission": _submission(s.leader, hashes) if s.leader else None}
                     for s in summary.sections],
    }


# ------------------------------------------------------------------------------ a section


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _check_view(sec: SectionReport) -> dict[str, Any] | None:
    """The section's check (does its reference beat its trivial agent), where the report has it."""
    check = sec.check
    if check is None or check.status == "not declared":
        return None
    view = {"status": check.status,
            "cls": "fails" if check.status == "non-discriminative" else "note",
            "reference": check.reference, "trivial": check.trivial,
            "effect": fmt_ci(check.effect, check.ci) if check.effect is not None else "",
            "detail": check.detail or "", "method_vs_trivial": "", "possibly_broken": []}
    mvt = _field(check, "method_vs_trivial")
    if mvt:
        beats = _field(mvt, "beats")
        view["method_vs_trivial"] = (
            fmt_ci(_field(mvt, "effect"), (_field(mvt, "ci_low"), _field(mvt, "ci_high")))
            + ("" if beats is None else " (beats it)" if beats else " (does not beat it)"))
    view["possibly_broken"] = [str(b) for b in _field(check, "possibly_broken_baselines") or []]
    return view


def _tuning_text(agent_tuned: str | None, tuning: dict[str, Any] | None) -> str:
    parts = [agent_tuned] if agent_tuned else []
    if isinstance(tuning, dict):
        if tuning.get("chosen") is not None:
            parts.append(f"chosen {_value(tuning['chosen'])}")
        if tuning.get("candidates") is not None:
            n = tuning["candidates"]
            parts.append(f"of {len(n) if isinstance(n, (list, tuple)) else n} candidates")
        if tuning.get("budget") is not None:
            parts.append(f"tuning budget {_value(tuning['budget'])}")
        if tuning.get("validation_score") is not None:
            parts.append(f"validation score {_value(tuning['validation_score'])}")
        if tuning.get("at_edge"):
            parts.append("at the edge of the grid: the best value may lie outside it")
    return "; ".join(parts)


def _section_view(sec: SectionReport, hashes: dict[str, str]) -> dict[str, Any]:
    metric = sec.section.metric
    groups = rank_groups(sec)
    head = ["#", "rank group", "agent", "role", f"{metric.name} IQM [95% CI]", "mean",
            "trials ok/failed"]
    if metric.normalize:
        head.append("normalized IQM [95% CI]")
    head += [f"P(> {b})" for b in sec.baselines]
    rows = []
    for s in sec.scores:
        group = groups.get(s.agent)
        extra = []
        if metric.normalize:
            norm = s.normalized
            extra.append((fmt_ci(norm[0], norm[1:]) if norm else "n/a",
                          _sort_value(norm[0] if norm else None)))
        for b in sec.baselines:
            poi = s.poi.get(b)
            extra.append((fmt_ci(poi[0], poi[1:]) if poi else "–",
                          _sort_value(poi[0] if poi else None)))
        submission = _submission(s.agent, hashes)
        rows.append({
            "rank": s.rank or "–", "rank_sort": s.rank or 999,
            "group": "–" if group is None else group, "group_sort": group or 999,
            "group_badge": "leader" if s.rank == 1 and s.agent == _leader(sec) else
                           "tied with leader" if group == 1 else None,
            "agent": s.agent, "tuned": s.tuned, "submission": submission, "role": s.role,
            "iqm": fmt_ci(s.iqm, s.ci), "iqm_sort": _sort_value(s.iqm),
            "mean": fmt(s.mean), "mean_sort": _sort_value(s.mean),
            "trials": f"{s.n_ok}/{s.n_failed}", "extra": extra,
            "cls": " ".join(c for c in (s.role, "tied" if group == 1 else "",
                                        "submission" if submission else "") if c),
        })
    tiers = [t for t in ("smoke", "standard", "full") if t in sec.tier_scale]
    scale = None
    if sec.scale_rows:
        scale = {"head": ["budget", "paper", *tiers],
                 "rows": [[name, "–" if paper is None else paper,
                           *(per_tier.get(t, "–") for t in tiers)]
                          for name, paper, per_tier in sec.scale_rows]}
    metered = budgets(sec.rows)
    tuning_rows = {r.agent: r.provenance.get("tuning") for r in sec.rows
                   if isinstance(r.provenance.get("tuning"), dict)}
    tuning = [{"agent": s.agent, "text": _tuning_text(s.tuned, tuning_rows.get(s.agent))}
              for s in sec.scores if s.tuned or s.agent in tuning_rows]
    figures = [
        (plots.figure("score_plot", sec, groups),
         f"{sec.section.name}: IQM of {metric.name} per agent with its 95% CI. The shaded "
         "band is the leader's interval; filled dots are tied with the leader (rank "
         "group 1), hollow dots are separated from it."),
        (plots.figure("performance_profile", sec),
         f"{sec.section.name}: performance profile (rliable) over every seed and cell."),
        *((plots.figure("curve_plot", sec, name), f"{sec.section.name}: {name}")
          for name in plots.curve_names(sec)),
    ]
    return {
        "name": sec.section.name, "problem": sec.section.problem, "metric": metric.name,
        "arrow": "higher is better" if metric.direction == "max" else "lower is better",
        "check": _check_view(sec), "scale": scale,
        "departures": list(getattr(sec.section, "departures", None) or []),
        "head": head, "rows": rows,
        "budgets": [{"agent": s.agent, "submission": _submission(s.agent, hashes),
                     "text": budget_text(metered[s.agent])}
                    for s in sec.scores if s.agent in metered],
        "tuning": tuning,
        "figures": [{"svg": Markup(svg), "caption": caption} for svg, caption in figures if svg],
    }


def _leader(sec: SectionReport) -> str | None:
    return next((s.agent for s in sec.scores if s.rank == 1), None)


# ------------------------------------------------------------------------------ failures, provenance


def first_line(error: str | None) -> str:
    """The one line of a stored error that says what went wrong (its last non-empty line, where a
    traceback ends with the exception; the first line otherwise)."""
    lines = [line.strip() for line in (error or "").strip().splitlines() if line.strip()]
    if not lines:
        return "no error recorded"
    return lines[-1] if lines[0].startswith("Traceback") else lines[0]


def _scale_text(scale: Any) -> str:
    """``{section: {budget: value}}`` as ``section: budget value, ...; ...``."""
    if not isinstance(scale, dict):
        return str(scale)
    parts = []
    for name, budgets_ in scale.items():
        if isinstance(budgets_, dict):
            values = ", ".join(f"{k} {fmt(v) if isinstance(v, (int, float)) else v}"
                               for k, v in budgets_.items())
            parts.append(f"{name}: {values}")
        else:
            parts.append(f"{name}: {budgets_}")
    return "; ".join(parts)


def _provenance_items(report: BenchmarkReport) -> list[tuple[str, str]]:
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
    return [(k, str(v)) for k, v in items]


def page_view(report: BenchmarkReport) -> dict[str, Any]:
    """Everything the benchmark template shows, as plain values (strings are escaped there)."""
    spec = report.spec
    rows = [r for sec in report.sections for r in sec.rows]
    hashes = submission_hashes(rows)
    url = getattr(spec.paper, "url", None)
    return {
        "name": spec.name, "paper_title": spec.paper.title,
        "paper_url": str(url) if url and str(url).startswith(("https://", "http://")) else "",
        "description": (spec.description or "").strip(),
        "departures": list(getattr(spec, "departures", None) or []),
        "headline": _headline(report, hashes),
        "claims": [claim_view(v.as_dict()) for v in report.verdicts],
        "weak_power": [p.message() for p in report.power if not p.ok],
        "sections": [_section_view(sec, hashes) for sec in report.sections],
        "failed": [{"section": r.section, "agent": r.agent, "seed": r.seed,
                    "submission": _submission(r.agent, hashes),
                    "cell": json.dumps(r.problem_kwargs, sort_keys=True),
                    "error": first_line(r.error)} for r in rows if not r.ok],
        "provenance": _provenance_items(report),
    }


def render_html(report: BenchmarkReport) -> str:
    return _render("benchmark.html.j2", page=page_view(report))


def page_meta(report: BenchmarkReport) -> dict[str, Any]:
    """What the index page lists for a report folder (written beside it as page.json)."""
    return {"benchmark": report.spec.name, "title": report.spec.paper.title, "tier": report.tier,
            "last_trial": report.provenance.get("last_created")}


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
    meta = folder / "page.json"
    meta.write_text(json.dumps(page_meta(report), indent=2))
    return {"markdown": md, "html": page, "claims": claims, "meta": meta}


# ------------------------------------------------------------------------------ the index page


def _throughput_view(throughput_json: Path | None) -> dict[str, Any] | None:
    """The throughput table, only where it covers every registered problem at its current
    version: a table of a few problems from an old commit would mislead more than none."""
    if throughput_json is None or not throughput_json.is_file():
        return None
    from papergym.registry import problems as registered

    data = json.loads(throughput_json.read_text())
    problems = data.get("problems", {})
    shipped = {p.id for p in registered()
               if isinstance(p.entry_point, str) and p.entry_point.startswith("papergym.envs.")}
    if not shipped <= set(problems):
        return None
    prov = data.get("provenance", {})
    return {
        "machine": f"{prov.get('processor', '')}, {prov.get('cpu_count', '')} CPUs, "
                   f"{prov.get('platform', '')}",
        "git": str(prov.get("git_sha", ""))[:12],
        "rows": [{"problem": pid, "rate": fmt(r.get("steps_per_second")),
                  "sort": _sort_value(r.get("steps_per_second")), "ok": "yes" if r.get("ok") else "no"}
                 for pid, r in sorted(problems.items())],
    }


def render_index_html(entries: list[dict], throughput_json: Path | None = None) -> str:
    """The index page: one row per report folder (``name``, ``counts`` by verdict, and where the
    folder has a page.json its paper title, tier and date); the throughput table where current."""
    extra = sorted({k for e in entries for k in e["counts"]} - {*VERDICT_CLASSES, "other"})
    verdicts = [{"verdict": v, "cls": verdict_class(v)} for v in (*VERDICT_CLASSES, *extra, "other")]
    rows = []
    for e in entries:
        meta = e.get("meta") or {}
        rows.append({
            "name": e["name"], "link": href(*filter(None, e["name"].split("/")), "index.html"),
            "title": meta.get("title", "–"), "tier": meta.get("tier", "–"),
            "date": _when(meta.get("last_trial"), with_time=False),
            "counts": [e["counts"].get(v["verdict"], 0) for v in verdicts],
        })
    return _render("index.html.j2", entries=rows, verdicts=verdicts,
                   throughput=_throughput_view(throughput_json))
