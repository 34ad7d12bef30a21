"""The maskdiff benchmark compares samplers at one nucleus: every compare claim declares the
nucleus matched, the agents it compares (and its control) resolve to the same nucleus at every
tier it runs at, and the spec check refuses the benchmark when one of them does not."""

from __future__ import annotations

import pytest
import yaml

from papergym.agent import REGISTRY
from papergym.benchmarks.matched import compared_labels
from papergym.benchmarks.spec import SpecError, load_spec, spec_paths
from papergym.benchmarks.spec_checks import check_spec

OFFICIAL_NUCLEUS = 0.9  # the official scripts sample G-Star, MDLM and ReMDM at top-p 0.9


@pytest.fixture(scope="module")
def spec():
    return load_spec(spec_paths()["maskdiff"])


def _nucleus(section, label: str, tier: str) -> float:
    entry = section.agent(label)
    cls = REGISTRY.get(entry.id, family="maskdiff")
    return cls.validate_config(entry.config_at(tier)).model_dump()["nucleus"]


def test_every_compare_claim_holds_the_nucleus_matched_at_every_tier(spec):
    compares = [c for c in spec.claims if c.kind in ("compare", "interaction")
                and c.agent not in ("exact",)]  # S1 compares two references, not samplers
    assert len(compares) >= 12
    section = {s.name: s for s in spec.problems}["sampling"]
    for claim in compares:
        assert "nucleus" in claim.matched, claim.id
        for tier in claim.tiers:
            values = {label: _nucleus(section, label, tier) for label in compared_labels(claim)
                      if section.runs_at(label, tier)}
            assert set(values.values()) == {OFFICIAL_NUCLEUS}, (claim.id, tier, values)


def test_the_learned_remasker_claim_has_random_and_confidence_remasking_as_controls(spec):
    claims = {c.id: c for c in spec.claims}
    for T in (8, 16):
        beats_mdlm, beats_conf = claims[f"M1_T{T}"], claims[f"M1c_T{T}"]
        assert beats_mdlm.control == beats_conf.control == "star-random"
        assert beats_conf.baseline == "star-conf"
        assert beats_mdlm.family_id == beats_conf.family_id == "M1"
    assert claims["M6"].agent == "gstar-layer" and claims["M6"].baseline == "mdlm-p09"
    for claim in spec.claims:
        if claim.role == "paper":
            assert claim.sesoi and claim.family and claim.control, claim.id


def test_a_compare_at_another_nucleus_is_refused_before_any_trial(tmp_path):
    data = yaml.safe_load(spec_paths()["maskdiff"].read_text())
    m1 = next(c for c in data["claims"] if c["id"] == "M1_T8")
    m1["baseline"] = "mdlm"  # MDLM at its class default, nucleus 1.0
    path = tmp_path / "maskdiff.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(SpecError) as err:
        check_spec(load_spec(path), path)
    message = str(err.value)
    assert "claim M1_T8" in message and "'nucleus'" in message
    assert "gstar=0.9" in message and "mdlm=1.0" in message
