"""The stdio wire under both MCP servers: every line checked before the SDK reads it.

The SDK's `stdio_server` takes the input and output as objects with an async line iterator
and async `write`/`flush`; this module supplies both, over private duplicates of fd 0 and 1
(`claimed_std_streams`, which points fd 0 at the null device and fd 1 at stderr meanwhile, so a
stray `print` never tears the wire — what the SDK does when it owns the streams). A line that
`mbank.protocol_guard.check_line` refuses is answered here with its JSON-RPC error and never
reaches the SDK, which would otherwise answer nothing; every answer, the SDK's and ours, is
written whole by `LineWriter`, so the two never interleave. It imports the SDK's stdio
transport only inside `serve_guarded_stdio` (tests/test_imports.py allows this module).
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO, cast

import anyio

from mbank.protocol_guard import check_line


class LineWriter:
    """The output as the SDK writes it: each `write` is sent whole, at once."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw

    async def write(self, text: str) -> None:
        """Write and flush one whole message; no await in between, so nothing interleaves."""
        self.raw.write(text.encode("utf-8"))
        self.raw.flush()

    async def flush(self) -> None:
        """Every `write` already flushed."""


class GuardedInput:
    """The input as the SDK reads it (`async for line in stdin`): the lines that may pass."""

    def __init__(self, raw: BinaryIO, writer: LineWriter) -> None:
        self.raw = raw
        self.writer = writer

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while True:
            line = await anyio.to_thread.run_sync(self.raw.readline)
            if not line:
                return
            refusal = check_line(line.rstrip(b"\r\n"))
            if refusal is not None:
                await self.writer.write(
                    json.dumps(refusal, ensure_ascii=False, separators=(",", ":")) + "\n"
                )
                continue
            if line.strip():
                yield line.decode("utf-8")


@contextmanager
def claimed_std_streams() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """Private binary streams on the client's stdin and stdout, with fd 0 and 1 diverted to
    the null device and stderr while they are in use, and given back to the wire after."""
    private_in = os.dup(0)
    private_out = os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)
    raw_in = os.fdopen(private_in, "rb", closefd=False)
    raw_out = os.fdopen(private_out, "wb", closefd=False)
    try:
        yield raw_in, raw_out
    finally:
        raw_out.flush()
        os.dup2(private_in, 0)
        os.dup2(private_out, 1)
        os.close(private_in)
        os.close(private_out)


async def serve_guarded_stdio(lowlevel: Any, options: Any) -> None:
    """Serve one connection of an MCP low-level server over stdin/stdout until stdin closes,
    every line checked first: the bank's server and the memo's both run through here."""
    from mcp.server.stdio import stdio_server

    with claimed_std_streams() as (raw_in, raw_out):
        writer = LineWriter(raw_out)
        stdin = cast("anyio.AsyncFile[str]", GuardedInput(raw_in, writer))
        stdout = cast("anyio.AsyncFile[str]", writer)
        async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):
            await lowlevel.run(read_stream, write_stream, options)
