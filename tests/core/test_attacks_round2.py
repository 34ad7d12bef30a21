"""Score-inflation techniques of the second round (issue: submissions that cannot cheat), each
asserted stopped: refused before any trial runs, a failed row, or exactly the honest zero
policy's score; the honest agent's row is unchanged (tests/fixtures/round2/ has one plug-in per
technique)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml

import papergym
from papergym.agent import REGISTRY, AgentError
from papergym.benchmarks.runner import expand_trials, run_benchmark
from papergym.benchmarks.spec import load_spec
from papergym.leaderboard.store import KeyConflict, Store
from tests.conftest import FIXTURES, TOY_SPEC
from tests.core.conftest import honest

ROUND2 = FIXTURES / "round2"


def _spec(tmp_path, agents=("zero",)):
    data = yaml.safe_load(TOY_SPEC.read_text())
    data["imports"] = [str(FIXTURES / "toy_problem.py")]
    data["problems"][0]["agents"] = list(agents)
    data["problems"][0]["tiers"]["smoke"] = {"seeds": 1, "timeout_s": 60,
                                             "grid": {"horizon": [8]}}
    data["claims"] = []
    path = tmp_path / "attack.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_spec(path), path


def _run(tmp_path, plugins=(), agents=("zero",), store=None):
    spec, path = _spec(tmp_path, agents)
    store = store or tmp_path / "attack.sqlite"
    summary = run_benchmark(spec, "smoke", store=store, workers=1, spec_path=path,
                            extra_agents=list(plugins))
    with Store(store) as db:
        rows = {r.agent: r for r in db.all()}
    return summary, rows


@pytest.fixture
def fresh_registry(monkeypatch):
    """Entry points are read again, and the stand-ins this test registers are dropped after."""
    monkeypatch.setattr(REGISTRY, "_entry_points_loaded", False)
    yield
    for key, cls in list(REGISTRY._agents.items()):
        if getattr(cls, "plugin_ref", None):
            del REGISTRY._agents[key]


def _install(monkeypatch, package: str, source: str, entry: str) -> Path:
    """An installed distribution whose ``papergym.agents`` entry point is ``entry`` (a folder
    on sys.path with a .dist-info, as pip leaves it); the caller removes the folder."""
    site = Path(tempfile.mkdtemp(prefix="papergym-site-"))
    (site / package).mkdir()
    (site / package / "__init__.py").write_text(source)
    info = site / f"{package}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[papergym.agents]\nagent = {entry}\n")
    (info / "RECORD").write_text(f"{package}/__init__.py,,\n{package}-1.0.dist-info/METADATA,,\n")
    for path in [site, *site.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)  # the agent's user imports it
    monkeypatch.syspath_prepend(str(site))
    return site


@pytest.fixture
def installed_cheater(monkeypatch, fresh_registry):
    """An installed plug-in whose module patches the metric at import."""
    site = _install(monkeypatch, "evil_ep", (ROUND2 / "entry_point_cheater.py").read_text(),
                    "evil_ep:CheatsAtEntryPointImport")
    yield site
    shutil.rmtree(site, ignore_errors=True)


# ----------------------------------------------------------------------------- item 1


def test_an_entry_point_agent_is_imported_only_in_sandboxes(tmp_path, attack_dir,
                                                           installed_cheater):
    before = papergym.problem.EnvTask.episode_metrics
    summary, rows = _run(tmp_path, agents=("zero", "cheat_entry_point"))
    assert papergym.problem.EnvTask.episode_metrics is before  # never imported here
    assert "evil_ep" not in __import__("sys").modules
    assert summary.failed == 0
    row = rows["cheat_entry_point"]
    assert row.ok and honest(rows, "cheat_entry_point")
    assert row.agent_id == "evil_ep:CheatsAtEntryPointImport"
    ran = [json.loads(p.read_text()) for p in attack_dir.glob("entry-point-imported-*.json")]
    assert len(ran) >= 2  # declarations in one sandbox, the trial's agent in another
    assert all(r["pid"] != os.getpid() for r in ran)
    if os.geteuid() == 0:
        assert all(r["uid"] != 0 for r in ran)


def test_listing_agents_does_not_import_an_entry_point(attack_dir, installed_cheater, capsys):
    from papergym import cli

    before = papergym.problem.EnvTask.episode_metrics
    assert cli.main(["list", "agents", "--json"]) == 0
    out = capsys.readouterr().out
    assert "fixture/cheat_entry_point" in out and "evil_ep:CheatsAtEntryPointImport" in out
    assert papergym.problem.EnvTask.episode_metrics is before
    assert "evil_ep" not in __import__("sys").modules
    assert all(json.loads(p.read_text())["pid"] != os.getpid()
               for p in attack_dir.glob("entry-point-imported-*.json"))


def test_an_entry_point_class_naming_a_builtin_module_is_refused(monkeypatch, fresh_registry):
    source = (ROUND2 / "impostor_module.py").read_text().replace(
        "    def solve", '    id = "spoof_local_search"\n\n    def solve')
    site = _install(monkeypatch, "spoof_ep", source, "spoof_ep:StopsAtOnce")
    try:
        with pytest.raises(AgentError, match="outside the package it ships"):
            REGISTRY.get("spoof_local_search", family="performative")
    finally:
        shutil.rmtree(site, ignore_errors=True)


# ----------------------------------------------------------------------------- item 2


@pytest.mark.parametrize("fixture, message", [
    ("impostor_module.py:StopsAtOnce", "says it is defined in module"),
    # refused in the sandbox when it has the family loaded, else by the runner's check
    ("impostor_id.py:Impostor", "('performative/local_search' is taken by papergym.agents|"
                                "its id collides with the built-in agent performative/local)"),
    ("impostor_class.py:BestImprovementLocalSearch", "its class name collides with the built-in"),
])
def test_a_plugin_posing_as_a_builtin_is_refused_before_any_trial(tmp_path, fixture, message):
    spec = load_spec(papergym.benchmarks.spec.spec_paths()["performative"])
    with pytest.raises(AgentError, match=message):
        run_benchmark(spec, "smoke", store=tmp_path / "s.sqlite", workers=1,
                      agents=["local_search"], extra_agents=[f"{ROUND2 / fixture}"])
    assert not (tmp_path / "s.sqlite").exists()  # refused before the store was opened


def _plugin_copy(tmp_path, name, comment):
    folder = tmp_path / name
    folder.mkdir()
    path = folder / "plugin.py"
    path.write_text(f"# {comment}\n" + _ZERO_PLUGIN)
    return f"{path}:Copycat"


_ZERO_PLUGIN = '''
import numpy as np
import papergym


class Copycat(papergym.Agent):
    id, family, role, paper = "copycat", "fixture", "method", "attack"

    def solve(self, view, budget, seed):
        return lambda obs: np.zeros(1, dtype=np.float32)
'''


def test_trial_keys_cover_the_plugins_own_bytes(tmp_path):
    spec, _ = _spec(tmp_path)
    papergym.benchmarks.runner.import_spec_modules(spec, tmp_path / "attack.yaml")
    first = expand_trials(spec, "smoke", extra_agents=[_plugin_copy(tmp_path, "a", "one")])
    again = expand_trials(spec, "smoke", extra_agents=[_plugin_copy(tmp_path, "b", "one")])
    other = expand_trials(spec, "smoke", extra_agents=[_plugin_copy(tmp_path, "c", "two")])
    key = {t.agent: t.key for t in first}
    assert {t.agent: t.key for t in again} == key  # same bytes elsewhere: same trials
    changed = {t.agent: t.key for t in other}
    assert changed["copycat"] != key["copycat"] and changed["zero"] == key["zero"]


def test_the_store_refuses_a_row_from_other_agent_code(tmp_path):
    summary, rows = _run(tmp_path)
    row = rows["zero"]
    forged = papergym.leaderboard.store.Row(**{
        **row.__dict__, "metrics": {"return": 1.0},
        "provenance": {**row.provenance, "agent_code_hash": "0" * 16}})
    with Store(tmp_path / "attack.sqlite") as db:
        with pytest.raises(KeyConflict, match="may not replace it"):
            db.put(forged)
        db.put(row)  # the same agent code may rewrite its row (a retried failure)
        assert db.get_many([row.key])[0].metrics == row.metrics


# ----------------------------------------------------------------------------- item 5


def test_an_agent_cannot_build_its_own_copy_of_the_problem(tmp_path, attack_dir):
    _, rows = _run(tmp_path, [f"{ROUND2 / 'builds_own_problem.py'}:BuildsOwnProblem"])
    seen = json.loads((attack_dir / "own_problem.json").read_text())
    assert set(seen) == {"papergym.make", "papergym.make_task", "gymnasium.make", "EnvTask(...)",
                         "env class"}
    for name, (kind, message) in seen.items():
        assert kind == "ProblemRefused", (name, kind, message)
        assert "refused inside an agent process" in message
    row = rows["cheat_own_problem"]
    assert row.ok and honest(rows, "cheat_own_problem")
    assert row.provenance["budget"]["env_steps"]["used"] == 0


def test_papergym_make_still_works_outside_agents():
    env = papergym.make("papergym/PerformativeAffine-v0")
    env.close()


# ----------------------------------------------------------------------------- item 3


def test_no_sealed_instance_is_in_what_an_agent_can_enumerate():
    """An agent can tabulate every training seed and the whole public held-out range (the
    attack solved all 10^6 PerformativeAffine instances in 45 s), and the public seeds of any
    trial; under a store's salt no held-out seed of 200 trials is among them."""
    from papergym.problem import EVAL_SEED_OFFSET, Task, set_eval_salt

    enumerable = range(0, 2 * EVAL_SEED_OFFSET)
    public = {s for trial in range(200) for s in Task.public_eval_seeds(trial, 64)}
    set_eval_salt(bytes(range(16)))
    try:
        sealed = [s for trial in range(200) for s in Task.eval_seeds(trial, 64)]
    finally:
        set_eval_salt(None)
    assert len(set(sealed)) == len(sealed) == 200 * 64
    assert not any(s in enumerable for s in sealed) and not public & set(sealed)
    assert all(s < 2**63 for s in sealed)


