"""What the MCP surface publishes, as data: no `mcp` import here (spec 04 §1–§6).

The server (`mbank.server`) declares tools, resources and prompts from these tables and
adapts them to the SDK; the token budget (`mbank.budget`) and the tests read the same
tables. Four things live here:

- the surface decision of 04 §6.2 (`decide_surface`, `has_bank`, `is_switched_off`);
- the published words: instructions per surface (§5), tool titles, annotations and
  descriptions (§2), resource descriptions (§3), prompt titles, descriptions and texts (§4);
- the schema compaction of §1.2 (`compact_schema`), a pure function of a JSON schema;
- the tool order of §2, which `tools/list` keeps even when the surface grows after init.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import msgspec

from mbank.paths import is_within

SERVER_NAME = "memorybank"

SurfaceName = Literal["full", "seed", "off"]

# --------------------------------------------------------------------------------------------
# Instructions (04 §5): chosen once per session
# --------------------------------------------------------------------------------------------

INSTRUCTIONS: dict[str, str] = {
    "full": (
        "Memory bank for this project: governed markdown documents with YAML frontmatter. "
        "Begin a session with memorybank://index, then call bank_route before opening any "
        "document. Documents are in English; pass each question exactly as it was asked, in any "
        "language (Russian terms are expanded). Change the bank only through bank_* tools; "
        "dryRun shows the diff first."
    ),
    "seed": (
        "This project has no memory bank yet, so only bank_init is offered. Call it only when "
        "the user asks for a knowledge base; the other bank_* tools appear once the bank exists."
    ),
    "off": "memorybank is off for this project (.memorybank-off or --off).",
}


def full_instructions(language: str) -> str:
    """The full surface's instructions for a bank written in `language` (as measured by
    `mbank.bank_language`); `INSTRUCTIONS["full"]` is the English one."""
    return INSTRUCTIONS["full"].replace(
        "Documents are in English;", f"Documents are in {language};"
    )


# --------------------------------------------------------------------------------------------
# Tools (04 §2): order, titles, annotations, descriptions
# --------------------------------------------------------------------------------------------


class ToolWords(msgspec.Struct, frozen=True):
    """The published words of one tool: title, description and behaviour hints (04 §2).

    A hint left as None is not emitted (the client's default applies).
    """

    name: str
    title: str
    description: str
    read_only: bool | None = None
    idempotent: bool | None = None
    destructive: bool | None = None


TOOLS: tuple[ToolWords, ...] = (
    ToolWords(
        "bank_route",
        "Route a question to documents",
        "Which documents answer this question? Ranks each document's hand-written header "
        "(canonical_for keys, purpose, title, headings), never the body. Call it before "
        "reading anything.",
        read_only=True,
        idempotent=True,
    ),
    ToolWords(
        "bank_read",
        "Read bank documents",
        "Read one document or several, whole or one ## section. A batch shares a 40000-byte "
        "budget; documents that do not fit come back as skipped with their sections, to read "
        "next by section.",
        read_only=True,
        idempotent=True,
    ),
    ToolWords(
        "bank_init",
        "Create a bank where there is none",
        "Seed a memory bank where there is none: dna/ governance, flows, section indexes and a "
        "root index. Only when the user asks for a knowledge base.",
        read_only=False,
        idempotent=False,
    ),
    ToolWords(
        "bank_create",
        "Create a governed document",
        "Create a governed document: frontmatter from the arguments, body from the kind's "
        "template or from body/bodyFile, registered in its section index. Refuses anything "
        "that would break the bank's governance.",
        read_only=False,
        idempotent=False,
    ),
    ToolWords(
        "bank_edit",
        "Replace one exact fragment of a document",
        "Replace one exact fragment of a document's body (it must occur exactly once; narrow "
        "with section). The frontmatter is out of reach.",
        read_only=False,
        idempotent=False,
    ),
    ToolWords(
        "bank_update_section",
        "Write one named section of an existing document",
        "Replace or append to one existing ## section of a document. Never adds a section; an "
        "unknown section is refused with the list of real ones.",
        read_only=False,
        idempotent=False,
    ),
    ToolWords(
        "bank_rewrite",
        "Replace the whole body of a document",
        "Replace the whole body of an existing document. Frontmatter stays byte for byte and "
        "the index entry stays. Use section tools for partial changes.",
        read_only=False,
        idempotent=True,
        destructive=True,
    ),
    ToolWords(
        "bank_set_status",
        "Move a document to another lifecycle status",
        "Move a document to another lifecycle status through the gates: activation needs "
        "derived_from; archiving a document that owns canonical_for keys needs "
        "releaseCanonical.",
        read_only=False,
        idempotent=True,
    ),
    ToolWords(
        "bank_set_field",
        "Change one value in a document's frontmatter",
        "Set one frontmatter value, or a list field to a list through bank_create's gates; "
        "a new title or purpose follows into the index entries. Not status, doc_kind or "
        "doc_function.",
        read_only=False,
        idempotent=True,
    ),
    ToolWords(
        "bank_promote",
        "Promote a captured note out of quarantine",
        "Move a note out of _inbox/ into the bank as a governed document: frontmatter rebuilt, "
        "links rewritten for the new place, registered in its index.",
        read_only=False,
        idempotent=False,
    ),
    ToolWords(
        "bank_discard",
        "Drop a captured note that is not worth keeping",
        "Delete a note from _inbox/, with the reason on the record (the journal). Documents "
        "outside the quarantine are never deleted by the server.",
        read_only=False,
        idempotent=False,
        destructive=True,
    ),
    ToolWords(
        "bank_undo",
        "Undo the newest write",
        "Revert the newest write not yet undone (or the one id names), restoring its files; "
        "call again to step further back. memorybank://journal lists the writes.",
        read_only=False,
        idempotent=False,
        destructive=True,
    ),
    ToolWords(
        "bank_search",
        "Full-text search of document bodies",
        "Find a literal term, identifier or phrase in document bodies (frontmatter excluded). "
        "Use bank_route for topics.",
        read_only=True,
        idempotent=True,
    ),
    ToolWords(
        "bank_changed",
        "What moved in the bank since a point in time",
        "Documents added, modified, deleted or renamed since a git ref (commit, tag, HEAD~5) "
        "or an ISO date.",
        read_only=True,
    ),
    ToolWords(
        "bank_materialize_flows",
        "Take ownership of the document templates",
        "Copy the shipped document templates into flows/templates/ so the bank owns them; "
        "afterwards the bank's copies win.",
        idempotent=False,
        destructive=False,
    ),
    ToolWords(
        "bank_drift",
        "Where the code has moved on without the document",
        "Documents whose anchors: code paths changed in git long after the document did, and "
        "anchors that no longer exist.",
        read_only=True,
    ),
    ToolWords(
        "bank_graph",
        "Walk the derived_from graph",
        "Walk derived_from from a document: what it derives from (up), what derives from it "
        "(down), or both; one hop into neighbouring banks.",
        read_only=True,
        idempotent=True,
    ),
    ToolWords(
        "bank_validate",
        "Check the bank against its own governance",
        "Check the bank against the rules it declares in dna/: broken or missing derived_from, "
        "cycles, ownership conflicts, unregistered documents, undeclared values.",
        read_only=True,
        idempotent=True,
    ),
    ToolWords(
        "bank_contract_diff",
        "Compare this bank's contract with another",
        "Compare this bank's dna/ contract with another bank's (default: the mbank starter): "
        "values permitted only here or only there, and which dna file to refresh to legalise "
        "the most documents. Read-only.",
        read_only=True,
        idempotent=True,
    ),
)

TOOL_WORDS: dict[str, ToolWords] = {tool.name: tool for tool in TOOLS}
TOOL_ORDER: dict[str, int] = {tool.name: position for position, tool in enumerate(TOOLS)}
SEED_TOOLS: tuple[str, ...] = ("bank_init",)

# Parameter descriptions (04 §1.2: only where the name does not say enough; ≤ 80 characters).
PARAMETER_WORDS: dict[str, str] = {
    "question": "The question in the words it was asked in; do not translate",
    "docKind": "Exact doc_kind filter",
    "readPath": "A path, or a list of paths or {path, section} items",
    "section": "A level-two (##) heading",
    "maxBytes": "Lowers the batch budget (ceiling and default 40000)",
    "readFrontmatter": "With a section: also return the frontmatter and section list",
    "name": "Project name; it goes into the root index",
    "force": "Seed over existing documents",
    "createPath": "Bank-relative, e.g. adr/ADR-20260914T120000Z-short-name.md",
    "purpose": "When to read it; routing ranks on this",
    "derivedFrom": "Paths relative to the new file",
    "canonicalFor": "Fact keys this document owns",
    "bodyFile": "A file inside the project holding the body",
    "extra": "More frontmatter, applied last; may override",
    "inbox": "Quarantine: the path is forced into _inbox/",
    "find": "Exact text, whitespace included; must occur once",
    "contentFile": "A file inside the project holding the content",
    "undoId": "A journal record id; default: the newest write not yet undone",
    "setValue": "One line; for a list field, a list (or a JSON array)",
    "releaseCanonical": "Archiving only: give the canonical_for keys up in the same write",
    "notePath": "The note in _inbox/",
    "to": "Destination outside _inbox/",
    "promoteDerivedFrom": "Paths relative to the destination",
    "since": "A git ref (commit, tag, HEAD~5) or an ISO date",
    "materializeForce": "Overwrite templates the bank already holds",
    "scope": "A subdirectory",
    "graphLimit": "Node ceiling including the root",
    "neighbours": "Read one hop into neighbouring banks",
    "other": "Another bank's root (default: the shipped starter)",
}

LAYER_FILTERS: tuple[str, ...] = ("dna", "knowledge", "decision", "delivery", "flow", "other")

# --------------------------------------------------------------------------------------------
# Resources (04 §3)
# --------------------------------------------------------------------------------------------


class ResourceWords(msgspec.Struct, frozen=True):
    """One resource as `resources/list` shows it."""

    name: str
    uri: str
    mime_type: str
    description: str


RESOURCES: tuple[ResourceWords, ...] = (
    ResourceWords(
        "index",
        "memorybank://index",
        "application/json",
        "A map of the bank: sections with counts and canonical documents, recent changes. Read "
        "this first in a session, instead of README.md.",
    ),
    ResourceWords(
        "frontmatter-schema",
        "memorybank://schema/frontmatter",
        "text/markdown",
        "This bank's frontmatter contract.",
    ),
    ResourceWords(
        "health", "memorybank://health", "application/json", "Validation totals and findings."
    ),
    ResourceWords(
        "inbox", "memorybank://inbox", "application/json", "Notes waiting in _inbox/, oldest first."
    ),
    ResourceWords(
        "journal",
        "memorybank://journal",
        "application/json",
        "The last 50 writes, newest first.",
    ),
)

# issue 16: the full listing of one section, the drill-down from the map (a resource template,
# so resources/list and the token budget do not grow)
SECTION_INDEX = ResourceWords(
    "index-section",
    "memorybank://index/{section}",
    "application/json",
    "One section's documents with title, purpose, kind, layer and status (. = root files).",
)

# --------------------------------------------------------------------------------------------
# Prompts (04 §4): one user message each
# --------------------------------------------------------------------------------------------


class PromptWords(msgspec.Struct, frozen=True):
    """One prompt as `prompts/list` shows it (its text is rendered by `render_prompt`)."""

    name: str
    title: str
    description: str


PROMPTS: tuple[PromptWords, ...] = (
    PromptWords(
        "session-start",
        "Open a session on this bank",
        "Bring the user up to date: the index, what changed, what is open.",
    ),
    PromptWords(
        "route-then-read",
        "Answer a question from the bank",
        "Route the question, then read only the top results.",
    ),
    PromptWords(
        "check-before-commit",
        "Check the bank before a commit",
        "Validate and name the smallest fix for each finding.",
    ),
    PromptWords(
        "record-adr", "Record a decision", "Write an ADR through bank_create, dry run first."
    ),
    PromptWords(
        "review-inbox",
        "Review the captured notes",
        "Promote, fold or drop each note in _inbox/; nothing changes until the user chooses.",
    ),
)

DEFAULT_SINCE = "HEAD~20"
SINCE_WORDS = (
    "A git ref or ISO date; in a repository younger than 20 commits the delta starts at its "
    "first commit"
)


def session_start_text(since: str = DEFAULT_SINCE) -> str:
    """The `session-start` message (04 §4.1)."""
    return (
        "Bring me up to date on this project from its memory bank.\n"
        "1. Read memorybank://index, the map: sections, their canonical documents, recent "
        "changes. Read memorybank://index/<section> only for a section you need in full.\n"
        f'2. Call bank_changed with since: "{since}".\n'
        "3. Open documents only where the index and the delta leave the answer unclear, with "
        "bank_read: several paths in one call, one section where a heading fits. Never read the "
        "bank with cat, grep or file tools.\n"
        "Then report, in this order: what the project is (two sentences); what is in flight and "
        "which delivery documents carry it; the most recent decisions; what is open: questions "
        "recorded, drafts never activated, anything the index promises that does not exist. Say "
        'explicitly what you did not read, so that "nothing there" and "did not look" never read '
        "the same."
    )


def route_then_read_text(question: str) -> str:
    """The `route-then-read` message (04 §4.2)."""
    return (
        f"Answer this question from the memory bank: {question}\n"
        "Call bank_route first with the question exactly as written. Read only the top results, "
        "section-scoped with bank_read where possible. Do not open README.md or section indexes "
        "to hunt for paths. If routing returns nothing useful, say so instead of reading broadly."
    )


def check_before_commit_text(scope: str | None = None) -> str:
    """The `check-before-commit` message (04 §4.3)."""
    call = f'bank_validate with scope: "{scope}"' if scope else "bank_validate"
    return (
        f"Run {call}. For each finding name the rule, the document that owns the fix and the "
        "smallest change that clears it. Group by rule, errors first; fold findings of the same "
        "shape into one line with a count. Fix nothing unless I ask."
    )


def record_adr_text(decision: str) -> str:
    """The `record-adr` message (04 §4.4)."""
    return (
        f"Record this decision in the memory bank: {decision}\n"
        "First read memorybank://schema/frontmatter and call bank_route on the topic, so the "
        "ADR's derived_from names what it follows from. Then call bank_create with "
        'docKind: "adr" and path adr/ADR-<UTC timestamp YYYYMMDDTHHMMSSZ>-'
        "<short-decision-name>.md. Body sections: context, decision drivers, options considered "
        "(a table), decision, consequences. Frontmatter decision_status: proposed and "
        "status: draft; neither becomes accepted or active without a person. Give real "
        "alternatives with the reason each lost: a single option is not a decision record. Run "
        "it with dryRun: true first and show me the diff before writing."
    )


def review_inbox_text() -> str:
    """The `review-inbox` message (04 §4.5)."""
    return (
        "Review the notes captured in the bank's quarantine. Read memorybank://inbox. For each "
        "note: one line on what it claims; bank_route its topic to find the document that "
        "already owns it; recommend exactly one of: promote (bank_promote), fold into the owner "
        "(bank_update_section or bank_edit, then bank_discard with the destination as the "
        "reason), or drop (bank_discard). Prefer folding when an owner exists. Give the exact "
        "call for each and run it with dryRun: true first. Change nothing until I choose."
    )


# --------------------------------------------------------------------------------------------
# Deciding the surface (04 §6.2)
# --------------------------------------------------------------------------------------------

OFF_MARKER = ".memorybank-off"
INBOX_DIRECTORY = "_inbox"


def resolve_against(path: str, cwd: str) -> str:
    """`path` resolved against `cwd`, then `os.path.realpath` (04 §6.2 step 1)."""
    return os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))


def is_switched_off(real_root: str, off: Iterable[str], cwd: str) -> bool:
    """Steps 2–3: an `--off` path contains the root, or `.memorybank-off` sits beside it."""
    if any(is_within(real_root, resolve_against(given, cwd)) for given in off):
        return True
    return os.path.lexists(os.path.join(os.path.dirname(real_root), OFF_MARKER))


def has_bank(root: str) -> bool:
    """`hasBank` (04 §6.2): a directory holding a non-dot subdirectory other than `_inbox`,
    or a `*.md` entry. A missing path or a non-directory is no bank (no error)."""
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                if name.endswith(".md"):
                    return True
                try:
                    if entry.is_dir() and name != INBOX_DIRECTORY:
                        return True
                except OSError:
                    continue
    except OSError:
        return False
    return False


class SurfaceChoice(msgspec.Struct, frozen=True):
    """The session's surface, the bank root it serves, and any write rolled back at start."""

    surface: SurfaceName
    root: str
    recovered: tuple[str, ...] = ()


def decide_surface(
    root: str,
    off: Iterable[str] = (),
    *,
    cwd: str | None = None,
    recover: Callable[[str], list[str]] | None = None,
) -> SurfaceChoice:
    """Decide the surface once, at startup (04 §6.2 steps 1–5).

    `root` (the bank root the server serves) is `--root` resolved against `cwd`, without
    resolving symlinks; the off checks compare realpaths. `recover(root)` rolls back an
    interrupted write (step 4) before `hasBank` looks, except on the off surface, which
    touches nothing.
    """
    where = cwd if cwd is not None else os.getcwd()
    served = os.path.normpath(os.path.join(where, os.path.expanduser(root)))
    real = os.path.realpath(served)
    if is_switched_off(real, off, where):
        return SurfaceChoice("off", served)
    recovered = tuple(recover(served)) if recover is not None else ()
    surface: SurfaceName = "full" if has_bank(served) else "seed"
    return SurfaceChoice(surface, served, recovered)


def tools_for(surface: str) -> tuple[str, ...]:
    """The tool names a surface registers (04 §6.1)."""
    if surface == "full":
        return tuple(TOOL_ORDER)
    if surface == "seed":
        return SEED_TOOLS
    return ()


# --------------------------------------------------------------------------------------------
# Published schemas (04 §1.2)
# --------------------------------------------------------------------------------------------

OBJECT_SCHEMA: dict[str, Any] = {"type": "object"}


def inline_refs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Replace every `$ref` into `$defs` by its definition and drop `$defs`."""
    defs = dict(schema.get("$defs", {}))

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                extra = {key: value for key, value in node.items() if key != "$ref"}
                return {**walk(defs[ref.removeprefix("#/$defs/")]), **walk(extra)}
            return {key: walk(value) for key, value in node.items() if key != "$defs"}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    inlined: dict[str, Any] = walk(dict(schema))
    return inlined


def _is_null(schema: Any) -> bool:
    return isinstance(schema, dict) and schema == {"type": "null"}


def _compact(node: Any, *, property_map: bool = False) -> Any:
    if isinstance(node, list):
        return [_compact(item) for item in node]
    if not isinstance(node, dict):
        return node
    if property_map:
        # keys here are property names (a property may well be called "title")
        return {name: _compact(sub) for name, sub in node.items()}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        out[key] = _compact(value, property_map=key == "properties")
    variants = out.get("anyOf")
    if isinstance(variants, list) and any(_is_null(v) for v in variants):
        rest = [v for v in variants if not _is_null(v)]
        del out["anyOf"]
        out = {**rest[0], **out} if len(rest) == 1 else {"anyOf": rest, **out}
    return out


def compact_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The published form of an input schema (04 §1.2).

    Every `title` keyword removed (never a property named `title`), `anyOf [X, null]`
    collapsed into X, `"default": null` dropped, `$defs`/`$ref` inlined. Optional parameters
    are the ones absent from `required`.
    """
    compacted: dict[str, Any] = _compact(inline_refs(schema))
    return compacted


def tool_sort_key(name: str) -> tuple[int, str]:
    """Position of a tool in `tools/list` (04 §2): spec order, unknown names last."""
    return (TOOL_ORDER.get(name, len(TOOL_ORDER)), name)
