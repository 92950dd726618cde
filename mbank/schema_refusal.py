"""Tool arguments that fail the input schema, answered as one `<code>: <message>` sentence.

The SDK validates a call's arguments against the tool's pydantic model before the tool runs and
answers a failure with pydantic's dump (`1 validation error for bank_routeArguments …` and a
URL). An agent reads that poorly and a person worse, so both servers (the bank's `BankServer`
and the working memory's `MemoServer`) derive from `SchemaCheckedServer`, which turns the dump
into the sentence of spec 04 §1.1 / 06 §15: the code, each argument by its published name with
what was wrong, and the fix. Only the wording changes: the call is still refused before the
tool runs, and the SDK still logs the field names (never the values) of the rejected call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError
from pydantic_core import ErrorDetails

# What a value of the wrong type should have been, by pydantic's error type.
_EXPECTED_TYPE = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
}

# The working memory's codes (06 §15); the bank uses one code for every schema failure.
MEMO_SCHEMA_CODES: Mapping[str, str] = {
    "string_too_long": "field_too_long",
    "too_long": "field_too_long",
    "literal_error": "invalid_enum_value",
    "enum": "invalid_enum_value",
}


def _argument(error: ErrorDetails) -> str:
    """The argument's published name (`docKind`, `items.0.title`)."""
    return ".".join(str(part) for part in error["loc"]) or "the arguments"


def _problem(error: ErrorDetails) -> str:
    """One failed check as a clause: `question` is required, `limit` must be at least 1."""
    name = f"`{_argument(error)}`"
    kind = error["type"]
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    if kind == "missing":
        return f"{name} is required"
    if kind == "extra_forbidden":
        return f"{name} is not an argument of this tool; leave it out"
    if kind == "string_too_long":
        return f"{name} is too long (at most {ctx.get('max_length')} characters)"
    if kind == "string_too_short":
        return f"{name} is too short (at least {ctx.get('min_length')} characters)"
    if kind == "too_long":
        return f"{name} has too many items (at most {ctx.get('max_length')})"
    if kind == "too_short":
        return f"{name} has too few items (at least {ctx.get('min_length')})"
    bounds = {
        "greater_than_equal": ("at least", "ge"),
        "less_than_equal": ("at most", "le"),
        "greater_than": ("more than", "gt"),
        "less_than": ("less than", "lt"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return f"{name} must be {words} {ctx.get(key)}"
    if kind in ("literal_error", "enum"):
        return f"{name} must be one of {ctx.get('expected')}"
    if kind in _EXPECTED_TYPE:
        return f"{name} must be {_EXPECTED_TYPE[kind]}"
    message = str(error["msg"])
    return f"{name}: {message[:1].lower()}{message[1:]}"


def schema_refusal(
    tool: str, error: ValidationError, code: str, codes: Mapping[str, str] | None = None
) -> str:
    """The `<code>: <message>` sentence for arguments of `tool` that failed its schema.

    `code` is the default code; `codes` picks another by the first failure's pydantic type
    (the working memory's `field_too_long`, say).
    """
    errors = error.errors(include_url=False, include_input=False)
    chosen = (codes or {}).get(errors[0]["type"], code) if errors else code
    problems = "; ".join(_problem(each) for each in errors)
    fix = "fix it" if len(errors) == 1 else "fix them"
    return f"{chosen}: {problems} ({fix} and call {tool} again, as its input schema describes)."


class SchemaCheckedServer(MCPServer[Any]):
    """An `MCPServer` whose schema failures read as `<code>: <message>` (see the module)."""

    schema_code = "invalid-arguments"
    schema_codes: Mapping[str, str] = {}

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        """The SDK's call, with a schema failure's dump replaced by one sentence."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            sentence = schema_refusal(name, cause, self.schema_code, self.schema_codes)
            # the SDK's own prefix, as for every refusal (04 §1.1); the cause stays the
            # ValidationError so the SDK logs the rejected field names as before
            raise ToolError(f"Error executing tool {name}: {sentence}") from cause