def test_stored_units_name_instances_opaquely():
    from papergym.problem import Task, set_eval_salt

    task = papergym.make_task("papergym/PerformativeAffine-v1", tier="smoke")
    budget = task.budget
    rule = papergym.agent.REGISTRY.get("performative/rrm")().solve(
        task.train_view(0, budget), budget, 0)
    set_eval_salt(bytes(range(16)))
    try:
        seeds = Task.eval_seeds(0, task.n_eval_instances)
        units = task.evaluate(rule, 0).units
    finally:
        set_eval_salt(None)
    assert units and all("instance_seed" not in u for u in units)
    named = [u["instance_id"] for u in units]
    assert len(set(named)) == len(named)
    assert not {str(s) for s in seeds} & set(named) and all(len(n) == 16 for n in named)


# ----------------------------------------------------------------------------- item 7


def test_an_agent_process_holds_only_its_own_plugins_source(tmp_path, attack_dir, monkeypatch):
    victim = tmp_path / "victim.py"
    shutil.copy(ROUND2 / "victim.py", victim)
    os.chmod(victim, 0o600)
    monkeypatch.setenv("PAPERGYM_VICTIM", str(victim))
    summary, rows = _run(tmp_path, [f"{victim}:Victim", f"{ROUND2 / 'thief.py'}:Thief"])
    seen = json.loads((attack_dir / "thief.json").read_text())
    assert seen["plugin_table"] == [] and seen["heap"] == 0 and seen["linecache"] == 0
    # its own folder is on its import path (helpers beside a plug-in), the victim's is not
    assert seen["modules"] == [] and seen["own_folder"] and seen["folders"] == []
    if os.geteuid() == 0:  # another user: the victim's file is closed to it
        assert seen["open"] == "PermissionError" and seen["load"] == "PermissionError"
    assert rows["victim"].ok and rows["thief"].ok and honest(rows, "thief")
    assert summary.failed == 0


