"""The MCP surface: the only bank module that imports `mcp` (spec 04; ARCHITECTURE invariant 5).

It declares tools, resources and prompts and adapts them to the core functions the CLI calls
too; no logic lives here that a CLI call would not share. Per handler: take the process lock
(04 §1), refresh the bank, call the core, return its plain dict. A `RefusalError` becomes
`ToolError(<refusal text>)`; any other exception is a bug and becomes the `Internal error`
text of 04 §1.1. The published words and the surface decision are data in `mbank.surface`.
"""

from __future__ import annotations

import gc
import inspect
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    NotRequired,
    TypeVar,
    cast,
    get_args,
    get_origin,
)

import anyio
import msgspec
from mcp import Client
from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations
from mcp.types import Tool as MCPTool
from pydantic import Field
from typing_extensions import TypedDict

from mbank.bank_language import sampled_language
from mbank.declared_function import declared_function, keyword_parameter
from mbank.journal import mbank_version
from mbank.model import RefusalError
from mbank.reducers.registry import WRITE_TOOLS
from mbank.schema_refusal import SchemaCheckedServer
from mbank.snapshot import Bank, Snapshot
from mbank.surface import (
    INSTRUCTIONS,
    OBJECT_SCHEMA,
    PARAMETER_WORDS,
    PROMPTS,
    RESOURCES,
    SECTION_INDEX,
    SERVER_NAME,
    SINCE_WORDS,
    TOOL_WORDS,
    SurfaceChoice,
    check_before_commit_text,
    compact_schema,
    decide_surface,
    full_instructions,
    record_adr_text,
    review_inbox_text,
    route_then_read_text,
    session_start_text,
    tool_sort_key,
    tools_for,
)
from mbank.write_declaration import Published, WriteTool

if TYPE_CHECKING:  # imported by the read tools on first use, not before the handshake
    from mbank.read import PathLookup

log = logging.getLogger("mbank.server")

T = TypeVar("T")

# --------------------------------------------------------------------------------------------
# Parameter types (04 §2): bounds and enums are published exactly as the tables give them
# --------------------------------------------------------------------------------------------

LayerFilter = Literal["dna", "knowledge", "decision", "delivery", "flow", "other"]
Severity = Literal["error", "warning"]
RuleId = Literal[
    "invalid-frontmatter",
    "broken-derived-from",
    "missing-derived-from",
    "cycle-in-derived-from",
    "unregistered-doc",
    "unresolved-rule-reference",
    "unknown-enum-value",
    "ssot-conflict",
    "must-not-define-violated",
    "dangling-index-entry",
    "unknown-layer-value",
    "no-contract",
]

TEXT_LIMIT = 1_000_000  # the bodyFile cap (04 §2.1)

# A full-surface tool called on the seed surface (a client that cached an older tool list, or
# an agent told the names by CLAUDE.md before the bank exists).
NO_BANK_YET = (
    "no bank here yet; call bank_init to create one (only when the user asks for a knowledge "
    "base), then call {tool} again."
)


def _words(key: str) -> Any:
    return Field(description=PARAMETER_WORDS[key])


# One element of a `bank_read` batch: a path with its own section. No docstring: pydantic
# would publish it as a description on every tools/list.
class ReadItem(TypedDict):
    path: str
    section: NotRequired[str]


