"""Score-inflation attacks by plug-in agents, each asserted stopped: the cheat's row is a
failed row or scores exactly what the honest zero policy scores, the runner survives, and
every other stored row is unchanged (tests/fixtures/cheaters.py has one agent per attack)."""

from __future__ import annotations

import json
import os
import signal
import time
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import yaml
from gymnasium import spaces

import papergym
from papergym.benchmarks.runner import run_benchmark
from papergym.benchmarks.spec import load_spec
from papergym.leaderboard.store import Store
from tests.conftest import FIXTURES, TOY_SPEC
from tests.core.conftest import honest

CHEATERS = FIXTURES / "cheaters.py"
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the agent drops to another user only "
                                                      "when the runner is root (CI is)")


def _spec(tmp_path, memory_mb=None):
    data = yaml.safe_load(TOY_SPEC.read_text())
    data["imports"] = [str(FIXTURES / "toy_problem.py")]
    data["problems"][0]["agents"] = ["zero"]
    tier = {"seeds": 1, "timeout_s": 60, "grid": {"horizon": [8]}}
    if memory_mb:
        tier["memory_mb"] = memory_mb
    data["problems"][0]["tiers"]["smoke"] = tier
    data["claims"] = []
    path = tmp_path / "attack.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_spec(path), path


def _attack(tmp_path, cls, memory_mb=None, store=None):
    """Run the zero agent and the cheater ``cls``; return (summary, {agent: row}, store)."""
    spec, path = _spec(tmp_path, memory_mb)
    store = store or tmp_path / "attack.sqlite"
    summary = run_benchmark(spec, "smoke", store=store, workers=1, spec_path=path,
                            extra_agents=[f"{CHEATERS}:{cls}"])
    with Store(store) as db:
        rows = {r.agent: r for r in db.all()}
    return summary, rows, store


def test_monkeypatched_metric_functions_do_not_reach_the_evaluator(tmp_path):
    _, rows, _ = _attack(tmp_path, "PatchesMetrics")
    assert rows["cheat_patch_metrics"].ok and honest(rows, "cheat_patch_metrics")


def test_a_plugin_file_runs_only_in_sandboxed_processes_never_in_the_runner(tmp_path, attack_dir):
    spec, path = _spec(tmp_path)
    store = tmp_path / "attack.sqlite"
    before = papergym.problem.EnvTask.episode_metrics
    run_benchmark(spec, "smoke", store=store, workers=1, spec_path=path,
                  extra_agents=[f"{FIXTURES / 'import_time_cheater.py'}:PatchesAtImport"])
    assert papergym.problem.EnvTask.episode_metrics is before  # the runner never imported it
    with Store(store) as db:
        rows = {r.agent: r for r in db.all()}
    assert rows["cheat_import_time"].ok and honest(rows, "cheat_import_time")
    ran = [json.loads(p.read_text()) for p in attack_dir.glob("imported-*.json")]
    assert len(ran) >= 2  # its declarations were read in one sandbox, its trial ran in another
    assert all(r["pid"] != os.getpid() for r in ran)
    if os.geteuid() == 0:
        assert all(r["uid"] != 0 for r in ran)


def test_the_task_is_not_in_the_agent_process(tmp_path):
    _, rows, _ = _attack(tmp_path, "WrapsEvaluate")
    row = rows["cheat_wrap_evaluate"]
    assert row.ok and honest(rows, "cheat_wrap_evaluate") and row.metrics["return"] != 3.0


def test_a_forged_row_on_any_pipe_is_not_stored(tmp_path):
    summary, rows, _ = _attack(tmp_path, "ForgesRow")
    row = rows["cheat_forge_row"]
    assert summary.ran == 2 and not row.ok and row.metrics == {}
    assert "worker died" in row.error or "not allowed from agents" in row.error


