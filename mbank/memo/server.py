"""The `mbank memo` MCP server: the only memo module that imports `mcp` (06 §1, §11).

It declares the tools, compacts their published schemas and turns `MemoError` into
`ToolError("<code>: <message>")`. Everything else happens in `mbank.memo.tools`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import msgspec
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from mcp.types import Tool as MCPTool
from pydantic import Field

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


def build_server(tools: MemoTools) -> MemoServer:
    """Declare the eight tools (and `do_spill` when the bridge is enabled)."""
    server = MemoServer(
        SERVER_NAME, version=mbank_version(), instructions=INSTRUCTIONS, log_level="WARNING"
    )

    @server.tool(
        description="Open items ranked by salience (or recent / priority), each with its "
        "first blockers. Start every session here.",
        annotations=READ_ONLY,
    )
    def read_pending(
        status: Annotated[list[StatusT], Field(max_length=5, description="Default: open")]
        | None = None,
        kinds: Annotated[list[KindT], Field(max_length=6)] | None = None,
        tags: Tags | None = None,
        session: Session | None = None,
        order: OrderT = "salience",
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
    ) -> CallToolResult:
        return _guard(
            "read_pending",
            lambda: tools.read_pending(status, kinds, tags, session, order, limit),
        )

    @server.tool(
        description="Items related to a query and/or an item: vector matches plus graph "
        "neighbours, exact title matches first. Call before working on a topic.",
        annotations=READ_ONLY,
    )
    def read_related(
        query: Annotated[str, Field(max_length=MAX_QUERY_CHARS)] = "",
        node_id: NodeId | None = None,
        hops: Annotated[int, Field(ge=0, le=4)] = 2,
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
        include_closed: bool = False,
    ) -> CallToolResult:
        return _guard(
            "read_related",
            lambda: tools.read_related(query, node_id, hops, limit, include_closed),
        )

    @server.tool(
        description="One item with its neighbours, transitive blockers and recent history.",
        annotations=READ_ONLY,
    )
    def read_item(node_id: NodeId, hops: Annotated[int, Field(ge=1, le=4)] = 1) -> CallToolResult:
        return _guard("read_item", lambda: tools.read_item(node_id, hops))

    @server.tool(
        description="Store a pending item as soon as it appears; links it to similar items.",
    )
    def do_remember(
        title: Title,
        idempotency_key: Key = "",
        kind: KindT = "task",
        body: Body = "",
        tags: Tags | None = None,
        priority: PriorityT = "normal",
        status: StatusT = "pending",
        session: Session | None = None,
        related_to: Annotated[list[NodeId], Field(max_length=MAX_RELATED_TO)] | None = None,
    ) -> CallToolResult:
        return _guard(
            "do_remember",
            lambda: tools.do_remember(
                title, idempotency_key, kind, body, tags, priority, status, session, related_to
            ),
        )

    @server.tool(
        description="Change an item: status (active on start, done on finish), priority, "
        "text, tags, a note, a bump. All fields or none.",
    )
    def do_update_item(
        node_id: NodeId,
        idempotency_key: Key = "",
        status: StatusT | None = None,
        priority: PriorityT | None = None,
        title: Title | None = None,
        body: Body | None = None,
        add_tags: Tags | None = None,
        remove_tags: Tags | None = None,
        note: Annotated[str, Field(max_length=MAX_NOTE_CHARS)] | None = None,
        bump: bool = False,
    ) -> CallToolResult:
        fields = (status, priority, title, body, add_tags, remove_tags, note, bump)
        update = tools.do_update_item
        return _guard("do_update_item", lambda: update(node_id, idempotency_key, *fields))

    @server.tool(description="Link two items (src blocks / depends_on / … dst), or unlink.")
    def do_link(
        src: NodeId,
        dst: NodeId,
        idempotency_key: Key = "",
        kind: EdgeKindT = "relates_to",
        weight: Annotated[float, Field(ge=0.0, le=1.0)] = 1.0,
        remove: bool = False,
    ) -> CallToolResult:
        return _guard(
            "do_link", lambda: tools.do_link(src, dst, idempotency_key, kind, weight, remove)
        )

    @server.tool(
        description="Delete an item and its edges; only for duplicates and mistakes (close "
        "finished work with do_update_item). Refused while it blocks open items.",
        annotations=DESTRUCTIVE,
    )
    def do_forget(node_id: NodeId, idempotency_key: Key = "") -> CallToolResult:
        return _guard("do_forget", lambda: tools.do_forget(node_id, idempotency_key))

    @server.tool(
        description="Which memory tool serves an intent {goal, action, node_id, status} now, "
        "and what blocks it. Ask before an action costly to undo.",
        annotations=READ_ONLY,
    )
    def can_do(
        intent: dict[str, Any],
        scope: Annotated[list[str], Field(max_length=9)] | None = None,
    ) -> CallToolResult:
        return _guard("can_do", lambda: tools.can_do(intent, scope))

    if tools.spill_enabled:

        @server.tool(
            description="Hand open items to the bank as one reviewed-later note in _inbox/. "
            "The memory is not changed.",
        )
        def do_spill(
            idempotency_key: Key = "",
            session: Session | None = None,
            limit: Annotated[int, Field(ge=1, le=500)] = 200,
            dry_run: bool = False,
        ) -> CallToolResult:
            return _guard(
                "do_spill", lambda: tools.do_spill(idempotency_key, session, limit, dry_run)
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
