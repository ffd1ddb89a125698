"""Issue 24, "Hostile input, round two" (the items left after tests/test_hostile_round_two.py), and
issue 25 item 13's doctor part: one test (or a few) named after each numbered failure."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from support.hostile import BLOB, git, kyb_bound, record_text
from test_sync_hostile import team, team_template  # noqa: F401  (the fixture: a victim store, a bare remote, a peer)
from kyb_cli.core.records.keys import path_of_key


# -- issue 25 item 13: doctor with a broken model blames the model, not the cache -----------------

def test_item_13_doctor_with_a_truncated_model_blames_the_model_not_the_cache(cli, tiny, tmp_path, monkeypatch):
    assert cli("add", "--key", "k", "--title", "T", input="checkout writes go to node 3").code == 0
    assert cli("index", "--embed").code == 0  # the good model's vectors are now in the user cache
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in os.listdir(tiny):
        (broken / name).write_bytes((Path(tiny) / name).read_bytes())
    onnx = (broken / "model.onnx").read_bytes()
    (broken / "model.onnx").write_bytes(onnx[: len(onnx) // 3])  # truncated, as a cut download is
    monkeypatch.setenv("KYB_MODEL", str(broken))
    from kyb_cli.core import embed

    embed._EMBEDDERS.clear()
    res = cli("doctor")
    assert res.code == 4
    said = res.json["problems"] + res.json["warnings"]
    model = [p for p in res.json["problems"] if p.startswith("model:")]
    assert model and "model.onnx" in model[0] and "kyb model import" in model[0], said
    assert not any("delete" in line and "cache" in line for line in said), said
    assert not any("another model" in line for line in said), said


# -- failure 6: a read-only .git/kyb with no index -------------------------------------------------

def _add(store, key: str, body: str) -> None:
    from kyb_cli.api.records import add_knowledge
    from kyb_cli.core.canon.attribution import detect

    who = detect(environ={"KYB_AGENT": "a", "KYB_SESSION": "s", "KYB_WORKSPACE": "w"})
    assert add_knowledge(store, key=key, title=key, body=body, tags=[], refs=[], attribution=who).changed


def test_failure_6_a_read_only_kyb_dir_without_an_index_still_answers_reads(store, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    _add(store, "k", "the port is 8080")
    kyb_dir = Path(store.path) / ".git" / "kyb"
    for leftover in kyb_dir.glob("index.sqlite*"):
        leftover.unlink()
    kyb_dir.chmod(0o555)
    try:
        for args in (("get", "k"), ("query", "port")):
            res = kyb_bound(home, store.path, *args)
            assert res.returncode == 0 and "internal error" not in res.stderr, (args, res.returncode, res.stderr)
            if args[0] == "get":
                assert json.loads(res.stdout)["body"] == "the port is 8080"
        assert not list(kyb_dir.glob("index.sqlite*"))
        res = kyb_bound(home, store.path, "add", "--key", "k2", "--title", "T", "--body", "b")
        assert res.returncode == 4 and res.stdout == "" and "internal error" not in res.stderr, res.stderr
    finally:
        kyb_dir.chmod(0o755)
    _add(store, "k2", "b")


# -- failure 3: a full disk makes a landed sync look failed; init --clone onto a full disk ----------

def _fault(monkeypatch, *points: str) -> None:
    """faults.step raises ENOSPC at `points`, as a full disk does (tests/support/faults.py)."""
    import errno

    from kyb_cli.core.canon import faults

    def step(name: str) -> None:
        if name in points:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(faults, "step", step)


@pytest.fixture
def shared(store, tmp_path):
    """`store` with one record, pushed to a bare remote."""
    import subprocess

    from kyb_cli.api.sync import set_remote, sync

    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    set_remote(store, str(remote))
    _add(store, "k", "the port is 8080")
    assert sync(store)["pushed"]
    return remote


def _cli(*args: str):
    from click.testing import CliRunner

    from kyb_cli.cli.app import cli as kyb_cli

    return CliRunner().invoke(kyb_cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize("point", ["before-ref", "after-ref", "after-worktree"])  # a clone fast-forwards
def test_failure_3_init_clone_onto_a_full_disk_is_a_clear_refusal(shared, tmp_path, monkeypatch, point):
    _fault(monkeypatch, point)
    target = tmp_path / "clone"
    res = _cli("init", "--clone", str(shared), str(target))
    assert (res.exit_code, res.stdout) == (4, ""), (res.exit_code, res.stdout, res.stderr)
    assert "internal error" not in res.stderr and "is full" in res.stderr and "kyb init --clone" in res.stderr
    assert "warning" not in res.stderr  # no "the sync is committed" about a clone that is thrown away
    assert not target.exists() and [p.name for p in tmp_path.iterdir() if ".kyb-clone-" in p.name] == []
    monkeypatch.undo()
    assert _cli("init", "--clone", str(shared), str(target)).exit_code == 0  # the advice works
    assert (target / path_of_key("k")).exists()


def test_failure_3_a_landed_sync_hitting_a_full_disk_says_it_landed_with_a_warning(shared, store, monkeypatch):
    import subprocess

    _add(store, "k2", "written after the first sync")
    _fault(monkeypatch, "after-push")
    monkeypatch.setenv("KYB_STORE", str(store.path))
    res = _cli("sync")
    assert res.exit_code == 0, res.stderr
    reply = json.loads(res.stdout)
    assert reply["pushed"] is True
    assert "warning: the sync landed" in res.stderr and "disk is full" in res.stderr, res.stderr
    head = subprocess.run(["git", "--git-dir", str(shared), "rev-parse", "main"], capture_output=True, text=True)
    assert head.stdout.strip() == reply["head"]
    monkeypatch.undo()
    monkeypatch.setenv("KYB_STORE", str(store.path))
    again = _cli("sync")
    assert again.exit_code == 0 and "warning" not in again.stderr


# -- failure 1: records wedged for good ------------------------------------------------------------

def _wedge(team, check: bool = True) -> dict[str, str]:  # noqa: F811
    """A peer adds three records and edits one; the victim's knowledge/ turns read-only (EACCES)
    once its sync moved the branch (a read-only knowledge/ before it is refused up front:
    test_hostile_readonly_store.py): the working tree cannot follow. Returns the peer's bodies by key."""
    bodies = {"a": "alpha", "b": "bravo", "c": "charlie", "seed": "seed body, edited by the peer"}
    team.peer.write({path_of_key(k): (BLOB, record_text(k, body=v)) for k, v in bodies.items()})
    try:
        res = kyb_bound(team.env, team.store, "sync", fault=("after-ref", "readonly-knowledge"))
        assert res.returncode == 0 and "the sync is committed" in res.stderr, (res.returncode, res.stderr)
        status = git("-C", str(team.store), "status", "--porcelain")
        assert f"D  {path_of_key('a')}" in status  # the state the issue found: staged deletions nobody made
        if not check:
            return bodies
        doc = kyb_bound(team.env, team.store, "doctor")
        assert doc.returncode == 4 and "kyb doctor --fix" in doc.stderr, doc.stderr
        assert all(path_of_key(k) in doc.stderr for k in bodies), doc.stderr
        write = kyb_bound(team.env, team.store, "add", "--key", "a", "--title", "A", "--body", "mine")
        said = write.stderr
        assert write.returncode == 4 and f"chmod u+w {team.store / 'knowledge'}" in said and "Errno" not in said, said
    finally:
        (team.store / "knowledge").chmod(0o755)
    return bodies


