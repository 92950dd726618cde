"""The declared write tools as plain callables, for tests: `write_calls.create(bank, arguments,
dry_run=…, **engine)` returns the tool's full result, exactly as MCP and the CLI get it.

A plain module (like `planners`) so tool tests, fixtures and subprocess scripts share it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mbank.reducers.registry import BY_NAME
from mbank.snapshot import Bank
from mbank.writes import WriteOutcome, run_write, write_outcome

Call = Callable[..., dict[str, Any]]


def runner(name: str) -> Call:
    """`(bank, arguments, *, dry_run=False, **engine) -> result` for the tool `name`."""
    tool = BY_NAME[name]

    def run(
        bank: Bank, arguments: Mapping[str, Any], *, dry_run: bool = False, **engine: Any
    ) -> dict[str, Any]:
        return run_write(tool, bank, arguments, dry_run=dry_run, **engine)

    run.__name__ = name
    return run


def outcome(name: str, bank: Bank, arguments: Mapping[str, Any], **engine: Any) -> WriteOutcome:
    """The engine's dry-run outcome (plan, diff, result fields, warnings) of tool `name`."""
    return write_outcome(BY_NAME[name], bank, arguments, dry_run=True, **engine)


init = runner("bank_init")
create = runner("bank_create")
edit = runner("bank_edit")
update_section = runner("bank_update_section")
rewrite = runner("bank_rewrite")
set_status = runner("bank_set_status")
set_field = runner("bank_set_field")
promote = runner("bank_promote")
discard = runner("bank_discard")
materialize_flows = runner("bank_materialize_flows")
undo = runner("bank_undo")