@as_root
def test_the_store_cannot_be_opened_by_the_agent(tmp_path, attack_dir):
    spec, path = _spec(tmp_path)
    store = tmp_path / "attack.sqlite"
    run_benchmark(spec, "smoke", store=store, workers=1, spec_path=path)  # honest rows first
    with Store(store) as db:
        before = {r.key: r.metrics for r in db.all()}
    assert os.stat(store).st_mode & 0o077 == 0  # owner-only, and so are -wal and -shm
    _, rows, _ = _attack(tmp_path, "RewritesStore", store=store)
    report_file = attack_dir / "rewrite_store.json"
    assert report_file.exists(), f"the cheater wrote no report: {rows['cheat_rewrite_store'].error}"
    outcome = json.loads(report_file.read_text())
    assert outcome and not any(v == "rewritten" for v in outcome.values())
    with Store(store) as db:
        after = {r.key: r.metrics for r in db.all()}
    assert {k: after[k] for k in before} == before
    assert honest(rows, "cheat_rewrite_store")


def test_a_policy_sees_no_evaluation_env_in_its_callers(tmp_path):
    _, rows, _ = _attack(tmp_path, "ReadsCallerFrame")
    assert rows["cheat_caller_frame"].ok and honest(rows, "cheat_caller_frame")


def test_the_budget_is_counted_by_the_problem(tmp_path, attack_dir):
    _, rows, _ = _attack(tmp_path, "RewritesBudget")
    attempts = json.loads((attack_dir / "budget.json").read_text())
    # the raw env and the budget's methods are out of reach; the dicts it reads are copies
    assert {attempts[k] for k in ("unwrapped.step", "env.env.step", "spend(-1000)",
                                  "view.budget = ...")} == {"PermissionError"}, attempts
    assert attempts["remaining"] == 64
    row = rows["cheat_budget"]
    assert not row.ok and "BudgetExceeded" in row.error
    assert row.provenance["budget"] == {} or \
        row.provenance["budget"]["env_steps"]["used"] <= 64


def test_six_gigabytes_exceed_the_memory_cap(tmp_path):
    _, rows, _ = _attack(tmp_path, "AllocatesSixGigabytes", memory_mb=2048)
    row = rows["cheat_memory"]
    assert not row.ok and "MemoryError" in row.error
    assert rows["zero"].ok  # the cap leaves room for an honest trial


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_processes_spawned_by_the_agent_die_with_the_trial(tmp_path, attack_dir):
    _, rows, _ = _attack(tmp_path, "SpawnsSurvivor")
    pids = json.loads((attack_dir / "spawn.json").read_text())
    assert len(pids) == 2
    deadline = time.time() + 5
    while any(_alive(p) for p in pids) and time.time() < deadline:
        time.sleep(0.05)
    survivors = [p for p in pids if _alive(p)]
    for pid in survivors:  # never leave them behind, even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert not survivors
    assert honest(rows, "cheat_spawn")


def test_an_agent_that_kills_its_parents_does_not_stop_the_suite(tmp_path, attack_dir):
    summary, rows, _ = _attack(tmp_path, "KillsRunner")
    assert summary.ran == 2 and rows["zero"].ok  # we (the runner) are alive and recorded
    outcome = json.loads((attack_dir / "kill_runner.json").read_text())
    if os.geteuid() == 0:  # unprivileged: it may not signal the problem process or the runner
        assert set(outcome.values()) == {"PermissionError"}
        assert honest(rows, "cheat_kill_runner")
    else:
        assert not rows["cheat_kill_runner"].ok


# ----------------------------------------------------------------------------- bad actions


NON_FINITE = ("nan", "inf", "one -inf")


