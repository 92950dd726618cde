"""The only place frontmatter is split and YAML is loaded; markdown structure of one document.

Everything here is a pure function of a document's path and bytes (spec 01 §3–§6). Parsing
never raises: a document whose frontmatter cannot be used keeps its error and the fields
recovered line by line, so it stays routable, readable and visible to `validate`.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from mbank.contract import BUILTIN_LAYER_DIRS
from mbank.model import Doc, Edge, Link, Section, sha256_hex

if TYPE_CHECKING:
    from mbank.frontmatter_yaml import YamlOutcome

# --------------------------------------------------------------------------------------------
# YAML (mbank.frontmatter_yaml, imported on the first document that has frontmatter)
# --------------------------------------------------------------------------------------------


def load_yaml(yaml_text: str) -> YamlOutcome:
    """Load frontmatter YAML with the core schema and guards; never raises (spec 01 §4.2)."""
    from mbank.frontmatter_yaml import load_frontmatter_yaml

    return load_frontmatter_yaml(yaml_text)


# --------------------------------------------------------------------------------------------
# Scalar text (spec 01 §4.5)
# --------------------------------------------------------------------------------------------


def scalar_text(value: Any) -> str | None:
    """Text of a frontmatter scalar as shown to people and compared by tools."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return repr(value)
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def json_data(value: Any) -> Any:
    """Frontmatter data as JSON-safe plain values (spec 01 §4.5), iteratively (deep nesting)."""
    if not isinstance(value, (dict, list, tuple, set, frozenset)):
        return _json_scalar(value)
    root: list[Any] = [None]
    # (container to fill, key or index, source value)
    work: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while work:
        target, slot, source = work.pop()
        if isinstance(source, dict):
            out_map: dict[str, Any] = {}
            target[slot] = out_map
            for key, item in source.items():
                text_key = key if isinstance(key, str) else (scalar_text(key) or "")
                out_map[text_key] = None
                work.append((out_map, text_key, item))
        elif isinstance(source, (list, tuple, set, frozenset)):
            items = (
                sorted(source, key=lambda x: (str(type(x)), str(x)))
                if isinstance(source, (set, frozenset))
                else list(source)
            )
            out_list: list[Any] = [None] * len(items)
            target[slot] = out_list
            for index, item in enumerate(items):
                work.append((out_list, index, item))
        else:
            target[slot] = _json_scalar(source)
    return root[0]


