"""Planning `bank_edit`: replace one exact fragment of a document's body.

Pure (spec 03 §5). Only the body is searched — the frontmatter head is out of reach and kept
byte for byte — optionally narrowed to one `##` section's span. The fragment must occur
exactly once: replacing the first of several is a guess, and this tool does not guess.

Choice where the spec is silent: `find` and `replace` are compared and searched with their
`\\r\\n` read as `\\n`, like the document itself (§1.7), so a fragment copied from a CRLF
file still matches.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any

import msgspec

from mbank.gates.documents import DocumentFacts, document_fact_paths, document_to_write
from mbank.model import Intent, Plan, PlanOutcome
from mbank.parse import split_frontmatter
from mbank.paths import refuse
from mbank.plan import as_lf, document_text, replace_document
from mbank.projection import Snapshot
from mbank.reducers.report import closing, finished
from mbank.sections import match_section, section_span
from mbank.write_declaration import TEXT_LIMIT, CliArg, Published, WriteTool

TOOL = "bank_edit"
CONTEXT = 80


class EditArgs(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The arguments of `bank_edit`."""

    path: Annotated[str, Published(required=True)] = ""
    find: Annotated[
        str, Published(min_length=1, max_length=TEXT_LIMIT, words="find", required=True)
    ] = ""
    replace: Annotated[str, Published(max_length=TEXT_LIMIT, required=True)] = ""
    section: Annotated[str | None, Published(words="section")] = None
    dry_run: bool = False


def gate_and_plan(snapshot: Snapshot, intent: Intent[EditArgs, DocumentFacts]) -> PlanOutcome:
    """Gates of §5 in order, then the one replace op and the result fields."""
    args = intent.args
    doc = document_to_write(snapshot, intent.facts, args.path)
    find = as_lf(args.find)
    replace = as_lf(args.replace)
    if find == "":
        raise refuse(
            "find-required",
            "`find` is required: this tool replaces an exact fragment, never a whole document.",
        )
    if find == replace:
        raise refuse("find-equals-replace", "`find` and `replace` are identical; nothing to do.")
    text = document_text(snapshot, doc.path)
    head = split_frontmatter(text).head
    start, end = len(head), len(text)
    wanted = args.section
    title: str | None = None
    if wanted is not None and wanted.strip():
        section = match_section(doc, wanted)
        title = section.title
        start, end = section_span(text, doc, section)
        start = max(start, len(head))
    where = f'{doc.path} under "{title}"' if title is not None else doc.path
    count = text.count(find, start, end)
    if count == 0:
        raise refuse(
            "not-found",
            f"Not found in {where}: {json.dumps(find[:80], ensure_ascii=False)}. Read the "
            "document first — the text must match exactly, whitespace included.",
        )
    if count > 1:
        raise refuse(
            "found-several",
            f"Found {count} times in {where}. Give more surrounding text, or pass section to "
            "narrow it: replacing the first of several is a guess, and this tool does not guess.",
        )
    at = text.find(find, start, end)
    new_text = text[:at] + replace + text[at + len(find) :]
    op = replace_document(snapshot, doc.path, new_text)
    assert op.content is not None
    new_body = new_text[len(head) :]
    in_body = at - len(head)
    context = new_body[max(0, in_body - CONTEXT) : in_body + len(replace) + CONTEXT]
    result: dict[str, Any] = {"path": doc.path}
    if title is not None:
        result["section"] = title
    result.update(
        {
            "edited": False,
            "dryRun": intent.dry_run,
            "bytesBefore": len(snapshot.raw[doc.path].encode("utf-8")),
            "bytesAfter": len(op.content),
            "context": context,
        }
    )
    return PlanOutcome(plan=Plan(TOOL, (op,)), result=result)


def format_edit(result: Mapping[str, Any]) -> str:
    """The human rendering of `mbank edit` (spec 04 §9.3)."""
    section = f' under "{result["section"]}"' if "section" in result else ""
    sizes = f"({result['bytesBefore']} -> {result['bytesAfter']} bytes)"
    if result["dryRun"]:
        head = f"WOULD EDIT {result['path']}{section}  {sizes}"
    else:
        head = f"EDITED {result['path']}{section}  {sizes}"
    lines = [head]
    lines.extend(f"warning: {warning}" for warning in result.get("warnings", ()))
    lines.extend(["--- context ---", result["context"]])
    return closing(lines, result)


WRITE_TOOL = WriteTool(
    name=TOOL,
    command="edit",
    help="replace one exact fragment of a document's body",
    args=EditArgs,
    facts=DocumentFacts,
    fact_paths=document_fact_paths,
    gate_and_plan=gate_and_plan,
    shape=finished("edited"),
    render=format_edit,
    cli=(
        CliArg(("path",), "path", metavar="PATH"),
        CliArg(
            ("--find",), "find", required=True, metavar="TEXT", help="exact, whitespace included"
        ),
        CliArg(("--replace",), "replace", required=True, metavar="TEXT"),
        CliArg(("--section",), "section", metavar="S", help="a ## section that narrows the search"),
    ),
)
