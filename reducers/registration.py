"""Registering a document in an index, and a new section in the root index.

Pure text functions and small planners over the snapshot (spec 03 §4.7–§4.10), used by
`bank_create` and `bank_promote`; `bank_set_field`'s index propagation may reuse the link-line
helpers. Nothing here reads the disk: whether something already exists at a section index's
path is the shell's fact (`mbank.gates.paths.ON_DISK_FACT`).

- `register_line` adds one entry to an index in the shape of its last link line (table row,
  numbered item, bullet; backticked label when the model's is) right after that line, and
  removes the empty-registry placeholder.
- `register_section` adds a section's two-line entry after the root index's last section
  entry, and is idempotent.
- `pick_index` chooses the nearest index above a document; `plan_section_index` builds a
  known section's index the first time a document lands in it.

Choice where the spec is silent: a line break inside a title or purpose would split the new
entry over several lines (a table row would break), so in the registration line each run of
line breaks, with the spaces around it, is written as one space. The frontmatter keeps the
value as given.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping

import msgspec

from mbank.catalogue import (
    ROOT_INDEX,
    SECTION_PLACEHOLDER,
    SECTIONS_BY_DIR,
    KnownSection,
    section_for,
    section_index,
)
from mbank.gates.paths import PathOnDisk, path_fact
from mbank.parse import URL_SCHEME, parse_text, scan_body, split_frontmatter
from mbank.plan import document_text
from mbank.projection import Snapshot

README = "README.md"
GOVERNANCE = "dna/governance.md"
EM_DASH = " — "

_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+\.md(?:#[^)\s]*)?)\)")
_NUMBERED = re.compile(r"^\s*(\d+)\.\s")
_SECTION_ENTRY = re.compile(r"^- \[(`?)([a-z][a-z0-9-]*)/README\.md`?\]\(")
_BREAKS = re.compile(r"[ \t]*[\r\n]+[ \t]*")


def relative_link(index_path: str, doc_path: str) -> str:
    """The POSIX path of `doc_path` relative to the directory of `index_path`."""
    return posixpath.relpath(doc_path, posixpath.dirname(index_path) or ".")


def one_line(text: str) -> str:
    """`text` with each run of line breaks (and the spaces around it) written as one space."""
    return _BREAKS.sub(" ", text)


def remove_placeholder(text: str) -> str:
    """Drop every empty-registry placeholder line and the blank line after it (§4.9 step 2)."""
    lines = text.split("\n")
    kept: list[str] = []
    index = 0
    while index < len(lines):
        if lines[index].strip() == SECTION_PLACEHOLDER:
            index += 1
            if index < len(lines) - 1 and not lines[index].strip():
                index += 1
            continue
        kept.append(lines[index])
        index += 1
    return "\n".join(kept)


def model_line(text: str, index_path: str) -> int | None:
    """The 0-based line of the index's last link line outside fenced code (spec 01 §5.5)."""
    links = parse_text(index_path, text).links
    return links[-1].line - 1 if links else None


def _first_link_text(line: str) -> str:
    for match in _LINK.finditer(line):
        if not URL_SCHEME.match(match.group(2)):
            return match.group(1)
    return ""


def entry_like(model: str, title: str, rel: str, purpose: str) -> str:
    """A new index line for (`title`, `rel`, `purpose`) in the shape of `model` (§4.9 step 5)."""
    text = _first_link_text(model)
    label = (
        f"`{title}`" if len(text) >= 2 and text.startswith("`") and text.endswith("`") else title
    )
    link = f"[{label}]({rel})"
    stripped = model.strip()
    if stripped.startswith("|"):
        columns = len(model.split("|")) - 2
        cells = [f" {link} ", f" {purpose} "] + [" "] * max(0, columns - 2)
        return "|" + "|".join(cells[: max(1, columns)]) + "|"
    numbered = _NUMBERED.match(model)
    if numbered:
        return f"{int(numbered.group(1)) + 1}. {link}{EM_DASH}{purpose}"
    indent = model[: len(model) - len(model.lstrip())]
    bullet = stripped[0] if stripped[:1] in ("-", "*") else "-"
    return f"{indent}{bullet} {link}{EM_DASH}{purpose}"


