"""Issue 24, "Hostile input, round two": one test (or a few) named after each numbered failure, with
plain git as the peer (tests/support/hostile.py) where a peer is the attacker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kyb_cli.core.errors import Rejected, UsageError
from kyb_cli.core.records import secrets
from kyb_cli.core.records.model import Record
from kyb_cli.core.records.validate import validate
from support.hostile import BLOB, record_text
from test_sync_hostile import team, team_template  # noqa: F401  (the fixture: a victim store, a bare remote, a peer)
from kyb_cli.core.records.keys import path_of_key

CORPUS = Path(__file__).resolve().parent / "data" / "secrets_corpus_round2.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
SECRETS = [r for r in ROWS if r["expect"] == "secret"]
CLEAN = [r for r in ROWS if r["expect"] == "clean"]
GHP = "ghp_" + "k3Jq9ZpX2mVt7RwL5nYc8Hs4Fd6Gb1Ae0UoQ"


# -- failure 2: a peer's secrets are served -------------------------------------------------------

def test_failure_2_round_two_corpus_is_the_generated_one():
    from support.secret_corpus_round2 import rows

    assert ROWS == rows() and len(SECRETS) >= 75 and len(CLEAN) >= 50


def test_failure_2_round_two_corpus_at_least_95_percent_caught_no_lookalike_refused():
    caught = [r["what"] for r in SECRETS if secrets.first_secret(r["text"], r["field"])]
    refused = [r["what"] for r in CLEAN if secrets.first_secret(r["text"], r["field"])]
    assert len(caught) >= 0.95 * len(SECRETS), sorted({r["what"] for r in SECRETS} - set(caught))
    assert refused == []


PEER_FIELDS = {  # path -> record text with the secret in one field a write scans
    path_of_key("f-tags"): record_text("f-tags", tags=[GHP]),
    path_of_key("f-hand"): record_text("f-hand", runbook=GHP),
    path_of_key("f-verified"): record_text("f-verified") .replace(
        "+++\n", "+++\n", 1).replace('title = "f-verified"', f'title = "f-verified"\n[verified]\nsource = "{GHP}"'),
    path_of_key("inc-service"): record_text("inc-service", service=GHP, severity="low", status="open"),
    path_of_key("inc-hosts"): record_text("inc-hosts", service="s", severity="low", status="open", hosts=[GHP]),
    path_of_key("inc-know"): record_text("inc-know", service="s", severity="low", status="open", knowledge=[GHP]),
    path_of_key("inc-aff"): record_text("inc-aff", service="s", severity="low", status="open").replace(
        '+++\n', f'[[affected]]\nscope = "{GHP}"\nfrom = "2026-01-01"\nto = "2026-01-02"\n+++\n', 2).replace(
        f'[[affected]]\nscope = "{GHP}"\nfrom = "2026-01-01"\nto = "2026-01-02"\n+++\nkey', '+++\nkey', 1),
    path_of_key("task-blocked"): record_text("task-blocked", status="blocked", blocked_reason="r",
                                         blocked_by=[f"task-{GHP}"]),
    path_of_key("task-parent"): record_text("task-parent", status="open", parent_task=f"task-{GHP}"),
}


@pytest.mark.parametrize("path", sorted(PEER_FIELDS))
def test_failure_2_held_out_check_scans_every_field_a_write_scans(path):
    from kyb_cli.core.records import served

    reason = served.record_problem(path, PEER_FIELDS[path])
    assert reason is not None and "secret" in reason, reason
    assert "k3Jq9Z" not in reason


def test_failure_2_a_peers_secret_in_any_field_is_held_out_and_never_served(team):  # noqa: F811
    team.peer.write({p: (BLOB, t) for p, t in PEER_FIELDS.items()})
    res = team.sync()
    assert res.returncode == 0, res.stderr
    held = sorted(h["path"] for h in json.loads(res.stdout)["held_out"])
    assert held == sorted(PEER_FIELDS)
    for args in (("export",), ("query", "f"), ("tasks", "--all")):
        out = team.kyb(*args)
        assert "k3Jq9Z" not in out.stdout + out.stderr


@pytest.mark.parametrize("key", ["sk-proj-" + "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6", "glpat-" + "x9y8z7w6v5u4t3s2r1q0"])
def test_failure_2_a_key_that_looks_like_a_secret_is_refused_without_echoing_it(key):
    with pytest.raises(Rejected) as err:
        validate(Record(key=key, title="t"))
    assert key[6:] not in err.value.message and "key looks like a secret" in err.value.message


def test_failure_2_attribution_labels_are_scanned(store):
    from kyb_cli.api.records import add_knowledge
    from kyb_cli.core.canon.attribution import detect

    def add(**env):
        return add_knowledge(store, key="k", title="t", body="b", tags=[], refs=[],
                             attribution=detect(environ={"KYB_AGENT": "a", "KYB_WORKSPACE": "w", **env}))

    with pytest.raises(Rejected) as err:
        add(KYB_SESSION=GHP)
    assert "session label" in err.value.message and "k3Jq9Z" not in err.value.message
    with pytest.raises(Rejected):
        add(KYB_AGENT="bot " + GHP)
    assert add(KYB_SESSION="plain-session-1").changed


@pytest.mark.parametrize("field", ["due", "expected", "review_by", "parent_task"])
def test_failure_2_field_errors_do_not_echo_a_secret(field):
    kind_key = "task-x" if field in ("due", "expected", "parent_task") else "k"
    record = Record(key=kind_key, title="t", status="open" if kind_key.startswith("task") else "")
    setattr(record, field, GHP)
    if field == "expected":
        record.waits_on = "w"
    with pytest.raises(Rejected) as err:
        validate(record)
    assert "k3Jq9Z" not in err.value.message


@pytest.mark.parametrize("text", [GHP, "2026-13-45" + GHP, "x" * 500])
def test_failure_2_at_and_as_of_errors_do_not_echo_a_secret(text):
    from kyb_cli.core.timeargs import parse_time

    with pytest.raises(UsageError) as err:
        parse_time(text, bound="at")
    assert "k3Jq9Z" not in err.value.message and "x" * 100 not in err.value.message


# -- failure 1: records wedged (a name the filesystem cannot hold) ---------------------------------

def _refused_paths(res) -> list[str]:
    assert res.returncode == 4 and res.stdout == "", (res.returncode, res.stdout, res.stderr)
    return [line for line in res.stderr.splitlines()]


def test_failure_1_a_peer_name_over_name_max_is_refused_before_the_branch_moves(team):  # noqa: F811
    from support.hostile import git

    before = git("-C", str(team.store), "rev-parse", "HEAD", check=False)
    long_name = "knowledge/" + "a" * 300 + ".md"
    team.peer.write({long_name: (BLOB, record_text("a" * 300)),
                     path_of_key("fine"): (BLOB, record_text("fine", body="ok"))})
    res = team.sync()
    assert res.returncode == 4 and res.stdout == "" and "NAME_MAX" in res.stderr, res.stderr
    assert git("-C", str(team.store), "rev-parse", "HEAD", check=False) == before
    assert team.kyb("add", "--key", "next", "--title", "N", "--body", "n").returncode == 0


# -- failure 4: limits ------------------------------------------------------------------------------

def test_failure_4_front_matter_over_the_limit_is_refused_locally_and_held_out_from_a_peer(team):  # noqa: F811
    from kyb_cli.core.records import limits, served

    big = "x " * (limits.FRONT_MATTER_MAX_BYTES // 2 + 10)
    with pytest.raises(Rejected) as err:
        validate(Record(key="k", title="t", extra={"notes": big}))
    assert "front matter" in err.value.message and "64 KiB" in err.value.message
    assert "front matter" in served.record_problem(path_of_key("k"), record_text("k", notes=big))
    team.peer.write({path_of_key("big"): (BLOB, record_text("big", notes=big, body="big body"))})
    res = team.sync()
    assert res.returncode == 0, res.stderr
    assert [h["path"] for h in json.loads(res.stdout)["held_out"]] == [path_of_key("big")]
    for args in (("get", "big"), ("export",)):
        out = team.kyb(*args)
        assert "x x x x" not in out.stdout and len(out.stdout) < 10_000, (args, len(out.stdout))


def test_failure_4_tag_count_is_limited():
    from kyb_cli.core.records import limits

    with pytest.raises(Rejected) as err:
        validate(Record(key="k", title="t", tags=[f"t{i}" for i in range(limits.TAGS_MAX + 901)]))
    assert f"limit is {limits.TAGS_MAX}" in err.value.message


def test_failure_4_yaml_aliases_are_refused_before_expansion():
    import time

    from kyb_cli.core.tools.import_read import split_front_matter

    lol = "---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" \
          "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\ntitle: t\n---\nbody\n"
    start = time.monotonic()
    with pytest.raises(ValueError) as err:
        split_front_matter(lol)
    assert "alias" in str(err.value) and time.monotonic() - start < 1


def test_failure_4_json_depth_is_limited():
    from kyb_cli.core.tools.import_read import read_rows

    for text in ("[" * 5000 + "]" * 5000, "[" * 100 + "]" * 100):
        items = read_rows(text, "deep.json", "json")
        assert len(items) == 1 and "deeper than" in items[0].skip


def test_a_json_string_with_a_lone_surrogate_is_refused_and_no_other_is():
    """json_depth refuses exactly the strings with a code point in U+D800-U+DFFF (strict UTF-8's
    refusal), pairs joined by the JSON reader and every other plane accepted."""
    import json
    import random

    from kyb_cli.core.records.limits import json_depth

    rng = random.Random(7)
    ranges = [(0, 0x7F), (0x80, 0xD7FF), (0xD800, 0xDFFF), (0xE000, 0x10FFFF)]
    for _ in range(3000):
        text = "".join(chr(rng.randint(*rng.choice(ranges))) for _ in range(rng.randint(0, 6)))
        lone = any("\ud800" <= ch <= "\udfff" for ch in text)
        try:
            json_depth({"text": [text]})
            refused = False
        except ValueError:
            refused = True
        assert refused == lone, repr(text)
    assert json_depth(json.loads('{"a": "\\ud83d\\ude00"}')) == 1  # a pair: one emoji
    with pytest.raises(ValueError):
        json_depth(json.loads('["\\ud800"]'))


def test_failure_4_total_incoming_size_per_sync_is_capped_with_what_to_do(team, monkeypatch):  # noqa: F811
    blob = "z" * 4096  # one blob under five paths: a small push, five copies in every clone
    team.peer.write({f"attach/{i}.bin": (BLOB, blob) for i in range(5)})
    res = team.sync(extra={"KYB_SYNC_MAX_INCOMING": "10000"})
    assert res.returncode == 4 and res.stdout == "" and "KYB_SYNC_MAX_INCOMING" in res.stderr, res.stderr
    assert team.sync(extra={"KYB_SYNC_MAX_INCOMING": "100000"}).returncode == 0


def test_failure_4_an_oversized_commit_object_is_refused(team):  # noqa: F811
    from kyb_cli.core.records import limits

    tip = team.peer.write({path_of_key("a"): (BLOB, record_text("a"))})
    tree = team.peer.g("rev-parse", f"{tip}^{{tree}}")
    team.peer.push(team.peer.commit(tree, [tip], "peer: big\n\n" + "m" * (limits.COMMIT_MAX_BYTES + 1) + "\n"))
    res = team.sync()
    assert res.returncode == 4 and "commit object" in res.stderr, res.stderr


# -- failure 5: a crash instead of a refusal --------------------------------------------------------

def nested_trees(git_dir, blob: str, name: str, depth: int) -> str:
    """`d/d/…/NAME` `depth` directories deep, written as raw tree objects into `git_dir` in this
    process (1,000 `git mktree` processes cost ~3 s): a tree is `MODE NAME\\0` + the 20-byte id."""
    import pygit2

    odb = pygit2.Repository(str(git_dir)).odb
    oid = odb.write(pygit2.enums.ObjectType.TREE, b"100644 " + name.encode() + b"\0" + bytes.fromhex(blob))
    for _ in range(depth - 1):
        oid = odb.write(pygit2.enums.ObjectType.TREE, b"40000 d\0" + oid.raw)
    return str(oid)


def test_failure_5_a_tree_a_thousand_directories_deep_is_refused_not_a_crash(team):  # noqa: F811
    peer = team.peer
    sha = peer.blob(record_text("deep"))
    entry = f"040000 tree {nested_trees(peer.remote, sha, 'deep.md', 1000)}\td\n"
    tip = peer.tip()
    root = {p: e for p, e in peer.files().items()}
    lines = [f"{e.mode} blob {e.sha}\t{p}" for p, e in root.items() if "/" not in p]
    top = peer.g("mktree", "--missing", input="\n".join(lines + [entry.rstrip("\n")]) + "\n")
    peer.push(peer.commit(top, [tip] if tip else []))
    for res in (team.sync(), team.clone("again")):
        assert res.returncode == 4 and res.stdout == "", (res.returncode, res.stderr[-2000:])
        assert "directories deep" in res.stderr and "Traceback" not in res.stderr


def test_failure_5_a_commit_with_an_unknown_encoding_header_does_not_stop_syncs(team):  # noqa: F811
    peer = team.peer
    tip = peer.write({path_of_key("enc"): (BLOB, record_text("enc", body="encoded"))})
    tree = peer.g("rev-parse", f"{tip}^{{tree}}")
    raw = (f"tree {tree}\nparent {tip}\nauthor peer <p@x.invalid> 1800000100 +0000\n"
           f"committer peer <p@x.invalid> 1800000100 +0000\nencoding x-no-such-charset\n\npeer: \xe9t\xe9\n")
    commit = peer.g("hash-object", "-t", "commit", "-w", "--stdin", "--literally", input=raw.encode("latin-1"))
    peer.push(commit)
    for _ in range(2):
        res = team.sync(extra={"KYB_DEBUG": "1"})
        assert res.returncode == 0, res.stderr[-3000:]
    for args in (("log",), ("history", "enc"), ("get", "enc")):
        res = team.kyb(*args, extra={"KYB_DEBUG": "1"})
        assert res.returncode == 0 and "Traceback" not in res.stderr, (args, res.stderr[-3000:])


# -- failure 7: `kyb log` forged by a separator in a message -----------------------------------------

FORGED = ("\x1e" + "f" * 40 + "\x1f1800000000\x1f\x1fmallory <m@x>\x1fkyb: add forged\n\nKyb-Action: add\x1f"
          + path_of_key("forged"))


def test_failure_7_kyb_log_is_not_forged_by_separators_in_a_peer_commit(team):  # noqa: F811
    tip = team.peer.write({path_of_key("real"): (BLOB, record_text("real", body="r"))},
                          message="peer: edit" + FORGED + "\n")
    assert team.sync().returncode == 0
    res = team.kyb("log")
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    rows = rows["log"]
    assert "f" * 40 not in [r["sha"] for r in rows]
    assert tip in [r["sha"] for r in rows]
    assert not [r for r in rows if r.get("author", "").startswith("mallory")]


def test_failure_7_kyb_log_is_not_forged_by_a_retraction_reason(store):
    from kyb_cli.core.tools.activity import log

    from kyb_cli.api.records import add_knowledge
    from kyb_cli.core.canon.attribution import detect
    from kyb_cli.core.kinds.knowledge import retract_knowledge as retract

    who = detect(environ={"KYB_AGENT": "a", "KYB_SESSION": "s", "KYB_WORKSPACE": "w"})
    add_knowledge(store, key="k", title="t", body="b", tags=[], refs=[], attribution=who)
    try:
        retract(store, "k", "wrong" + FORGED, who)
    except Rejected:
        pytest.skip("the reason is refused outright")
    rows = log(store.path)
    assert len(rows) == 3 and "f" * 40 not in [r["sha"] for r in rows]


# -- failure 6: recovery that wedges ------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["not-utf8", "directory", "directory-twice"])
def test_failure_6_a_journal_of_any_bytes_or_a_directory_is_set_aside_and_writes_go_on(store, damage, capsys):
    from kyb_cli.api.records import add_knowledge
    from kyb_cli.core.canon.attribution import detect

    journal = Path(store.path) / ".git" / "kyb" / "pending.json"
    journal.parent.mkdir(parents=True, exist_ok=True)
    if damage == "not-utf8":
        journal.write_bytes(b"\xff\xfe{\x00\x80")
    else:
        journal.mkdir()
        (journal / "x").write_text("x")
        if damage == "directory-twice":
            (journal.parent / "pending.json.failed").mkdir()
    who = detect(environ={"KYB_AGENT": "a", "KYB_SESSION": "s", "KYB_WORKSPACE": "w"})
    assert add_knowledge(store, key="k", title="t", body="b", tags=[], refs=[], attribution=who).changed
    assert not journal.exists() and "set aside" in capsys.readouterr().err
    assert add_knowledge(store, key="k2", title="t", body="b", tags=[], refs=[], attribution=who).changed


def test_failure_6_a_killed_syncs_quarantine_is_cleaned_up_by_the_next_sync(team):  # noqa: F811
    left = team.store / ".git" / "kyb" / "quarantine-999999"
    (left / "pack").mkdir(parents=True)
    (left / "pack" / "junk.pack").write_bytes(b"x" * 100)
    team.peer.write({path_of_key("q"): (BLOB, record_text("q", body="q"))})
    assert team.sync().returncode == 0
    assert not left.exists()
    assert not [p for p in (team.store / ".git" / "kyb").iterdir() if p.name.startswith("quarantine-")]


# -- failure 3: a full disk makes a landed sync look failed ------------------------------------------

def test_failure_3_a_full_disk_after_the_push_landed_is_success(tmp_path, store, monkeypatch):
    import errno
    import subprocess

    import pygit2.references

    from kyb_cli.api.records import add_knowledge
    from kyb_cli.api.sync import set_remote, sync
    from kyb_cli.core.canon.attribution import detect

    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    set_remote(store, str(remote))
    who = detect(environ={"KYB_AGENT": "a", "KYB_SESSION": "s", "KYB_WORKSPACE": "w"})
    add_knowledge(store, key="k", title="t", body="b", tags=[], refs=[], attribution=who)
    real = pygit2.references.References.create

    def full(self, name, *args, **kw):
        if name.startswith("refs/remotes/"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, name, *args, **kw)

    monkeypatch.setattr(pygit2.references.References, "create", full)
    reply = sync(store, attribution=who)
    assert reply["pushed"] is True
    head = subprocess.run(["git", "--git-dir", str(remote), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert head.stdout.strip() == reply["head"]


# -- failure 10: smaller items ------------------------------------------------------------------------

def test_failure_10_a_peer_planted_kyb_toml_in_the_store_does_not_redirect_kyb(store_path, tmp_path, monkeypatch):
    from kyb_cli.core.config.locate import locate

    monkeypatch.delenv("KYB_STORE", raising=False)
    (store_path / "knowledge").mkdir(exist_ok=True)
    (store_path / ".kyb.toml").write_text(f'store = "{tmp_path / "elsewhere"}"\n')
    (store_path / "knowledge" / ".kyb.toml").write_text(f'store = "{tmp_path / "elsewhere"}"\n')
    for where in (store_path, store_path / "knowledge"):
        assert "elsewhere" not in str(locate(cwd=where).path)
    outside = tmp_path / "project"
    outside.mkdir()
    (outside / ".kyb.toml").write_text(f'store = "{store_path}"\n')
    assert locate(cwd=outside).path == store_path


def test_failure_10_init_clone_with_a_relative_path_works(team, monkeypatch):  # noqa: F811
    """Processes: a relative path is resolved against the process's own working directory."""
    team.peer.write({path_of_key("rel"): (BLOB, record_text("rel", body="relative"))})
    monkeypatch.chdir(team.remote.parent)
    from support.hostile import git  # noqa: F401

    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "kyb_cli", "init", "--clone", team.remote.name, "relclone"],
                         capture_output=True, text=True, env=team.env, cwd=team.remote.parent)
    assert res.returncode == 0, res.stderr
    got = subprocess.run([sys.executable, "-m", "kyb_cli", "--store", "relclone", "get", "rel"],
                         capture_output=True, text=True, env=team.env, cwd=team.remote.parent)
    assert got.returncode == 0 and "relative" in got.stdout, got.stderr


