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

import collections
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


# The clause for each failure that needs no more than the argument's name and the check's
# context (`ctx`), by pydantic's error type; the rest is `_problem`'s.
_CLAUSES = {
    "missing": "{name} is required",
    "extra_forbidden": "{name} is not an argument of this tool; leave it out",
    "string_too_long": "{name} is too long (at most {ctx[max_length]} characters)",
    "string_too_short": "{name} is too short (at least {ctx[min_length]} characters)",
    "too_long": "{name} has too many items (at most {ctx[max_length]})",
    "too_short": "{name} has too few items (at least {ctx[min_length]})",
    "greater_than_equal": "{name} must be at least {ctx[ge]}",
    "less_than_equal": "{name} must be at most {ctx[le]}",
    "greater_than": "{name} must be more than {ctx[gt]}",
    "less_than": "{name} must be less than {ctx[lt]}",
    "literal_error": "{name} must be one of {ctx[expected]}",
    "enum": "{name} must be one of {ctx[expected]}",
}


def _problem(error: ErrorDetails) -> str:
    """One failed check as a clause: `question` is required, `limit` must be at least 1."""
    name = f"`{_argument(error)}`"
    kind = error["type"]
    ctx = collections.defaultdict(lambda: "None", error.get("ctx") or {})
    if kind in _CLAUSES:
        return _CLAUSES[kind].format(name=name, ctx=ctx)
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