Question = Annotated[str, Field(min_length=2, max_length=1000), _words("question")]
Query = Annotated[str, Field(min_length=2, max_length=1000)]
DocKind = Annotated[str | None, _words("docKind")]
ReadPaths = Annotated[
    str | Annotated[list[str | ReadItem], Field(max_length=50)], _words("readPath")
]
Section = Annotated[str | None, _words("section")]
MaxBytes = Annotated[int | None, Field(ge=1000), _words("maxBytes")]
ProjectName = Annotated[str, Field(min_length=1, max_length=100), _words("name")]
Title = Annotated[str, Field(min_length=1)]
Purpose = Annotated[str, Field(min_length=1), _words("purpose")]
Keys = list[str] | None
Body = Annotated[str | None, Field(max_length=TEXT_LIMIT)]
BodyFile = Annotated[str | None, _words("bodyFile")]
Extra = Annotated[dict[str, Any] | None, _words("extra")]
Find = Annotated[str, Field(min_length=1, max_length=TEXT_LIMIT), _words("find")]
Replacement = Annotated[str, Field(max_length=TEXT_LIMIT)]
Content = Annotated[str | None, Field(min_length=1, max_length=TEXT_LIMIT)]
ContentFile = Annotated[str | None, _words("contentFile")]
Status = Annotated[str, Field(min_length=1)]
FieldName = Annotated[str, Field(min_length=1)]
FieldValue = Annotated[str, Field(max_length=2000)]
Reason = Annotated[str, Field(min_length=1, max_length=2000)]
Since = Annotated[str, Field(min_length=3), _words("since")]
Scope = Annotated[str | None, _words("scope")]

# --------------------------------------------------------------------------------------------
# The bank behind a session: one Bank, one search index, one lock (04 §1)
# --------------------------------------------------------------------------------------------

INTERNAL_ERROR = "Internal error ({kind}): {message}. This is a bug in mbank; nothing was written."


class BankService:
    """One bank root, its search index kept for the process, and the lock every handler holds.

    The lock is a `threading.Lock` taken by the thread that runs the core call (sync handlers
    run in worker threads), so two calls never interleave a refresh. `engine` holds optional
    write-engine overrides (`clock`, `make_id`, …) passed to every write tool; tests use them
    for fixed times and journal ids.
    """

    def __init__(self, root: str, engine: Mapping[str, Any] | None = None) -> None:
        from mbank.projection_cache import cache_for
        from mbank.search import SearchIndex

        self.bank = Bank(root, cache=cache_for(os.path.realpath(root)))
        self.index = SearchIndex()
        self.lock = threading.Lock()
        self.engine = dict(engine or {})
        self.warmed = threading.Event()
        # the cyclic collector was held off while the server started (`serve`): the warm-up
        # turns it back on once done
        self.collect_when_warm = False

    @property
    def root(self) -> str:
        """The bank root (absolute)."""
        return self.bank.root

    def now(self) -> datetime:
        """The clock the inbox ages are measured on (the engine's, when a test fixed it)."""
        clock: Callable[[], datetime] | None = self.engine.get("clock")
        return clock() if clock is not None else datetime.now(UTC)

    def guarded(self, tool: str, call: Callable[[], T]) -> T:
        """Run `call` under the lock; refusals and bugs become `ToolError` (04 §1.1)."""
        try:
            with self.lock:
                return call()
        except ToolError:
            raise
        except RefusalError as exc:
            raise ToolError(exc.refusal.message) from None
        except Exception as exc:
            log.exception("%s failed", tool)
            raise ToolError(INTERNAL_ERROR.format(kind=type(exc).__name__, message=exc)) from exc

    def read(self, tool: str, work: Callable[[Snapshot], T]) -> T:
        """A read: refresh, then `work(snapshot)`, under the lock. The refresh is as of the
        request's arrival (`Bank.refresh(not_before=…)`): a walk that began after it, while
        the request waited for the lock (the warm-up's), is not walked again."""
        arrived = time.monotonic_ns()
        return self.guarded(tool, lambda: work(self.bank.refresh(not_before=arrived)))

    def write(self, tool: WriteTool[Any, Any], arguments: dict[str, Any]) -> dict[str, Any]:
        """A declared write tool run through `mbank.writes.run_write` (None arguments dropped:
        the SDK passes every parameter, given or not)."""
        from mbank.writes import run_write

        given = {key: value for key, value in arguments.items() if value is not None}

        def call() -> dict[str, Any]:
            try:
                return _plain(run_write(tool, self.bank, given, **self.engine))
            finally:
                self.bank.forget_walk()  # the files may have changed since any walk

        return self.guarded(tool.name, call)

    def not_a_document_note(self, path: str) -> str | None:
        """The journal's "where did it go" sentence for a path (spec 03 §14.9)."""
        from mbank.journal import where_did_it_go

        return where_did_it_go(self.bank.root, path)

    def warm(self) -> None:
        """Refresh once and build the search index, so the first call is warm (04 §6.2); the
        projection cache supplies what it can and is rewritten, unlocked, if anything moved."""
        from mbank.projection_cache import Pending, warm_start

        pending: Pending | None = None
        try:
            with self.lock:
                self.index, pending = warm_start(self.bank, self.index, freeze=True)
        except Exception:  # a warm-up must never take the server down
            log.exception("warming the bank failed")
        finally:
            if self.collect_when_warm:
                gc.enable()
            self.warmed.set()
        if pending is not None and self.bank.cache is not None:
            # Not a daemon: a session that ends now still leaves the cache for the next one.
            threading.Thread(target=self.bank.cache.write, args=(pending,)).start()


