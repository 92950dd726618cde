"""The records every layer passes around: frozen msgspec Structs, no dicts of dicts.

Field names are snake_case in Python; JSON results are camelCase and are built by the read and
write functions that own them (spec 01 §6.1), never by renaming these Structs wholesale.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Edge(msgspec.Struct, frozen=True):
    """One `derived_from` entry of a document (spec 01 §6.2)."""

    raw: str
    fit: str | None
    resolved: str | None
    external: bool
    url: bool = False


class Section(msgspec.Struct, frozen=True):
    """A top-level `##` heading: its trimmed title and 1-based file line (spec 01 §5.2)."""

    title: str
    line: int


class Link(msgspec.Struct, frozen=True):
    """A markdown link to a `.md` target found in a document's text (spec 01 §5.5)."""

    source: str
    raw: str
    to: str | None
    external: bool
    line: int


class Doc(msgspec.Struct, frozen=True):
    """The record of one indexed document (spec 01 §6.1)."""

    path: str
    title: str
    doc_kind: str
    doc_function: str
    purpose: str
    status: str
    delivery_status: str | None
    decision_status: str | None
    layer: str
    derived_from: tuple[Edge, ...]
    canonical_for: tuple[str, ...]
    must_not_define: tuple[str, ...]
    anchors: tuple[str, ...]
    sections: tuple[Section, ...]
    registered_in: tuple[str, ...]
    fields: tuple[str, ...]
    data: dict[str, Any]
    has_frontmatter: bool
    parse_error: str | None
    parse_error_kind: str | None
    parse_error_line: int | None
    body_offset: int
    mtime_ns: int
    size: int
    text_ok: bool
    links: tuple[Link, ...] = ()
    first_h1: str | None = None
    # sha256 hex of the bytes read: the pre-image hash a write plan records (spec 03 §1.4)
    sha256: str = ""


class LayerRow(msgspec.Struct, frozen=True):
    """A layer-table row naming a layer mbank does not know (spec 01 §8.2)."""

    dir: str
    layer: str
    source: str


class LayerMap(msgspec.Struct, frozen=True):
    """The bank's declared layer table (spec 01 §8.2)."""

    by_dir: dict[str, str]
    weight: dict[str, float]
    unknown: tuple[LayerRow, ...]
    source: tuple[str, ...]


class Contract(msgspec.Struct, frozen=True):
    """What the bank declares about itself in `dna/` (spec 01 §9)."""

    present: bool
    source: tuple[str, ...]
    doc_kinds: tuple[str, ...]
    doc_functions: tuple[str, ...]
    statuses: tuple[str, ...]
    delivery_statuses: tuple[str, ...]
    decision_statuses: tuple[str, ...]
    roots: tuple[str, ...]
    requires_derived_from: bool
    forbids_cycles: bool
    # (field, value) -> first dna document declaring it, e.g. ("status", "draft") -> "dna/x.md"
    declared_in: dict[tuple[str, str], str]


class VocabularyRow(msgspec.Struct, frozen=True):
    """One row of `dna/vocabulary.md`: a Russian stem and its English words (spec 01 §10)."""

    stem: str
    words: tuple[str, ...]


class Finding(msgspec.Struct, frozen=True):
    """One validation finding (spec 02 §7)."""

    rule: str
    severity: str
    path: str
    message: str
    line: int | None = None


class Refusal(msgspec.Struct, frozen=True):
    """A refused request: a rule id and the full sentence the caller reads (STYLE.md)."""

    rule: str
    message: str


class RefusalError(Exception):
    """Raised to carry a `Refusal` through the shell; the surface turns it into a ToolError."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal
