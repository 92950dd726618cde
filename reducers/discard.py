"""Planning `bank_discard`: drop a captured note, on the record.

Pure (spec 03 §11). Only a document in the inbox layer may be deleted, and only with a
reason; the plan is one delete op and no index is touched (inbox notes are never
registered). "On the record" is literal: the journal record keeps the reason, the note's
title and purpose, and the note's pre-image, so `mbank undo` can bring it back and a later
read of the path says when and why it went. A non-text note may be discarded (§2.3).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import msgspec

from mbank.gates.documents import DocumentFacts, bank_path, document_fact_paths, require_document
from mbank.model import Intent, JournalNotes, Plan, PlanOutcome
from mbank.paths import refuse
from mbank.plan import delete_document
from mbank.projection import Snapshot
from mbank.reducers.report import closing, with_common
from mbank.write_declaration import CliArg, Published, WriteTool

TOOL = "bank_discard"
INBOX_LAYER = "inbox"


class DiscardArgs(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The arguments of `bank_discard`."""

    path: Annotated[str, Published(required=True)] = ""
    reason: Annotated[str, Published(min_length=1, max_length=2000, required=True)] = ""
    dry_run: bool = False


def gate_and_plan(snapshot: Snapshot, intent: Intent[DiscardArgs, DocumentFacts]) -> PlanOutcome:
    """The gates of §11 in order, then the one delete op."""
    args = intent.args
    given = args.path
    path = bank_path(snapshot, intent.facts.inner_root_dir, given)
    note = require_document(snapshot, intent.facts.gone, given, path)
    if note.layer != INBOX_LAYER:
        raise refuse(
            "not-quarantined",
            f"Only quarantined documents can be discarded; {path} is not in _inbox/. "
            "Documents in the bank proper are removed by hand, deliberately.",
        )
    reason = args.reason.strip()
    if not reason:
        raise refuse(
            "reason-required",
            "`reason` is required: a note is dropped on the record, or not at all.",
        )
    return PlanOutcome(
        plan=Plan(TOOL, (delete_document(snapshot, path),)),
        result={
            "path": path,
            "title": note.title,
            "purpose": note.purpose,
            "reason": reason,
            "bytes": note.size,
        },
        notes=JournalNotes(reason=reason, title=note.title, purpose=note.purpose),
    )


def discard_result(
    result: Mapping[str, Any],
    applied: bool,
    common: Mapping[str, Any],
    warnings: tuple[str, ...],
) -> dict[str, Any]:
    """The `bank_discard` result in the spec's key order (§11); `warnings` only when any."""
    out: dict[str, Any] = {
        "path": result["path"],
        "title": result["title"],
        "purpose": result["purpose"],
        "reason": result["reason"],
        "discarded": applied,
        "dryRun": common["dryRun"],
        "bytes": result["bytes"],
    }
    if warnings:
        out["warnings"] = list(warnings)
    return with_common(out, common)


def format_discard(result: Mapping[str, Any]) -> str:
    """The human rendering of `mbank discard` (spec 04 §9.3)."""
    verb = "WOULD DISCARD" if result["dryRun"] else "DISCARDED"
    lines = [
        f"{verb} {result['path']}  ({result['bytes']} bytes)",
        f"title: {result['title']}",
        f"reason: {result['reason']}",
    ]
    lines.extend(f"warning: {warning}" for warning in result.get("warnings", ()))
    return closing(lines, result)


WRITE_TOOL = WriteTool(
    name=TOOL,
    command="discard",
    help="drop a note from _inbox/, on the record",
    args=DiscardArgs,
    facts=DocumentFacts,
    fact_paths=document_fact_paths,
    gate_and_plan=gate_and_plan,
    shape=discard_result,
    render=format_discard,
    cli=(
        CliArg(("path",), "path", metavar="PATH", help="the quarantined note"),
        CliArg(("--reason",), "reason", required=True, metavar="TEXT", help="kept in the journal"),
    ),
)