def _plain(value: Any) -> dict[str, Any]:
    """The core's result as plain JSON-ready data (msgspec values converted)."""
    plain = msgspec.to_builtins(value)
    if not isinstance(plain, dict):
        raise TypeError(f"a tool returned {type(plain).__name__}, not an object")
    return plain


def _json_text(value: Any) -> str:
    """A JSON resource body: compact (issue 16; 0.1.0 indented it), UTF-8 unescaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def compact_tool_text(result: Any) -> Any:
    """A tool result whose text item is its structured content as compact JSON (issue 16).

    The SDK writes the text item with a 2-space indent, about a fifth of every answer.
    """
    if (
        isinstance(result, CallToolResult)
        and not result.is_error
        and isinstance(result.structured_content, dict)
    ):
        result.content = [TextContent(type="text", text=_json_text(result.structured_content))]
    return result


def recover_interrupted(root: str) -> list[str]:
    """Report a write a crash left half-applied (04 §6.2 step 4); rolls nothing back.

    A start reads only (issue 13): no lock, no recovery; the first write recovers.
    """
    from mbank.journal import interrupted_notices

    for notice in interrupted_notices(root):
        print(notice, file=sys.stderr, flush=True)
    return []


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------


class BankServer(SchemaCheckedServer):
    """`MCPServer` publishing compacted input schemas, `{"type": "object"}` output schemas and
    the tools in spec order (04 §1.2, §2); argument validation still uses the full models, and
    a failure reads as `invalid-arguments: …` (`mbank.schema_refusal`)."""

    surface: str
    service: BankService
    _open: Callable[[], None]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        """The SDK's call, its text item made compact JSON (`compact_tool_text`); a bank tool
        called before the bank exists names `bank_init`, not `Unknown tool`."""
        seed = getattr(self, "surface", None) == "seed"  # a bare BankServer has no surface
        if seed and name in tools_for("full") and name not in tools_for("seed"):
            raise ToolError(f"Error executing tool {name}: {NO_BANK_YET.format(tool=name)}")
        return compact_tool_text(await super().call_tool(name, arguments, context))

    async def list_tools(self) -> list[MCPTool]:
        """The SDK's list, compacted and in the order of 04 §2."""
        tools = await super().list_tools()
        published = [
            tool.model_copy(
                update={
                    "input_schema": compact_schema(tool.input_schema),
                    "output_schema": OBJECT_SCHEMA,
                }
            )
            for tool in tools
        ]
        return sorted(published, key=lambda tool: tool_sort_key(tool.name))

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Any = None
    ) -> Any:
        """The SDK's prompt, or an invalid-params error naming the prompts there are (the SDK
        answers an unknown name with error code 0 and logs a traceback)."""
        if self._prompt_manager.get_prompt(name) is None:
            known = ", ".join(prompt.name for prompt in PROMPTS)
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name}. The prompts are: {known}.")
        return await super().get_prompt(name, arguments, context)

    def open_full_surface(self) -> bool:
        """Register what the seed surface lacks (04 §6.4 step 1); False when already full."""
        if self.surface != "seed":
            return False
        self._open()
        self.surface = "full"
        return True


