"""Planning `bank_set_status`: a lifecycle transition, one frontmatter line flipped in place.

Pure (spec 03 §8). The gates check what the transition changes (activation → the
`derived_from` requirement, root documents exempt; archiving → the canonical release); the
reducer rewrites the `status:` line (and, when releasing, drops the `canonical_for` block)
and keeps every other byte.

Choices where the spec is silent:
- archiving an already archived owner with `releaseCanonical` drops the keys and leaves the
  status line as it stands (nothing about the status changes);
- a status with a line break is written double-quoted with JSON escapes, which reads back as
  the same string (the post-check judges the value, as for any undeclared status).
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

import msgspec

from mbank.gates.documents import DocumentFacts, document_fact_paths, document_to_write
from mbank.gates.status import (
    ARCHIVED,
    check_activation,
    refuse_archiving_an_owner,
    refuse_inbox,
    release_only_when_archiving,
    require_frontmatter,
    require_status,
)
from mbank.gates.vocabulary import require_known_value
from mbank.model import Intent, Plan, PlanOutcome
from mbank.parse import scalar_text, split_frontmatter
from mbank.plan import document_text, replace_document
from mbank.projection import Snapshot
from mbank.reducers.report import closing, finished, unchanged
from mbank.reducers.set_field import frontmatter_close, key_line, reads_plain
from mbank.write_declaration import CliArg, Published, WriteTool

TOOL = "bank_set_status"
_LIST_ITEM = re.compile(r"^\s*-(\s|$)")
_CONTINUATION = re.compile(r"^\s+\S")


def current_status(data: dict[str, Any]) -> str:
    """The document's status as text (`""` when it has none, or it is not a scalar)."""
    value = data.get("status")
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return ""
    return scalar_text(value) or ""


def status_line(to: str) -> str:
    """`status: <to>`, double-quoted (JSON) when the plain form would not read back (**mbank:**)."""
    return (
        f"status: {to}"
        if reads_plain("status", to)
        else f"status: {json.dumps(to, ensure_ascii=False)}"
    )


def release_keys(lines: list[str], close: int) -> int:
    """Remove the first top-level `canonical_for:` line and its items; return lines removed."""
    at = key_line(lines, close, "canonical_for")
    if at is None:
        return 0
    end = at + 1
    while end < close and (_LIST_ITEM.match(lines[end]) or _CONTINUATION.match(lines[end])):
        end += 1
    del lines[at:end]
    return end - at


def set_status_line(lines: list[str], close: int, to: str) -> None:
    """Rewrite the first top-level `status:` line (and its continuations), or insert one."""
    at = key_line(lines, close, "status")
    if at is None:
        lines.insert(close, status_line(to))
        return
    end = at + 1
    while end < close and _CONTINUATION.match(lines[end]):
        end += 1
    lines[at:end] = [status_line(to)]


class SetStatusArgs(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The arguments of `bank_set_status`."""

    path: Annotated[str, Published(required=True)] = ""
    status: Annotated[str, Published(min_length=1, required=True)] = ""
    release_canonical: Annotated[bool, Published(words="releaseCanonical")] = False
    dry_run: bool = False


def gate_and_plan(snapshot: Snapshot, intent: Intent[SetStatusArgs, DocumentFacts]) -> PlanOutcome:
    """Gates of §8 in order, then the one replace op and the result fields."""
    args = intent.args
    doc = document_to_write(snapshot, intent.facts, args.path)
    refuse_inbox(doc)
    to = args.status.strip()
    require_status(to)
    release = args.release_canonical
    release_only_when_archiving(release, to)
    text = document_text(snapshot, doc.path)
    require_frontmatter(doc, split_frontmatter(text).unclosed)
    refuse_archiving_an_owner(doc, to, release)
    before = current_status(doc.data)
    releasing = release and to == ARCHIVED and bool(doc.canonical_for)
    result: dict[str, Any] = {
        "path": doc.path,
        "from": before,
        "to": to,
        "changed": False,
        "dryRun": intent.dry_run,
        "warnings": [],
    }
    if before == to and not releasing:
        return PlanOutcome(plan=Plan(TOOL, ()), result=result)
    check_activation(doc, snapshot.contract, before, to)
    # issue 14: a status neither declared nor used by any document is refused
    warnings = list(require_known_value(snapshot, "status", to))

    lines = text.split("\n")
    close = frontmatter_close(lines)
    assert close is not None  # the frontmatter gate passed: the block is closed
    if releasing:
        close -= release_keys(lines, close)
        result["released"] = list(doc.canonical_for)
    if before != to:
        set_status_line(lines, close, to)
    op = replace_document(snapshot, doc.path, "\n".join(lines))
    return PlanOutcome(plan=Plan(TOOL, (op,)), warnings=tuple(warnings), result=result)


def format_set_status(result: dict[str, Any]) -> str:
    """The human rendering of `mbank set-status` (spec 04 §9.3)."""
    path = result["path"]
    if unchanged(result, "changed"):
        lines = [f"UNCHANGED {path} status: {result['to']}"]
    else:
        verb = "WOULD SET" if result["dryRun"] else "SET"
        lines = [f"{verb} {path} status: {result['from']} -> {result['to']}"]
        if result.get("released"):
            lines.append(f"released: {', '.join(result['released'])}")
    lines.extend(f"warning: {warning}" for warning in result.get("warnings", ()))
    return closing(lines, result, empty_diff=False)


WRITE_TOOL = WriteTool(
    name=TOOL,
    command="set-status",
    help="move a document to another lifecycle status",
    args=SetStatusArgs,
    facts=DocumentFacts,
    fact_paths=document_fact_paths,
    gate_and_plan=gate_and_plan,
    shape=finished("changed", warnings_always=True),
    render=format_set_status,
    cli=(
        CliArg(("path",), "path", metavar="PATH"),
        CliArg(("status",), "status", metavar="STATUS"),
        CliArg(
            ("--release-canonical",),
            "releaseCanonical",
            kind="flag",
            help="archiving only: give up the canonical_for keys in the same write",
        ),
    ),
)
