"""Writing a whole frontmatter block from an ordered mapping (spec 03 §3).

Pure. `bank_create` and `bank_promote` write every header through `frontmatter_block`, so a
document they create can never draw `invalid-frontmatter`: each value is written in block
style the way upstream's js-yaml dump wrote it (two-space indented sequences, single quotes
when quoting is needed, long lines never folded) and reads back identically with mbank's
loader (spec 01 §4.2).

Choices where the spec is silent, each made so that the block still reads back unchanged:

- A string is quoted when it holds a character libyaml will not take raw in a quoted
  scalar, not only a C0 control: DEL and the C1 controls, U+2028/U+2029 (which YAML reads as
  line breaks), U+FEFF and U+FFFE/U+FFFF. Such a string is double-quoted, and those
  characters are escaped as `\\uXXXX` (plain `json.dumps` would leave them raw, and the
  value would not read back).
- A key matching `^[A-Za-z_][A-Za-z0-9_-]*$` that would load as something else than the same
  text (`null`, `True`, `FALSE` …: the YAML 1.2 core resolves them) is quoted like a string.
  A key with a line break or control character is double-quoted, not single-quoted.
- Values of other types than the spec lists (`bytes`, `set`, as a template's YAML may carry)
  are written as their JSON-safe form (`mbank.parse.json_data`): base64 text, a sorted list.
- A mapping item of a sequence that is empty is written `- {}`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from mbank.parse import json_data, load_yaml, scalar_text

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$", re.ASCII)
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_ALWAYS_QUOTED = frozenset({"y", "Y", "n", "N"})
_SHORT_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}

try:
    _YAML11: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - PyYAML wheels bundle libyaml
    _YAML11 = yaml.SafeLoader


def _raw_safe(character: str) -> bool:
    """Whether a character may stand raw in a one-line YAML scalar (not a break or control)."""
    code = ord(character)
    if 0x20 <= code <= 0x7E:
        return True
    if 0xA0 <= code <= 0xD7FF:
        return code not in (0x2028, 0x2029)
    if 0xE000 <= code <= 0xFFFD:
        return code != 0xFEFF
    return code >= 0x10000


def _all_raw_safe(text: str) -> bool:
    return (text.isascii() and text.isprintable()) or all(_raw_safe(c) for c in text)


def _loads_back(text: str) -> bool:
    """`k: <text>` loads as the same string with mbank's loader and with YAML 1.1."""
    loaded = load_yaml(f"k: {text}")
    if loaded.data is None or loaded.data.get("k") != text:
        return False
    try:
        legacy = yaml.load(f"k: {text}", Loader=_YAML11)
    except Exception:  # any failure means: not plain
        return False
    return isinstance(legacy, dict) and legacy.get("k") == text


def plain_safe(text: str) -> bool:
    """Whether a string may be written plain (spec 03 §3's list of conditions)."""
    if not text or text != text.strip() or not _all_raw_safe(text):
        return False
    if text[0] in _INDICATORS or ": " in text or " #" in text or text.endswith(":"):
        return False
    if text in _ALWAYS_QUOTED:
        return False
    return _loads_back(text)


def double_quoted(text: str) -> str:
    """A double-quoted YAML scalar with JSON escapes; non-ASCII stays raw where YAML allows."""
    out = ['"']
    for character in text:
        if character == '"':
            out.append('\\"')
        elif character == "\\":
            out.append("\\\\")
        elif _raw_safe(character):
            out.append(character)
        elif character in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[character])
        elif ord(character) <= 0xFFFF:
            out.append(f"\\u{ord(character):04x}")
        else:  # pragma: no cover - every character past U+FFFF is raw-safe
            out.append(f"\\U{ord(character):08x}")
    out.append('"')
    return "".join(out)


def yaml_string(text: str) -> str:
    """A string value: plain when plain-safe, else single-quoted, else double-quoted (§3)."""
    return text if plain_safe(text) else _quoted(text)


def yaml_key(key: str) -> str:
    """A mapping key: plain when it is an identifier that reads back as itself, else quoted."""
    if _KEY.match(key):
        loaded = load_yaml(f"{key}: x")
        if loaded.data is not None and list(loaded.data) == [key]:
            return key
    return _quoted(key)


def _quoted(text: str) -> str:
    """Single-quoted (`'` doubled) when every character may stand raw, else double-quoted."""
    if _all_raw_safe(text):
        return "'" + text.replace("'", "''") + "'"
    return double_quoted(text)


def yaml_scalar(value: Any) -> str:
    """One scalar as the writer puts it after `key: ` or `- ` (spec 03 §3, "Scalars")."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return yaml_string(value)
    if isinstance(value, (bool, int, float, dt.date)):
        # the scalar text of 01 §4.5 (never None for these types) is exactly 03 §3's form
        return str(scalar_text(value))
    return yaml_scalar(json_data(value))


def _flow(value: Any) -> str:
    """A value in flow style, JSON-shaped: strings double-quoted, containers bracketed."""
    if isinstance(value, Mapping):
        pairs = (f"{double_quoted(str(key))}: {_flow(item)}" for key, item in value.items())
        return "{" + ", ".join(pairs) + "}"
    if _is_sequence(value):
        return "[" + ", ".join(_flow(item) for item in value) + "]"
    if isinstance(value, str):
        return double_quoted(value)
    if isinstance(value, (bytes, set, frozenset)):
        return _flow(json_data(value))
    return yaml_scalar(value)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray))


def _pair_lines(key: Any, value: Any, indent: int) -> list[str]:
    pad = " " * indent
    # A non-string key is written as its scalar text (spec 01 §4.5: True -> true), the same
    # text the loader gives it when the block is read back.
    name = yaml_key(key if isinstance(key, str) else (scalar_text(key) or ""))
    if isinstance(value, (set, frozenset)):
        value = json_data(value)
    if isinstance(value, Mapping):
        if not value:
            return [f"{pad}{name}: {{}}"]
        lines = [f"{pad}{name}:"]
        for child_key, child in value.items():
            lines.extend(_pair_lines(child_key, child, indent + 2))
        return lines
    if _is_sequence(value):
        if not value:
            return [f"{pad}{name}: []"]
        lines = [f"{pad}{name}:"]
        for item in value:
            lines.extend(_item_lines(item, indent + 2))
        return lines
    return [f"{pad}{name}: {yaml_scalar(value)}"]


def _item_lines(item: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(item, (set, frozenset)):
        item = json_data(item)
    if isinstance(item, Mapping):
        if not item:
            return [f"{pad}- {{}}"]
        lines: list[str] = []
        for number, (key, value) in enumerate(item.items()):
            # the pairs sit two columns past the dash; the first one shares the dash's line
            pair = _pair_lines(key, value, indent + 2)
            if number == 0:
                pair[0] = f"{pad}- {pair[0][indent + 2 :]}"
            lines.extend(pair)
        return lines
    if _is_sequence(item):
        return [f"{pad}- {_flow(item)}"]
    return [f"{pad}- {yaml_scalar(item)}"]


def frontmatter_lines(mapping: Mapping[str, Any]) -> list[str]:
    """The lines between the two `---` of a block, keys in the mapping's order."""
    lines: list[str] = []
    for key, value in mapping.items():
        lines.extend(_pair_lines(key, value, 0))
    return lines


def frontmatter_block(mapping: Mapping[str, Any]) -> str:
    """The whole block: `---\\n`, one line per entry (nested ones indented), `---\\n`."""
    return "---\n" + "".join(line + "\n" for line in frontmatter_lines(mapping)) + "---\n"