def _annotations(name: str) -> ToolAnnotations:
    words = TOOL_WORDS[name]
    return ToolAnnotations(
        read_only_hint=words.read_only,
        idempotent_hint=words.idempotent,
        destructive_hint=words.destructive,
    )


async def _notify_lists_changed(ctx: Context[Any, Any]) -> None:
    """Both delivery paths (04 §6.4 step 2); a failed notification is logged, never raised."""
    session = ctx.session
    senders: tuple[tuple[str, Callable[[], Awaitable[None]]], ...] = (
        ("tools list_changed", session.send_tool_list_changed),
        ("resources list_changed", session.send_resource_list_changed),
        ("prompts list_changed", session.send_prompt_list_changed),
        ("tools changed event", ctx.notify_tools_changed),
        ("resources changed event", ctx.notify_resources_changed),
        ("prompts changed event", ctx.notify_prompts_changed),
    )
    for label, send in senders:
        try:
            await send()
        except Exception:
            log.warning("could not send the %s notification", label, exc_info=True)


class WarmAfterHandshake:
    """Middleware that warms the bank once the handshake is over (04 §6.2: "the first call is
    warm"), on a background thread holding the bank lock.

    It starts on the first inbound message that is not `initialize` — the handshake-era
    `notifications/initialized`, or a 2026-07-28 client's first request — so the refresh and
    the index build never compete with the `initialize` answer for the interpreter.
    """

    def __init__(self, service: BankService) -> None:
        self.service = service
        self.started = False

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        """Pass the message on; start the warm-up after the first one past `initialize`."""
        result = await call_next(ctx)
        if not self.started and getattr(ctx, "method", "initialize") != "initialize":
            self.started = True
            # Not a daemon: a session that ends (stdin closed) while the warm-up still runs
            # waits for it, so the projection cache it writes is there for the next session.
            threading.Thread(target=self.service.warm, name="mbank-warm", daemon=False).start()
        return result


def _mcp_annotation(annotation: Any) -> Any:
    """An argument's type as the SDK publishes it: `Published` bounds and words become
    pydantic `Field`s (bounds first, then the description), exactly as hand-written
    `Annotated[T, Field(…), Field(description=…)]` parameters would."""
    if get_origin(annotation) is not Annotated:
        return annotation
    base, *metadata = get_args(annotation)
    published = next((item for item in metadata if isinstance(item, Published)), None)
    if published is None:
        return base
    fields: list[Any] = []
    bounds = {
        key: value
        for key, value in (
            ("min_length", published.min_length),
            ("max_length", published.max_length),
            ("ge", published.ge),
            ("le", published.le),
        )
        if value is not None
    }
    if bounds:
        fields.append(Field(**cast("dict[str, Any]", bounds)))
    if published.words is not None:
        fields.append(_words(published.words))
    return Annotated[(base, *fields)] if fields else base


def _published_required(annotation: Any) -> bool:
    """Whether an argument is published as required though its Struct field has a default."""
    metadata = get_args(annotation)[1:] if get_origin(annotation) is Annotated else ()
    return any(isinstance(item, Published) and item.required for item in metadata)


