"""The records every layer passes around: frozen msgspec Structs, no dicts of dicts.

Field names are snake_case in Python; JSON results are camelCase and are built by the read and
write functions that own them (spec 01 §6.1), never by renaming these Structs wholesale.
"""

from __future__ import annotations

import hashlib
from typing import Any, Generic, TypeVar

import msgspec

# the `doc_function` values mbank itself acts on: an index lists its folder's documents, a
# template is the starting point of new ones (01 §6.1); one definition for every reader
INDEX_FUNCTION = "index"
TEMPLATE_FUNCTION = "template"
# the layer of the `_inbox/` notes, waiting to be filed: route and search leave them out
INBOX_LAYER = "inbox"


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


# --------------------------------------------------------------------------------------------
# Writes: plans, intents and journal records (spec 03 §1, §14)
# --------------------------------------------------------------------------------------------


def sha256_hex(content: bytes) -> str:
    """The lower-case hex sha256 of `content`: the hash every op, record and document carries."""
    return hashlib.sha256(content).hexdigest()


class FileOp(msgspec.Struct, frozen=True, tag_field="kind", forbid_unknown_fields=True):
    """One file operation of a plan (spec 03 §1.4); the concrete kinds are the subclasses.

    `content` is the exact bytes to write (None for a delete), `after` their sha256, `before`
    the sha256 of the bytes the snapshot read (None for a create).
    """

    path: str
    content: bytes | None = None
    before: str | None = None
    after: str | None = None

    @property
    def kind(self) -> str:
        """`create`, `replace` or `delete` (the tag written to JSON)."""
        return str(type(self).__struct_config__.tag)


class CreateFile(FileOp, frozen=True, tag="create"):
    """Create a file that does not exist (its missing directories are created by the apply)."""

    def __post_init__(self) -> None:
        if self.content is None or self.before is not None:
            raise ValueError(f"a create needs content and no pre-image hash: {self.path}")
        if self.after != sha256_hex(self.content):
            raise ValueError(f"after is not the sha256 of the content: {self.path}")


class ReplaceFile(FileOp, frozen=True, tag="replace"):
    """Replace an existing file whose current bytes hash to `before`."""

    def __post_init__(self) -> None:
        if self.content is None or self.before is None:
            raise ValueError(f"a replace needs content and a pre-image hash: {self.path}")
        if self.after != sha256_hex(self.content):
            raise ValueError(f"after is not the sha256 of the content: {self.path}")


class DeleteFile(FileOp, frozen=True, tag="delete"):
    """Delete an existing file whose current bytes hash to `before`."""

    def __post_init__(self) -> None:
        if self.content is not None or self.before is None or self.after is not None:
            raise ValueError(f"a delete needs a pre-image hash and nothing else: {self.path}")


AnyFileOp = CreateFile | ReplaceFile | DeleteFile


class Plan(msgspec.Struct, frozen=True):
    """What a write will do: the tool and its file operations, applied in order (§1.4)."""

    tool: str
    ops: tuple[AnyFileOp, ...] = ()

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for op in self.ops:
            if op.path in seen:
                raise ValueError(f"a path appears twice in one plan: {op.path}")
            seen.add(op.path)

    @property
    def paths(self) -> tuple[str, ...]:
        """The bank paths the plan touches, in plan order."""
        return tuple(op.path for op in self.ops)


class FileRead(msgspec.Struct, frozen=True):
    """The outcome of reading a `bodyFile`/`contentFile` (spec 03 §2.5): text or a refusal."""

    text: str | None = None
    refusal: Refusal | None = None
    sha256: str | None = None
    size: int | None = None


ArgsT = TypeVar("ArgsT")
FactsT = TypeVar("FactsT")


class Intent(msgspec.Struct, Generic[ArgsT, FactsT], frozen=True):
    """Everything a gate or reducer may know besides the snapshot (spec 03 §1.1 step 4).

    `args` is the tool's own arguments Struct, converted once by the shell from the MCP or
    CLI input; `facts` is the tool's own facts Struct, every field gathered by the shell before
    any gate runs (a gate cannot read a fact that was not gathered). `files` maps a file
    argument name (`bodyFile`, `contentFile`) to what reading it gave. `journal_id` is None on
    a dry run.
    """

    tool: str
    args: ArgsT
    facts: FactsT
    today: str
    now: str
    journal_id: str | None
    dry_run: bool
    files: dict[str, FileRead] = {}


class JournalNotes(msgspec.Struct, frozen=True):
    """The tool-specific keys a journal record carries (spec 03 §14.2)."""

    reason: str | None = None
    title: str | None = None
    purpose: str | None = None
    from_: str | None = None
    to: str | None = None
    undo_of: str | None = None


class PlanOutcome(msgspec.Struct, frozen=True):
    """What a tool's pure gates + reducer hand to the write engine.

    `result` holds the tool's own result fields (camelCase, in its order); `force` turns the
    post-check's new errors into warnings (forced init / materialize, spec 03 §1.5).
    """

    plan: Plan
    warnings: tuple[str, ...] = ()
    result: dict[str, Any] = {}
    notes: JournalNotes = JournalNotes()
    force: bool = False


class RecordOp(msgspec.Struct, frozen=True):
    """One op as the journal keeps it: path, kind and the hashes around it (§14.2)."""

    path: str
    kind: str
    before: str | None
    after: str | None


class JournalRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    """One applied write, one line of `.mbank/journal.jsonl` (spec 03 §14.2)."""

    v: int
    id: str
    time: str
    tool: str
    via: str
    mbank: str
    intent: dict[str, Any]
    ops: tuple[RecordOp, ...]
    warnings: tuple[str, ...]
    reason: str | None = None
    title: str | None = None
    purpose: str | None = None
    from_: str | None = msgspec.field(default=None, name="from")
    to: str | None = None
    undo_of: str | None = msgspec.field(default=None, name="undoOf")
    # mbank's addition to §14.2: the directories this write created, shallowest first
    # (omitted when none), so that undo removes exactly those once they are empty again.
    dirs: tuple[str, ...] = ()
    # issue 14: a write that changed the governance folder (a person, the CLI with
    # --governance); omitted otherwise
    governance: bool = False
