"""The one real stdio test of `mbank memo` (07 §2.6 item 4): version, tools, budget."""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

# The real console entry: `mbank memo` through mbank/cli.py.
MEMO_ARGS = ["-m", "mbank", "memo"]
TOOLS_LIST_BUDGET = 5800  # 06 §16.1: under 0.6 × devmemomcp's 9,702


@pytest.mark.stdio
@pytest.mark.anyio
async def test_mbank_memo_over_stdio_reports_version_eight_tools_and_fits_the_budget(
    tmp_path: Path,
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=MEMO_ARGS,
        cwd=str(tmp_path),
        env={"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )
    async with Client(params, mode="legacy") as client:
        assert client.server_info is not None
        assert client.server_info.name == "mbank-memo"
        assert client.server_info.version == version("mbank")
        listed = await client.list_tools()
        wire = listed.model_dump(by_alias=True, exclude_none=True, mode="json")
        result = {"tools": wire["tools"]}
        size = len(json.dumps(result, separators=(",", ":"), ensure_ascii=False))
        names = [t["name"] for t in result["tools"]]
        made = await client.call_tool("do_remember", {"title": "Over stdio", "idempotency_key": ""})
    assert names == [
        "read_pending", "read_related", "read_item", "do_remember", "do_update_item", "do_link",
        "do_forget", "can_do",
    ]  # fmt: skip
    assert size <= TOOLS_LIST_BUDGET, f"tools/list is {size} characters"
    assert made.structured_content is not None
    assert made.structured_content["status"] == "success"