def test_failure_10_a_shallow_remote_gets_advice_that_helps(team, tmp_path):  # noqa: F811
    import subprocess

    team.peer.write({path_of_key("s1"): (BLOB, record_text("s1", body="one"))})
    team.peer.write({path_of_key("s2"): (BLOB, record_text("s2", body="two"))})
    shallow = tmp_path / "shallow.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--depth", "1", f"file://{team.remote}", str(shallow)],
                   check=True, capture_output=True)
    res = team.kyb("init", "--clone", str(shallow), str(tmp_path / "from-shallow"), store=None)
    assert res.returncode in (0, 5), res.stderr
    if res.returncode == 5:
        assert "sync again" not in res.stderr and "--unshallow" in res.stderr, res.stderr


# -- failure 9: terminal escapes ---------------------------------------------------------------------

EVIL = "t\x1b]0;pwned\x07\x1b[2J\x9b31m\r"


def test_failure_9_terminal_output_escapes_control_sequences(monkeypatch, capsys):
    from kyb_cli.cli import output, render

    monkeypatch.setattr(output, "wants_json", lambda: False)
    seen = []
    output.emit({"key": "k", "title": EVIL, "rows": [{"message": EVIL}]},
                lambda c, d: seen.append(d))
    for value in (seen[0]["title"], seen[0]["rows"][0]["message"]):
        assert not [ch for ch in value if ch in "\x1b\x9b\x07\r"], value
    assert seen[0]["title"].startswith("t\\x1b]0;pwned\\x07")
    assert render.terminal_text("a\nb\tc") == "a\nb\tc"