# ----------------------------------------------------------------------------- item 6


@pytest.mark.skipif(os.geteuid() != 0, reason="the agent runs as another user, in a mount "
                                              "namespace of its own, only when the runner is root")
def test_held_out_data_files_are_unreadable_in_the_agent_process(tmp_path, attack_dir,
                                                                 monkeypatch):
    import papergym.envs.performative.credit  # noqa: F401 - declares the credit archive
    import papergym.envs.qaoa.instances  # noqa: F401 - declares the MaxCut test archives
    from papergym.problem import held_out_data_files

    declared = held_out_data_files()
    assert any(p.endswith("credit_data.zip") for p in declared)
    assert any(p.endswith("test_instances_only.zip") for p in declared)
    monkeypatch.setenv("PAPERGYM_HELD_OUT", json.dumps(declared))
    _, rows = _run(tmp_path, [f"{ROUND2 / 'reads_held_out.py'}:ReadsHeldOut"])
    seen = json.loads((attack_dir / "held_out.json").read_text())
    assert seen == {p: "PermissionError" for p in declared}
    assert all(Path(p).stat().st_size > 1000 for p in declared)  # still readable here
    assert rows["cheat_held_out_files"].ok and honest(rows, "cheat_held_out_files")


# ----------------------------------------------------------------------------- item 8


