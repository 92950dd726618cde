"""The write tools' shells: one thin function per tool, shared by the CLI and the MCP server.

Each function gathers the outside facts its gates need, runs the write engine
(`mbank.writes.execute`) with the tool's pure `gate_and_plan`, and returns the tool's full
result dict (camelCase, in spec order) with the fields every write result has (spec 03
§1.3). No logic lives here that a surface would not share.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from mbank.gates.documents import GONE_FACT, INNER_ROOT_DIR_FACT
from mbank.journal import where_did_it_go
from mbank.model import RefusalError
from mbank.snapshot import Bank, Snapshot
from mbank.writes import GateAndPlan, GatherFacts, WriteOutcome, execute

# --------------------------------------------------------------------------------------------
# edit, update_section, rewrite, set_status, set_field (spec 03 §5–§9)
# --------------------------------------------------------------------------------------------


def document_facts(bank: Bank, given: Any) -> GatherFacts:
    """The outside facts of a write to one existing document (gates/documents.py).

    Whether `<root>/<root name>/` is a real directory (spec 01 §2.2 step 8), and, when the
    path names no document, the journal's "where did it go" sentence for it (spec 03 §14.9).
    """

    def gather(snapshot: Snapshot) -> dict[str, Any]:
        inner = os.path.join(bank.root, os.path.basename(bank.root))
        facts: dict[str, Any] = {
            INNER_ROOT_DIR_FACT: os.path.isdir(inner) and not os.path.islink(inner)
        }
        if not isinstance(given, str):
            return facts
        try:
            path = bank.relative(given, snapshot)
        except RefusalError:
            return facts  # the gate refuses the same path, at its place in the order
        if path not in snapshot.docs:
            note = where_did_it_go(bank.root, path)
            if note:
                facts[GONE_FACT] = {path: note}
        return facts

    return gather


def finished_result(
    outcome: WriteOutcome, done: str, *, warnings_always: bool = False
) -> dict[str, Any]:
    """A tool's full result: its fields in spec order, the done-flag, warnings, the common fields.

    `warnings` stays where the reducer placed it when the tool always has it
    (`warnings_always`); otherwise it is appended only when non-empty (spec 03 §1.3).
    """
    result = dict(outcome.result)
    result[done] = outcome.applied
    if warnings_always or outcome.warnings:
        result["warnings"] = list(outcome.warnings)
    result.update(outcome.common_fields())
    return result


def _document_write(
    bank: Bank,
    tool: str,
    arguments: Mapping[str, Any],
    gate_and_plan: GateAndPlan,
    dry_run: bool,
    engine: dict[str, Any],
) -> WriteOutcome:
    given = {key: value for key, value in arguments.items() if key != "dryRun"}
    return execute(
        bank,
        tool,
        given,
        gate_and_plan,
        dry_run=dry_run,
        gather_facts=document_facts(bank, given.get("path")),
        **engine,
    )


def edit(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_edit`: replace one exact fragment of a body (spec 03 §5)."""
    from mbank.reducers.edit import TOOL, gate_and_plan

    outcome = _document_write(bank, TOOL, arguments, gate_and_plan, dry_run, engine)
    return finished_result(outcome, "edited")


def update_section(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_update_section`: replace or append to one named section (spec 03 §6)."""
    from mbank.reducers.update_section import TOOL, gate_and_plan

    outcome = _document_write(bank, TOOL, arguments, gate_and_plan, dry_run, engine)
    return finished_result(outcome, "updated")


def rewrite(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_rewrite`: replace the whole body, frontmatter and index entry kept (spec 03 §7)."""
    from mbank.reducers.rewrite import TOOL, gate_and_plan

    outcome = _document_write(bank, TOOL, arguments, gate_and_plan, dry_run, engine)
    return finished_result(outcome, "rewritten", warnings_always=True)


def set_status(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_set_status`: a lifecycle transition through the gates (spec 03 §8)."""
    from mbank.reducers.set_status import TOOL, gate_and_plan

    outcome = _document_write(bank, TOOL, arguments, gate_and_plan, dry_run, engine)
    return finished_result(outcome, "changed", warnings_always=True)


def set_field(
    bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
) -> dict[str, Any]:
    """`bank_set_field`: one scalar frontmatter value (spec 03 §9)."""
    from mbank.reducers.set_field import TOOL, gate_and_plan

    outcome = _document_write(bank, TOOL, arguments, gate_and_plan, dry_run, engine)
    return finished_result(outcome, "changed")