def test_failure_9_json_output_keeps_escapes_escaped(monkeypatch, capsys):
    from kyb_cli.cli import output

    monkeypatch.setattr(output, "wants_json", lambda: True)
    output.emit({"title": "t\x1b[2J"})
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\u001b" in out


def test_failure_10_jsonl_values_are_not_coerced_to_python_reprs():
    from kyb_cli.core.tools.import_read import read_rows

    line = json.dumps({"key": "k", "title": {"a": 1}, "body": [1, "x"], "tags": ["t", True]})
    [item] = read_rows(line, "rows.jsonl", "jsonl")
    record = item.record
    assert record.title == '{"a": 1}' and record.body == '[1, "x"]'
    assert "True" not in record.tags and "{'a'" not in record.title


# -- failure 8: bad input reaching internal errors ---------------------------------------------------

@pytest.mark.parametrize("args", [[b"get", b"\xff\xfek"], [b"add", b"--key", b"k", b"--title", b"t\xff", b"--body", b"b"],
                                  [b"query", b"a\xffb"]])
def test_failure_8_a_cli_argument_that_is_not_utf8_is_a_usage_error(store_path, args):
    import os
    import subprocess
    import sys

    env = {**os.environ, "KYB_STORE": str(store_path)}
    res = subprocess.run([sys.executable.encode(), b"-m", b"kyb_cli", *args], capture_output=True, env=env)
    assert res.returncode == 2 and res.stdout == b"" and b"not valid UTF-8" in res.stderr, res.stderr


