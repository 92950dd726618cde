"""Plans as values: building file operations, applying a plan virtually, rendering its diff.

Pure functions (spec 03 §1.4–§1.7). Nothing here touches the disk: a plan applied to a
snapshot gives the post-snapshot the post-check validates, and the same plan rendered as a
unified diff is what a dry run returns. The encoding helpers are the ones every write tool
uses so that a CRLF file stays CRLF and a kept BOM stays kept (§1.7).
"""

from __future__ import annotations

import base64
import difflib
from collections.abc import Mapping
from typing import Any

import msgspec

from mbank.model import AnyFileOp, CreateFile, DeleteFile, Doc, Plan, ReplaceFile

# Re-exported: the reducers hash their pre-images with the one helper, from where they plan.
from mbank.model import sha256_hex as sha256_hex
from mbank.parse import parse_document
from mbank.paths import SKIPPED_DIRECTORIES
from mbank.projection import Snapshot, build_snapshot

# A virtual post-snapshot is never the bank's own state: it carries this generation so that a
# cache keyed by generation can tell it apart from every snapshot `Bank.refresh()` returns.
VIRTUAL_GENERATION = -1

NO_NEWLINE_MARKER = "\\ No newline at end of file\n"
NON_TEXT = b"\x00"


# --------------------------------------------------------------------------------------------
# Encoding and line endings (spec 03 §1.7)
# --------------------------------------------------------------------------------------------


def as_lf(text: str) -> str:
    """The text a write works on: every `\\r\\n` read as `\\n` (§1.7)."""
    return text.replace("\r\n", "\n")


def uses_crlf(text: str) -> bool:
    """True when the text's first line ends with `\\r\\n`: the file is written back as CRLF."""
    end = text.find("\n")
    return end > 0 and text[end - 1] == "\r"


def encode_text(text: str, *, like: str | None = None) -> bytes:
    """The bytes to write for `text`: UTF-8, no BOM added, line endings per §1.7.

    `like` is the pre-image's text (None for a new file). When its first line ends with
    `\\r\\n`, every line of the new text ends with `\\r\\n` (mixed endings come out uniform);
    otherwise, and for new files, with `\\n`. A BOM at the start of `text` (a kept head) is
    written as it is.
    """
    body = as_lf(text)
    if like is not None and uses_crlf(like):
        body = body.replace("\n", "\r\n")
    return body.encode("utf-8")


def is_text(content: bytes) -> bool:
    """True when `content` is UTF-8 without NUL bytes, the same test the parser applies."""
    if b"\x00" in content:
        return False
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# --------------------------------------------------------------------------------------------
# Building ops
# --------------------------------------------------------------------------------------------


def create_bytes(path: str, content: bytes) -> CreateFile:
    """A create op for exact bytes."""
    return CreateFile(path=path, content=content, after=sha256_hex(content))


def replace_bytes(path: str, content: bytes, before: str) -> ReplaceFile:
    """A replace op for exact bytes over a pre-image whose sha256 is `before`."""
    return ReplaceFile(path=path, content=content, before=before, after=sha256_hex(content))


def delete_bytes(path: str, before: str) -> DeleteFile:
    """A delete op over a pre-image whose sha256 is `before`."""
    return DeleteFile(path=path, before=before)


def create_document(path: str, text: str) -> CreateFile:
    """A create op for a new document's text (UTF-8, `\\n` line endings)."""
    return create_bytes(path, encode_text(text))


def replace_document(snapshot: Snapshot, path: str, text: str) -> ReplaceFile:
    """A replace op for a document of the snapshot, keeping its line-ending style (§1.7)."""
    doc = snapshot.docs[path]
    return replace_bytes(path, encode_text(text, like=snapshot.raw[path]), doc.sha256)


def delete_document(snapshot: Snapshot, path: str) -> DeleteFile:
    """A delete op for a document of the snapshot."""
    return delete_bytes(path, snapshot.docs[path].sha256)


def document_text(snapshot: Snapshot, path: str) -> str:
    """A document's text as write tools work on it (`\\r\\n` read as `\\n`)."""
    return as_lf(snapshot.raw[path])


def replace_if_changed(
    snapshot: Snapshot, path: str, text: str
) -> tuple[tuple[ReplaceFile, ...], int, int]:
    """The op replacing a document's text with `text` (none when it is the same text: a
    no-op, §1.8), and the file's size in bytes before and after."""
    before = len(snapshot.raw[path].encode("utf-8"))
    if text == document_text(snapshot, path):
        return (), before, before
    op = replace_document(snapshot, path, text)
    assert op.content is not None
    return (op,), before, len(op.content)


# --------------------------------------------------------------------------------------------
# The virtual apply (spec 03 §1.5)
# --------------------------------------------------------------------------------------------


def is_indexed_path(path: str) -> bool:
    """True when the walk would index a file at this bank path (spec 01 §1.2)."""
    if not path.endswith(".md"):
        return False
    segments = path.split("/")
    if any(not segment or segment.startswith(".") for segment in segments):
        return False
    return not any(segment in SKIPPED_DIRECTORIES for segment in segments[:-1])


