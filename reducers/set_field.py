"""Planning `bank_set_field`: one frontmatter value, written so it reads back unchanged.

A list field (`derived_from`, `canonical_for`, `must_not_define`, `anchors`, or a key that
already holds a list) is set to a whole list through the gates create runs for it
(`gates.lists`, issue 14), written as a block list in place of the old value.

Pure (spec 03 §9). The value's line is written in the quoting style the key already has
(plain, single or double), falling back to double quotes when a style would not load back as
the same value; an existing date or number stays unquoted. The old value's continuation
lines go with it, so a folded `>-` value becomes one line. Every other byte of the file is
kept. A new `title` renames the H1 that repeated the old one, and a new `title` or `purpose`
follows into the index entries that repeat the old text.

The frontmatter line helpers here (`frontmatter_close`, `key_line`, `reads_plain`) are also
used by `reducers/set_status.py`, which edits the same block in place.

Choices where the spec is silent:
- a `from` that is the empty string is not propagated into indexes (replacing the first
  occurrence of "" would insert the new text at the start of the line);
- an index that is the document itself is skipped (a plan touches a path once; the document
  is already being replaced).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Annotated, Any

import msgspec

from mbank.frontmatter_writer import frontmatter_block
from mbank.gates.documents import DocumentFacts, document_fact_paths, document_to_write
from mbank.gates.fields import (
    refuse_identity,
    refuse_non_scalar,
    refuse_status,
    require_key,
    require_one_line,
    require_value,
)
from mbank.gates.lists import (
    check_list_entries,
    is_list_write,
    list_entries,
    refuse_scalar_holder,
)
from mbank.gates.status import require_frontmatter
from mbank.gates.vocabulary import require_known_value
from mbank.model import AnyFileOp, Doc, Intent, Plan, PlanOutcome
from mbank.parse import load_yaml, scalar_text, scan_body, split_frontmatter
from mbank.paths import refuse
from mbank.plan import document_text, replace_document
from mbank.projection import Snapshot
from mbank.reducers.report import closing, finished, unchanged
from mbank.write_declaration import CliArg, Published, WriteTool

TOOL = "bank_set_field"
PLAIN, SINGLE, DOUBLE = "plain", "single", "double"
TYPED_SCALARS = (bool, int, float, dt.date, dt.datetime)
_H1 = re.compile(r"^ {0,3}#(?:[ \t]+(.*?))?[ \t]*$")
_H1_CLOSING = re.compile(r"(?:^|[ \t]+)#+$")


# --------------------------------------------------------------------------------------------
# Frontmatter lines (shared with set_status)
# --------------------------------------------------------------------------------------------


def frontmatter_close(lines: list[str]) -> int | None:
    """Index of the closing `---` line of a frontmatter opened on line 0, or None."""
    if not lines or lines[0].removeprefix("\ufeff").rstrip(" \t") != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].rstrip(" \t") == "---":
            return index
    return None


def key_line(lines: list[str], close: int, key: str) -> int | None:
    """Index of the first top-level line `<key>:` strictly inside the frontmatter, or None."""
    pattern = re.compile(rf"^{re.escape(key)}:(\s|$)")
    for index in range(1, close):
        if pattern.match(lines[index]):
            return index
    return None


def _indented(line: str) -> bool:
    return line[:1] in (" ", "\t")


def continuation_end(lines: list[str], index: int, close: int, *, list_items: bool = False) -> int:
    """One past the last continuation line of the value on line `index` (§9 step 5).

    Continuation lines start with a space or a tab; blank lines count when an indented line
    follows them (after any further blank lines), before the closing `---`. With
    `list_items`, a block list item at column 0 (`- x`, valid YAML) continues it too.
    """
    end = index + 1
    probe = end
    while probe < close:
        line = lines[probe]
        item = list_items and re.match(r"^-(\s|$)", line) is not None
        if (item or _indented(line)) and line.strip():
            probe += 1
            end = probe
        elif not line.strip():
            probe += 1
        else:
            break
    return end


def reads_plain(key: str, value: str) -> bool:
    """True when `<key>: <value>` loads back as the string `value` (no quoting needed)."""
    loaded = load_yaml(f"{key}: {value}")
    return loaded.data is not None and loaded.data.get(key) == value and _is_text(loaded.data, key)


def _is_text(data: dict[str, Any], key: str) -> bool:
    return isinstance(data.get(key), str)


# --------------------------------------------------------------------------------------------
# The value writer (§9 steps 3-4)
# --------------------------------------------------------------------------------------------


def quoting_style(inline: str | None) -> str:
    """The quoting style of an existing inline value (the text after `<field>:`), or plain."""
    text = (inline or "").strip()
    if text.startswith("'"):
        return SINGLE
    if text.startswith('"'):
        return DOUBLE
    return PLAIN


def _candidate(style: str, to: str) -> str:
    if style == SINGLE:
        return "'" + to.replace("'", "''") + "'"
    if style == DOUBLE:
        return json.dumps(to, ensure_ascii=False)
    return to


def accepts(value: Any, to: str, current: Any, plain: bool) -> bool:
    """The acceptance rule of §9 step 4: the string `to`, or the current scalar type kept."""
    if isinstance(value, str):
        return value == to
    if plain and isinstance(current, TYPED_SCALARS) and not isinstance(current, str):
        return type(value) is type(current) and scalar_text(value) == to
    return False


def write_value(field: str, to: str, style: str, current: Any) -> tuple[str, bool]:
    """The text to write after `<field>: ` and whether it is the plain candidate.

    Candidates by style: single → single, double; double → double; plain → plain, double.
    The first that loads back by `accepts` wins; none → the `value-unwritable` refusal.
    """
    order = {SINGLE: (SINGLE, DOUBLE), DOUBLE: (DOUBLE,), PLAIN: (PLAIN, DOUBLE)}[style]
    for kind in order:
        candidate = _candidate(kind, to)
        loaded = load_yaml(f"{field}: {candidate}")
        if loaded.data is None or field not in loaded.data:
            continue
        if accepts(loaded.data[field], to, current, kind == PLAIN):
            return candidate, kind == PLAIN
    raise refuse(
        "value-unwritable",
        f"{json.dumps(to, ensure_ascii=False)} cannot be written as a frontmatter value that "
        "reads back unchanged.",
    )


def value_line(field: str, to: str, inline: str | None, current: Any) -> str:
    """The frontmatter line `<field>: <value>` for `to`, in the existing key's quoting style."""
    written, _plain = write_value(field, to, quoting_style(inline), current)
    return f"{field}: {written}"


