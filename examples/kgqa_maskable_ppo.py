"""Train a Gymnasium agent on ``papergym/KGBackjump-v1`` with action masking, then score it on
``KGQA-v2``'s test questions.

MaskablePPO (sb3-contrib, the optional extra ``papergym[sb3]``) samples only actions inside the
env's ``action_mask`` (FORWARD along listed relations, BACKJUMP to entries with untried
candidates, YIELD, HALT). The env's hybrid reward (+1 Hits@1, -0.01 per step, -0.05 per
redundant transition, 0 on HALT) is what it learns from; HALT earns nothing, so a policy that
learned only to stop scores Hits@1 = 0. It trains on the train questions of the standard
tier's world (5,000 entities, paths of up to 3 hops, mismatch 0.6, budget 10 KG calls; the
smoke world has no delayed dead ends) and prints the problem's metrics on 200 test questions
next to a uniform random valid-action policy's, then its BACKJUMPs on the delayed dead-end
questions.

What it reaches (seed 0, one core; measured): it never learns to BACKJUMP. At 20,000 steps
(about 3 min) Hits@1 0.645, delayed-dead-end Hits@1 0.000; at 60,000 Hits@1 0.660, delayed
0.000; at 200,000 (about 4.5 min) Hits@1 0.765 and delayed 0.938 (15 of 16), with 0.00
backjumps per question at every length: it learns to avoid the wrong branch (the near-miss
relation whose results have the wrong type) rather than to recover from it, which the
observation's expected-type features allow. Random valid actions: Hits@1 0.005, 0.46
backjumps per question. BoG-lite (``agents/kgqa/bog_lite.py``) learns backjumping from its
SFT trajectories and keeps it through RL.

    pip install -e '.[sb3]' -c constraints.txt
    python examples/kgqa_maskable_ppo.py --timesteps 200000
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import numpy as np
import torch
from gymnasium.wrappers import FilterObservation

import papergym
from papergym.envs.kgqa.sandbox import score_answer

KEYS = ["frontier", "candidates", "history", "action_mask"]  # the question's token ids dropped
# the standard tier's world (5,000 entities, paths of up to 3 hops: it has delayed dead ends,
# the smoke world has none) with the benchmark's question counts
WORLD = {"tier": "standard", "n_train": 500, "n_valid": 100, "n_test": 200}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    try:
        from sb3_contrib import MaskablePPO
        from sb3_contrib.common.wrappers import ActionMasker
    except ImportError as err:
        raise SystemExit("needs the optional extra: pip install -e '.[sb3]' -c constraints.txt") from err

    torch.set_num_threads(1)
    # training questions of the seed's public world; the test split is never used here
    env = papergym.make("papergym/KGBackjump-v1", split="train", question_seed=args.seed,
                        **WORLD)
    env = ActionMasker(FilterObservation(env, KEYS),
                       lambda e: e.unwrapped.episode.mask().astype(bool))
    model = MaskablePPO("MultiInputPolicy", env, n_steps=512, batch_size=128, gamma=1.0,
                        ent_coef=0.01, seed=args.seed, verbose=0)
    model.learn(total_timesteps=args.timesteps)

    def policy(obs: dict[str, np.ndarray]) -> int:
        shown = {k: obs[k] for k in KEYS}
        action, _ = model.predict(shown, action_masks=obs["action_mask"].astype(bool),
                                  deterministic=True)
        return int(action)

    rng = np.random.default_rng(args.seed)

    def random_policy(obs: dict[str, np.ndarray]) -> int:
        return int(rng.choice(np.flatnonzero(obs["action_mask"])))

    task = papergym.make_task("papergym/KGQA-v2", **WORLD)
    for name, artifact in (("MaskablePPO", policy), ("random valid action", random_policy)):
        m = task.evaluate(artifact, args.seed).metrics  # computed by the problem
        print(f"{name:20s} Hits@1 {m['hits1']:.3f}  F1 {m['f1']:.3f}  "
              f"KG calls {m['kg_calls']:.1f}  backjumps {m['backjumps']:.2f}  "
              f"delayed Hits@1 {m.get('hits1_delayed', float('nan')):.3f}")
    # BACKJUMP on delayed dead ends, per question (the problem's own scoring of each episode)
    world = task.world(args.seed, sealed=True)
    shown = replace(world, test=[])
    delayed = [q for q in world.test if q.mismatch == "delayed"]
    rows = [score_answer(q, task.answer_question(policy, shown, q)) for q in delayed]
    print(f"MaskablePPO on {len(rows)} delayed dead-end questions: backjumps per question "
          f"{np.mean([r['backjumps'] for r in rows]):.2f}, share with a backjump "
          f"{np.mean([r['backjumps'] > 0 for r in rows]):.2f}")


if __name__ == "__main__":
    main()
