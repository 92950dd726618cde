"""The pure edits behind `mbank setup CLIENT` (mbank.setup.client_files), and the command run
in process (`mbank.cli.main`), where the command written is this Python's `-m mbank`."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from mbank.cli import main
from mbank.model import RefusalError
from mbank.setup.client_files import (
    is_mbank_hook,
    load_json_object,
    with_json_server,
    with_marked_block,
    with_stop_hook,
)
from mbank.setup.clients import CLIENTS, hook_command, server_command

ENTRY = {"command": "mbank", "args": ["--root", "./memory_bank"]}


def test_a_server_is_added_beside_the_others_and_an_equal_one_keeps_the_bytes() -> None:
    text = '{"mcpServers": {"a": {"command": "x"}}}'
    added = with_json_server("p", text, "mcpServers", "memorybank", ENTRY)
    assert json.loads(added) == {"mcpServers": {"a": {"command": "x"}, "memorybank": ENTRY}}
    assert with_json_server("p", added, "mcpServers", "memorybank", ENTRY) == added
    assert json.loads(with_json_server("p", None, "servers", "memorybank", ENTRY)) == {
        "servers": {"memorybank": ENTRY}
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"mcpServers": []}',
            'p is not valid client configuration ("mcpServers" is not an object)',
        ),
        ("7", "p is not valid JSON (the top level is a int, not an object)"),
    ],
)
def test_a_wrong_shape_is_refused_with_the_path(text: str, message: str) -> None:
    with pytest.raises(RefusalError) as refused:
        with_json_server("p", text, "mcpServers", "memorybank", ENTRY)
    assert refused.value.refusal.message.startswith(message)
    assert refused.value.refusal.rule == "setup-unparseable"


def test_an_empty_file_reads_as_an_empty_object() -> None:
    assert load_json_object("p", "  \n") == {}


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        ("mbank hook", True),
        ("/opt/x/bin/mbank hook", True),
        ("'/a b/mbank' hook --root kb", True),
        ("/usr/bin/python3 -m mbank hook", True),
        ("uvx --from /src mbank hook", True),
        ("mbank hooks", False),
        ("make lint", False),
        (None, False),
    ],
)
def test_which_hook_commands_are_mbanks(command: object, ours: bool) -> None:
    assert is_mbank_hook(command) is ours


def test_the_stop_hook_is_added_once_and_a_second_mbank_hook_is_left_alone() -> None:
    first = with_stop_hook("s", None, "mbank hook")
    assert with_stop_hook("s", first, "mbank hook") == first
    doubled = json.dumps(
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mbank hook"}] * 2}]}}
    )
    assert with_stop_hook("s", doubled, "mbank hook") == doubled
    with pytest.raises(RefusalError):
        with_stop_hook("s", '{"hooks": {"Stop": {}}}', "mbank hook")
    odd = json.dumps({"hooks": {"Stop": ["text", {"hooks": "no"}]}})
    assert json.loads(with_stop_hook("s", odd, "x mbank hook"))["hooks"]["Stop"][2] == {
        "hooks": [{"type": "command", "command": "x mbank hook"}]
    }


def test_a_marked_block_is_appended_replaced_and_an_unclosed_marker_appends() -> None:
    assert with_marked_block(None, "<b>", "<e>", "x\n") == "<b>\nx\n<e>\n"
    assert with_marked_block("top", "<b>", "<e>", "x") == "top\n\n<b>\nx\n<e>\n"
    assert (
        with_marked_block("a\n<b>\nold\n<e>\nz\n", "<b>", "<e>", "new") == "a\n<b>\nnew\n<e>\nz\n"
    )
    assert with_marked_block("<b>\nno end\n", "<b>", "<e>", "x").endswith("\n\n<b>\nx\n<e>\n")


def test_the_command_in_process_is_this_python() -> None:
    assert server_command(uvx=False) == [sys.executable, "-m", "mbank"]
    assert hook_command([sys.executable, "-m", "mbank"]) == (
        f"{shlex.quote(sys.executable)} -m mbank hook"
    )


@pytest.mark.parametrize("client", list(CLIENTS))
def test_setup_in_process_writes_then_changes_nothing(
    client: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["setup", client, "--project", str(tmp_path)]) == 0
    first = capsys.readouterr().out
    assert "wrote " in first and f"server: {shlex.quote(sys.executable)} -m mbank" in first
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert main(["setup", client, "--project", str(tmp_path)]) == 0
    assert "nothing to change" in capsys.readouterr().out
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert main(["setup", client, "--project", str(tmp_path / "dry"), "--dry-run"]) == 0
    assert "(dry run: nothing was written)" in capsys.readouterr().out
    assert not (tmp_path / "dry").exists()


def test_setup_refuses_an_unparseable_file_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".mcp.json").write_text("{")
    assert main(["setup", "claude", "--project", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith(
        f"mbank: {tmp_path / '.mcp.json'} is not valid JSON ("
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [".mcp.json"]