def _whole(team, bodies: dict[str, str]) -> None:  # noqa: F811
    assert git("-C", str(team.store), "status", "--porcelain") == ""
    for key, body in bodies.items():
        assert body in (team.store / path_of_key(key)).read_text()
    doc = kyb_bound(team.env, team.store, "doctor")
    assert doc.returncode == 0, doc.stderr


def test_failure_1_a_local_eacces_mid_update_is_reported_by_doctor_and_its_advice_repairs_it(team):  # noqa: F811
    bodies = _wedge(team)
    doc = kyb_bound(team.env, team.store, "doctor")
    advice = sorted({line.rsplit("fix: ", 1)[1] for line in doc.stderr.splitlines() if "fix: kyb" in line})
    assert advice == ["kyb doctor --fix"], doc.stderr
    fixed = kyb_bound(team.env, team.store, *advice[0].split()[1:])  # run the advice as printed
    assert fixed.returncode == 0, fixed.stderr
    _whole(team, bodies)
    for key in bodies:
        assert kyb_bound(team.env, team.store, "add", "--key", key, "--title", key, "--body", "mine").returncode == 0


def test_failure_1_with_the_journal_lost_the_next_write_repairs_its_record_and_doctor_the_rest(team):  # noqa: F811
    bodies = _wedge(team, check=False)
    (team.store / ".git" / "kyb" / "pending.json").unlink()  # as a journal set aside, or an old kyb's
    res = kyb_bound(team.env, team.store, "add", "--key", "a", "--title", "A", "--body", "mine")
    assert res.returncode == 0, res.stderr  # not exit 3 forever: nothing of anyone's was in the way
    assert "mine" in (team.store / path_of_key("a")).read_text()
    doc = kyb_bound(team.env, team.store, "doctor")
    assert doc.returncode == 4 and path_of_key("b") in doc.stderr and path_of_key("a") not in doc.stderr
    assert kyb_bound(team.env, team.store, "doctor", "--fix").returncode == 0
    _whole(team, {**bodies, "a": "mine"})


