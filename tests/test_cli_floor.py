"""What `kyb query` stopped paying for stays correct: the deadlines block reads only the task files
not remembered as undated (core/kinds/undated.py; else all, canon/nofollow.read_files) and still
never follows a link or waits on a FIFO."""

from __future__ import annotations

import json
import os

from kyb_cli import api
from kyb_cli.core.kinds.deadlines import dated_tasks
from kyb_cli.core.records.model import Record


def _task(path, key: str, **fields) -> None:
    (path / "tasks").mkdir(exist_ok=True)
    (path / "tasks" / f"{key}.md").write_text(Record(key=key, title=key, **fields).to_markdown())


def test_deadlines_block_reads_dated_tasks_and_skips_links_and_fifos(store_path, tmp_path):
    _task(store_path, "task-due", status="open", due="2026-01-02")
    _task(store_path, "task-undated", status="open")
    outside = tmp_path / "outside.md"
    outside.write_text(Record(key="task-link", title="x", status="open", due="2026-01-02").to_markdown())
    os.symlink(outside, store_path / "tasks" / "task-link.md")
    os.mkfifo(store_path / "tasks" / "task-fifo.md")
    assert [r.key for r in dated_tasks(store_path)] == ["task-due"]
    assert [r.key for r in dated_tasks(store_path)] == ["task-due"]  # with the memory the first one left


def test_query_path_does_not_import_the_record_rules_or_git():
    """A lexical `kyb query` on an indexed store imports neither the secret rules, the record model nor
    subprocess (the first query builds the index with `git`: that one may)."""
    import subprocess
    import sys

    code = ("import sys, tempfile\nfrom kyb_cli import api\nfrom kyb_cli.core.canon.repo import init_store\n"
            "p = tempfile.mkdtemp() + '/s'\ninit_store(p)\napi.query(p, 'word', semantic=False)\n"
            "for m in [m for m in sys.modules if m.startswith(('kyb_cli.core.records', 'subprocess'))]:\n"
            "    del sys.modules[m]\n"
            "api.query(p, 'word', semantic=False)\n"
            "from kyb_cli.cli.deadlines_block import print_deadlines_block\nprint_deadlines_block(p)\n"
            "print(sorted(m for m in sys.modules if m in ('subprocess', 'kyb_cli.core.records.secrets', "
            "'kyb_cli.core.records.model')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_importing_the_api_loads_only_the_areas_a_query_uses_and_the_rest_on_first_use():
    """`import kyb_cli.api` (every `kyb query` does) leaves records, work, tools, trust, handlers and the
    operations table unloaded; the first use of one of their names loads it, and it is that very object."""
    import subprocess
    import sys

    lazy = ("kyb_cli.api.operations", "kyb_cli.api.records", "kyb_cli.api.work", "kyb_cli.api.tools",
            "kyb_cli.api.trust", "kyb_cli.api.handlers")
    code = ("import sys\nfrom kyb_cli import api\n"
            f"print(sorted(m for m in {lazy!r} if m in sys.modules))\n"
            "from kyb_cli.api.work import write_task\n"
            "print(api.write_task is write_task, 'kyb_cli.api.work' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", "True True"]


def test_a_lexical_query_on_an_indexed_store_loads_no_model_registry_hashlib_threading_or_toml(store_path):
    """The CLI's floor (issue 27): with the index built, a lexical query imports neither the model
    registry and files, nor hashlib, threading or tomllib (no config file, no .kyb.toml here)."""
    import subprocess
    import sys

    api.query(store_path, "word", semantic=False)  # builds the index (that may import anything)
    heavy = ("kyb_cli.core.embed.files", "kyb_cli.core.embed.models", "hashlib", "threading", "tomllib",
             "kyb_cli.api.operations", "dataclasses", "inspect", "typing")
    code = (f"import sys\nfrom kyb_cli import api\napi.query({str(store_path)!r}, 'word', semantic=False)\n"
            f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=store_path).stdout
    assert out.strip() == "[]"


def test_a_one_shot_query_with_hits_loads_no_door_memo_nor_the_write_areas(store):
    """A one-shot `kyb query` (the CLI's fast path) whose hits are graded (relevance.term_hits asks
    bm25.Held whether a door kept postings) imports neither index/vectors.py nor weakref for a memo
    it never keeps, nor api/records.py, api/_writes.py or api/trust.py (a write's, a dated read's), nor datetime.py,
    contextvars.py or bisect.py (their C modules' names), and answers as api.query does (issue 38)."""
    import subprocess
    import sys

    from kyb_cli.core.kinds.knowledge import add_knowledge

    who = api.attribution("script")
    for i in range(3):
        add_knowledge(store, key=f"k{i}", title=f"Postgres replica {i}", body="postgres replica lag", tags=[],
                      refs=[], attribution=who)
    first = api.query(store.path, "postgres replica", semantic=False)  # builds the index
    unloaded = ("kyb_cli.core.index.vectors", "weakref", "kyb_cli.api.records", "kyb_cli.api.trust", "kyb_cli.api._writes",
                "datetime", "contextvars", "bisect")  # their C halves instead (core/timestamps.py)
    code = ("import sys\nfrom kyb_cli.cli import fast\n"
            f"sys.argv = ['kyb', '--store', {str(store.path)!r}, 'query', 'postgres replica', '--no-semantic']\n"
            "try:\n    fast.main(own_process=False)\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {unloaded!r} if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=store.path).stdout.splitlines()
    assert [h["key"] for h in json.loads(out[0])["hits"]] == [h["key"] for h in first[1]["hits"]]
    assert len(first[1]["hits"]) == 3
    assert out[1] == "[]"
