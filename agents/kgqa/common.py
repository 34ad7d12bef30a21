"""Shared machinery of the kgqa agents (not an agent): the BoG policy network, the
synthetic-trajectory expert, behaviour cloning, the deterministic policy artifact, and the
selection of a routine's setting on validation questions."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import torch
from torch import nn

from papergym.envs.kgqa.backjump import (
    BACKJUMP0,
    CAND_FEATURES,
    FORWARD0,
    FRONTIER_FEATURES,
    HALT,
    HIST_FEATURES,
    N_ACTIONS,
    YIELD,
    BackjumpEpisode,
)

OBS_KEYS = ("frontier", "candidates", "history", "action_mask")


def mlp(n_in: int, hidden: int, n_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                         nn.Tanh(), nn.Linear(hidden, n_out))


class BackjumpPolicyNet(nn.Module):
    """Candidate scorer -> FORWARD(i) logits, history scorer -> BACKJUMP(j) logits, global MLP
    -> YIELD / HALT logits; masked softmax over all 42 actions (spec: bog_lite policy)."""

    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.candidate = mlp(CAND_FEATURES + FRONTIER_FEATURES, hidden, 1)
        self.backjump = mlp(HIST_FEATURES + FRONTIER_FEATURES, hidden, 1)
        self.glob = mlp(FRONTIER_FEATURES, hidden, 2)

    def forward(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        frontier = obs["frontier"]
        cands, hist = obs["candidates"], obs["history"]
        f_c = frontier[:, None, :].expand(-1, cands.shape[1], -1)
        f_h = frontier[:, None, :].expand(-1, hist.shape[1], -1)
        forward_logits = self.candidate(torch.cat([cands, f_c], -1)).squeeze(-1)
        backjump_logits = self.backjump(torch.cat([hist, f_h], -1)).squeeze(-1)
        logits = torch.cat([self.glob(frontier), forward_logits, backjump_logits], -1)
        return logits.masked_fill(obs["action_mask"] == 0, -1e9)


def seeded_net(hidden: int, seed: int) -> BackjumpPolicyNet:
    """Initialize from ``seed`` without touching the caller's global torch RNG."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return BackjumpPolicyNet(hidden)


def stack_obs(observations: list[dict[str, np.ndarray]]) -> dict[str, torch.Tensor]:
    return {k: torch.as_tensor(np.stack([o[k] for o in observations]),
                               dtype=torch.float32) for k in OBS_KEYS}


class NetPolicy:
    """The artifact: greedy (argmax) action of a trained net; BACKJUMP maskable (ablation)."""

    def __init__(self, net: BackjumpPolicyNet, allow_backjump: bool = True) -> None:
        self.net = net.eval()
        self.allow_backjump = allow_backjump

    def __call__(self, obs: dict[str, np.ndarray]) -> int:
        obs = dict(obs)
        if not self.allow_backjump:
            mask = obs["action_mask"].copy()
            mask[BACKJUMP0:] = 0
            obs["action_mask"] = mask
        with torch.no_grad():
            logits = self.net(stack_obs([obs]))[0]
        return int(torch.argmax(logits))


def _candidate_index(episode: BackjumpEpisode, relation: int) -> int | None:
    sid = episode.stack[-1]
    cands = episode.candidates(sid)
    if relation not in cands or not episode.mask()[FORWARD0 + cands.index(relation)]:
        return None
    return cands.index(relation)


