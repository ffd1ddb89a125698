"""The guide's "Python API" example (docs/guide/python-api.md, moved there from README) runs as written (in a fresh store of its own)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "docs" / "guide" / "python-api.md"


def test_readme_python_api_example_runs_verbatim(tmp_path):
    block = re.search(r"# Python API.*?```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S).group(1)
    store = tmp_path / "demo"
    code = block.replace("/tmp/kyb-api-demo", str(store))
    from kyb_cli import api

    api.init_store(store)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == ["svc-port", "active", "['added']"]
