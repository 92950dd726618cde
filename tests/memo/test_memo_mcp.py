"""The memo server in process (`Client(server)`): surface, schemas, envelopes, errors."""

from __future__ import annotations

import inspect
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from mbank.memo.server import INSTRUCTIONS, build_server, tools_from_args
from mbank.memo.tools import MemoTools

EIGHT = [
    "read_pending", "read_related", "read_item", "do_remember", "do_update_item", "do_link",
    "do_forget", "can_do",
]  # fmt: skip


def _wire(tool: Any) -> dict[str, Any]:
    data: dict[str, Any] = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
    return data


def _titles_as_keywords(node: Any, in_properties: bool = False) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "title" and not in_properties:
                found.append(str(value))
            found += _titles_as_keywords(value, key == "properties")
    elif isinstance(node, list):
        for value in node:
            found += _titles_as_keywords(value)
    return found


@pytest.mark.anyio
async def test_the_server_lists_eight_tools_with_compact_schemas_and_its_version() -> None:
    async with Client(build_server(tools_from_args([]))) as client:
        assert client.server_info is not None
        assert client.server_info.name == "mbank-memo"
        assert client.server_info.version == version("mbank")
        assert client.instructions == INSTRUCTIONS and len(INSTRUCTIONS) <= 600
        tools = [_wire(t) for t in (await client.list_tools()).tools]
    assert [t["name"] for t in tools] == EIGHT
    by_name = {t["name"]: t for t in tools}
    for tool in tools:
        assert len(tool["description"]) <= 250
        assert tool["outputSchema"] == {"type": "object"}
        assert _titles_as_keywords(tool["inputSchema"]) == []
        assert "anyOf" not in json.dumps(tool["inputSchema"])
    remember = by_name["do_remember"]["inputSchema"]
    assert remember["required"] == ["title"]  # issue 19: every key is optional
    assert remember["properties"]["title"]["maxLength"] == 200
    assert remember["properties"]["kind"]["enum"] == [
        "task", "blocker", "decision", "question", "insight", "artifact",
    ]  # fmt: skip
    assert remember["properties"]["priority"]["enum"] == ["critical", "high", "normal", "low"]
    assert remember["properties"]["tags"]["maxItems"] == 20
    assert remember["properties"]["tags"]["items"]["maxLength"] == 40
    assert remember["properties"]["idempotency_key"]["maxLength"] == 200
    link = by_name["do_link"]["inputSchema"]["properties"]
    assert link["weight"]["minimum"] == 0.0 and link["weight"]["maximum"] == 1.0
    assert "supersedes" in link["kind"]["enum"]
    related = by_name["read_related"]["inputSchema"]["properties"]
    assert related["hops"] == {"default": 2, "maximum": 4, "minimum": 0, "type": "integer"}
    assert by_name["read_item"]["inputSchema"]["properties"]["hops"]["minimum"] == 1
    for name in ("read_pending", "read_related", "read_item", "can_do"):
        assert by_name[name]["annotations"] == {"readOnlyHint": True, "idempotentHint": True}
    assert by_name["do_forget"]["annotations"] == {"destructiveHint": True}


@pytest.mark.anyio
async def test_do_spill_is_registered_only_with_a_bank(tmp_path: Path) -> None:
    async with Client(build_server(tools_from_args(["--bank", str(tmp_path)]))) as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert names == [*EIGHT, "do_spill"]


@pytest.mark.anyio
async def test_results_are_the_envelopes_as_structured_content(tools: MemoTools) -> None:
    async with Client(build_server(tools)) as client:
        made = await client.call_tool(
            "do_remember", {"title": "Fix slow query", "idempotency_key": "k"}
        )
        assert made.is_error is False
        envelope = made.structured_content
        assert envelope is not None and envelope["status"] == "success"
        node_id = envelope["applied_value"]["node"]["id"]
        assert json.loads(made.content[0].text) == envelope  # type: ignore[union-attr]
        replay = await client.call_tool(
            "do_remember", {"title": "Fix slow query", "idempotency_key": "k"}
        )
        assert replay.structured_content == {**envelope, "replayed": True}
        item = await client.call_tool("read_item", {"node_id": node_id})
        assert item.structured_content is not None
        assert item.structured_content["value"]["id"] == node_id
        pending = await client.call_tool("read_pending", {})
        assert pending.structured_content is not None
        assert pending.structured_content["value"]["returned"] == 1
        routed = await client.call_tool("can_do", {"intent": {"goal": "record a new task"}})
        assert routed.structured_content is not None
        assert routed.structured_content["candidates"][0]["capability"] == "do_remember"