class _HookedLinear(papergym.Agent):
    id, family, role, paper = "hooked_linear", "fixture_hooks", "method", "attack"

    def solve(self, view, budget, seed):
        import torch

        torch.manual_seed(0)
        model = torch.nn.Linear(2, 1)
        model.register_forward_hook(lambda module, args, out: torch.full_like(out, 42.0))
        model.register_forward_pre_hook(lambda module, args: (args[0] * 0 + 7,))
        model.calibrate = lambda: 42.0  # an agent function riding on the module
        return {"model": model, "honest": torch.nn.Linear(2, 1)}


def test_a_module_artifact_crosses_as_data_without_its_hooks():
    import torch

    from papergym.isolation import AgentProcess, Limits, Proxy

    sandbox = AgentProcess(lambda: _HookedLinear(), Limits(cpu_s=60))
    try:
        sandbox.start()
        artifact = sandbox.solve(0, None, 0)
    finally:
        sandbox.close()
    model = artifact["model"]
    assert type(model) is torch.nn.Linear and isinstance(artifact["honest"], torch.nn.Linear)
    assert not model._forward_hooks and not model._forward_pre_hooks
    assert "calibrate" not in vars(model)
    assert not any(isinstance(v, Proxy) for v in vars(model).values())
    x = torch.tensor([[1.0, 2.0]])
    expected = x @ model.weight.T + model.bias  # the weights it trained, nothing else
    assert torch.equal(model(x), expected) and model(x).item() != 42.0


# ----------------------------------------------------------------------------- item 9


@pytest.mark.skipif(os.geteuid() != 0, reason="a private /dev/shm needs a mount namespace, "
                                              "made when the runner is root")
def test_each_trial_has_a_private_temp_and_shm_cleaned_at_the_end(tmp_path, attack_dir):
    spec, path = _spec(tmp_path)
    data = yaml.safe_load(path.read_text())
    data["problems"][0]["tiers"]["smoke"]["seeds"] = 2
    path.write_text(yaml.safe_dump(data))
    run_benchmark(load_spec(path), "smoke", store=tmp_path / "s.sqlite", workers=1,
                  spec_path=path, extra_agents=[f"{ROUND2 / 'private_state.py'}:LeavesState"])
    seen = [json.loads((attack_dir / f"state-{s}.json").read_text()) for s in (0, 1)]
    assert not any(s["found_shm"] for s in seen)  # the second trial saw nothing of the first
    assert not Path("/dev/shm/papergym-round2-left-behind").exists()  # nothing outlived it
    assert seen[0]["tempdir"] != seen[1]["tempdir"]
    assert not any(Path(s["tempdir"]).exists() for s in seen)
    assert all(s["shared_tmp_mode"] & 0o077 == 0 for s in seen)  # the system /tmp: owner only


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root runner gives each trial's agent a "
                                              "uid of its own, whose files can be told apart")
@pytest.mark.parametrize("cheat, ends", [("LeavesSharedFiles", "ok"),
                                         ("LeavesSharedFilesAndFails", "failed"),
                                         ("LeavesSharedFilesAndHangs", "timeout")])
def test_what_an_agent_leaves_in_the_shared_temp_folders_is_removed(tmp_path, attack_dir,
                                                                     cheat, ends):
    spec, path = _spec(tmp_path, agents=("zero",))
    if ends == "timeout":
        data = yaml.safe_load(path.read_text())
        data["problems"][0]["tiers"]["smoke"]["timeout_s"] = 4
        path.write_text(yaml.safe_dump(data))
    others = Path("/tmp") / f"{attack_dir.name}-another-uid"
    others.write_bytes(b"kept")
    os.chown(others, 65534, 65534)  # nobody's file in the same /tmp, as an agent would see it
    try:
        run_benchmark(load_spec(path), "smoke", store=tmp_path / "s.sqlite", workers=1,
                      spec_path=path, extra_agents=[f"{ROUND2 / 'private_state.py'}:{cheat}"])
        with Store(tmp_path / "s.sqlite") as db:
            rows = {r.agent: r for r in db.all()}
        seen = json.loads((attack_dir / "shared-0.json").read_text())
        assert seen["uid"] not in (0, 65534)  # it wrote them, as its own uid
        assert [p for p in seen["paths"] if os.path.lexists(p)] == []
        assert others.read_bytes() == b"kept"
        cheat_row = next(r for name, r in rows.items() if name != "zero")
        assert cheat_row.ok == (ends == "ok")
        if ends == "timeout":
            assert "TimeoutError" in cheat_row.error
        assert honest(rows, cheat_row.agent)
    finally:
        others.unlink()


