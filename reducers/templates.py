"""Templates for new documents: lookup, unwrapping, retitling and the new frontmatter.

Pure (spec 03 §4.4–§4.6). The shipped templates are package data that the tool's shell hands
over in the tool's facts (`templates`, from `mbank.catalogue.shipped_templates()`: bank path
`flows/templates/<dir>/<file>` → text); the bank's own templates are documents of the
snapshot, and from the moment a bank holds its own copies they win every lookup.

Choices where the spec is silent:

- A target pattern (`template_target_path`) matches a target when it does with each
  placeholder token read as a wildcard for one or more characters other than `/`: `<…>`,
  `YYYY-MM-DD`, `FT-XXX`, `EP-XXX`, `UC-XXX`, `ADR-ID`, `PRD-ID`, `PROMPT-ID`, and
  `YYYYMMDD…` up to the end of its segment (so `adr/ADR-YYYYMMDDTHHMMSSZ-short-name.md` is
  `adr/ADR-*`). Everything else is literal: `PROCESS-<id>-process-card.md` matches
  `PROCESS-3-process-card.md` and not `PROCESS-3-session-handoff.md`.
- A `doc_kind` that is empty or is not one plain path segment names no template directory.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from mbank.catalogue import TEMPLATES_DIR
from mbank.model import Doc
from mbank.parse import load_yaml, parse_text, recover_leniently, split_frontmatter
from mbank.plan import as_lf
from mbank.projection import Snapshot

TEMPLATE_FUNCTION = "template"
TEMPLATE_ONLY_KEYS = ("template_for", "template_target_path", "doc_function")
# a template's values for these are placeholders for the caller's own (§4.6 step 3)
CALLER_KEYS = ("derived_from", "canonical_for")
README = "README.md"
SHIPPED_ALIASES = {"use_case": "use-case", "feature-support": "feature"}

PLACEHOLDER = re.compile(
    r"^(YYYY-MM-DD|YYYYMMDD.*|<[^>]+>|.*\b(FT-XXX|ADR-ID|PRD-ID|UC-XXX|EP-XXX|PROMPT-ID)\b.*)$"
)
_PATTERN_TOKEN = re.compile(
    r"<[^>/]+>|YYYYMMDD[^/]*|YYYY-MM-DD|\b(?:FT-XXX|EP-XXX|UC-XXX|ADR-ID|PRD-ID|PROMPT-ID)\b"
)


class TemplateSource(msgspec.Struct, frozen=True):
    """A template found for a new document: its path as reported, and its text."""

    path: str
    raw: str


class Instantiated(msgspec.Struct, frozen=True):
    """What a template gives a new document: the `base` mapping and the body (§4.5)."""

    base: dict[str, Any]
    body: str
    wrapper: bool


# --------------------------------------------------------------------------------------------
# Lookup (§4.4)
# --------------------------------------------------------------------------------------------


def is_placeholder(value: Any) -> bool:
    """A string whose stripped text matches the placeholder pattern of §4.6."""
    return isinstance(value, str) and PLACEHOLDER.fullmatch(value.strip()) is not None


def target_matches(pattern: str, target: str) -> bool:
    """Whether `target` fits a `template_target_path` with its placeholders as wildcards."""
    regex: list[str] = []
    position = 0
    for token in _PATTERN_TOKEN.finditer(pattern):
        regex.append(re.escape(pattern[position : token.start()]))
        regex.append("[^/]+")
        position = token.end()
    regex.append(re.escape(pattern[position:]))
    return re.fullmatch("".join(regex), target) is not None


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _target_pattern(data: Mapping[str, Any]) -> str | None:
    value = data.get("template_target_path")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _choose(
    candidates: Sequence[tuple[str, str | None]], target: str, *, by_pattern_name: bool
) -> str | None:
    """The §4.4 choice among (path, target pattern) candidates in path order."""
    name = _name(target)
    for path, pattern in candidates:
        if pattern is not None and target_matches(pattern, target):
            return path
    if by_pattern_name:
        for path, pattern in candidates:
            if pattern is not None and _name(pattern) == name:
                return path
    for path, _pattern in candidates:
        if _name(path) == name:
            return path
    others = [path for path, _pattern in candidates if _name(path) != README]
    return others[0] if len(others) == 1 else None


def _plain_kind(doc_kind: str) -> str | None:
    kind = doc_kind.strip()
    if not kind or "/" in kind or kind in (".", ".."):
        return None
    return kind


def bank_template_candidates(snapshot: Snapshot, doc_kind: str) -> list[Doc]:
    """Text templates of the bank for a kind: declared `template_for` or under its directory."""
    kind = doc_kind.strip()
    plain = _plain_kind(kind)
    directories = [] if plain is None else sorted({plain, plain.replace("_", "-")})
    prefixes = [f"{TEMPLATES_DIR}/{directory}/" for directory in directories]
    found: list[Doc] = []
    for path, doc in snapshot.docs.items():
        if not doc.text_ok or doc.doc_function != TEMPLATE_FUNCTION:
            continue
        declared = doc.data.get("template_for")
        if (isinstance(declared, str) and kind and declared.strip() == kind) or any(
            path.startswith(prefix) for prefix in prefixes
        ):
            found.append(doc)
    return found


def shipped_directory(templates: Mapping[str, str], directory: str) -> dict[str, str]:
    """The shipped `.md` files directly inside `flows/templates/<directory>/`, by path."""
    prefix = f"{TEMPLATES_DIR}/{directory}/"
    return {
        path: text
        for path, text in sorted(templates.items())
        if path.startswith(prefix) and "/" not in path[len(prefix) :] and path.endswith(".md")
    }


def template_source(
    snapshot: Snapshot, templates: Mapping[str, str], doc_kind: str, target: str
) -> TemplateSource | None:
    """The template for a new document of `doc_kind` at `target`: the bank's, else shipped."""
    candidates = bank_template_candidates(snapshot, doc_kind)
    if candidates:
        pairs = [(doc.path, _target_pattern(doc.data)) for doc in candidates]
        chosen = _choose(pairs, target, by_pattern_name=True)
        if chosen is not None:
            return TemplateSource(chosen, snapshot.raw[chosen])
    kind = _plain_kind(doc_kind)
    for directory in () if kind is None else (kind, SHIPPED_ALIASES.get(kind)):
        if directory is None:
            continue
        files = shipped_directory(templates, directory)
        if not files:
            continue
        pairs = [
            (path, _target_pattern(parse_text(path, text).data)) for path, text in files.items()
        ]
        chosen = _choose(pairs, target, by_pattern_name=False)
        if chosen is not None:
            return TemplateSource(chosen, files[chosen])
    return None


