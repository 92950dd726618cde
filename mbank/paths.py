"""Bank paths: normalising a path a caller gives, and the checks on paths a write will touch.

Pure functions (spec 01 §2). Facts about the disk (is there an inner directory named like the
root, where does a path really lead) are passed in by the shell; nothing here stats a file.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable

from mbank.model import Refusal, RefusalError

SKIPPED_DIRECTORIES = frozenset({"node_modules", "dist"})


def is_within(path: str, parent: str) -> bool:
    """Whether absolute `path` is `parent` or lies under it, by whole segments: `/a/bc` is not
    within `/a/b`. Both are compared as given (resolve symlinks first where that matters);
    POSIX separators, as everywhere in mbank (the journal's locks are `fcntl`)."""
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def refuse(rule: str, message: str) -> RefusalError:
    """A `RefusalError` carrying `Refusal(rule, message)`, ready to raise."""
    return RefusalError(Refusal(rule, message))


def _segment_too_long(segment: str) -> bool:
    return len(segment.encode("utf-8", "surrogatepass")) > 255


def normalise_caller_path(
    given: str,
    root: str,
    real_root: str,
    is_document: Callable[[str], bool],
    inner_root_dir_exists: Callable[[], bool],
) -> str:
    """Turn a path a caller gave into a bank path, or raise the spec's refusal (§2.2)."""
    text = given.strip()
    if not text:
        raise refuse("path-empty", "`path` is required.")
    if "\x00" in text:
        raise refuse("path-nul", "Path contains a NUL character.")
    if "\\" in text:
        raise refuse(
            "path-backslash", f'Path contains a backslash; bank paths use "/": {shown(given)}'
        )
    if text.startswith("/"):
        absolute = posixpath.normpath(text)
        if absolute.startswith("//"):
            absolute = "/" + absolute.lstrip("/")
        for base in (root, real_root):
            if absolute == base:
                text = ""
                break
            prefix = base if base.endswith("/") else base + "/"
            if absolute.startswith(prefix):
                text = absolute[len(prefix) :]
                break
        else:
            raise refuse("path-outside", f"Path must stay inside the bank: {shown(given)}")
    while text.startswith("./"):
        text = text[2:]
    segments: list[str] = []
    for segment in text.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not segments:
                raise refuse("path-outside", f"Path must stay inside the bank: {shown(given)}")
            segments.pop()
            continue
        segments.append(segment)
    for segment in segments:
        if _segment_too_long(segment):
            raise refuse(
                "path-segment-too-long",
                f"Path has a segment longer than 255 bytes: {shown(segment[:40])}…",
            )
    path = "/".join(segments)
    root_name = posixpath.basename(root.rstrip("/"))
    if (
        root_name
        and path.startswith(root_name + "/")
        and not is_document(path)
        and not inner_root_dir_exists()
    ):
        path = path[len(root_name) + 1 :]
    return path


def inner_root_dir_guess(root: str, paths: Iterable[str]) -> bool:
    """Whether `<root>/<root name>/` is taken to be a directory when the disk is not asked:
    some bank path lies in it (the root-name prefix rule, §2.2 step 8)."""
    prefix = posixpath.basename(root.rstrip("/")) + "/"
    return any(path.startswith(prefix) for path in paths)


def not_a_document(given: str, note: str | None = None) -> RefusalError:
    """`Not a document of this bank: <path as given>`, plus the journal's note when there is
    one (spec 02 §5, 03 §2.2, §14.9)."""
    message = f"Not a document of this bank: {shown(given)}"
    if note:
        message = f"{message}. {note}"
    return refuse("not-a-document", message)


def check_write_target(path: str, *, must_be_md: bool) -> None:
    """Refuse a path a write would create or change that the walk could never see (§2.3).

    A caller's path that normalises to nothing (`.`, `./`, `a/..`) names no file at all:
    `path-empty`, as 07 §4.3 gives for `.`, before any of the §2.3 checks.
    """
    if not path:
        raise refuse("path-empty", "`path` is required.")
    if must_be_md and not path.endswith(".md"):
        raise refuse("path-not-md", f"Path must end in .md: {shown(path)}")
    segments = path.split("/")
    for segment in segments:
        if segment.startswith("."):
            raise refuse(
                "path-hidden",
                "Path goes through a hidden (dot) name, which the bank does not index: "
                + shown(path),
            )
    for segment in segments[:-1]:
        if segment in SKIPPED_DIRECTORIES:
            raise refuse(
                "path-skipped-dir",
                f'Path goes through "{shown(segment)}/", which the bank does not index: '
                + shown(path),
            )


_URL_LIKE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:", re.ASCII)


def shown(text: str) -> str:
    """`text` as a message may echo it: control and other unprintable characters escaped
    (`\\n`, `\\x1b`), so a name cannot break a line or drive a terminal (issue 13 item 13)."""
    if text.isprintable():
        return text
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


# Control characters (C0, DEL, C1) other than the line break and tab, as printable escapes.
_CONTROLS = {
    code: repr(chr(code))[1:-1]
    for code in (*range(0x20), *range(0x7F, 0xA0))
    if chr(code) not in "\n\t"
}


def terminal_text(text: str) -> str:
    """Human output with every control character but `\n` and `\t` escaped (`\x1b`, `\r`),
    so a file name or body that carries one cannot drive the terminal (issue 13 item 13)."""
    return text.translate(_CONTROLS)


def unlinkable_reason(path: str) -> str | None:
    """What in a new document's path no index link could carry, or None (issue 13 item 13).

    The index registers a document as `[title](path)`, and a link's target is read up to the
    first space or `)` (spec 01 §5.5), cut at `#`, and taken for a URL when it opens with a
    scheme: such a document would be listed yet unregistered.
    """
    for char in path:
        if char.isspace():
            return "a space" if char == " " else "a whitespace character"
        if not char.isprintable():
            return "a control character"
        if char in ")#":
            return f'a "{char}"'
    if any(_URL_LIKE.match(segment) for segment in path.split("/")):
        return "a name that reads as a URL"
    return None


def check_linkable(path: str) -> None:
    """`path-unlinkable`: refuse a new document whose path no index link could name."""
    reason = unlinkable_reason(path)
    if reason is not None:
        raise refuse(
            "path-unlinkable",
            f"Path has {reason}, so no index link could name it: {shown(path)}. Use letters, "
            'digits, "-", "_", "." and "/" (a "-" for a space).',
        )


def normalise_scope(scope: str | None) -> str | None:
    """The shared scope rule (spec 02 §7.1): leading `./` or `/` and trailing `/` removed.

    A scope that normalises to nothing (`"/"`, `"./"`, blanks) means "the whole bank".
    """
    if scope is None:
        return None
    text = scope.strip()
    while text.startswith("./"):
        text = text[2:]
    text = text.lstrip("/").rstrip("/")
    return text or None


def in_scope(path: str, scope: str | None) -> bool:
    """Whether a bank path lies in a normalised scope."""
    return scope is None or path == scope or path.startswith(scope + "/")
