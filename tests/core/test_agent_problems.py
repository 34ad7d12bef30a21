"""Agents declare the problems they act on; the runner schedules plug-ins only where they fit,
says what it skipped, and a run in which every trial of an agent failed exits non-zero."""

from __future__ import annotations

import re
import textwrap

import pytest

import papergym
from papergym import cli
from papergym.agent import REGISTRY, Agent, AgentError
from papergym.benchmarks.runner import expand_trials, unscheduled_plugins
from papergym.benchmarks.spec import find_spec, spec_paths
from papergym.readme import README


def test_can_act_on_matches_family_and_patterns():
    rrm = REGISTRY.get("performative/rrm")
    assert rrm.can_act_on("papergym/PerformativeAffine-v0")
    assert rrm.can_act_on("papergym/StrategicCredit-v0")
    assert not rrm.can_act_on("papergym/StrategicJury-v0")
    assert not rrm.can_act_on("papergym/QAOA2Partition-v0")  # another family
    assert not rrm.can_act_on("papergym/NoSuch-v0")
    fedavg = REGISTRY.get("fedlearn/fedavg")
    assert fedavg.problems == () and fedavg.can_act_on("papergym/FedRounds-v0")


def test_a_bare_string_is_not_a_problems_tuple():
    with pytest.raises(AgentError, match="problems must be a tuple"):
        type("Bad", (Agent,), {"id": "bad_problems", "family": "performative",
                               "problems": "papergym/PerformativeAffine-v0",
                               "solve": lambda self, view, budget, seed: None})


@pytest.mark.parametrize("name", sorted(spec_paths()))
def test_every_spec_lists_agents_only_on_problems_they_declare(name):
    spec = find_spec(name)
    for section in spec.problems:
        family = papergym.spec(section.problem).family
        for entry in section.agents:
            cls = REGISTRY.get(entry.id, family=family)
            assert cls.can_act_on(section.problem), (name, section.name, cls.qualified_id())


def _readme_example(tmp_path):
    """The README's "Submit your own agent" file and command, verbatim."""
    text = README.read_text()
    block = re.search(r"```python\n(# my_agent\.py\n.*?)```", text, re.S).group(1)
    command = re.search(r"```bash\n(papergym run [^\n]*--agent my_agent\.py:\w+)\n```", text).group(1)
    (tmp_path / "my_agent.py").write_text(block)
    return command.split()[1:]


def test_the_readme_plugin_example_runs_with_no_failed_trial(tmp_path, monkeypatch, capsys):
    argv = _readme_example(tmp_path)
    monkeypatch.chdir(tmp_path)
    ref = argv[argv.index("--agent") + 1]
    spec = find_spec(argv[1])
    trials = [t for t in expand_trials(spec, "smoke", extra_agents=[ref]) if t.agent == "my_deployer"]
    assert trials and {t.problem_id for t in trials} == {"papergym/PerformativeAffine-v1"}
    skipped = unscheduled_plugins(spec, "smoke", [ref])
    assert skipped and all("matches none of its declared problems" in line for line in skipped)
    # The exact command, restricted to the plug-in's trials so the test stays short.
    code = cli.main([*argv, "--agents", "my_deployer", "--store", str(tmp_path / "r.sqlite"),
                     "--no-report", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    # sections whose cells coincide share a trial key, and a key runs once
    assert f"{len(trials)} trials, 0 already stored, ran {len({t.key for t in trials})} (0 failed)" in out
    assert out.count("skipped: my_deployer not run on section") == len(skipped)


def test_a_run_where_every_trial_of_an_agent_fails_exits_non_zero(tmp_path, monkeypatch, capsys):
    (tmp_path / "broken.py").write_text(textwrap.dedent("""
        from papergym import Agent

        class Broken(Agent):
            id, family, role, paper = "broken", "performative", "baseline", "-"
            problems = ("papergym/PerformativeAffine-v*",)

            def solve(self, view, budget, seed):
                raise RuntimeError("no policy today")
    """))
    monkeypatch.chdir(tmp_path)
    code = cli.main(["run", "performative", "--agent", "broken.py:Broken", "--agents", "broken",
                     "--store", str(tmp_path / "r.sqlite"), "--no-report", "--quiet"])
    err = capsys.readouterr().err
    assert code == 1
    assert "papergym run performative: every trial of broken failed" in err


def test_a_plugin_that_fits_no_section_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "elsewhere.py").write_text(textwrap.dedent("""
        from papergym import Agent

        class Elsewhere(Agent):
            id, family, role, paper = "elsewhere", "qaoa", "baseline", "-"

            def solve(self, view, budget, seed):
                return None
    """))
    monkeypatch.chdir(tmp_path)
    code = cli.main(["run", "performative", "--agent", "elsewhere.py:Elsewhere",
                     "--store", str(tmp_path / "r.sqlite"), "--no-report", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "qaoa/elsewhere can act on none of this benchmark's problems" in err
