"""Reading results: `papergym leaderboard` and `papergym claims` on stores of ~100 and ~1,000 rows.

    python benchmarks/perf/read_speed.py [--rows 100 1000] [--repeats 1]

Stores are built from the published performative standard tier
(leaderboard/published/performative/trials.jsonl): a copy of benchmarks/specs/performative.yaml
with more seeds (and, for small stores, fewer cells per section) is expanded into trials, and
every trial gets the published row of its (section, agent, cell, seed mod 2), keyed for that
trial, with non-integer metrics jittered by 0.1% on the extra seeds so resamples are not all
ties. Each command runs as its own process (interpreter start and imports included, as a user
waits for them); wall and CPU seconds are printed.

Reference: the implementation before the read-speed work, measured in the same run. Its two
differences are kept in this file (`OLD_PATH`) and patched into the same tree: rliable's
bootstraps (one Python call per resample through arch; rliable, arch and pandas imported) for
the IQM intervals, probabilities of improvement and performance profiles, scores computed
for every report, `claims` included, and every figure drawn on every call.

`leaderboard` is measured twice: `cold` with an empty cache (every figure drawn) and `warm`
on the same store again (figures read from the cache, as when a researcher re-reads a run).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "leaderboard" / "published" / "performative" / "trials.jsonl"
SPEC = ROOT / "benchmarks" / "specs" / "performative.yaml"

# The read path as it was: prepended to the command when --old is measured.
OLD_PATH = '''
import warnings
import numpy as np
import papergym.leaderboard.report as report
import papergym.leaderboard.scoring as scoring

def _rliable(score_dict, func, reps, seed):
    from rliable import library as rly
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return rly.get_interval_estimates(score_dict, func, reps=reps,
                                              random_state=np.random.RandomState(seed))
    finally:
        np.random.set_state(saved)

def interval_estimates(score_dict, reps=scoring.BOOTSTRAP_REPS, seed=0):
    usable = {k: v for k, v in score_dict.items() if v.size}
    if not usable:
        return {}
    points, intervals = _rliable(usable, lambda x: np.array([scoring.iqm(x)]), reps, seed)
    return {k: (float(points[k][0]), float(intervals[k][0][0]), float(intervals[k][1][0]))
            for k in usable}

def probability_of_improvement(x, y, direction, reps=scoring.BOOTSTRAP_REPS, seed=0):
    n = min(len(x), len(y))
    if n == 0:
        return (float("nan"),) * 3
    sign = 1.0 if direction == "max" else -1.0
    points, intervals = _rliable({"pair": [sign * x[:n], sign * y[:n]]},
                                 lambda a, b: np.array([scoring.poi(a, b)]), reps, seed)
    return float(points["pair"][0]), float(intervals["pair"][0][0]), float(intervals["pair"][1][0])

def performance_profiles(score_dict, taus, reps=scoring.BOOTSTRAP_REPS, seed=0):
    from rliable import library as rly
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return rly.create_performance_profile(score_dict, taus, reps=reps)
    finally:
        np.random.set_state(saved)

import papergym.leaderboard.plots as plots
plots.performance_profiles = performance_profiles
plots.figure = lambda name, sec, *args: getattr(plots, name)(sec, *args)  # drawn every time
scoring.interval_estimates = interval_estimates
scoring.probability_of_improvement = probability_of_improvement
_build = report.build_report

def build_report(*args, **kwargs):
    built = _build(*args, **kwargs)
    for section in built.sections:
        section.scores  # every report scored, as before
    return built

report.build_report = build_report
'''


def scaled_spec(rows_per_seed: dict[str, int], target: int, folder: Path) -> Path:
    """performative.yaml with enough seeds (and few enough cells) for about ``target`` rows."""
    raw = yaml.safe_load(SPEC.read_text())
    from papergym.benchmarks.spec import load_spec

    spec = load_spec(SPEC)
    per_seed = sum(rows_per_seed.values())
    seeds = max(2, round(target / per_seed))
    fraction = min(1.0, target / (seeds * per_seed))
    for section, parsed in zip(raw["problems"], spec.problems):
        tier = parsed.tiers["standard"]
        cells = tier.expand_cells()
        keep = cells[: max(1, math.ceil(fraction * len(cells)))]
        section["tiers"] = {"standard": {"seeds": seeds, "timeout_s": tier.timeout_s,
                                         "cells": keep}}
    raw["claims"] = [{**c, "tiers": ["standard"]} for c in raw["claims"]]
    path = folder / f"performative_{target}.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def build_store(spec_path: Path, templates: dict, store_path: Path) -> int:
    from papergym.benchmarks.runner import expand_trials
    from papergym.benchmarks.spec import load_spec
    from papergym.leaderboard.scoring import cell_key
    from papergym.leaderboard.store import Row, Store

    jitter = np.random.default_rng(0)

    def shaken(values: dict, seed: int) -> dict:
        if seed < 2:
            return dict(values)
        return {k: v if not isinstance(v, float) or float(v).is_integer()
                else v * (1 + 1e-3 * jitter.standard_normal()) for k, v in values.items()}

    count = 0
    with Store(store_path) as store:
        for trial in expand_trials(load_spec(spec_path), "standard"):
            template = templates.get((trial.section, trial.agent,
                                      cell_key(trial.problem_kwargs), trial.seed % 2))
            if template is None:
                continue  # an agent added after the published run: no row to copy
            store.put(Row(**{
                **template, "key": trial.key, "benchmark": trial.benchmark, "seed": trial.seed,
                "metrics": shaken(template["metrics"], trial.seed),
                "units": [shaken(u, trial.seed) for u in template["units"]]}))
            count += 1
    return count


def timed(command: list[str], old: bool, cache: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``papergym`` command in a fresh process, with its cache in
    ``cache``."""
    code = (OLD_PATH if old else "") + (
        "\nimport sys\nfrom papergym.cli import main\nsys.exit(main(sys.argv[1:]))\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *command], capture_output=True, text=True,
                          env={**os.environ, "MPLBACKEND": "Agg",
                               "PAPERGYM_CACHE_DIR": str(cache)})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--repeats", type=int, default=1, help="best of this many runs")
    args = parser.parse_args()

    from papergym.leaderboard.scoring import cell_key

    templates, rows_per_seed = {}, {}
    for line in PUBLISHED.read_text().splitlines():
        row = json.loads(line)
        templates[(row["section"], row["agent"], cell_key(row["problem_kwargs"]), row["seed"])] = row
        if row["seed"] == 0:
            rows_per_seed[row["section"]] = rows_per_seed.get(row["section"], 0) + 1

    print(f"{'rows':>6} {'command':<18} {'new wall':>9} {'new cpu':>8} {'old wall':>9} "
          f"{'old cpu':>8} {'old/new (cpu)':>14}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        fresh = iter(range(10**6))

        def empty_cache() -> Path:
            return folder / f"cache_{next(fresh)}"

        for target in args.rows:
            spec_path = scaled_spec(rows_per_seed, target, folder)
            store = folder / f"store_{target}.sqlite"
            n = build_store(spec_path, templates, store)
            for name in ("leaderboard", "claims"):
                command = [name, str(spec_path), "--tier", "standard", "--store", str(store)]
                if name == "leaderboard":
                    command += ["--out", str(folder / "out")]
                old = min((timed(command, True, empty_cache()) for _ in range(args.repeats)),
                          key=lambda t: t[1])
                warm_cache = empty_cache()
                runs = {"cold": min((timed(command, False, warm_cache if i == 0 else empty_cache())
                                     for i in range(args.repeats)), key=lambda t: t[1])}
                if name == "leaderboard":
                    runs["warm"] = min((timed(command, False, warm_cache)
                                        for _ in range(args.repeats)), key=lambda t: t[1])
                for kind, new in runs.items():
                    label = f"{name} ({kind})" if name == "leaderboard" else name
                    print(f"{n:>6} {label:<18} {new[0]:>8.2f}s {new[1]:>7.2f}s {old[0]:>8.2f}s "
                          f"{old[1]:>7.2f}s {old[1] / new[1]:>13.1f}x", flush=True)
    print(f"(cpu = user + system seconds of the command's process; {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
