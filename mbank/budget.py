"""The token budget of spec 04 §7: what a project pays on every request, measured on the wire.

`mbank surface-cost` and `tests/test_budget.py` both use `measure_surface`: it starts the real
server (`python -m mbank serve …`) as a subprocess, speaks the handshake-era protocol
(`2025-11-25`) as JSON lines over its pipes — no `mcp` import here — and counts characters:
the `instructions` string, plus the compact JSON (`separators=(",", ":")`, non-ASCII kept) of
the `tools`, `prompts` and `resources` arrays as they came over the wire. Tokens are
characters / 3.5 (upstream's method, 04 §7.1).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import IO, Any

PROTOCOL = "2025-11-25"
CHARS_PER_TOKEN = 3.5
UPSTREAM_FULL = 24_387
# 04 §7.2: full ≤ 0.75 × upstream's 24,387 characters; seed ≤ 450 tokens; off ≤ 25 tokens
LIMITS: dict[str, int] = {"full": 18_290, "seed": 1_575, "off": 87}
SURFACES: tuple[str, ...] = ("full", "seed", "off")
TIMEOUT = 60.0


def compact_json(value: Any) -> str:
    """The compact JSON the budget counts (04 §7.1)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def tokens(characters: int) -> int:
    """≈ tokens for a number of characters (characters / 3.5, rounded half up)."""
    return int(characters / CHARS_PER_TOKEN + 0.5)


class ServerProcess:
    """`python -m mbank <args>` with JSON-RPC lines on its pipes (a context manager).

    Responses are read on a thread into a queue, so every wait has a deadline; lines that
    are notifications are kept apart in `notifications`.
    """

    def __init__(
        self,
        args: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        python: str = sys.executable,
    ) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [python, "-m", "mbank", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else None,
        )
        self.notifications: list[dict[str, Any]] = []
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._next_id = 0
        self._stderr: list[bytes] = []
        stdout, stderr = self.process.stdout, self.process.stderr
        assert stdout is not None and stderr is not None
        self._pumps = [
            threading.Thread(target=self._pump, args=(stdout, self._lines.put), daemon=True),
            threading.Thread(target=self._pump, args=(stderr, self._stderr.append), daemon=True),
        ]
        for pump in self._pumps:
            pump.start()

    @staticmethod
    def _pump(stream: IO[bytes], sink: Any) -> None:
        for line in iter(stream.readline, b""):
            sink(line)
        sink(b"")

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def send(self, message: Mapping[str, Any]) -> None:
        """Write one JSON-RPC message as a line."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(json.dumps(message).encode("utf-8") + b"\n")
        stdin.flush()

    def request(
        self, method: str, params: Mapping[str, Any] | None = None, timeout: float = TIMEOUT
    ) -> dict[str, Any]:
        """Send a request and wait for its response's `result` (raises on an error answer)."""
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = dict(params)
        self.send(message)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                line = self._lines.get(timeout=max(remaining, 0.001))
            except queue.Empty:
                raise TimeoutError(f"no answer to {method} within {timeout} s") from None
            if not line:
                raise RuntimeError(f"the server exited before answering {method}: {self.stderr}")
            data = json.loads(line)
            if "id" not in data:
                self.notifications.append(data)
                continue
            if data.get("id") != self._next_id:
                continue
            if "error" in data:
                raise RuntimeError(f"{method} failed: {data['error']}")
            result: dict[str, Any] = data["result"]
            return result

    def notify(self, method: str) -> None:
        """Send a notification (no answer)."""
        self.send({"jsonrpc": "2.0", "method": method})

    def initialize(self, client: str = "mbank-surface-cost") -> dict[str, Any]:
        """The handshake-era `initialize` → `notifications/initialized`."""
        result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": client, "version": "0"},
            },
        )
        self.notify("notifications/initialized")
        return result

    @property
    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        return b"".join(self._stderr).decode("utf-8", "replace")

    def close(self) -> None:
        """Close stdin (the server ends when it closes) and reap the process."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for pump in self._pumps:
            pump.join(timeout=5)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def measure_surface(
    args: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Start `mbank <args>` and count the four parts of 04 §7.1 for the surface it shows."""
    with ServerProcess(args, cwd=cwd, env=env) as server:
        initialized = server.initialize()
        tools = server.request("tools/list")["tools"]
        prompts = server.request("prompts/list")["prompts"]
        resources = server.request("resources/list")["resources"]
    instructions = initialized.get("instructions") or ""
    parts = {
        "instructions": len(instructions),
        "tools": len(compact_json(tools)),
        "prompts": len(compact_json(prompts)),
        "resources": len(compact_json(resources)),
    }
    total = sum(parts.values())
    return {
        **parts,
        "total": total,
        "tokens": tokens(total),
        "toolCount": len(tools),
        "promptCount": len(prompts),
        "resourceCount": len(resources),
        "perTool": {tool["name"]: len(compact_json(tool)) for tool in tools},
        "serverInfo": initialized.get("serverInfo", {}),
        "capabilities": initialized.get("capabilities", {}),
    }


def surface_cost(root: str, *, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The budget of every surface: full on `root`, seed on an empty temporary directory,
    off with `--off` over a temporary directory (04 §9.2 `surface-cost`)."""
    # The servers run in a scratch directory, so a relative root would name nothing there.
    root = os.path.abspath(root)
    surfaces: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mbank-surface-") as scratch:
        empty = os.path.join(scratch, "memory_bank")
        runs = {
            "full": ["serve", "--root", root],
            "seed": ["serve", "--root", empty],
            "off": ["serve", "--root", empty, "--off", scratch],
        }
        for name in SURFACES:
            measured = measure_surface(runs[name], cwd=scratch, env=env)
            measured["limit"] = LIMITS[name]
            measured["withinLimit"] = measured["total"] <= LIMITS[name]
            surfaces[name] = measured
    return {"root": root, "upstreamFull": UPSTREAM_FULL, "surfaces": surfaces}


def format_surface_cost(result: Mapping[str, Any]) -> str:
    """The human rendering of `mbank surface-cost`: one row per surface, then per-tool sizes."""
    header = (
        f"{'surface':<8}{'instructions':>13}{'tools':>8}{'prompts':>9}{'resources':>11}"
        f"{'total':>8}{'≈tokens':>9}{'limit':>8}  verdict"
    )
    lines = [f"root: {result['root']}", "", header]
    for name, part in result["surfaces"].items():
        verdict = "ok" if part["withinLimit"] else "OVER"
        lines.append(
            f"{name:<8}{part['instructions']:>13}{part['tools']:>8}{part['prompts']:>9}"
            f"{part['resources']:>11}{part['total']:>8}{part['tokens']:>9}{part['limit']:>8}"
            f"  {verdict}"
        )
    full = result["surfaces"].get("full")
    if full is not None:
        share = full["total"] / result["upstreamFull"]
        lines.append("")
        lines.append(
            f"full = {share:.1%} of upstream's {result['upstreamFull']:,} characters "
            f"({full['toolCount']} tools, {full['promptCount']} prompts, "
            f"{full['resourceCount']} resources)"
        )
    for name, part in result["surfaces"].items():
        if not part["perTool"]:
            continue
        lines.append("")
        lines.append(f"tools ({name}):")
        width = max(len(tool) for tool in part["perTool"])
        for tool, size in part["perTool"].items():
            lines.append(f"  {tool:<{width}}  {size:>6}  ≈{tokens(size)} tokens")
    return "\n".join(lines) + "\n"
