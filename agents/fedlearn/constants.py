"""The theory step constants of the two parameter-free methods, from (S, K, T) alone.

Each method sets (beta, eta, gamma) — momentum weight, normalized local step, server step —
from the federation's participants S, local steps K and rounds T:

- ParFreFL (Theorem 1 [rev]): beta = sqrt(SK/T), eta = 1/(K (SKT)^{1/4}),
  gamma = (SK)^{1/4} / T^{3/4};
- PAdaMFed ([3p], the VR variant's): eta = 1/(KT), gamma = beta = (SK)^{1/3} / T^{2/3}.

beta is clipped to <= 1 in both. Either method runs at either schedule (its config key
``constants``), so that a comparison of the two methods can hold the step constants matched
rather than compare two schedules. At the standard tier (S, K, T = 10, 2, 100) ParFreFL's are
(0.447, 0.0748, 0.0669) and PAdaMFed's (0.126, 0.005, 0.126).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal, NamedTuple

from papergym.envs.fedlearn.protocol import FedSetting

Schedule = Literal["parfrefl", "padamfed"]


class StepConstants(NamedTuple):
    beta: float  # momentum weight
    eta: float  # normalized local step
    gamma: float  # server step


def parfrefl_constants(setting: FedSetting) -> StepConstants:
    """ParFreFL's Theorem 1 [rev]: functions of S, K, T only."""
    S, K, T = setting.participants, setting.local_steps, setting.rounds
    return StepConstants(beta=min(1.0, math.sqrt(S * K / T)),
                         eta=1.0 / (K * (S * K * T) ** 0.25),
                         gamma=(S * K) ** 0.25 / T**0.75)


def padamfed_constants(setting: FedSetting) -> StepConstants:
    """PAdaMFed [3p]: eta = 1/(KT), gamma = beta = (SK)^{1/3}/T^{2/3} (<= 1)."""
    S, K, T = setting.participants, setting.local_steps, setting.rounds
    beta = min(1.0, (S * K) ** (1 / 3) / T ** (2 / 3))
    return StepConstants(beta=beta, eta=1.0 / (K * T), gamma=beta)


SCHEDULES: dict[str, Callable[[FedSetting], StepConstants]] = {
    "parfrefl": parfrefl_constants,
    "padamfed": padamfed_constants,
}


def theory_constants(schedule: Schedule, setting: FedSetting) -> StepConstants:
    """The constants of ``schedule`` (a method's name) at ``setting``."""
    return SCHEDULES[schedule](setting)
