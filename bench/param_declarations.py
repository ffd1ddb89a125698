"""How many parameter declarations each door writes out by hand (issue 23's before/after figure).

    python bench/param_declarations.py [ROOT]      # ROOT: a checkout (default: this one)

Counted in the source with `ast`, so a generated parameter does not count: CLI = calls of
`click.option`/`click.argument` under kyb_cli/cli; fast.py = entries of its `…_FLAGS`/`…_VALUED`
dicts (its door-only `_DOOR_FLAGS`/`_DOOR_VALUED` too); MCP = parameters written in the signatures
of kyb_cli/mcp's functions and methods (not `self`, not `**a`) plus pydantic model fields; HTTP = `P(...)` calls under kyb_cli/serve; table =
`Field(...)` calls in kyb_cli/api/operations.py.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def _trees(root: Path, sub: str):
    for path in sorted((root / sub).rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def _calls(tree: ast.AST, names: set[str]) -> int:
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            full = f"{f.value.id}.{f.attr}" if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else name
            if full in names:
                count += 1
    return count


def cli(root: Path) -> int:
    return sum(_calls(t, {"click.option", "click.argument"}) for p, t in _trees(root, "kyb_cli/cli")
               if p.name != "fast.py")


def fast(root: Path) -> int:
    tree = ast.parse((root / "kyb_cli/cli/fast.py").read_text(encoding="utf-8"))
    return sum(len(n.value.keys) for n in ast.walk(tree) if isinstance(n, ast.Assign)
               and isinstance(n.value, ast.Dict) and any(getattr(t, "id", "").endswith(("_FLAGS", "_VALUED"))
                                                         for t in n.targets))


def mcp(root: Path) -> int:
    count = 0
    for path, tree in _trees(root, "kyb_cli/mcp"):
        if path.name in ("server.py", "bench.py"):
            continue  # the server's plumbing, not tool parameters
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                count += sum(1 for a in args if a.arg != "self")
            if isinstance(node, ast.ClassDef) and any(getattr(b, "id", "") == "BaseModel" for b in node.bases):
                count += sum(1 for s in node.body if isinstance(s, ast.AnnAssign))
    return count


def http(root: Path) -> int:
    return sum(_calls(t, {"P"}) for _p, t in _trees(root, "kyb_cli/serve"))


def table(root: Path) -> int:
    path = root / "kyb_cli/api/operations.py"
    return _calls(ast.parse(path.read_text(encoding="utf-8")), {"Field"}) if path.exists() else 0


def main(argv: list[str]) -> None:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[1]
    for door, count in (("CLI", cli), ("fast.py", fast), ("MCP", mcp), ("HTTP", http), ("table", table)):
        print(f"{door:8} {count(root)}")


if __name__ == "__main__":
    main(sys.argv[1:])
