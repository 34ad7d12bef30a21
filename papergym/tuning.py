"""Hyper-parameter grids that an agent tunes through its problem's shared tuning runs.

An agent that mixes in :class:`GridTuned` names its lr grid (and, optionally, one setting tuned
beside lr, its ``knob``); :meth:`GridTuned.grid` lists the configurations and
:meth:`GridTuned.key` names each training run for the problem's tuning cache, so two trials
that need the same configuration share one run.
"""

from __future__ import annotations

from typing import Any, ClassVar


class GridTuned:
    """The lr x knob grid of an agent whose ``config`` is a pydantic model."""

    lr_grid: ClassVar[tuple[float, ...]] = ()
    knob: ClassVar[str | None] = None  # a method setting tuned beside lr (e.g. ResRL's rank)
    knob_grid: ClassVar[tuple[Any, ...]] = ()

    def grid(self) -> list[Any]:
        """The configurations tuned: every lr of ``lr_grid`` times every value of the knob."""
        knobs = self.knob_grid if self.knob else (None,)
        out = []
        for k in knobs:
            for lr in self.lr_grid:
                update: dict[str, Any] = {"lr": lr}
                if self.knob:
                    update[self.knob] = k
                out.append(self.config.model_copy(update=update))  # type: ignore[attr-defined]
        return out

    def key(self, cfg: Any) -> str:
        """Names every decision of a training run: agent, code hash, configuration."""
        items = ",".join(f"{k}={v!r}" for k, v in sorted(cfg.model_dump().items()))
        return f"{self.qualified_id()}@{self.code_hash()}({items})"  # type: ignore[attr-defined]