def _json_scalar(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return scalar_text(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return scalar_text(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return str(value)


# --------------------------------------------------------------------------------------------
# Splitting (spec 01 §4.1) and lenient recovery (§4.4)
# --------------------------------------------------------------------------------------------


class Split(msgspec.Struct, frozen=True):
    """`split_frontmatter`'s result."""

    has_frontmatter: bool
    yaml_text: str | None
    head: str
    body: str
    body_offset: int
    unclosed: bool = False


def _fence_line(line: str) -> str:
    # one trailing "\r" (spec 01 §3), then trailing spaces and tabs
    return line.removesuffix("\r").rstrip(" \t")


def split_frontmatter(text: str) -> Split:
    """Split a document into frontmatter and body; the single entry point for detection."""
    first_end = text.find("\n")
    first = text if first_end < 0 else text[:first_end]
    if _fence_line(first.removeprefix("\ufeff")) != "---":
        return Split(False, None, "", text, 0)
    position = first_end + 1 if first_end >= 0 else len(text)
    line_index = 1
    yaml_lines: list[str] = []
    while first_end >= 0 and position <= len(text):
        end = text.find("\n", position)
        line = text[position:] if end < 0 else text[position:end]
        if _fence_line(line) == "---":
            head_end = len(text) if end < 0 else end + 1
            return Split(
                True, "\n".join(yaml_lines), text[:head_end], text[head_end:], line_index + 1
            )
        yaml_lines.append(line.removesuffix("\r"))
        line_index += 1
        if end < 0:
            break
        position = end + 1
    head_end = len(text) if first_end < 0 else first_end + 1
    return Split(True, None, text[:head_end], text[head_end:], 1, unclosed=True)


_RECOVER_ITEM = re.compile(r"^\s*-\s+(.*)$", re.ASCII)
_RECOVER_PATH = re.compile(r"^path:\s*(.*)$", re.ASCII)
_RECOVER_FIT = re.compile(r"^\s+fit:\s*(.+)$", re.ASCII)
_RECOVER_KEY = re.compile(r"^([A-Za-z_][\w-]*):\s*(.*)$", re.ASCII)


def unquote(text: str) -> str:
    """Strip, drop one leading and one trailing quote, strip again (spec 01 §4.4)."""
    text = text.strip()
    if text[:1] in ('"', "'"):
        text = text[1:]
    if text[-1:] in ('"', "'"):
        text = text[:-1]
    return text.strip()


def recover_leniently(yaml_text: str) -> dict[str, Any]:
    """Recover enough of unusable frontmatter, line by line, to route and validate."""
    data: dict[str, Any] = {}
    key: str | None = None
    items: list[Any] = []
    pending: dict[str, str] | None = None

    def close() -> None:
        if key is not None and items:
            data[key] = list(items)

    for raw_line in yaml_text.split("\n"):
        line = raw_line.removesuffix("\r")
        item = _RECOVER_ITEM.match(line)
        if item and key is not None:
            text = item.group(1)
            as_path = _RECOVER_PATH.match(text)
            if as_path:
                pending = {"path": unquote(as_path.group(1))}
                items.append(pending)
            else:
                items.append(unquote(text))
                pending = None
            continue
        fit = _RECOVER_FIT.match(line)
        if fit and pending is not None:
            pending["fit"] = unquote(fit.group(1))
            continue
        pair = _RECOVER_KEY.match(line)
        if pair:
            close()
            key = pair.group(1)
            items = []
            pending = None
            value = pair.group(2).strip()
            if value:
                data[key] = unquote(value)
    close()
    return data


# --------------------------------------------------------------------------------------------
# Paths inside a document (spec 01 §2.4)
# --------------------------------------------------------------------------------------------

URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:", re.ASCII)


class Resolution(msgspec.Struct, frozen=True):
    """Where a reference written in a document points."""

    resolved: str | None
    external: bool
    url: bool = False


def resolve_from(doc_path: str, reference: str) -> Resolution:
    """Resolve a reference relative to the referring document's own directory."""
    text = reference.split("#", 1)[0].strip()
    if not text:
        return Resolution(None, False)
    if URL_SCHEME.match(text):
        return Resolution(None, True, True)
    directory = doc_path.rsplit("/", 1)[0] if "/" in doc_path else ""
    segments: list[str] = []
    for segment in (directory + "/" + text).split("/"):
        if segment in ("", "."):
            continue
        if segment == ".." and segments and segments[-1] != "..":
            segments.pop()
        else:
            segments.append(segment)
    if not segments:
        return Resolution(None, False)
    if segments[0] == "..":
        return Resolution(None, True)
    return Resolution("/".join(segments), False)


# --------------------------------------------------------------------------------------------
# Markdown structure: sections, first H1, fenced regions (spec 01 §5)
# --------------------------------------------------------------------------------------------


class BodyStructure(msgspec.Struct, frozen=True):
    """Headings and fences of a body, with 0-based body line numbers."""

    sections: tuple[tuple[str, int], ...]
    first_h1: str | None
    fences: tuple[tuple[int, int], ...]  # [start, end) body lines, fence lines included


_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+$")
_LIST_MARKER = re.compile(r"^ {0,3}(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]|$)")
# any indentation: a marker of a nested list, or of a list opened by a tab, is caught as well
_ANY_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]+|$)")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:-+|=+)[ \t]*$")
_BLANK = re.compile(r"^[ \t]*$")
# The first characters (after spaces) a line needs for any structure the scanner looks at.
_STRUCTURAL_FIRST = frozenset("#`~<>-*+=\t0123456789")
_LIST_FIRST = frozenset("-*+0123456789")
_RISKY_FIRST = frozenset("#`~<>")
_RISKY_START = re.compile(r"^(?:#{1,6}(?:[ \t]|$)|`{3,}|~{3,}|[<>])")
_ONE_LINE_COMMENT = re.compile(r"^<!--.*-->[ \t]*$")


