"""The artifact an algorithm hands to FedRounds-v0: a server strategy and client policies.

FedRounds-v0's clients are PettingZoo agents; the server is not. An algorithm is a
:class:`FedAlgorithm`: ``make_server()`` builds its :class:`ServerStrategy` (passed to
``parallel_env(server=...)``) and ``make_client(client_id, oracle, setting)`` builds the
policy of one client from its own gradient-oracle handle only. The env, never the
algorithm, encodes, decodes and charges every message in both directions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from papergym.envs.fedlearn import codec
from papergym.envs.fedlearn.codec import Payload

UPLINK_SLOTS = 2  # U
DOWNLINK_SLOTS = 3  # D


@dataclass(frozen=True)
class FedSetting:
    """What every party knows about a run (the constants parameter-free methods may use)."""

    num_clients: int  # N
    participants: int  # S per round
    local_steps: int  # K oracle calls per participant per round
    batch_size: int | None  # B (None: full local batch)
    rounds: int  # T_max
    dim: int  # p
    data: str
    uplink_slots: int = UPLINK_SLOTS
    downlink_slots: int = DOWNLINK_SLOTS


class ServerStrategy:
    """The server side of an algorithm; the env calls it between parallel steps."""

    def reset(self, theta0: np.ndarray, setting: FedSetting) -> None:
        raise NotImplementedError

    def downlink(self, participants: list[int]) -> dict:
        """The message broadcast to this round's participants (a ``codec`` message)."""
        raise NotImplementedError

    def aggregate(self, uplinks: dict[int, Payload]) -> np.ndarray:
        """Fold in the decoded uplinks of this round's participants; return theta^{t+1}."""
        raise NotImplementedError


class ClientPolicy:
    """One client: ``policy(observation) -> action`` (its uplink message)."""

    def __call__(self, observation: dict) -> dict:
        raise NotImplementedError


@dataclass(frozen=True)
class FedAlgorithm:
    """The artifact of a fedlearn agent.

    cache_key: a string that determines every decision of the algorithm (agent id, config,
        code hash), or None; the problem uses it to reuse tuning runs it already computed.
    constants_verified: False while the update rule is reconstructed (shown in tables).
    """

    name: str
    make_server: Callable[[], ServerStrategy]
    make_client: Callable[[int, Any, FedSetting], ClientPolicy]
    cache_key: str | None = None
    constants_verified: bool = True
    overridden: bool = False
    info: tuple[tuple[str, float], ...] = ()  # e.g. chosen step sizes, for the table


class AveragingServer(ServerStrategy):
    """Plain averaging (the env's default): send theta, add the mean of uplink slot 0."""

    def reset(self, theta0, setting):
        self.theta, self.setting = np.array(theta0, dtype=np.float64), setting

    def downlink(self, participants):
        s = self.setting
        return codec.build_message(s.downlink_slots, s.dim, [codec.dense(self.theta)])

    def aggregate(self, uplinks):
        if uplinks:
            self.theta = self.theta + np.mean([u.vector(0) for u in uplinks.values()], axis=0)
        return self.theta
