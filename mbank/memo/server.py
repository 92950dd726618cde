"""The `mbank memo` MCP server: the only memo module that imports `mcp` (06 §1, §11).

It declares the tools, compacts their published schemas and turns `MemoError` into
`ToolError("<code>: <message>")`. Everything else happens in `mbank.memo.tools`.
"""

from __future__ import annotations

import argparse
import inspect
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

import anyio
import msgspec
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from mcp.types import Tool as MCPTool
from pydantic import Field

from mbank.declared_function import declared_function, keyword_parameter
from mbank.journal import mbank_version
from mbank.memo.embedder import Embedder, HashingEmbedder, SentenceTransformerEmbedder
from mbank.memo.model import (
    DEFAULT_AUTOLINK_MAX,
    DEFAULT_COLD_AFTER_OPS,
    DEFAULT_FORGET_SWEEP_BATCH,
    DEFAULT_HALF_LIFE_H,
    DEFAULT_IDEM_MAX_ENTRIES,
    DEFAULT_MAX_NODES,
    MAX_BODY_BYTES,
    MAX_KEY_CHARS,
    MAX_NOTE_CHARS,
    MAX_QUERY_CHARS,
    MAX_RELATED_TO,
    MAX_SESSION_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MAX_TITLE_CHARS,
    MemoConfig,
    MemoError,
)
from mbank.memo.spill import InboxWriter, bank_inbox_writer
from mbank.memo.store import MemoStore
from mbank.memo.tools import MemoTools
from mbank.schema_refusal import MEMO_SCHEMA_CODES, SchemaCheckedServer
from mbank.surface import OBJECT_SCHEMA, compact_schema

SERVER_NAME = "mbank-memo"
INSTRUCTIONS = (
    "Volatile working memory for this session: a graph of pending items (tasks, blockers, "
    "decisions, questions, insights, artifacts). Open a session with read_pending; before "
    "working on a topic call read_related. Record anything left to do as soon as it appears "
    "with do_remember; mark it active on start and done on finish with do_update_item. Ask "
    "can_do before an action that is costly to undo. Use do_forget only for duplicates and "
    "mistakes; closed items are forgotten automatically after enough later writes. Everything "
    "ends with the process unless do_spill hands it to the bank."
)

log = logging.getLogger("mbank.memo")

KindT = Literal["task", "blocker", "decision", "question", "insight", "artifact"]
StatusT = Literal["pending", "active", "blocked", "done", "dropped"]
PriorityT = Literal["critical", "high", "normal", "low"]
EdgeKindT = Literal["blocks", "depends_on", "subtask_of", "relates_to", "supersedes", "touches"]
OrderT = Literal["salience", "recent", "priority"]

Key = Annotated[
    str,
    Field(
        max_length=MAX_KEY_CHARS,
        description='Retry-safe key (absent or "" = none); kept 24 h or the last 2000 keyed writes',
    ),
]
NodeId = Annotated[str, Field(max_length=12)]
Tags = Annotated[list[Annotated[str, Field(max_length=MAX_TAG_CHARS)]], Field(max_length=MAX_TAGS)]
Session = Annotated[str, Field(max_length=MAX_SESSION_CHARS)]
Title = Annotated[str, Field(min_length=1, max_length=MAX_TITLE_CHARS)]
Body = Annotated[str, Field(max_length=MAX_BODY_BYTES, description="At most 8192 UTF-8 bytes")]

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True)
DESTRUCTIVE = ToolAnnotations(destructive_hint=True)


class MemoServer(SchemaCheckedServer):
    """`MCPServer` publishing compact input schemas and `{"type": "object"}` output schemas."""

    schema_code, schema_codes = "invalid_argument", MEMO_SCHEMA_CODES  # 06 §15

    async def list_tools(self) -> list[MCPTool]:
        """The SDK's list with schemas compacted; validation still uses the full models."""
        tools = await super().list_tools()
        return [
            tool.model_copy(
                update={
                    "input_schema": compact_schema(tool.input_schema),
                    "output_schema": OBJECT_SCHEMA,
                }
            )
            for tool in tools
        ]