def _scan_simple(lines: list[str]) -> BodyStructure | None:
    """Fast scanner for simple bodies; None hands the body to markdown-it (spec 01 §5.1).

    A body is simple when nothing in it can change what is a top-level heading or a fence:
    no HTML block (a one-line `<!-- … -->` comment excepted), no blockquote, no fence or
    heading inside a list item, no setext underline, no tab in indentation.
    """
    sections: list[tuple[str, int]] = []
    fences: list[tuple[int, int]] = []
    first_h1: str | None = None
    fence_char = ""
    fence_len = 0
    fence_start = 0
    seen_list = False
    previous_blank = True
    for number, line in enumerate(lines):
        if fence_char:
            stripped = line.lstrip(" ")
            if (
                len(line) - len(stripped) <= 3
                and stripped.startswith(fence_char * fence_len)
                and not stripped.lstrip(fence_char).strip(" \t")
            ):
                fences.append((fence_start, number + 1))
                fence_char = ""
            continue
        content = line.lstrip(" ")
        first = content[:1]
        if first not in _STRUCTURAL_FIRST:
            # Prose: no pattern below can match a line starting with any other character, so
            # the line only ends a blank run (the common case, kept off the regex path).
            previous_blank = not first
            continue
        indent = len(line) - len(content)
        if first == "\t":
            return None
        if indent <= 3:
            if content[:1] == "<" and not _ONE_LINE_COMMENT.match(content):
                return None
            if content[:1] == ">":
                return None  # a blockquote can hold fences and lists: markdown-it decides
        if seen_list and indent > 0 and first in _RISKY_FIRST and _RISKY_START.match(content):
            return None
        if first in _LIST_FIRST:
            if _LIST_MARKER.match(line):
                seen_list = True
            if _ANY_LIST_MARKER.match(line):
                rest = line
                while _ANY_LIST_MARKER.match(rest):
                    rest = _ANY_LIST_MARKER.sub("", rest, count=1)
                if _RISKY_START.match(rest.lstrip(" \t")):
                    return None
        if not previous_blank and first in "-=" and _SETEXT_UNDERLINE.match(line):
            return None
        fence = _FENCE_OPEN.match(line) if first in "`~" else None
        if fence:
            marker = fence.group(2)
            if not (marker[0] == "`" and "`" in fence.group(3)):
                fence_char = marker[0]
                fence_len = len(marker)
                fence_start = number
                previous_blank = False
                continue
        heading = _ATX.match(line) if first == "#" else None
        if heading:
            level = len(heading.group(1))
            title = _ATX_CLOSING.sub("", heading.group(2) or "").strip()
            if level == 2:
                sections.append((title, number))
            elif level == 1 and first_h1 is None:
                first_h1 = title
            previous_blank = True  # a heading ends any paragraph (no setext after it)
            continue
        previous_blank = not content.strip(" \t")
    if fence_char:
        end = len(lines)
        if not lines[-1].strip(" \t"):
            end -= 1  # markdown-it counts no last line that is empty or only spaces/tabs
        fences.append((fence_start, end))
    return BodyStructure(tuple(sections), first_h1, tuple(fences))


_MARKDOWN: Any = None
_LONE_CR = re.compile(r"\r(?!\n)")