def register_line(index_text: str, index_path: str, doc_path: str, title: str, purpose: str) -> str:
    """The index text with the document registered after its last link line (§4.9)."""
    rel = relative_link(index_path, doc_path)
    title, purpose = one_line(title), one_line(purpose)
    text = remove_placeholder(index_text)
    model = model_line(text, index_path)
    if model is None:
        return f"{text.rstrip()}\n\n- [{title}]({rel}){EM_DASH}{purpose}\n"
    lines = text.split("\n")
    lines.insert(model + 1, entry_like(lines[model], title, rel, purpose))
    result = "\n".join(lines)
    return result if result.endswith("\n") else result + "\n"


def _fenced_lines(text: str) -> set[int]:
    split = split_frontmatter(text)
    fenced: set[int] = set()
    for start, end in scan_body(split.body).fences:
        fenced.update(range(start + split.body_offset, end + split.body_offset))
    return fenced


def register_section(root_text: str, section: KnownSection) -> str:
    """The root index with the section's two-line entry after its last section entry (§4.10).

    Unchanged when the section is already linked (`(<dir>/README.md)` occurs anywhere) or when
    the index has no section entries to follow.
    """
    index_path = f"{section.dir}/{README}"
    if f"({index_path})" in root_text:
        return root_text
    lines = root_text.split("\n")
    fenced = _fenced_lines(root_text)
    last: int | None = None
    for number, line in enumerate(lines):
        entry = _SECTION_ENTRY.match(line)
        if entry and entry.group(2) in SECTIONS_BY_DIR and number not in fenced:
            last = number
    if last is None:
        return root_text
    backticked = _SECTION_ENTRY.match(lines[last])
    label = f"`{index_path}`" if backticked and backticked.group(1) else index_path
    position = last + 1
    while (
        position < len(lines)
        and lines[position].strip()
        and not _SECTION_ENTRY.match(lines[position])
    ):
        position += 1
    lines[position:position] = [f"- [{label}]({index_path})", f"  {section.route}"]
    return "\n".join(lines)


def pick_index(
    snapshot: Snapshot, target: str, created: frozenset[str] = frozenset()
) -> str | None:
    """The index a document at `target` is registered in (§4.8), or None.

    Candidates: `README.md` of the target's directory, then of each ancestor up to the root;
    the first that is a text document or is created by the same plan (`created`), and is not
    the target itself.
    """
    directory = posixpath.dirname(target)
    while True:
        candidate = f"{directory}/{README}" if directory else README
        if candidate != target:
            if candidate in created:
                return candidate
            doc = snapshot.docs.get(candidate)
            if doc is not None and doc.text_ok:
                return candidate
        if not directory:
            return None
        directory = posixpath.dirname(directory)


def section_derived_from(snapshot: Snapshot) -> str | None:
    """The single source of a section index built on first use (§4.7), relative to it."""
    if GOVERNANCE in snapshot.docs:
        return "../" + GOVERNANCE
    if snapshot.contract.roots:
        return "../" + snapshot.contract.roots[0]
    return None


class NewSection(msgspec.Struct, frozen=True):
    """A section index created on first use, and what it changes in the root index (§4.7).

    `root_text` is the root `README.md`'s new text, or None when it is left alone (not a text
    document, no section entries, or the section is already linked).
    """

    section: KnownSection
    path: str
    text: str
    root_text: str | None
    warning: str


def plan_section_index(
    snapshot: Snapshot, on_disk: Mapping[str, PathOnDisk], dry_run: bool, target: str
) -> NewSection | None:
    """The section index to create for a document at `target`, if its section has none."""
    section = section_for(target)
    if section is None:
        return None
    path = f"{section.dir}/{README}"
    if path == target or path in snapshot.docs or path_fact(on_disk, path).exists:
        return None
    text = section_index(section, (), derived_from=section_derived_from(snapshot))
    root_text: str | None = None
    root = snapshot.docs.get(ROOT_INDEX)
    if root is not None and root.text_ok:
        current = document_text(snapshot, ROOT_INDEX)
        updated = register_section(current, section)
        root_text = updated if updated != current else None
    if dry_run:
        warning = (
            f'Section "{path}" does not exist yet and would be created to register this document.'
        )
    else:
        warning = f'Section "{path}" did not exist yet and was created to register this document.'
    return NewSection(section, path, text, root_text, warning)