def _guard(tool: str, call: Callable[[], dict[str, Any]]) -> CallToolResult:
    """The answer as compact JSON text plus the same value as structured content (issue 19:
    the SDK's default text was indented JSON, ~1.5× the characters); refusals reach the model
    as `<code>: <message>`, bugs as `internal_error`."""
    try:
        value = call()
        text = msgspec.json.encode(value).decode("utf-8")
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=value
        )
    except MemoError as error:
        raise ToolError(str(error)) from error
    except Exception as error:
        log.exception("memo tool %s failed", tool)
        raise ToolError(
            f"internal_error: {type(error).__name__}: {error}. This is a bug in mbank; "
            "nothing was applied."
        ) from error


# What each parameter of a memo tool is on the MCP surface: its type, bounds and words. The
# parameters themselves (their order and defaults) are those of the `MemoTools` method of the
# same name, so they are written once; a parameter whose default is None is published as
# optional. A name whose bounds differ from tool to tool is in `PUBLISHED_IN_TOOL`.
PUBLISHED: dict[str, Any] = {
    "node_id": NodeId,
    "src": NodeId,
    "dst": NodeId,
    "idempotency_key": Key,
    "title": Title,
    "body": Body,
    "kind": KindT,
    "status": StatusT,
    "priority": PriorityT,
    "tags": Tags,
    "add_tags": Tags,
    "remove_tags": Tags,
    "session": Session,
    "related_to": Annotated[list[NodeId], Field(max_length=MAX_RELATED_TO)],
    "note": Annotated[str, Field(max_length=MAX_NOTE_CHARS)],
    "bump": bool,
    "weight": Annotated[float, Field(ge=0.0, le=1.0)],
    "remove": bool,
    "kinds": Annotated[list[KindT], Field(max_length=6)],
    "order": OrderT,
    "query": Annotated[str, Field(max_length=MAX_QUERY_CHARS)],
    "include_closed": bool,
    "intent": dict[str, Any],
    "scope": Annotated[list[str], Field(max_length=9)],
    "dry_run": bool,
}
PUBLISHED_IN_TOOL: dict[tuple[str, str], Any] = {
    ("read_pending", "status"): Annotated[
        list[StatusT], Field(max_length=5, description="Default: open")
    ],
    ("read_pending", "limit"): Annotated[int, Field(ge=1, le=100)],
    ("read_related", "hops"): Annotated[int, Field(ge=0, le=4)],
    ("read_related", "limit"): Annotated[int, Field(ge=1, le=100)],
    ("read_item", "hops"): Annotated[int, Field(ge=1, le=4)],
    ("do_link", "kind"): EdgeKindT,
    ("do_spill", "limit"): Annotated[int, Field(ge=1, le=500)],
}


class MemoToolWords(NamedTuple):
    """How one memo tool is described to the model."""

    name: str
    description: str
    annotations: ToolAnnotations | None = None


# The eight tools in the order they are listed; `do_spill` only when the bridge is enabled.
MEMO_TOOLS = (
    MemoToolWords(
        "read_pending",
        "Open items ranked by salience (or recent / priority), each with its first blockers. "
        "Start every session here.",
        READ_ONLY,
    ),
    MemoToolWords(
        "read_related",
        "Items related to a query and/or an item: vector matches plus graph neighbours, exact "
        "title matches first. Call before working on a topic.",
        READ_ONLY,
    ),
    MemoToolWords(
        "read_item",
        "One item with its neighbours, transitive blockers and recent history.",
        READ_ONLY,
    ),
    MemoToolWords(
        "do_remember",
        "Store a pending item as soon as it appears; links it to similar items.",
    ),
    MemoToolWords(
        "do_update_item",
        "Change an item: status (active on start, done on finish), priority, text, tags, a "
        "note, a bump. All fields or none.",
    ),
    MemoToolWords("do_link", "Link two items (src blocks / depends_on / … dst), or unlink."),
    MemoToolWords(
        "do_forget",
        "Delete an item and its edges; only for duplicates and mistakes (close finished work "
        "with do_update_item). Refused while it blocks open items.",
        DESTRUCTIVE,
    ),
    MemoToolWords(
        "can_do",
        "Which memory tool serves an intent {goal, action, node_id, status} now, and what "
        "blocks it. Ask before an action costly to undo.",
        READ_ONLY,
    ),
)
SPILL = MemoToolWords(
    "do_spill",
    "Hand open items to the bank as one reviewed-later note in _inbox/. The memory is not changed.",
)


