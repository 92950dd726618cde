"""One declaration per write tool (issue 12): the registry, typed arguments and facts, and the
generic MCP and CLI adapters generated from it.

A test-only tool declared here (`bank_stamp`, one reducer-like declaration) is served by the
real MCP adapter and parsed by the real CLI adapter without touching either, which is what
"adding a write tool is one reducer module, one registry line and its tests" promises.
"""

from __future__ import annotations

import argparse
import ast
import inspect
from pathlib import Path
from typing import Annotated, Any

import anyio
import msgspec
import pytest
from mcp import Client

from mbank.cli_writes import add_write_command, write_arguments
from mbank.gates.documents import DocumentFacts, document_fact_paths, document_to_write
from mbank.gates.paths import FactNotGathered, PathOnDisk, path_fact
from mbank.model import Intent, Plan, PlanOutcome, RefusalError
from mbank.plan import replace_document
from mbank.reducers import registry
from mbank.reducers.report import finished
from mbank.server import BankServer, write_tool_function
from mbank.snapshot import Bank, Snapshot
from mbank.surface import PARAMETER_WORDS, TOOL_WORDS, compact_schema
from mbank.write_declaration import FACT_NAMES, CliArg, Published, WriteTool
from mbank.writes import run_write

REDUCERS = Path(__file__).resolve().parent.parent / "reducers"


def exported_write_tools() -> set[str]:
    """The reducer modules that assign a module-level `WRITE_TOOL`."""
    found: set[str] = set()
    for path in sorted(REDUCERS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == "WRITE_TOOL" for t in targets):
                found.add(path.stem)
    return found


def test_every_reducer_that_declares_a_write_tool_is_in_the_registry_once() -> None:
    listed = {tool.gate_and_plan.__module__.rsplit(".", 1)[-1] for tool in registry.WRITE_TOOLS}
    assert listed == exported_write_tools()
    assert len(registry.BY_NAME) == len(registry.BY_COMMAND) == len(registry.WRITE_TOOLS) == 11


@pytest.mark.parametrize("tool", registry.WRITE_TOOLS, ids=lambda tool: tool.name)
def test_a_declared_tool_has_its_words_required_facts_and_typed_arguments(
    tool: WriteTool[Any, Any],
) -> None:
    assert tool.name in TOOL_WORDS
    facts = msgspec.structs.fields(tool.facts)
    assert {field.name for field in facts} <= FACT_NAMES
    assert all(field.required for field in facts), "a fact with a default could go ungathered"
    for field in msgspec.structs.fields(tool.args):
        for meta in getattr(field.type, "__metadata__", ()):
            if isinstance(meta, Published) and meta.words is not None:
                assert meta.words in PARAMETER_WORDS
    encoded = {field.encode_name for field in msgspec.structs.fields(tool.args)}
    assert "dryRun" in encoded
    assert {arg.to for arg in tool.cli} <= encoded


def test_a_path_fact_that_was_not_gathered_fails_instead_of_reading_as_free() -> None:
    assert path_fact({"a.md": PathOnDisk(exists=True)}, "a.md") == PathOnDisk(exists=True)
    with pytest.raises(FactNotGathered, match=r"no outside fact was gathered for b\.md"):
        path_fact({"a.md": PathOnDisk()}, "b.md")


def test_arguments_that_do_not_fit_the_struct_are_refused_with_a_sentence(
    tmp_path: Path,
) -> None:
    (tmp_path / "bank").mkdir()
    with pytest.raises(RefusalError) as refused:
        run_write(registry.BY_NAME["bank_edit"], Bank(tmp_path / "bank"), {"path": 3})
    assert refused.value.refusal.rule == "invalid-arguments"
    assert refused.value.refusal.message == (
        "The arguments of bank_edit do not fit its schema: Expected `str`, got `int` - at "
        "`$.path`. Pass them as the tool's input schema describes."
    )


# --------------------------------------------------------------------------------------------
# A tool declared only here: the adapters serve it without a line of their own
# --------------------------------------------------------------------------------------------


class StampArgs(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    path: str
    stamp: Annotated[str, Published(min_length=1, max_length=40, words="purpose")]
    dry_run: bool = False


def stamp_plan(snapshot: Snapshot, intent: Intent[StampArgs, DocumentFacts]) -> PlanOutcome:
    doc = document_to_write(snapshot, intent.facts, intent.args.path)
    text = snapshot.raw[doc.path].rstrip("\n") + f"\n\n{intent.args.stamp}\n"
    op = replace_document(snapshot, doc.path, text)
    return PlanOutcome(
        plan=Plan("bank_stamp", (op,)), result={"path": doc.path, "dryRun": intent.dry_run}
    )


STAMP = WriteTool(
    name="bank_stamp",
    command="stamp",
    help="append a stamp line",
    args=StampArgs,
    facts=DocumentFacts,
    fact_paths=document_fact_paths,
    gate_and_plan=stamp_plan,
    shape=finished("stamped"),
    render=lambda result: f"STAMPED {result['path']}\n",
    cli=(CliArg(("path",), "path"), CliArg(("--stamp",), "stamp", required=True)),
)


def test_the_cli_adapter_builds_a_subcommand_from_the_declaration() -> None:
    parser = argparse.ArgumentParser()
    add_write_command(parser.add_subparsers(dest="command"), STAMP)
    parsed = parser.parse_args(["stamp", "a.md", "--stamp", "seen", "--dry-run"])
    assert write_arguments(STAMP, parsed) == {"path": "a.md", "stamp": "seen"}
    assert parsed.dry_run is True


def test_the_mcp_adapter_publishes_the_declared_arguments_and_runs_the_tool(
    tmp_path: Path,
) -> None:
    root = tmp_path / "bank"
    root.mkdir()
    (root / "a.md").write_text("---\ntitle: A\n---\n# A\n", encoding="utf-8")
    server = BankServer("stamp-test")
    from mbank.server import BankService

    server.service = BankService(str(root))
    function = write_tool_function(STAMP, server)
    assert list(inspect.signature(function).parameters) == ["path", "stamp", "dryRun"]
    server.add_tool(function, name=STAMP.name, description="Stamp.")

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(server, mode="legacy") as client:
            listed = await client.list_tools()
            called = await client.call_tool("bank_stamp", {"path": "a.md", "stamp": "seen"})
            return listed.tools[0].input_schema, called.structured_content or {}

    schema, result = anyio.run(scenario)
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "stamp": {
                "type": "string",
                "minLength": 1,
                "maxLength": 40,
                "description": PARAMETER_WORDS["purpose"],
            },
            "dryRun": {"type": "boolean", "default": False},
        },
        "required": ["path", "stamp"],
    }
    assert result["path"] == "a.md" and result["stamped"] is True
    assert (root / "a.md").read_text(encoding="utf-8").endswith("\n\nseen\n")
