"""`mbank setup claude|cursor|vscode|codex [--project DIR] [--root BANK] [--dry-run] [--uvx]`.

One command wires a project for an agent client (issue 15): the client's MCP server entry, and
the standing instructions that make the agent use it (the agent paragraph, spec 04 §8.3), plus
Claude Code's Stop hook (04 §10.5). What each client gets:

- claude: `.mcp.json` (`mcpServers.memorybank`), the Stop hook in `.claude/settings.json`, the
  paragraph in `CLAUDE.md` between marker comments;
- cursor: `.cursor/mcp.json` (`mcpServers.memorybank`) and the rule `.cursor/rules/memorybank.mdc`;
- vscode: `.vscode/mcp.json` (`servers.memorybank`);
- codex: the paragraph in `AGENTS.md` and `[mcp_servers.memorybank]` in the project's
  `.codex/config.toml` (Codex reads it in a trusted project); `--user` writes the user's
  `~/.codex/config.toml` (or `$CODEX_HOME/config.toml`) instead.

The command written is one that runs on this machine (`server_command`): bare `mbank` when the
`mbank` on PATH is this one and does not live in a virtual environment's own `bin/` (pipx,
`uv tool`, a system install); else its absolute path, so a client started without the venv
activated still finds it; `--uvx` writes `uvx --from <where this mbank was installed from>
mbank`. The bank root is written relative to the project (`./memory_bank`, or
`${workspaceFolder}/memory_bank` for the editors, which start servers elsewhere).

Every edit is one of `mbank.setup.client_files`: it keeps every other server, setting and line,
changes no byte on a second run, and refuses a file it cannot parse. `--dry-run` prints the
unified diff of each file and writes nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from typing import Any

import msgspec

from mbank.discovery import BANK_NAMES, discover_root
from mbank.model import RefusalError
from mbank.setup.client_files import (
    check_toml,
    with_json_server,
    with_marked_block,
    with_stop_hook,
)
from mbank.setup.file_changes import FileChange, read_text, show_or_write, write_text

SERVER = "memorybank"
BEGIN = "<!-- >>> mbank: the memory bank paragraph (written by `mbank setup`; run it again) -->"
END = "<!-- <<< mbank -->"
TOML_BEGIN = "# >>> mbank: the memory bank server (written by `mbank setup codex`)"
TOML_END = "# <<< mbank"


def agent_paragraph(bank: str = "memory_bank") -> str:
    """The paragraph for `CLAUDE.md` / `AGENTS.md` / a Cursor rule (04 §8.3), for a bank at
    `bank` (relative to the project). The README shows it for `memory_bank`."""
    return f"""## Memory bank

Project knowledge lives in `{bank}/` and is served by the `memorybank` MCP server.
Its tools all start with `bank_`; if they are not loaded yet, search for `bank_` and load
them before you look anything up. Do not read, grep or write files under `{bank}/`
with the shell.

- **Finding:** `bank_route` (which documents answer a question; pass it the question as
  asked), `bank_search` (a literal term or identifier in bodies), `bank_read` (several
  paths in one call, one section when you can), `bank_graph`; start a session with
  `memorybank://index`.
- **Changing:** `bank_edit` (one exact fragment), `bank_update_section` (one `##` section),
  `bank_rewrite` (a whole body), `bank_set_field` (one frontmatter value, or a list field
  such as `derived_from` as a list), `bank_set_status` (lifecycle), `bank_undo` (the newest
  write not yet undone; call again to step further back).
- **Creating:** `bank_create` (a governed document; `inbox: true` for an unreviewed note),
  `bank_promote` and `bank_discard` (reviewing `_inbox/`).
- **Checking:** `bank_validate` before a commit, `bank_changed` (what moved),
  `bank_drift` (code that moved on without its document).

