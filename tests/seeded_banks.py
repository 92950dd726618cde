"""Test support for `bank_init`, `bank_materialize_flows` and the generated tier: a bank written
through the tool shells with a fixed clock and journal ids, dry-run plans as plain data, and
the whole tree as text so a dry-run diff can be applied to the pre-state and compared with the
post-state.

A plain module so test_init, test_materialize, test_contract_diff and test_generated_tier can
share it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import write_calls
from document_writes import apply_diff, normalise
from planners import Clock, Ids

from mbank.model import RefusalError
from mbank.plan import plan_data
from mbank.snapshot import Bank

NAME = "ebook_parser"


class Seeder:
    """One bank root written through the write runner with a deterministic clock and ids."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bank = Bank(str(root))
        self.clock = Clock()
        self.ids = Ids()

    def engine(self) -> dict[str, Any]:
        return {"clock": self.clock, "make_id": self.ids, "cwd": str(self.root.parent)}

    def init(self, name: str = NAME, **arguments: Any) -> dict[str, Any]:
        return write_calls.init(self.bank, {"name": name, **arguments}, **self.engine())

    def materialize(self, **arguments: Any) -> dict[str, Any]:
        return write_calls.materialize_flows(self.bank, dict(arguments), **self.engine())

    def call(self, shell: Any, arguments: Mapping[str, Any], *, dry_run: bool = False) -> Any:
        return shell(self.bank, dict(arguments), dry_run=dry_run, **self.engine())

    def refusal(self, shell: Any, arguments: Mapping[str, Any]) -> tuple[str, str]:
        """`(reason, message)` of a call refused alike as a dry run and as a real run."""
        found = []
        for dry_run in (True, False):
            try:
                self.call(shell, arguments, dry_run=dry_run)
            except RefusalError as exc:
                found.append((exc.refusal.rule, exc.refusal.message))
            else:
                raise AssertionError(f"{arguments} was not refused")
        assert found[0] == found[1]
        return found[0]

    def planned(self, tool: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The dry-run plan (content as text), diff, result and warnings, normalised."""
        outcome = write_calls.outcome(tool, self.bank, dict(arguments), **self.engine())
        data = {
            "plan": plan_data(outcome.plan),
            "diff": outcome.diff,
            "result": outcome.result,
            "warnings": list(outcome.warnings),
        }
        normalised: dict[str, Any] = normalise(data, self.root)
        return normalised


def tree_texts(root: Path) -> dict[str, str | None]:
    """Every file under root outside `.mbank/`, bank path → text (`\\n` line endings kept)."""
    found: dict[str, str | None] = {}
    if not root.exists():
        return found
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(name for name in dirnames if name != ".mbank")
        for name in sorted(filenames):
            path = Path(directory, name)
            found[path.relative_to(root).as_posix()] = path.read_bytes().decode("utf-8")
    return found


def patched(pre: Mapping[str, str | None], diff: str) -> dict[str, str]:
    """The pre-state with a dry-run diff applied by a standard (strict) patch algorithm."""
    after = apply_diff(dict(pre), diff)
    return {path: text for path, text in after.items() if text is not None}
