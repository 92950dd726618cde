"""Every write tool, once: the list the MCP server, the CLI and the write runner are built from.

Pure. Adding a write tool is one reducer module exporting its `WRITE_TOOL` and one line here.
The order is the CLI's order of subcommands; the MCP order is `mbank.surface.tool_sort_key`.
"""

from __future__ import annotations

from typing import Any

from mbank.reducers import (
    create,
    discard,
    edit,
    init,
    materialize_flows,
    promote,
    rewrite,
    set_field,
    set_status,
    undo,
    update_section,
)
from mbank.write_declaration import WriteTool

WRITE_TOOLS: tuple[WriteTool[Any, Any], ...] = (
    init.WRITE_TOOL,
    create.WRITE_TOOL,
    edit.WRITE_TOOL,
    update_section.WRITE_TOOL,
    rewrite.WRITE_TOOL,
    set_status.WRITE_TOOL,
    set_field.WRITE_TOOL,
    promote.WRITE_TOOL,
    discard.WRITE_TOOL,
    materialize_flows.WRITE_TOOL,
    undo.WRITE_TOOL,
)

BY_NAME: dict[str, WriteTool[Any, Any]] = {tool.name: tool for tool in WRITE_TOOLS}
BY_COMMAND: dict[str, WriteTool[Any, Any]] = {tool.command: tool for tool in WRITE_TOOLS}
