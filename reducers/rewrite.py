"""Planning `bank_rewrite`: replace the whole body, keep the frontmatter and the index entry.

Pure (spec 03 §7, **mbank:** new). The head is kept byte for byte, with the blank lines that
followed the closing `---`; no index is touched. The same body again is a no-op.

Choices where the spec is silent:
- a document without frontmatter that starts with a byte-order mark keeps it (§1.7 keeps a
  BOM in a kept head; here the BOM is all there is of a head);
- `preview` is the first 20 lines of the body as supplied (leading blank lines removed),
  without the kept blank lines after the frontmatter;
- the supplied body's `\\r\\n` are read as `\\n`, like the document (§1.7);
- a no-op (the same body) returns no heading warnings: nothing is written.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from mbank.gates.content import content_from
from mbank.gates.documents import DocumentFacts, document_fact_paths, document_to_write
from mbank.model import Intent, Plan, PlanOutcome
from mbank.parse import scan_body, split_frontmatter
from mbank.paths import refuse
from mbank.plan import as_lf, document_text, replace_if_changed
from mbank.projection import Snapshot
from mbank.reducers.report import closing, finished, headline
from mbank.write_declaration import TEXT_LIMIT, CliArg, Published, WriteTool, content_flags

TOOL = "bank_rewrite"
PREVIEW_LINES = 20
BOM = "\ufeff"


def _leading_newlines(body: str) -> str:
    return body[: len(body) - len(body.lstrip("\n"))]


def _without_leading_blank_lines(text: str) -> str:
    lines = text.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


def new_body(old_body: str, supplied: str, has_frontmatter: bool) -> str:
    """The body to write: the kept lead, the supplied body trimmed, one final newline."""
    lead = _leading_newlines(old_body) if has_frontmatter else ""
    if not has_frontmatter and old_body.startswith(BOM):
        lead = BOM
    return lead + _without_leading_blank_lines(as_lf(supplied)).rstrip() + "\n"


def heading_warnings(body: str, title: str) -> list[str]:
    """Warnings about the new body's first H1: missing, or different from the title."""
    first_h1 = scan_body(body).first_h1
    if first_h1 is None:
        return ["The new body has no level-one heading."]
    if first_h1.strip() != title:
        return [
            f'The new body\'s first heading "{first_h1.strip()}" differs from the title "{title}".'
        ]
    return []


class RewriteArgs(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The arguments of `bank_rewrite`."""

    path: Annotated[str, Published(required=True)] = ""
    body: Annotated[str | None, Published(max_length=TEXT_LIMIT)] = None
    body_file: Annotated[str | None, Published(words="bodyFile")] = None
    dry_run: bool = False


def gate_and_plan(snapshot: Snapshot, intent: Intent[RewriteArgs, DocumentFacts]) -> PlanOutcome:
    """Gates of §7 in order, then one replace op (or none: the same body) and the result."""
    args = intent.args
    doc = document_to_write(snapshot, intent.facts, args.path)
    supplied = content_from(args.body, args.body_file, intent.files, "body") or ""
    if not supplied.strip():
        raise refuse(
            "body-required",
            "`body` is empty. bank_rewrite replaces the whole body and never leaves a document "
            "without one.",
        )
    first = next(line for line in as_lf(supplied).split("\n") if line.strip())
    if first.strip() == "---":
        raise refuse(
            "body-has-frontmatter",
            'The new body starts with a "---" frontmatter block. bank_rewrite keeps the '
            "document's frontmatter as it is; pass the body only.",
        )
    text = document_text(snapshot, doc.path)
    split = split_frontmatter(text)
    body = new_body(split.body, supplied, split.has_frontmatter)
    new_text = split.head + body
    warnings = heading_warnings(body, doc.title)
    ops, bytes_before, bytes_after = replace_if_changed(snapshot, doc.path, new_text)
    shown = _without_leading_blank_lines(body.removeprefix(BOM)).rstrip("\n")
    result: dict[str, Any] = {
        "path": doc.path,
        "rewritten": False,
        "dryRun": intent.dry_run,
        "bytesBefore": bytes_before,
        "bytesAfter": bytes_after,
        "warnings": [],
        "preview": "\n".join(shown.split("\n")[:PREVIEW_LINES]),
    }
    if not ops:
        warnings = []
    return PlanOutcome(plan=Plan(TOOL, ops), warnings=tuple(warnings), result=result)


def format_rewrite(result: dict[str, Any]) -> str:
    """The human rendering of `mbank rewrite` (spec 04 §9.3)."""
    path = result["path"]
    sizes = f"({result['bytesBefore']} -> {result['bytesAfter']} bytes)"
    lines = [headline(result, "rewritten", "WOULD REWRITE", "REWROTE", f"{path}  {sizes}")]
    lines.extend(f"warning: {warning}" for warning in result.get("warnings", ()))
    lines.extend(["--- preview ---", result["preview"]])
    return closing(lines, result, empty_diff=False)


WRITE_TOOL = WriteTool(
    name=TOOL,
    command="rewrite",
    help="replace the whole body; frontmatter and index kept",
    args=RewriteArgs,
    facts=DocumentFacts,
    fact_paths=document_fact_paths,
    gate_and_plan=gate_and_plan,
    shape=finished("rewritten", warnings_always=True),
    render=format_rewrite,
    cli=(
        CliArg(("path",), "path", metavar="PATH"),
        *content_flags("body"),
    ),
)
