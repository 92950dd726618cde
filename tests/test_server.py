"""The MCP surface in process (spec 04 §1–§6, 07 §2.5, §3.24, §3.25).

Every tool, resource and prompt goes through the SDK's own `Client` against the real server
object (`build_server`); results are snapshotted with `_meta` stripped and the roots
normalised. Surface switching (seed, full, off; opening after `bank_init` on both
notification paths) is proven here too; real stdio is `test_stdio.py`.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest
from git_history import commit_all, init_repo
from mcp import Client
from mcp.client.subscriptions import PromptsListChanged, ResourcesListChanged, ToolsListChanged
from mcp.shared.exceptions import MCPError
from planners import Clock, Ids

from mbank.server import BankServer, build_server
from mbank.surface import (
    INSTRUCTIONS,
    LAYER_FILTERS,
    PROMPTS,
    RESOURCES,
    compact_schema,
    decide_surface,
    has_bank,
)
from mbank.validation import RULES

pytestmark = pytest.mark.anyio

Unchanged = Callable[[Path], AbstractContextManager[None]]
TESTS = Path(__file__).resolve().parent

TOOL_NAMES = [
    "bank_route",
    "bank_read",
    "bank_init",
    "bank_create",
    "bank_edit",
    "bank_update_section",
    "bank_rewrite",
    "bank_set_status",
    "bank_set_field",
    "bank_promote",
    "bank_discard",
    "bank_undo",
    "bank_search",
    "bank_changed",
    "bank_materialize_flows",
    "bank_drift",
    "bank_graph",
    "bank_validate",
    "bank_contract_diff",
]
RESOURCE_URIS = [
    "memorybank://index",
    "memorybank://schema/frontmatter",
    "memorybank://health",
    "memorybank://inbox",
    "memorybank://journal",
]
PROMPT_NAMES = [
    "session-start",
    "route-then-read",
    "check-before-commit",
    "record-adr",
    "review-inbox",
]
# 04 §2: (title, readOnlyHint, idempotentHint, destructiveHint); None = not emitted
ANNOTATIONS: dict[str, tuple[str, bool | None, bool | None, bool | None]] = {
    "bank_route": ("Route a question to documents", True, True, None),
    "bank_read": ("Read bank documents", True, True, None),
    "bank_init": ("Create a bank where there is none", False, False, None),
    "bank_create": ("Create a governed document", False, False, None),
    "bank_edit": ("Replace one exact fragment of a document", False, False, None),
    "bank_update_section": (
        "Write one named section of an existing document",
        False,
        False,
        None,
    ),
    "bank_rewrite": ("Replace the whole body of a document", False, True, True),
    "bank_set_status": ("Move a document to another lifecycle status", False, True, None),
    "bank_set_field": ("Change one value in a document's frontmatter", False, True, None),
    "bank_promote": ("Promote a captured note out of quarantine", False, False, None),
    "bank_discard": ("Drop a captured note that is not worth keeping", False, False, True),
    "bank_undo": ("Undo the newest write", False, False, True),
    "bank_search": ("Full-text search of document bodies", True, True, None),
    "bank_changed": ("What moved in the bank since a point in time", True, None, None),
    "bank_materialize_flows": ("Take ownership of the document templates", None, False, False),
    "bank_drift": ("Where the code has moved on without the document", True, None, None),
    "bank_graph": ("Walk the derived_from graph", True, True, None),
    "bank_validate": ("Check the bank against its own governance", True, True, None),
    "bank_contract_diff": ("Compare this bank's contract with another", True, True, None),
}


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def engine(project: Path) -> dict[str, Any]:
    """Fixed times and journal ids for every write (07 §1)."""
    return {"clock": Clock(), "make_id": Ids(), "cwd": str(project)}


def server_on(root: Path, **options: Any) -> BankServer:
    return build_server(str(root), engine=engine(root.parent), **options)


def normalised(value: Any, root: Path) -> Any:
    """The bank root → `<ROOT>`, its parent → `<PROJECT>` (07 §2.2)."""
    text = json.dumps(value, ensure_ascii=False)
    text = text.replace(str(root), "<ROOT>").replace(str(root.parent), "<PROJECT>")
    return json.loads(text)


def dumped(item: Any) -> dict[str, Any]:
    """A listed item as it goes over the wire, `_meta` stripped."""
    data: dict[str, Any] = item.model_dump(by_alias=True, exclude_none=True, mode="json")
    data.pop("_meta", None)
    return data


async def call(client: Client, name: str, arguments: dict[str, Any] | None = None) -> Any:
    """A successful call's `structuredContent`, checked against its text content."""
    result = await client.call_tool(name, arguments or {})
    assert not result.is_error, result.content[0].text  # type: ignore[union-attr]
    assert len(result.content) == 1
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return result.structured_content


async def refusal(client: Client, name: str, arguments: dict[str, Any]) -> str:
    """The refusal text of a failed call, after the SDK's `Error executing tool <name>: `."""
    result = await client.call_tool(name, arguments)
    assert result.is_error
    text: str = result.content[0].text  # type: ignore[union-attr]
    prefix = f"Error executing tool {name}: "
    assert text.startswith(prefix), text
    return text[len(prefix) :]


async def resource(client: Client, uri: str) -> tuple[str, str]:
    """A resource's (mime type, text)."""
    result = await client.read_resource(uri)
    assert len(result.contents) == 1
    content = result.contents[0]
    return str(content.mime_type), content.text  # type: ignore[union-attr]


