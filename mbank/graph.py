"""`bank_graph`: walk `derived_from` up, down or both, and draw the result (spec 02 §6).

The walk is a pure function of the snapshot. The one-hop read of neighbouring banks across
the bank boundary (§6.4) is the only IO, and it goes through an injected reader
(`read_outside`, default `read_outside_markdown`) so tests and other shells can replace it.
The renderings (text, mermaid, dot) are pure functions of the result (§6.5).
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Callable
from typing import Any, Literal

from mbank.contract import KNOWN_LAYERS
from mbank.parse import file_stem, recover_leniently, split_frontmatter
from mbank.paths import is_within
from mbank.projection import Snapshot
from mbank.read import PathLookup, document_of

Direction = Literal["up", "down", "both"]
DIRECTIONS: tuple[str, ...] = ("up", "down", "both")
DEFAULT_DEPTH = 2
DEFAULT_LIMIT = 60
MAX_DEPTH = 6
MAX_LIMIT = 300
MAX_NEIGHBOURS = 25
NEIGHBOUR_READ_BYTES = 65_536
FIT_TEXT = 140
FIT_PICTURE = 60

OUTSIDE_CEILING = "outside the 3 directory levels above this bank, so it was not read"
NOT_MARKDOWN = "not a markdown file"
NO_SUCH_FILE = "no such file — the edge is broken, not merely external"

# (absolute target, absolute ceiling) -> the first bytes of the file, or an unreadable reason
OutsideReader = Callable[[str, str], "bytes | str"]


def read_outside_markdown(target: str, ceiling: str) -> bytes | str:
    """Read the head of a file beyond the bank for §6.4 (the shell's one IO for the graph).

    Checks the real path (symlinks resolved) against the ceiling's real path, so a link cannot
    carry the read further; reads at most 65,536 bytes of a regular file.
    """
    real_target = os.path.realpath(target)
    if not is_within(real_target, os.path.realpath(ceiling)):
        return OUTSIDE_CEILING
    try:
        descriptor = os.open(real_target, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return NO_SUCH_FILE
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return NO_SUCH_FILE
        chunks: list[bytes] = []
        remaining = NEIGHBOUR_READ_BYTES
        while remaining > 0:
            chunk = os.read(descriptor, remaining)
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return NO_SUCH_FILE
    finally:
        os.close(descriptor)


class _Walk:
    """The mutable state of one graph call: nodes, edges, external and broken lists."""

    def __init__(self, snapshot: Snapshot, root: str, limit: int) -> None:
        self.snapshot = snapshot
        self.limit = limit
        self.nodes: dict[str, dict[str, Any]] = {}
        self.edges: dict[tuple[str, str], str | None] = {}
        self.external: list[dict[str, Any]] = []
        self.broken: list[dict[str, Any]] = []
        self.truncated = False
        self.root = root

    def add_node(self, path: str, depth: int, via: str) -> str:
        node = self.nodes.get(path)
        if node is not None:
            node["depth"] = min(node["depth"], depth)
            return "present"
        if len(self.nodes) >= self.limit:
            self.truncated = True
            return "refused"
        doc = self.snapshot.docs[path]
        self.nodes[path] = {
            "path": path,
            "title": doc.title,
            "docKind": doc.doc_kind,
            "layer": doc.layer,
            "status": doc.status,
            "depth": depth,
            "via": via,
        }
        return "added"

    def add_edge(self, source: str, target: str, fit: str | None) -> None:
        self.edges.setdefault((source, target), fit)

    def expand_up(self, current: str, depth: int) -> list[str]:
        reached: list[str] = []
        for edge in self.snapshot.docs[current].derived_from:
            if edge.external:
                entry: dict[str, Any] = {"from": current, "raw": edge.raw}
                if edge.url:
                    entry["url"] = True
                self.external.append(entry)
                continue
            if edge.resolved is None:
                continue
            if edge.resolved not in self.snapshot.docs:
                self.broken.append({"from": current, "raw": edge.raw})
                continue
            self.add_node(edge.resolved, depth, "up")
            if edge.resolved in self.nodes:
                self.add_edge(current, edge.resolved, edge.fit)
                reached.append(edge.resolved)
        return reached

    def expand_down(self, current: str, depth: int) -> list[str]:
        reached: list[str] = []
        for dependent in self.snapshot.incoming.get(current, ()):
            self.add_node(dependent, depth, "down")
            if dependent in self.nodes:
                fit = next(
                    (
                        e.fit
                        for e in self.snapshot.docs[dependent].derived_from
                        if e.resolved == current
                    ),
                    None,
                )
                self.add_edge(dependent, current, fit)
                reached.append(dependent)
        return reached

    def sweep(self, direction: str, depth: int) -> None:
        """One breadth-first sweep; its own `seen` set makes cycles terminate."""
        seen = {self.root}
        frontier = [self.root]
        expand = self.expand_up if direction == "up" else self.expand_down
        for level in range(1, depth + 1):
            following: list[str] = []
            for current in frontier:
                for reached in expand(current, level):
                    if reached not in seen:
                        seen.add(reached)
                        following.append(reached)
            frontier = following
            if not frontier:
                break


def _neighbour(
    snapshot: Snapshot, entry: dict[str, Any], ceiling: str, read_outside: OutsideReader
) -> dict[str, Any]:
    source, raw = entry["from"], entry["raw"]
    reference = raw.split("#", 1)[0].strip()
    directory = posixpath.dirname(posixpath.join(snapshot.root, source))
    target = posixpath.normpath(posixpath.join(directory, reference))
    file = posixpath.relpath(target, ceiling)
    neighbour: dict[str, Any] = {"from": source, "raw": raw, "file": file}
    if file == ".." or file.startswith("../"):
        neighbour["unreadable"] = OUTSIDE_CEILING
        return neighbour
    if not target.endswith(".md"):
        neighbour["unreadable"] = NOT_MARKDOWN
        return neighbour
    head = read_outside(target, ceiling)
    if isinstance(head, str):
        neighbour["unreadable"] = head
        return neighbour
    split = split_frontmatter(head.decode("utf-8", errors="replace"))
    data = recover_leniently(split.yaml_text) if split.yaml_text is not None else {}
    title = data.get("title")
    neighbour["title"] = (
        title.strip() if isinstance(title, str) and title.strip() else file_stem(target)
    )
    for key, field in (("docKind", "doc_kind"), ("status", "status"), ("purpose", "purpose")):
        value = data.get(field)
        if isinstance(value, str) and value.strip():
            neighbour[key] = value.strip()
    owned = data.get("canonical_for")
    keys = [owned] if isinstance(owned, str) else owned if isinstance(owned, list) else []
    keys = [key.strip() for key in keys if isinstance(key, str) and key.strip()]
    if keys:
        neighbour["canonicalFor"] = keys
    return neighbour


def neighbours_of(
    snapshot: Snapshot, external: list[dict[str, Any]], read_outside: OutsideReader
) -> list[dict[str, Any]]:
    """Header reads of the first 25 non-URL external targets (spec 02 §6.4)."""
    ceiling = posixpath.normpath(posixpath.join(snapshot.root, "../../.."))
    candidates = [entry for entry in external if not entry.get("url")][:MAX_NEIGHBOURS]
    return [_neighbour(snapshot, entry, ceiling, read_outside) for entry in candidates]


def graph(
    snapshot: Snapshot,
    path: str,
    *,
    direction: str = "down",
    depth: int = DEFAULT_DEPTH,
    limit: int = DEFAULT_LIMIT,
    neighbours: bool = True,
    format: str = "json",
    lookup: PathLookup | None = None,
    read_outside: OutsideReader = read_outside_markdown,
) -> dict[str, Any]:
    """`bank_graph`: the `GraphResult` of spec 02 §6.3 (with `mermaid` for that format).

    Bounds (direction, depth 1–6, limit 1–300, format) are checked by the surface; values
    outside them raise ValueError here rather than being clamped silently.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}")
    if not 1 <= depth <= MAX_DEPTH or not 1 <= limit <= MAX_LIMIT:
        raise ValueError("depth must be 1-6 and limit 1-300")
    if format not in ("json", "mermaid"):
        raise ValueError("format must be json or mermaid")
    doc = document_of(snapshot, path, lookup)
    walk = _Walk(snapshot, doc.path, limit)
    walk.add_node(doc.path, 0, direction)
    if direction in ("up", "both"):
        walk.sweep("up", depth)
    if direction in ("down", "both"):
        walk.sweep("down", depth)
    nodes = sorted(walk.nodes.values(), key=lambda node: (node["depth"], node["path"]))
    edges: list[dict[str, Any]] = []
    for (source, target), fit in sorted(walk.edges.items()):
        edge: dict[str, Any] = {"from": source, "to": target}
        if fit is not None:
            edge["fit"] = fit
        edges.append(edge)
    counts: dict[str, int] = {}
    for node in nodes:
        if node["path"] != doc.path:
            counts[node["layer"]] = counts.get(node["layer"], 0) + 1
    order = list(KNOWN_LAYERS) + sorted(set(counts) - set(KNOWN_LAYERS))
    result: dict[str, Any] = {
        "root": doc.path,
        "direction": direction,
        "depth": depth,
        "nodes": nodes,
        "edges": edges,
        "external": walk.external,
        "broken": walk.broken,
        "byLayer": {layer: counts[layer] for layer in order if counts.get(layer)},
        "truncated": walk.truncated,
    }
    if neighbours:
        result["neighbours"] = neighbours_of(snapshot, walk.external, read_outside)
    if format == "mermaid":
        result["mermaid"] = render_mermaid(result)
    return result


