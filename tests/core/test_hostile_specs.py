"""Malformed and hostile benchmark specs: each is one SpecError line naming the file and the
field (or line/column), and ``papergym run`` exits non-zero with that one line -- no
traceback, no hang, no trial run. The corpus covers the reading budget (bombs, depth, size,
duplicate keys), field caps (seeds, timeouts, grids), safe names, and the checks against the
registries (imports, problems, declared arguments and metrics, agents, claims' cells, tiers).
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from papergym.benchmarks.runner import import_spec_modules
from papergym.benchmarks.spec import SpecError, load_spec
from papergym.benchmarks.spec_checks import check_spec
from papergym.cli import main
from tests.conftest import FIXTURES, TOY_SPEC

TOY_PROBLEM = str(FIXTURES / "toy_problem.py")


def _toy() -> dict[str, Any]:
    data = yaml.safe_load(TOY_SPEC.read_text())
    data["imports"] = [TOY_PROBLEM]
    return data


def _smoke(d: dict[str, Any]) -> dict[str, Any]:
    return d["problems"][0]["tiers"]["smoke"]


def _toy_text(**replace: str) -> str:
    """The toy spec as YAML text with top-level lines appended (for raw-YAML attacks)."""
    text = yaml.safe_dump(_toy(), sort_keys=False)
    return text + "".join(f"{k}: {v}\n" for k, v in replace.items())


BILLION_LAUGHS = "\n".join(
    ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
)


def _bomb_in_kwargs() -> str:
    # anchors defined in a throwaway top-level key would be an unknown field; put the bomb
    # where the issue found it: inside a tier's kwargs
    lines = yaml.safe_dump(_toy(), sort_keys=False).splitlines()
    out = []
    for line in lines:
        out.append(line)
        if line.strip() == "smoke:":
            indent = " " * (len(line) - len(line.lstrip()) + 2)
            out.append(f"{indent}kwargs:")
            out += [f"{indent}  {bomb_line}" for bomb_line in BILLION_LAUGHS.splitlines()]
    return "\n".join(out) + "\n"


def _tree(depth: int) -> str:
    return "x: " + "[" * depth + "]" * depth + "\n"


def _mapping_tree(depth: int) -> str:
    return "".join("  " * i + f"k{i}:\n" for i in range(depth)) + "  " * depth + "v: 1\n"


def _aliases(n: int) -> str:
    return _toy_text() + "x: &x 1\ny: [" + ", ".join(["*x"] * n) + "]\n"


def _stacked_aliases() -> str:
    """Each anchor nests the previous one: 30 levels written, 30 x 30 expanded."""
    lines = ["l0: &l0 " + "[" * 30 + "1" + "]" * 30]
    lines += [f"l{i}: &l{i} " + "[" * 29 + f"*l{i - 1}" + "]" * 29 for i in range(1, 5)]
    return "\n".join(lines) + "\n"


# (case id, the spec: a mutation of the toy dict, or raw text / bytes, what the message names)
Mutation = Callable[[dict[str, Any]], Any]
CASES: list[tuple[str, Mutation | str | bytes, str]] = [
    # --- reading: budgets, YAML itself
    ("billion-laughs", _bomb_in_kwargs(), "expands to more than"),
    ("billion-laughs-top", BILLION_LAUGHS + "\n", "expands to more than"),
    ("deep-nesting-100k", _tree(100_000), "nested more than 64"),
    ("deep-mapping", _mapping_tree(200), "nested more than 64"),
    ("stacked-aliases-depth", _stacked_aliases(), "nested more than 64 levels deep once aliases"),
    ("too-many-aliases", _aliases(500), "more than 100 aliases"),
    ("recursive-alias", "a: &a [1, *a]\n", "refers to its own anchor"),
    ("duplicate-top-key", _toy_text(name="again"), "duplicate key 'name'"),
    ("duplicate-nested-key", "name: x\nfamily: y\npaper: {key: a, key: b, title: t}\n",
     "duplicate key 'key'"),
    ("oversized-file", "name: x\n" + "#" * (1 << 20) + "\n", "larger than"),
    ("not-utf8", b"name: \xff\xfe\n", "cannot read"),
    ("syntax-error", "name: [unclosed\n", "not valid YAML"),
    ("tab-indent", "name: x\n\tfamily: y\n", "not valid YAML"),
    ("top-level-list", "- a\n- b\n", "must be a mapping"),
    ("empty-file", "", "must be a mapping"),
    ("python-tag", "name: !!python/object/apply:os.system [echo hi]\n", "not valid YAML"),
    # --- seeds and other caps
    ("seeds-billion", lambda d: _smoke(d).update(seeds=1_000_000_000), "tiers.smoke.seeds"),
    ("seeds-true", lambda d: _smoke(d).update(seeds=True), "tiers.smoke.seeds"),
    ("seeds-zero", lambda d: _smoke(d).update(seeds=0), "tiers.smoke.seeds"),
    ("seeds-string", lambda d: _smoke(d).update(seeds="3"), "tiers.smoke.seeds"),
    ("seeds-float", lambda d: _smoke(d).update(seeds=2.5), "tiers.smoke.seeds"),
    ("seeds-negative-in-list", lambda d: _smoke(d).update(seeds=[0, -1]), "tiers.smoke.seeds"),
    ("seeds-eval-range", lambda d: _smoke(d).update(seeds=[0, 1_000_000]), "tiers.smoke.seeds"),
    ("seeds-empty-list", lambda d: _smoke(d).update(seeds=[]), "tiers.smoke.seeds"),
    ("seeds-repeated", lambda d: _smoke(d).update(seeds=[1, 1]), "tiers.smoke.seeds"),
    ("seeds-bool-in-list", lambda d: _smoke(d).update(seeds=[0, True]), "tiers.smoke.seeds"),
    ("seeds-too-many", lambda d: _smoke(d).update(seeds=list(range(5000))), "tiers.smoke.seeds"),
    ("timeout-inf", lambda d: _smoke(d).update(timeout_s=float("inf")), "tiers.smoke.timeout_s"),
    ("timeout-nan", lambda d: _smoke(d).update(timeout_s=float("nan")), "tiers.smoke.timeout_s"),
    ("timeout-negative", lambda d: _smoke(d).update(timeout_s=-1), "tiers.smoke.timeout_s"),
    ("grid-explosion", lambda d: _smoke(d).update(grid={f"g{i}": list(range(10)) for i in range(10)}),
     "tiers.smoke"),
    ("grid-empty-axis", lambda d: _smoke(d).update(grid={"horizon": []}), "tiers.smoke.grid"),
    ("claim-value-nan", lambda d: d["claims"][1].update(value=float("nan")), "claims.1.value"),
    # --- names that would become paths, links or markup
    ("name-dotdot", lambda d: d.update(name="../.."), "field name"),
    ("name-absolute", lambda d: d.update(name="/etc/cron.d/x"), "field name"),
    ("name-javascript", lambda d: d.update(name="javascript:alert(1)"), "field name"),
    ("name-rich-markup", lambda d: d.update(name="[/]"), "field name"),
    ("name-empty", lambda d: d.update(name=""), "field name"),
    ("name-hidden", lambda d: d.update(name=".git"), "field name"),
    ("name-long", lambda d: d.update(name="a" * 65), "field name"),
    ("family-dotdot", lambda d: d.update(family="../x"), "field family"),
    ("section-markup", lambda d: d["problems"][0].update(name="[bold]x[/]"), "problems.0.name"),
    ("label-path", lambda d: d["problems"][0]["agents"].append({"id": "greedy", "label": "../x"}),
     "problems.0.agents.4.label"),
    ("label-ansi", lambda d: d["problems"][0]["agents"].append(
        {"id": "greedy", "label": "g\x1b[31mred"}), "problems.0.agents.4.label"),
    ("agent-id-html", lambda d: d["problems"][0]["agents"].append("<script>"), "problems.0.agents.4.id"),
    ("paper-url-javascript", lambda d: d["paper"].update(url="javascript:alert(1)"), "paper.url"),
    ("claim-id-html", lambda d: d["claims"][0].update(id="<img src=x>"), "claims.0.id"),
    # --- structure
    ("agents-empty", lambda d: d["problems"][0].update(agents=[]), "problems.0.agents"),
    ("tiers-empty", lambda d: d["problems"][0].update(tiers={}), "problems.0.tiers"),
    ("tier-unknown", lambda d: d["problems"][0]["tiers"].update(huge={"seeds": 1}),
     "problems.0.tiers.huge"),
    ("unknown-top-field", lambda d: d.update(colour="blue"), "colour"),
    ("paper-missing", lambda d: d.pop("paper"), "field paper"),
    ("direction-sideways", lambda d: d["problems"][0]["metric"].update(direction="sideways"),
     "problems.0.metric.direction"),
    ("claim-unknown-section", lambda d: d["claims"][0].update(problem="nowhere"), "claims.0.problem"),
    ("claim-unknown-agent", lambda d: d["claims"][0].update(baseline="nobody"), "nobody"),
    # --- against the registries, before any trial runs
    ("import-missing-module", lambda d: d.update(imports=["no_such_module_xyz"]), "imports.0"),
    ("import-missing-file", lambda d: d.update(imports=[TOY_PROBLEM, "missing.py"]), "imports.1"),
    ("problem-unknown", lambda d: d["problems"][0].update(problem="papergym/Nothing-v0"),
     "problems.0.problem"),
    ("kwarg-unknown", lambda d: _smoke(d).update(kwargs={"horizn": 8}),
     "problems.0.tiers.smoke.kwargs.horizn"),
    ("kwarg-unknown-grid", lambda d: _smoke(d).update(grid={"horizon": [8], "speed": [1]}),
     "problems.0.tiers.smoke.grid.speed"),
    ("kwarg-unknown-cell", lambda d: _smoke(d).update(cells=[{"horizon": 8, "wind": 1}]),
     "problems.0.tiers.smoke.cells.0.wind"),
    ("kwarg-wrong-type", lambda d: _smoke(d).update(kwargs={"horizon": "eight"}),
     "problems.0.tiers.smoke.kwargs.horizon"),
    ("kwarg-yaml-exponent-string", lambda d: _smoke(d).update(kwargs={"horizon": "1e5"}),
     "problems.0.tiers.smoke.kwargs.horizon"),
    ("kwarg-wrong-type-grid", lambda d: _smoke(d).update(grid={"horizon": [8, [16]]}),
     "problems.0.tiers.smoke.grid.horizon.1"),
    ("kwarg-wrong-type-cell", lambda d: _smoke(d).update(cells=[{"horizon": 8}, {"horizon": {}}]),
     "problems.0.tiers.smoke.cells.1.horizon"),
    ("kwarg-tier", lambda d: _smoke(d).update(kwargs={"tier": "full"}),
     "problems.0.tiers.smoke.kwargs.tier"),
    ("metric-unknown", lambda d: d["problems"][0]["metric"].update(name="reward"),
     "problems.0.metric.name"),
    ("metric-wrong-direction", lambda d: d["problems"][0]["metric"].update(direction="min"),
     "problems.0.metric.direction"),
    ("secondary-unknown", lambda d: d["problems"][0].update(secondary=["episode_len"]),
     "problems.0.secondary.0"),
    ("claim-metric-unknown", lambda d: d["claims"][0].update(metric="score", direction="max"),
     "claims.0.metric"),
    ("where-key-no-cell", lambda d: d["claims"][0].update(where={"horizn": 8}), "claims.0.where.horizn"),
    ("where-value-no-cell", lambda d: d["claims"][0].update(where={"horizon": 99}),
     "claims.0.where.horizon"),
    ("agent-at-no-cell", lambda d: d["claims"][0].update(agent_at={"horizon": 99}),
     "claims.0.agent_at.horizon"),
    ("interaction-key-no-cell", lambda d: d["claims"].append(
        {"id": "I9", "statement": "s", "problem": "reach", "kind": "interaction",
         "agent": "greedy", "baseline": "zero", "larger_at": {"horizn": 8},
         "than_at": {"horizon": 16}}), "claims.3.larger_at.horizn"),
    ("trend-axis-no-cell", lambda d: d["claims"].append(
        {"id": "T9", "statement": "s", "problem": "reach", "kind": "trend", "agent": "greedy",
         "axis": "width", "trend": "increasing"}), "claims.3.axis"),
    ("agent-unknown", lambda d: d["problems"][0]["agents"].append("nobody"), "problems.0.agents.4"),
    ("agent-bad-config", lambda d: d["problems"][0]["agents"].append(
        {"id": "slow", "config": {"sleep": 1, "colour": "red"}}), "problems.0.agents.4"),
]


def _write(tmp_path: Path, spec: Mutation | str | bytes) -> Path:
    path = tmp_path / "hostile.yaml"
    if isinstance(spec, bytes):
        path.write_bytes(spec)
    elif isinstance(spec, str):
        path.write_text(spec)
    else:
        data = _toy()
        spec(data)
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return path


def _load_and_check(path: Path, tier: str = "smoke") -> None:
    spec = load_spec(path)
    import_spec_modules(spec, path)
    check_spec(spec, path, tier)


@pytest.mark.parametrize(("case", "spec", "names"), CASES, ids=[c[0] for c in CASES])
def test_hostile_spec_is_one_line_naming_file_and_field(tmp_path, capsys, case, spec, names):
    path = _write(tmp_path, spec)
    with pytest.raises(SpecError) as caught:
        _load_and_check(path)
    message = str(caught.value)
    assert str(path) in message and names in message, message
    assert "\n" not in message and "Traceback" not in message
    store = tmp_path / "s.sqlite"
    assert main(["run", str(path), "--store", str(store), "--quiet", "--no-report"]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and "Traceback" not in err, err
    assert not store.exists() or _stored_rows(store) == 0  # nothing ran


def _stored_rows(store: Path) -> int:
    from papergym.leaderboard.store import Store

    with Store(store) as db:
        return len(db.keys())


def test_billion_laughs_fails_fast_in_little_memory(tmp_path):
    path = _write(tmp_path, _bomb_in_kwargs())
    tracemalloc.start()
    try:
        with pytest.raises(SpecError, match=r"line \d+, column \d+"):
            load_spec(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20, f"reading the bomb peaked at {peak / 2**20:.1f} MiB"


def test_duplicate_key_names_both_lines(tmp_path):
    path = _write(tmp_path, "name: a\nfamily: f\nname: b\n")
    with pytest.raises(SpecError, match=r"line 3, column 1.*duplicate key 'name' \(first on line 1\)"):
        load_spec(path)


def test_merge_keys_and_a_few_aliases_still_load(tmp_path):
    data = _toy()
    text = yaml.safe_dump(data, sort_keys=False)
    text = text.replace("  tiers:\n    smoke:\n", "  tiers:\n    smoke: &smoke\n", 1)
    text = text.replace("    standard:\n", "    standard:\n      <<: *smoke\n", 1)
    path = _write(tmp_path, text)
    spec = load_spec(path)
    assert spec.problems[0].tiers["standard"].seeds == 5  # the explicit key overrides the merge


def test_missing_tier_is_an_error_at_run_time(tmp_path, capsys):
    path = _write(tmp_path, lambda d: None)
    assert main(["run", str(path), "--tier", "full", "--store", str(tmp_path / "s.sqlite"),
                 "--quiet", "--no-report"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no section defines tier 'full'" in err


def test_seeds_flag_is_capped(tmp_path, capsys):
    assert main(["run", str(TOY_SPEC), "--seeds", "1000000000", "--store",
                 str(tmp_path / "s.sqlite"), "--quiet", "--no-report"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--seeds" in err and "between 1 and 1000" in err


def test_agent_that_cannot_act_on_the_problem_is_refused(tmp_path):
    plugin = tmp_path / "elsewhere.py"
    plugin.write_text(
        "from papergym import Agent\n"
        "class Elsewhere(Agent):\n"
        "    id, family, role, paper = 'elsewhere_only', 'fixture', 'baseline', 'fixture'\n"
        "    problems = ('papergym/SomethingElse-*',)\n"
        "    def solve(self, view, budget, seed):\n"
        "        return lambda obs: [0.0]\n"
    )
    path = _write(tmp_path, lambda d: (d.update(imports=[TOY_PROBLEM, str(plugin)]),
                                       d["problems"][0]["agents"].append("elsewhere_only")))
    with pytest.raises(SpecError, match=r"problems\.0\.agents\.4\.id: agent fixture/elsewhere_only "
                                        r"cannot act on papergym/FixtureReach-v0"):
        _load_and_check(path)


def test_registered_problems_declare_their_arguments():
    import papergym

    for problem in papergym.problems():
        arguments = problem.arguments()
        assert "tier" in arguments
        for tier in ("smoke", "standard", "full"):
            unknown = set(problem.tier_kwargs(tier)) - set(arguments)
            assert not unknown, f"{problem.id} tier {tier} defaults {unknown} are not arguments"


def test_builtin_specs_pass_the_registry_checks():
    from papergym.benchmarks.spec import spec_paths

    for path in spec_paths().values():
        spec = load_spec(path)
        check_spec(spec, path)
