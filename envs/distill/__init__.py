"""distill: lossless distillation of transformers into hybrid xLSTM students (Hauzenberger et
al. 2026, "Effective Distillation to Hybrid xLSTM Architectures", arXiv 2603.15590) — the critical
tolerance α* of the Win-and-Tie rate for the hybrid mLSTM + sliding-window student, its merged
domain experts, and linearized baselines, against a teacher the problem trains per seed.

Problem: ``papergym/LosslessDistill-v0`` (a Task: the agent returns a causal student module).
Modules: ``tasks`` (domains, generators, the train/eval split), ``teacher`` (the problem-owned
teacher, its training and its streamed outputs), ``wintie`` (C_α, α*, α_all), ``task`` (the
metered view and the evaluator). The students' mixers live in ``papergym.tinylm`` (``mlstm``,
``attention``, ``linearized``).
"""

from papergym.registry import register

# a pilot (d=64 x 2 layers, 1,800 steps) passed vartrack4 (1.0), sort5 (0.95), dyck8 (0.88), copy16 (1.0),
# recall8 (0.31, at the eligibility line); add3 (0.01) and recall16 (0.18) failed, so they are full-tier only
_STANDARD_TASKS = ["vartrack3", "vartrack4", "sort5", "dyck8", "recall8", "copy16", "copy24", "hmm32"]
_FULL_TASKS = ["add3", "add5", "mul2", "vartrack6", "sort8", "dyck12", "recall16", "recall24", "recall48",
               "copy24", "copy32", "hmm64"]

register(
    "papergym/LosslessDistill-v0",
    entry_point="papergym.envs.distill.task:LosslessDistillTask",
    kind="task",
    family="distill",
    paper="hauzenberger2026",
    tiers={"smoke": {"tasks": ["vartrack3", "recall8", "copy16", "hmm32"], "d_model": 32, "n_layer": 2,
                     "n_head": 2, "ctx": 48, "teacher_steps": 150, "teacher_batch": 64,
                     "token_budget": 40_000, "eval_items": 64},
           "standard": {"tasks": _STANDARD_TASKS, "d_model": 64, "n_layer": 2, "n_head": 2, "ctx": 64,
                        "teacher_steps": 1200, "teacher_batch": 64, "token_budget": 600_000,
                        "eval_items": 200},
           "full": {"tasks": _FULL_TASKS, "d_model": 256, "n_layer": 6, "n_head": 8, "ctx": 256,
                    "teacher_steps": 20_000, "teacher_batch": 128, "teacher_lr": 1e-3,
                    "token_budget": 20_000_000, "eval_items": 1000}},
    changelog={"v0": "initial release"},
)
