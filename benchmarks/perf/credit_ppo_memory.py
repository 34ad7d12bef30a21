"""Peak memory of Stable-Baselines3 PPO on ``StrategicCredit-v0`` (standard tier) with the
population summarized (``papergym.wrappers.SummarizePopulation``: 56 numbers) against the raw
Dict observation (12,850 x 11 features, 12,850 labels and theta, flattened: 154,211 numbers).

Each variant runs in a fresh process (``--variant``), so one's allocations do not hide the
other's; the script prints each peak RSS and their ratio.

    python benchmarks/perf/credit_ppo_memory.py [--steps 2048]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import warnings


def run(variant: str, steps: int) -> float:
    """PPO (SB3 defaults, n_steps = ``steps``) for ``steps`` steps; peak RSS in MiB."""
    warnings.simplefilter("ignore")
    from gymnasium.wrappers import FlattenObservation
    from stable_baselines3 import PPO

    import papergym
    from papergym.wrappers import SummarizePopulation

    env = papergym.make("papergym/StrategicCredit-v0", tier="standard")
    env = SummarizePopulation(env) if variant == "summary" else FlattenObservation(env)
    PPO("MlpPolicy", env, n_steps=steps, seed=0, device="cpu").learn(steps)
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2048)
    parser.add_argument("--variant", choices=("summary", "raw"))
    args = parser.parse_args()
    if args.variant:
        print(f"{run(args.variant, args.steps):.0f}")
        return
    peaks = {}
    for variant in ("summary", "raw"):
        out = subprocess.run([sys.executable, __file__, "--variant", variant, "--steps",
                              str(args.steps)], capture_output=True, text=True, check=True)
        peaks[variant] = float(out.stdout.split()[-1])
        print(f"{variant}: peak RSS {peaks[variant]:,.0f} MiB")
    print(f"raw / summary: {peaks['raw'] / peaks['summary']:.1f}x")


if __name__ == "__main__":
    main()
