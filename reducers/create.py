"""Planning `bank_create`: a governed document, from its template, registered in its index.

Pure (spec 03 §4). The gates run in the spec's order and refuse before anything is planned;
the plan creates the document, then the section index when the section has none yet (with
the registration already in it), then the root index's new section entry, then the chosen
index's new line. With `inbox: true` the document goes to `_inbox/<file name>` with no
template, no section index and no registration (§15).

Choices where the spec is silent:

- `title`, `purpose`, `docKind` and `status` are written stripped of surrounding whitespace;
  `canonicalFor` and `mustNotDefine` keys are stripped and blank keys dropped (they are
  identifiers; the parser strips them the same way). `derivedFrom` is written as given.
- A blank `status` means the default, `draft`.
- An inbox note with no `body`/`bodyFile` gets the minimal body `# <title>`, as a document
  without a template does (step 7 is skipped for the inbox, so it draws no warning).
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Mapping
from typing import Annotated, Any

import msgspec

from mbank.catalogue import ROOT_INDEX, section_for
from mbank.frontmatter_writer import frontmatter_block
from mbank.gates.content import content_from
from mbank.gates.documents import bank_path, bank_path_or_none
from mbank.gates.governance import check_governance
from mbank.gates.paths import PathOnDisk, check_new_document_path
from mbank.gates.vocabulary import default_doc_function, require_known_values
from mbank.model import AnyFileOp, Intent, Plan, PlanOutcome
from mbank.parse import json_data
from mbank.paths import refuse
from mbank.plan import create_document, document_text, replace_document
from mbank.projection import Snapshot
from mbank.reducers.registration import pick_index, plan_section_index, register_line
from mbank.reducers.report import closing, with_common
from mbank.reducers.templates import instantiate, new_frontmatter, retitle, template_source
from mbank.write_declaration import (
    TEXT_LIMIT,
    CliArg,
    FactPaths,
    KnownFacts,
    Published,
    WriteTool,
    content_flags,
)

TOOL = "bank_create"
INBOX = "_inbox/"
DEFAULT_STATUS = "draft"
CANONICAL = "canonical"
PREVIEW_LINES = 40
NO_INDEX = "No index found to register this document in; navigation will not reach it."
_LEADING_H1 = re.compile(r"^ {0,3}#[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")


def _same_title(one: str, other: str) -> bool:
    def key(text: str) -> str:
        return unicodedata.normalize("NFC", text).casefold().strip()

    return key(one) == key(other)


def body_with_title(title: str, content: str) -> str:
    """The body of a document whose caller supplied `content` (§4.3 step 8), under one H1.

    Content that opens with its own `# <title>` (what an agent naturally writes) keeps one
    H1: the same title (NFC, casefolded, trimmed) is dropped from the content. A different
    H1 is refused (`title-mismatch`), naming both, since either could be the one meant.
    """
    stripped = content.strip()
    first, _, rest = stripped.partition("\n")
    match = _LEADING_H1.match(first)
    if match is not None:
        heading = match.group(1).strip()
        if not _same_title(heading, title):
            raise refuse(
                "title-mismatch",
                f'The body starts with the heading "{heading}", but the title is "{title}". '
                "Make them the same, or drop the heading from the body (the title becomes "
                "the document's heading).",
            )
        stripped = rest.strip()
    return f"# {title}\n\n{stripped}\n" if stripped else f"# {title}\n"


def key_list(values: list[str] | None) -> list[str] | None:
    """Fact keys stripped, blank ones dropped (None stays None: "not given")."""
    if values is None:
        return None
    return [value.strip() for value in values if value.strip()]


def require_title_and_purpose(title: str, purpose: str) -> None:
    """`title-required`, then `purpose-required` (§4.3 step 1; also bank_promote step 6)."""
    if not title:
        raise refuse("title-required", "`title` is required.")
    if not purpose:
        raise refuse(
            "purpose-required", "`purpose` is required: it is the signal bank_route ranks on."
        )


def preview(text: str) -> str:
    """The first 40 lines of a file text joined with `\\n` (§4.2)."""
    return "\n".join(text.split("\n")[:PREVIEW_LINES])


def inbox_target(target: str) -> str:
    """`_inbox/<file name>` unless the target already is in the inbox (§4.3 step 3)."""
    return target if target.startswith(INBOX) else INBOX + posixpath.basename(target)


Keys = list[str] | None


class CreateArgs(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The arguments of `bank_create`."""

    doc_kind: str
    path: Annotated[str, Published(words="createPath", required=True)] = ""
    title: Annotated[str, Published(min_length=1, required=True)] = ""
    purpose: Annotated[str, Published(min_length=1, words="purpose", required=True)] = ""
    derived_from: Annotated[Keys, Published(words="derivedFrom")] = None
    canonical_for: Annotated[Keys, Published(words="canonicalFor")] = None
    must_not_define: Keys = None
    status: str = DEFAULT_STATUS
    body: Annotated[str | None, Published(max_length=TEXT_LIMIT)] = None
    body_file: Annotated[str | None, Published(words="bodyFile")] = None
    extra: Annotated[dict[str, Any] | None, Published(words="extra")] = None
    inbox: Annotated[bool, Published(words="inbox")] = False
    dry_run: bool = False


