"""The README's commands work from a checkout (issue 15).

Every fenced block of README.md is read line by line. A line that installs or runs mbank by a
package name (`pip install`, `uv tool install`, `pipx install`, `uvx`, `name@version`) must name
it in a form that resolves from this checkout today: a path (`.`, `'.[dev]'`,
`/path/to/clone`) whose extras `pyproject.toml` declares, or the repository itself
(`git+<REPO_URL>`). The published name `mbank` is not on PyPI yet, so `pip install mbank` or
`uvx mbank@0.1.0` in a fenced command fails this test; the README mentions those only in prose,
marked "after the first release".
"""

from __future__ import annotations

import re
import shlex
import tomllib

import pytest
from fixture_banks import REPO

from mbank.setup.clients import agent_paragraph

README = (REPO / "README.md").read_text(encoding="utf-8")
EXTRAS = set(
    tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
)
CLONE_PLACEHOLDER = "/path/to/clone"
GIT_SOURCE = "git+<REPO_URL>"
INSTALLERS = (
    ("pip", "install"),
    ("pipx", "install"),
    ("uv", "tool", "install"),
    ("uv", "pip", "install"),
)


def fenced_lines(text: str) -> list[str]:
    """Every line inside a ``` fence."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            inside = not inside
            continue
        if inside:
            lines.append(line)
    return lines


def _words(line: str) -> list[str]:
    code = line.split(" #", 1)[0].strip().removeprefix("- run:").strip()
    try:
        return shlex.split(code)
    except ValueError:
        return code.split()


def _source_problem(spec: str) -> str | None:
    """Why an installable `spec` cannot resolve from the checkout, else None."""
    if spec == GIT_SOURCE or spec.startswith(GIT_SOURCE + "@"):
        return None
    match = re.fullmatch(r"(\.|/path/to/clone)(\[([a-z,]+)\])?", spec)
    if match is None:
        return f"{spec!r} is not the checkout (a path) or {GIT_SOURCE}"
    unknown = set((match.group(3) or "").split(",")) - EXTRAS - {""}
    return f"extras {sorted(unknown)} are not declared in pyproject.toml" if unknown else None


def problems(line: str) -> list[str]:
    """What is wrong with one README line's installs and runs of mbank."""
    found: list[str] = []
    if re.search(r"\bmbank@\d", line):
        found.append("a published version (mbank@…) cannot resolve: mbank is not on PyPI")
    for command in re.split(r"&&|;|\|\|", " ".join(_words(line))):
        words = command.split()
        for index in range(len(words)):
            for installer in INSTALLERS:
                if (
                    tuple(
                        os_word.rsplit("/", 1)[-1]
                        for os_word in words[index : index + len(installer)]
                    )
                    == installer
                ):
                    specs = [w for w in words[index + len(installer) :] if not w.startswith("-")]
                    found += [p for p in map(_source_problem, specs) if p]
            if words[index].rsplit("/", 1)[-1] == "uvx":
                rest = words[index + 1 :]
                if rest[:1] != ["--from"] or len(rest) < 3:
                    found.append("uvx without --from names the unpublished package")
                else:
                    source = rest[1]
                    if source != CLONE_PLACEHOLDER and (problem := _source_problem(source)):
                        found.append(problem)
    return found


def test_every_fenced_install_or_run_of_mbank_resolves_from_the_checkout() -> None:
    lines = fenced_lines(README)
    checked = [line for line in lines if re.search(r"\b(pip|pipx|uv|uvx)\b", line)]
    assert len(checked) >= 6  # the install section is there to check
    assert {line: problems(line) for line in checked if problems(line)} == {}


@pytest.mark.parametrize(
    "line",
    [
        "pip install mbank",
        "uv tool install mbank",
        "pipx install mbank",
        "uvx mbank --root ./memory_bank",
        '"args": ["mbank@0.1.0", "--root", "./memory_bank"]',
        "uvx --from mbank mbank",
        ".venv/bin/pip install -q '.[nosuchextra]'",
    ],
)
def test_the_check_rejects_the_forms_that_fail_today(line: str) -> None:
    assert problems(line)


@pytest.mark.parametrize(
    "line",
    [
        "python3 -m venv .venv && .venv/bin/pip install -q .",
        "pip install -q -e '.[dev]'",
        "uvx --from /path/to/clone mbank --version",
        "uvx --from git+<REPO_URL> mbank --version",
        "uv tool install .   # or: pipx install .",
    ],
)
def test_the_check_accepts_the_forms_that_work_from_a_clone(line: str) -> None:
    assert problems(line) == []


def test_the_readme_shows_the_paragraph_mbank_setup_writes() -> None:
    assert "```markdown\n" + agent_paragraph() + "```\n" in README