def write_tool_function(tool: WriteTool[Any, Any], server: BankServer) -> Callable[..., Any]:
    """The MCP tool function of a declared write tool: one keyword parameter per field of its
    arguments Struct, in order, published through `_mcp_annotation`; `bank_init` (the tool
    that creates its root) is async and opens a seed session's full surface after a real run."""
    parameters = [
        keyword_parameter(
            field.encode_name,
            _mcp_annotation(field.type),
            inspect.Parameter.empty
            if field.required or _published_required(field.type)
            else field.default,
        )
        for field in msgspec.structs.fields(tool.args)
    ]

    def call(**arguments: Any) -> dict[str, Any]:
        return server.service.write(tool, arguments)

    async def call_then_open(ctx: Context[Any, Any], **arguments: Any) -> dict[str, Any]:
        result: dict[str, Any] = await anyio.to_thread.run_sync(lambda: call(**arguments))
        if not arguments.get("dryRun") and server.open_full_surface():
            await _notify_lists_changed(ctx)
            result["surfaceOpened"] = True
        return result

    if not tool.creates_root:
        return declared_function(tool.name, parameters, call, dict[str, Any])
    context = keyword_parameter("ctx", Context[Any, Any], inspect.Parameter.empty)
    parameters.insert(1, context)
    return declared_function(tool.name, parameters, call_then_open, dict[str, Any])


def read_tools(service: BankService) -> dict[str, Callable[..., Any]]:
    """The read tools of one session: thin adapters over the core functions the CLI calls."""
    read = service.read

    def lookup(snapshot: Snapshot) -> PathLookup:
        from mbank.read import PathLookup

        return PathLookup(
            lambda given: service.bank.relative(given, snapshot), service.not_a_document_note
        )

    # -- reads ------------------------------------------------------------------------------

    def bank_route(
        question: Question,
        limit: Annotated[int, Field(ge=1, le=25)] = 5,
        docKind: DocKind = None,
        layer: LayerFilter | None = None,
    ) -> dict[str, Any]:
        from mbank.route import route

        return read(
            "bank_route",
            lambda snapshot: route(
                snapshot, service.index, question, limit=limit, kind=docKind, layer=layer
            ),
        )

    def bank_read(
        path: ReadPaths,
        section: Section = None,
        maxBytes: MaxBytes = None,
        frontmatter: Annotated[bool, _words("readFrontmatter")] = False,
    ) -> dict[str, Any]:
        from mbank.read import read as read_documents

        return read(
            "bank_read",
            lambda snapshot: read_documents(
                snapshot,
                cast("str | list[str | dict[str, Any]]", path),
                section=section,
                max_bytes=maxBytes,
                lookup=lookup(snapshot),
                frontmatter=frontmatter,
            ),
        )

    def bank_search(
        query: Query,
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
        docKind: DocKind = None,
        layer: LayerFilter | None = None,
        status: str | None = None,
    ) -> dict[str, Any]:
        from mbank.search import search

        return read(
            "bank_search",
            lambda snapshot: search(
                snapshot,
                service.index,
                query,
                limit=limit,
                kind=docKind,
                layer=layer,
                status=status,
            ),
        )

    def bank_changed(since: Since) -> dict[str, Any]:
        from mbank.changed import changed

        return read("bank_changed", lambda snapshot: changed(snapshot, since))

    def bank_drift(
        thresholdDays: Annotated[int, Field(ge=0, le=3650)] = 90, scope: Scope = None
    ) -> dict[str, Any]:
        from mbank.drift import drift

        return read(
            "bank_drift",
            lambda snapshot: drift(snapshot, threshold_days=thresholdDays, scope=scope),
        )

    def bank_graph(
        path: str,
        direction: Literal["up", "down", "both"] = "down",
        depth: Annotated[int, Field(ge=1, le=6)] = 2,
        limit: Annotated[int, Field(ge=1, le=300), _words("graphLimit")] = 60,
        neighbours: Annotated[bool, _words("neighbours")] = True,
        format: Literal["json", "mermaid"] = "json",
    ) -> dict[str, Any]:
        from mbank.graph import graph

        return read(
            "bank_graph",
            lambda snapshot: graph(
                snapshot,
                path,
                direction=direction,
                depth=depth,
                limit=limit,
                neighbours=neighbours,
                format=format,
                lookup=lookup(snapshot),
            ),
        )

    def bank_validate(
        scope: Scope = None, severity: Severity | None = None, rule: RuleId | None = None
    ) -> dict[str, Any]:
        from mbank.validate import validate

        return read(
            "bank_validate",
            lambda snapshot: validate(snapshot, scope=scope, severity=severity, rule=rule),
        )

    def bank_contract_diff(other: Annotated[str | None, _words("other")] = None) -> dict[str, Any]:
        from mbank.contract_diff import contract_diff

        return read("bank_contract_diff", lambda snapshot: contract_diff(snapshot, other))

    return {
        "bank_route": bank_route,
        "bank_read": bank_read,
        "bank_search": bank_search,
        "bank_changed": bank_changed,
        "bank_drift": bank_drift,
        "bank_graph": bank_graph,
        "bank_validate": bank_validate,
        "bank_contract_diff": bank_contract_diff,
    }