def _published(tool: str, parameter: str) -> Any:
    """The MCP annotation of one parameter of one memo tool."""
    if (tool, parameter) in PUBLISHED_IN_TOOL:
        return PUBLISHED_IN_TOOL[tool, parameter]
    if parameter in PUBLISHED:
        return PUBLISHED[parameter]
    raise LookupError(
        f"MemoTools.{tool} has a parameter {parameter!r} that the memo server does not "
        "publish; declare its MCP type in PUBLISHED (or PUBLISHED_IN_TOOL)."
    )


def memo_tool_function(tools: MemoTools, name: str) -> Callable[..., CallToolResult]:
    """The MCP function of one memo tool: the parameters of the `MemoTools` method of that
    name (read off its class, after `self`), published as `PUBLISHED` says; the method is
    looked up on `tools` at each call and its answer and refusals are shaped by `_guard`."""
    declared = list(inspect.signature(getattr(type(tools), name)).parameters.values())[1:]
    parameters = []
    for parameter in declared:
        published = _published(name, parameter.name)
        if parameter.default is None:
            published = published | None
        parameters.append(keyword_parameter(parameter.name, published, parameter.default))

    def call(**arguments: Any) -> CallToolResult:
        return _guard(name, lambda: getattr(tools, name)(**arguments))

    return declared_function(name, parameters, call, CallToolResult)


def build_server(tools: MemoTools) -> MemoServer:
    """Declare the eight tools (and `do_spill` when the bridge is enabled)."""
    server = MemoServer(
        SERVER_NAME, version=mbank_version(), instructions=INSTRUCTIONS, log_level="WARNING"
    )
    for words in (*MEMO_TOOLS, SPILL) if tools.spill_enabled else MEMO_TOOLS:
        server.add_tool(
            memo_tool_function(tools, words.name),
            name=words.name,
            description=words.description,
            annotations=words.annotations,
        )
    return server


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mbank memo", description="Serve the volatile working memory over stdio."
    )
    parser.add_argument("--bank", type=Path, help="enable do_spill into this bank")
    parser.add_argument("--half-life-h", type=float, default=DEFAULT_HALF_LIFE_H)
    parser.add_argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES)
    parser.add_argument("--cold-after-ops", type=int, default=DEFAULT_COLD_AFTER_OPS)
    parser.add_argument("--forget-batch", type=int, default=DEFAULT_FORGET_SWEEP_BATCH)
    parser.add_argument("--autolink-max", type=int, default=DEFAULT_AUTOLINK_MAX)
    parser.add_argument("--autolink-threshold", type=float, default=None)
    parser.add_argument("--idem-max", type=int, default=DEFAULT_IDEM_MAX_ENTRIES)
    parser.add_argument("--embedder", choices=("hashing", "minilm"), default="hashing")
    return parser


def tools_from_args(argv: list[str] | None, inbox_writer: InboxWriter | None = None) -> MemoTools:
    """Parse the options of 06 §1 into a ready `MemoTools`."""
    args = _parser().parse_args(argv)
    config = MemoConfig(
        half_life_h=args.half_life_h,
        max_nodes=max(1, args.max_nodes),
        cold_after_ops=args.cold_after_ops,
        forget_batch=args.forget_batch,
        autolink_max=args.autolink_max,
        autolink_threshold=args.autolink_threshold,
        idem_max=max(1, args.idem_max),
    )
    embedder: Embedder = (
        SentenceTransformerEmbedder() if args.embedder == "minilm" else HashingEmbedder()
    )
    store = MemoStore(config, embedder)
    bank = args.bank.resolve() if args.bank is not None else None
    writer = (inbox_writer or bank_inbox_writer) if bank is not None else None
    return MemoTools(store, bank_root=bank, inbox_writer=writer)


def main(argv: list[str] | None = None) -> int:
    """`mbank memo [options]`: serve over stdio until stdin closes."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    tools = tools_from_args(argv)
    from mbank.stdio_guard import serve_guarded_stdio

    lowlevel = build_server(tools)._lowlevel_server
    anyio.run(serve_guarded_stdio, lowlevel, lowlevel.create_initialization_options())
    return 0
