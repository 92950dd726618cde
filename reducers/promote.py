"""Planning `bank_promote`: move a captured note out of `_inbox/` as a governed document.

Pure (spec 03 §10). The note must be a quarantined text document and the destination a new
path outside the quarantine; the destination passes the same governance as a created
document, with the note itself not counted as an owner of its own keys. The frontmatter is
rebuilt (only the fields §10 names are carried), the body keeps the note's prose with its H1
retitled and its relative links rewritten for the new place, the destination is registered in
the nearest index (no section index is built by a promotion), and the note is deleted. The
journal record carries `from` and `to`, which later answers a read of the old path.

Choices where the spec is silent:

- An argument that is given (not null) is used even when blank, so a blank `title`,
  `purpose` or `docKind` argument is refused rather than silently replaced by the note's.
  The note's own title has the usual fallbacks (its H1, its file name).
- A blank `status` argument means the default, `active`.
- A leading byte-order mark of a note without frontmatter is not carried into the body.
- A link from the note to itself is rewritten to point at the destination.
- The relink warning names the link targets without their `#anchor` (the anchor is kept in
  the rewritten link).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

import msgspec

from mbank.frontmatter_writer import frontmatter_block
from mbank.gates.documents import (
    bank_path,
    bank_path_or_none,
    refuse_duplicate_keys,
    require_document,
    require_text,
)
from mbank.gates.governance import check_governance
from mbank.gates.paths import PathOnDisk, check_new_document_path
from mbank.gates.vocabulary import default_doc_function
from mbank.model import AnyFileOp, Intent, JournalNotes, Plan, PlanOutcome
from mbank.parse import URL_SCHEME, json_data, resolve_from, split_frontmatter
from mbank.paths import refuse
from mbank.plan import create_document, delete_document, document_text, replace_document
from mbank.projection import Snapshot
from mbank.reducers.create import (
    INBOX,
    LIST_FLAGS,
    NO_INDEX,
    Keys,
    format_written,
    key_list,
    preview,
    require_title_and_purpose,
)
from mbank.reducers.registration import pick_index, register_line, relative_link
from mbank.reducers.report import with_common
from mbank.reducers.templates import instantiate, new_frontmatter, retitle
from mbank.reducers.templates import template_source as find_template
from mbank.write_declaration import CliArg, FactPaths, KnownFacts, Published, WriteTool

TOOL = "bank_promote"
INBOX_LAYER = "inbox"
DEFAULT_STATUS = "active"

_RELINK = re.compile(r"\]\(([^)\s]+\.md)((?:#[^)\s]*)?)\)")


class PromoteArgs(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The arguments of `bank_promote`."""

    path: Annotated[str, Published(words="notePath", required=True)] = ""
    to: Annotated[str, Published(words="to", required=True)] = ""
    doc_kind: str | None = None
    title: str | None = None
    purpose: str | None = None
    derived_from: Annotated[Keys, Published(words="promoteDerivedFrom")] = None
    canonical_for: Keys = None
    must_not_define: Keys = None
    status: str = DEFAULT_STATUS
    dry_run: bool = False


class PromoteFacts(msgspec.Struct, frozen=True):
    """The outside facts of `bank_promote`: the root-name directory, the shipped templates,
    where a gone note went, and the destination's disk state."""

    inner_root_dir: bool
    templates: dict[str, str]
    gone: dict[str, str]
    on_disk: dict[str, PathOnDisk]


def promote_paths(snapshot: Snapshot, args: PromoteArgs, known: KnownFacts) -> FactPaths:
    """The note's path (for "where did it go") and the destination's (for its disk state)."""
    source = bank_path_or_none(snapshot, known.inner_root_dir, args.path)
    destination = bank_path_or_none(snapshot, known.inner_root_dir, args.to)
    return FactPaths(
        gone=(source,) if source is not None and source not in snapshot.docs else (),
        on_disk=(destination,) if destination is not None else (),
    )


def _given(value: str | None, fallback: str) -> str:
    return value.strip() if value is not None else fallback


def relink(snapshot: Snapshot, source: str, destination: str, body: str) -> tuple[str, list[str]]:
    """Rewrite the body's relative `.md` links for the destination; one warning per link.

    A link is rewritten when it does not start with `/` or `#`, has no URL scheme, resolves
    from the source to a document of the bank, and its path from the destination differs
    (fenced code included, upstream parity).
    """
    warnings: list[str] = []

    def rewrite(match: re.Match[str]) -> str:
        target, anchor = match.group(1), match.group(2)
        if target.startswith(("/", "#")) or URL_SCHEME.match(target):
            return match.group(0)
        where = resolve_from(source, target)
        if where.external or where.resolved is None or where.resolved not in snapshot.docs:
            return match.group(0)
        resolved = destination if where.resolved == source else where.resolved
        new = relative_link(destination, resolved)
        if new == target:
            return match.group(0)
        warnings.append(f"Link rewritten for the new location: {target} -> {new}")
        return f"]({new}{anchor})"

    return _RELINK.sub(rewrite, body), warnings


