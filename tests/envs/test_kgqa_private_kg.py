"""KGQA-v2: the knowledge graph is private to the problem. No attribute of the training view
reaches it (tests/envs/test_kgqa_unreachable.py); here, an agent that knows its seed and every
public argument cannot rebuild it either, in-process or from the isolated agent process the
runner gives it (v1's KG was a public function of ``kg_seed``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import papergym
from papergym import cache
from papergym.envs.kgqa.sandbox import build_kg_from_kwargs
from papergym.problem import set_eval_salt

SYNTH = ("n_entities", "n_types", "n_relations", "mediator_frac", "near_miss_frac")


@pytest.fixture
def salted():
    set_eval_salt(bytes(range(16)))  # as the runner does in the problem process
    try:
        yield
    finally:
        set_eval_salt(None)


def rebuilt_share(problem_id: str, seed: int = 0) -> float:
    """Share of the view's train questions whose gold answers a KG rebuilt from the public
    arguments reproduces (the attack: build the KG with the seeds an agent can know)."""
    task = papergym.make_task(problem_id, tier="smoke")
    view = task.train_view(seed, task.budget)
    public = {k: task.world_kwargs[k] for k in SYNTH if k in task.world_kwargs}
    best = 0.0
    for kg_seed in (0, seed, task.world_kwargs.get("kg_seed", 0)):
        kg = build_kg_from_kwargs("synthetic", **public, kg_seed=kg_seed)
        hits = [kg.execute((q.topic,), q.gold_path) == tuple(sorted(q.gold_answers))
                for q in view.train]
        best = max(best, sum(hits) / len(hits))
    return best


def test_a_public_rebuild_reproduces_v1s_kg_but_not_v2s(salted):
    assert rebuilt_share("papergym/KGQA-v1") == 1.0  # the leak v2 closes
    assert rebuilt_share("papergym/KGQA-v2") < 0.05


def test_v2_draws_a_new_kg_per_seed_and_is_public_only_without_a_salt():
    task = papergym.make_task("papergym/KGQA-v2", tier="smoke")
    assert task.seed_world_kwargs(3)["kg_seed"] == 3  # unsalted: the public default
    set_eval_salt(bytes(range(16)))
    try:
        seeds = {task.seed_world_kwargs(s)["kg_seed"] for s in range(4)}
        assert len(seeds) == 4 and not seeds & {0, 1, 2, 3}
        world = task.world(0, sealed=True)  # the sealed test split shares the private KG
        view = task.train_view(0, task.budget)
        q = view.train[0]
        assert world.kg.execute((q.topic,), q.gold_path) == tuple(sorted(q.gold_answers))
    finally:
        set_eval_salt(None)


PROBER = '''
import gc
import os

from papergym.agent import Agent, AgentConfig


class Prober(Agent):
    """Looks for the knowledge graph in its own (isolated) process and raises if it finds it."""

    id = "kg_prober"
    family = "kgqa"
    role = "baseline"
    paper = "zhang2026bog"

    class Config(AgentConfig):
        pass

    def solve(self, view, budget, seed):
        from papergym.envs.kgqa import vault
        from papergym.envs.kgqa.graph import KG
        from papergym.envs.kgqa.sandbox import World, build_kg_from_kwargs

        found = [type(o).__name__ for o in gc.get_objects() if isinstance(o, (KG, World))]
        if found or vault._WORLDS:
            raise RuntimeError(f"leak: {found} in the agent process, vault {len(vault._WORLDS)}")
        train = list(view.train)[:20]
        for kg_seed in (0, seed):  # the spec's public arguments (smoke synthetic cell)
            kg = build_kg_from_kwargs("synthetic", 200, 8, 30, kg_seed=kg_seed)
            if all(kg.execute((q.topic,), q.gold_path) == tuple(sorted(q.gold_answers))
                   for q in train):
                raise RuntimeError(f"leak: the KG rebuilt from public kg_seed={kg_seed}")
        folder = os.environ.get("KGQA_PROBE_CACHE")  # the runner's cache of worlds
        if folder:
            readable = []
            try:
                for name in os.listdir(os.path.join(folder, "kgqa", "world")):
                    with open(os.path.join(folder, "kgqa", "world", name), "rb") as f:
                        readable.append(bool(f.read(1)))
            except OSError:
                pass  # refused: the agent's uid cannot read the problem's cache
            if any(readable):
                raise RuntimeError(f"leak: {sum(readable)} cached worlds readable")
        return lambda obs: 1  # HALT
'''


RUN = """
import json, sys
from papergym.benchmarks.runner import run_benchmark
from papergym.benchmarks.spec import find_spec
spec = find_spec("kgqa")
assert {p.problem for p in spec.problems} == {"papergym/KGQA-v2"}, spec.problems
s = run_benchmark(spec, "smoke", store=sys.argv[1], workers=1, agents=["random_walk"], seeds=1,
                  extra_agents=[sys.argv[2]])
print(json.dumps({"ran": s.ran, "failed": s.failed, "failures": s.failures}))
"""


def test_the_isolated_agent_process_finds_no_kg_and_cannot_rebuild_it(tmp_path):
    """Through the runner (sealed salt, isolated agent process, KGQA-v2 smoke cells), started
    in a fresh process as ``papergym run`` is: the prober finds no KG or World object in its
    process, none in the vault, no rebuild from the public seeds, and (as its own uid, under a
    root runner) no readable cached world. (A runner whose own process already holds worlds,
    e.g. this test process after the tests above, passes them to every forked agent process:
    the isolation layer keeps no family caches out of the fork.)"""
    env = dict(os.environ)
    if os.geteuid() == 0:  # the agent runs as a uid of its own only under a root runner
        env["KGQA_PROBE_CACHE"] = str(cache.cache_dir())
    plugin = tmp_path / "prober.py"
    plugin.write_text(textwrap.dedent(PROBER))
    done = subprocess.run([sys.executable, "-c", RUN, str(tmp_path / "p.sqlite"),
                           f"{plugin}:Prober"], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["ran"] >= 2 and summary["failed"] == 0, summary["failures"]
