"""What a write tool is, as one value: its name, arguments, facts, planner, result and report.

Pure. Each reducer module exports one `WriteTool` (its `WRITE_TOOL`); `mbank.reducers.registry`
lists them, and the shell's generic adapters are generated from that list: the MCP tool
(`mbank.server`), the CLI subcommand (`mbank.cli`) and the write runner that gathers the
facts and runs the engine (`mbank.writes.run_write`). Adding a write tool is one reducer
module, one registry line and its tests (plus its published words in `mbank.surface`).

- `args` is a frozen msgspec Struct of the tool's arguments, named as MCP names them (a
  `rename="camel"` Struct). Its fields' `Published` annotations say how the MCP schema bounds
  and describes them; the Struct itself only types them, so a CLI call reaches the gates'
  own refusals exactly as before.
- `facts` is a frozen msgspec Struct whose fields are outside facts by their standard names
  (`FACT_NAMES`); the shell gathers exactly those, and `fact_paths` (pure) says which bank
  paths the path facts are about.
- `shape` builds the tool's result from the engine's outcome; `render` prints it for a person.
- `cli` declares the subcommand's arguments as data (`CliArg`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

import msgspec

from mbank.model import Intent, PlanOutcome
from mbank.projection import Snapshot

ArgsT = TypeVar("ArgsT", bound=msgspec.Struct)
FactsT = TypeVar("FactsT", bound=msgspec.Struct)

# The bound of every text argument and content file (04 §2.1)
TEXT_LIMIT = 1_000_000

# The outside facts the shell knows how to gather (`mbank.write_facts`), by field name.
FACT_NAMES = frozenset(
    {
        "inner_root_dir",  # bool: <root>/<root name>/ is a real directory (01 §2.2 step 8)
        "gone",  # {bank path: the journal's "where did it go" sentence} (03 §14.9)
        "on_disk",  # {bank path: PathOnDisk} for paths a write may create
        "templates",  # {bank path: text}: the shipped templates
        "starter",  # {bank path: text}: the shipped starter set
        "starter_location",  # str: where the starter set was looked for
        "root_not_directory",  # bool: the root exists as something other than a directory
        "seed_targets",  # {bank path: SeedTarget} for paths init/materialize would write
        "undo",  # UndoFacts: the journal records, current hashes and kept pre-images
    }
)


class Published(msgspec.Struct, frozen=True):
    """How an argument is published in the MCP input schema: its bounds and the key of its
    description in `mbank.surface.PARAMETER_WORDS`. msgspec ignores this annotation."""

    min_length: int | None = None
    max_length: int | None = None
    ge: int | None = None
    le: int | None = None
    words: str | None = None
    # Published as required although the Struct lets it be absent (default ""), so that a
    # caller reaching the gates without it (a library call) gets the gate's own
    # "`<x>` is required" refusal, as the CLI and MCP callers always did.
    required: bool = False


class FactPaths(msgspec.Struct, frozen=True):
    """The bank paths a tool's path facts are about."""

    on_disk: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()
    seed_targets: tuple[str, ...] = ()


class KnownFacts(msgspec.Struct, frozen=True):
    """The facts gathered before the path facts, which `fact_paths` may need to name paths."""

    inner_root_dir: bool
    templates: Mapping[str, str]


CliKind = Literal["value", "flag", "list", "file", "extra", "extra-json"]


class CliArg(msgspec.Struct, frozen=True):
    """One argparse argument of a write subcommand and the tool argument it fills.

    Kinds: `value` (sent when given, or its `default`), `flag` (store_true; sent as true when
    set, else as its `default` when it has one, else not at all), `list` (repeatable, comma-
    separated), `file` (`--…-file F`; `-` reads standard input into the `inline` argument
    instead), `extra` (repeatable KEY=VALUE into an object) and `extra-json` (a JSON object,
    overlaid by `extra` pairs).
    """

    flags: tuple[str, ...]
    to: str
    kind: CliKind = "value"
    help: str | None = None
    metavar: str | None = None
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] | None = None
    inline: str | None = None
    # when absent, the value given for that other tool argument (create's title: the path)
    default_from: str | None = None


# (result fields, applied, common fields, warnings) -> the tool's full result
ShapeResult = Callable[
    [Mapping[str, Any], bool, Mapping[str, Any], tuple[str, ...]], dict[str, Any]
]


def no_paths(_snapshot: Snapshot, _args: Any, _known: KnownFacts) -> FactPaths:
    """The `fact_paths` of a tool whose facts name no bank path."""
    return FactPaths()


@dataclass(frozen=True)
class WriteTool(Generic[ArgsT, FactsT]):
    """One write tool, declared once (see the module docstring)."""

    name: str
    command: str
    help: str
    args: type[ArgsT]
    facts: type[FactsT]
    gate_and_plan: Callable[[Snapshot, Intent[ArgsT, FactsT]], PlanOutcome]
    shape: ShapeResult
    render: Callable[[dict[str, Any]], str]
    cli: tuple[CliArg, ...]
    fact_paths: Callable[[Snapshot, ArgsT, KnownFacts], FactPaths] = no_paths
    # bank_init: the write creates a missing root, the CLI falls back to ./memory_bank, and a
    # seed session opens its full surface after it
    creates_root: bool = False
    # a post-check refusal gains this line (materialize: pass force, or restore the sources)
    postcheck_hint: str | None = None
    # init and materialize seed the governance folder by design: the rule that only a person
    # changes it (the CLI with --governance, issue 14) does not apply to them
    seeds_governance: bool = False
    # the journal record's tool name, when it is not the MCP name (undo keeps "undo")
    journal_name: str | None = None
    # a result key naming a journal record: the directories that record created are removed
    # by the apply once the plan leaves them empty (undo)
    prunes_dirs_of: str | None = None


def content_flags(inline: str) -> tuple[CliArg, CliArg]:
    """`--<inline> TEXT` and `--<inline>-file F` (`-`: standard input) for a content pair."""
    return (
        CliArg((f"--{inline}",), inline, metavar="TEXT"),
        CliArg(
            (f"--{inline}-file",),
            f"{inline}File",
            kind="file",
            inline=inline,
            metavar="F",
            help="a file in the project, or - (stdin)",
        ),
    )
