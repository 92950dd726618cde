"""The checks every line from an MCP client passes before the SDK sees it (issue 13, item 7).

Pure. The SDK answers nothing for a line it cannot read as a JSON-RPC message (malformed or
non-object JSON, a batch, an id that is null or an object, a lone surrogate, a request nested
hundreds deep): the client waits forever. `check_line` reads one raw line the way JSON-RPC 2.0
asks and returns the error response to send back instead (parse error, invalid request,
invalid params, with the request's id when it has a usable one), or None when the line may go
on to the SDK. Raw bytes that are not UTF-8 are a parse error, never silently replaced.
"""

from __future__ import annotations

import json
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

# Deeper than any MCP request needs; the SDK's validation recurses once per level.
MAX_DEPTH = 64

Response = dict[str, Any]


def error_response(request_id: Any, code: int, message: str) -> Response:
    """A JSON-RPC 2.0 error response."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _usable_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _depth_and_surrogate(value: Any, limit: int) -> tuple[bool, bool]:
    """(deeper than `limit`, holds a lone surrogate), walking iteratively."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    too_deep = surrogate = False
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            surrogate = surrogate or any("\ud800" <= char <= "\udfff" for char in item)
            continue
        if not isinstance(item, dict | list):
            continue
        if depth > limit:
            too_deep = True
            continue
        children = list(item.items()) if isinstance(item, dict) else list(enumerate(item))
        for key, child in children:
            if isinstance(key, str):
                stack.append((key, depth))
            stack.append((child, depth + 1))
    return too_deep, surrogate


def _loads(text: str) -> tuple[Any, str | None]:
    try:
        return json.loads(text), None
    except RecursionError:
        return None, f"the message is nested deeper than {MAX_DEPTH} levels"
    except ValueError as exc:
        return None, str(exc)


def check_line(raw: bytes) -> Response | None:
    """The error response for one raw line from the client, or None to pass it on."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return error_response(
            None,
            PARSE_ERROR,
            f"Parse error: the message is not UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
            f"{exc.start}). Send each message as one line of UTF-8 JSON.",
        )
    if not text.strip():
        return None
    message, problem = _loads(text)
    if problem is not None:
        return error_response(
            None, PARSE_ERROR, f"Parse error: {problem}. Send each message as one line of JSON."
        )
    if isinstance(message, list):
        return error_response(
            None,
            INVALID_REQUEST,
            "Invalid request: batches are not supported by MCP; send one message per line.",
        )
    if not isinstance(message, dict):
        return error_response(
            None, INVALID_REQUEST, "Invalid request: a JSON-RPC message is a JSON object."
        )
    return _check_message(message)


def _check_message(message: dict[str, Any]) -> Response | None:
    has_id = "id" in message
    request_id = message.get("id")
    answer_id = request_id if _usable_id(request_id) else None
    if message.get("jsonrpc") != "2.0":
        return error_response(
            answer_id, INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0".'
        )
    if has_id and not _usable_id(request_id):
        return error_response(
            None,
            INVALID_REQUEST,
            "Invalid request: the id must be a string or an integer, never null or an object.",
        )
    if "method" in message and not isinstance(message["method"], str):
        return error_response(answer_id, INVALID_REQUEST, 'Invalid request: "method" is text.')
    if "params" in message and not isinstance(message["params"], dict):
        return error_response(
            answer_id, INVALID_PARAMS, 'Invalid params: "params" is a JSON object when given.'
        )
    too_deep, surrogate = _depth_and_surrogate(message, MAX_DEPTH)
    if too_deep:
        return error_response(
            answer_id,
            INVALID_PARAMS,
            f"Invalid params: the message is nested deeper than {MAX_DEPTH} levels.",
        )
    if surrogate:
        return error_response(
            answer_id,
            INVALID_PARAMS,
            "Invalid params: a string holds a lone UTF-16 surrogate (such as \\ud800), which "
            "is not text. Send valid Unicode.",
        )
    return None


def request_id_of(raw: bytes) -> Any:
    """The usable id of a line that passed `check_line`, else None (for an error answer)."""
    try:
        message = json.loads(raw)
    except ValueError:
        return None
    value = message.get("id") if isinstance(message, dict) else None
    return value if _usable_id(value) else None


def is_request(raw: bytes) -> bool:
    """Whether a line that passed `check_line` asks for an answer (it has an id)."""
    try:
        message = json.loads(raw)
    except ValueError:
        return False
    return isinstance(message, dict) and "id" in message and "method" in message
