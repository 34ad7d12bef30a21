"""The trivial end of the scale: the backbone unchanged (a zero update after every task)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from papergym.agent import Agent


class Frozen(Agent):
    id: ClassVar[str] = "frozen"
    family: ClassVar[str] = "continual"
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = "gu2026eblora"

    def solve(self, view: Any, budget: Any, seed: int) -> str:
        for _ in range(int(view.num_tasks)):
            view.next_task()
            view.submit([np.zeros(shape) for shape in view.adapted_shapes])
        return view.finish()