# --------------------------------------------------------------------------------------------
# Unwrapping (§4.5) and retitling
# --------------------------------------------------------------------------------------------

_LONE_CR = re.compile(r"\r(?!\n)")


def _tokens(body: str) -> list[Any]:
    from markdown_it import MarkdownIt  # the parser of record, imported when a write needs it

    # markdown-it turns a lone "\r" into a line break; mbank's lines split on "\n" only.
    return list(MarkdownIt("commonmark").disable("inline").parse(_LONE_CR.sub(" ", body)))


def _first_word(info: str) -> str:
    words = info.split()
    return words[0] if words else ""


def _fence_after(tokens: list[Any], heading_prefix: str, language: str) -> Any | None:
    heading_line: int | None = None
    for index, token in enumerate(tokens):
        if (
            token.type == "heading_open"
            and token.tag == "h2"
            and token.markup == "##"
            and token.level == 0
            and token.map
            and index + 1 < len(tokens)
            and tokens[index + 1].content.strip().startswith(heading_prefix)
        ):
            heading_line = token.map[0]
            break
    if heading_line is None:
        return None
    for token in tokens:
        if (
            token.type == "fence"
            and token.map
            and token.map[0] > heading_line
            and _first_word(token.info) == language
        ):
            return token
    return None


def _base_from_yaml(content: str) -> dict[str, Any]:
    lines = content.split("\n")
    if lines and lines[0].rstrip() == "---":
        rest = lines[1:]
        end = next((i for i, line in enumerate(rest) if line.rstrip() == "---"), len(rest))
        content = "\n".join(rest[:end])
    loaded = load_yaml(content)
    if loaded.data is not None:
        return dict(loaded.data)
    if loaded.kind == "not-a-mapping":
        return {}
    return recover_leniently(content)


