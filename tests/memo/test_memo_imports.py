"""The memo domain imports without the transport (06 §1, §16 #17)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import mbank.memo

MEMO_DIR = Path(mbank.memo.__file__).parent


def _imports_mcp(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "mcp" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mcp":
            return True
    return False


def test_only_the_memo_server_module_imports_mcp() -> None:
    importers = sorted(p.name for p in MEMO_DIR.glob("*.py") if _imports_mcp(p))
    assert importers == ["server.py"]


def test_the_memo_domain_imports_without_pulling_in_mcp() -> None:
    modules = sorted(
        f"mbank.memo.{p.stem}"
        for p in MEMO_DIR.glob("*.py")
        if p.stem not in ("server", "__main__", "__init__")
    )
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in modules)
        + "from mbank.memo.store import MemoStore\n"
        + "from mbank.memo.tools import MemoTools\n"
        + "MemoTools(MemoStore()).do_remember('x', '')\n"
        + "print('mcp' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