def _bad_values(space: gym.Space, rng: np.random.Generator, optional: tuple[str, ...] = (),
                lenient: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    """(label, value) pairs outside ``space`` that an env must refuse. ``optional`` and
    ``lenient``: the Dict keys an env documents as omittable, or as finite only where used."""
    if isinstance(space, spaces.Discrete):
        lo, hi = int(space.start), int(space.start + space.n)
        return [("fractional", lo + 0.5), ("nan", float("nan")), ("inf", float("inf")),
                ("above", hi), ("below", lo - 1), ("complex", complex(lo, 1)), ("none", None),
                ("text", "1"), ("two", [lo, lo])]
    if isinstance(space, spaces.Box):
        shape = space.shape
        one_inf = np.zeros(shape)
        one_inf.reshape(-1)[-1] = -np.inf
        bad = [("nan", np.full(shape, np.nan)), ("inf", np.full(shape, np.inf)),
               ("one -inf", one_inf), ("extra axis", np.zeros((*shape, 2))),
               ("complex", np.zeros(shape) + 1j), ("none", None), ("text", "x")]
        if int(np.prod(shape)) > 1:
            bad.append(("too short", np.zeros(int(np.prod(shape)) - 1)))
        return bad
    if isinstance(space, spaces.MultiDiscrete):
        shape, lo = space.shape, space.start
        return [("fractional", lo + 0.5), ("nan", np.full(shape, np.nan)),
                ("above", lo + space.nvec), ("below", lo - 1), ("complex", lo + 1j),
                ("extra axis", np.zeros((*shape, 2), np.int64)), ("none", None)]
    if isinstance(space, spaces.MultiBinary):
        shape = space.shape
        return [("two", np.full(shape, 2)), ("half", np.full(shape, 0.5)),
                ("extra axis", np.zeros((*shape, 2), np.int64)), ("none", None)]
    if isinstance(space, spaces.Dict):
        good = space.sample()
        bad: list[tuple[str, Any]] = [("none", None), ("list", [])]
        bad += [(f"missing {k!r}", {j: v for j, v in good.items() if j != k})
                for k in space.spaces if k not in optional]
        bad.append(("unknown key", {**good, "zz_unknown": 0}))
        for key, sub in space.spaces.items():
            bad += [(f"{key}: {label}", {**good, key: value})
                    for label, value in _bad_values(sub, rng)
                    if not (key in lenient and label in NON_FINITE)]
        return bad
    if isinstance(space, spaces.Tuple):
        good = list(space.sample())
        bad = [("none", None), ("short", tuple(good[:-1]))]
        for i, sub in enumerate(space.spaces):
            bad += [(f"[{i}]: {label}", tuple(good[:i] + [value] + good[i + 1:]))
                    for label, value in _bad_values(sub, rng)]
        return bad
    return []


def _short_id(problem_id: str) -> str:
    return problem_id.removeprefix("papergym/")


# the built-in problems (the harness's fixture problems register only when a test imports them)
BUILTIN = [p for p in papergym.problems()
           if str(p.entry_point).startswith("papergym.envs.")]
ENV_IDS = [p.id for p in BUILTIN if p.kind == "env"]
PARALLEL_IDS = [p.id for p in BUILTIN if p.kind == "parallel_env"]


@pytest.mark.parametrize("problem_id", ENV_IDS)
def test_env_refuses_every_bad_action_by_name(problem_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium's passive checker warns on what we test
        env = papergym.make(problem_id, tier="smoke").unwrapped
    rng = np.random.default_rng(0)
    env.action_space.seed(0)
    env.reset(seed=0)
    optional = tuple(getattr(env, "optional_action_keys", ()))
    lenient = tuple(getattr(env, "lenient_action_keys", ()))
    accepted = []
    for label, value in _bad_values(env.action_space, rng, optional, lenient):
        try:
            env.step(value)
        except ValueError as err:
            assert _short_id(problem_id) in str(err), f"{label}: {err} does not name the env"
        except Exception as err:  # noqa: BLE001 - any other type is the bug this test catches
            raise AssertionError(f"{problem_id} {label}: {type(err).__name__}: {err}") from err
        else:
            accepted.append(label)
    assert not accepted, f"{problem_id} accepted bad actions: {accepted}"
    env.step(_valid_action(env))  # a refused action left the env usable
    env.close()


def _valid_action(env: Any) -> Any:
    mask = getattr(env, "_action_mask", None)
    if isinstance(env.action_space, spaces.Discrete) and callable(mask):
        return int(np.flatnonzero(mask())[0]) + int(env.action_space.start)
    return env.action_space.sample()


# values an env documents as meaningful: FedRounds' docstring, "a client ... mapped to None
# sends nothing this round"
DOCUMENTED = {"papergym/FedRounds-v0": {"none"}, "papergym/FedRounds-v1": {"none"}}


@pytest.mark.parametrize("problem_id", PARALLEL_IDS)
def test_parallel_env_refuses_every_bad_action_by_name(problem_id):
    env = papergym.make(problem_id, tier="smoke")
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    name = _short_id(problem_id)
    optional = tuple(getattr(env, "optional_action_keys", ()))
    lenient = tuple(getattr(env, "lenient_action_keys", ()))
    good = {a: env.action_space(a).sample() for a in env.agents}
    victim = env.agents[-1]
    cases: list[tuple[str, Any]] = [("none", None), ("list", [1, 2]),
                                    ("unknown agent", {**good, "nobody": good[victim]})]
    cases += [(f"{victim} {label}", {**good, victim: value})
              for label, value in _bad_values(env.action_space(victim), rng, optional, lenient)
              if label not in DOCUMENTED.get(problem_id, ())]
    accepted = []
    for label, actions in cases:
        try:
            env.step(actions)
        except ValueError as err:
            assert name in str(err), f"{label}: {err} does not name the env"
        except Exception as err:  # noqa: BLE001
            raise AssertionError(f"{problem_id} {label}: {type(err).__name__}: {err}") from err
        else:
            accepted.append(label)
    assert not accepted, f"{problem_id} accepted bad actions: {accepted}"
    env.step(good)  # a refused action left the env usable


def test_performative_game_without_actions_is_a_clear_error():
    env = papergym.make("papergym/PerformativeGame-v0", tier="smoke")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"PerformativeGame-v0: actions no action for agents"):
        env.step({})


def test_fedrounds_absent_clients_send_nothing_but_none_is_refused():
    env = papergym.make("papergym/FedRounds-v0", tier="smoke")
    env.reset(seed=0)
    env.step({})  # documented: an absent client sends nothing this round
    with pytest.raises(ValueError, match=r"FedRounds-v0: actions must be a dict"):
        env.step(None)
    message = {k: v for k, v in env.action_space("client_0").sample().items()}
    message["n_scalars"] = float("inf")
    with pytest.raises(ValueError, match=r"FedRounds-v0: actions\['client_0'\]\['n_scalars'\]"):
        env.step({"client_0": message})


def test_check_action_names_the_field_and_keeps_good_values():
    from papergym.actions import InvalidAction, check_action

    space = spaces.Dict({"assign": spaces.MultiDiscrete([4, 4, 4]),
                         "params": spaces.Box(0, 1, (3, 2), np.float32)})
    good = {"assign": [0, 3, 1.0], "params": np.zeros((3, 2))}
    out = check_action(space, good, "papergym/X-v0")
    assert out["assign"].tolist() == [0, 3, 1] and out["params"].shape == (3, 2)
    with pytest.raises(InvalidAction, match=r"papergym/X-v0: action\['assign'\]\[2\] = 2.5 is "
                                            r"not an integer"):
        check_action(space, {**good, "assign": [0, 1, 2.5]}, "papergym/X-v0")
    with pytest.raises(InvalidAction, match=r"action\['params'\]\[1, 0\]|action\['params'\]\[1\]\[0\]"):
        check_action(space, {**good, "params": [[0, 0], [np.nan, 0], [0, 0]]}, "papergym/X-v0")
    assert check_action(spaces.Discrete(3), np.array([2.0]), "e") == 2
    assert issubclass(InvalidAction, gym.error.InvalidAction)  # what gymnasium users catch


# ----------------------------------------------------------------------- names and strings

TITLE_ESCAPE = "\x1b]0;pwned\x07"  # OSC: retitle the terminal window
CLEAR_SCREEN = "\x1b[2J"


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory):
    from tests.core.test_cli_and_render import _hostile_report

    report, rows = _hostile_report(tmp_path_factory.mktemp("hostile"))
    return report, rows


