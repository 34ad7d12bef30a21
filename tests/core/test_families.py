"""Claim families: the tally counts headlines (intersection-union for holds, Holm for fails),
with the Benjamini-Hochberg count of holds beside it and post-hoc claims apart."""

from __future__ import annotations

import pytest

from papergym.benchmarks.spec import ClaimSpec, claim_family
from papergym.leaderboard.claims import tally
from papergym.leaderboard.families import bh_holds, family_verdicts, tally_v2


def claim(id_, verdict, p=None, p_worse=None, **kw):
    return {"id": id_, "verdict": verdict, "role": "paper", "p_value": p, "p_worse": p_worse,
            **kw}


@pytest.mark.parametrize(("claim_id", "family"), [
    ("C2", "C2"), ("C2b", "C2"), ("C2-GCN", "C2"), ("C2_units", "C2"), ("B1-8", "B1"),
    ("U2_inertia_es", "U2"), ("T2a", "T2"), ("D1_plugin", "D1"), ("E12", "E12")])
def test_a_claim_without_family_belongs_to_its_id_stem(claim_id, family):
    assert claim_family(claim_id) == family
    spec = ClaimSpec(id=claim_id, statement="", problem="s", kind="threshold", agent="a",
                     op=">", value=0.0)
    assert spec.family_id == family
    assert spec.model_copy(update={"family": "H1"}).family_id == "H1"


def test_a_family_holds_only_when_every_member_holds():
    entries = [claim("C1", "holds", 0.01), claim("C1b", "holds", 0.02),
               claim("C2", "holds", 0.01), claim("C2b", "inconclusive", 0.2),
               claim("C3", "underpowered"), claim("C3b", "holds", 0.01)]
    assert family_verdicts(entries) == {"C1": "holds", "C2": "inconclusive",
                                        "C3": "underpowered"}
    assert tally(entries)["holds"] == 4  # the raw tally counts the split claims
    assert tally_v2(entries)["tally_families"]["holds"] == 1


def test_a_family_fails_when_a_member_fails_after_holm_over_the_family():
    # 0.03 alone fails at 0.05; Holm over three members needs 0.05 / 3
    weak = [claim("C1", "fails", 0.9, 0.03), claim("C1b", "holds", 0.01, 0.99),
            claim("C1c", "inconclusive", 0.3, 0.6)]
    assert family_verdicts(weak) == {"C1": "inconclusive"}
    strong = [dict(weak[0], p_worse=0.001), *weak[1:]]
    assert family_verdicts(strong) == {"C1": "fails"}
    # a declared family overrides the stem
    split = [claim("A1", "holds", 0.01, family="H"), claim("B7", "holds", 0.02, family="H")]
    assert family_verdicts(split) == {"H": "holds"}


def test_bh_keeps_holds_whose_adjusted_p_is_below_alpha_and_post_hoc_is_apart():
    entries = [claim(f"C{i}", "holds" if p < 0.05 else "inconclusive", p)
               for i, p in enumerate([0.001, 0.02, 0.04, 0.3, 0.5, 0.6, 0.7, 0.8])]
    # BH at 0.05 over 8 p-values: 0.001 * 8 = 0.008 passes; 0.02 * 8 / 2 = 0.08 does not
    assert tally(entries)["holds"] == 3 and bh_holds(entries) == 1
    entries.append(claim("R1", "holds"))  # a bound without a p-value counts as it stands
    assert bh_holds(entries) == 2
    late = claim("P1", "holds", 0.001, post_hoc=True)
    assert tally(entries + [late])["holds"] == 4
    assert tally_v2(entries + [late])["post_hoc"] == {"holds": 1}


def test_a_post_hoc_claim_says_why():
    with pytest.raises(ValueError, match="post_hoc_reason"):
        ClaimSpec(id="C9", statement="", problem="s", kind="threshold", agent="a", op=">",
                  value=0.0, post_hoc=True)
