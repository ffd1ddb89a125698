"""The guide's answers that cannot go stale: each marked example block is what kyb prints for a scripted
session, made by running it (`./dev docs`, or `python -m kyb_cli.devtools.gen_examples`).

A block in a Markdown page is marked `<!-- example: NAME -->` … `<!-- /example -->`; SESSIONS says what
NAME runs (commands and their stdin, in a fresh store). What changes from run to run — version ids,
times, the temporary paths — is written shortened (`7b7d4eb…`) and compared as placeholders
(`normalised`), so tests/test_doc_examples.py fails when an answer gains, loses or changes a field.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
BLOCK = re.compile(r"(<!-- example: ([a-z0-9-]+) -->\n```text\n)(.*?)(```\n<!-- /example -->)", re.S)

KEY = "checkout-write-path"
ADD = ["add", "--key", KEY, "--title", "Checkout write path", "--tags", "infra,checkout"]
# name -> [(argv, stdin)], run in order in one fresh store; every line of stdout is shown.
SESSIONS: dict[str, list[tuple[list[str], str | None]]] = {
    "quickstart": [
        (ADD, "Checkout writes go through svc-checkout on node-3, port 8080."),
        (ADD, "Checkout writes go through svc-checkout on node-3, port 9090."),
        (["get", KEY], None),
        (["history", KEY], None),
        (["get", KEY, "--at", "HEAD~1"], None),
        (["query", "checkout port"], None),
    ],
    "import": [(["import", "notes"], None)],
}
# name -> files written under the session's working directory first (relative path -> text).
FILES: dict[str, dict[str, str]] = {
    "import": {
        "notes/decisions/0001-use-postgres.md": "# Use Postgres\n\nStatus: Accepted\n\nOrders live in Postgres 16.\n",
        "notes/decisions/0002-use-mysql.md": ("# Use MySQL\n\nStatus: Superseded by [ADR-0001](0001-use-postgres.md)"
                                              "\n\nOrders lived in MySQL 5.7.\n"),
        "notes/runbooks/checkout.md": "+++\ntags = [\"checkout\"]\n+++\n# Checkout runbook\n\nRestart svc-checkout first.\n",
        "notes/secret.md": "# DB access\n\npassword = hunter2hunter2\n",
    },
}

_SHA = re.compile(r"\b([0-9a-f]{7})[0-9a-f]{33}\b")
_SHORT = re.compile(r"\b[0-9a-f]{7}…")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:\d{2}|Z)")

Runner = Callable[[list[str], str | None, dict[str, str]], str]


def _subprocess(argv: list[str], stdin: str | None, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "kyb_cli", *argv], input=stdin, env=env, text=True,
                          capture_output=True, check=True, cwd=Path(env["HOME"]) / "proj")
    return done.stdout


def run(name: str, runner: Runner = _subprocess) -> str:
    """What session `name` prints, shortened as the page shows it: one JSON answer per line."""
    with tempfile.TemporaryDirectory(prefix="kyb-example-") as tmp:
        home = Path(tmp) / "home"
        (home / "proj").mkdir(parents=True)  # the writer's workspace, as `/home/you/proj`
        env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
               "XDG_DATA_HOME": str(home / ".local/share"), "XDG_CACHE_HOME": str(home / ".cache"),
               "XDG_STATE_HOME": str(home / ".local/state"),  # the default store, made by the first write
               "KYB_OUTPUT": "json", "KYB_AGENT": "human", "KYB_DEADLINES": "off",
               "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
        for var in ("KYB_MODEL", "KYB_MODEL_EN", "KYB_SESSION", "KYB_CONFIG", "KYB_STORE"):
            env.pop(var, None)  # lexical, as on a machine with no model: the answer does not depend on one
        for rel, text in FILES.get(name, {}).items():
            (home / "proj" / rel).parent.mkdir(parents=True, exist_ok=True)
            (home / "proj" / rel).write_text(text, encoding="utf-8")
        lines = []
        for argv, stdin in SESSIONS[name]:
            out = runner(argv, stdin, env).replace(str(home), "/home/you")
            lines += [json.dumps(json.loads(line), ensure_ascii=False) for line in out.splitlines() if line.strip()]
    return "".join(_SHA.sub(r"\1…", line) + "\n" for line in lines)


def normalised(text: str) -> str:
    """`text` with what differs between runs (version ids, times) as placeholders."""
    return _TIME.sub("<time>", _SHORT.sub("<sha>", _SHA.sub("<sha>", text)))


def blocks(page: Path) -> list[tuple[str, str]]:
    """The marked examples of a page: (name, the text shown)."""
    return [(m.group(2), m.group(3)) for m in BLOCK.finditer(page.read_text(encoding="utf-8"))]


def main(argv: list[str] | None = None) -> int:
    """Write every marked example anew; with `--check`, write nothing and exit 1 if one is stale."""
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    stale = 0
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        new = BLOCK.sub(lambda m: m.group(1) + run(m.group(2)) + m.group(4), text)
        if check:
            if normalised(new) != normalised(text):
                print(f"stale example in {page.relative_to(ROOT)}: run ./dev docs", file=sys.stderr)
                stale += 1
        elif normalised(new) != normalised(text):  # new version ids and times alone are no change
            page.write_text(new, encoding="utf-8")
            print(f"wrote {page.relative_to(ROOT)}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