# --------------------------------------------------------------------------------------------
# Renderings (spec 02 §6.5, 04 §9.5)
# --------------------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")


def render_text(result: dict[str, Any]) -> str:
    """The text picture, one line per non-root node (spec 02 §6.5); no final newline."""
    lines = [f"{result['root']}  [{result['direction']}, depth {result['depth']}]"]
    others = [node for node in result["nodes"] if node["path"] != result["root"]]
    summary = f"nodes: {len(others)}"
    if result["byLayer"]:
        summary += "  " + " ".join(f"{k}:{v}" for k, v in result["byLayer"].items())
    if result["truncated"]:
        summary += "  (truncated)"
    lines.append(summary)
    depth_of = {node["path"]: node["depth"] for node in result["nodes"]}
    for node in others:
        indent = "  " * node["depth"]
        arrow = "^" if node["via"] == "up" else "v"
        kind = node["docKind"] or "?"
        lines.append(f"{indent}{arrow} {node['path']}  [{kind} / {node['layer']}]")
        for edge in result["edges"]:
            other = (
                edge["to"]
                if edge["from"] == node["path"]
                else edge["from"]
                if edge["to"] == node["path"]
                else None
            )
            if other is not None and depth_of.get(other) == node["depth"] - 1:
                if "fit" in edge:
                    lines.append(f"{indent}    fit: {_one_line(edge['fit'])[:FIT_TEXT]}")
                break
    if result["external"]:
        lines.append("external (outside the bank):")
        lines.extend(f"  {entry['from']} -> {entry['raw']}" for entry in result["external"])
    if result["broken"]:
        lines.append("broken:")
        lines.extend(f"  {entry['from']} -> {entry['raw']}" for entry in result["broken"])
    for neighbour in result.get("neighbours") or []:
        said = neighbour.get("unreadable") or neighbour.get("title", "")
        lines.append(f"neighbour: {neighbour['file']}  {said}")
    return "\n".join(lines)


