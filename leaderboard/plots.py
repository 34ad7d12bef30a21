"""The report's figures, as inline SVG from matplotlib (Agg; nothing is fetched at run time).

- ``score_plot``: one dot per agent at its IQM with its 95% interval as a bar; the leader's
  interval is shaded, so the agents tied with it (rank group 1) are those whose bars reach
  into the band (filled dots; the rest hollow).
- ``performance_profile``: rliable's score distribution, the fraction of runs (seed x cell)
  scoring better than a threshold tau, with its 95% stratified-bootstrap band; drawn where a
  section has several cells, because one cell gives one run per seed and little to profile.
- ``curve_plot``: a learning/convergence curve per agent, the mean across seeds with a 95%
  Student-t band across seeds (cells of one seed are averaged first, so the band is the
  spread of independent runs). A curve named ``<y>_vs_<x>`` gets those axis labels.
- ``instance_plot``: curves named ``*_by_instance`` hold one value per evaluation instance,
  not a trajectory: drawn as dots per agent (a strip plot), never as a line.

Text in the figures is escaped by matplotlib's SVG writer. Drawing is most of the time a report
takes, so :func:`figure` keeps each drawn SVG in the harness cache (namespace ``report/figures``),
keyed by this module's code, matplotlib's version and a digest of the figure's inputs (the
section's spec and its rows' metrics, curves and units): rerunning ``papergym leaderboard`` on an
unchanged store redraws nothing, and a section that gained rows redraws only its own figures.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from typing import Any

import numpy as np

from papergym import cache

from . import scoring
from .scoring import normalized_scores, performance_profiles, score_matrix

ROLE_COLOR = {"method": "#1f6feb", "baseline": "#555555", "reference": "#9a9a9a"}
PROFILE_REPS = 500  # a plotted band; the tables' intervals use 2,000
MAX_POINTS = 200


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


PLOTS = ("score_plot", "performance_profile", "curve_plot")


def inputs_digest(sec: Any, *args: Any) -> str:
    """sha256 of everything a figure of ``sec`` is drawn from: the section's spec and its rows'
    identity, status, metrics, curves and units (not their provenance or timestamps)."""
    rows = _rows_digest.get(id(sec))
    if rows is None or rows[0] is not sec:
        digest = hashlib.sha256()
        for r in sorted(sec.rows, key=lambda r: r.key):
            digest.update(json.dumps([r.key, r.agent, r.agent_role, r.seed, r.status, r.metrics,
                                      r.curves, r.units], sort_keys=True, default=str).encode())
        rows = _rows_digest[id(sec)] = (sec, digest.hexdigest())
    spec = sec.section.model_dump(mode="json") if hasattr(sec.section, "model_dump") else repr(sec.section)
    text = json.dumps([spec, args, rows[1]], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


_rows_digest: dict[int, tuple[Any, str]] = {}  # id(section report) -> (it, digest of its rows)


def figure(name: str, sec: Any, *args: Any) -> str:
    """``<name>(sec, *args)``'s SVG, drawn once per distinct input and then read from the cache."""
    if name not in PLOTS:
        raise ValueError(f"unknown figure {name!r}; one of {PLOTS}")
    draw = getattr(sys.modules[__name__], name)
    if not cache.enabled():
        return draw(sec, *args)
    from importlib.metadata import version  # not matplotlib itself: a cached figure needs no import

    return cache.get(cache.Entry(
        "report/figures", {"figure": name, "matplotlib": version("matplotlib"),
                           "inputs": inputs_digest(sec, *args)},
        build=lambda: draw(sec, *args), code=(sys.modules[__name__], scoring)))


def svg(fig: Any) -> str:
    """The figure as an inline ``<svg>``: text kept as text (searchable, small), no date and
    fixed ids, so the same numbers give the same page."""
    import matplotlib

    plt = _pyplot()
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "papergym"}):
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def agent_styles(sec: Any) -> dict[str, dict[str, Any]]:
    """One colour per agent of a section, the same in every figure of it (tab10, or tab20 for
    more agents); line style by role: method solid, baseline dashed, reference dotted."""
    plt = _pyplot()
    agents = sorted({r.agent for r in sec.rows} | {s.agent for s in sec.scores})
    roles = {s.agent: s.role for s in sec.scores}
    cmap = plt.get_cmap("tab10" if len(agents) <= 10 else "tab20")
    dash = {"method": "-", "baseline": "--", "reference": ":"}
    return {a: {"color": cmap(i % cmap.N), "ls": dash.get(roles.get(a, ""), "-")}
            for i, a in enumerate(agents)}


