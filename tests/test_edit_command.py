"""`kyb edit KEY` with a fake editor: unchanged, valid, invalid (kept, nothing written), invalid then fixed."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

FAKE = textwrap.dedent('''
    import os, sys
    from pathlib import Path
    path = Path(sys.argv[1])
    plan = os.environ["FAKE_EDITS"].split("|")
    counter = Path(os.environ["FAKE_COUNTER"])
    n = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(n + 1))
    step = plan[min(n, len(plan) - 1)]
    text = path.read_text()
    if step == "same":
        pass
    elif step == "port":
        path.write_text(text.replace("8080", "9090"))
    elif step == "broken":
        path.write_text(text.replace("+++", "+++\\ntitle = [unclosed", 1))
    elif step == "fixport":
        path.write_text(text.replace("title = [unclosed\\n", "").replace("8080", "9090"))
''')


def setup(kyb, tmp_path, plan):
    kyb("add", "--key", "svc-port", "--title", "Service port", "--tags", "infra,svc", "--body", "port 8080")
    editor = tmp_path / "fake_editor.py"
    editor.write_text(FAKE)
    return {"EDITOR": f"{sys.executable} {editor}", "VISUAL": "", "FAKE_EDITS": plan,
            "FAKE_COUNTER": str(tmp_path / "count")}


def head(store_path):
    return subprocess.run(["git", "-C", str(store_path), "rev-parse", "HEAD"], capture_output=True, text=True).stdout


def test_edit_unchanged_makes_no_commit(kyb, store_path, tmp_path):
    env = setup(kyb, tmp_path, "same")
    before = head(store_path)
    res = kyb("edit", "svc-port", env=env)
    assert res.code == 0, res.stderr
    assert res.json == {"changed": False, "key": "svc-port"}
    assert head(store_path) == before


def test_edit_valid_commits_one_update_and_keeps_title_and_tags(kyb, store_path, tmp_path):
    env = setup(kyb, tmp_path, "port")
    res = kyb("edit", "svc-port", env=env)
    assert res.code == 0, res.stderr
    assert res.json["action"] == "updated" and res.json["changed"] is True
    got = kyb("get", "svc-port").json
    assert got["body"] == "port 9090" and got["title"] == "Service port" and got["tags"] == ["infra", "svc"]
    assert kyb("log", "--limit", "1").json["log"][0]["action"] == "edit"


def test_edit_invalid_keeps_the_text_in_a_file_and_writes_nothing(kyb, store_path, tmp_path):
    env = setup(kyb, tmp_path, "broken")
    before = head(store_path)
    res = kyb("edit", "svc-port", env=env)
    assert res.code == 3 and res.stdout == ""
    kept = Path(res.stderr.split("your text is in ")[1].split(")")[0])
    assert "title = [unclosed" in kept.read_text()
    assert head(store_path) == before
    kept.unlink()


def test_edit_that_changes_the_key_or_closes_work_is_refused(kyb, store_path, tmp_path):
    kyb("task", "--key", "task-x", "--title", "x", "--body", "")
    editor = tmp_path / "closer.py"
    editor.write_text("import sys; p=sys.argv[1]; t=open(p).read(); open(p,'w').write("
                      "t.replace('status = \"open\"', 'status = \"done\"'))")
    res = kyb("edit", "task-x", env={"EDITOR": f"{sys.executable} {editor}", "VISUAL": ""})
    assert res.code == 3 and "kyb done task-x" in res.stderr
    editor.write_text("import sys; p=sys.argv[1]; t=open(p).read(); open(p,'w').write("
                      "t.replace('key = \"task-x\"', 'key = \"task-y\"'))")
    res = kyb("edit", "task-x", env={"EDITOR": f"{sys.executable} {editor}", "VISUAL": ""})
    assert res.code == 3 and "key" in res.stderr


def test_edit_of_a_missing_record_is_not_found(kyb):
    res = kyb("edit", "nothing-here", env={"EDITOR": "true"})
    assert res.code == 1 and res.stdout == ""


def test_edit_invalid_then_fixed_on_a_terminal(kyb, store_path, tmp_path):
    """On a terminal the rejected edit is offered again; the second save is written."""
    env = dict(kyb.env, KYB_STORE=str(store_path), **setup(kyb, tmp_path, "broken|fixport"))
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "kyb_cli", "edit", "svc-port", "--json"], stdin=slave,
                            stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen, answered, deadline = b"", False, time.time() + 60
    while proc.poll() is None and time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                seen += os.read(master, 1024)
            except OSError:
                break
        if not answered and b"edit it again?" in seen:
            os.write(master, b"y\n")
            answered = True
    out = proc.communicate(timeout=30)[0].decode()
    os.close(master)
    assert answered, seen.decode(errors="replace")
    assert proc.returncode == 0, seen.decode(errors="replace")
    assert json.loads(out)["action"] == "updated"
    assert kyb("get", "svc-port").json["body"] == "port 9090"
