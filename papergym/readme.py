"""Keeps the README's benchmarks table equal to the registry (``make readme`` rewrites it)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from papergym.cli import benchmarks_markdown

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCK = re.compile(r"(<!-- benchmarks:start -->\n)(.*?)(<!-- benchmarks:end -->)", re.S)


def current_table(text: str) -> str:
    match = BLOCK.search(text)
    if match is None:
        raise ValueError("README.md lacks the <!-- benchmarks:start/end --> markers")
    return match.group(2).strip()


def update(path: Path = README) -> bool:
    """Rewrite the table in place; True if it changed."""
    text = path.read_text()
    new = BLOCK.sub(lambda m: m.group(1) + benchmarks_markdown() + "\n" + m.group(3), text)
    path.write_text(new)
    return new != text


if __name__ == "__main__":
    changed = update()
    print("README.md benchmarks table " + ("updated" if changed else "already current"))
    sys.exit(0)
