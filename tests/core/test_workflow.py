"""A researcher's workflow on the toy benchmark: plug-ins kept by the store, their config and
helpers, `compare` against published rows, submission bundles, and output folders."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import textwrap

import pandas as pd
import pytest

import papergym
import papergym.api
import papergym.plugins
from papergym import cli
from papergym.agent import REGISTRY, Agent, AgentError
from papergym.benchmarks.runner import expand_trials
from papergym.leaderboard.store import Store
from papergym.leaderboard.submissions import submissions
from papergym.plugins import (
    describe_agent_file,
    parse_agent_config,
    plugin_marker,
    plugin_record,
    plugin_refs,
    plugin_source,
    stand_in_from_record,
)
from tests.conftest import TOY_SPEC

PLUGIN = textwrap.dedent("""
    import numpy as np
    from papergym import Agent, AgentConfig

    from toy_gain_helper import scaled  # a helper module beside this file

    class Halfway(Agent):
        id, family, role, paper = "plugin_half", "fixture", "method", "mine"

        class Config(AgentConfig):
            gain: float = 0.5

        def solve(self, view, budget, seed):
            gain = self.config.gain
            return lambda obs: np.array([scaled(gain, obs[1] - obs[0])], dtype=np.float32)
""")


@pytest.fixture
def plugin(tmp_path):
    # a runner that is root runs agents as another user: the plug-in's folder must be
    # readable by others (not its parents: the agent process opens it before the switch)
    tmp_path.chmod(0o755)
    (tmp_path / "toy_gain_helper.py").write_text("def scaled(gain, gap):\n    return gain * gap\n")
    path = tmp_path / "halfway.py"
    path.write_text(PLUGIN)
    return path


def _cli(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_plugin_run_once_stays_in_every_table_export_and_frame(plugin, tmp_path, capsys):
    store, out = tmp_path / "r.sqlite", tmp_path / "results"
    code, _, err = _cli(capsys, "run", TOY_SPEC, "--agent", f"{plugin}:Halfway", "--agents", "zero",
                        "--agent-config", "gain=0.25", "--store", store, "--out", out, "--quiet")
    assert code == 0, err
    with Store(store) as db:
        (record,) = db.plugins()
        rows = db.all()
    assert record["source"] == plugin.read_bytes()
    assert record["declarations"]["config"] == {"gain": 0.25}
    plugin_rows = [r for r in rows if r.agent == "plugin_half"]
    # 2 horizons x 3 seeds, every one ok: the helper beside the file imported in the sandbox
    assert len(plugin_rows) == 6 and all(r.ok for r in plugin_rows)
    assert record["sha256"] == hashlib.sha256(plugin.read_bytes()).hexdigest()
    assert all(r.provenance["plugin"] == {"source_sha256": record["sha256"]} for r in plugin_rows)
    assert {r.agent for r in rows} == {"plugin_half", "zero"}  # --agents named built-ins only
    plugin.write_text(PLUGIN.replace("gain: float = 0.5", "gain: float = 2.0"))  # edited later

    code, out_json, _ = _cli(capsys, "leaderboard", TOY_SPEC, "--store", store, "--out", out,
                             "--json")
    agents = {s["agent"] for sec in json.loads(out_json)["sections"] for s in sec["scores"]}
    assert code == 0 and "plugin_half" in agents
    code, claims_json, _ = _cli(capsys, "claims", TOY_SPEC, "--store", store, "--json")
    assert code == 0 and json.loads(claims_json)
    for suffix in (".csv", ".jsonl", ".parquet"):
        code, text, _ = _cli(capsys, "export", TOY_SPEC, tmp_path / f"rows{suffix}", "--store", store)
        assert code == 0 and text.startswith("wrote 12 rows")
    assert (pd.read_csv(tmp_path / "rows.csv")["agent"] == "plugin_half").sum() == 6
    frame = papergym.trials(TOY_SPEC, store=store)
    assert (frame["agent"] == "plugin_half").sum() == 6
    verdicts = papergym.claims(TOY_SPEC, store=store)
    assert set(verdicts["verdict"]) <= {"holds", "fails", "inconclusive", "not run at this tier",
                                        "no data", "underpowered"} or len(verdicts)


def test_agent_config_is_validated_by_the_plugins_own_config(plugin):
    ref = plugin_refs([f"{plugin}:Halfway"])[0]
    assert describe_agent_file(ref, {"gain": "0.75"}).validate_config({}).gain == 0.75
    with pytest.raises(AgentError, match=r"gain: Input should be a valid number.*fields are gain"):
        describe_agent_file(ref, {"gain": "steep"})
    with pytest.raises(AgentError, match=r"gian: Extra inputs are not permitted"):
        describe_agent_file(ref, {"gian": 1.0})
    assert parse_agent_config(["gain=0.5", "Halfway.note=[1, 2]"], [ref]) == \
        {ref: {"gain": 0.5, "note": [1, 2]}}
    with pytest.raises(AgentError, match="CLASS.key=value"):
        parse_agent_config(["gain=1"], [ref, ref.replace("Halfway", "Other")])


def test_agents_filters_plugins_by_id_and_never_drops_one_silently(plugin, toy_spec):
    second = plugin.with_name("second.py")
    second.write_text(PLUGIN.replace('"plugin_half"', '"plugin_second"'))
    refs = plugin_refs([f"{plugin}:Halfway", f"{second}:Halfway"])
    runs = lambda agents: {t.agent for t in expand_trials(toy_spec, "smoke", agents=agents,  # noqa: E731
                                                          extra_agents=refs)}
    assert runs(["zero"]) == {"zero", "plugin_half", "plugin_second"}
    assert runs(["zero", "plugin_second"]) == {"zero", "plugin_second"}
    assert runs(["plugin_half"]) == {"plugin_half"}


def test_a_class_object_is_a_plugin_in_the_notebook_api(plugin, tmp_path, monkeypatch):
    module_spec = importlib.util.spec_from_file_location("halfway_notebook", plugin)
    module = importlib.util.module_from_spec(module_spec)
    monkeypatch.setitem(sys.modules, "halfway_notebook", module)  # `from halfway import Halfway`
    monkeypatch.syspath_prepend(str(plugin.parent))
    monkeypatch.setattr(REGISTRY, "_agents", dict(REGISTRY._agents))  # the import registers it
    module_spec.loader.exec_module(module)
    assert plugin_refs([module.Halfway]) == [f"{plugin.resolve()}:Halfway"]
    frame = papergym.run(TOY_SPEC, store=tmp_path / "n.sqlite", agents=["zero"], workers=2,
                         extra_agents=[module.Halfway], agent_config={"gain": 1.0})
    assert set(frame["agent"]) == {"zero", "plugin_half"} and (frame["status"] == "ok").all()

    in_a_cell = type("InACell", (Agent,), {"__module__": "__notebook_cell__", "solve": lambda *a: None})
    with pytest.raises(AgentError, match="not defined in a .py file"):
        plugin_refs([in_a_cell])


# ----------------------------------------------------------------------------- compare


@pytest.fixture(scope="module")
def published_toy(tmp_path_factory, toy_spec):
    """The toy benchmark's built-in agents run once at smoke and 'published' as JSONL."""
    from papergym.benchmarks.runner import rows_for, run_benchmark
    from papergym.leaderboard.store import export_jsonl

    root = tmp_path_factory.mktemp("published")
    store = root / "publisher.sqlite"
    run_benchmark(toy_spec, "smoke", store=store, workers=2, spec_path=TOY_SPEC)
    with Store(store) as db:
        _, rows = rows_for(toy_spec, "smoke", db)
    (root / "toy").mkdir()
    export_jsonl(rows, root / "toy" / "trials.jsonl")
    return root / "toy", len(rows)