class CreateFacts(msgspec.Struct, frozen=True):
    """The outside facts of `bank_create`: the root-name directory, the shipped templates, and
    the disk state of the target and of its section index."""

    inner_root_dir: bool
    templates: dict[str, str]
    on_disk: dict[str, PathOnDisk]


def create_paths(snapshot: Snapshot, args: CreateArgs, known: KnownFacts) -> FactPaths:
    """The paths whose disk state the gates ask about: the target and its section index."""
    target = bank_path_or_none(snapshot, known.inner_root_dir, args.path)
    if target is None:
        return FactPaths()
    if args.inbox:
        target = inbox_target(target)
    section = section_for(target)
    index = (f"{section.dir}/README.md",) if section is not None else ()
    return FactPaths(on_disk=(target, *index))


def gate_and_plan(snapshot: Snapshot, intent: Intent[CreateArgs, CreateFacts]) -> PlanOutcome:
    """The procedure of §4.3: gates in order, then the plan and the result fields."""
    args, facts = intent.args, intent.facts
    title = args.title.strip()
    purpose = args.purpose.strip()
    require_title_and_purpose(title, purpose)
    target = bank_path(snapshot, facts.inner_root_dir, args.path)
    inbox = args.inbox
    if inbox:
        target = inbox_target(target)
    check_new_document_path(snapshot, facts.on_disk, target)
    status = args.status.strip() or DEFAULT_STATUS
    doc_kind = args.doc_kind.strip()
    derived_from = args.derived_from or []
    canonical_for = key_list(args.canonical_for) or []
    must_not_define = key_list(args.must_not_define)
    warnings = list(
        check_governance(snapshot, target, status, derived_from, canonical_for, doc_kind)
    )
    warnings.extend(require_known_values(snapshot, args.extra or {}))

    template_path: str | None = None
    base: dict[str, Any] = {}
    body = f"# {title}\n"
    if not inbox:
        source = template_source(snapshot, facts.templates, doc_kind, target)
        if source is None:
            warnings.append(
                f'No template matched doc_kind "{doc_kind}"; wrote a minimal document instead.'
            )
        else:
            template_path = source.path
            unwrapped = instantiate(source.raw, source.path)
            base, body = unwrapped.base, retitle(unwrapped.body, title)
    content = content_from(args.body, args.body_file, intent.files, "body")
    if content is not None and content.strip():
        body = body_with_title(title, content)
        if template_path is not None:
            warnings.append(f"Body supplied, so the prose of {template_path} was not used.")

    extra = args.extra
    header = new_frontmatter(
        title=title,
        doc_kind=doc_kind,
        doc_function=default_doc_function(snapshot.contract, target),
        purpose=purpose,
        derived_from=derived_from,
        canonical_for=canonical_for,
        must_not_define=must_not_define,
        status=status,
        base=base,
        today=intent.today,
        warn_placeholders=True,
        extra=extra,
    )
    warnings.extend(header.warnings)
    text = frontmatter_block(header.data) + body.rstrip() + "\n"

    ops: list[AnyFileOp] = [create_document(target, text)]
    registered: list[str] = []
    if not inbox:
        section = plan_section_index(snapshot, facts.on_disk, intent.dry_run, target)
        created = frozenset({section.path}) if section is not None else frozenset()
        index = pick_index(snapshot, target, created)
        if section is not None:
            warnings.append(section.warning)
        if index is None:
            warnings.append(NO_INDEX)
        else:
            registered.append(index)
        pending: dict[str, str] = {}
        if section is not None:
            pending[section.path] = section.text
            if section.root_text is not None:
                pending[ROOT_INDEX] = section.root_text
        if index is not None:
            current = pending[index] if index in pending else document_text(snapshot, index)
            pending[index] = register_line(current, index, target, title, purpose)
        for path, new_text in pending.items():
            if path in snapshot.docs:
                ops.append(replace_document(snapshot, path, new_text))
            else:
                ops.append(create_document(path, new_text))

    return PlanOutcome(
        plan=Plan(TOOL, tuple(ops)),
        warnings=tuple(warnings),
        result={
            "path": target,
            "frontmatter": json_data(header.data),
            "template": template_path,
            "registeredIn": registered,
            "preview": preview(text),
        },
    )


