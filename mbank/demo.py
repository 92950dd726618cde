"""`mbank demo`: a temporary bank, seeded and walked through by the real MCP server.

The script plays an agent: it starts the server on an empty directory (the seed surface),
calls `bank_init`, creates two documents, then routes a question, reads a section, searches,
validates, tries a write the governance refuses and asks for a dry-run diff. Every call goes
through the SDK's in-process client against the same server object `mbank serve` runs, and
what the agent would receive is printed (long answers trimmed). Nothing outside the temporary
directory is touched; `--keep` leaves the bank there to explore with the other subcommands.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import anyio

MAX_LINES = 24
Print = Callable[[str], None]

PRICING = {
    "docKind": "domain",
    "path": "domain/pricing.md",
    "title": "Pricing rules",
    "purpose": "How a quote's price is computed; read before changing the quote code.",
    "derivedFrom": ["../dna/principles.md"],
    "canonicalFor": ["price_formula"],
    "body": (
        "## Formula\n\nA quote is the base rate times the hours, plus a 15% surcharge for "
        "weekend work.\n\n## Rounding\n\nPrices round half up to whole cents.\n"
    ),
}
DECISION = {
    "docKind": "adr",
    "path": "adr/ADR-20260914T120000Z-weekend-surcharge.md",
    "title": "Weekend work carries a surcharge",
    "purpose": "Why weekend quotes cost more; read before changing the surcharge.",
    "derivedFrom": ["../domain/pricing.md"],
}
SECOND_OWNER = {
    "docKind": "domain",
    "path": "domain/quotes.md",
    "title": "Quotes",
    "purpose": "What a quote contains and how long it stays valid.",
    "derivedFrom": ["../dna/principles.md"],
    "canonicalFor": ["price_formula"],
}
QUESTION = "how is the price of a quote computed?"


def trimmed(text: str, limit: int = MAX_LINES) -> str:
    """At most `limit` lines of `text`, with a note of how many were left out."""
    lines = text.splitlines()
    if len(lines) <= limit:
        return text
    return "\n".join([*lines[:limit], f"… ({len(lines) - limit} more lines)"])


class Session:
    """The scripted agent: one client, numbered steps, printed calls and answers."""

    def __init__(self, client: Any, out: Print) -> None:
        self.client = client
        self.out = out
        self.step = 0

    def heading(self, text: str) -> None:
        """Start a numbered step."""
        self.step += 1
        self.out(f"\n── {self.step}. {text}")

    async def call(
        self, tool: str, arguments: dict[str, Any], *, limit: int = MAX_LINES
    ) -> dict[str, Any]:
        """Call a tool and print what the agent receives; the structured result."""
        self.out(f"→ {tool} {json.dumps(arguments, ensure_ascii=False)}")
        result = await self.client.call_tool(tool, arguments)
        text = result.content[0].text if result.content else ""
        structured: dict[str, Any] = result.structured_content or {}
        if structured and not result.is_error:
            # the agent receives compact JSON (issue 16); a person reads it indented
            text = json.dumps(structured, indent=2, ensure_ascii=False)
        marker = "← isError: " if result.is_error else "← "
        self.out(marker + trimmed(text, limit))
        return structured

    async def tool_names(self) -> list[str]:
        """The tools this session currently offers."""
        listed = await self.client.list_tools()
        return [tool.name for tool in listed.tools]


async def script(root: str, out: Print) -> None:
    """The scripted session (see the module docstring)."""
    from mbank.server import build_server, in_process_client

    server = build_server(root)
    async with in_process_client(server) as client:
        agent = Session(client, out)
        agent.heading("A project without a bank: the server offers one tool")
        out(f"instructions: {client.instructions}")
        out(f"tools: {', '.join(await agent.tool_names())}")

        agent.heading("The user asks for a knowledge base")
        init = await agent.call("bank_init", {"name": "Demo Shop"}, limit=8)
        opened = json.dumps(init.get("surfaceOpened", False))
        out(f"   seeded {len(init.get('files', []))} documents; surfaceOpened: {opened}")
        tools = await agent.tool_names()
        out(f"tools now ({len(tools)}): {', '.join(tools)}")

        agent.heading("Two governed documents: a domain rule and the decision behind it")
        await agent.call("bank_create", PRICING, limit=6)
        await agent.call("bank_create", DECISION, limit=6)

        agent.heading("Route a question to documents (headers only, never bodies)")
        routed = await agent.call("bank_route", {"question": QUESTION, "limit": 3}, limit=14)
        top = routed.get("results", [{}])[0].get("path", PRICING["path"])

        agent.heading("Read one section of the top result")
        await agent.call("bank_read", {"path": top, "section": "Formula"})

        agent.heading("Search bodies for a literal term")
        await agent.call("bank_search", {"query": "surcharge", "limit": 3})

        agent.heading("Check the bank against its own governance")
        await agent.call("bank_validate", {})

        agent.heading("A write the governance refuses (a second owner of one fact)")
        await agent.call("bank_create", SECOND_OWNER)
        out("   nothing was written")

        agent.heading("A dry run: the diff, nothing written")
        edit = await agent.call(
            "bank_edit",
            {"path": PRICING["path"], "find": "15%", "replace": "20%", "dryRun": True},
            limit=8,
        )
        out("   the diff, as a person reads it:")
        out("\n".join("   " + line for line in str(edit.get("diff", "")).splitlines()))


def main(*, keep: bool = False, out: Print = print) -> int:
    """Run the demo in a temporary directory; 0 on success."""
    started = time.perf_counter()
    scratch = tempfile.mkdtemp(prefix="mbank-demo-")
    root = os.path.join(scratch, "memory_bank")
    out("mbank demo: a temporary bank served by the real MCP server (in process)")
    out(f"bank: {root}")
    try:
        anyio.run(script, root, out)
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    elapsed = time.perf_counter() - started
    if keep:
        out(f"\nkept: {root}\ntry: mbank --root {root} stats")
    else:
        out("\nthe temporary bank was removed (pass --keep to keep it)")
    out(f"done in {elapsed:.1f} s")
    sys.stdout.flush()
    return 0
