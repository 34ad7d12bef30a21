"""Benchmark specs: valid files load; malformed ones give one clear line naming file and field."""

from __future__ import annotations

import pytest
import yaml

from papergym.benchmarks.spec import SpecError, find_spec, load_spec, spec_paths
from tests.conftest import TOY_SPEC


def _write(tmp_path, data):
    path = tmp_path / "bench.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return path


def _toy():
    return yaml.safe_load(TOY_SPEC.read_text())


def test_toy_spec_expands_grid_cells():
    spec = load_spec(TOY_SPEC)
    smoke = spec.section("reach").tiers["smoke"]
    assert smoke.seed_list() == [0, 1, 2]
    assert smoke.expand_cells() == [{"horizon": 8}, {"horizon": 16}]


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.pop("paper"), "field paper"),
        (lambda d: d["problems"][0]["metric"].update(direction="up"), "problems.0.metric.direction"),
        (lambda d: d["problems"][0]["tiers"]["smoke"].update(seeds=0), "problems.0.tiers.smoke.seeds"),
        (lambda d: d["problems"][0]["tiers"].update(huge={"seeds": 1}), "problems.0.tiers.huge"),
        (lambda d: d["problems"][0]["agents"].append("greedy"), "appear twice"),
        (lambda d: d["claims"][0].update(baseline="nobody"), "nobody"),
        (lambda d: d["claims"][1].pop("value"), "op and value"),
        (lambda d: d.update(colour="blue"), "colour"),
    ],
)
def test_malformed_spec_names_file_and_field(tmp_path, mutate, field):
    data = _toy()
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    message = str(info.value)
    assert str(path) in message and field in message
    assert "\n" not in message


def test_bad_yaml_reports_line(tmp_path):
    path = _write(tmp_path, "name: x\nproblems: [\n  - {a: 1\n")
    with pytest.raises(SpecError, match=r"line \d+"):
        load_spec(path)


def test_unknown_benchmark_lists_known_ones():
    with pytest.raises(SpecError, match="registered benchmarks"):
        find_spec("no-such-benchmark")


def test_every_shipped_spec_is_valid():
    for path in spec_paths().values():
        load_spec(path)
