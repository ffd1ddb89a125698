"""The doors (CLI, MCP, devtools) reach the core only through the porcelain, `kyb_cli.api`."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "kyb_cli"
DOORS = ("cli", "mcp", "serve", "devtools")  # a door that does not exist yet has no files to check


def _imports(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
    return out


def test_doors_import_no_core_module_only_the_api():
    offenders = [f"{path.relative_to(PKG.parent)}: {name}"
                 for door in DOORS for path in sorted((PKG / door).rglob("*.py"))
                 for name in _imports(path) if name == "kyb_cli.core" or name.startswith("kyb_cli.core.")]
    assert offenders == []


def test_api_functions_import_core_lazily():
    """`import kyb_cli.api` loads no core module beyond the error classes (the query hot path)."""
    allowed = {"kyb_cli.core.errors", "kyb_cli.core.markers", "kyb_cli.core.plain"}  # plain: the table's records, no imports
    for path in sorted((PKG / "api").glob("*.py")):
        top = [n for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = [n.module for n in top if isinstance(n, ast.ImportFrom) and n.module]
        assert not [m for m in names if m.startswith("kyb_cli.core") and m not in allowed], path.name


def test_import_linter_contracts_are_kept():
    """The layering rule of docs/ARCHITECTURE.md, as import-linter contracts in pyproject.toml."""
    import os
    import shutil
    import subprocess
    import sys

    exe = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) or shutil.which("lint-imports")
    assert exe, "import-linter is part of the test extra: pip install -e '.[test]'"
    env = dict(os.environ, PYTHONPATH=str(PKG.parent))
    proc = subprocess.run([exe, "--no-cache"], cwd=PKG.parent, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_no_dead_code_vulture_finds_nothing_but_its_listed_false_positives():
    """Dead code goes (a fetch nobody called was a path around every check of sync/incoming.py):
    vulture over kyb_cli, its false positives listed with their reason in tests/support/vulture_whitelist.py."""
    import os
    import subprocess
    import sys

    whitelist = PKG.parent / "tests" / "support" / "vulture_whitelist.py"
    proc = subprocess.run([sys.executable, "-m", "vulture", "kyb_cli", str(whitelist), "--min-confidence", "60",
                           "--ignore-decorators", "@click.command,@click.group,@*.command,@table_command"],
                          cwd=PKG.parent, capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert "No module named vulture" not in proc.stderr, "vulture is part of the test extra: pip install -e '.[test]'"
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
