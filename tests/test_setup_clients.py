"""`mbank setup claude|cursor|vscode|codex` (issue 15): what each client gets on an empty
project, merging into existing files (every other server and setting kept), a second run that
changes no byte, the dry run, the refusal of a file that does not parse, and — for real — the
written server command spawned and answering `initialize` with the full tool list, and the
written hook command run on a Stop payload.

Setup runs as the installed console script (`<venv>/bin/mbank`), the way a user runs it, so the
command it writes is the absolute path of that script.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mbank.setup.clients import BEGIN, CLIENTS, END, agent_paragraph, format_clients
from mbank.surface import tools_for

MBANK = str(Path(sys.executable).parent / "mbank")
FULL_TOOLS = sorted(tools_for("full"))


def setup(*arguments: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(cwd or Path.cwd())}
    env.pop("MBANK_ROOT", None)
    return subprocess.run(
        [MBANK, "setup", *arguments], capture_output=True, text=True, env=env, cwd=cwd, check=False
    )


def setup_ok(*arguments: str) -> str:
    done = setup(*arguments)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def tree(project: Path) -> dict[str, bytes]:
    """Every file under `project` except the bank and git, by relative path."""
    out = {}
    for path in sorted(project.rglob("*")):
        relative = path.relative_to(project).as_posix()
        if path.is_file() and not relative.startswith(("memory_bank/", ".git/")):
            out[relative] = path.read_bytes()
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def banked(project: Path) -> Path:
    """A git project with a seeded bank at memory_bank/."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    done = subprocess.run(
        [MBANK, "init", "Demo", "--root", str(project / "memory_bank")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return project


WRITES = {
    "claude": [".claude/settings.json", ".mcp.json", "CLAUDE.md"],
    "cursor": [".cursor/mcp.json", ".cursor/rules/memorybank.mdc"],
    "vscode": [".vscode/mcp.json"],
    "codex": [".codex/config.toml", "AGENTS.md"],
}


def test_setup_alone_lists_every_client_and_what_it_writes() -> None:
    out = setup_ok()
    assert out == format_clients()
    for name in CLIENTS:
        assert f"\n  {name:<7} " in out
    assert ".mcp.json (mcpServers.memorybank)" in out and "\n  git     " in out


@pytest.mark.parametrize("client", sorted(WRITES))
def test_setup_on_an_empty_project_writes_its_files(client: str, project: Path) -> None:
    out = setup_ok(client, "--project", str(project))
    assert sorted(tree(project)) == WRITES[client]
    for relative in WRITES[client]:
        assert f"wrote {project / relative}\n" in out
    assert f"server: {MBANK} --root memory_bank\n" in out
    assert f"no bank at {project / 'memory_bank'} yet" in out


def test_claude_files_say_exactly_this(project: Path) -> None:
    setup_ok("claude", "--project", str(project))
    assert json.loads((project / ".mcp.json").read_text()) == {
        "mcpServers": {"memorybank": {"command": MBANK, "args": ["--root", "./memory_bank"]}}
    }
    assert json.loads((project / ".claude/settings.json").read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": f"{MBANK} hook"}]}]}
    }
    assert (project / "CLAUDE.md").read_text() == f"{BEGIN}\n{agent_paragraph()}{END}\n"


def test_editors_name_the_bank_from_the_workspace_folder(project: Path) -> None:
    setup_ok("cursor", "--project", str(project))
    setup_ok("vscode", "--project", str(project))
    args = ["--root", "${workspaceFolder}/memory_bank"]
    assert json.loads((project / ".cursor/mcp.json").read_text()) == {
        "mcpServers": {"memorybank": {"command": MBANK, "args": args}}
    }
    assert json.loads((project / ".vscode/mcp.json").read_text()) == {
        "servers": {"memorybank": {"type": "stdio", "command": MBANK, "args": args}}
    }
    rule = (project / ".cursor/rules/memorybank.mdc").read_text()
    assert rule.startswith("---\ndescription: ") and "alwaysApply: true\n---\n" in rule
    assert agent_paragraph() in rule


def test_codex_writes_a_toml_table_and_the_agents_paragraph(project: Path) -> None:
    out = setup_ok("codex", "--project", str(project))
    config = tomllib.loads((project / ".codex/config.toml").read_text())
    assert config == {
        "mcp_servers": {"memorybank": {"command": MBANK, "args": ["--root", "./memory_bank"]}}
    }
    assert agent_paragraph() in (project / "AGENTS.md").read_text()
    assert "Codex reads .codex/config.toml only in a trusted project" in out


def test_codex_user_writes_the_users_config_and_nothing_outside_the_project_otherwise(
    project: Path, tmp_path: Path
) -> None:
    home = tmp_path / "codex-home"
    env = {**os.environ, "CODEX_HOME": str(home)}
    done = subprocess.run(
        [MBANK, "setup", "codex", "--project", str(project), "--user"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "memorybank" in tomllib.loads((home / "config.toml").read_text())["mcp_servers"]
    assert not (project / ".codex").exists()


def test_existing_config_keeps_every_other_server_setting_and_line(project: Path) -> None:
    other = {"command": "npx", "args": ["-y", "other-server"]}
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"other": other}, "note": "mine"}, indent=2) + "\n"
    )
    (project / ".claude").mkdir()
    lint = {"matcher": "Edit", "hooks": [{"type": "command", "command": "make lint"}]}
    (project / ".claude/settings.json").write_text(
        json.dumps({"model": "opus", "hooks": {"Stop": [lint], "PreToolUse": [lint]}}) + "\n"
    )
    (project / "CLAUDE.md").write_text("# Project rules\n\nUse tabs.\n")
    (project / ".cursor").mkdir()
    (project / ".cursor/mcp.json").write_text(json.dumps({"mcpServers": {"other": other}}))
    (project / ".codex").mkdir()
    (project / ".codex/config.toml").write_text(
        'model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n'
    )
    for client in ("claude", "cursor", "codex"):
        setup_ok(client, "--project", str(project))

    servers = json.loads((project / ".mcp.json").read_text())
    assert servers["note"] == "mine"
    assert list(servers["mcpServers"]) == ["other", "memorybank"]
    assert servers["mcpServers"]["other"] == other
    settings = json.loads((project / ".claude/settings.json").read_text())
    assert settings["model"] == "opus" and settings["hooks"]["PreToolUse"] == [lint]
    assert settings["hooks"]["Stop"] == [
        lint,
        {"hooks": [{"type": "command", "command": f"{MBANK} hook"}]},
    ]
    claude_md = (project / "CLAUDE.md").read_text()
    assert claude_md.startswith("# Project rules\n\nUse tabs.\n\n" + BEGIN + "\n")
    assert list(json.loads((project / ".cursor/mcp.json").read_text())["mcpServers"]) == [
        "other",
        "memorybank",
    ]
    codex = (project / ".codex/config.toml").read_text()
    assert codex.startswith('model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n\n# >>> mbank')
    assert set(tomllib.loads(codex)["mcp_servers"]) == {"other", "memorybank"}


