"""kgqa: Backjump-on-Graph (Zhang et al., ICML 2026) — retrospective exploration for KG
question answering, as an LLM-free offline analogue.

Problems: ``papergym/KGQA-v2`` (Task: a question-answering routine or a policy is scored on
held-out test questions, each in a KG-call-budgeted sandbox) and ``papergym/KGBackjump-v1``
(Gymnasium env: FORWARD / BACKJUMP / YIELD / HALT over the same sandbox; scored by the same
Task). ``KGQA-v0`` / ``KGBackjump-v0`` and ``KGQA-v1`` are superseded and stay registered (v1:
redundant moves masked, optional answer-type verifier, exact mismatch share per split; v2: each
trial's synthetic KG drawn from its sealed seed, private to the problem).
Modules: ``phrases`` (relation phrases and alias tables written here), ``graph``,
``synth`` (synthetic typed KG with mediators and near misses), ``pykeen_kg`` (Nations,
Kinships, UMLS read from the pykeen wheel, never imported), ``similarity`` (n-gram TF-IDF
or MiniLM), ``questions`` (mismatch-controlled questions), ``sandbox``, ``backjump`` (the
four operations and the Env), ``task``.

Reconstruction decisions [recon] (the abstract names neither semantics nor numbers):
- FORWARD includes listing the new state's relations (traverse + expand = 2 KG calls on a new
  state; cached listings and re-traversals are free but re-traversal is redundant);
  BACKJUMP restores any stack entry without a KG call; YIELD answers the current state; HALT
  answers nothing.
- "Dead end" = no relation matching the current token (similarity below the backend's
  threshold: 0.45 n-gram, 0.5 MiniLM) or, all tokens used, no entity of the question's
  expected answer type (the question's constraint). Pykeen KGs have one type, so only the
  first kind occurs there; questions where the literal path silently answers wrongly are
  resampled, which lowers the realized mismatch share on dense KGs (Kinships, Nations).
- A token is "used" by a hop whose relation reaches the threshold (the state's pointer).
- Reward weights +1 / -0.05 / -0.01 (spec), budget truncation replaced by masking FORWARD.
"""

from papergym.registry import register

_PAPER = "zhang2026bog"
_CHANGELOG = {"v0": "initial release (superseded by v1)"}
_CHANGELOG_V1 = {"v0": "initial release",
                 "v1": "redundant moves masked, optional answer-type verifier (typed), exact "
                       "mismatch share per split, private sandbox world, standard budget 10"}
_SMOKE = {"kg": "synthetic", "n_entities": 200, "n_types": 8, "n_relations": 30,
          "max_hops": 2, "mismatch": 0.5, "n_train": 150, "n_valid": 25, "n_test": 50,
          "call_budget": 10, "similarity": "ngram", "train_kg_calls": 5_000}
_STANDARD = {"kg": "synthetic", "n_entities": 5000, "n_types": 20, "n_relations": 120,
             "max_hops": 3, "mismatch": 0.6, "n_train": 3000, "n_valid": 500,
             "n_test": 1000, "call_budget": 20, "similarity": "ngram",
             "train_kg_calls": 150_000}
_TIERS = {"smoke": _SMOKE, "standard": _STANDARD, "full": _STANDARD}

# v0 (superseded by v1): redundant BACKJUMPs loop to the step cap, the expected answer type
# is always given, and the mismatch share of a split is random.
register(
    "papergym/KGQA-v0",
    entry_point="papergym.envs.kgqa.task:KGQATask",
    kind="task",
    family="kgqa",
    paper=_PAPER,
    tiers=_TIERS,
    changelog=_CHANGELOG,
)

register(
    "papergym/KGBackjump-v0",
    entry_point="papergym.envs.kgqa.backjump:KGBackjumpEnv",
    kind="env",
    max_episode_steps="max_steps",
    task="papergym.envs.kgqa.task:KGQATask",
    family="kgqa",
    paper=_PAPER,
    tiers={k: {kk: vv for kk, vv in v.items()} for k, v in _TIERS.items()},
    changelog=_CHANGELOG,
)

# v1: the tight budget at which backjumping matters (10 KG calls: a beam catches up at 20)
_V1 = {"exact_mismatch": True}
_CHANGELOG_V1_TASK = {**_CHANGELOG_V1, "v1": _CHANGELOG_V1["v1"] + " (superseded by v2)"}
_CHANGELOG_V2 = {**_CHANGELOG_V1_TASK,
                 "v2": "the synthetic KG is private to the trial: drawn from the sealed seed "
                       "stream, a new KG per seed (v1: one public KG for every seed)"}
_TIERS_V1 = {"smoke": {**_SMOKE, **_V1},
             "standard": {**_STANDARD, **_V1, "call_budget": 10},
             "full": {**_STANDARD, **_V1, "call_budget": 10}}

register(
    "papergym/KGQA-v1",
    entry_point="papergym.envs.kgqa.task:KGQATaskV1",
    kind="task",
    family="kgqa",
    paper=_PAPER,
    tiers=_TIERS_V1,
    changelog=_CHANGELOG_V1_TASK,
)

register(
    "papergym/KGBackjump-v1",
    entry_point="papergym.envs.kgqa.backjump:KGBackjumpEnvV1",
    kind="env",
    max_episode_steps="max_steps",
    task="papergym.envs.kgqa.task:KGQATaskV1",
    family="kgqa",
    paper=_PAPER,
    tiers={k: dict(v) for k, v in _TIERS_V1.items()},
    changelog=_CHANGELOG_V1,
)

# v2: each trial's synthetic KG is drawn from its sealed seed (v1's was public through kg_seed).
# The Env is unchanged (KGBackjump-v1 trains on public worlds; its policies are scored here).
register(
    "papergym/KGQA-v2",
    entry_point="papergym.envs.kgqa.task:KGQATaskV2",
    kind="task",
    family="kgqa",
    paper=_PAPER,
    tiers=_TIERS_V1,
    changelog=_CHANGELOG_V2,
)
