"""`kyb import`: Markdown folders as people wrote them, repeatable, honest about what it changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kyb_cli.core.records.keys import path_of_key


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def notes(tmp_path) -> Path:
    """A notes folder with every case the issue lists."""
    root = tmp_path / "notes"
    write(root / "toml.md", '+++\ntitle = "TOML note"\ntags = ["infra"]\n+++\n\nTOML body.\n')
    write(root / "yaml.md", "---\ntitle: YAML note\ntags: [x, y]\ndate: 2024-01-02\nowner: ann\n---\n\nYAML body.\n")
    write(root / "runbooks" / "restart.md", "# Restart the checkout service\n\nDrain, then restart.\n")
    write(root / "plain-words.md", "no heading here, just words\n")
    write(root / "decisions" / "0001-use-postgres.md", "# Use Postgres\n\nStatus: Accepted\n\nWe use pg.\n")
    write(root / "decisions" / "0002-use-mysql.md",
          "# Use MySQL\n\n* Status: superseded by [ADR-0001](0001-use-postgres.md)\n\nWe used MySQL.\n")
    write(root / "decisions" / "0003-use-mongo.md", "# Use Mongo\n\n## Status\n\nRejected\n\nNo.\n")
    write(root / "decisions" / "0004-queues.md", "---\ntitle: Queues\nstatus: deprecated\n---\n\nKafka.\n")
    write(root / "decisions" / "0005-proposed.md", "# Cache\n\nStatus: Proposed\n\nRedis.\n")
    write(root / "secret.md", "# Creds\n\npassword: hunter2hunter2\n")
    write(root / "photo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    write(root / "blob.md", b"\0\0\0binary")
    write(root / "dup-a.md", "# Same title\n\nfirst\n")
    write(root / "sub" / "dup-b.md", "# Same title\n\nsecond\n")
    write(root / ".gitignore", "drafts/\n")
    write(root / "drafts" / "wip.md", "# WIP\n")
    write(tmp_path / "outside.md", "# Outside\n\nnot in the folder\n")
    (root / "link.md").symlink_to(tmp_path / "outside.md")
    (root / "inner-link.md").symlink_to(root / "toml.md")
    return root


def keys(entries: list[dict]) -> list[str]:
    return sorted(e["key"] for e in entries)


def test_import_reads_front_matter_headings_adrs_and_skips_what_breaks_a_rule(kyb, notes):
    res = kyb("import", str(notes))
    assert res.code == 0, res.stderr
    d = res.json
    assert keys(d["created"]) == ["decisions-0001-use-postgres", "decisions-0002-use-mysql",
                                  "decisions-0003-use-mongo", "decisions-0004-queues", "decisions-0005-proposed",
                                  "dup-a", "plain-words", "runbooks-restart", "sub-dup-b", "toml", "yaml"]
    assert d["updated"] == [] and d["unchanged"] == []
    skipped = {Path(s["path"]).name: s["reason"] for s in d["skipped"]}
    assert set(skipped) == {"secret.md", "photo.png", "blob.md", "link.md", "inner-link.md"}
    assert "secret" in skipped["secret.md"] and "hunter2" not in skipped["secret.md"]
    assert skipped["blob.md"] == "binary file" and skipped["photo.png"] == "binary file"
    assert "out of the folder" in skipped["link.md"]
    assert "inside the folder" in skipped["inner-link.md"]
    assert d["commits"] == 11 + 3  # one per record, plus one retraction per retired ADR
    assert d["head"] == subprocess.run(["git", "-C", str(kyb.store_path), "rev-parse", "HEAD"],
                                       capture_output=True, text=True).stdout.strip()
    toml = kyb("get", "toml").json
    assert (toml["title"], toml["tags"], toml["body"]) == ("TOML note", ["infra"], "TOML body.")
    yaml = kyb("get", "yaml").json
    assert (yaml["title"], yaml["tags"], yaml["extra"]) == ("YAML note", ["x", "y"], {"date": "2024-01-02",
                                                                                     "owner": "ann"})
    assert kyb("get", "runbooks-restart").json["title"] == "Restart the checkout service"
    assert kyb("get", "plain-words").json["title"] == "plain-words"  # no heading: the file name
    assert kyb("get", "decisions-0005-proposed").json["state"] == "active"


def test_adr_status_lines_map_to_lifecycle_with_reason_and_superseded_by_ref(kyb, notes):
    d = kyb("import", str(notes)).json
    states = {e["key"]: (e.get("state", "active"), e.get("reason", "")) for e in d["created"]}
    assert states["decisions-0001-use-postgres"] == ("active", "")
    assert states["decisions-0002-use-mysql"][0] == "retracted"
    assert "superseded by" in states["decisions-0002-use-mysql"][1]
    assert states["decisions-0003-use-mongo"] == ("retracted", "ADR status: Rejected")
    assert states["decisions-0004-queues"] == ("retracted", "ADR status: deprecated")
    gone = kyb("get", "decisions-0002-use-mysql")
    assert gone.code == 1 and "superseded by" in gone.stderr
    history = kyb("history", "decisions-0002-use-mysql").json["versions"]
    assert [v["change"] for v in history] == ["deleted", "added"]
    old = kyb("get", "decisions-0002-use-mysql", "--at", history[1]["sha"]).json
    assert old["refs"] == ["decisions-0001-use-postgres"]  # the link, resolved to the imported key
    assert old["body"].endswith("We used MySQL.")


def test_duplicate_titles_get_distinct_stable_keys_and_are_reported(kyb, notes):
    first = kyb("import", str(notes), "--key-from", "title").json
    same = [e for e in first["created"] if e["path"].endswith(("dup-a.md", "dup-b.md"))]
    assert len({e["key"] for e in same}) == 2
    assert any(e["key"] == "same-title" for e in same)
    dup = first["duplicates"]
    assert [(Path(e["path"]).name, e["same_as"]) for e in dup] == [("dup-b.md", "same-title")]
    again = kyb("import", str(notes), "--key-from", "title").json
    assert again["created"] == [] and again["commits"] == 0
    assert again["duplicates"] == dup  # the same keys, reported again


def test_reimport_unchanged_makes_no_commit_changed_updates_deleted_is_reported(kyb, notes):
    kyb("import", str(notes))
    head = kyb("import", str(notes)).json
    assert head["commits"] == 0 and head["created"] == [] and head["updated"] == []
    assert len(head["unchanged"]) == 11
    write(notes / "toml.md", '+++\ntitle = "TOML note"\ntags = ["infra"]\n+++\n\nTOML body, changed.\n')
    (notes / "plain-words.md").unlink()
    changed = kyb("import", str(notes)).json
    assert keys(changed["updated"]) == ["toml"] and changed["commits"] == 1
    assert [(Path(m["path"]).name, m["key"], m["retracted"]) for m in changed["missing"]] == [
        ("plain-words.md", "plain-words", False)]
    assert kyb("get", "plain-words").code == 0  # reported, not retracted
    assert [v["change"] for v in kyb("history", "toml").json["versions"]] == ["modified", "added"]
    synced = kyb("import", str(notes), "--sync-deletes").json
    assert synced["missing"][0]["retracted"] is True and synced["commits"] == 1
    gone = kyb("get", "plain-words")
    assert gone.code == 1 and "source file" in gone.stderr
    assert kyb("import", str(notes)).json["missing"] == []  # reported once retracted, then forgotten


def test_dry_run_answers_the_same_and_writes_nothing(kyb, notes):
    before = subprocess.run(["git", "-C", str(kyb.store_path), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout
    dry = kyb("import", str(notes), "--dry-run").json
    after = subprocess.run(["git", "-C", str(kyb.store_path), "rev-parse", "HEAD"], capture_output=True,
                           text=True).stdout
    assert before == after and dry["dry_run"] is True
    real = kyb("import", str(notes)).json
    for name in ("created", "updated", "unchanged", "skipped", "commits"):
        assert dry[name] == real[name], name


def test_one_commit_puts_every_record_in_one_commit(kyb, notes):
    d = kyb("import", str(notes), "--one-commit").json
    log = subprocess.run(["git", "-C", str(kyb.store_path), "log", "--format=%s"], capture_output=True,
                         text=True).stdout.splitlines()
    assert log[:4] == ["kyb: retract decisions-0004-queues", "kyb: retract decisions-0003-use-mongo",
                       "kyb: retract decisions-0002-use-mysql", "kyb: import 11 records"]
    assert d["commits"] == 4
    assert kyb("get", "toml").json["title"] == "TOML note"


def test_excludes_and_tags_and_key_from_front_matter(kyb, tmp_path):
    root = tmp_path / "n"
    write(root / "a.md", '+++\nkey = "alpha"\ntitle = "A"\n+++\nA\n')
    write(root / "b.md", "# B\n")
    write(root / "tmp" / "c.md", "# C\n")
    d = kyb("import", str(root), "--exclude", "tmp/", "--tags", "imported,notes", "--key-from", "front-matter").json
    assert keys(d["created"]) == ["alpha"]
    assert [(Path(s["path"]).name, s["reason"]) for s in d["skipped"]] == [
        ("b.md", "no key in the front matter (--key-from front-matter)")]
    assert kyb("get", "alpha").json["tags"] == ["imported", "notes"]


def test_a_store_file_with_hand_edits_is_skipped_not_overwritten(kyb, tmp_path):
    root = tmp_path / "n"
    write(root / "a.md", "# A\n\none\n")
    kyb("import", str(root))
    store_file = kyb.store_path / path_of_key("a")
    store_file.write_text(store_file.read_text() + "hand edit\n")
    write(root / "a.md", "# A\n\ntwo\n")
    d = kyb("import", str(root)).json
    assert d["updated"] == [] and "uncommitted changes" in d["skipped"][0]["reason"]
    assert store_file.read_text().endswith("hand edit\n")


def test_bad_arguments_are_usage_errors_with_empty_stdout(kyb, tmp_path):
    res = kyb("import", str(tmp_path / "nope"))
    assert res.code == 2 and res.stdout == "" and res.stderr.startswith("kyb: ")
    res = kyb("import", str(tmp_path), "--kind", "poem")
    assert res.code == 2 and res.stdout == ""


def test_export_import_export_round_trips_a_store(kyb, tmp_path, store_path):
    root = tmp_path / "n"
    write(root / "a.md", "# Alpha\n\nport 9090\n")
    write(root / "adr.md", "# Old\n\nStatus: Superseded by adr2\n\nold text\n")
    kyb("import", str(root))
    kyb("incident", "inc-db-down", "--title", "DB down", "--service", "db", "--severity", "high",
        input="Primary died.")
    kyb("resolve", "inc-db-down", "--resolution", "Failed over.")
    kyb("task", "task-rotate", "--title", "Rotate keys", "--priority", "high", input="Rotate.")
    first = kyb("export").stdout
    (tmp_path / "export.jsonl").write_text(first)
    other = tmp_path / "other"
    assert kyb("init", str(other)).code == 0
    res = kyb("import", str(tmp_path / "export.jsonl"), env={"KYB_STORE": str(other)})
    assert res.code == 0, res.stderr
    assert res.json["skipped"] == []
    second = kyb("export", env={"KYB_STORE": str(other)}).stdout

    def content(text: str) -> list[dict]:
        drop = ("sha", "committed_at", "retracted_sha", "retracted_at", "archived_sha", "archived_at")
        return [{k: v for k, v in json.loads(line).items() if k not in drop} for line in text.splitlines()]

    assert content(second) == content(first)
    again = kyb("import", str(tmp_path / "export.jsonl"), env={"KYB_STORE": str(other)}).json
    assert again["commits"] == 0 and len(again["unchanged"]) == len(content(first))
    (tmp_path / "export.json").write_text(kyb("export", "--format", "json").stdout)
    assert kyb("import", str(tmp_path / "export.json")).json["commits"] == 0  # into itself: nothing changes


def test_csv_export_imports_knowledge(kyb, tmp_path):
    kyb("add", "--key", "port", "--title", "Port", "--tags", "a,b", input="9090")
    (tmp_path / "x.csv").write_text(kyb("export", "--format", "csv").stdout)
    other = tmp_path / "other"
    kyb("init", str(other))
    d = kyb("import", str(tmp_path / "x.csv"), env={"KYB_STORE": str(other)}).json
    assert keys(d["created"]) == ["port"]
    got = kyb("get", "port", env={"KYB_STORE": str(other)}).json
    assert (got["title"], got["tags"], got["body"]) == ("Port", ["a", "b"], "9090")


def test_readme_import_command_moves_a_notes_folder_in(kyb, tmp_path):
    """The guide's quick start (docs/guide/start.md) shows one command for a notes folder; it works as written."""
    import re

    readme = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "start.md").read_text(encoding="utf-8")
    assert "`kyb import ~/notes`" in (Path(__file__).resolve().parents[1] / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", quick, re.S)
    command = next(b.strip() for b in blocks if "kyb import" in b)
    assert command == "kyb import ~/notes"
    home = tmp_path / "home"
    write(home / "notes" / "deploy.md", "# Deploy\n\nBlue-green.\n")
    bin_dir = str(Path(sys.executable).parent)  # the `kyb` of this environment, not whatever else is on PATH
    env = dict(os.environ, HOME=str(home), KYB_STORE=str(kyb.store_path),
               PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    res = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert [e["key"] for e in json.loads(res.stdout)["created"]] == ["deploy"]


def test_import_updates_and_creates_carry_the_hints_kyb_add_gives(kyb, tmp_path):
    """An update that removes wording other records still hold says so (`retired_elsewhere`); a
    create near an existing key says so (`similar`), as `kyb add` does."""
    assert kyb("add", "--key", "copy-of-port", "--title", "Copied note",
               "--body", "svc-checkout on node-3, port 8080").code == 0
    notes = tmp_path / "notes"
    write(notes / "checkout-port.md", "# Checkout port\n\nsvc-checkout runs on node-3, port 8080.\n")
    first = kyb("import", str(notes))
    assert first.code == 0, first.stderr
    write(notes / "checkout-port.md", "# Checkout port\n\nsvc-checkout runs on node-3, port 9090.\n")
    write(notes / "copy-of-ports.md", "# Copy of ports\n\nother text\n")
    second = kyb("import", str(notes))
    assert second.code == 0, second.stderr
    reply = second.json
    updated = {e["key"]: e for e in reply["updated"]}
    assert {"key": "copy-of-port", "phrase": "8080"} in updated["checkout-port"]["retired_elsewhere"]
    created = {e["key"]: e for e in reply["created"]}
    assert "copy-of-port" in [s["key"] for s in created["copy-of-ports"]["similar"]]


def test_a_heading_that_became_the_title_leaves_the_body(tmp_path):
    """Issue 42: `# Title` at the top of a file is its title, once; a heading further down is a section."""
    from kyb_cli.core.tools.import_read import read_markdown

    top = read_markdown("# Checkout path\n\nport 9090\n\n## Later\n\nmore\n", "/n/a.md", "a.md", "knowledge")
    assert top.record.title == "Checkout path"
    assert top.record.body == "port 9090\n\n## Later\n\nmore"
    below = read_markdown("Intro line.\n\n# Section\n\ntext\n", "/n/b.md", "b.md", "knowledge")
    assert below.record.title == "Section" and below.record.body.startswith("Intro line.")


def test_a_one_sentence_first_line_of_a_text_file_is_its_title(tmp_path):
    from kyb_cli.core.tools.import_read import read_markdown

    item = read_markdown("Renew the TLS certificate before March.\n\nThe cert lives in vault.\n",
                         "/n/c.txt", "c.txt", "knowledge")
    assert item.record.title == "Renew the TLS certificate before March"
    assert item.record.body == "The cert lives in vault."
    runs_on = read_markdown("First thing. Then another thing.\n\nbody\n", "/n/d.txt", "d.txt", "knowledge")
    assert runs_on.record.title == "d"  # two sentences are text, not a title