def scan_with_markdown_it(body: str) -> BodyStructure:
    """The parser of record: markdown-it-py's CommonMark block rules."""
    global _MARKDOWN
    if _MARKDOWN is None:
        from markdown_it import MarkdownIt  # imported lazily: ≈70 ms a bank of simple docs skips

        _MARKDOWN = MarkdownIt("commonmark").disable("inline")
    # markdown-it turns a lone "\r" into a line break; mbank's lines split on "\n" only.
    tokens = _MARKDOWN.parse(_LONE_CR.sub(" ", body))
    sections: list[tuple[str, int]] = []
    fences: list[tuple[int, int]] = []
    first_h1: str | None = None
    for index, token in enumerate(tokens):
        if token.type == "fence" and token.map:
            fences.append((token.map[0], token.map[1]))
        elif token.type == "heading_open" and token.level == 0 and token.map:
            title = tokens[index + 1].content.strip() if index + 1 < len(tokens) else ""
            if token.tag == "h2" and token.markup == "##":
                sections.append((title, token.map[0]))
            elif token.tag == "h1" and token.markup == "#" and first_h1 is None:
                first_h1 = title
    return BodyStructure(tuple(sections), first_h1, tuple(fences))


def scan_body(body: str) -> BodyStructure:
    """Sections, first H1 and fences of a body: the fast scanner where safe, else markdown-it."""
    lines = [line.removesuffix("\r") for line in body.split("\n")]
    if not _LONE_CR.search(body):
        simple = _scan_simple(lines)
        if simple is not None:
            return simple
    return scan_with_markdown_it(body)