# --------------------------------------------------------------------------------------------
# The H1 and the index entries (§9 steps 6 and 8)
# --------------------------------------------------------------------------------------------


def _h1_text(line: str) -> str | None:
    match = _H1.match(line)
    if match is None:
        return None
    return _H1_CLOSING.sub("", match.group(1) or "").strip()


def rename_h1(body: str, old: str, new: str) -> str | None:
    """The body with its first H1 (spec 01 §5.4) renamed from `old` to `# <new>`, or None.

    None when the first H1 does not read `old`. The line is found among the ATX H1 lines
    reading `old`; the one whose replacement changes the body's first H1 is the first H1.
    """
    if scan_body(body).first_h1 != old:
        return None
    lines = body.split("\n")
    for index, line in enumerate(lines):
        if _h1_text(line) != old:
            continue
        candidate = "\n".join([*lines[:index], f"# {new}", *lines[index + 1 :]])
        if scan_body(candidate).first_h1 == new.strip():
            return candidate
    return None


def propagate_line(line: str, field: str, old: str, new: str) -> str:
    """One index line with the old title or purpose replaced (§9 step 8)."""
    if field == "purpose":
        return line.replace(old, new, 1)
    line = line.replace(f"[{old}](", f"[{new}](")
    return line.replace(f"[`{old}`](", f"[`{new}`](")