@pytest.fixture(autouse=True)
def _no_ambient_log_level(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MBANK_LOG", raising=False)


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    """The base fixture at `<tmp>/project/memory_bank`."""
    from fixture_banks import copy_fixture

    return copy_fixture(tmp_path / "project" / "memory_bank", overlay=False)


# --------------------------------------------------------------------------------------------
# What is published (04 §1.2, §2, §3, §4, §5)
# --------------------------------------------------------------------------------------------


async def test_full_surface_lists_nineteen_tools_five_resources_five_prompts_in_order(
    bank: Path,
) -> None:
    async with Client(server_on(bank)) as client:
        assert client.instructions == INSTRUCTIONS["full"]
        tools = (await client.list_tools()).tools
        resources = (await client.list_resources()).resources
        prompts = (await client.list_prompts()).prompts
    assert [tool.name for tool in tools] == TOOL_NAMES
    assert [str(item.uri) for item in resources] == RESOURCE_URIS
    assert [item.name for item in resources] == [r.name for r in RESOURCES]
    assert [prompt.name for prompt in prompts] == PROMPT_NAMES
    assert [prompt.title for prompt in prompts] == [p.title for p in PROMPTS]


async def test_titles_and_annotations_are_the_tables(bank: Path) -> None:
    async with Client(server_on(bank)) as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        title, read_only, idempotent, destructive = ANNOTATIONS[tool.name]
        assert tool.title == title
        wire = dumped(tool)["annotations"]
        expected = {
            key: value
            for key, value in (
                ("readOnlyHint", read_only),
                ("idempotentHint", idempotent),
                ("destructiveHint", destructive),
            )
            if value is not None
        }
        assert wire == expected, tool.name


def _keywords(schema: Any, found: set[str], *, property_map: bool = False) -> None:
    if isinstance(schema, list):
        for item in schema:
            _keywords(item, found)
    elif isinstance(schema, dict):
        for key, value in schema.items():
            if not property_map:
                found.add(key)
                if key == "anyOf":
                    assert {"type": "null"} not in value
            _keywords(value, found, property_map=not property_map and key == "properties")


async def test_published_schemas_are_compact_and_outputs_are_plain_objects(bank: Path) -> None:
    async with Client(server_on(bank)) as client:
        tools = [dumped(tool) for tool in (await client.list_tools()).tools]
    for tool in tools:
        found: set[str] = set()
        _keywords(tool["inputSchema"], found)
        assert not found & {"title", "$ref", "$defs"}, tool["name"]
        assert "null" not in json.dumps(tool["inputSchema"]), tool["name"]
        assert tool["outputSchema"] == {"type": "object"}
        assert len(tool["description"]) <= 300
        for prop in tool["inputSchema"]["properties"].values():
            assert len(prop.get("description", "")) <= 80
    # a property that happens to be called `title` survives the compaction
    create = next(tool for tool in tools if tool["name"] == "bank_create")
    assert create["inputSchema"]["properties"]["title"] == {"minLength": 1, "type": "string"}


async def test_bounds_and_enums_are_published_as_the_tables_give_them(bank: Path) -> None:
    async with Client(server_on(bank)) as client:
        tools = {
            tool.name: dumped(tool)["inputSchema"] for tool in (await client.list_tools()).tools
        }
    route = tools["bank_route"]["properties"]
    assert (route["question"]["minLength"], route["question"]["maxLength"]) == (2, 1000)
    assert (route["limit"]["minimum"], route["limit"]["maximum"], route["limit"]["default"]) == (
        1,
        25,
        5,
    )
    assert route["layer"]["enum"] == list(LAYER_FILTERS)
    assert tools["bank_route"]["required"] == ["question"]
    assert tools["bank_read"]["properties"]["path"]["anyOf"][1]["maxItems"] == 50
    assert tools["bank_read"]["properties"]["maxBytes"]["minimum"] == 1000
    assert tools["bank_search"]["properties"]["limit"]["maximum"] == 50
    assert tools["bank_graph"]["properties"]["direction"]["enum"] == ["up", "down", "both"]
    assert tools["bank_graph"]["properties"]["format"]["enum"] == ["json", "mermaid"]
    assert tools["bank_graph"]["properties"]["limit"]["maximum"] == 300
    assert tools["bank_validate"]["properties"]["rule"]["enum"] == list(RULES)
    assert tools["bank_validate"]["properties"]["severity"]["enum"] == ["error", "warning"]
    assert tools["bank_drift"]["properties"]["thresholdDays"]["maximum"] == 3650
    assert tools["bank_update_section"]["properties"]["mode"]["enum"] == ["replace", "append"]
    assert tools["bank_discard"]["properties"]["reason"]["maxLength"] == 2000
    assert tools["bank_set_field"]["properties"]["value"]["maxLength"] == 2000
    assert tools["bank_init"]["properties"]["name"]["maxLength"] == 100
    assert tools["bank_create"]["properties"]["body"]["maxLength"] == 1_000_000
    assert tools["bank_changed"]["properties"]["since"]["minLength"] == 3


async def test_tools_prompts_and_resources_payloads(bank: Path, snapshot: Any) -> None:
    async with Client(server_on(bank)) as client:
        payload = {
            "tools": [dumped(tool) for tool in (await client.list_tools()).tools],
            "prompts": [dumped(prompt) for prompt in (await client.list_prompts()).prompts],
            "resources": [dumped(item) for item in (await client.list_resources()).resources],
        }
    assert payload == snapshot


def test_compaction_inlines_refs_collapses_null_and_keeps_a_property_named_title() -> None:
    schema = {
        "title": "toolArguments",
        "type": "object",
        "$defs": {"Item": {"title": "Item", "type": "object", "properties": {"a": {}}}},
        "properties": {
            "title": {"title": "Title", "type": "string"},
            "item": {"anyOf": [{"$ref": "#/$defs/Item"}, {"type": "null"}], "default": None},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
        },
        "required": ["title"],
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "item": {"type": "object", "properties": {"a": {}}},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "required": ["title"],
    }


# --------------------------------------------------------------------------------------------
# Reads (spec 02 through the surface)
# --------------------------------------------------------------------------------------------


async def test_route_ranks_domain_rules_first(bank: Path, snapshot: Any) -> None:
    async with Client(server_on(bank)) as client:
        result = await call(client, "bank_route", {"question": "filter thresholds"})
        filtered = await call(
            client, "bank_route", {"question": "queue choice", "limit": 2, "layer": "decision"}
        )
    assert result["results"][0]["path"] == "domain/rules.md"
    assert normalised({"plain": result, "filtered": filtered}, bank) == snapshot


async def test_read_single_sectioned_and_batch(bank: Path, snapshot: Any) -> None:
    async with Client(server_on(bank)) as client:
        whole = await call(client, "bank_read", {"path": "domain/rules.md"})
        section = whole["availableSections"][0]
        one = await call(client, "bank_read", {"path": "domain/rules.md", "section": section})
        batch = await call(
            client,
            "bank_read",
            {
                "path": [
                    "nowhere.md",
                    "features/FT-001/brief.md",
                    {"path": "domain/rules.md", "section": section},
                ],
                "maxBytes": 1000,
            },
        )
    assert one["section"] == section
    assert batch["failed"] == [
        {"path": "nowhere.md", "error": "Not a document of this bank: nowhere.md"}
    ]
    assert normalised({"whole": whole, "section": one, "batch": batch}, bank) == snapshot


async def test_read_of_a_missing_document_is_refused_with_its_text(bank: Path) -> None:
    async with Client(server_on(bank)) as client:
        text = await refusal(client, "bank_read", {"path": "memory_bank/nowhere.md"})
    assert text == "Not a document of this bank: memory_bank/nowhere.md"


async def test_search_finds_a_term_with_an_excerpt(bank: Path, snapshot: Any) -> None:
    async with Client(server_on(bank)) as client:
        result = await call(client, "bank_search", {"query": "intake gate"})
        empty = await call(client, "bank_search", {"query": "zebrafish"})
    assert result["results"] and result["results"][0]["excerpt"]
    assert "hint" in empty
    assert normalised({"hits": result, "none": empty}, bank) == snapshot


async def test_graph_json_and_mermaid(bank: Path, snapshot: Any) -> None:
    async with Client(server_on(bank)) as client:
        down = await call(client, "bank_graph", {"path": "domain/rules.md"})
        up = await call(
            client,
            "bank_graph",
            {"path": "features/FT-001/brief.md", "direction": "up", "format": "mermaid"},
        )
        bare = await call(client, "bank_graph", {"path": "domain/rules.md", "neighbours": False})
    assert "features/FT-001/brief.md" in [node["path"] for node in down["nodes"]]
    assert down["neighbours"] == []
    assert up["mermaid"].startswith("flowchart")
    assert "neighbours" not in bare
    assert normalised({"down": down, "up": up}, bank) == snapshot


async def test_validate_whole_bank_and_with_a_rule_filter(bank: Path, snapshot: Any) -> None:
    async with Client(server_on(bank)) as client:
        everything = await call(client, "bank_validate")
        broken = await call(client, "bank_validate", {"rule": "broken-derived-from"})
        errors = await call(client, "bank_validate", {"severity": "error", "scope": "domain"})
    assert broken["total"] == 1
    assert normalised({"all": everything, "broken": broken, "errors": errors}, bank) == snapshot


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The base fixture at `<tmp>/repo/memory_bank` in a git repository with dated history:
    an anchored document committed with its code in January, the code changed in August."""
    from fixture_banks import copy_fixture

    repo = init_repo(tmp_path / "repo")
    root = copy_fixture(repo / "memory_bank", overlay=False)
    (repo / "src").mkdir()
    (repo / "src" / "intake.py").write_text("LIMIT = 1\n", encoding="utf-8")
    (root / "engineering" / "intake.md").write_text(
        "---\ntitle: Intake Module\ndoc_kind: engineering\ndoc_function: canonical\n"
        "purpose: How the intake code is laid out.\nstatus: active\nderived_from:\n"
        "  - ../domain/rules.md\nanchors:\n  - src/intake.py\n  - src/removed.py\n---\n"
        "# Intake Module\n",
        encoding="utf-8",
    )
    commit_all(repo, "2026-01-05T10:00:00+00:00", "first")
    (repo / "src" / "intake.py").write_text("LIMIT = 2\n", encoding="utf-8")
    (root / "orphan.md").unlink()
    commit_all(repo, "2026-08-01T10:00:00+00:00", "code moved on")
    return root


async def test_changed_and_drift_read_git_through_dulwich(project: Path, snapshot: Any) -> None:
    async with Client(server_on(project)) as client:
        since = await call(client, "bank_changed", {"since": "HEAD~1"})
        drift = await call(client, "bank_drift", {"thresholdDays": 30})
        bad = await refusal(client, "bank_changed", {"since": "not-a-ref"})
    assert [change["path"] for change in since["changes"]] == ["orphan.md"]
    assert drift["drifted"][0]["anchor"] == "src/intake.py"
    assert bad
    assert normalised({"changed": since, "drift": drift, "badRef": bad}, project) == snapshot


async def test_changed_by_date_outside_git_lists_by_mtime(bank: Path, snapshot: Any) -> None:
    async with Client(server_on(bank)) as client:
        result = await call(client, "bank_changed", {"since": "2001-01-01"})
        drift = await call(client, "bank_drift")
    assert result["mode"] == "mtime"
    assert drift["mode"] == "none"
    assert normalised({"changed": result, "drift": drift}, bank) == snapshot


async def test_contract_diff_against_the_starter_and_another_bank(
    bank: Path, tmp_path: Path, snapshot: Any
) -> None:
    from fixture_banks import copy_fixture

    copy_fixture(tmp_path / "project" / "other", overlay=True)
    async with Client(server_on(bank)) as client:
        starter = await call(client, "bank_contract_diff")
        other = await call(client, "bank_contract_diff", {"other": "other"})
        missing = await refusal(client, "bank_contract_diff", {"other": "nowhere"})
    assert starter["there"]["root"] == "starter"
    assert missing == "Not a directory: nowhere"
    assert normalised({"starter": starter, "other": other}, bank) == snapshot


# --------------------------------------------------------------------------------------------
# Resources (04 §3)
# --------------------------------------------------------------------------------------------


async def test_every_resource_reads_as_specified(bank: Path, snapshot: Any) -> None:
    note = bank / "_inbox" / "idea.md"
    note.parent.mkdir()
    note.write_text(
        "---\ntitle: An idea\ndoc_kind: domain\npurpose: Something to sort out.\n"
        "status: draft\n---\n# An idea\n",
        encoding="utf-8",
    )
    # 3 days and an hour before the fixed clock's first reading (2026-09-14T12:05:01Z)
    stamp = 1_789_387_501 - 3 * 86_400 - 3_600
    os.utime(note, (stamp, stamp))
    read: dict[str, Any] = {}
    async with Client(server_on(bank)) as client:
        for uri in RESOURCE_URIS:
            mime, text = await resource(client, uri)
            read[uri] = {"mimeType": mime, "content": text if mime == "text/markdown" else None}
            if mime == "application/json":
                # issue 16: compact JSON (0.1.0 indented it)
                compact = json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
                assert text == compact
                read[uri]["content"] = json.loads(text)
        _mime, inbox_section = await resource(client, "memorybank://index/_inbox")
    index = read["memorybank://index"]["content"]
    assert index["count"] == 16  # 15 documents without the two templates, plus the inbox note
    assert {"section": "_inbox", "count": 1, "layers": {"inbox": 1}} in index["sections"]
    assert [entry["path"] for entry in json.loads(inbox_section)["documents"]] == ["_inbox/idea.md"]
    # the recent list follows the files' mtimes, which a copied fixture does not fix
    recent = index.pop("recent")
    assert len(recent) == 8 and all(set(r) == {"path", "title", "modified"} for r in recent)
    assert "# Frontmatter Schema" in read["memorybank://schema/frontmatter"]["content"]
    health = read["memorybank://health"]["content"]
    assert health["documents"] == 18
    assert health["byRule"]["broken-derived-from"] == 1
    assert read["memorybank://inbox"]["content"]["entries"][0]["ageDays"] == 3
    assert read["memorybank://journal"]["content"] == {"root": str(bank), "total": 0, "records": []}
    assert normalised(read, bank) == snapshot


async def test_the_index_resource_counts_fifteen_documents_without_templates(bank: Path) -> None:
    async with Client(server_on(bank)) as client:
        _mime, text = await resource(client, "memorybank://index")
        _mime, health = await resource(client, "memorybank://health")
        _mime, root_files = await resource(client, "memorybank://index/.")
        _mime, unknown = await resource(client, "memorybank://index/nowhere")
    assert json.loads(text)["count"] == 15
    assert sum(section["count"] for section in json.loads(text)["sections"]) == 15
    assert json.loads(health)["documents"] == 17
    assert all("/" not in entry["path"] for entry in json.loads(root_files)["documents"])
    assert json.loads(unknown)["count"] == 0
    assert json.loads(unknown)["hint"].startswith(
        "No section 'nowhere' in this bank; the sections are: ., adr, broken, dna"
    )


async def test_schema_resource_in_degraded_mode_and_without_the_file(tmp_path: Path) -> None:
    degraded = tmp_path / "degraded"
    degraded.mkdir()
    (degraded / "note.md").write_text("# A note\n", encoding="utf-8")
    governed = tmp_path / "governed"
    (governed / "dna").mkdir(parents=True)
    (governed / "dna" / "rules.md").write_text("# Rules\n", encoding="utf-8")
    async with Client(build_server(str(degraded))) as client:
        _mime, without_contract = await resource(client, "memorybank://schema/frontmatter")
    async with Client(build_server(str(governed))) as client:
        _mime, without_file = await resource(client, "memorybank://schema/frontmatter")
    assert without_contract == (
        "This bank has no dna/frontmatter.md. The server runs in degraded mode: routing and "
        "reading only, no contract checks."
    )
    assert without_file == "This bank has no dna/frontmatter.md."


async def test_an_unknown_resource_is_the_sdks_invalid_params_error(bank: Path) -> None:
    async with Client(server_on(bank)) as client:
        with pytest.raises(MCPError) as raised:
            await client.read_resource("memorybank://nothing")
    assert raised.value.error.code == -32602
    assert raised.value.error.message == "Unknown resource: memorybank://nothing"


async def test_reads_and_resources_never_write(bank: Path, assert_unchanged: Unchanged) -> None:
    with assert_unchanged(bank):
        async with Client(server_on(bank)) as client:
            await call(client, "bank_route", {"question": "intake gate"})
            await call(client, "bank_read", {"path": ["domain/rules.md", "orphan.md"]})
            await call(client, "bank_search", {"query": "queue"})
            await call(client, "bank_graph", {"path": "dna/principles.md", "direction": "both"})
            await call(client, "bank_validate")
            await call(client, "bank_changed", {"since": "2001-01-01"})
            await call(client, "bank_drift")
            await call(client, "bank_contract_diff")
            for uri in RESOURCE_URIS:
                await resource(client, uri)
            await call(client, "bank_create", {**NOTE, "dryRun": True})
    assert not (bank / ".mbank").exists()


# --------------------------------------------------------------------------------------------
# Prompts (04 §4)
# --------------------------------------------------------------------------------------------


async def test_prompts_render_with_and_without_their_optional_arguments(
    bank: Path, snapshot: Any
) -> None:
    calls: list[tuple[str, dict[str, str] | None]] = [
        ("session-start", None),
        ("session-start", {"since": "2026-09-01"}),
        ("route-then-read", {"question": "Как устроен фильтр?"}),
        ("check-before-commit", None),
        ("check-before-commit", {"scope": "domain"}),
        ("record-adr", {"decision": "Use one queue per tenant"}),
        ("review-inbox", None),
    ]
    rendered: list[dict[str, Any]] = []
    async with Client(server_on(bank)) as client:
        for name, arguments in calls:
            result = await client.get_prompt(name, arguments)
            assert len(result.messages) == 1 and result.messages[0].role == "user"
            rendered.append(
                {"prompt": name, "arguments": arguments, "text": result.messages[0].content.text}  # type: ignore[union-attr]
            )
    assert 'since: "HEAD~20"' in rendered[0]["text"]
    assert 'since: "2026-09-01"' in rendered[1]["text"]
    assert 'scope: "domain"' in rendered[4]["text"]
    assert rendered == snapshot


# --------------------------------------------------------------------------------------------
# Writes (spec 03 through the surface)
# --------------------------------------------------------------------------------------------

NOTE = {
    "docKind": "domain",
    "path": "domain/pricing.md",
    "title": "Pricing Rules",
    "purpose": "How a job's price is computed; read before touching the quote code.",
    "derivedFrom": ["../dna/governance.md"],
    "canonicalFor": ["price_formula"],
    "body": "## Formula\n\nBase plus surcharge.\n\n## Rounding\n\nHalf up.\n",
}


async def test_create_dry_run_then_real_run_then_journal(bank: Path, snapshot: Any) -> None:
    async with Client(server_on(bank)) as client:
        dry = await call(client, "bank_create", {**NOTE, "dryRun": True})
        assert not (bank / "domain" / "pricing.md").exists()
        done = await call(client, "bank_create", NOTE)
        _mime, journal = await resource(client, "memorybank://journal")
        again = await refusal(client, "bank_create", NOTE)
    assert dry["dryRun"] is True and dry["created"] is False and dry["diff"]
    assert "journalId" not in dry
    assert done["created"] is True and "diff" not in done
    assert json.loads(journal)["records"][0]["id"] == done["journalId"]
    assert again
    assert normalised({"dryRun": dry, "created": done, "again": again}, bank) == snapshot


async def test_document_writes_dry_run_and_apply(bank: Path, snapshot: Any) -> None:
    results: dict[str, Any] = {}
    async with Client(server_on(bank)) as client:
        await call(client, "bank_create", NOTE)
        path = "domain/pricing.md"
        edits: list[tuple[str, dict[str, Any]]] = [
            ("bank_edit", {"path": path, "find": "Base plus surcharge.", "replace": "Base."}),
            (
                "bank_update_section",
                {"path": path, "section": "Rounding", "content": "Half up, to cents."},
            ),
            (
                "bank_update_section",
                {"path": path, "section": "Rounding", "content": "Never down.", "mode": "append"},
            ),
            ("bank_set_field", {"path": path, "field": "title", "value": "Pricing"}),
            ("bank_set_status", {"path": path, "status": "active"}),
            (
                "bank_rewrite",
                {"path": path, "body": "# Pricing\n\n## Formula\n\nBase.\n\n## Rounding\n\nUp.\n"},
            ),
        ]
        for tool, arguments in edits:
            dry = await call(client, tool, {**arguments, "dryRun": True})
            done = await call(client, tool, arguments)
            assert dry["dryRun"] is True and "diff" in dry and "journalId" not in dry
            assert done["dryRun"] is False and "journalId" in done
            results.setdefault(tool, []).append({"dryRun": dry, "applied": done})
        unchanged = await call(client, "bank_set_status", {"path": path, "status": "active"})
        assert unchanged["changed"] is False and "journalId" not in unchanged
        refused = await refusal(
            client, "bank_edit", {"path": path, "find": "absent", "replace": "x"}
        )
    results["noOp"] = unchanged
    results["refused"] = refused
    assert normalised(results, bank) == snapshot


async def test_inbox_capture_promote_and_discard(bank: Path, snapshot: Any) -> None:
    async with Client(server_on(bank)) as client:
        first = await call(client, "bank_create", {**NOTE, "inbox": True})
        second = await call(
            client,
            "bank_create",
            {**NOTE, "path": "domain/taxes.md", "canonicalFor": ["tax_rule"], "inbox": True},
        )
        promoted = await call(
            client, "bank_promote", {"path": first["path"], "to": "domain/pricing.md"}
        )
        discard_dry = await call(
            client,
            "bank_discard",
            {"path": second["path"], "reason": "Folded into domain/pricing.md", "dryRun": True},
        )
        discarded = await call(
            client,
            "bank_discard",
            {"path": second["path"], "reason": "Folded into domain/pricing.md"},
        )
        gone = await refusal(client, "bank_read", {"path": second["path"]})
        outside = await refusal(client, "bank_discard", {"path": "orphan.md", "reason": "no"})
    assert first["path"].startswith("_inbox/")
    assert promoted["promoted"] is True
    assert gone.startswith(f"Not a document of this bank: {second['path']}. It was discarded")
    assert (
        normalised(
            {
                "captured": first,
                "promoted": promoted,
                "discardDryRun": discard_dry,
                "discarded": discarded,
                "gone": gone,
                "outside": outside,
            },
            bank,
        )
        == snapshot
    )


async def test_materialize_flows_dry_run(bank: Path, snapshot: Any) -> None:
    async with Client(server_on(bank)) as client:
        owned = await refusal(client, "bank_materialize_flows", {"dryRun": True})
        forced = await call(client, "bank_materialize_flows", {"force": True, "dryRun": True})
    assert forced["directories"] == ["flows/templates"]
    assert forced["warnings"]
    forced["diff"] = f"<{len(forced['diff'])} characters>"
    assert normalised({"owned": owned, "forcedDryRun": forced}, bank) == snapshot


# --------------------------------------------------------------------------------------------
# Refusals and errors (04 §1.1)
# --------------------------------------------------------------------------------------------


SCHEMA_FIX = "({fix} and call {tool} again, as its input schema describes)."


@pytest.mark.parametrize(
    ("tool", "arguments", "problem"),
    [
        ("bank_route", {"question": "queue", "limit": 0}, "`limit` must be at least 1"),
        (
            "bank_route",
            {"question": "queue", "layer": "inbox"},
            "`layer` must be one of 'dna', 'knowledge', 'decision', 'delivery', 'flow' or 'other'",
        ),
        ("bank_route", {}, "`question` is required"),
        ("bank_route", {"question": 5}, "`question` must be a string"),
        (
            "bank_route",
            {"question": "x" * 1001},
            "`question` is too long (at most 1000 characters)",
        ),
        (
            "bank_route",
            {"question": "q", "limit": "many"},
            "`question` is too short (at least 2 characters); `limit` must be an integer",
        ),
        (
            "bank_create",
            {"path": "x.md"},
            "`docKind` is required; `title` is required; `purpose` is required",
        ),
    ],
)
async def test_a_schema_violation_is_one_sentence_naming_the_argument(
    bank: Path, tool: str, arguments: dict[str, Any], problem: str
) -> None:
    async with Client(server_on(bank)) as client:
        text = await refusal(client, tool, arguments)
    fix = "fix them" if ";" in problem else "fix it"
    assert text == f"invalid-arguments: {problem} " + SCHEMA_FIX.format(fix=fix, tool=tool)
    assert "pydantic" not in text and "validation error" not in text


async def test_an_unknown_tool_is_the_sdks_answer(bank: Path) -> None:
    async with Client(server_on(bank)) as client:
        result = await client.call_tool("bank_teleport", {})
    assert result.is_error
    assert result.content[0].text == "Unknown tool: bank_teleport"  # type: ignore[union-attr]


async def test_an_unexpected_exception_is_reported_as_a_bug(
    bank: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mbank.route

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("the scorer fell over")

    monkeypatch.setattr(mbank.route, "route", broken)
    async with Client(server_on(bank)) as client:
        text = await refusal(client, "bank_route", {"question": "queue"})
    assert text == (
        "Internal error (RuntimeError): the scorer fell over. This is a bug in mbank; nothing "
        "was written."
    )


async def test_two_concurrent_calls_are_serialised(bank: Path) -> None:
    server = server_on(bank)
    real_refresh = server.service.bank.refresh
    inside: list[int] = []
    spans: list[tuple[float, float]] = []
    guard = threading.Lock()

    def slow_refresh(not_before: int | None = None) -> Any:
        with guard:
            inside.append(1)
            overlapping = len(inside) > 1
        started = time.perf_counter()
        time.sleep(0.05)
        snapshot = real_refresh(not_before=not_before)
        with guard:
            inside.pop()
        spans.append((started, time.perf_counter()))
        assert not overlapping
        return snapshot

    server.service.bank.refresh = slow_refresh  # type: ignore[method-assign]
    async with Client(server) as client, anyio.create_task_group() as group:
        for question in ("intake gate", "queue choice", "filter thresholds"):
            group.start_soon(call, client, "bank_route", {"question": question})
    assert len(spans) == 3
    ordered = sorted(spans)
    assert all(earlier[1] <= later[0] for earlier, later in itertools.pairwise(ordered))


# --------------------------------------------------------------------------------------------
# Surfaces (04 §6, 07 §3.25)
# --------------------------------------------------------------------------------------------


async def _lists(client: Client) -> tuple[list[str], list[str], list[str]]:
    tools = [tool.name for tool in (await client.list_tools()).tools]
    resources = [str(item.uri) for item in (await client.list_resources()).resources]
    prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
    return tools, resources, prompts


async def test_seed_surface_offers_only_bank_init(tmp_path: Path, snapshot: Any) -> None:
    root = tmp_path / "project" / "memory_bank"
    async with Client(server_on(root)) as client:
        assert client.instructions == INSTRUCTIONS["seed"]
        assert await _lists(client) == (["bank_init"], [], [])
        no_bank = await refusal(client, "bank_route", {"question": "queue"})
        unknown = await client.call_tool("bank_teleport", {})
        listed = [dumped(tool) for tool in (await client.list_tools()).tools]
    assert no_bank == (
        "no bank here yet; call bank_init to create one (only when the user asks for a "
        "knowledge base), then call bank_route again."
    )
    assert unknown.content[0].text == "Unknown tool: bank_teleport"  # type: ignore[union-attr]
    assert listed == snapshot


async def test_init_opens_the_full_surface_for_a_handshake_era_client(
    tmp_path: Path, snapshot: Any
) -> None:
    root = tmp_path / "project" / "memory_bank"
    seen: list[str] = []

    async def handler(message: Any) -> None:
        seen.append(type(message).__name__)

    server = server_on(root)
    async with Client(server, mode="legacy", message_handler=handler) as client:
        result = await call(client, "bank_init", {"name": "Demo Project"})
        with anyio.fail_after(5):
            while len(seen) < 3:
                await anyio.sleep(0.01)
        tools, resources, prompts = await _lists(client)
        assert client.instructions == INSTRUCTIONS["seed"]
        validation = await call(client, "bank_validate")
    assert result["surfaceOpened"] is True and result["created"] is True
    assert seen == [
        "ToolListChangedNotification",
        "ResourceListChangedNotification",
        "PromptListChangedNotification",
    ]
    assert (tools, resources, prompts) == (TOOL_NAMES, RESOURCE_URIS, PROMPT_NAMES)
    assert validation["total"] == 0
    assert has_bank(str(root))
    assert normalised(result, root) == snapshot


async def test_init_opens_the_full_surface_for_a_2026_client_on_its_listen_stream(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project" / "memory_bank"
    events: list[Any] = []
    async with Client(server_on(root)) as client:
        assert client.protocol_version == "2026-07-28"
        async with client.listen(
            tools_list_changed=True, resources_list_changed=True, prompts_list_changed=True
        ) as stream:
            result = await call(client, "bank_init", {"name": "Demo"})
            with anyio.fail_after(5):
                async for event in stream:
                    events.append(event)
                    if len(events) == 3:
                        break
        tools, resources, prompts = await _lists(client)
    assert result["surfaceOpened"] is True
    assert sorted(type(event).__name__ for event in events) == sorted(
        [ToolsListChanged.__name__, ResourcesListChanged.__name__, PromptsListChanged.__name__]
    )
    assert (tools, resources, prompts) == (TOOL_NAMES, RESOURCE_URIS, PROMPT_NAMES)


async def test_a_dry_run_or_refused_init_notifies_nothing_and_changes_no_list(
    tmp_path: Path, assert_unchanged: Unchanged
) -> None:
    root = tmp_path / "project" / "memory_bank"
    seen: list[str] = []

    async def handler(message: Any) -> None:
        seen.append(type(message).__name__)

    async with Client(server_on(root), mode="legacy", message_handler=handler) as client:
        dry = await call(client, "bank_init", {"name": "Demo", "dryRun": True})
        refused = await refusal(client, "bank_init", {"name": "Two\nlines"})
        await anyio.sleep(0.05)
        assert await _lists(client) == (["bank_init"], [], [])
    assert "surfaceOpened" not in dry and dry["dryRun"] is True
    assert refused == "`name` must fit on one line: it is the project's name."
    assert seen == []
    assert not root.exists()


async def test_init_in_a_full_session_notifies_nothing(bank: Path) -> None:
    seen: list[str] = []

    async def handler(message: Any) -> None:
        seen.append(type(message).__name__)

    async with Client(server_on(bank), mode="legacy", message_handler=handler) as client:
        refused = await refusal(client, "bank_init", {"name": "Again"})
        forced = await call(client, "bank_init", {"name": "Again", "force": True})
        await anyio.sleep(0.05)
    assert refused == (
        "This bank already holds 17 documents. Refusing to seed over them; pass force to override."
    )
    assert "surfaceOpened" not in forced
    assert seen == []


async def test_off_surface_offers_nothing(bank: Path, tmp_path: Path) -> None:
    async with Client(server_on(bank, off=[str(tmp_path / "project")])) as client:
        assert client.instructions == INSTRUCTIONS["off"]
        assert await _lists(client) == ([], [], [])
        result = await client.call_tool("bank_init", {"name": "x"})
    assert result.content[0].text == "Unknown tool: bank_init"  # type: ignore[union-attr]


def test_the_surface_decision(tmp_path: Path) -> None:
    project = tmp_path / "a" / "project"
    root = project / "memory_bank"
    cwd = str(tmp_path)
    assert decide_surface("a/project/memory_bank", cwd=cwd).surface == "seed"
    (root / "_inbox").mkdir(parents=True)
    (root / ".mbank").mkdir()
    (root / ".DS_Store").write_text("")
    assert decide_surface(str(root), cwd=cwd).surface == "seed"  # dot entries and _inbox alone
    (root / "notes.md").write_text("# Notes\n", encoding="utf-8")
    assert decide_surface(str(root), cwd=cwd).surface == "full"
    # whole path segments: /a/projectX is not under /a/project
    assert decide_surface(str(root), ["a/proj"], cwd=cwd).surface == "full"
    assert decide_surface(str(root), ["a/project"], cwd=cwd).surface == "off"
    assert decide_surface("./memory_bank", cwd=str(project)).surface == "full"
    (root / ".memorybank-off").write_text("")  # inside the bank: does not count
    assert decide_surface(str(root), cwd=cwd).surface == "full"
    (project / ".memorybank-off").write_text("")  # beside the bank: wins, even without a bank
    assert decide_surface(str(root), cwd=cwd).surface == "off"
    assert decide_surface(str(project / "elsewhere"), cwd=cwd).surface == "off"
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "a")
    assert decide_surface(str(root), [str(link)], cwd=cwd).surface == "off"  # realpaths compared
    not_a_directory = tmp_path / "file.md"
    not_a_directory.write_text("x")
    assert decide_surface(str(not_a_directory), cwd=cwd).surface == "seed"


async def test_serve_warms_the_bank_after_the_handshake_not_before(bank: Path) -> None:
    server = build_server(str(bank), warm=True)
    assert not server.service.warmed.is_set()
    async with Client(server, mode="legacy") as client:
        await anyio.to_thread.run_sync(server.service.warmed.wait, 10)
        assert server.service.index.sync(server.service.bank.refresh()) == 0  # already synced
        await call(client, "bank_route", {"question": "filter thresholds"})
    seed = build_server(str(bank.parent / "empty"), warm=True)
    async with Client(seed, mode="legacy") as client:
        await client.list_tools()
    assert not seed.service.warmed.is_set()  # nothing to warm in a seed session


def test_a_crashed_init_is_left_to_the_first_write_to_roll_back(tmp_path: Path) -> None:
    # Issue 13 item 10: a server start reads only (no lock, no recovery; 04 §6.2 step 4 now
    # just reports the interrupted write), so the half-seeded bank reads as a bank until the
    # first write rolls the interrupted init back.
    root = tmp_path / "project" / "memory_bank"
    script = (
        "import sys\n"
        "from mbank.snapshot import Bank\n"
        "from mbank.reducers.init import WRITE_TOOL\n"
        "from mbank.writes import run_write\n"
        "run_write(WRITE_TOOL, Bank(sys.argv[1]), {'name': 'Crashed'})\n"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("MBANK_")}
    env.update(MBANK_FAULT_INJECTION="1", MBANK_FAULT="op-3-swapped")
    done = subprocess.run(
        [sys.executable, "-c", script, str(root)], env=env, capture_output=True, timeout=60
    )
    assert done.returncode != 0  # killed in the middle of the apply
    assert os.listdir(root / ".mbank" / "wal")
    assert has_bank(str(root))  # half seeded: it reads as a bank until recovered
    before = sorted(os.listdir(root))
    server = build_server(str(root))
    assert server.surface == "full"
    assert sorted(os.listdir(root)) == before
    assert os.listdir(root / ".mbank" / "wal")
    again = subprocess.run(
        [sys.executable, "-c", script, str(root)],
        env={key: value for key, value in env.items() if not key.startswith("MBANK_")},
        capture_output=True,
        timeout=60,
    )
    assert again.returncode == 0, again.stderr
    assert b"mbank: rolled back an interrupted write" in again.stderr
    assert os.listdir(root / ".mbank" / "wal") == []
    assert build_server(str(root)).surface == "full"


# --------------------------------------------------------------------------------------------
# The command line around the server (04 §9.1, §9.6): serve, memo, demo
# --------------------------------------------------------------------------------------------


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from mbank.cli import main

    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_serve_without_a_root_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MBANK_ROOT", raising=False)
    code, out, err = run_cli(["serve"], capsys)
    assert (code, out) == (2, "")
    assert err.endswith("mbank: --root is required\n")


def test_serve_and_the_bare_form_pass_root_and_every_off(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import mbank.server

    served: list[tuple[str, list[str]]] = []

    def fake_serve(root: str, off: list[str]) -> int:
        served.append((root, list(off)))
        return 0

    monkeypatch.setattr(mbank.server, "serve", fake_serve)
    monkeypatch.chdir(tmp_path)
    assert run_cli(["--root", "memory_bank", "--off", "a"], capsys)[0] == 0
    assert run_cli(["--off", "a", "serve", "--root", "bank", "--off", "b"], capsys)[0] == 0
    assert served == [
        (str(tmp_path / "memory_bank"), ["a"]),
        (str(tmp_path / "bank"), ["a", "b"]),
    ]


def test_memo_hands_every_argument_to_the_memo_server(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import mbank.memo.server

    seen: list[list[str]] = []

    def fake_main(argv: list[str]) -> int:
        seen.append(argv)
        return 0

    monkeypatch.setattr(mbank.memo.server, "main", fake_main)
    assert run_cli(["memo", "--bank", "./memory_bank", "--half-life-h", "3"], capsys)[0] == 0
    assert run_cli(["memo"], capsys)[0] == 0
    assert seen == [["--bank", "./memory_bank", "--half-life-h", "3"], []]


def test_surface_cost_needs_an_existing_bank(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run_cli(["--root", str(tmp_path / "none"), "surface-cost"], capsys)
    assert (code, out) == (1, "")
    assert err.startswith(f"mbank: No bank at {tmp_path / 'none'}: ")
    (tmp_path / "empty").mkdir()
    code, out, err = run_cli(["--root", str(tmp_path / "empty"), "surface-cost"], capsys)
    assert (code, out) == (2, "")
    assert "no bank at" in err


def test_demo_walks_a_scripted_session_through_the_server(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _err = run_cli(["demo"], capsys)
    assert code == 0
    for expected in (
        "tools: bank_init\n",
        "→ bank_init {",
        "surfaceOpened: true",
        "tools now (19):",
        "→ bank_route {",
        '"path": "domain/pricing.md"',
        '"section": "Formula"',
        "→ bank_search {",
        '"total": 0',
        '← isError: Error executing tool bank_create: canonical_for "price_formula" is '
        "already owned by domain/pricing.md. One fact, one home.",
        "-A quote is the base rate times the hours, plus a 15% surcharge for weekend work.",
        "the temporary bank was removed",
    ):
        assert expected in out, expected
    kept = out.split("bank: ", 1)[1].split("\n", 1)[0]
    assert not os.path.exists(kept)