def test_compare_runs_only_the_submitted_agent_and_ranks_it_beside_the_published(
        published_toy, toy_spec, plugin, tmp_path, capsys):
    from papergym.benchmarks.compare import compare

    folder, n_published = published_toy
    result = compare(toy_spec, f"{plugin}:Halfway", tier="smoke", store=tmp_path / "c.sqlite",
                     out=tmp_path / "out", spec_path=TOY_SPEC, published=folder, workers=2)
    assert (result.imported, result.summary.ran, result.summary.failed) == (n_published, 6, 0)
    scores = {s.agent: s for s in result.report.sections[0].scores}
    assert scores["plugin_half"].n_ok == 6 and scores["greedy"].n_ok == 6
    assert scores["plugin_half"].rank < scores["zero"].rank  # it closes half the gap each step
    assert result.pages["html"].is_file()
    err = capsys.readouterr().err
    for phase in ("reading the published rows", "checking 24 published rows",
                  "reading the declarations", "storing the published rows", "running plugin_half",
                  "scoring the leaderboard"):
        assert phase in err
    assert err.count("done in") == 6


def test_compare_refuses_rows_of_other_problem_code_and_says_what_to_run(
        published_toy, toy_spec, plugin, tmp_path, monkeypatch, capsys):
    from papergym.benchmarks.compare import CompareError, compare

    folder, _ = published_toy
    edited = tmp_path / "toy"
    edited.mkdir()
    lines = (folder / "trials.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    for row in rows:  # what a changed FixtureReach-v0 would have produced: other keys
        row["key"] = row["key"][::-1]
        row["provenance"]["problem_code_hash"] = "0123456789abcdef"
    (edited / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(CompareError, match=r"other problem code \(papergym/FixtureReach-v0: "
                       r"published 0123456789abcdef, this installation [0-9a-f]{16}\).*"
                       r"papergym run toy --tier smoke --agent FILE.py:Class"):
        compare(toy_spec, f"{plugin}:Halfway", tier="smoke", store=tmp_path / "c.sqlite",
                spec_path=TOY_SPEC, published=edited)
    monkeypatch.setattr("papergym.benchmarks.compare.published_folder", lambda name: edited)
    capsys.readouterr()
    code, _, err = _cli(capsys, "compare", TOY_SPEC, "--tier", "smoke", "--agent",
                        f"{plugin}:Halfway", "--store", tmp_path / "c.sqlite", "--quiet")
    assert code == 2 and err.startswith("papergym compare: the published rows of toy [smoke] "
                                        "were produced by other problem code")
    (edited / "trials.jsonl").write_text("".join(line + "\n" for line in lines
                                                 if '"agent": "zero"' not in line))
    with pytest.raises(CompareError, match=r"6 of the 24 trials .* zero \(6\).*--agents zero"):
        compare(toy_spec, f"{plugin}:Halfway", tier="smoke", store=tmp_path / "c.sqlite",
                spec_path=TOY_SPEC, published=edited)
    assert not (tmp_path / "c.sqlite").exists()  # refused before anything was stored
    # what the refusal says to run, then compare again: the stored rows fill the gap
    assert _cli(capsys, "run", TOY_SPEC, "--agents", "zero", "--store", tmp_path / "c.sqlite",
                "--no-report", "--quiet")[0] == 0
    result = compare(toy_spec, f"{plugin}:Halfway", tier="smoke", store=tmp_path / "c.sqlite",
                     spec_path=TOY_SPEC, published=edited, workers=2, progress=False)
    assert (result.imported, result.summary.ran) == (18, 6)


# ----------------------------------------------------------------------------- output folders


def test_publish_and_throughput_write_to_out_and_never_into_an_installed_package(
        tmp_path, toy_spec, capsys, monkeypatch):
    import yaml

    data = yaml.safe_load(TOY_SPEC.read_text())
    data["imports"] = [str(TOY_SPEC.parent / "toy_problem.py")]
    data["problems"][0]["tiers"]["standard"] = {"seeds": 1, "grid": {"horizon": [8]}}
    data["claims"] = []  # one seed: no claim could reach its alpha
    spec_path = tmp_path / "toy.yaml"
    spec_path.write_text(yaml.safe_dump(data))
    store = tmp_path / "r.sqlite"
    assert _cli(capsys, "run", spec_path, "--tier", "standard", "--store", store,
                "--no-report", "--quiet")[0] == 0
    code, out, err = _cli(capsys, "publish", spec_path, "--store", store, "--out", tmp_path / "pub")
    assert code == 0, err
    assert {p.name for p in (tmp_path / "pub" / "toy").iterdir()} >= {
        "README.md", "claims.json", "trials.jsonl", "trials.csv", "index.html"}
    assert (tmp_path / "pub" / "README.md").is_file()  # the folder's index

    code, out, err = _cli(capsys, "check", "papergym/FixtureReach-v0", "--tier", "smoke",
                          "--steps", "20", "--throughput", "--out", tmp_path / "pub")
    assert code == 0, err
    table = json.loads((tmp_path / "pub" / "throughput.json").read_text())
    assert list(table["problems"]) == ["papergym/FixtureReach-v0"]
    assert "throughput.md" in (tmp_path / "pub" / "README.md").read_text()

    installed = tmp_path / "lib" / "site-packages" / "papergym" / "leaderboard" / "published"
    monkeypatch.setattr("papergym.leaderboard.publish.PUBLISHED", installed)
    for command in (["publish", spec_path, "--store", store],
                    ["check", "papergym/FixtureReach-v0", "--throughput"]):
        code, _, err = _cli(capsys, *command)
        assert code == 2 and "inside the installed papergym package; pass --out DIR" in err
    assert not installed.exists()


# ----------------------------------------------------------------------------- bundles


def test_a_bundle_verifies_when_honest_and_is_rejected_with_an_edited_score(
        toy_spec, plugin, tmp_path, capsys, monkeypatch):
    from papergym.benchmarks.submission import submit, verify

    bundle, summary = submit(toy_spec, f"{plugin}:Halfway", tier="smoke", spec_path=TOY_SPEC,
                             out=tmp_path / "half.bundle.json", workers=2,
                             plugin_config={"gain": 0.75}, command=["papergym", "submit"])
    assert (summary.ran, summary.failed) == (6, 0)  # the plug-in only
    data = json.loads(bundle.read_text())
    assert data["agent"]["source"] == plugin.read_text() and data["agent"]["config"] == {"gain": 0.75}
    assert len(data["rows"]) == 6 and set(data["problems"]) == {"papergym/FixtureReach-v0"}
    assert str(tmp_path) not in json.dumps(data["rows"])  # no path of the submitter's machine
    assert data["agent"]["helpers"] == {"toy_gain_helper.py": (plugin.parent / "toy_gain_helper.py")
                                        .read_text()}
    for path in (plugin, plugin.parent / "toy_gain_helper.py"):  # the verifier has the bundle only
        monkeypatch.delitem(papergym.plugins._copies, str(path), raising=False)
        path.unlink()
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(plugin.parent)])

    store = tmp_path / "board.sqlite"
    honest = verify(bundle, sample=3, seed=1, workers=2, store=store, spec=TOY_SPEC)
    assert honest.verified, honest.reasons
    assert honest.sample == 3 and {c.outcome for c in honest.checks} == {"identical"}
    assert json.loads(bundle.with_suffix(".verification.json").read_text())["verified"] is True
    with Store(store) as db:
        marks = [r.provenance["submission"] for r in db.all()]
    assert len(marks) == 6 and all(m["verified"] and len(m["sample_keys"]) == 3 for m in marks)
    assert "plugin_half" in set(papergym.trials(TOY_SPEC, store=store)["agent"])
    _, board_rows = papergym.api.report(TOY_SPEC, "smoke", store)
    assert submissions(board_rows) == {"plugin_half": {
        "verified": True, "bundle_sha256": honest.bundle_sha256,
        "code_hash": data["agent"]["code_hash"]}}
    with Store(tmp_path / "half.bundle.json.sqlite") as db:  # the submitter's own, unverified
        assert submissions(db.all())["plugin_half"]["verified"] is False

    edited = json.loads(bundle.read_text())
    edited["rows"][4]["metrics"]["return"] += 0.5  # a better score than the agent earned
    forged = tmp_path / "forged.bundle.json"
    forged.write_text(json.dumps(edited))
    result = verify(forged, sample=6, workers=2, spec=TOY_SPEC)
    assert not result.verified and [c.outcome for c in result.checks].count("differs") == 1
    assert "return: bundle" in result.reasons[0]
    code, _, err = _cli(capsys, "verify", forged, "--sample", "6", "--spec", TOY_SPEC,
                          "--quiet")
    assert code == 1 and err.startswith(f"REJECTED {forged}:")

    edited = json.loads(bundle.read_text())
    edited["agent"]["source"] += "\n# edited\n"
    forged.write_text(json.dumps(edited))
    assert verify(forged, spec=TOY_SPEC).reasons == ["the agent's source does not match its SHA-256"]