class _Entry(msgspec.Struct, frozen=True):
    doc: Doc
    text: str


def apply_virtually(snapshot: Snapshot, plan: Plan) -> Snapshot:
    """The snapshot as it would be after `plan`: touched files re-parsed, maps rebuilt.

    No disk is read. Ops on paths the walk would not index (not `.md`, hidden, skipped
    directories) change no document. The result's generation is `VIRTUAL_GENERATION`.
    """
    entries: dict[str, _Entry] = {
        path: _Entry(doc, snapshot.raw.get(path, "")) for path, doc in snapshot.docs.items()
    }
    for op in plan.ops:
        if not is_indexed_path(op.path):
            continue
        if isinstance(op, DeleteFile):
            entries.pop(op.path, None)
            continue
        assert op.content is not None
        parsed = parse_document(op.path, op.content, 0, len(op.content))
        entries[op.path] = _Entry(parsed.doc, parsed.text)
    ordered = dict(sorted(entries.items()))
    return build_snapshot(snapshot.root, snapshot.real_root, ordered, VIRTUAL_GENERATION)


# --------------------------------------------------------------------------------------------
# The diff (spec 03 §1.6)
# --------------------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    # Split on "\n" only (not str.splitlines, which also breaks at \v, \f, \x1c-\x1e, \x85,
    # U+2028/2029 and lone \r): the diff must apply with a standard patch tool, and patch
    # knows only "\n" as a line end.
    parts = as_lf(text).split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _text_diff(path: str, old: str | None, new: str | None) -> str:
    from_file = "/dev/null" if old is None else f"a/{path}"
    to_file = "/dev/null" if new is None else f"b/{path}"
    chunks: list[str] = []
    diff = difflib.unified_diff(
        _lines(old or ""), _lines(new or ""), fromfile=from_file, tofile=to_file, n=3
    )
    for line in diff:
        if line.endswith("\n"):
            chunks.append(line)
        else:
            chunks.append(line + "\n" + NO_NEWLINE_MARKER)
    return "".join(chunks)


def op_diff(op: AnyFileOp, pre_image: bytes | None) -> str:
    """The unified diff of one op; `pre_image` is the current bytes (None for a create)."""
    new = op.content
    if isinstance(op, CreateFile):
        assert new is not None
        if not is_text(new):
            return f"Binary file {op.path} created\n"
        return _text_diff(op.path, None, new.decode("utf-8"))
    if pre_image is None:
        raise ValueError(f"no pre-image for {op.kind} {op.path}")
    if isinstance(op, DeleteFile):
        if not is_text(pre_image):
            return f"Binary file {op.path} deleted\n"
        return _text_diff(op.path, pre_image.decode("utf-8"), None)
    assert new is not None
    if not is_text(pre_image) or not is_text(new):
        return f"Binary file {op.path} changed\n"
    return _text_diff(op.path, pre_image.decode("utf-8"), new.decode("utf-8"))


def snapshot_pre_image(snapshot: Snapshot, path: str) -> bytes | None:
    """A document's bytes as the snapshot read them; None when not a (text) document.

    A non-text document keeps no text in the snapshot; its pre-image must be supplied by the
    shell (read when the intent is built), like any non-document file a plan replaces.
    """
    doc = snapshot.docs.get(path)
    if doc is None or not doc.text_ok:
        return None
    return snapshot.raw[path].encode("utf-8")


def plan_diff(snapshot: Snapshot, plan: Plan, pre_images: Mapping[str, bytes] | None = None) -> str:
    """The dry-run diff of a plan: every op in plan order, concatenated (§1.6).

    Pre-images come from `pre_images` when given there (non-document files), else from the
    snapshot; a non-text document needs none. An empty plan gives `""`.
    """
    extra = pre_images or {}
    chunks: list[str] = []
    for op in plan.ops:
        pre: bytes | None = None
        if not isinstance(op, CreateFile):
            pre = extra.get(op.path)
            doc = snapshot.docs.get(op.path)
            if pre is None and doc is not None and not doc.text_ok:
                # A non-text document renders as one "Binary file" line; its bytes are moot.
                pre = NON_TEXT
            if pre is None:
                pre = snapshot_pre_image(snapshot, op.path)
            if pre is None:
                raise ValueError(f"no pre-image for {op.kind} {op.path}")
        chunks.append(op_diff(op, pre))
    return "".join(chunks)


# --------------------------------------------------------------------------------------------
# Plain data (for snapshots and debugging)
# --------------------------------------------------------------------------------------------


def plan_data(plan: Plan) -> dict[str, Any]:
    """The plan as plain data with readable content: text, or `{"base64": …}` for bytes."""
    ops: list[dict[str, Any]] = []
    for op in plan.ops:
        content: Any = None
        if op.content is not None:
            if is_text(op.content):
                content = op.content.decode("utf-8")
            else:
                content = {"base64": base64.b64encode(op.content).decode("ascii")}
        ops.append(
            {
                "kind": op.kind,
                "path": op.path,
                "content": content,
                "before": op.before,
                "after": op.after,
            }
        )
    return {"tool": plan.tool, "ops": ops}
