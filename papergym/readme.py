"""Keeps the README's generated blocks equal to their sources (``make readme`` rewrites them):
the benchmarks table (from the registry) and the published verdict tally (from
leaderboard/published/<benchmark>/claims.json, ``paper`` claims only)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from papergym.cli import benchmarks_markdown

README = Path(__file__).resolve().parent.parent / "README.md"
PUBLISHED = Path(__file__).resolve().parent.parent / "leaderboard" / "published"


def _block(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- {name}:start -->\n)(.*?)(<!-- {name}:end -->)", re.S)


BLOCK = _block("benchmarks")
VERDICT_BLOCK = _block("verdicts")


def current_table(text: str, block: re.Pattern[str] = BLOCK) -> str:
    match = block.search(text)
    if match is None:
        raise ValueError(f"README.md lacks the markers of the block {block.pattern[6:40]!r}")
    return match.group(2).strip()


def verdicts_markdown(root: Path = PUBLISHED) -> str:
    """Per published benchmark: its paper claims by verdict (sanity and diagnostic claims are
    counted apart, never in the tally)."""
    from papergym.leaderboard.claims import VERDICTS, tally
    from papergym.leaderboard.families import tally_v2

    lines = [f"| benchmark | paper claims | {' | '.join(VERDICTS)} | families held | "
             "holds after BH | sanity / diagnostic |",
             "|---|---|" + "---|" * len(VERDICTS) + "---|---|---|"]
    for claims_file in sorted(root.glob("*/claims.json")):
        entries = json.loads(claims_file.read_text())
        counts = tally(entries)
        roles = [e.get("role", "paper") for e in entries]
        paper = sum(counts.values())
        name = claims_file.parent.name
        # a table published before claims had roles counts every claim as a paper claim
        split = (f"{roles.count('sanity')} / {roles.count('diagnostic')}"
                 if all("role" in e for e in entries) else "not split (published before roles)")
        extra = tally_v2(entries)
        families = extra["tally_families"]
        held = f"{families['holds']} of {sum(families.values())}"
        lines.append(f"| [`{name}`](leaderboard/published/{name}/README.md) | {paper} | "
                     + " | ".join(str(counts[v]) for v in VERDICTS)
                     + f" | {held} | {extra['bh_holds']} | {split} |")
    return "\n".join(lines)


def update(path: Path = README) -> bool:
    """Rewrite both blocks in place; True if anything changed."""
    text = path.read_text()
    new = BLOCK.sub(lambda m: m.group(1) + benchmarks_markdown() + "\n" + m.group(3), text)
    new = VERDICT_BLOCK.sub(lambda m: m.group(1) + verdicts_markdown() + "\n" + m.group(3), new)
    path.write_text(new)
    return new != text


if __name__ == "__main__":
    changed = update()
    print("README.md generated blocks " + ("updated" if changed else "already current"))
    sys.exit(0)