def gate_and_plan(snapshot: Snapshot, intent: Intent[PromoteArgs, PromoteFacts]) -> PlanOutcome:
    """The gates of §10 in order, then the plan: create, register, delete the note."""
    args, facts = intent.args, intent.facts
    given = args.path
    source = bank_path(snapshot, facts.inner_root_dir, given)
    note = require_document(snapshot, facts.gone, given, source)
    if note.layer != INBOX_LAYER:
        raise refuse(
            "not-quarantined",
            f"Only quarantined documents can be promoted; {source} is not in _inbox/.",
        )
    require_text(note)
    # a note whose frontmatter repeats a key would promote one reading of it (issue 13 item 12)
    refuse_duplicate_keys(note, snapshot.raw.get(source, ""))
    destination = bank_path(snapshot, facts.inner_root_dir, args.to)
    if destination.startswith(INBOX):
        raise refuse(
            "stays-quarantined",
            "Promotion must leave the quarantine; give a destination outside _inbox/.",
        )
    check_new_document_path(snapshot, facts.on_disk, destination)
    title = _given(args.title, note.title)
    purpose = _given(args.purpose, note.purpose)
    require_title_and_purpose(title, purpose)
    doc_kind = _given(args.doc_kind, note.doc_kind)
    if not doc_kind:
        raise refuse(
            "doc-kind-required", "`docKind` is required: the captured note does not declare one."
        )
    status = args.status.strip() or DEFAULT_STATUS
    derived = args.derived_from
    derived_from = derived if derived is not None else [edge.raw for edge in note.derived_from]
    keys = key_list(args.canonical_for)
    canonical_for = keys if keys is not None else list(note.canonical_for)
    must_not_define = key_list(args.must_not_define)
    warnings = list(
        check_governance(
            snapshot, destination, status, derived_from, canonical_for, doc_kind, exempt=source
        )
    )

    template = find_template(snapshot, facts.templates, doc_kind, destination)
    base = instantiate(template.raw, template.path).base if template is not None else {}
    body = split_frontmatter(document_text(snapshot, source)).body.lstrip("\ufeff").strip()
    body = retitle(body or f"# {title}", title)
    body, relinked = relink(snapshot, source, destination, body)
    warnings.extend(relinked)
    header = new_frontmatter(
        title=title,
        doc_kind=doc_kind,
        doc_function=note.doc_function or default_doc_function(snapshot.contract, destination),
        purpose=purpose,
        derived_from=derived_from,
        canonical_for=canonical_for,
        must_not_define=must_not_define,
        status=status,
        base=base,
        today=intent.today,
        warn_placeholders=False,
    )
    text = frontmatter_block(header.data) + body.rstrip() + "\n"

    ops: list[AnyFileOp] = [create_document(destination, text)]
    index = pick_index(snapshot, destination)
    if index is None:
        warnings.append(NO_INDEX)
    else:
        registered = register_line(
            document_text(snapshot, index), index, destination, title, purpose
        )
        ops.append(replace_document(snapshot, index, registered))
    ops.append(delete_document(snapshot, source))
    return PlanOutcome(
        plan=Plan(TOOL, tuple(ops)),
        warnings=tuple(warnings),
        result={
            "from": source,
            "to": destination,
            "frontmatter": json_data(header.data),
            "template": template.path if template is not None else None,
            "registeredIn": [index] if index is not None else [],
            "preview": preview(text),
        },
        notes=JournalNotes(from_=source, to=destination),
    )


def promote_result(
    result: Mapping[str, Any],
    applied: bool,
    common: Mapping[str, Any],
    warnings: tuple[str, ...],
) -> dict[str, Any]:
    """The `bank_promote` result in the spec's key order (§10)."""
    out: dict[str, Any] = {
        "from": result["from"],
        "to": result["to"],
        "promoted": applied,
        "dryRun": common["dryRun"],
        "frontmatter": result["frontmatter"],
        "template": result["template"],
        "registeredIn": list(result["registeredIn"]),
        "warnings": list(warnings),
        "preview": result["preview"],
    }
    return with_common(out, common)


def format_promote(result: Mapping[str, Any]) -> str:
    """The human rendering of `mbank promote` (spec 04 §9.3)."""
    verb = "WOULD PROMOTE" if result["dryRun"] else "PROMOTED"
    return format_written(result, f"{verb} {result['from']} -> {result['to']}")


WRITE_TOOL = WriteTool(
    name=TOOL,
    command="promote",
    help="move a note out of _inbox/ (bank_promote)",
    args=PromoteArgs,
    facts=PromoteFacts,
    fact_paths=promote_paths,
    gate_and_plan=gate_and_plan,
    shape=promote_result,
    render=format_promote,
    cli=(
        CliArg(("path",), "path", metavar="PATH", help="the quarantined note"),
        CliArg(("--to",), "to", required=True, metavar="DEST", help="destination outside _inbox/"),
        CliArg(("--kind",), "docKind", help="doc_kind (default: the note's)"),
        CliArg(("--title",), "title", help="default: the note's"),
        CliArg(("--purpose",), "purpose", help="default: the note's"),
        *LIST_FLAGS,
        CliArg(("--status",), "status", help="default active"),
    ),
)