def create_result(
    result: Mapping[str, Any], applied: bool, common: Mapping[str, Any], warnings: tuple[str, ...]
) -> dict[str, Any]:
    """`CreateResult` in the spec's key order (§4.2)."""
    out: dict[str, Any] = {
        "path": result["path"],
        "created": applied,
        "dryRun": common["dryRun"],
        "frontmatter": result["frontmatter"],
        "template": result["template"],
        "registeredIn": list(result["registeredIn"]),
        "warnings": list(warnings),
        "preview": result["preview"],
    }
    return with_common(out, common)


def format_written(result: Mapping[str, Any], headline: str) -> str:
    """The lines `create` and `promote` share after their headline (spec 04 §9.3)."""
    lines = [headline, f"template: {result['template'] or '(none)'}"]
    registered = result["registeredIn"]
    lines.append(f"registered in: {', '.join(registered) if registered else '(nowhere)'}")
    lines.extend(f"warning: {warning}" for warning in result["warnings"])
    if not result["dryRun"]:  # on a dry run the diff replaces the preview
        lines.extend(["--- preview ---", result["preview"].rstrip("\n")])
    return closing(lines, result)


def format_create(result: Mapping[str, Any]) -> str:
    """The human rendering of `mbank create` (spec 04 §9.3)."""
    verb = "WOULD CREATE" if result["dryRun"] else "CREATED"
    return format_written(result, f"{verb} {result['path']}")


# The list arguments' flags (create and promote): repeatable, comma-separated.
LIST_FLAGS = (
    CliArg(("--derived",), "derivedFrom", kind="list", metavar="A,B", help="derived_from entries"),
    CliArg(
        ("--canonical",), "canonicalFor", kind="list", metavar="K1,K2", help="canonical_for keys"
    ),
    CliArg(("--must-not-define",), "mustNotDefine", kind="list", metavar="K1,K2"),
)

WRITE_TOOL = WriteTool(
    name=TOOL,
    command="create",
    help="create a governed document (bank_create)",
    args=CreateArgs,
    facts=CreateFacts,
    fact_paths=create_paths,
    gate_and_plan=gate_and_plan,
    shape=create_result,
    render=format_create,
    cli=(
        CliArg(("path",), "path", metavar="PATH"),
        CliArg(
            ("--kind",), "docKind", default="engineering", help="doc_kind (default engineering)"
        ),
        CliArg(("--title",), "title", default_from="path", help="default: the path"),
        CliArg(
            ("--purpose",), "purpose", default="", help="when to read it; routing ranks on this"
        ),
        *LIST_FLAGS,
        CliArg(("--status",), "status", default=DEFAULT_STATUS),
        *content_flags("body"),
        CliArg(("--extra",), "extra", kind="extra", metavar="KEY=VALUE", help="repeatable"),
        CliArg(
            ("--extra-json",),
            "extra",
            kind="extra-json",
            metavar="JSON",
            help="an object of more frontmatter",
        ),
        CliArg(("--inbox",), "inbox", kind="flag", help="quarantine: into _inbox/"),
    ),
)