_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+\.md(?:#[^)\s]*)?)\)")


def extract_links(
    doc_path: str, text: str, fences: Iterable[tuple[int, int]], body_offset: int
) -> tuple[Link, ...]:
    """Every `[..](x.md)` link outside fenced code, frontmatter lines included (spec 01 §5.5)."""
    if "](" not in text:
        return ()
    skipped: set[int] = set()
    for start, end in fences:
        skipped.update(range(start + body_offset, end + body_offset))
    links: list[Link] = []
    for number, line in enumerate(text.split("\n")):
        if "](" not in line or number in skipped:
            continue
        for match in _LINK.finditer(line):
            target = match.group(1)
            if URL_SCHEME.match(target):
                continue
            where = resolve_from(doc_path, target)
            links.append(Link(doc_path, target, where.resolved, where.external, number + 1))
    return tuple(links)


# --------------------------------------------------------------------------------------------
# The document record (spec 01 §6)
# --------------------------------------------------------------------------------------------


def builtin_layer(path: str) -> str:
    """The layer of a path from the built-in directory map alone."""
    if "/" not in path:
        return "other"
    return BUILTIN_LAYER_DIRS.get(path.split("/", 1)[0], "other")


def _text_field(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value.strip() if isinstance(value, str) else ""


def _optional_text(data: Mapping[str, Any], key: str) -> str | None:
    value = _text_field(data, key)
    return value or None


def _key_list(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key)
    if isinstance(value, str):
        items: list[Any] = [value]
    elif isinstance(value, list):
        items = value
    else:
        return ()
    out = []
    for item in items:
        if isinstance(item, str) and item.strip():
            out.append(item.strip())
    return tuple(out)


def _anchors(data: Mapping[str, Any]) -> tuple[str, ...]:
    out = []
    for anchor in _key_list(data, "anchors"):
        if anchor.startswith("./"):
            anchor = anchor[2:]
        elif anchor.startswith("/"):
            anchor = anchor[1:]
        if anchor:
            out.append(anchor)
    return tuple(out)


def derived_edges(doc_path: str, data: Mapping[str, Any]) -> tuple[Edge, ...]:
    """The `derived_from` edges of a document, in order (spec 01 §6.2)."""
    value = data.get("derived_from")
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    edges = []
    for item in value:
        fit: str | None = None
        if isinstance(item, str):
            raw = item
        elif isinstance(item, dict) and isinstance(item.get("path"), str):
            raw = item["path"]
            fit = item["fit"] if isinstance(item.get("fit"), str) else None
        else:
            continue
        where = resolve_from(doc_path, raw)
        edges.append(Edge(raw, fit, where.resolved, where.external, where.url))
    return tuple(edges)


def file_stem(path: str) -> str:
    """The file name of a bank path without its `.md` suffix."""
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def _encoding_problem(raw: bytes) -> str | None:
    """The first problem in the file, by offset: an invalid byte or a NUL byte (spec 01 §4.3)."""
    nul = raw.find(b"\x00")
    try:
        (raw if nul < 0 else raw[:nul]).decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"not UTF-8 (invalid byte 0x{raw[exc.start]:02x} at offset {exc.start})"
    if nul >= 0:
        return f"not UTF-8 (NUL byte at offset {nul})"
    return None


class Parsed(msgspec.Struct, frozen=True):
    """A parsed document and its decoded text (empty for a non-text document)."""

    doc: Doc
    text: str


def parse_document(path: str, raw: bytes, mtime_ns: int = 0, size: int | None = None) -> Parsed:
    """Parse one document from its bytes. Never raises."""
    byte_size = len(raw) if size is None else size
    digest = sha256_hex(raw)
    problem = _encoding_problem(raw)
    if problem is not None:
        doc = Doc(
            path=path,
            title=file_stem(path),
            doc_kind="",
            doc_function="",
            purpose="",
            status="",
            delivery_status=None,
            decision_status=None,
            layer=builtin_layer(path),
            derived_from=(),
            canonical_for=(),
            must_not_define=(),
            anchors=(),
            sections=(),
            registered_in=(),
            fields=(),
            data={},
            has_frontmatter=False,
            parse_error=problem,
            parse_error_kind="invalid-encoding",
            parse_error_line=None,
            body_offset=0,
            mtime_ns=mtime_ns,
            size=byte_size,
            text_ok=False,
            sha256=digest,
        )
        return Parsed(doc, "")
    text = raw.decode("utf-8")
    doc = parse_text(path, text, mtime_ns, byte_size)
    return Parsed(msgspec.structs.replace(doc, sha256=digest), text)


def parse_text(path: str, text: str, mtime_ns: int = 0, size: int | None = None) -> Doc:
    """Parse a document's decoded text into its record. Never raises."""
    split = split_frontmatter(text)
    error: str | None = None
    kind: str | None = None
    error_line: int | None = None
    data: dict[str, Any] = {}
    if split.unclosed:
        error, kind, error_line = "frontmatter is never closed", "unclosed", 1
    elif split.yaml_text is not None:
        outcome = load_yaml(split.yaml_text)
        if outcome.data is not None:
            data = outcome.data
        else:
            error, kind, error_line = outcome.error, outcome.kind, outcome.line
            data = recover_leniently(split.yaml_text)
    structure = scan_body(split.body)
    sections = tuple(
        Section(title, line + split.body_offset + 1) for title, line in structure.sections
    )
    title = _text_field(data, "title") or (structure.first_h1 or "").strip() or file_stem(path)
    links = extract_links(path, text, structure.fences, split.body_offset)
    return Doc(
        path=path,
        title=title,
        doc_kind=_text_field(data, "doc_kind"),
        doc_function=_text_field(data, "doc_function"),
        purpose=_text_field(data, "purpose"),
        status=_text_field(data, "status"),
        delivery_status=_optional_text(data, "delivery_status"),
        decision_status=_optional_text(data, "decision_status"),
        layer=builtin_layer(path),
        derived_from=derived_edges(path, data),
        canonical_for=_key_list(data, "canonical_for"),
        must_not_define=_key_list(data, "must_not_define"),
        anchors=_anchors(data),
        sections=sections,
        registered_in=(),
        fields=tuple(data.keys()),
        data=data,
        has_frontmatter=split.has_frontmatter,
        parse_error=error,
        parse_error_kind=kind,
        parse_error_line=error_line,
        body_offset=split.body_offset,
        mtime_ns=mtime_ns,
        size=len(text.encode("utf-8")) if size is None else size,
        text_ok=True,
        links=links,
        first_h1=structure.first_h1,
        sha256=sha256_hex(text.encode("utf-8")),
    )