@pytest.mark.parametrize("client", sorted(WRITES))
def test_a_second_run_changes_no_byte(client: str, project: Path) -> None:
    setup_ok(client, "--project", str(project))
    before = tree(project)
    out = setup_ok(client, "--project", str(project))
    assert tree(project) == before
    assert f"{client} is already wired in {project}; nothing to change.\n" in out
    assert "wrote " not in out


def test_an_old_mbank_hook_is_replaced_in_place_not_added_twice(project: Path) -> None:
    (project / ".claude").mkdir()
    old = {"hooks": [{"type": "command", "command": "uvx mbank hook"}]}
    (project / ".claude/settings.json").write_text(json.dumps({"hooks": {"Stop": [old]}}))
    setup_ok("claude", "--project", str(project))
    stop = json.loads((project / ".claude/settings.json").read_text())["hooks"]["Stop"]
    assert stop == [{"hooks": [{"type": "command", "command": f"{MBANK} hook"}]}]


def test_a_changed_paragraph_is_refreshed_between_its_markers(project: Path) -> None:
    (project / "CLAUDE.md").write_text(f"Intro.\n\n{BEGIN}\nold words\n{END}\nOutro.\n")
    setup_ok("claude", "--project", str(project))
    text = (project / "CLAUDE.md").read_text()
    assert text == f"Intro.\n\n{BEGIN}\n{agent_paragraph()}{END}\nOutro.\n"


def test_dry_run_prints_diffs_and_writes_nothing(project: Path) -> None:
    (project / "CLAUDE.md").write_text("# Rules\n")
    out = setup_ok("claude", "--project", str(project), "--dry-run")
    assert tree(project) == {"CLAUDE.md": b"# Rules\n"}
    assert "--- a/.mcp.json\n+++ b/.mcp.json\n" in out
    assert "--- a/CLAUDE.md\n+++ b/CLAUDE.md\n" in out and "+## Memory bank\n" in out
    assert out.count("(dry run: nothing was written)\n") == 1


@pytest.mark.parametrize(
    ("client", "relative", "text", "problem"),
    [
        (
            "claude",
            ".mcp.json",
            '{"mcpServers": {"other": {}},}',
            "Expecting property name enclosed in double quotes: line 1 column 30 (char 29)",
        ),
        (
            "claude",
            ".claude/settings.json",
            "{hooks: []}",
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        ("cursor", ".cursor/mcp.json", "[1, 2]", "the top level is a list, not an object"),
        (
            "vscode",
            ".vscode/mcp.json",
            "{\n  // a comment\n}",
            "Expecting property name enclosed in double quotes: line 2 column 3 (char 4)",
        ),
    ],
)
def test_a_file_that_does_not_parse_is_refused_and_nothing_is_written(
    client: str, relative: str, text: str, problem: str, project: Path
) -> None:
    path = project / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    before = tree(project)
    done = setup(client, "--project", str(project))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f"mbank: {path} is not valid JSON ({problem}); fix it (or move it away), then run "
        "this again; nothing was written.\n"
    )
    assert tree(project) == before


