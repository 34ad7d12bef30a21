"""YAML for benchmark specs, read within a budget: size, nesting depth, aliases, duplicate keys.

A spec is data that anyone may hand to ``papergym run``, so reading one must neither hang nor
exhaust memory, and a typo must not be silently resolved. :func:`load` is ``yaml.safe_load``
with four limits, each failing with a :class:`yaml.MarkedYAMLError` that carries the line and
column of the offending node:

- the file is at most ``MAX_BYTES`` (read with a bound, so ``/dev/zero`` cannot hang us);
- collections nest at most ``MAX_DEPTH`` deep, checked while scanning (flow ``[``/``{``) and
  composing (block indentation), before Python's recursion limit or PyYAML's per-level
  bookkeeping is reached (a 100,000-deep ``[[[...]]]`` fails at depth 65 in milliseconds);
- at most ``MAX_ALIASES`` aliases, and the document *as expanded* (every alias counted as a
  full copy of its anchor) has at most ``MAX_NODES`` nodes: a "billion laughs" bomb is a few
  dozen aliases that expand to 10^9 nodes; it is rejected from the composed graph, in
  linear time, before anything is expanded. A recursive alias (``&a [*a]``) is rejected too;
- a mapping may not repeat a key (PyYAML keeps the last one silently). ``<<`` merge keys stay
  allowed, and keys they bring in may be overridden, as YAML intends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.scanner import ScannerError

MAX_BYTES = 1 << 20  # 1 MiB; the largest built-in spec is ~20 kB
MAX_DEPTH = 64
MAX_ALIASES = 100
MAX_NODES = 200_000

MERGE_TAG = "tag:yaml.org,2002:merge"


class SpecTooLarge(ValueError):
    """The file itself is over the byte budget (or not a regular file)."""


class BudgetLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that counts depth and aliases while composing and rejects
    duplicate keys while constructing."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._aliases = 0

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        # Bounded already in the scanner: PyYAML keeps one possible simple key per open flow
        # level and rescans them all per token, so 100,000 "[" would cost minutes before the
        # composer ever saw depth 65.
        if self.flow_level >= MAX_DEPTH:
            raise ScannerError(None, None, f"nested more than {MAX_DEPTH} levels deep",
                               self.get_mark())
        super().fetch_flow_collection_start(TokenClass)

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        event = self.peek_event()
        if isinstance(event, AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise ComposerError(None, None, f"more than {MAX_ALIASES} aliases", event.start_mark)
            return super().compose_node(parent, index)
        nests = isinstance(event, (SequenceStartEvent, MappingStartEvent))
        if nests:
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep",
                                    event.start_mark)
        try:
            return super().compose_node(parent, index)
        finally:
            if nests:
                self._depth -= 1

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            seen: dict[Any, Node] = {}
            for key_node, _ in node.value:
                if key_node.tag == MERGE_TAG or not isinstance(key_node, ScalarNode):
                    continue
                key = self.construct_object(key_node)
                if key in seen:
                    raise ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"duplicate key {key!r} (first on line {seen[key].start_mark.line + 1})",
                        key_node.start_mark)
                seen[key] = key_node
        return super().construct_mapping(node, deep=deep)


def expanded_size(root: Node) -> int:
    """Nodes of the document with every alias expanded, computed on the shared graph
    (memoized per node, so a bomb costs its size in the file, not its expansion). The
    expanded nesting depth is bounded too: aliases can stack anchors deeper than any one
    of them is written."""
    memo: dict[int, tuple[int, int]] = {}  # node -> (expanded nodes, expanded height)
    on_path: set[int] = set()

    def walk(node: Node, depth: int) -> tuple[int, int]:
        key = id(node)
        if key in on_path:
            raise ComposerError(None, None, "an alias refers to its own anchor (recursive data)",
                                node.start_mark)
        if key not in memo:
            if isinstance(node, ScalarNode):
                memo[key] = (1, 0)
            else:
                if depth + 1 > MAX_DEPTH:
                    raise ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep "
                                        "once aliases are expanded", node.start_mark)
                children = (node.value if isinstance(node, SequenceNode)
                            else [n for pair in node.value for n in pair])
                on_path.add(key)
                total, height = 1, 0
                for child in children:
                    count, child_height = walk(child, depth + 1)
                    total += count
                    height = max(height, child_height)
                    if total > MAX_NODES:
                        raise ComposerError(None, None, f"expands to more than {MAX_NODES:,} "
                                            "nodes (an alias bomb?)", node.start_mark)
                on_path.discard(key)
                memo[key] = (total, height + 1)
        count, height = memo[key]
        if depth + height > MAX_DEPTH:
            raise ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep once "
                                "aliases are expanded", node.start_mark)
        return count, height

    return walk(root, 0)[0]


def read_bounded(path: Path) -> str:
    """The file's text, refusing anything over ``MAX_BYTES`` or not a regular file."""
    if not path.is_file():
        if path.exists():
            raise SpecTooLarge(f"{path}: not a regular file")
        raise FileNotFoundError(path)
    with path.open("rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise SpecTooLarge(f"{path}: larger than {MAX_BYTES:,} bytes; a spec is a small text file")
    return data.decode("utf-8")


def loads(text: str) -> Any:
    """Parse one YAML document within the budgets (the module docstring lists them)."""
    loader = BudgetLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        expanded_size(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def load(path: Path) -> Any:
    return loads(read_bounded(path))
