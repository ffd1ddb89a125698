"""A core room names no module of a room above it, not even in a string: a `python -m kyb_cli.core.X`
launch (or an importlib name) is an arrow upward that the import-linter contracts cannot see."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "kyb_cli" / "core"
NAMED = re.compile(r"kyb_cli\.core\.([a-z_]+(?:\.[a-z_]+)*)")


def room_ranks() -> dict[str, int]:
    """Each room (or dotted sub-room) of the core's layers contract -> its layer, 0 = the top."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c.get("containers") == ["kyb_cli.core"])["layers"]
    return {room.strip(): rank for rank, layer in enumerate(layers) for room in layer.split("|")}


def rank_of(dotted: str, ranks: dict[str, int]) -> int | None:
    """The layer of the longest room name `dotted` (a module path under kyb_cli.core) starts with."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        if ".".join(parts[:n]) in ranks:
            return ranks[".".join(parts[:n])]
    return None


def upward_names(core: Path = CORE) -> list[str]:
    """`room/module.py names kyb_cli.core.X` for each string in a core module naming a room above."""
    ranks = room_ranks()
    found = []
    for path in sorted(core.rglob("*.py")):
        here = rank_of(".".join(path.relative_to(core).with_suffix("").parts), ranks)
        if here is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for name in NAMED.findall(node.value):
                    there = rank_of(name, ranks)
                    if there is not None and there < here:
                        found.append(f"{path.relative_to(core).as_posix()} names kyb_cli.core.{name}")
    return found


def test_no_core_room_names_a_module_of_a_room_above_it():
    assert upward_names() == []


def test_the_check_sees_a_launch_by_name_upward(tmp_path):
    """Not vacuous: the old launch (the index starting a search module by name) is caught."""
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / "staged.py").write_text('ARGS = ["-m", "kyb_cli.core.search.background"]\n')
    assert upward_names(tmp_path) == ["index/staged.py names kyb_cli.core.search.background"]