def propagate(snapshot: Snapshot, path: str, field: str, old: str, new: str) -> list[AnyFileOp]:
    """Replace ops for the text indexes whose entries for `path` repeat the old value."""
    ops: list[AnyFileOp] = []
    doc = snapshot.docs[path]
    for index_path in sorted(doc.registered_in):
        index = snapshot.docs.get(index_path)
        if index is None or not index.text_ok or index_path == path:
            continue
        wanted = sorted({link.line for link in index.links if link.to == path})
        if not wanted:
            continue
        text = document_text(snapshot, index_path)
        lines = text.split("\n")
        for number in wanted:
            if 0 < number <= len(lines):
                lines[number - 1] = propagate_line(lines[number - 1], field, old, new)
        changed = "\n".join(lines)
        if changed != text:
            ops.append(replace_document(snapshot, index_path, changed))
    return ops


# --------------------------------------------------------------------------------------------
# The planner
# --------------------------------------------------------------------------------------------


def _result(
    path: str,
    field: str,
    current: str | list[str] | None,
    to: str | list[str],
    dry_run: bool,
    line: str,
    indexes: list[str],
    heading: bool,
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "path": path,
        "field": field,
        "from": current,
        "to": to,
        "changed": False,
        "dryRun": dry_run,
        "line": line,
        "indexes": indexes,
    }
    if heading:
        result["heading"] = True
    return result


class SetFieldArgs(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The arguments of `bank_set_field`."""

    path: Annotated[str, Published(required=True)] = ""
    field: Annotated[str, Published(min_length=1, required=True)] = ""
    value: Annotated[
        str | list[str], Published(max_length=2000, words="setValue", required=True)
    ] = ""
    dry_run: bool = False


def gate_and_plan(snapshot: Snapshot, intent: Intent[SetFieldArgs, DocumentFacts]) -> PlanOutcome:
    """Gates of §9 in order, then the document's replace op and its index ops (or, for a
    list field, `plan_list`)."""
    args = intent.args
    doc = document_to_write(snapshot, intent.facts, args.path)
    field = args.field
    value = args.value
    require_key(field)
    refuse_status(field)
    refuse_identity(field)
    if is_list_write(field, value, doc.data.get(field)):
        return plan_list(snapshot, intent, doc)
    assert isinstance(value, str)  # is_list_write is true for a list
    require_value(value)
    require_one_line(value)
    to = value.strip()
    warnings = require_known_value(snapshot, field, to)
    text = document_text(snapshot, doc.path)
    split = split_frontmatter(text)
    require_frontmatter(doc, split.unclosed, field)
    current = doc.data.get(field)
    refuse_non_scalar(doc, field, current)
    before = scalar_text(current)

    lines = text.split("\n")
    close = frontmatter_close(lines)
    if close is None:  # the split found a closed block, so this cannot happen
        raise refuse(
            "no-frontmatter", f"{doc.path} has no frontmatter, so it has no {field} to set."
        )
    at = key_line(lines, close, field)
    if at is not None and before == to:
        return PlanOutcome(
            plan=Plan(TOOL, ()),
            result=_result(doc.path, field, before, to, intent.dry_run, lines[at], [], False),
        )
    inline = lines[at][len(field) + 1 :] if at is not None else None
    written, plain = write_value(field, to, quoting_style(inline), current)
    line = f"{field}: {written}"
    if at is not None:
        lines[at : continuation_end(lines, at, close)] = [line]
    else:
        lines.insert(close, line)
    new_text = "\n".join(lines)

    heading = False
    if field == "title" and before is not None:
        new_split = split_frontmatter(new_text)
        renamed = rename_h1(new_split.body, before, to)
        if renamed is not None:
            new_text = new_split.head + renamed
            heading = True

    if doc.parse_error is None:
        reread = load_yaml(split_frontmatter(new_text).yaml_text or "")
        if (
            reread.data is None
            or field not in reread.data
            or not accepts(reread.data[field], to, current, plain)
        ):
            raise refuse(
                "readback-failed",
                f"Setting {field} would leave {doc.path} with frontmatter that does not read "
                "back. Nothing was written.",
            )

    ops: list[AnyFileOp] = [replace_document(snapshot, doc.path, new_text)]
    if field in ("purpose", "title") and isinstance(current, str) and current:
        ops.extend(propagate(snapshot, doc.path, field, current, to))
    indexes = [op.path for op in ops[1:]]
    return PlanOutcome(
        plan=Plan(TOOL, tuple(ops)),
        warnings=warnings,
        result=_result(doc.path, field, before, to, intent.dry_run, line, indexes, heading),
    )


# --------------------------------------------------------------------------------------------
# List fields (issue 14)
# --------------------------------------------------------------------------------------------


def block_end(lines: list[str], index: int, close: int) -> int:
    """One past the last line of the value on line `index`: its continuation lines and the
    block list items under it, indented or not (`- x` at column 0 is valid YAML)."""
    return continuation_end(lines, index, close, list_items=True)


def list_lines(field: str, entries: list[str]) -> list[str]:
    """`<field>:` and one `  - <entry>` line per entry (`<field>: []` when empty), quoted by
    the frontmatter writer wherever a plain entry would not read back as the same string."""
    block = frontmatter_block({field: entries})
    return block.split("\n")[1:-2]


def plan_list(
    snapshot: Snapshot, intent: Intent[SetFieldArgs, DocumentFacts], doc: Doc
) -> PlanOutcome:
    """A list field set to a whole list: the entries' gates, then one replace op."""
    field = intent.args.field
    text = document_text(snapshot, doc.path)
    require_frontmatter(doc, split_frontmatter(text).unclosed, field)
    current = doc.data.get(field)
    refuse_scalar_holder(doc, field, current)
    entries = list_entries(field, intent.args.value)
    warnings = check_list_entries(snapshot, doc, field, entries)
    before = [scalar_text(item) or "" for item in current] if isinstance(current, list) else None
    lines = text.split("\n")
    close = frontmatter_close(lines)
    if close is None:  # the frontmatter gate passed, so the block is closed
        raise refuse(
            "no-frontmatter", f"{doc.path} has no frontmatter, so it has no {field} to set."
        )
    at = key_line(lines, close, field)
    written = list_lines(field, entries)
    if at is not None and before == entries:
        shown = "\n".join(lines[at : block_end(lines, at, close)])
        return PlanOutcome(
            plan=Plan(TOOL, ()),
            result=_result(doc.path, field, before, entries, intent.dry_run, shown, [], False),
        )
    if at is not None:
        lines[at : block_end(lines, at, close)] = written
    else:
        lines[close:close] = written
    new_text = "\n".join(lines)
    if doc.parse_error is None:
        reread = load_yaml(split_frontmatter(new_text).yaml_text or "")
        if reread.data is None or reread.data.get(field) != entries:
            raise refuse(
                "readback-failed",
                f"Setting {field} would leave {doc.path} with frontmatter that does not read "
                "back. Nothing was written.",
            )
    line = "\n".join(written)
    return PlanOutcome(
        plan=Plan(TOOL, (replace_document(snapshot, doc.path, new_text),)),
        warnings=warnings,
        result=_result(doc.path, field, before, entries, intent.dry_run, line, [], False),
    )


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list) else str(value)