def score_plot(sec: Any, groups: dict[str, int]) -> str:
    scored = [s for s in sec.scores if np.isfinite(s.iqm)]
    if not scored:
        return ""
    plt = _pyplot()
    metric = sec.section.metric
    fig, ax = plt.subplots(figsize=(6.4, 0.42 * len(scored) + 1.3))
    leader = next((s for s in scored if s.rank == 1), None)
    if leader is not None and np.all(np.isfinite(leader.ci)):
        ax.axvspan(leader.ci[0], leader.ci[1], color="#1f6feb", alpha=0.10, lw=0,
                   label="leader's 95% CI")
    colors = [ROLE_COLOR.get(s.role, "#555555") for s in scored]
    bounds = np.array([s.ci if np.all(np.isfinite(s.ci)) else (s.iqm, s.iqm) for s in scored])
    ys = np.arange(len(scored))
    ax.hlines(ys, bounds[:, 0], bounds[:, 1], colors=colors, lw=2)  # the interval
    for end in (0, 1):  # its caps
        ax.vlines(bounds[:, end], ys - 0.15, ys + 0.15, colors=colors, lw=1)
    tied = np.array([groups.get(s.agent) == 1 for s in scored])
    iqms = np.array([s.iqm for s in scored])
    ax.scatter(iqms, ys, s=49, c=[c if t else "white" for c, t in zip(colors, tied)],
               edgecolors=colors, linewidths=1.5, zorder=3)
    labels = [f"{s.agent}  (#{s.rank}, group {groups[s.agent]})" if s.agent in groups
              else f"{s.agent}  ({s.role})" for s in scored]
    ax.set_yticks(range(len(scored)), labels)
    ax.set_ylim(len(scored) - 0.5, -0.5)
    better = "higher" if metric.direction == "max" else "lower"
    ax.set_xlabel(f"{metric.name}: IQM with 95% stratified-bootstrap CI ({better} is better)")
    ax.grid(axis="x", alpha=0.3)
    handles = [plt.Line2D([], [], color=c, marker="o", lw=2, label=r)
               for r, c in ROLE_COLOR.items() if any(s.role == r for s in scored)]
    if leader is not None:
        handles.append(plt.Rectangle((0, 0), 1, 1, color="#1f6feb", alpha=0.10,
                                     label="leader's CI"))
    ax.legend(handles=handles, fontsize=7, loc="lower left", bbox_to_anchor=(0.0, 1.0),
              ncol=len(handles), frameon=False)
    return svg(fig)


def profile_scores(sec: Any) -> tuple[dict[str, np.ndarray], str]:
    """(seeds x cells) score matrices per agent for the profile, normalized where the section
    defines a normalization; and the axis name of those scores."""
    metric = sec.section.metric
    by_agent: dict[str, list[Any]] = {}
    for r in sec.rows:
        by_agent.setdefault(r.agent, []).append(r)
    if metric.normalize is not None:
        matrices = normalized_scores(by_agent, metric.name, metric.normalize.low,
                                     metric.normalize.high)
        name = f"normalized {metric.name}"
    else:
        matrices = {a: score_matrix(rs, metric.name)[0] for a, rs in by_agent.items()}
        name = metric.name
    return {a: m for a, m in matrices.items() if m.size}, name


def performance_profile(sec: Any) -> str:
    matrices, name = profile_scores(sec)
    if not matrices or max(m.shape[1] for m in matrices.values()) < 2:
        return ""
    values = np.concatenate([m.ravel() for m in matrices.values()])
    lo, hi = float(np.min(values)), float(np.max(values))
    if not np.isfinite([lo, hi]).all() or lo == hi:
        return ""
    taus = np.linspace(lo, hi, 81)
    minimize = sec.section.metric.direction == "min"
    sign = -1.0 if minimize else 1.0  # P(score < tau) is P(-score > -tau)
    profiles, bands = performance_profiles(
        {a: sign * m for a, m in matrices.items()}, sign * taus, reps=PROFILE_REPS)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    styles = agent_styles(sec)
    for agent in sorted(matrices):
        style = styles[agent]
        ax.plot(taus, profiles[agent], lw=1.6, label=agent, **style)
        ax.fill_between(taus, bands[agent][0], bands[agent][1], color=style["color"], alpha=0.12,
                        lw=0)
    relation = "<" if minimize else ">"
    ax.set_xlabel(f"threshold τ on {name}")
    ax.set_ylabel(f"fraction of runs with score {relation} τ")
    ax.set_ylim(-0.02, 1.02)
    n_cells = max(m.shape[1] for m in matrices.values())
    ax.set_title(f"performance profile over {n_cells} cells × seeds (95% bootstrap band)",
                 fontsize=9)
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    return svg(fig)


