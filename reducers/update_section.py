"""Planning `bank_update_section`: replace or append to one existing `##` section.

Pure (spec 03 §6). The tool never adds a section: an unknown one is refused with the list of
real ones. The section runs from its heading to the next `##` heading (H1 and H3+ lines
inside belong to it); its heading is rewritten as `## <title>`; runs of three or more
newlines in the whole body collapse to two (upstream parity). The frontmatter head is kept
byte for byte.

Choices where the spec is silent:
- the content's `\\r\\n` are read as `\\n`, like the document (§1.7);
- a write that leaves the file's text as it was is a no-op (empty plan, `updated: false`),
  like the no-ops of §1.8;
- `preview` is the first 20 lines of `"\\n".join(block)`, so it ends with the block's blank
  line when the section is shorter than 20 lines;
- a `mode` other than `replace`/`append` (the MCP schema's enum stops it first) is refused
  with reason `mode-unknown`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import msgspec

from mbank.gates.content import content_from
from mbank.gates.documents import DocumentFacts, document_fact_paths, document_to_write
from mbank.model import Intent, Plan, PlanOutcome
from mbank.parse import split_frontmatter
from mbank.paths import refuse
from mbank.plan import as_lf, document_text, replace_if_changed
from mbank.projection import Snapshot
from mbank.reducers.report import closing, finished, headline
from mbank.sections import match_section
from mbank.write_declaration import TEXT_LIMIT, CliArg, Published, WriteTool, content_flags

TOOL = "bank_update_section"
MODES = ("replace", "append")
PREVIEW_LINES = 20
_BLANK_RUN = re.compile(r"\n{3,}")


def rewrite_section(
    body: str, heading: int, end: int, title: str, content: str, mode: str
) -> tuple[str, list[str]]:
    """The new body and the section's block, by the algorithm of §6.

    `heading` is the heading's index among the body's `\\n`-split lines, `end` the next
    section heading's index (or the number of lines).
    """
    lines = body.split("\n")
    old = "\n".join(lines[heading + 1 : end]).strip()
    block = ["## " + title, ""]
    if mode == "append" and old:
        block += [old, ""]
    block += [content.strip(), ""]
    new = "\n".join(lines[:heading] + block + lines[end:])
    return _BLANK_RUN.sub("\n\n", new).rstrip() + "\n", block


class UpdateSectionArgs(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The arguments of `bank_update_section`."""

    path: Annotated[str, Published(required=True)] = ""
    section: Annotated[str, Published(words="section", required=True)] = ""
    content: Annotated[str | None, Published(min_length=1, max_length=TEXT_LIMIT)] = None
    content_file: Annotated[str | None, Published(words="contentFile")] = None
    mode: Literal["replace", "append"] = "replace"
    dry_run: bool = False


def gate_and_plan(
    snapshot: Snapshot, intent: Intent[UpdateSectionArgs, DocumentFacts]
) -> PlanOutcome:
    """Gates of §6 in order, then one replace op (or none) and the result fields."""
    args = intent.args
    doc = document_to_write(snapshot, intent.facts, args.path)
    target = args.section
    if not target.strip():
        raise refuse(
            "section-required",
            "`section` is required: this tool writes one named section, never a whole document.",
        )
    supplied = content_from(args.content, args.content_file, intent.files, "content") or ""
    if not supplied.strip():
        raise refuse(
            "content-required",
            "`content` is empty. To remove a section, edit the document by hand and say so.",
        )
    section = match_section(doc, target)
    mode = args.mode or "replace"
    if mode not in MODES:
        raise refuse("mode-unknown", f'`mode` is "replace" or "append", not "{mode}".')
    text = document_text(snapshot, doc.path)
    split = split_frontmatter(text)
    heading = section.line - 1 - split.body_offset
    later = [other.line for other in doc.sections if other.line > section.line]
    body_lines = split.body.count("\n") + 1
    end = later[0] - 1 - split.body_offset if later else body_lines
    body, block = rewrite_section(
        split.body, heading, end, section.title, as_lf(supplied), str(mode)
    )
    new_text = split.head + body
    ops, bytes_before, bytes_after = replace_if_changed(snapshot, doc.path, new_text)
    result: dict[str, Any] = {
        "path": doc.path,
        "section": section.title,
        "mode": mode,
        "updated": False,
        "dryRun": intent.dry_run,
        "bytesBefore": bytes_before,
        "bytesAfter": bytes_after,
        "preview": "\n".join("\n".join(block).split("\n")[:PREVIEW_LINES]),
    }
    return PlanOutcome(plan=Plan(TOOL, ops), result=result)


def format_update_section(result: dict[str, Any]) -> str:
    """The human rendering of `mbank update-section` (spec 04 §9.3)."""
    where = f"{result['path']} :: {result['section']} ({result['mode']})"
    sizes = f"({result['bytesBefore']} -> {result['bytesAfter']} bytes)"
    lines = [headline(result, "updated", "WOULD UPDATE", "UPDATED", f"{where}  {sizes}")]
    lines.extend(f"warning: {warning}" for warning in result.get("warnings", ()))
    lines.extend(["--- preview ---", result["preview"].rstrip("\n")])
    return closing(lines, result, empty_diff=False)


WRITE_TOOL = WriteTool(
    name=TOOL,
    command="update-section",
    help="replace or append to one ## section",
    args=UpdateSectionArgs,
    facts=DocumentFacts,
    fact_paths=document_fact_paths,
    gate_and_plan=gate_and_plan,
    shape=finished("updated"),
    render=format_update_section,
    cli=(
        CliArg(("path",), "path", metavar="PATH"),
        CliArg(("section",), "section", metavar="SECTION"),
        *content_flags("content"),
        CliArg(("--mode",), "mode", choices=MODES, default="replace"),
    ),
)
