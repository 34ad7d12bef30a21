"""The rlvr sanity figure, computed from a published tier (never typed by hand).

Reads ``leaderboard/published/<bench>/trials.jsonl`` and prints the README sentence
"GRPO raises Avg@16 from X to Y in N updates on T", with X and Y the means over seeds of the
SFT base and of GRPO, and a 95% percentile-bootstrap interval of the gain over the eval prompts
(each unit, a block of eval prompts, averaged over the seeds first: every seed answers the
same sealed prompts).

    .venv/bin/python benchmarks/perf/rlvr_sanity.py [bench] [agent]   # default rlvr_resrl grpo
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def main(bench: str = "rlvr_resrl", agent: str = "grpo", metric: str = "avg_at_16") -> str:
    rows = [json.loads(line) for line in
            (ROOT / "leaderboard" / "published" / bench / "trials.jsonl").read_text().splitlines()
            if line.strip()]
    rows = [r for r in rows if r.get("tier") == "standard" and not r.get("error")]
    base = {r["seed"]: r for r in rows if r["agent"] == "sft_base"}
    runs = {r["seed"]: r for r in rows if r["agent"] == agent}
    seeds = sorted(set(base) & set(runs))
    if not seeds:
        raise SystemExit(f"{bench}: no seeds with both sft_base and {agent}")
    x = float(np.mean([base[s]["metrics"][metric] for s in seeds]))
    y = float(np.mean([runs[s]["metrics"][metric] for s in seeds]))
    updates = int(np.median([runs[s]["metrics"]["updates"] for s in seeds]))
    gains: dict[int, list[float]] = {}
    for s in seeds:
        b = {u["instance"]: u[metric] for u in base[s].get("units", []) if metric in u}
        for u in runs[s].get("units", []):
            if metric in u and u["instance"] in b:
                gains.setdefault(u["instance"], []).append(u[metric] - b[u["instance"]])
    ci = ""
    if gains:
        per_prompt = np.array([np.mean(v) for v in gains.values()])
        rng = np.random.default_rng(0)
        boot = rng.choice(per_prompt, size=(10_000, per_prompt.size)).mean(1)
        lo, hi = np.percentile(boot, [2.5, 97.5])
        ci = (f" (gain {per_prompt.mean():+.3f}, 95% bootstrap CI [{lo:+.3f}, {hi:+.3f}] over "
              f"{per_prompt.size} blocks of eval prompts)")
    problem = runs[seeds[0]]["problem_id"]
    line = (f"GRPO raises Avg@16 from {x:.3f} to {y:.3f} in {updates} updates on `{problem}` "
            f"(standard tier, mean of {len(seeds)} seeds){ci}.")
    print(line)
    return line


if __name__ == "__main__":
    main(*sys.argv[1:])