class _WritesHugeFile(papergym.Agent):
    id, family, role, paper = "huge_file", "fixture_files", "method", "attack"

    def solve(self, view, budget, seed):
        with open(Path(tempfile.gettempdir()) / "huge", "wb") as handle:
            for _ in range(8):
                handle.write(b"\0" * (1 << 20))
                handle.flush()
        return "wrote 8 MiB"


def test_an_agent_cannot_write_a_file_past_the_size_limit():
    from papergym.isolation import AgentProcess, Limits

    sandbox = AgentProcess(lambda: _WritesHugeFile(), Limits(cpu_s=60, file_mb=2))
    try:
        sandbox.start()
        with pytest.raises(OSError, match="File too large"):  # EFBIG: a failed trial
            sandbox.solve(0, None, 0)
    finally:
        sandbox.close()


def test_memory_caps_over_all_workers_stay_under_the_machine():
    from papergym.isolation import default_memory_mb

    total_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 20)
    for workers in (1, 2, 4):
        if total_mb * 0.8 / (2 * workers) >= 1024:  # above the floor
            assert 2 * workers * default_memory_mb(workers) <= 0.8 * total_mb + 2 * workers


def test_agent_text_reaches_the_terminal_without_control_characters(tmp_path, capsys):
    from papergym import cli

    spec, path = _spec(tmp_path)
    code = cli.main(["run", str(path), "--store", str(tmp_path / "s.sqlite"), "--workers", "1",
                     "--agent", f"{ROUND2 / 'private_state.py'}:ShoutsAtTerminal"])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code != 0 and "failed:" in text and "red" in text and "bell" in text
    assert not any(ch in text for ch in "\x1b\x07\x08")


@pytest.mark.parametrize("workers", ["0", "-1"])
def test_fewer_than_one_worker_is_refused(tmp_path, workers, capsys):
    from papergym import cli

    spec, path = _spec(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["run", str(path), "--store", str(tmp_path / "s.sqlite"), "--workers", workers])
    assert exit_.value.code == 2 and "must be at least 1" in capsys.readouterr().err
    with pytest.raises(ValueError, match="at least 1"):
        run_benchmark(spec, "smoke", store=tmp_path / "s.sqlite", workers=int(workers),
                      spec_path=path)


# ----------------------------------------------------------------------------- item 10


@pytest.mark.skipif(os.geteuid() != 0, reason="the agent's user differs from the checkout's "
                                              "owner only when the runner is root")
def test_agent_code_in_a_private_checkout_imports_and_hashes_itself(tmp_path, attack_dir):
    import hashlib
    import importlib.util
    import sys

    private = Path(tempfile.mkdtemp())  # mode 0700, as mktemp -d makes it
    try:
        package = private / "checkout" / "privatepkg"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text('"""A package of a private clone."""\nNAME = 1\n')
        (package / "helper.py").write_text("VALUE = 42\n")
        spec = importlib.util.spec_from_file_location(
            "privatepkg", package / "__init__.py", submodule_search_locations=[str(package)])
        module = importlib.util.module_from_spec(spec)
        sys.modules["privatepkg"] = module  # as an editable install maps it: on no sys.path
        spec.loader.exec_module(module)
        _, rows = _run(tmp_path, [f"{ROUND2 / 'hashes_own_code.py'}:HashesOwnCode"])
    finally:
        for name in ("privatepkg", "privatepkg.helper"):
            sys.modules.pop(name, None)
        shutil.rmtree(private, ignore_errors=True)
    seen = json.loads((attack_dir / "own_code.json").read_text())
    source = '"""A package of a private clone."""\nNAME = 1\n'
    assert seen == {"helper": 42, "hash": hashlib.sha256(source.encode()).hexdigest()}
    assert rows["hashes_own_code"].ok


def test_rlvr_scores_only_its_own_model_class():
    """A Module carrying a ``run`` of its own (agent code) is not a tinylm causal LM."""
    import torch

    task = papergym.make_task("papergym/RLVRAddScratch-v2", tier="smoke")
    impostor = torch.nn.Linear(2, 2)
    impostor.run = lambda *args, **kwargs: None
    with pytest.raises(TypeError, match="expects a tinylm causal LM"):
        task.evaluate(impostor, 0)