def test_no_spec_name_leaves_out_or_overwrites_a_readme(tmp_path, hostile_report):
    from papergym.leaderboard.publish import publish
    from papergym.safe import safe_join

    report, rows = hostile_report
    readme = tmp_path / "README.md"
    readme.write_text("the repository's README\n")
    root = tmp_path / "leaderboard" / "published"
    for name in ("../..", "..", str(tmp_path), "/tmp/elsewhere", "a/../../.."):
        # the spec model refuses these names; a report built around validation is refused too
        forged = type(report)(**{**report.__dict__,
                                 "spec": report.spec.model_copy(update={"name": name})})
        with pytest.raises(ValueError, match="name|outside"):
            publish(forged, rows, root=root, allow_smoke=True)
        with pytest.raises(ValueError, match="outside"):
            safe_join(root, name, "smoke")
    assert readme.read_text() == "the repository's README\n"
    assert not (tmp_path / "leaderboard" / "README.md").exists()


def test_cli_writes_reports_only_below_out(tmp_path, monkeypatch):
    from papergym import cli

    report = type("R", (), {})()
    report.spec = type("S", (), {"name": "../../escaped"})()
    report.tier = "smoke"
    monkeypatch.setattr("papergym.leaderboard.render_html.write_report",
                        lambda *a, **k: pytest.fail("wrote a report for a hostile name"))
    with pytest.raises(ValueError):
        cli._write_reports(report, tmp_path / "out")
    assert not (tmp_path / "escaped").exists()


