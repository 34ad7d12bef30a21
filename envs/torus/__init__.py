"""torus: Torus Graphs for Large Scale Neural Phase Analysis (Goffinet, Hanks & Carlson, ICML 2026).

Problems (Tasks): ``papergym/TGFit-v0`` (recover phi and the edges of a torus graph from Gibbs
samples), ``papergym/TGScaling-v0`` (seconds per iteration of an estimator against d),
``papergym/TGHMM-v0`` (coupling-only hidden states), ``papergym/TGTransferEntropy-v1``
(directed 1:2 coupling of an autoregressive torus graph). ``TGTransferEntropy-v0`` stays
registered and is superseded: its first-harmonic coupling is one a linear VAR-Granger test on
(cos, sin) captures as well as transfer entropy. Modules: ``tg`` (density, score,
conditionals, Gibbs, generators), ``fit``, ``states``, ``transfer``.
"""

from papergym.registry import register

_PAPER = "goffinet2026torus"
_CHANGELOG = {"v0": "initial release"}
_CHANGELOG_TE_V0 = {"v0": "initial release (superseded by v1)"}
_CHANGELOG_TE_V1 = {"v0": "initial release",
                    "v1": "cross-channel coupling through the source's second harmonic (1:2), "
                          "which a linear VAR on (cos, sin) cannot see"}
_GIBBS_STD = {"chains": 1000, "burn": 200, "thin": 3}

register("papergym/TGFit-v0", entry_point="papergym.envs.torus.fit:TGFitTask", kind="task",
         family="torus", paper=_PAPER, changelog=_CHANGELOG,
         tiers={"smoke": {"d": 5, "n": 5000},
                "standard": {"d": 20, "n": 20000, **_GIBBS_STD},
                "full": {"d": 100, "n": 50000, "chains": 2000, "burn": 500, "thin": 5}})

register("papergym/TGScaling-v0", entry_point="papergym.envs.torus.fit:TGScalingTask", kind="task",
         family="torus", paper=_PAPER, changelog=_CHANGELOG,
         tiers={"smoke": {"dims": [20, 40], "exact_dims": [4, 8], "iterations": 5},
                "standard": {"dims": [100, 200, 400, 800], "batch": 32, "iterations": 20,
                             "exact_dims": [10, 20, 30, 40], "exact_n": 2000},
                "full": {"dims": [100, 200, 400, 800, 2000], "batch": 32, "iterations": 20,
                         "exact_dims": [5, 10, 20, 30, 40], "exact_n": 5000}})

register("papergym/TGHMM-v0", entry_point="papergym.envs.torus.states:TGHMMTask", kind="task",
         family="torus", paper=_PAPER, changelog=_CHANGELOG,
         tiers={"smoke": {"k": 2, "d": 4, "steps": 500},
                "standard": {"k": 3, "d": 10, "steps": 1000},
                "full": {"k": 4, "d": 30, "steps": 10000}})

register("papergym/TGTransferEntropy-v0", entry_point="papergym.envs.torus.transfer:TGTransferEntropyTask",
         kind="task", family="torus", paper=_PAPER, changelog=_CHANGELOG_TE_V0,
         tiers={"smoke": {"channels": 3, "lags": 2, "steps": 2000, "pairs": 4, "pair_steps": 2000},
                "standard": {"channels": 8, "lags": 3, "steps": 5000, "pairs": 20, "pair_steps": 5000},
                "full": {"channels": 30, "lags": 3, "steps": 20000, "pairs": 50, "pair_steps": 20000}})

register("papergym/TGTransferEntropy-v1",
         entry_point="papergym.envs.torus.transfer:TGTransferEntropyV1Task",
         kind="task", family="torus", paper=_PAPER, changelog=_CHANGELOG_TE_V1,
         tiers={"smoke": {"channels": 3, "lags": 2, "steps": 2000, "pairs": 4, "pair_steps": 2000},
                "standard": {"channels": 8, "lags": 3, "steps": 5000, "pairs": 20, "pair_steps": 2000},
                "full": {"channels": 30, "lags": 3, "steps": 20000, "pairs": 50, "pair_steps": 20000}})
