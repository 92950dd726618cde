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
from collections.abc import Mapping
from typing import Any

from mbank.catalogue import ROOT_INDEX
from mbank.frontmatter_writer import frontmatter_block
from mbank.gates.content import content_from
from mbank.gates.documents import bank_path
from mbank.gates.governance import check_governance
from mbank.gates.paths import check_new_document_path
from mbank.model import AnyFileOp, Intent, Plan, PlanOutcome
from mbank.parse import json_data
from mbank.paths import refuse
from mbank.plan import create_document, document_text, replace_document
from mbank.projection import Snapshot
from mbank.reducers.registration import pick_index, plan_section_index, register_line
from mbank.reducers.report import closing, with_common
from mbank.reducers.templates import (
    TEMPLATES_FACT,
    instantiate,
    new_frontmatter,
    retitle,
    template_source,
)

TOOL = "bank_create"
INBOX = "_inbox/"
DEFAULT_STATUS = "draft"
CANONICAL = "canonical"
PREVIEW_LINES = 40
NO_INDEX = "No index found to register this document in; navigation will not reach it."


def text_argument(arguments: Mapping[str, Any], key: str) -> str:
    """A string argument stripped, or `""` when absent or not a string."""
    value = arguments.get(key)
    return value.strip() if isinstance(value, str) else ""


def list_argument(arguments: Mapping[str, Any], key: str) -> list[str] | None:
    """A string-list argument as given (None when absent); non-string items become text."""
    value = arguments.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    return [item if isinstance(item, str) else str(item) for item in value]


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


def gate_and_plan(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
    """The procedure of §4.3: gates in order, then the plan and the result fields."""
    arguments = intent.arguments
    title = text_argument(arguments, "title")
    purpose = text_argument(arguments, "purpose")
    require_title_and_purpose(title, purpose)
    target = bank_path(snapshot, intent, str(arguments.get("path", "")))
    inbox = bool(arguments.get("inbox"))
    if inbox:
        target = inbox_target(target)
    check_new_document_path(snapshot, intent, target)
    status = text_argument(arguments, "status") or DEFAULT_STATUS
    doc_kind = text_argument(arguments, "docKind")
    derived_from = list_argument(arguments, "derivedFrom") or []
    canonical_for = key_list(list_argument(arguments, "canonicalFor")) or []
    must_not_define = key_list(list_argument(arguments, "mustNotDefine"))
    warnings = list(
        check_governance(snapshot, target, status, derived_from, canonical_for, doc_kind)
    )

    template_path: str | None = None
    base: dict[str, Any] = {}
    body = f"# {title}\n"
    if not inbox:
        source = template_source(snapshot, intent.facts.get(TEMPLATES_FACT, {}), doc_kind, target)
        if source is None:
            warnings.append(
                f'No template matched doc_kind "{doc_kind}"; wrote a minimal document instead.'
            )
        else:
            template_path = source.path
            unwrapped = instantiate(source.raw, source.path)
            base, body = unwrapped.base, retitle(unwrapped.body, title)
    content = content_from(intent, "body", "bodyFile", "body")
    if content is not None and content.strip():
        body = f"# {title}\n\n{content.strip()}\n"
        if template_path is not None:
            warnings.append(f"Body supplied, so the prose of {template_path} was not used.")

    extra = arguments.get("extra")
    header = new_frontmatter(
        title=title,
        doc_kind=doc_kind,
        doc_function=CANONICAL,
        purpose=purpose,
        derived_from=derived_from,
        canonical_for=canonical_for,
        must_not_define=must_not_define,
        status=status,
        base=base,
        today=intent.today,
        warn_placeholders=True,
        extra=extra if isinstance(extra, Mapping) else None,
    )
    warnings.extend(header.warnings)
    text = frontmatter_block(header.data) + body.rstrip() + "\n"

    ops: list[AnyFileOp] = [create_document(target, text)]
    registered: list[str] = []
    if not inbox:
        section = plan_section_index(snapshot, intent, target)
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
