"""Test-only planners and a stand-in validation for the write-engine tests.

The write tools (create, edit, …) come later; the engine is tested with these small planners,
which build the kind of plans the tools will: a document plus a line in its index, a document
in a new section (document, section index, root index), a promotion-like move. The stand-in
validation implements four rules of spec 02 §7 in validation order, enough for the
post-check to have real errors and warnings to compare. Also importable from the subprocess
scripts of the crash and concurrency tests (they put this directory on `PYTHONPATH`).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mbank.model import AnyFileOp, Finding, Intent, Plan, PlanOutcome
from mbank.plan import (
    create_document,
    delete_document,
    document_text,
    replace_document,
)
from mbank.projection import Snapshot

FIXED_NOW = datetime(2026, 9, 14, 12, 5, 1, tzinfo=UTC)

RULE_ORDER = ("invalid-frontmatter", "broken-derived-from", "unregistered-doc", "dangling-index")


def stand_in_findings(snapshot: Snapshot) -> tuple[Finding, ...]:
    """Four rules of spec 02 §7, sorted by rule, path, line (a stand-in for mbank.validate)."""
    found: list[Finding] = []
    for path, doc in snapshot.docs.items():
        if doc.parse_error is not None:
            found.append(
                Finding("invalid-frontmatter", "error", path, doc.parse_error, doc.parse_error_line)
            )
        for edge in doc.derived_from:
            if (
                not edge.external
                and edge.resolved is not None
                and edge.resolved not in snapshot.docs
            ):
                found.append(
                    Finding(
                        "broken-derived-from",
                        "error",
                        path,
                        f"derived_from points at a file that does not exist: {edge.raw}",
                    )
                )
        if (
            not doc.registered_in
            and doc.layer != "inbox"
            and doc.doc_function != "index"
            and not path.endswith("README.md")
        ):
            found.append(
                Finding(
                    "unregistered-doc",
                    "warning",
                    path,
                    "No index links to this document, so navigation cannot reach it.",
                )
            )
    for link in snapshot.index_links:
        if not link.external and link.to is not None and link.to not in snapshot.docs:
            found.append(
                Finding(
                    "dangling-index",
                    "error",
                    link.source,
                    f"Index links to a file that does not exist: {link.raw}",
                    link.line,
                )
            )
    found.sort(key=lambda f: (RULE_ORDER.index(f.rule), f.path, f.line or 0))
    return tuple(found)


def stand_in_findings_for(snapshot: Snapshot, paths: Sequence[str]) -> tuple[Finding, ...]:
    """The partial form: equal to the full validation, as the engine requires."""
    return stand_in_findings(snapshot)


def no_findings(snapshot: Snapshot, paths: Sequence[str]) -> tuple[Finding, ...]:
    """A validation that never finds anything (for tests about the journal alone)."""
    return ()


class Ids:
    """A deterministic journal-id factory: `20260914T120501Z-000001`, `…-000002`, …"""

    def __init__(self, prefix: str = "") -> None:
        self.count = 0
        self.prefix = prefix

    def __call__(self, moment: datetime) -> str:
        self.count += 1
        return f"{moment:%Y%m%dT%H%M%SZ}-{self.prefix}{self.count:0{6 - len(self.prefix)}x}"


class Clock:
    """A deterministic clock: FIXED_NOW, one second later at every call."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> datetime:
        self.calls += 1
        return FIXED_NOW + timedelta(seconds=self.calls - 1)


def document(title: str, purpose: str, derived: Sequence[str] = (), status: str = "draft") -> str:
    """A small document's text with frontmatter."""
    lines = ["---", f"title: {title}", "doc_kind: domain", "doc_function: canonical"]
    lines.append(f"purpose: {purpose}")
    if derived:
        lines.append("derived_from:")
        lines.extend(f"  - {entry}" for entry in derived)
    lines.extend([f"status: {status}", "---", f"# {title}", "", purpose, ""])
    return "\n".join(lines)


def register(index_text: str, index_path: str, doc_path: str, title: str, purpose: str) -> str:
    """The index text with one bullet appended for the document (a simple register_line)."""
    rel = posixpath.relpath(doc_path, posixpath.dirname(index_path) or ".")
    return index_text.rstrip("\n") + f"\n- [{title}]({rel}) — {purpose}\n"