def test_failure_1_a_real_hand_edit_in_a_wedged_store_is_kept_and_the_printed_discard_advice_works(team):  # noqa: F811
    import re
    import shlex
    import subprocess

    bodies = _wedge(team, check=False)
    (team.store / ".git" / "kyb" / "pending.json").unlink()
    (team.store / path_of_key("b")).parent.mkdir(exist_ok=True)  # the wedged update never made its bucket
    (team.store / path_of_key("b")).write_text("my own notes, never committed\n")
    res = kyb_bound(team.env, team.store, "add", "--key", "b", "--title", "B", "--body", "mine")
    assert res.returncode == 3 and "will not overwrite" in res.stderr, res.stderr
    assert (team.store / path_of_key("b")).read_text() == "my own notes, never committed\n"
    doc = kyb_bound(team.env, team.store, "doctor", "--fix")
    assert f"{path_of_key('b')} has uncommitted changes" in doc.stderr + doc.stdout
    assert (team.store / path_of_key("b")).read_text() == "my own notes, never committed\n"
    discard = re.search(r"discard them \((git [^)]*)\)", res.stderr).group(1)
    assert subprocess.run(shlex.split(discard), capture_output=True, env=team.env).returncode == 0
    _whole(team, bodies)


# -- failure 8: MCP stdio — NUL and lone surrogates in arguments, malformed frames -----------------

