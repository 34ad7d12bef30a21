"""Learner against environment per trial, for the families whose agents train with the shared
PPO / group-advantage code (papergym.ppo): rlvr (GRPO, W-REINFORCE, ResRL; TIS, MIS and VCPO on
the lagged twin) and kgqa (BoG-lite's SFT + group-relative RL).

Each agent's ``solve`` runs on the problem's train view, with every call into the problem's
objects metered (exclusive CPU time, nested calls charged to the innermost one):

- env: the problem's own work per step. rlvr: the verifier (``view.verify``, called inside
  the rollout); kgqa: the KG machine (``view.episodes`` / ``episode`` / ``sandbox`` and every
  call on the episode batches, episodes and sandboxes they return);
- generation (rlvr): the rest of ``view.rollout`` / ``view.stream``, i.e. sampling the learner's
  own policy with the KV cache on the problem's side: inference, the learner's cost;
- learner: everything else in ``solve`` (SFT, gradient updates, the agent's inference).

Printed per agent: CPU seconds of each part, the learner's share of the trial's solve time
(learner + generation for rlvr) and the ratio solve / env, the humanoid script's number. The
problem's SFT base (rlvr) is built and cached before timing, as the runner's cache does.
rlvr runs the smoke tier's policy (GPT d = 32, 1 layer; the standard tier's d = 64 x 2 only
makes the learner's share larger), kgqa the spec's standard tier with fewer RL updates.
One thread, CPU time (``time.process_time``).

    .venv/bin/python benchmarks/perf/learner_env_ratio.py [--rlvr-updates 8] [--kgqa-updates 20]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from typing import Any

import torch

import papergym
from papergym.agent import REGISTRY

RLVR_AGENTS = {"papergym/RLVRAddScratch-v2": ["grpo", "w_reinforce", "resrl"],
               "papergym/RLVRAddScratch-v2 (lag 1)": ["tis", "mis", "vcpo"]}
KGQA_AGENTS = ["bog_lite"]
# the kgqa spec's standard tier (benchmarks/specs/kgqa.yaml) and BoG-lite's configuration there
KGQA_STANDARD = dict(call_budget=10, max_hops=3, n_train=500, n_valid=100, n_test=200,
                     similarity="ngram", kg="synthetic", n_entities=5000, n_types=20,
                     n_relations=120, mismatch=0.6, typed=True)
BOG_STANDARD = dict(sft_epochs=10, batch_size=32, questions_per_update=16, group_size=8)


class Meter:
    """Exclusive CPU seconds per label: a call's time less that of the metered calls inside it."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._stack: list[list[float]] = []  # [start, time of metered children]

    def wrap(self, function, label: str, wrap_result=None):
        def metered(*args, **kwargs):
            self._stack.append([time.process_time(), 0.0])
            try:
                result = function(*args, **kwargs)
            finally:
                start, children = self._stack.pop()
                elapsed = time.process_time() - start
                self.seconds[label] += elapsed - children
                if self._stack:
                    self._stack[-1][1] += elapsed
            return wrap_result(result) if wrap_result is not None else result
        return metered


class Metered:
    """A proxy that meters every public method call on ``target`` under ``label``; results
    that are objects of the problem's code (papergym.envs.*) are metered the same way."""

    def __init__(self, target: Any, meter: Meter, label: str, labels: dict[str, str] | None = None):
        self._target, self._meter, self._label, self._labels = target, meter, label, labels or {}

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name.startswith("_") or not callable(value):
            return value
        return self._meter.wrap(value, self._labels.get(name, self._label), self._proxy)

    def _proxy(self, result: Any) -> Any:
        if type(result).__module__.startswith("papergym.envs."):
            return Metered(result, self._meter, self._label)
        return result


def rlvr_rows(updates: int) -> list[tuple[str, str, Meter, float]]:
    rows = []
    for label, agents in RLVR_AGENTS.items():
        problem_id = label.split()[0]
        kwargs = {"responses": 16 * 8 * updates} | ({"lag": 1} if "lag" in label else {})
        for agent_id in agents:
            task = papergym.make_task(problem_id, tier="smoke", **kwargs)
            budget = task.budget
            view = task.train_view(0, budget)
            view.base_policy()  # the problem's SFT base, built or read from the cache
            meter = Meter()
            view.verify = meter.wrap(view.verify, "env")  # the rollout calls it on the instance
            proxy = Metered(view, meter, "generation",
                            labels={"base_policy": "learner", "validation_score": "learner"})
            agent = REGISTRY.get(agent_id, family="rlvr")({"prompts_per_batch": 16})
            start = time.process_time()
            agent.solve(proxy, budget, 0)
            rows.append((f"rlvr {label}", agent_id, meter, time.process_time() - start))
    return rows


def kgqa_rows(updates: int) -> list[tuple[str, str, Meter, float]]:
    rows = []
    for agent_id in KGQA_AGENTS:
        task = papergym.make_task("papergym/KGQA-v1", tier="standard", **KGQA_STANDARD)
        budget = task.budget
        view = task.train_view(0, budget)
        meter = Meter()
        agent = REGISTRY.get(agent_id, family="kgqa")(BOG_STANDARD | {"rl_updates": updates})
        start = time.process_time()
        agent.solve(Metered(view, meter, "env"), budget, 0)
        rows.append(("kgqa standard", agent_id, meter, time.process_time() - start))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rlvr-updates", type=int, default=8,
                        help="GRPO updates of 16 prompts x 8 responses (smoke-tier policy)")
    parser.add_argument("--kgqa-updates", type=int, default=20,
                        help="BoG-lite RL updates after its SFT (standard tier: 100)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    # torch's first optimizer imports torch._dynamo (~1 CPU-s): once, before any timing
    torch.optim.Adam([torch.zeros(1, requires_grad=True)])
    rows = rlvr_rows(args.rlvr_updates) + kgqa_rows(args.kgqa_updates)
    print(f"{'problem':<40} {'agent':<12} {'solve s':>8} {'env s':>8} {'generation s':>12} "
          f"{'learner s':>9} {'learner share':>13} {'solve/env':>9}")
    for problem, agent_id, meter, solve in rows:
        env, generation = meter.seconds["env"], meter.seconds["generation"]
        learner = solve - env - generation
        print(f"{problem:<40} {agent_id:<12} {solve:>8.2f} {env:>8.3f} {generation:>12.2f} "
              f"{learner:>9.2f} {(solve - env) / solve:>13.1%} {solve / max(env, 1e-9):>9.1f}")
    print("learner share = (solve - env) / solve: the learner's part of the trial's training "
          "(rlvr: sampling its own policy included)")


if __name__ == "__main__":
    main()