def resource_readers(service: BankService) -> dict[str, Callable[..., str]]:
    """The resources' readers, by resource name (04 §3)."""
    # -- resources --------------------------------------------------------------------------

    def index() -> str:
        from mbank.resources import index_map

        return _json_text(service.read("memorybank://index", index_map))

    def index_section(section: str) -> str:
        from mbank.resources import section_index

        return _json_text(
            service.read(SECTION_INDEX.uri, lambda snapshot: section_index(snapshot, section))
        )

    def frontmatter_schema() -> str:
        from mbank.resources import frontmatter_schema as schema_text

        return service.read("memorybank://schema/frontmatter", schema_text)

    def health() -> str:
        from mbank.health import health as health_data

        return _json_text(service.read("memorybank://health", health_data))

    def inbox() -> str:
        from mbank.inbox import inbox_listing

        return _json_text(
            service.read(
                "memorybank://inbox", lambda snapshot: inbox_listing(snapshot, service.now())
            )
        )

    def journal() -> str:
        from mbank.journal import journal_resource

        return _json_text(
            service.read("memorybank://journal", lambda _snapshot: journal_resource(service.root))
        )

    return {
        "index": index,
        "frontmatter-schema": frontmatter_schema,
        "health": health,
        "inbox": inbox,
        "journal": journal,
        SECTION_INDEX.name: index_section,
    }


def prompt_functions() -> dict[str, Callable[..., str]]:
    """The prompts, by name (04 §4)."""
    # -- prompts ----------------------------------------------------------------------------

    def session_start(
        since: Annotated[str, Field(description=SINCE_WORDS)] = "HEAD~20",
    ) -> str:
        return session_start_text(since)

    def route_then_read(question: str) -> str:
        return route_then_read_text(question)

    def check_before_commit(
        scope: Annotated[str | None, Field(description="A subdirectory to validate")] = None,
    ) -> str:
        return check_before_commit_text(scope)

    def record_adr(decision: str) -> str:
        return record_adr_text(decision)

    def review_inbox() -> str:
        return review_inbox_text()

    return {
        "session-start": session_start,
        "route-then-read": route_then_read,
        "check-before-commit": check_before_commit,
        "record-adr": record_adr,
        "review-inbox": review_inbox,
    }