class _RawMcp:
    """`kyb mcp` as a subprocess spoken to in raw lines; every read has a timeout (a client that
    gets no reply would hang: here that is a failure, not a hang)."""

    def __init__(self, store: Path, home: Path) -> None:
        import subprocess
        import sys

        from support.hostile import kyb_env

        env = {**kyb_env(home), "KYB_STORE": str(store), "KYB_BACKGROUND": "off"}
        self.proc = subprocess.Popen([sys.executable, "-m", "kyb_cli", "mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        assert "result" in self.ask(json.dumps(init).encode(), timeout=60)
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, raw: bytes) -> None:
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def ask(self, raw: bytes, timeout: float = 20) -> dict:
        import select

        self.send(raw)
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, f"no reply within {timeout}s to {raw[:120]!r}: a client would hang"
        return json.loads(self.proc.stdout.readline())

    def close(self) -> str:
        self.proc.stdin.close()
        self.proc.wait(30)
        return self.proc.stderr.read().decode(errors="replace")


@pytest.fixture
def raw_mcp(store, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    client = _RawMcp(Path(store.path), home)
    yield client
    assert "Traceback" not in client.close()


MALFORMED = [  # (frame, JSON-RPC code, id of the reply)
    (b"this is not json", -32700, None),
    (b"[" * 5000 + b"]" * 5000, -32700, None),
    (b"42", -32600, None),
    (b'"a string"', -32600, None),
    (b'[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]', -32600, None),
    (b'{"jsonrpc":"2.0","id":4}', -32600, 4),
    (b'{"id":5,"method":"tools/list"}', -32600, 5),
    (b'{"jsonrpc":"2.0","id":6,"method":6}', -32600, 6),
    (b'{"jsonrpc":"2.0","id":{"an":"object"},"method":"tools/list"}', -32600, None),
    (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[1,2]}', -32602, 7),
    (b'{"jsonrpc":"2.0","id":8,"method":"tools/list","params":"x"}', -32602, 8),
    (b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"\\ud800"}}', -32602, 9),
]


def test_failure_8_every_malformed_mcp_frame_gets_a_json_rpc_error_reply(raw_mcp):
    for frame, code, rid in MALFORMED:
        reply = raw_mcp.ask(frame)
        assert reply.get("error", {}).get("code") == code and reply["id"] == rid, (frame[:80], reply)
    assert "tools" in raw_mcp.ask(b'{"jsonrpc":"2.0","id":99,"method":"tools/list"}')["result"]


@pytest.mark.parametrize("bad,what", [("a\\u0000b", "NUL"), ("a\\ud800b", "surrogate")])
def test_failure_8_nul_or_a_lone_surrogate_in_an_argument_is_a_tool_error_naming_it_in_every_tool(raw_mcp, bad, what):
    tools = raw_mcp.ask(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')["result"]["tools"]
    assert len(tools) >= 10
    for n, tool in enumerate(tools, start=100):
        arg = next(iter(tool["inputSchema"].get("properties") or {"x": None}))
        frame = ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":{"%s":"%s"}}}'
                 % (n, tool["name"], arg, bad))
        reply = raw_mcp.ask(frame.encode())
        assert reply["id"] == n and reply["result"]["isError"] is True, (tool["name"], reply)
        error = reply["result"]["structuredContent"]["error"]
        assert error["exit_code"] == 2 and f"argument '{arg}'" in error["message"] and what in error["message"], error


# -- failure 10: held-out records on a terminal ---------------------------------------------------

def _terminal(view, data) -> str:
    import io

    from rich.console import Console

    from kyb_cli.cli.render import terminal_safe

    buf = io.StringIO()
    view(Console(file=buf, width=200, no_color=True, highlight=False), terminal_safe(data))
    return buf.getvalue()


def test_failure_10_held_out_records_are_shown_on_a_terminal_with_why(team):  # noqa: F811
    from kyb_cli.cli.commands.init import _cloned_view
    from kyb_cli.cli.commands.sync import sync_view

    team.peer.write({path_of_key("typo"): (BLOB, "+++\nkey = 'typo'\ntitle = [broken\n+++\n"),
                     path_of_key("esc"): (BLOB, record_text("other-key"))})
    res = team.sync()
    assert res.returncode == 0, res.stderr
    reply = json.loads(res.stdout)
    assert {h["path"] for h in reply["held_out"]} == {path_of_key("typo"), path_of_key("esc")}
    shown = _terminal(sync_view, reply)
    assert "2 record file(s) held out" in shown
    for held in reply["held_out"]:
        assert f"{held['path']}: {held['reason'][:40]}" in shown, shown
    clone = json.loads(team.clone().stdout)
    assert "2 record file(s) held out" in _terminal(_cloned_view, clone)
    quiet = _terminal(sync_view, {**reply, "held_out": []})
    assert "held out" not in quiet


def test_failure_10_readme_says_a_shared_disk_remote_runs_its_hooks_as_the_syncing_user(team):  # noqa: F811
    """The choice (docs/guide/sharing.md "Sharing a store"): kyb leaves Git's local transport as Git does it (a
    team may rely on its remote's hooks) and README says what that implies; this checks both that
    the words are there and that they are true."""
    readme = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "sharing.md").read_text()  # the guide's page
    words = " ".join(readme.split())
    assert "A remote on a shared disk" in words and "hooks (`pre-receive`, `update`, `post-receive`) run as you" in words
    assert "use an SSH or HTTPS remote" in words
    marker = team.outside / "hook-ran-as"
    hook = team.remote / "hooks" / "post-receive"
    hook.write_text(f"#!/bin/sh\nid -u > '{marker}'\n")
    hook.chmod(0o755)
    assert team.kyb("add", "--key", "hooked", "--title", "H", "--body", "h").returncode == 0
    assert team.sync().returncode == 0
    assert marker.read_text().strip() == str(os.getuid())  # it ran, as the user who synced


def test_failure_8_a_lone_surrogate_in_a_cli_argument_in_process_is_a_usage_error(store_path, monkeypatch):
    """Found by the CLI fuzz test (tests/test_fuzz_doors.py): `get '\\ud800'` through Click in-process
    was an internal error (exit 70); argv from a shell is checked in fast.py, this is the same rule
    for a Python caller of the Click group."""
    monkeypatch.setenv("KYB_STORE", str(store_path))
    for args in (["get", "\ud800"], ["add", "--key", "k", "--title", "a\udfffb", "--body", "x"]):
        res = _cli(*args)
        assert res.exit_code == 2 and res.stdout == "" and "not valid UTF-8" in res.stderr, (args, res.stderr)
