"""Names and strings that come from a spec or a plug-in, made safe for paths, links and output.

A benchmark spec and a plug-in agent are written by anyone, and their strings end up in four
places that each interpret text: the file system (report folders), HTML (links), Markdown
(tables) and the terminal (rich markup, ANSI escapes). One small function per place:

- :func:`check_name` -- names that become folders or links (benchmark, section, agent label,
  claim id) match ``NAME_PATTERN``: no separators, no leading dot, no ``:``, so ``../..``,
  ``/etc`` or ``javascript:...`` cannot be a name at all;
- :func:`safe_join` -- a path below a root, refused if it would leave the root anyway;
- :func:`href` -- a relative link from path parts, each one URL-quoted;
- :func:`md_cell` / :func:`md_text` -- Markdown with HTML escaped and links neutralized;
- :func:`term_text` -- terminal text without ANSI escapes or control characters (the
  terminal renderer also hands rich ``Text`` objects, never markup strings, to its tables).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

# ANSI/VT escape sequences (CSI, OSC, two-character), then every other control character.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def check_name(value: str, what: str = "name") -> str:
    """``value`` if it is a safe name, else ``ValueError`` saying what is allowed."""
    if not isinstance(value, str) or not NAME_PATTERN.match(value):
        raise ValueError(
            f"{what} {value!r} is not allowed: use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit (it names a folder and a link)"
        )
    return value


def safe_join(root: str | Path, *parts: str) -> Path:
    """``root / parts...``, refused unless it stays inside ``root`` once resolved."""
    base = Path(root).resolve()
    target = base.joinpath(*parts).resolve()
    if target != base and base not in target.parents:
        raise ValueError(f"{'/'.join(parts)!r} would write outside {base}")
    return target


def href(*parts: str) -> str:
    """A relative link from path parts, each URL-quoted (``/`` and ``:`` included, ``.`` and
    ``..`` as data), so no part can become a scheme (``javascript:``), a host or a climb."""
    if not parts or any(not p for p in parts):
        raise ValueError(f"a link needs non-empty parts, got {parts!r}")
    return "/".join("%2E" * len(p) if p in (".", "..") else quote(p, safe="") for p in parts)


def term_text(text: object) -> str:
    """Text for the terminal: ANSI escapes and control characters removed (newlines and tabs
    become spaces), so a name cannot recolour, move the cursor or retitle the window."""
    plain = _ANSI.sub("", str(text)).replace("\n", " ").replace("\t", " ").replace("\r", " ")
    return _CONTROL.sub("", plain)


def md_text(text: object) -> str:
    """Markdown prose from user text: raw HTML escaped, inline links and images neutralized."""
    body = _ANSI.sub("", str(text))
    body = _CONTROL.sub("", body.replace("\t", " ").replace("\r", ""))
    body = body.replace("&", "&amp;").replace("<", "&lt;")  # no tag or entity can open
    return body.replace("](", "]\\(")


def md_cell(text: object) -> str:
    """One Markdown table cell: :func:`md_text` on one line, with ``|`` escaped."""
    return md_text(term_text(text)).replace("|", "\\|")
