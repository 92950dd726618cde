"""The write subcommands of the command line, generated from the declared write tools.

One argparse subparser per `WriteTool` of `mbank.reducers.registry`, built from its `cli`
arguments; `write_arguments` turns the parsed flags into the tool's arguments (in the order of
its arguments Struct, as MCP sends them), which `mbank.cli` runs through
`mbank.writes.run_write` with `via="cli"`, printing the result as JSON or through the tool's
`render`. `--dry-run` prints the diff and writes nothing (spec 04 §9.2–9.4); `--governance`
lets a person's write change the governance folder (issue 14; not on init and materialize,
which seed it).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import msgspec

from mbank.gates.governance import GOVERNANCE_FLAG
from mbank.write_declaration import TEXT_LIMIT, CliArg, WriteTool


class CliArgumentError(Exception):
    """A flag whose value cannot be turned into the tool's argument (a usage error)."""


def _dest(arg: CliArg) -> str:
    return arg.flags[0].lstrip("-").replace("-", "_")


def add_write_command(sub: Any, tool: WriteTool[Any, Any]) -> None:
    """The subparser of one write tool."""
    parser = sub.add_parser(tool.command, help=tool.help)
    for arg in tool.cli:
        options: dict[str, Any] = {"dest": _dest(arg)}
        if not arg.flags[0].startswith("-"):
            options = {}  # a positional is named by its flag
        if arg.kind == "flag":
            options["action"] = "store_true"
        elif arg.kind in ("list", "extra"):
            options["action"] = "append"
        if arg.required:
            options["required"] = True
        if arg.choices is not None:
            options["choices"] = arg.choices
        if arg.kind == "value" and arg.default is not None:
            options["default"] = arg.default
        if arg.metavar is not None:
            options["metavar"] = arg.metavar
        if arg.help is not None:
            options["help"] = arg.help
        parser.add_argument(*arg.flags, **options)
    parser.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    if not tool.seeds_governance:
        parser.add_argument(
            GOVERNANCE_FLAG,
            action="store_true",
            help="a person changing the bank's governance (dna/): allow it, show the delta",
        )


def _comma_list(values: list[str]) -> list[str]:
    """Comma-separated, repeatable list flags, concatenated."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _extra(pairs: list[str] | None, as_json: str | None) -> dict[str, Any] | None:
    """`--extra-json` (an object) overlaid by each `--extra KEY=VALUE` in order (strings)."""
    extra: dict[str, Any] = {}
    if as_json is not None:
        try:
            loaded = json.loads(as_json)
        except json.JSONDecodeError as exc:
            raise CliArgumentError(f"--extra-json is not JSON: {exc.msg}") from None
        if not isinstance(loaded, dict):
            raise CliArgumentError("--extra-json must be a JSON object")
        extra.update(loaded)
    for pair in pairs or []:
        key, separator, value = pair.partition("=")
        if not separator or not key.strip():
            raise CliArgumentError(f"--extra takes KEY=VALUE, not {pair!r}")
        extra[key.strip()] = value
    return extra if pairs or as_json is not None else None


def _standard_input(flag: str) -> str:
    """What `FLAG -` reads: standard input as strict UTF-8 (one character past the bound, so
    the engine's `text-too-long` still sees an over-long input)."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream put in place of stdin (a test, an embedding program)
        return str(_checked_text(f"{flag} -", sys.stdin.read(TEXT_LIMIT + 1)))
    raw: bytes = buffer.read(4 * (TEXT_LIMIT + 1))
    try:
        text: str = raw.decode("utf-8")
        return text[: TEXT_LIMIT + 1]
    except UnicodeDecodeError as exc:
        raise CliArgumentError(
            f"{flag} -: standard input is not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
            f"offset {exc.start}); pass a UTF-8 file."
        ) from None


def _checked_text(flag: str, value: Any) -> Any:
    """A command-line value as given; bytes that were not UTF-8 (which Python keeps as lone
    surrogates) are a usage error naming the flag, not a traceback in the writer."""
    if isinstance(value, str) and any("\udc80" <= char <= "\udcff" for char in value):
        raise CliArgumentError(f"{flag}: the value is not UTF-8 text; pass UTF-8.")
    if isinstance(value, list):
        return [_checked_text(flag, item) for item in value]
    return value


def write_arguments(tool: WriteTool[Any, Any], parsed: argparse.Namespace) -> dict[str, Any]:
    """The tool's arguments from the parsed flags, in the order of its arguments Struct.

    A flag left out sends nothing (the Struct's default applies), except a `value` with a
    CLI default or a `default_from`. `--body-file -` reads standard input into `body`; both
    `--body` and `--body-file` given are passed on, so the tool answers `file-both`.
    """
    given: dict[str, Any] = {}
    extra_pairs: list[str] | None = None
    extra_json: str | None = None
    for arg in tool.cli:
        value = _checked_text(arg.flags[0], getattr(parsed, _dest(arg)))
        if arg.kind == "flag":
            if value:
                given[arg.to] = True
            elif arg.default is not None:
                given[arg.to] = arg.default
        elif arg.kind == "list":
            if value is not None:
                given[arg.to] = _comma_list(value)
        elif arg.kind == "extra":
            extra_pairs = value
        elif arg.kind == "extra-json":
            extra_json = value
        elif arg.kind == "file":
            inline = arg.inline or ""
            if value == "-" and given.get(inline) is None:
                # one character past the bound is enough for the engine to refuse it
                given[inline] = _standard_input(arg.flags[0])
            elif value is not None:
                given[arg.to] = value
        elif value is not None:
            given[arg.to] = value
        elif arg.default_from is not None and arg.default_from in given:
            given[arg.to] = given[arg.default_from]
    extra = _extra(extra_pairs, extra_json)
    if extra is not None:
        given["extra"] = extra
    order = [field.encode_name for field in msgspec.structs.fields(tool.args)]
    return {key: given[key] for key in order if key in given}