def format_set_field(result: dict[str, Any]) -> str:
    """The human rendering of `mbank set-field` (spec 04 §9.3)."""
    path, field = result["path"], result["field"]
    if unchanged(result, "changed"):
        lines = [f"UNCHANGED {path} {field}: {_shown(result['to'])}"]
    else:
        verb = "WOULD SET" if result["dryRun"] else "SET"
        before = _shown(result["from"]) if result["from"] is not None else "(absent)"
        lines = [f"{verb} {path} {field}: {before} -> {_shown(result['to'])}"]
        lines.append(f"line: {result['line']}")
        lines.append(f"indexes: {', '.join(result['indexes']) or '(none)'}")
        if result.get("heading"):
            lines.append("heading renamed")
    lines.extend(f"warning: {warning}" for warning in result.get("warnings", ()))
    return closing(lines, result, empty_diff=False)


WRITE_TOOL = WriteTool(
    name=TOOL,
    command="set-field",
    help="change one frontmatter value (a list field: VALUE as a JSON array)",
    args=SetFieldArgs,
    facts=DocumentFacts,
    fact_paths=document_fact_paths,
    gate_and_plan=gate_and_plan,
    shape=finished("changed"),
    render=format_set_field,
    cli=(
        CliArg(("path",), "path", metavar="PATH"),
        CliArg(("field",), "field", metavar="FIELD"),
        CliArg(("value",), "value", metavar="VALUE"),
    ),
)
