"""Real stdio: the `mbank` process spoken to by the SDK's client (spec 07 §2.6 items 1–2).

Few and slow on purpose (each spawns Python and imports the SDK). They prove what an
in-process client cannot: the process's own handshake — `serverInfo`, and the
`listChanged: true` flags that only `mbank.server.initialization_options` sets — the bare
`mbank --root X` form, refusals crossing the wire as `isError` text, and `bank_init` opening
the surface for a handshake-era client (a `notifications/tools/list_changed` line) and for a
2026-07-28 client (an event on its `subscriptions/listen` stream).
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import pytest
from fixture_banks import REPO, copy_fixture
from mcp import Client, StdioServerParameters
from mcp.client.subscriptions import ToolsListChanged

pytestmark = [pytest.mark.stdio, pytest.mark.anyio]

TIMEOUT = 60


def mbank(cwd: Path, *args: str) -> StdioServerParameters:
    """`python -m mbank <args>`; `stdio_client` forwards only a few variables, so env is ours."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(cwd)),
        # the private projection cache conftest made for this run, never the user's ~/.cache
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
        "PYTHONPATH": str(REPO),
        "MBANK_LOG": "WARNING",
    }
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mbank", *args], env=env, cwd=str(cwd)
    )


async def test_bare_form_handshake_lists_nineteen_tools_routes_and_refuses(
    tmp_path: Path,
) -> None:
    root = copy_fixture(tmp_path / "memory_bank", overlay=False)
    server = mbank(tmp_path, "--root", "./memory_bank")
    with anyio.fail_after(TIMEOUT):
        async with Client(server, mode="legacy") as client:
            protocol = client.protocol_version
            info = client.server_info
            capabilities = client.server_capabilities
            tools = (await client.list_tools()).tools
            routed = await client.call_tool("bank_route", {"question": "filter thresholds"})
            refused = await client.call_tool("bank_read", {"path": "nowhere.md"})
    assert protocol == "2025-11-25"
    assert info is not None and info.name == "memorybank" and info.version == version("mbank")
    assert capabilities.tools is not None and capabilities.tools.list_changed is True
    assert capabilities.resources is not None and capabilities.resources.list_changed is True
    assert capabilities.prompts is not None and capabilities.prompts.list_changed is True
    assert len(tools) == 19
    assert not routed.is_error
    assert routed.structured_content is not None
    assert routed.structured_content["results"][0]["path"] == "domain/rules.md"
    assert refused.is_error
    assert refused.content[0].text == (  # type: ignore[union-attr]
        "Error executing tool bank_read: Not a document of this bank: nowhere.md"
    )
    assert root.is_dir()


async def test_init_over_the_wire_opens_the_surface_for_a_handshake_era_client(
    tmp_path: Path,
) -> None:
    seen: list[str] = []

    async def handler(message: Any) -> None:
        seen.append(type(message).__name__)

    server = mbank(tmp_path, "serve", "--root", "memory_bank")
    with anyio.fail_after(TIMEOUT):
        async with Client(server, mode="legacy", message_handler=handler) as client:
            before = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("bank_init", {"name": "Wire"})
            while "ToolListChangedNotification" not in seen:
                await anyio.sleep(0.01)
            after = (await client.list_tools()).tools
            resources = (await client.list_resources()).resources
    assert before == ["bank_init"]
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["surfaceOpened"] is True
    assert len(after) == 19 and len(resources) == 5
    assert (tmp_path / "memory_bank" / "dna").is_dir()


async def test_init_over_the_wire_opens_the_surface_for_a_2026_client(tmp_path: Path) -> None:
    server = mbank(tmp_path, "serve", "--root", "memory_bank")
    events: list[Any] = []
    with anyio.fail_after(TIMEOUT):
        async with Client(server) as client:
            assert client.protocol_version == "2026-07-28"
            before = [tool.name for tool in (await client.list_tools()).tools]
            async with client.listen(tools_list_changed=True) as stream:
                result = await client.call_tool("bank_init", {"name": "Wire"})
                async for event in stream:
                    events.append(event)
                    break
            after = (await client.list_tools()).tools
    assert before == ["bank_init"]
    assert not result.is_error
    assert isinstance(events[0], ToolsListChanged)
    assert len(after) == 19
