"""Every request gets a JSON-RPC answer and the server keeps serving (issue 13, item 7).

The checks themselves (`mbank.protocol_guard.check_line`, pure) with their exact answers, then
the real `mbank serve` over stdio driven by a raw JSON-RPC client that sends each bad line of
the issue, and a fuzz property: random byte lines and random JSON values, each answered, the
server alive after them all.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixture_banks import FIXTURE_BANK as FIXTURE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mbank.protocol_guard import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_DEPTH,
    PARSE_ERROR,
    check_line,
    is_request,
)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
ID_MESSAGE = "Invalid request: the id must be a string or an integer, never null or an object."
SURROGATE = (
    "Invalid params: a string holds a lone UTF-16 surrogate (such as \\ud800), which is not "
    "text. Send valid Unicode."
)


def error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def deep(levels: int) -> bytes:
    nested = "[" * levels + "]" * levels
    return (
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"bank_route",'
        '"arguments":{"question":"hi","x":' + nested + "}}}"
    ).encode()


# --------------------------------------------------------------------------------------------
# The checks, pure
# --------------------------------------------------------------------------------------------

BAD_LINES: dict[str, tuple[bytes, dict[str, Any]]] = {
    "malformed": (
        b'{"jsonrpc": "2.0", "id": 2, "method": ',
        error(
            None,
            PARSE_ERROR,
            "Parse error: Expecting value: line 1 column 39 (char 38). Send each message as "
            "one line of JSON.",
        ),
    ),
    "not UTF-8": (
        b'{"jsonrpc":"2.0","id":6,"method":"x","params":{"q":"ab\xff"}}',
        error(
            None,
            PARSE_ERROR,
            "Parse error: the message is not UTF-8 (byte 0xff at offset 54). Send each "
            "message as one line of UTF-8 JSON.",
        ),
    ),
    "a number": (
        b"42",
        error(None, INVALID_REQUEST, "Invalid request: a JSON-RPC message is a JSON object."),
    ),
    "a batch": (
        b'[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]',
        error(
            None,
            INVALID_REQUEST,
            "Invalid request: batches are not supported by MCP; send one message per line.",
        ),
    ),
    "id null": (
        b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
        error(None, INVALID_REQUEST, ID_MESSAGE),
    ),
    "id an object": (
        b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}',
        error(None, INVALID_REQUEST, ID_MESSAGE),
    ),
    "no jsonrpc": (
        b'{"id":7,"method":"tools/list"}',
        error(7, INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0".'),
    ),
    "params a number": (
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":5}',
        error(2, INVALID_PARAMS, 'Invalid params: "params" is a JSON object when given.'),
    ),
    "a lone surrogate": (
        b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"bank_route",'
        b'"arguments":{"question":"\\ud800 hi"}}}',
        error(4, INVALID_PARAMS, SURROGATE),
    ),
    "200 deep": (
        deep(200),
        error(
            5,
            INVALID_PARAMS,
            f"Invalid params: the message is nested deeper than {MAX_DEPTH} levels.",
        ),
    ),
}


@pytest.mark.parametrize("name", list(BAD_LINES))
def test_a_bad_line_gets_its_json_rpc_error(name: str) -> None:
    line, expected = BAD_LINES[name]
    assert check_line(line) == expected


def test_good_lines_pass_on() -> None:
    assert check_line(json.dumps(INITIALIZE).encode()) is None
    assert check_line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}') is None
    assert check_line(b'{"jsonrpc":"2.0","id":"r1","result":{}}') is None
    assert check_line(deep(50)) is None
    assert check_line(b"   ") is None


# --------------------------------------------------------------------------------------------
# The real server over stdio
# --------------------------------------------------------------------------------------------


class RawClient:
    """A JSON-RPC client that writes raw lines to a real `mbank serve` and reads answers."""

    def __init__(self, root: Path, command: tuple[str, ...] = ("serve",)) -> None:
        env = {key: value for key, value in os.environ.items() if not key.startswith("MBANK_")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mbank", *command, "--root", str(root)]
            if command == ("serve",)
            else [sys.executable, "-m", "mbank", *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.pending = b""
        self.ended = False
        self.send(json.dumps(INITIALIZE).encode())
        assert self.receive(30)["id"] == "init"
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout: float = 10) -> dict[str, Any]:
        """The next answer line (read from the descriptor: two answers may come in one read)."""
        assert self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([descriptor], [], [], max(left, 0))
            assert ready, "the server did not answer"
            chunk = os.read(descriptor, 1 << 16)
            assert chunk, "the server closed its output"
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def alive(self) -> bool:
        self.send(b'{"jsonrpc":"2.0","id":"alive","method":"tools/list"}')
        answer = self.receive()
        return answer["id"] == "alive" and "tools" in answer["result"]

    def close(self) -> str:
        """End the session (stdin closed) and return what the server wrote to stderr."""
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.ended = True
        return self.process.stderr.read().decode("utf-8", "replace")

    def kill(self) -> None:
        """Stop the server if it still runs and release its pipes."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                stream.close()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[RawClient]:
    root = tmp_path / "bank"
    shutil.copytree(FIXTURE, root)
    raw = RawClient(root)
    yield raw
    raw.kill()


@pytest.mark.stdio
def test_the_real_server_answers_every_bad_line_and_keeps_serving(client: RawClient) -> None:
    for line, expected in BAD_LINES.values():
        client.send(line)
        assert client.receive() == expected
    client.send(b'{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"nope"}}')
    assert client.receive() == error(
        9,
        INVALID_PARAMS,
        "Unknown prompt: nope. The prompts are: session-start, route-then-read, "
        "check-before-commit, record-adr, review-inbox.",
    )
    assert client.alive()
    assert "Traceback" not in client.close()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=12,
)
LINES = st.one_of(
    st.binary(max_size=40).map(lambda raw: raw.replace(b"\n", b" ").replace(b"\r", b" ")),
    JSON_VALUES.map(lambda value: json.dumps(value).encode()),
    st.builds(
        lambda method, params: json.dumps(
            {"jsonrpc": "2.0", "method": "x/" + method, "params": params}
        ).encode(),
        st.text(max_size=6),
        JSON_VALUES,
    ),
)


def expects_answer(line: bytes) -> bool:
    """A refused line is answered by the guard; a request (id and method) by the SDK."""
    return check_line(line) is not None or is_request(line)


@pytest.mark.stdio
@pytest.mark.slow
@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(LINES, min_size=10, max_size=40))
def test_fuzz_every_line_is_answered_and_the_server_stays_alive(
    tmp_path: Path, lines: list[bytes]
) -> None:
    root = tmp_path / f"bank-{time.monotonic_ns()}"
    shutil.copytree(FIXTURE, root)
    client = RawClient(root)
    try:
        expected = 0
        for line in lines:
            if not line.strip():
                continue
            client.send(line)
            expected += expects_answer(line)
        for _ in range(expected):
            answer = client.receive()
            assert answer["jsonrpc"] == "2.0" and ("error" in answer or "result" in answer)
        assert client.alive()
    finally:
        client.kill()


@pytest.mark.stdio
def test_the_memo_server_answers_bad_lines_too(tmp_path: Path) -> None:
    client = RawClient(tmp_path, command=("memo",))
    try:
        for name in ("malformed", "a batch", "id null", "a lone surrogate"):
            line, expected = BAD_LINES[name]
            client.send(line)
            assert client.receive() == expected
        assert client.alive()
    finally:
        client.kill()