def instantiate(raw: str, path: str = "template.md") -> Instantiated:
    """Unwrap a template (§4.5): a two-section wrapper, else a plain template."""
    text = as_lf(raw)
    split = split_frontmatter(text)
    tokens = _tokens(split.body)
    front = _fence_after(tokens, "Instantiated Frontmatter", "yaml")
    body = _fence_after(tokens, "Instantiated Body", "markdown")
    if front is not None and body is not None:
        return Instantiated(_base_from_yaml(front.content), body.content.rstrip(), True)
    data = parse_text(path, text).data
    base = {key: value for key, value in data.items() if key not in TEMPLATE_ONLY_KEYS}
    return Instantiated(base, split.body.strip(), False)


def first_h1_line(body: str) -> int | None:
    """The 0-based line of a body's first top-level ATX H1 (spec 01 §5.4), or None."""
    for token in _tokens(body):
        if (
            token.type == "heading_open"
            and token.tag == "h1"
            and token.markup == "#"
            and token.level == 0
            and token.map
        ):
            return int(token.map[0])
    return None


def retitle(body: str, title: str) -> str:
    """The body with its first H1 line replaced by `# <title>`, or `# <title>` prepended."""
    line = first_h1_line(body)
    if line is None:
        return f"# {title}\n\n{body}"
    lines = body.split("\n")
    lines[line] = f"# {title}"
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The frontmatter of a new document (§4.6)
# --------------------------------------------------------------------------------------------


class NewFrontmatter(msgspec.Struct, frozen=True):
    """The mapping a new document is written with, and the placeholder warnings it drew."""

    data: dict[str, Any]
    warnings: tuple[str, ...]


def new_frontmatter(
    *,
    title: str,
    doc_kind: str,
    doc_function: str,
    purpose: str,
    derived_from: Sequence[str],
    canonical_for: Sequence[str],
    must_not_define: Sequence[str] | None,
    status: str,
    base: Mapping[str, Any],
    today: str,
    warn_placeholders: bool,
    extra: Mapping[str, Any] | None = None,
) -> NewFrontmatter:
    """The key order of §4.6: the caller's fields, then the template's, then `extra`.

    A template placeholder under `date` becomes today's date; under any other key it is
    copied with a warning (`warn_placeholders`, bank_create) or skipped silently
    (bank_promote). `must_not_define` None means "not given" (the template's list may flow
    in); an empty list is written `must_not_define: []`.
    """
    data: dict[str, Any] = {
        "title": title,
        "doc_kind": doc_kind,
        "doc_function": doc_function,
        "purpose": purpose,
    }
    if derived_from:
        data["derived_from"] = list(derived_from)
    if canonical_for:
        data["canonical_for"] = list(canonical_for)
    if must_not_define is not None:
        data["must_not_define"] = list(must_not_define)
    data["status"] = status
    warnings: list[str] = []
    for key, value in base.items():
        if key in data or key in TEMPLATE_ONLY_KEYS or key in CALLER_KEYS:
            continue
        if is_placeholder(value):
            if key == "date":
                data[key] = dt.date.fromisoformat(today)
            elif warn_placeholders:
                data[key] = value
                warnings.append(
                    f'Template left a placeholder in "{key}": {value}. Fill it before activating.'
                )
            continue
        data[key] = value
    for key, value in (extra or {}).items():
        data[key] = value
    return NewFrontmatter(data, tuple(warnings))
