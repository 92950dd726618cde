"""Virtual single-plan changes to a snapshot, for the partial-validation agreement tests.

`apply_virtually` builds the snapshot after a change the way the write post-check does:
untouched documents keep their records and texts, touched ones are re-parsed from their new
text (`mbank.parse.parse_text`) or dropped, and `mbank.snapshot.build_snapshot` rebuilds
every derived map. `plans_for` yields, for one document, the kinds of change a write can
make: delete it, edit its body, change its frontmatter in the ways the rules care about,
create a document next to it, close a loop through it, rename it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import Any

import msgspec
import yaml

from mbank.model import Doc, Finding
from mbank.parse import parse_text, split_frontmatter
from mbank.snapshot import Snapshot, build_snapshot
from mbank.validate import findings_uncached

Change = dict[str, str | None]  # bank path -> new text, or None to delete


class Entry(msgspec.Struct, frozen=True):
    """What `build_snapshot` reads of a cached document: its record and its text."""

    doc: Doc
    text: str


def apply_virtually(snapshot: Snapshot, change: Change) -> Snapshot:
    """The snapshot after `change`, built like the write pipeline's post-check builds it."""
    entries = {path: Entry(doc, snapshot.raw[path]) for path, doc in snapshot.docs.items()}
    for path, text in change.items():
        if text is None:
            entries.pop(path, None)
        else:
            entries[path] = Entry(parse_text(path, text), text)
    return build_snapshot(
        snapshot.root, snapshot.real_root, dict(sorted(entries.items())), snapshot.generation + 1
    )


def identity(item: Finding) -> tuple[str, str, str]:
    """A finding's identity for the post-check: rule, path, message (03 §1.5)."""
    return (item.rule, item.path, item.message)


def new_findings(before: tuple[Finding, ...], after: tuple[Finding, ...]) -> list[Finding]:
    """Findings of `after` whose identity is not among `before`'s findings of the same severity."""
    known = {(item.severity, *identity(item)) for item in before}
    return [item for item in after if (item.severity, *identity(item)) not in known]


def with_frontmatter(text: str, update: dict[str, Any], drop: tuple[str, ...] = ()) -> str:
    """`text` with frontmatter keys set or removed (the YAML re-dumped; body kept)."""
    split = split_frontmatter(text)
    data: dict[str, Any] = {}
    if split.yaml_text is not None:
        try:
            loaded = yaml.safe_load(split.yaml_text)
        except yaml.YAMLError:
            loaded = None
        if isinstance(loaded, dict):
            data = {str(key): value for key, value in loaded.items()}
    for key in drop:
        data.pop(key, None)
    data.update(update)
    head = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    return f"---\n{head}---\n{split.body}"


def _relative(source: str, target: str) -> str:
    return posixpath.relpath(target, posixpath.dirname(source) or ".")


def plans_for(snapshot: Snapshot, path: str, *, thorough: bool = True) -> Iterator[Change]:
    """The changes a write could make around `path`, one plan each."""
    docs = snapshot.docs
    doc = docs[path]
    text = snapshot.raw[path]
    yield {path: None}
    if not doc.text_ok:
        yield {path: "---\ntitle: Re-saved\n---\n# Re-saved\n"}
        return
    yield {path: text + "\nOne more line of prose.\n"}
    yield {path: text + "\nThe retry budget is defined in missing-budget.md, nowhere yet.\n"}
    yield {path: with_frontmatter(text, {"status": "active"}, drop=("derived_from",))}
    if not thorough:
        return
    yield {path: with_frontmatter(text, {"doc_function": "template"})}
    yield {path: with_frontmatter(text, {"doc_function": "index", "doc_kind": "invented"})}
    keys = list(snapshot.owners)
    if keys:
        yield {path: with_frontmatter(text, {"canonical_for": [keys[0]]})}
    if doc.canonical_for:
        yield {path: with_frontmatter(text, {"must_not_define": [doc.canonical_for[0]]})}
    yield {path: "\n".join(line for line in text.split("\n") if "](" not in line)}
    yield {path: "---\ntitle: [unclosed\n---\n# Broken\n"}
    deriving = snapshot.incoming.get(path, ())
    if deriving:
        loop_back = _relative(path, deriving[0])
        yield {path: with_frontmatter(text, {"derived_from": [loop_back]})}
    directory = posixpath.dirname(path)
    sibling = posixpath.join(directory, "zz-new-note.md")
    yield {
        sibling: with_frontmatter(
            "# New note\n\nA new note.\n",
            {
                "title": "New note",
                "status": "active",
                "derived_from": [_relative(sibling, path)],
                "canonical_for": list(doc.canonical_for[:1]),
            },
        )
    }
    name = posixpath.basename(path)
    elsewhere = "zz-moved/" + name
    moved = text if "](" not in text else "\n".join(text.split("\n")[:3]) + "\n"
    yield {path: None, elsewhere: moved}
    copy = posixpath.join("zz-copies", posixpath.dirname(path), name)
    yield {copy: text}


def creations_for(snapshot: Snapshot) -> Iterator[Change]:
    """Creates that answer the bank's dangling references: broken edge targets, dangling index
    entries, the paths unresolved rule claims tried, and their bare file names elsewhere."""
    docs = snapshot.docs
    wanted: set[str] = set()
    for doc in docs.values():
        for edge in doc.derived_from:
            if edge.resolved is not None and edge.resolved not in docs:
                wanted.add(edge.resolved)
        for link in doc.links:
            if link.to is not None and link.to not in docs:
                wanted.add(link.to)
    for item in findings_uncached(snapshot):
        tried = re.search(r"\(tried (.+?)\)\.", item.message)
        if item.rule == "unresolved-rule-reference" and tried:
            wanted.add(tried.group(1))
    for path in sorted(wanted):
        yield {path: "---\ntitle: Filled in\nstatus: draft\n---\n# Filled in\n"}
        yield {"zz-elsewhere/" + posixpath.basename(path): "# Same name elsewhere\n"}