def _mermaid_label(text: str) -> str:
    return _one_line(text).replace('"', "#quot;")


def _mermaid_fit(fit: str) -> str:
    return _one_line(fit[:FIT_PICTURE]).replace('"', "#quot;").replace("|", "#124;")


def render_mermaid(result: dict[str, Any]) -> str:
    """The Mermaid `flowchart BT` of a result: no code fence, no final newline (02 §6.5).

    Nodes are grouped by layer, one `subgraph` per layer in order of first appearance
    (issue 15: a 40-node graph reads as a picture only when its layers are boxes); inside a
    layer the nodes keep the result's order.
    """
    ids = {node["path"]: f"n{index}" for index, node in enumerate(result["nodes"])}
    layers: dict[str, list[dict[str, Any]]] = {}
    for node in result["nodes"]:
        layers.setdefault(str(node.get("layer") or "other"), []).append(node)
    lines = ["flowchart BT"]
    for number, (layer, nodes) in enumerate(layers.items()):
        lines.append(f'  subgraph layer{number}["{_mermaid_label(layer)}"]')
        for node in nodes:
            label = f"{_mermaid_label(node['path'])}<br/>{_mermaid_label(node['title'])}"
            line = f'    {ids[node["path"]]}["{label}"]'
            if node["path"] == result["root"]:
                line += ":::root"
            lines.append(line)
        lines.append("  end")
    for edge in result["edges"]:
        source, target = ids[edge["from"]], ids[edge["to"]]
        if "fit" in edge:
            lines.append(f"  {source} -->|{_mermaid_fit(edge['fit'])}| {target}")
        else:
            lines.append(f"  {source} --> {target}")
    lines.append("  classDef root stroke-width:3px")
    if result["truncated"]:
        lines.append(f"  %% truncated at {len(result['nodes'])} nodes")
    return "\n".join(lines)


def _dot_quoted(text: str) -> str:
    return _one_line(text).replace("\\", "\\\\").replace('"', '\\"')


def render_dot(result: dict[str, Any]) -> str:
    """The Graphviz `digraph derived_from` of a graph result (spec 02 §6.5).

    Line breaks inside a title or fit become spaces (the spec is silent; one statement per
    line keeps the output diffable).
    """
    lines = ["digraph derived_from {", "  rankdir=BT;"]
    for node in result["nodes"]:
        path = _dot_quoted(node["path"])
        lines.append(f'  "{path}" [label="{path}\\n{_dot_quoted(node["title"])}"];')
    for edge in result["edges"]:
        statement = f'  "{_dot_quoted(edge["from"])}" -> "{_dot_quoted(edge["to"])}"'
        if "fit" in edge:
            statement += f' [label="{_dot_quoted(edge["fit"][:FIT_PICTURE])}"]'
        lines.append(statement + ";")
    lines.append("}")
    return "\n".join(lines)
