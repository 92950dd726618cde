"""A tool function whose signature is built from a declaration instead of written by hand.

The MCP SDK reads a tool's parameters from its function's signature and annotations. The
bank's write tools are declared by their arguments Struct and the memo tools by the
`MemoTools` methods, so their MCP functions get a signature made from that declaration:
one keyword-only parameter each, in the declared order, with the published annotation.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

Result = TypeVar("Result")


def keyword_parameter(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    """One published parameter; `inspect.Parameter.empty` as the default makes it required."""
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def declared_function(
    name: str,
    parameters: Sequence[inspect.Parameter],
    call: Callable[..., Result],
    returns: Any,
) -> Callable[..., Result]:
    """`call` (which takes `**arguments`) published under `name` with these parameters."""
    call.__signature__ = inspect.Signature(list(parameters), return_annotation=returns)  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": returns}
    call.__name__ = name
    return call