def test_a_codex_config_that_does_not_parse_is_refused(project: Path) -> None:
    (project / ".codex").mkdir()
    (project / ".codex/config.toml").write_text("model = \n")
    done = setup("codex", "--project", str(project))
    assert done.returncode == 1
    assert done.stderr.startswith(f"mbank: {project / '.codex/config.toml'} is not valid TOML (")
    assert not (project / "AGENTS.md").exists()


def test_a_codex_server_of_the_same_name_outside_the_block_is_refused(project: Path) -> None:
    (project / ".codex").mkdir()
    (project / ".codex/config.toml").write_text('[mcp_servers.memorybank]\ncommand = "x"\n')
    done = setup("codex", "--project", str(project))
    assert done.returncode == 1
    assert "already declares [mcp_servers.memorybank] outside mbank's block" in done.stderr
    assert not (project / "AGENTS.md").exists()


# --------------------------------------------------------------------------------------------
# The written commands, run for real
# --------------------------------------------------------------------------------------------


async def _initialize(command: str, args: list[str], cwd: Path) -> tuple[str | None, list[str]]:
    # the SDK adds its few default variables (HOME, PATH …) to `env`; the projection cache goes
    # to the private directory conftest made for this run, never the user's ~/.cache
    env = {"XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(cwd))
    async with Client(params) as client:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        return client.server_info.name if client.server_info else None, tools


@pytest.mark.stdio
@pytest.mark.parametrize(
    ("client", "relative", "table"),
    [
        ("claude", ".mcp.json", "mcpServers"),
        ("cursor", ".cursor/mcp.json", "mcpServers"),
        ("vscode", ".vscode/mcp.json", "servers"),
    ],
)
def test_the_written_server_command_answers_initialize_with_every_tool(
    client: str, relative: str, table: str, banked: Path
) -> None:
    setup_ok(client, "--project", str(banked))
    entry = json.loads((banked / relative).read_text())[table]["memorybank"]
    # what the editor does with its variable before it spawns the server
    args = [arg.replace("${workspaceFolder}", str(banked)) for arg in entry["args"]]
    name, tools = anyio.run(_initialize, entry["command"], args, banked)
    assert name == "memorybank"
    assert tools == FULL_TOOLS and len(tools) == 19


@pytest.mark.stdio
def test_the_codex_command_answers_initialize_with_every_tool(banked: Path) -> None:
    setup_ok("codex", "--project", str(banked))
    entry = tomllib.loads((banked / ".codex/config.toml").read_text())["mcp_servers"]["memorybank"]
    name, tools = anyio.run(_initialize, entry["command"], entry["args"], banked)
    assert (name, tools) == ("memorybank", FULL_TOOLS)


def test_the_written_hook_command_runs_and_asks_on_a_dirty_tree(banked: Path) -> None:
    setup_ok("claude", "--project", str(banked))
    settings = json.loads((banked / ".claude/settings.json").read_text())
    command = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    payload = json.dumps({"session_id": f"setup-{os.getpid()}-{id(banked)}", "cwd": str(banked)})
    done = subprocess.run(
        command,
        shell=True,
        input=payload,
        capture_output=True,
        text=True,
        cwd=banked,
        env={"PATH": "/usr/bin:/bin", "TMPDIR": str(banked.parent)},
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    answer: dict[str, Any] = json.loads(done.stdout)
    assert answer["decision"] == "block" and "inbox" in answer["reason"]


def test_uvx_writes_uvx_from_where_this_mbank_was_installed(project: Path) -> None:
    setup_ok("claude", "--project", str(project), "--uvx")
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["memorybank"]
    assert entry["command"] == "uvx"
    # this test environment installs mbank from the checkout (pip install -e .)
    assert entry["args"][:3] == ["--from", str(Path(__file__).resolve().parents[1]), "mbank"]
    assert entry["args"][3:] == ["--root", "./memory_bank"]
    hook = json.loads((project / ".claude/settings.json").read_text())
    assert hook["hooks"]["Stop"][0]["hooks"][0]["command"].startswith("uvx --from ")


def test_a_bank_elsewhere_is_named_to_the_server_and_the_hook(banked: Path) -> None:
    bank = banked / "docs" / "kb"
    done = subprocess.run(
        [MBANK, "init", "KB", "--root", str(bank)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1  # one bank per repository: this one already has memory_bank/
    other = banked.parent / "elsewhere"
    other.mkdir()
    assert (
        subprocess.run([MBANK, "init", "KB", "--root", str(other / "docs" / "kb")]).returncode == 0
    )
    setup_ok("claude", "--project", str(other), "--root", str(other / "docs" / "kb"))
    entry = json.loads((other / ".mcp.json").read_text())["mcpServers"]["memorybank"]
    assert entry["args"] == ["--root", "./docs/kb"]
    settings = json.loads((other / ".claude/settings.json").read_text())
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"] == f"{MBANK} hook --root docs/kb"
    assert agent_paragraph("docs/kb") in (other / "CLAUDE.md").read_text()
