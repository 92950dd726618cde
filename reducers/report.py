"""What every write's result and its human report share (spec 03 §1.3, 04 §9.3).

Pure. A write tool's result carries `dryRun`, and `diff` on a dry run or `journalId` after a
real write (`mbank.writes.WriteOutcome.common_fields`); its human report ends with the diff or
the journal line. The tool-specific parts (key order, headline, detail lines) stay with each
reducer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mbank.gates.postcheck import delta_text


def with_common(out: dict[str, Any], common: Mapping[str, Any]) -> dict[str, Any]:
    """`out` with `diff?`, `journalId?` and `validationDelta?` of the common fields
    appended (`dryRun` is placed by the tool itself, at its place in the spec's key order)."""
    for key in ("diff", "journalId", "validationDelta"):
        if key in common:
            out[key] = common[key]
    return out


def unchanged(result: Mapping[str, Any], done: str) -> bool:
    """Whether a write changed nothing: an empty dry-run diff, or a real run whose done-flag
    (`done`) is false."""
    return bool(result.get("diff") == "") if result["dryRun"] else not result[done]


def headline(result: Mapping[str, Any], done: str, would: str, did: str, subject: str) -> str:
    """`UNCHANGED <subject>`, `<would> <subject>` on a dry run, else `<did> <subject>`."""
    if unchanged(result, done):
        return f"UNCHANGED {subject}"
    return f"{would if result['dryRun'] else did} {subject}"


def closing(lines: list[str], result: Mapping[str, Any], *, empty_diff: bool = True) -> str:
    """The report's text: `lines`, then `--- diff ---` and the diff on a dry run, else the
    `journal: <journalId>` line after a write that has one.

    With `empty_diff=False`, a dry run whose diff is empty (a no-op) prints no diff section.
    """
    if result["dryRun"] and (result.get("diff") or empty_diff):
        text = "\n".join([*lines, "--- diff ---"]) + "\n" + str(result.get("diff", ""))
        return text if text.endswith("\n") else text + "\n"
    if result.get("journalId"):
        lines = [*lines, f"journal: {result['journalId']}"]
    return "\n".join(lines) + "\n" + delta_lines(result)


def delta_lines(result: Mapping[str, Any]) -> str:
    """A real governance write's validation delta, for a person (a dry run shows it in the
    diff); "" for any other write."""
    delta = result.get("validationDelta")
    if delta is None or result["dryRun"]:
        return ""
    return delta_text(delta)


def finished(
    done: str, *, warnings_always: bool = False
) -> Callable[[Mapping[str, Any], bool, Mapping[str, Any], tuple[str, ...]], dict[str, Any]]:
    """The result shape of a write to one existing document: its fields in spec order, the
    done-flag `done`, the warnings, then the common fields (spec 03 §1.3).

    `warnings` stays where the reducer placed it when the tool always has it
    (`warnings_always`); otherwise it is appended only when non-empty.
    """

    def shape(
        fields: Mapping[str, Any],
        applied: bool,
        common: Mapping[str, Any],
        warnings: tuple[str, ...],
    ) -> dict[str, Any]:
        result = dict(fields)
        result[done] = applied
        if warnings_always or warnings:
            result["warnings"] = list(warnings)
        result.update(common)
        return result

    return shape