def plan_create_registered(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
    """Create `arguments.path` and append its line to `arguments.index` (2 ops)."""
    args = intent.args
    path, index = args["path"], args["index"]
    if path in snapshot.docs:
        from mbank.paths import refuse

        raise refuse("exists", f"Refusing to overwrite an existing document: {path}")
    title = args.get("title", "New Document")
    purpose = args.get("purpose", "A document created by a test.")
    body = intent.files["bodyFile"].text if "bodyFile" in intent.files else None
    text = document(title, purpose, args.get("derived", ()))
    if body:
        text += "\n" + body
    ops: list[AnyFileOp] = [
        create_document(path, text),
        replace_document(
            snapshot,
            index,
            register(document_text(snapshot, index), index, path, title, purpose),
        ),
    ]
    return PlanOutcome(
        plan=Plan(intent.tool, tuple(ops)),
        warnings=tuple(args.get("warnings", ())),
        result={"path": path, "created": not intent.dry_run},
    )


def plan_new_section(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
    """A document in a new section: the document, the section index, the root index (3 ops)."""
    args = intent.args
    path = args["path"]
    section = path.split("/", 1)[0]
    section_index = f"{section}/README.md"
    title = args.get("title", "First Of Its Kind")
    purpose = "The first document of a new section."
    index_text = (
        "---\n"
        f"title: {section.title()} Index\n"
        f"doc_kind: {section}\n"
        "doc_function: index\n"
        f"purpose: Lists the {section} documents.\n"
        "status: active\n"
        "---\n"
        f"# {section.title()} Index\n\n"
        "## Registry\n"
    )
    index_text = register(index_text, section_index, path, title, purpose)
    root_text = register(
        document_text(snapshot, "README.md"),
        "README.md",
        section_index,
        section_index,
        f"The {section} section.",
    )
    ops: list[AnyFileOp] = [
        create_document(path, document(title, purpose)),
        create_document(section_index, index_text),
        replace_document(snapshot, "README.md", root_text),
    ]
    return PlanOutcome(plan=Plan(intent.tool, tuple(ops)), result={"path": path})


def plan_move(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
    """A promotion-like move: create the destination, register it, delete the source."""
    args = intent.args
    source, target, index = args["from"], args["to"], args["index"]
    doc = snapshot.docs[source]
    ops: list[AnyFileOp] = [
        create_document(target, document_text(snapshot, source)),
        replace_document(
            snapshot,
            index,
            register(document_text(snapshot, index), index, target, doc.title, doc.purpose),
        ),
        delete_document(snapshot, source),
    ]
    from mbank.model import JournalNotes

    return PlanOutcome(
        plan=Plan(intent.tool, tuple(ops)),
        result={"from": source, "to": target},
        notes=JournalNotes(from_=source, to=target),
    )


def plan_nothing(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
    """A no-op write (an empty plan): what `bank_set_status` to the current status plans."""
    return PlanOutcome(plan=Plan(intent.tool, ()), result={"changed": False})


def plan_discard(snapshot: Snapshot, intent: Intent) -> PlanOutcome:
    """Delete `arguments.path` with a reason, like bank_discard."""
    from mbank.model import JournalNotes

    path = intent.args["path"]
    doc = snapshot.docs[path]
    return PlanOutcome(
        plan=Plan(intent.tool, (delete_document(snapshot, path),)),
        notes=JournalNotes(reason=intent.args["reason"], title=doc.title, purpose=doc.purpose),
    )


def small_bank(root: Path) -> Path:
    """A tiny bank: a root index, a `domain/` section with an index and one document."""
    (root / "domain").mkdir(parents=True)
    (root / "README.md").write_text(
        "---\ntitle: Root\ndoc_kind: governance\ndoc_function: index\n"
        "purpose: The entry point.\nstatus: active\n---\n# Root\n\n## Sections\n\n"
        "- [domain/README.md](domain/README.md) — Domain documents.\n",
        encoding="utf-8",
    )
    (root / "domain" / "README.md").write_text(
        "---\ntitle: Domain Index\ndoc_kind: domain\ndoc_function: index\n"
        "purpose: Lists the domain documents.\nstatus: active\n---\n# Domain Index\n\n"
        "## Registry\n\n- [Rules](rules.md) — The rules.\n",
        encoding="utf-8",
    )
    (root / "domain" / "rules.md").write_text(
        document("Rules", "The rules.", status="active"), encoding="utf-8"
    )
    return root


def tree_bytes(root: Path, *, include_journal: bool = False) -> dict[str, Any]:
    """Every path under root (directories too) with bytes and permission bits."""
    found: dict[str, Any] = {}
    for directory, dirnames, filenames in os.walk(root):
        dirnames.sort()
        relative_dir = Path(directory).relative_to(root).as_posix()
        if not include_journal and (relative_dir == ".mbank" or relative_dir.startswith(".mbank/")):
            continue
        for name in sorted(dirnames):
            relative = Path(directory, name).relative_to(root).as_posix()
            if not include_journal and relative == ".mbank":
                continue
            found[relative + "/"] = oct(os.lstat(Path(directory, name)).st_mode & 0o7777)
        for name in sorted(filenames):
            path = Path(directory, name)
            found[path.relative_to(root).as_posix()] = (
                path.read_bytes(),
                oct(os.lstat(path).st_mode & 0o7777),
            )
    return found