def build_server(
    root: str | None = None,
    *,
    off: Sequence[str] = (),
    choice: SurfaceChoice | None = None,
    engine: Mapping[str, Any] | None = None,
    warm: bool = False,
) -> BankServer:
    """The server for one bank: the surface decided (04 §6.2) unless `choice` is given.

    `engine` overrides the write engine's clock and id factory (tests). `warm` refreshes the
    bank and builds its search index right after the handshake (what `serve` does in the
    full surface). Only what the surface shows is registered (04 §6.3); a seed session
    registers the rest after a real `bank_init`.
    """
    if choice is None:
        if root is None:
            raise ValueError("build_server needs a root or a surface choice")
        choice = decide_surface(root, off, recover=recover_interrupted)
    service = BankService(choice.root, engine)
    instructions = INSTRUCTIONS[choice.surface]
    if choice.surface == "full":  # the documents' language as measured, not assumed
        instructions = full_instructions(sampled_language(choice.root))
    server = BankServer(
        SERVER_NAME,
        version=mbank_version(),
        instructions=instructions,
        log_level=log_level(),
        middleware=[WarmAfterHandshake(service)] if warm and choice.surface == "full" else [],
    )
    server.surface = choice.surface
    server.service = service
    tools: dict[str, Callable[..., Any]] = {
        **read_tools(service),
        **{tool.name: write_tool_function(tool, server) for tool in WRITE_TOOLS},
    }
    readers = resource_readers(service)
    prompts = prompt_functions()

    def register_tools(names: Sequence[str]) -> None:
        for name in names:
            words = TOOL_WORDS[name]
            server.add_tool(
                tools[name],
                name=name,
                title=words.title,
                description=words.description,
                annotations=_annotations(name),
            )

    def register_resources_and_prompts() -> None:
        for resource in (*RESOURCES, SECTION_INDEX):
            server.resource(
                resource.uri,
                name=resource.name,
                description=resource.description,
                mime_type=resource.mime_type,
            )(readers[resource.name])
        for prompt in PROMPTS:
            server.prompt(name=prompt.name, title=prompt.title, description=prompt.description)(
                prompts[prompt.name]
            )

    def open_rest() -> None:
        register_tools([name for name in tools_for("full") if name not in tools_for("seed")])
        register_resources_and_prompts()

    server._open = open_rest
    register_tools(tools_for(choice.surface))
    if choice.surface == "full":
        register_resources_and_prompts()
    return server


LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LOG_LEVELS: tuple[LogLevel, ...] = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def log_level() -> LogLevel:
    """`MBANK_LOG` (default and fallback `WARNING`)."""
    wanted = os.environ.get("MBANK_LOG", "WARNING").upper()
    return next((level for level in LOG_LEVELS if level == wanted), "WARNING")


# --------------------------------------------------------------------------------------------
# Running over stdio
# --------------------------------------------------------------------------------------------


def initialization_options(server: BankServer) -> Any:
    """The handshake options advertising `listChanged: true` for tools, resources and prompts.

    `MCPServer.run()` advertises false and has no public switch, so this reaches the
    low-level server through a private attribute (04 §6.3). It is the one place that does,
    and `tests/test_stdio.py` checks the advertised flags over real stdio.
    """
    lowlevel = server._lowlevel_server
    return lowlevel.create_initialization_options(
        NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
    )


async def run_stdio(server: BankServer) -> None:
    """Serve one connection over stdin/stdout until stdin closes."""
    from mbank.stdio_guard import serve_guarded_stdio

    await serve_guarded_stdio(server._lowlevel_server, initialization_options(server))


WAITING_LINE = (
    "mbank: serving {root} ({surface} surface); waiting for an MCP client on stdio "
    "(an MCP client starts this command itself; Ctrl-C to stop).\n"
)


def serve(root: str, off: Sequence[str] = ()) -> int:
    """`mbank serve` / `mbank --root X`: decide the surface, recover, serve (04 §6.2, §9.6).

    Crash recovery runs before the first request is read. In the full surface the bank is
    refreshed and the search index built on a background thread holding the bank lock, once
    the handshake is answered (`WarmAfterHandshake`), so the first call finds it warm.
    """
    stderr_logging()
    choice = decide_surface(root, off, recover=recover_interrupted)
    server = build_server(choice=choice, warm=True)
    if not gc.isenabled():  # held off while starting (`mbank.cli`): on again once warm
        if choice.surface == "full":
            server.service.collect_when_warm = True
        else:  # no warm-up in this surface
            gc.enable()
    if sys.stdin.isatty():  # a person ran it by hand: say why nothing seems to happen
        sys.stderr.write(WAITING_LINE.format(root=choice.root, surface=choice.surface))
    anyio.run(run_stdio, server)
    return 0


def in_process_client(server: BankServer, **options: Any) -> Client:
    """An `mcp.Client` speaking to `server` in process (for `mbank demo` and tests)."""
    return Client(server, **options)


def stderr_logging() -> None:
    """Logs go to stderr only; stdout carries protocol messages (04 §1)."""
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, log_level()))