def test_the_store_record_and_row_marker_are_the_bytes_that_were_described(plugin, monkeypatch):
    ref = plugin_refs([f"{plugin}:Halfway"])[0]
    original = plugin.read_bytes()
    cls = describe_agent_file(ref, {"gain": 0.25})
    assert cls.plugin_sha256 == hashlib.sha256(original).hexdigest()
    plugin.write_text(PLUGIN.replace("gain: float = 0.5", "gain: float = 2.0"))  # edited later
    record = plugin_record(ref, cls)  # the runner's private copy, not the file as it is now
    assert record["source"] == original and record["sha256"] == cls.plugin_sha256
    assert plugin_marker(ref) == {"source_sha256": cls.plugin_sha256}
    stored = stand_in_from_record(record)  # rebuilt with nothing imported: the same trials
    assert (stored.code_hash(), stored.plugin_module, stored.plugin_sha256) == \
        (cls.code_hash(), cls.plugin_module, cls.plugin_sha256)
    assert stored.validate_config({}).gain == 0.25
    edited = describe_agent_file(ref, {"gain": 0.25})  # new bytes: described again, new key
    assert edited.code_hash() != cls.code_hash() and edited.plugin_sha256 != cls.plugin_sha256
    # each trial gets the bytes its key covers, whichever version was described last
    assert plugin_source(ref, cls.code_hash()) == original
    assert plugin_source(ref, edited.code_hash()) == plugin.read_bytes() != original
    assert plugin_marker(ref, cls.code_hash()) == {"source_sha256": cls.plugin_sha256}
    assert plugin_marker(ref, edited.code_hash()) == {"source_sha256": edited.plugin_sha256}
    assert plugin_record(ref, stored)["source"] == original
    monkeypatch.setattr(papergym.plugins, "_keyed_copies", {})  # a process that described B only
    with pytest.raises(AgentError, match="changed after it was described"):
        plugin_record(ref, stored)


@pytest.mark.skipif(os.geteuid() != 0, reason="agents run as another user only when the runner "
                                              "is root")
def test_a_helper_beside_a_plugin_behind_a_private_folder_imports_in_its_agent(plugin, tmp_path):
    closed = tmp_path / "closed"  # a private checkout: closed to the agent's user, whose
    folder = closed / "agent"  # process reaches the plug-in's folder through the runner's fd
    folder.mkdir(parents=True)
    for path in (plugin, plugin.parent / "toy_gain_helper.py"):
        path.rename(folder / path.name)
    folder.chmod(0o755)
    closed.chmod(0o700)
    frame = papergym.run(TOY_SPEC, store=tmp_path / "p.sqlite", agents=["plugin_half"],
                         workers=2, extra_agents=[f"{folder / plugin.name}:Halfway"])
    assert len(frame) == 6 and (frame["status"] == "ok").all()