Every write accepts `dryRun: true` and answers with the diff it would apply. Nothing under
`dna/` (the bank's governance) can be changed over MCP: propose the change as an inbox note
(`bank_create` with `inbox: true`) for a person to apply.
"""


# --------------------------------------------------------------------------------------------
# How to start mbank on this machine
# --------------------------------------------------------------------------------------------


def _install_source() -> str | None:
    """Where this mbank was installed from, as uvx's `--from` takes it (PEP 610), else None."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        recorded = distribution("mbank").read_text("direct_url.json")
    except PackageNotFoundError:
        return None
    if not recorded:
        return None
    try:
        direct = json.loads(recorded)
    except ValueError:
        return None
    url = direct.get("url") if isinstance(direct, dict) else None
    if not isinstance(url, str):
        return None
    vcs = direct.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs") == "git":
        commit = vcs.get("requested_revision") or vcs.get("commit_id")
        return f"git+{url}" + (f"@{commit}" if commit else "")
    if url.startswith("file://"):
        return url.removeprefix("file://")
    return url


def _version() -> str:
    from mbank.journal import mbank_version

    return str(mbank_version())


def server_command(*, uvx: bool) -> list[str]:
    """The argv prefix that starts this mbank from a client (see the module docstring)."""
    if uvx:
        source = _install_source()
        return ["uvx", "--from", source, "mbank"] if source else ["uvx", f"mbank@{_version()}"]
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "mbank" and os.path.isfile(script):
        path = os.path.abspath(script)
        on_path = shutil.which("mbank")
        in_venv_bin = os.path.dirname(path) == os.path.join(sys.prefix, "bin")
        if on_path is not None and os.path.abspath(on_path) == path and not in_venv_bin:
            return ["mbank"]
        return [path]
    return [sys.executable, "-m", "mbank"]


# --------------------------------------------------------------------------------------------
# What each client gets
# --------------------------------------------------------------------------------------------


class Wiring(msgspec.Struct, frozen=True):
    """The facts every client's files are made from."""

    project: str
    bank: str  # relative to the project, POSIX
    command: list[str]
    user: bool = False


Planner = Callable[[Wiring], list[FileChange]]


class Client(msgspec.Struct, frozen=True):
    """One agent client: its help line, what it writes (for `mbank setup`) and its planner."""

    help: str
    writes: str
    plan: Planner
    note: str = ""


def _change(wiring: Wiring, relative: str, edit: Callable[[str, str | None], str]) -> FileChange:
    path = os.path.join(wiring.project, relative)
    before = read_text(path)
    return FileChange(path, relative, before, edit(path, before))


def _server_entry(wiring: Wiring, root: str, **extra: str) -> dict[str, Any]:
    return {**extra, "command": wiring.command[0], "args": [*wiring.command[1:], "--root", root]}


def _paragraph_change(wiring: Wiring, relative: str) -> FileChange:
    block = agent_paragraph(wiring.bank)
    return _change(wiring, relative, lambda _p, text: with_marked_block(text, BEGIN, END, block))


def hook_command(command: list[str], bank: str = BANK_NAMES[0]) -> str:
    """The Stop hook's shell command, started the same way as the server. The hook finds a
    `memory_bank/` from the session's directory itself; a bank elsewhere is named with
    `--root`, relative to the project (the directory Claude Code reports as the session's)."""
    root = [] if bank in BANK_NAMES else ["--root", bank]
    return shlex.join([*command, "hook", *root])


def plan_claude(wiring: Wiring) -> list[FileChange]:
    entry = _server_entry(wiring, f"./{wiring.bank}")
    hook = hook_command(wiring.command, wiring.bank)
    return [
        _change(
            wiring, ".mcp.json", lambda p, t: with_json_server(p, t, "mcpServers", SERVER, entry)
        ),
        _change(wiring, ".claude/settings.json", lambda p, t: with_stop_hook(p, t, hook)),
        _paragraph_change(wiring, "CLAUDE.md"),
    ]


CURSOR_RULE_HEAD = (
    "---\ndescription: How to use the project's memory bank (the memorybank MCP server)\n"
    "alwaysApply: true\n---\n"
)


def plan_cursor(wiring: Wiring) -> list[FileChange]:
    entry = _server_entry(wiring, "${workspaceFolder}/" + wiring.bank)
    block = agent_paragraph(wiring.bank)

    def rule(_path: str, text: str | None) -> str:
        return with_marked_block(text if text is not None else CURSOR_RULE_HEAD, BEGIN, END, block)

    return [
        _change(
            wiring,
            ".cursor/mcp.json",
            lambda p, t: with_json_server(p, t, "mcpServers", SERVER, entry),
        ),
        _change(wiring, ".cursor/rules/memorybank.mdc", rule),
    ]


def plan_vscode(wiring: Wiring) -> list[FileChange]:
    entry = _server_entry(wiring, "${workspaceFolder}/" + wiring.bank, type="stdio")
    return [
        _change(
            wiring,
            ".vscode/mcp.json",
            lambda p, t: with_json_server(p, t, "servers", SERVER, entry),
        )
    ]


def codex_user_config() -> str:
    """The user's Codex configuration file (`$CODEX_HOME/config.toml`, else ~/.codex/)."""
    home = os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")
    return os.path.join(home, "config.toml")


def codex_block(wiring: Wiring) -> str:
    from mbank.setup.client_files import toml_string

    root = f"./{wiring.bank}"
    args = ", ".join(toml_string(arg) for arg in [*wiring.command[1:], "--root", root])
    return f"[mcp_servers.{SERVER}]\ncommand = {toml_string(wiring.command[0])}\nargs = [{args}]\n"


def plan_codex(wiring: Wiring) -> list[FileChange]:
    from mbank.paths import refuse

    block = codex_block(wiring)

    def config(path: str, text: str | None) -> str:
        check_toml(path, text)
        after = with_marked_block(text, TOML_BEGIN, TOML_END, block)
        try:
            check_toml(path, after)
        except RefusalError:  # only a table defined twice can break a file that parsed
            raise refuse(
                "setup-codex-server-exists",
                f"{path} already declares [mcp_servers.{SERVER}] outside mbank's block; remove "
                "it (or rename it), then run this again; nothing was written.",
            ) from None
        return after

    place = (
        codex_user_config()
        if wiring.user
        else os.path.join(wiring.project, ".codex", "config.toml")
    )
    before = read_text(place)
    label = place if wiring.user else ".codex/config.toml"
    return [
        _paragraph_change(wiring, "AGENTS.md"),
        FileChange(place, label, before, config(place, before)),
    ]


CLIENTS: dict[str, Client] = {
    "claude": Client(
        "wire Claude Code: .mcp.json, the Stop hook, the CLAUDE.md paragraph",
        ".mcp.json (mcpServers.memorybank), .claude/settings.json (the Stop hook `mbank hook`), "
        "CLAUDE.md (the agent paragraph, between markers)",
        plan_claude,
    ),
    "cursor": Client(
        "wire Cursor: .cursor/mcp.json and a rule under .cursor/rules/",
        ".cursor/mcp.json (mcpServers.memorybank), .cursor/rules/memorybank.mdc (the paragraph)",
        plan_cursor,
    ),
    "vscode": Client(
        "wire VS Code: .vscode/mcp.json",
        ".vscode/mcp.json (servers.memorybank)",
        plan_vscode,
    ),
    "codex": Client(
        "wire Codex: AGENTS.md and .codex/config.toml (--user: ~/.codex/config.toml)",
        "AGENTS.md (the agent paragraph, between markers), .codex/config.toml "
        "([mcp_servers.memorybank]; --user: ~/.codex/config.toml)",
        plan_codex,
        note="Codex reads .codex/config.toml only in a trusted project; --user writes "
        "~/.codex/config.toml instead.",
    ),
}


# --------------------------------------------------------------------------------------------
# The command
# --------------------------------------------------------------------------------------------


def wiring_from(args: argparse.Namespace) -> Wiring:
    """The project, the bank (given, found, else `memory_bank/` to be made) and the command."""
    project = os.path.abspath(args.project or os.getcwd())
    given = getattr(args, "root", None) or os.environ.get("MBANK_ROOT")
    found = discover_root(project)
    if given:
        bank_root = os.path.abspath(given)
    elif found is not None and os.path.dirname(found) == project:
        bank_root = found
    else:
        bank_root = os.path.join(project, BANK_NAMES[0])
    bank = os.path.relpath(bank_root, project).replace(os.sep, "/")
    return Wiring(project, bank, server_command(uvx=args.uvx), user=getattr(args, "user", False))


def run_client(name: str, args: argparse.Namespace) -> int:
    """Write (or, with --dry-run, show) every change for client `name`; exit 0."""
    client = CLIENTS[name]
    wiring = wiring_from(args)
    changes = client.plan(wiring)  # every file is read and checked before anything is written

    def apply(change: FileChange) -> str:
        write_text(change.path, change.after)
        return f"wrote {change.path}\n"

    unchanged = f"{name} is already wired in {wiring.project}; nothing to change.\n"
    out = show_or_write(changes, dry_run=args.dry_run, apply=apply, unchanged=unchanged)
    out.append(f"server: {shlex.join(wiring.command)} --root {wiring.bank}\n")
    if not os.path.isdir(os.path.join(wiring.project, wiring.bank)):
        bank_root = os.path.join(wiring.project, wiring.bank)
        out.append(
            f"no bank at {bank_root} yet: the agent sees only bank_init until it makes one, "
            f"or you run `mbank init NAME --root {shlex.quote(bank_root)}`.\n"
        )
    if client.note:
        out.append(client.note + "\n")
    sys.stdout.write("".join(out))
    return 0


def add_client_arguments(name: str) -> Callable[[argparse.ArgumentParser], None]:
    def add(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--project", metavar="DIR", help="the project (default: here)")
        parser.add_argument(
            "--root", default=argparse.SUPPRESS, help="the bank (default: found, else memory_bank)"
        )
        parser.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
        parser.add_argument(
            "--uvx", action="store_true", help="write `uvx --from <source> mbank` as the command"
        )
        if name == "codex":
            parser.add_argument(
                "--user", action="store_true", help="write the user's ~/.codex/config.toml"
            )

    return add


def client_runner(name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        return run_client(name, args)

    return run


def format_clients() -> str:
    """`mbank setup` alone: every target and what it writes."""
    lines = ["mbank setup TARGET [--project DIR] [--root BANK] [--dry-run] [--uvx]", ""]
    for name, client in CLIENTS.items():
        lines.append(f"  {name:<7} {client.writes}")
    lines.append("  git     .gitattributes (merge drivers) and the clone's git config")
    return "\n".join(lines) + "\n"