def test_every_href_is_relative_and_quoted():
    from papergym.leaderboard.render_html import render_index_html
    from papergym.safe import href

    assert href("toy", "smoke", "index.html") == "toy/smoke/index.html"
    assert href("javascript:alert(1)", "index.html") == "javascript%3Aalert%281%29/index.html"
    assert href("..", "x") == "%2E%2E/x" and href("a/b") == "a%2Fb"
    with pytest.raises(ValueError):
        href("", "index.html")  # would become an absolute "/index.html"
    counts = {"holds": 1, "fails": 0, "inconclusive": 0, "other": 0}
    page = render_index_html([{"name": "javascript:alert(1)", "counts": counts},
                              {"name": "//evil.example/x", "counts": counts}])
    links = [part.split('"', 1)[0] for part in page.split('href="')[1:]]
    assert links and all(":" not in link and not link.startswith("/") for link in links), links


def test_markdown_escapes_html_and_neutralizes_links(hostile_report):
    from papergym.leaderboard.render_markdown import render_markdown
    from papergym.safe import md_cell

    md = render_markdown(hostile_report[0])
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)>" in md
    assert "](javascript:" not in md and "\x1b" not in md
    assert md_cell("a | b\nc <b> & P(> x)") == "a \\| b c &lt;b> &amp; P(> x)"


def test_terminal_strips_escapes_and_prints_markup_literally(hostile_report, monkeypatch):
    import io

    monkeypatch.setenv("COLUMNS", "400")  # rich folds long cells; keep each on one line

    from papergym.leaderboard.render_terminal import print_claims, print_leaderboard

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    report = hostile_report[0]
    statement = f"{TITLE_ESCAPE}{CLEAR_SCREEN}[/] [bold]loud[/bold] beats zero"
    verdicts = [type(v)(**{**v.__dict__, "statement": statement}) for v in report.verdicts]
    hostile = type(report)(**{**report.__dict__, "verdicts": verdicts})
    for stream in (io.StringIO(), Terminal()):  # plain text in a pipe, rich on a terminal
        print_leaderboard(hostile, stream=stream)
        print_claims(hostile, stream=stream)
        out = stream.getvalue()
        assert "]0;pwned" not in out and CLEAR_SCREEN not in out
        assert "[/]" in out and "[bold]loud[/bold]" in out  # markup shown, not applied
        assert "[link=javascript:alert(1)]" in out  # the title's markup, literally
