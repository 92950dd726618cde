"""Gates of a list field written by `bank_set_field` (issue 14): the same rules as create.

Pure. A list field (`derived_from`, `canonical_for`, `must_not_define`, `anchors`, or any key
already holding a list) is set to a whole list of one-line strings. Its entries pass the
gates `bank_create` runs for the same fields: every `derived_from` entry resolves from the
document (§2.6 step 1), no new entry closes a `derived_from` cycle, no `canonical_for` key is
owned by another document (§2.6 step 2), and every anchor stays inside the project. The
first offending entry is named; nothing is written.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from mbank.gates.governance import check_derived_from, check_unowned
from mbank.model import Doc
from mbank.parse import resolve_from
from mbank.paths import refuse
from mbank.projection import Snapshot

GOVERNED_LISTS = ("derived_from", "canonical_for", "must_not_define", "anchors")
KEY_LISTS = ("canonical_for", "must_not_define")
CLI_EXAMPLE = """'["a.md", "b.md"]'"""


def is_list_write(field: str, value: str | list[str], current: Any) -> bool:
    """Whether this write sets a list: a governed list field, a list given, or a key that
    already holds a list."""
    return field in GOVERNED_LISTS or isinstance(value, list) or isinstance(current, list)


def list_entries(field: str, value: str | list[str]) -> list[str]:
    """The entries to write: a list as given, or a JSON array of strings (the CLI's VALUE).

    Keys (`canonical_for`, `must_not_define`) are stripped as create strips them; paths are
    written as given. A blank entry or one with a line break is refused (`list-entry`)."""
    if isinstance(value, str):
        try:
            loaded = json.loads(value)
        except json.JSONDecodeError:
            loaded = None
        if not isinstance(loaded, list) or not all(isinstance(item, str) for item in loaded):
            raise refuse(
                "value-not-list",
                f"{field} is a list: pass value as a list of strings (on the command line, a "
                f"JSON array such as {CLI_EXAMPLE}).",
            )
        entries: list[str] = loaded
    else:
        entries = list(value)
    for entry in entries:
        if not entry.strip() or "\n" in entry or "\r" in entry:
            raise refuse(
                "list-entry",
                f"{field} entry {json.dumps(entry, ensure_ascii=False)} is blank or spans "
                "lines; each entry is one non-blank line.",
            )
    if field in KEY_LISTS:
        return [entry.strip() for entry in entries]
    return entries


def refuse_scalar_holder(doc: Doc, field: str, current: Any) -> None:
    """A list given for a key that holds one value or a mapping (`value-holds-scalar`)."""
    if current is not None and not isinstance(current, list):
        raise refuse(
            "value-holds-scalar",
            f"{field} in {doc.path} holds one value, not a list. Pass value as a string to set it.",
        )


def _reaches(docs: Mapping[str, Doc], start: str, goal: str, own: str) -> list[str] | None:
    """A `derived_from` chain from `start` to `goal` (without `own`'s current edges), or None."""
    trail: dict[str, str | None] = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        if node == goal:
            chain = [node]
            while (parent := trail[chain[-1]]) is not None:
                chain.append(parent)
            return chain[::-1]
        doc = docs.get(node)
        if doc is None or node == own:
            continue
        for edge in doc.derived_from:
            if edge.resolved is not None and edge.resolved not in trail:
                trail[edge.resolved] = node
                queue.append(edge.resolved)
    return None


def check_no_new_cycle(snapshot: Snapshot, doc: Doc, entries: Sequence[str]) -> None:
    """No entry the document does not already have closes a loop back to it
    (`derived-from-cycle`); a loop that is already there is not this write's doing."""
    existing = {edge.raw for edge in doc.derived_from}
    for entry in entries:
        if entry in existing:
            continue
        target = resolve_from(doc.path, entry).resolved
        if target is None:
            continue
        chain = _reaches(snapshot.docs, target, doc.path, doc.path)
        if chain is not None:
            loop = " -> ".join([doc.path, *chain])
            raise refuse(
                "derived-from-cycle",
                f'derived_from "{entry}" would close a cycle: {loop}. A document cannot derive '
                "from what derives from it.",
            )


def check_anchors(entries: Sequence[str]) -> None:
    """Every anchor is a repository-relative path that stays inside the project
    (`anchor-outside`)."""
    for entry in entries:
        text = entry.strip()
        normal = posixpath.normpath(text.replace("\\", "/"))
        drive = len(text) > 1 and text[1] == ":"
        if text.startswith(("/", "\\", "~")) or drive or normal.split("/")[0] == "..":
            raise refuse(
                "anchor-outside",
                f'anchors "{entry}" is outside the project: an anchor is a path relative to '
                "the repository, inside it.",
            )


def check_list_entries(
    snapshot: Snapshot, doc: Doc, field: str, entries: Sequence[str]
) -> tuple[str, ...]:
    """The gates of the field, in create's order for it: the warnings, or the first refusal."""
    warnings: tuple[str, ...] = ()
    if field == "derived_from":
        warnings = tuple(check_derived_from(snapshot, doc.path, entries))
        check_no_new_cycle(snapshot, doc, entries)
    elif field == "canonical_for":
        check_unowned(snapshot, doc.path, entries, None)
    elif field == "anchors":
        check_anchors(entries)
    return warnings
