"""Pure edits of the files an agent client reads: JSON server tables, the Stop hook, marked blocks.

Every function takes a file's current text (None when the file does not exist) and returns its
new text; the caller compares, diffs and writes. Each edit touches only mbank's own entry (the
`memorybank` server, the `mbank hook` command, the block between mbank's markers) and returns
the text unchanged, byte for byte, when that entry already says what it should, so running
`mbank setup CLIENT` twice changes nothing. A file that does not parse is refused with its path
and the parser's own message; it is never rewritten.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from mbank.model import RefusalError
from mbank.paths import refuse

NOT_WRITTEN = "fix it (or move it away), then run this again; nothing was written."


def _unparseable(path: str, kind: str, problem: str) -> RefusalError:
    return refuse("setup-unparseable", f"{path} is not valid {kind} ({problem}); {NOT_WRITTEN}")


def load_json_object(path: str, text: str | None) -> dict[str, Any]:
    """The JSON object a client file holds ({} when absent or empty), or a refusal."""
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise _unparseable(path, "JSON", str(exc)) from None
    if not isinstance(value, dict):
        raise _unparseable(
            path, "JSON", f"the top level is a {type(value).__name__}, not an object"
        )
    return value


def _dumped(value: dict[str, Any]) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _table(path: str, parent: dict[str, Any], key: str) -> dict[str, Any]:
    """`parent[key]`, created empty when absent; a refusal when it is not an object."""
    table = parent.setdefault(key, {})
    if not isinstance(table, dict):
        raise _unparseable(path, "client configuration", f'"{key}" is not an object')
    return table


def with_json_server(
    path: str, text: str | None, table: str, name: str, entry: dict[str, Any]
) -> str:
    """The file with `<table>.<name>` set to `entry`; every other server and key kept."""
    config = load_json_object(path, text)
    servers = _table(path, config, table)
    if servers.get(name) == entry and text is not None:
        return text
    servers[name] = entry
    return _dumped(config)


# A Stop hook command that runs mbank's hook, however mbank is started: `mbank hook`,
# `/abs/bin/mbank hook`, `'/a b/mbank' hook`, `python -m mbank hook`, `uvx --from X mbank hook`.
_MBANK_HOOK = re.compile(r"""(^|[\s/'"])mbank['"]?\s+hook(\s|$)""")


def is_mbank_hook(command: Any) -> bool:
    """Whether a hook command is one `mbank setup claude` wrote (any way of starting mbank)."""
    return isinstance(command, str) and _MBANK_HOOK.search(command) is not None


def with_stop_hook(path: str, text: str | None, command: str) -> str:
    """`.claude/settings.json` with mbank's Stop hook running `command`, once.

    An mbank hook already there with another command (an older install path) is replaced in
    place; every other hook and setting is kept.
    """
    settings = load_json_object(path, text)
    hooks = _table(path, settings, "hooks")
    stop = hooks.setdefault("Stop", [])
    if not isinstance(stop, list):
        raise _unparseable(path, "Claude Code settings", '"hooks.Stop" is not a list')
    wanted = {"type": "command", "command": command}
    found = False
    for group in stop:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list):
            continue
        for index, hook in enumerate(inner):
            if isinstance(hook, dict) and is_mbank_hook(hook.get("command")):
                if found:
                    continue
                found = True
                if hook != wanted:
                    inner[index] = wanted
    if not found:
        stop.append({"hooks": [wanted]})
    new = _dumped(settings)
    if text is not None and load_json_object(path, text) == settings:
        return text
    return new


def with_marked_block(text: str | None, begin: str, end: str, block: str) -> str:
    """`text` with the lines between `begin` and `end` replaced by `block` (markers kept), or
    the marked block appended after a blank line when absent."""
    marked = f"{begin}\n{block.rstrip(chr(10))}\n{end}\n"
    current = text or ""
    start = current.find(begin)
    if start != -1:
        stop = current.find(end, start)
        if stop != -1:
            after = current[stop + len(end) :]
            after = after[1:] if after.startswith("\n") else after
            return current[:start] + marked + after
    if current and not current.endswith("\n"):
        current += "\n"
    separator = "\n" if current.strip() else ""
    return current + separator + marked


def check_toml(path: str, text: str | None) -> dict[str, Any]:
    """The TOML table a file holds ({} when absent), or a refusal with the parser's message."""
    if text is None:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _unparseable(path, "TOML", str(exc)) from None


def toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's for these characters)."""
    return json.dumps(value, ensure_ascii=False)