@pytest.mark.parametrize("method,url,body", [
    ("POST", "/knowledge", b"[" * 5000 + b"]" * 5000),
    ("POST", "/knowledge", b'{"a":' * 1000 + b"1" + b"}" * 1000),
    ("POST", "/knowledge", b'{"key": "s", "title": "\\ud800", "body": "b"}'),
    ("POST", "/knowledge", json.dumps({"key": "tags", "title": "t", "body": "b",
                                       "tags": [f"t{i}" for i in range(1001)]}).encode()),
    ("GET", "/knowledge/x?at=%00", b""),
    ("GET", "/search?q=a&as_of=%00", b""),
    ("GET", "/knowledge/x%00y", b""),
])
def test_failure_8_http_bad_bodies_and_params_are_4xx_never_500(tmp_path, method, url, body):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from kyb_cli import api
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    api.init_store(tmp_path / "store")
    app = build_app(Door(tmp_path / "store"), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
    with TestClient(app, raise_server_exceptions=False) as client:
        reply = client.request(method, url, content=body or None,
                               headers={"host": "127.0.0.1:8765", "content-type": "application/json"})
    assert 400 <= reply.status_code < 500, (reply.status_code, reply.text[:300])
    answer = reply.json()
    assert answer["exit_code"] in (1, 2, 3) and "no route" not in answer["error"], answer  # the route answered
    assert "Traceback" not in reply.text and "\x00" not in answer["error"], answer


def test_failure_8_a_nul_in_any_git_argument_is_a_usage_error_not_a_crash(store_path):
    from kyb_cli.core.canon import git

    with pytest.raises(UsageError) as err:
        git.run(["rev-parse", "--verify", "a\x00b"], cwd=store_path)
    assert "NUL" in err.value.message and err.value.exit_code == 2


def test_failure_8_serve_imports_what_it_needs_before_accepting_a_connection():
    import subprocess
    import sys

    code = ("import sys; from kyb_cli.api.preload import preload; skipped = preload(); "
            "missing = [m for m in ('kyb_cli.core.kinds.knowledge', 'kyb_cli.core.canon.transaction', "
            "'kyb_cli.core.index.reads', 'kyb_cli.core.search.pipeline') if m not in sys.modules]; "
            "print(missing)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