async def _error_text(client: Client, tool: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error is True
    text: str = result.content[0].text  # type: ignore[union-attr]
    prefix = f"Error executing tool {tool}: "
    assert text.startswith(prefix)
    return text[len(prefix) :]


@pytest.mark.anyio
async def test_errors_arrive_as_is_error_with_code_and_message(tools: MemoTools) -> None:
    async with Client(build_server(tools)) as client:
        text = await _error_text(client, "read_item", {"node_id": "t_0123456789"})
        assert text.startswith("node_not_found: no item t_0123456789 in working memory")
        text = await _error_text(client, "read_related", {"query": "x", "node_id": "t_0123456789"})
        assert text.startswith("node_not_found: ")
        text = await _error_text(
            client, "do_update_item", {"node_id": "nope", "idempotency_key": ""}
        )
        assert text.startswith("invalid_argument: ")
        text = await _error_text(client, "read_related", {"hops": 7})
        assert text.startswith(
            "invalid_argument: `hops` must be at most"
        )  # tests/test_schema_refusal.py


@pytest.mark.anyio
async def test_an_unexpected_exception_is_reported_as_internal_error(
    tools: MemoTools, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: object, **kwargs: object) -> dict[str, Any]:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(tools, "read_pending", boom)
    async with Client(build_server(tools)) as client:
        text = await _error_text(client, "read_pending", {})
    assert text == (
        "internal_error: RuntimeError: kaboom. This is a bug in mbank; nothing was applied."
    )


@pytest.mark.anyio
async def test_text_content_is_compact_json_and_every_key_is_optional(tmp_path: Path) -> None:
    tools = tools_from_args(["--bank", str(tmp_path)])
    async with Client(build_server(tools)) as client:
        listed = {t.name: _wire(t) for t in (await client.list_tools()).tools}
        for name in ("do_remember", "do_update_item", "do_link", "do_forget", "do_spill"):
            schema = listed[name]["inputSchema"]
            assert "idempotency_key" in schema["properties"]
            assert "idempotency_key" not in schema.get("required", []), name
        made = await client.call_tool("do_remember", {"title": "Fix slow query"})
        text = made.content[0].text  # type: ignore[union-attr]
        assert made.structured_content is not None
        assert text == json.dumps(
            made.structured_content, separators=(",", ":"), ensure_ascii=False
        )
        assert made.structured_content["idempotency_key"] == ""
        node_id = made.structured_content["applied_value"]["node"]["id"]
        again = await client.call_tool("do_remember", {"title": "Fix slow query"})
        assert again.structured_content is not None and "replayed" not in again.structured_content
        other = again.structured_content["applied_value"]["node"]["id"]
        for tool, args in (
            ("do_update_item", {"node_id": node_id, "status": "active"}),
            ("do_link", {"src": node_id, "dst": other, "kind": "blocks"}),
            ("do_link", {"src": node_id, "dst": other, "kind": "blocks", "remove": True}),
            ("do_forget", {"node_id": other}),
        ):
            result = await client.call_tool(tool, args)
            assert result.is_error is False, (tool, result.content)
    assert len(tools.store.idempotency.records) == 0  # absent = no de-duplication


def test_a_memo_tool_parameter_the_server_does_not_publish_is_named_when_the_server_is_built(
    tmp_path: Path,
) -> None:
    """The MCP functions are made from the `MemoTools` methods, so a parameter added to a
    method without its published type stops the server at once, with the fix in the sentence."""

    class WithColour(MemoTools):
        def read_item(self, node_id: str, hops: int = 1, colour: str = "red") -> dict[str, Any]:
            return super().read_item(node_id, hops)

    plain = tools_from_args([])
    tools = WithColour(plain.store)
    with pytest.raises(LookupError) as caught:
        build_server(tools)
    assert str(caught.value) == (
        "MemoTools.read_item has a parameter 'colour' that the memo server does not publish; "
        "declare its MCP type in PUBLISHED (or PUBLISHED_IN_TOOL)."
    )


@pytest.mark.anyio
async def test_the_memo_functions_take_their_parameters_from_the_memotools_methods() -> None:
    """Order, defaults and required names on the wire are the methods' own (after `self`)."""
    async with Client(build_server(tools_from_args([]))) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name, tool in listed.items():
        method = inspect.signature(getattr(MemoTools, name))
        declared = [p for p in method.parameters.values() if p.name != "self"]
        schema = tool.input_schema
        assert list(schema["properties"]) == [p.name for p in declared]
        required = [p.name for p in declared if p.default is inspect.Parameter.empty]
        assert schema.get("required", []) == required
