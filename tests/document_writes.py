"""Test support for the document write tools (edit, update_section, rewrite, set_status,
set_field): a bank with a fixed clock and journal ids, plans as plain data, a patch applier.

A plain module so the tool tests and the write-session test can import it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import write_calls
from planners import Clock, Ids

from mbank.model import RefusalError
from mbank.plan import plan_data
from mbank.snapshot import Bank
from mbank.writes import GateAndPlan

Shell = Callable[..., dict[str, Any]]

SHELLS: dict[str, Shell] = {
    "bank_edit": write_calls.edit,
    "bank_update_section": write_calls.update_section,
    "bank_rewrite": write_calls.rewrite,
    "bank_set_status": write_calls.set_status,
    "bank_set_field": write_calls.set_field,
    "bank_create": write_calls.create,
    "bank_promote": write_calls.promote,
    "bank_undo": write_calls.undo,
}


def normalise(value: Any, root: Path) -> Any:
    """Replace the bank root with `<ROOT>` and journal ids with `<JOURNAL_ID>`, recursively."""
    if isinstance(value, str):
        text = value.replace(str(root), "<ROOT>")
        return re.sub(r"\b\d{8}T\d{6}Z-[0-9a-f]{6}\b", "<JOURNAL_ID>", text)
    if isinstance(value, Mapping):
        return {key: normalise(item, root) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalise(item, root) for item in value]
    return value


class Writer:
    """One bank written through the tool shells with a deterministic clock and ids."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bank = Bank(str(root))
        self.clock = Clock()
        self.ids = Ids()
        # a person at the CLI with --governance (issue 14): may change dna/
        self.governance = False

    def engine(self) -> dict[str, Any]:
        engine: dict[str, Any] = {
            "clock": self.clock,
            "make_id": self.ids,
            "cwd": str(self.root.parent),
        }
        if self.governance:
            engine.update(via="cli", governance=True)
        return engine

    def call(
        self, tool: str, arguments: Mapping[str, Any], *, dry_run: bool = False
    ) -> dict[str, Any]:
        """The tool's full result through the write runner (`write_calls`)."""
        return SHELLS[tool](self.bank, dict(arguments), dry_run=dry_run, **self.engine())

    def refusal(self, tool: str, arguments: Mapping[str, Any]) -> tuple[str, str]:
        """`(reason, message)` of a call that must be refused (dry run and real run alike)."""
        reasons = []
        for dry_run in (True, False):
            try:
                self.call(tool, arguments, dry_run=dry_run)
            except RefusalError as exc:
                reasons.append((exc.refusal.rule, exc.refusal.message))
            else:
                raise AssertionError(f"{tool} {arguments} was not refused")
        assert reasons[0] == reasons[1]
        return reasons[0]

    def planned(
        self, gate_and_plan: GateAndPlan, tool: str, arguments: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The dry-run plan (content as text), diff and result, normalised for a snapshot."""
        outcome = write_calls.outcome(tool, self.bank, dict(arguments), **self.engine())
        data = {
            "plan": plan_data(outcome.plan),
            "diff": outcome.diff,
            "result": outcome.result,
            "warnings": list(outcome.warnings),
        }
        normalised: dict[str, Any] = normalise(data, self.root)
        return normalised

    def text(self, path: str) -> str:
        return (self.root / path).read_text(encoding="utf-8")

    def journal_count(self) -> int:
        journal = self.root / ".mbank" / "journal.jsonl"
        if not journal.exists():
            return 0
        return sum(1 for line in journal.read_text(encoding="utf-8").splitlines() if line.strip())


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_diff(files: Mapping[str, str | None], diff: str) -> dict[str, str | None]:
    """Apply a dry-run diff (spec 03 §1.6) to `{path: text or None}`; a standard patch, strictly.

    Texts use `\\n`; a hunk whose context does not match raises. Returns the new mapping.
    """
    result = dict(files)
    lines = diff.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.startswith("--- "):
            index += 1
            continue
        old_name = line[4:]
        new_name = lines[index + 1][4:]
        path = (new_name if new_name != "/dev/null" else old_name)[2:]
        old_text = result.get(path) if old_name != "/dev/null" else ""
        assert old_text is not None, f"no pre-image for {path}"
        old_lines = old_text.split("\n")
        old_final_newline = old_text.endswith("\n")
        if old_final_newline or not old_text:
            old_lines.pop()
        new_lines: list[str] = []
        cursor = 0
        touched_end = False
        new_without_newline = False
        index += 2
        while index < len(lines) and lines[index].startswith("@@"):
            match = _HUNK.match(lines[index])
            assert match is not None
            start = int(match.group(1))
            old_left = int(match.group(2) or "1")
            new_left = int(match.group(4) or "1")
            begin = start - 1 if old_left else start
            new_lines.extend(old_lines[cursor:begin])
            cursor = begin
            index += 1
            while old_left or new_left or (index < len(lines) and lines[index][:1] == "\\"):
                body = lines[index]
                if body.startswith("\\"):
                    if lines[index - 1][:1] in ("+", " "):
                        new_without_newline = True
                    index += 1
                    continue
                kind, text = body[0], body[1:]
                if kind in (" ", "-"):
                    assert old_lines[cursor] == text, f"context mismatch in {path}: {text!r}"
                    cursor += 1
                    old_left -= 1
                if kind in (" ", "+"):
                    new_lines.append(text)
                    new_left -= 1
                index += 1
            touched_end = cursor == len(old_lines)
        new_lines.extend(old_lines[cursor:])
        if new_name == "/dev/null":
            result[path] = None
        else:
            final = not new_without_newline if touched_end else old_final_newline
            result[path] = "\n".join(new_lines) + ("\n" if final and new_lines else "")
    return result


def run_cli(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    """Run `mbank <argv>` in process: exit code, stdout, stderr."""
    from mbank.cli import main

    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err