def _legend_outside(ax: Any) -> None:
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def axis_names(curve: str) -> tuple[str, str]:
    """(x label, y label) of a curve named ``<y>_vs_<x>``; other names plot against steps."""
    if "_vs_" in curve:
        y, x = curve.rsplit("_vs_", 1)
        return x.replace("_", " "), y.replace("_", " ")
    return "step", curve.replace("_", " ")


def seed_curves(rows: list[Any], name: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """agent -> (x grid, seeds x grid values): each seed's cells interpolated onto the grid
    the agent's curves share (their common x range; no extrapolation) and averaged."""
    per_agent: dict[str, dict[int, list[np.ndarray]]] = {}
    for r in rows:
        points = np.asarray(r.curves.get(name) or [], dtype=float) if r.ok else np.empty((0, 2))
        if points.ndim == 2 and len(points) and np.isfinite(points).all():
            per_agent.setdefault(r.agent, {}).setdefault(r.seed, []).append(points)
    out = {}
    for agent, by_seed in per_agent.items():
        curves = [c for cs in by_seed.values() for c in cs]
        start, stop = max(c[0, 0] for c in curves), min(c[-1, 0] for c in curves)
        xs = np.unique(np.concatenate([c[:, 0] for c in curves]))
        grid = xs[(xs >= start) & (xs <= stop)] if stop > start else xs
        if len(grid) > MAX_POINTS:
            grid = np.linspace(grid[0], grid[-1], MAX_POINTS)
        values = np.array([np.mean([np.interp(grid, c[:, 0], c[:, 1]) for c in cs], axis=0)
                           for _, cs in sorted(by_seed.items())])
        out[agent] = (grid, values)
    return out


def curve_plot(sec: Any, name: str) -> str:
    if name.endswith("_by_instance"):
        return instance_plot(sec, name)
    curves = seed_curves(sec.rows, name)
    if not curves:
        return ""
    from scipy import stats

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 3.4))
    seeds = set()
    styles = agent_styles(sec)
    for agent in sorted(curves):
        grid, values = curves[agent]
        mean = values.mean(axis=0)
        seeds.add(len(values))
        color = styles[agent]["color"]
        if len(grid) == 1:
            ax.plot(grid, mean, "o", color=color, label=agent)
        else:
            ax.plot(grid, mean, lw=1.6, label=agent, **styles[agent])
        if len(values) >= 2:
            half = stats.t.ppf(0.975, len(values) - 1) * values.std(axis=0, ddof=1) / np.sqrt(len(values))
            ax.fill_between(grid, mean - half, mean + half, color=color, alpha=0.18, lw=0)
    x_label, y_label = axis_names(name)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    n = f"{min(seeds)}" if len(seeds) == 1 else f"{min(seeds)}–{max(seeds)}"
    ax.set_title(f"{name}: mean over {n} seeds, band = 95% t-interval across seeds", fontsize=9)
    ax.grid(alpha=0.3)
    _legend_outside(ax)
    return svg(fig)


def instance_plot(sec: Any, name: str) -> str:
    per_agent: dict[str, list[float]] = {}
    for r in sec.rows:
        if r.ok and r.curves.get(name):
            per_agent.setdefault(r.agent, []).extend(float(p[1]) for p in r.curves[name])
    per_agent = {a: v for a, v in per_agent.items() if np.isfinite(v).any()}
    if not per_agent:
        return ""
    plt = _pyplot()
    agents = sorted(per_agent)
    fig, ax = plt.subplots(figsize=(6.4, 0.35 * len(agents) + 1.4))
    jitter = np.random.default_rng(0)
    styles = agent_styles(sec)
    for y, agent in enumerate(agents):
        color = styles[agent]["color"]
        values = np.asarray(per_agent[agent])
        ax.plot(values, y + jitter.uniform(-0.18, 0.18, len(values)), "o", ms=3, alpha=0.5,
                color=color)
        ax.plot([np.median(values)], [y], "|", ms=16, mew=2.5, color="black")
    positive = np.concatenate([np.asarray(v) for v in per_agent.values()])
    if (positive > 0).all() and positive.max() / positive.min() > 1e3:
        ax.set_xscale("log")
    ax.set_yticks(range(len(agents)), agents)
    ax.set_ylim(len(agents) - 0.5, -0.5)
    ax.set_xlabel(name.removesuffix("_by_instance").replace("_", " ") + " per evaluation instance")
    ax.set_title("one dot per instance (all seeds and cells); bar = median", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    return svg(fig)


def curve_names(sec: Any) -> list[str]:
    return sorted({c for r in sec.rows if r.ok for c in r.curves if r.curves[c]})