def expert_trajectory(episode: BackjumpEpisode, rng: np.random.Generator,
                      wrong_branch: bool, sibling_prob: float = 0.5,
                      ) -> list[tuple[dict[str, np.ndarray], int]] | None:
    """Synthetic SFT trajectory [recon of the abstract's "synthetic data containing the
    atomic operations"]: FORWARD along the gold path then YIELD; with ``wrong_branch``, a
    wrong candidate (the most similar non-gold relation, usually a near miss, or with
    ``sibling_prob`` the most similar non-gold relation of the gold's range bucket, e.g.
    another mediator hop) is taken at a random depth, followed while it still matches the
    next token (a possibly delayed dead end), then BACKJUMP to the entry before the wrong
    choice and the gold continuation. The injected wrong steps are executed but not imitated
    (loss-masked) [recon]: cloning them would teach the very error the trajectory recovers from.
    Returns None when the gold relation is not listed or the budget does not allow it."""
    gold = episode.question.gold_path
    pairs: list[tuple[dict[str, np.ndarray], int]] = []
    wrong_at = int(rng.integers(len(gold))) if wrong_branch else -1
    # Gold costs 2 calls per hop; a wrong branch needs 2 per extra hop on top.
    spare = episode.sandbox.calls_left - 2 * len(gold)

    def act(action: int, record: bool = True) -> None:
        if record:
            pairs.append((episode.observation(), action))
        episode.step(action)

    for depth, relation in enumerate(gold):
        if depth == wrong_at and spare >= 2:
            sid = episode.stack[-1]
            cands = episode.candidates(sid)
            wrong = [i for i, r in enumerate(cands) if r != relation]
            gold_i = cands.index(relation) if relation in cands else -1
            feats = episode.candidate_features(sid)
            if gold_i >= 0 and feats is not None and rng.random() < sibling_prob:
                # A sibling that looks like the gold hop (same range bucket), e.g. another
                # mediator first hop: teaches trying siblings in turn.
                bucket = feats[gold_i, 6:10].argmax()
                siblings = [i for i in wrong if feats[i, 6:10].argmax() == bucket]
                wrong = siblings or wrong
            if wrong:
                land = len(episode.stack) - 1
                act(FORWARD0 + wrong[0], record=False)  # the injected error is not imitated
                spare -= 2
                wsid = episode.stack[-1]
                wc = episode.candidates(wsid)
                feats = episode.candidate_features(wsid)
                if (spare >= 2 and wc and feats is not None
                        and feats[0, 0] >= episode.match_threshold and rng.random() < 0.5):
                    act(FORWARD0, record=False)  # still matching: a delayed dead end
                act(BACKJUMP0 + land)
        index = _candidate_index(episode, relation)
        if index is None:
            return None
        act(FORWARD0 + index)
    if not episode.mask()[YIELD]:
        return None
    act(YIELD)
    return pairs


def behaviour_clone(net: BackjumpPolicyNet, pairs: list[tuple[dict[str, np.ndarray], int]],
                    epochs: int, lr: float, batch_size: int, generator: torch.Generator,
                    ) -> list[float]:
    """Cross-entropy on (observation, expert action) pairs; returns the loss per epoch."""
    if not pairs:
        return []
    obs = stack_obs([o for o, _ in pairs])
    actions = torch.as_tensor([a for _, a in pairs], dtype=torch.long)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    losses = []
    for _ in range(epochs):
        order = torch.randperm(len(actions), generator=generator)
        total = 0.0
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            logits = net({k: v[idx] for k, v in obs.items()})
            loss = nn.functional.cross_entropy(logits, actions[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(idx)
        losses.append(total / len(actions))
    return losses


def build_sft_pairs(view: Any, questions: list, rng: np.random.Generator,
                    wrong_frac: float) -> list[tuple[dict[str, np.ndarray], int]]:
    pairs: list[tuple[dict[str, np.ndarray], int]] = []
    for question in questions:
        wrong = bool(rng.random() < wrong_frac)
        trajectory = expert_trajectory(view.episode(question), rng, wrong)
        if trajectory is None and wrong:
            trajectory = expert_trajectory(view.episode(question), rng, False)
        if trajectory is not None:
            pairs.extend(trajectory)
    return pairs


__all__ = ["BackjumpPolicyNet", "NetPolicy", "behaviour_clone", "build_sft_pairs",
           "expert_trajectory", "stack_obs", "N_ACTIONS", "HALT", "YIELD"]


def validation_hits(routine: Any, view: Any, questions: Iterable[Any]) -> int:
    """Top-1 hits of ``routine.answer`` on validation questions, each in its own sandbox."""
    hits = 0
    for q in questions:
        sandbox = view.sandbox(q)
        routine.answer(q.public(), sandbox)
        ranking = sandbox.submitted or []
        hits += bool(ranking) and ranking[0] in set(q.gold_answers)
    return hits


# The one tuning protocol (papergym.tuning) for the baselines selected on valid questions: each
# evaluates TUNING_CONFIGS configurations, its whole finite space with its defaults first
# (papergym.tuning.grid_candidates). The problem grants no tuning_runs budget of its own, so the
# family fixes it here, the same for every agent (the old grids gave ToG-lite 12, RoG-lite and
# chronological DFS 3).
TUNING_CONFIGS = 12


def select_on_valid(routines: Iterable[Any], view: Any, questions: list[Any]) -> Any:
    """The routine with the most top-1 validation hits (the first best wins ties); a single
    routine is returned as is, with no validation questions spent on it."""
    routines = list(routines)
    if len(routines) == 1:
        return routines[0]
    best, best_hits = None, -1
    for routine in routines:
        hits = validation_hits(routine, view, questions)
        if hits > best_hits:
            best, best_hits = routine, hits
    if best is None:
        raise ValueError("no setting to select from")
    return best
