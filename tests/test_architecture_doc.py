"""docs/ARCHITECTURE.md names every module under kyb_cli/ (one line each, in its folder of the tree)
and gives the door layers and the core's rooms in pyproject's order, so the map stays true."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "ARCHITECTURE.md"


def named_in_tree() -> set[str]:
    """Paths under kyb_cli/ the tree block names: `folder/` lines nest by indentation; a line's
    file names (`a.py`, `a.py, b.py`, `sub/<name>.py`: every module of sub/) belong to its folder."""
    text = DOC.read_text(encoding="utf-8")
    block = text.split("```\nkyb_cli/\n", 1)[1].split("```", 1)[0]
    named: set[str] = set()
    stack: list[tuple[int, str]] = [(-1, "")]
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            continue  # outside kyb_cli/ (tests/support/…)
        while stack[-1][0] >= indent:
            stack.pop()
        here = stack[-1][1]
        head = line.strip().split("  ", 1)[0]
        for item in re.split(r",\s*", head):
            item = item.strip()
            if item.endswith("/"):
                stack.append((indent, here + item))
            elif item.endswith(".py"):
                named.add(here + item)
    return named


def test_architecture_names_every_module():
    named = named_in_tree()
    missing = []
    for path in sorted((ROOT / "kyb_cli").rglob("*.py")):
        rel = path.relative_to(ROOT / "kyb_cli").as_posix()
        folder = rel.rpartition("/")[0]
        if path.name == "__init__.py" and rel != "__init__.py":
            continue  # a package: named by its folder's line
        if rel not in named and f"{folder}/<name>.py" not in named:
            missing.append(rel)
    assert missing == [], "name these in docs/ARCHITECTURE.md's tree (one line each)"


def test_architecture_gives_the_door_layers_as_pyproject_does():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["name"] == "Doors over the porcelain over the core")["layers"]
    doors = [name.rpartition(".")[2] for name in layers if name not in ("kyb_cli.api", "kyb_cli.core")]
    assert " > ".join(f"`{d}`" for d in doors) in DOC.read_text(encoding="utf-8")


def tree_lines() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return text.split("```\nkyb_cli/\n", 1)[1].split("```", 1)[0].splitlines()


def test_each_line_of_the_tree_names_one_module_and_says_what_it_is():
    """`a.py, b.py  …` hides what each one is: every module gets its own line and its own words."""
    crowded = [ln.strip() for ln in tree_lines() if ln.strip().split("  ", 1)[0].count(".py") > 1]
    bare = [ln.strip() for ln in tree_lines() if ln.strip().endswith(".py") and "  " not in ln.strip()]
    assert (crowded, bare) == ([], [])


def core_layers_in_doc() -> list[str]:
    """The first column of the doc's "core layer" table, top to bottom (`a \\| b` read as `a | b`)."""
    text = DOC.read_text(encoding="utf-8")
    table = text.split("| core layer |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]
    return [row.split("` |", 1)[0].strip("| `").replace("\\|", "|") for row in table]


def test_architecture_gives_the_core_layers_as_pyproject_does():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c.get("containers") == ["kyb_cli.core"])["layers"]
    assert core_layers_in_doc() == layers


def test_no_module_of_the_core_or_the_api_is_over_500_lines():
    """Small modules with one job: a core or api module over 500 lines is split by its jobs."""
    long = {p.relative_to(ROOT).as_posix(): n for p in sorted((ROOT / "kyb_cli").rglob("*.py"))
            if p.relative_to(ROOT / "kyb_cli").parts[0] in ("core", "api")
            and (n := len(p.read_text(encoding="utf-8").splitlines())) > 500}
    assert long == {}
