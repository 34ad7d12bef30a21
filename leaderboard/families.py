"""Claim families and multiplicity: the published tally counts headlines, not split claims.

Pure functions over claim verdicts (``Verdict`` objects or the dicts of a ``claims.json``).

A paper states one headline; a spec may split it into several tallied claims (one per
baseline, per metric, per setting). Claims with the same ``family`` (default: the id's stem,
papergym.benchmarks.spec.claim_family) form one family, and the tally counts families:

- a family **holds** when every member holds: an intersection-union test ("beats every
  baseline" is the intersection of the members' alternatives, so each member at level alpha
  gives the family level alpha, with no adjustment; Berger 1982);
- it **fails** when a member fails after Holm's adjustment of the members' p-values for the
  other side over the family (a member without such a p-value fails as it stands);
- otherwise it takes the weakest member verdict (underpowered before inconclusive before not
  evaluable).

Beside the raw count of paper holds, ``bh_holds`` counts the holds that survive the
Benjamini-Hochberg adjustment of the p-values of every paper claim of the benchmark (false
discovery rate at alpha; statsmodels' ``fdr_bh``); a hold without a p-value (threshold, rate
and correlation claims decide on a bound) counts as it stands. Claims marked ``post_hoc``
(added or changed after the benchmark's first publish) are counted apart, in ``post_hoc``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

VERDICTS = ("holds", "fails", "inconclusive", "underpowered", "not evaluable")
WEAKEST_FIRST = ("underpowered", "inconclusive", "not evaluable")


def _dicts(entries: list[Any]) -> list[dict[str, Any]]:
    return [e if isinstance(e, dict) else e.as_dict() for e in entries]


def _family(entry: dict[str, Any], index: int) -> str:
    from papergym.benchmarks.spec import claim_family

    if entry.get("family"):
        return str(entry["family"])
    return claim_family(str(entry["id"])) if entry.get("id") else f"#{index}"


def paper_claims(entries: list[Any], post_hoc: bool = False) -> list[dict[str, Any]]:
    """The tallied claims: role paper, and post hoc or not as asked."""
    return [d for d in _dicts(entries) if d.get("role", "paper") == "paper"
            and bool(d.get("post_hoc", False)) == post_hoc]


def holm(p_values: list[float]) -> list[float]:
    from statsmodels.stats.multitest import multipletests

    return list(multipletests(p_values, method="holm")[1]) if p_values else []


def family_verdicts(entries: list[Any], alpha: float = 0.05) -> dict[str, str]:
    """family -> its verdict (module docstring), over the paper claims that are not post hoc."""
    members: dict[str, list[dict[str, Any]]] = {}
    for i, d in enumerate(paper_claims(entries)):
        members.setdefault(_family(d, i), []).append(d)
    out = {}
    for family, claims in members.items():
        verdicts = [c["verdict"] for c in claims]
        if all(v == "holds" for v in verdicts):
            out[family] = "holds"
            continue
        tested = [c for c in claims if c.get("p_worse") is not None]
        adjusted = {id(c): p for c, p in zip(tested, holm([float(c["p_worse"]) for c in tested]))}
        if any(c["verdict"] == "fails" and adjusted.get(id(c), 0.0) < alpha for c in claims):
            out[family] = "fails"
        elif any(v in VERDICTS for v in verdicts):
            out[family] = next((v for v in WEAKEST_FIRST if v in verdicts), "inconclusive")
        else:  # not run at this tier, no data
            out[family] = verdicts[0]
    return out


def tally_families(entries: list[Any], alpha: float = 0.05) -> dict[str, int]:
    """Families of paper claims by verdict (every key of VERDICTS, plus ``other``)."""
    counts = Counter(family_verdicts(entries, alpha).values())
    out = {v: counts.get(v, 0) for v in VERDICTS}
    out["other"] = sum(counts.values()) - sum(out.values())
    return out


def bh_holds(entries: list[Any], alpha: float = 0.05) -> int:
    """Paper holds (not post hoc) that survive Benjamini-Hochberg over every paper claim's
    p-value; holds without a p-value count as they stand."""
    from statsmodels.stats.multitest import multipletests

    claims = paper_claims(entries)
    tested = [c for c in claims if c.get("p_value") is not None]
    survive = 0
    if tested:
        reject = multipletests([float(c["p_value"]) for c in tested], alpha=alpha,
                               method="fdr_bh")[0]
        survive = sum(1 for c, r in zip(tested, reject) if r and c["verdict"] == "holds")
    return survive + sum(1 for c in claims
                         if c.get("p_value") is None and c["verdict"] == "holds")


def tally_v2(entries: list[Any], alpha: float = 0.05) -> dict[str, Any]:
    """The raw tally's companions: by family, BH-adjusted holds, and post-hoc claims apart."""
    late = paper_claims(entries, post_hoc=True)
    return {"tally_families": tally_families(entries, alpha),
            "bh_holds": bh_holds(entries, alpha),
            "post_hoc": dict(Counter(d["verdict"] for d in late))}
