"""Issue 37, item 6 (the adversarial run, round three), the input side:

- Export -> import restored nothing and exited 0 when one record held U+2028, U+2029 or U+0085
  (JSONL: the importer split rows with `str.splitlines()`), or a lone CR or a field over 128 KiB
  (CSV), and one bad row skipped the whole file. Rows now end at "\\n" only; CSV is read with
  newline="" and a field size limit as big as the file (a row with a CR is written quoted); a bad
  row is listed as skipped with its line number while the good rows import."""

from __future__ import annotations

import json

import pytest

from kyb_cli import api
from kyb_cli.core.tools.export import export_rows

ODD = {"ls": "a\u2028b", "ps": "c\u2029d", "nel": "e\u0085f", "cr": "g\rh", "crlf": "i\r\nj"}


def _store_with_odd_records(tmp_path):
    src = api.init_store(tmp_path / "a")
    who = api.attribution("cli")
    for name, text in ODD.items():
        api.add_knowledge(src, key=f"odd-{name}", title=f"Odd {name}", body=f"before {text} after",
                          tags=[], refs=[], attribution=who)
    big = "long line of text " * 8000  # 144,000 characters: over the csv module's 128 KiB default
    api.add_knowledge(src, key="odd-big", title="Big", body=big, tags=[], refs=[], attribution=who)
    return tmp_path / "a"


def _content(rows):
    return {r["key"]: (r["title"], r["body"]) for r in rows}


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "json"])
def test_export_then_import_round_trips_line_separators_lone_cr_and_long_fields(tmp_path, fmt):
    src = _store_with_odd_records(tmp_path)
    _, rows = export_rows(src)
    assert any("\u2028" in r["body"] for r in rows)
    exported = tmp_path / f"e.{fmt}"
    exported.write_bytes(api.export_text(rows, fmt).encode("utf-8"))
    dst = api.init_store(tmp_path / "b")
    reply = api.import_records(dst, [str(exported)], attribution=api.attribution("cli"), format=fmt)
    assert reply["skipped"] == [], reply["skipped"]
    assert sorted(c["key"] for c in reply["created"]) == sorted(r["key"] for r in rows)
    _, again = export_rows(tmp_path / "b")
    assert _content(again) == _content(rows)


def test_a_bad_jsonl_row_is_skipped_with_its_line_number_and_the_good_rows_import(tmp_path):
    dst = api.init_store(tmp_path / "b")
    f = tmp_path / "rows.jsonl"
    good = json.dumps({"key": "good-one", "title": "Good", "body": "a fact"})
    other = json.dumps({"key": "good-two", "title": "Good", "body": "x\u2028y"}, ensure_ascii=False)
    f.write_text(f"{good}\n{{not json\n{other}\n", encoding="utf-8")
    reply = api.import_records(dst, [str(f)], attribution=api.attribution("cli"), format="jsonl")
    assert sorted(c["key"] for c in reply["created"]) == ["good-one", "good-two"]
    assert [s["path"] for s in reply["skipped"]] == [f"{f}:2"]
    assert reply["skipped"][0]["reason"].startswith("not JSONL")


def test_a_bad_csv_row_is_skipped_with_its_line_number_and_the_good_rows_import(tmp_path):
    dst = api.init_store(tmp_path / "b")
    f = tmp_path / "rows.csv"
    f.write_text('key,title,body\ngood-one,Good,"a\nfact"\nbad,B,x,y,z,w\ngood-two,Two,fact\n', encoding="utf-8")
    reply = api.import_records(dst, [str(f)], attribution=api.attribution("cli"), format="csv")
    assert sorted(c["key"] for c in reply["created"]) == ["good-one", "good-two"]
    assert [s["path"] for s in reply["skipped"]] == [f"{f}:4"]
    assert "fields" in reply["skipped"][0]["reason"]


# -- file names, special files and CRLF front matter ------------------------------------------------
#
# The import reply held raw non-UTF-8 bytes of a file name (not valid UTF-8 JSON), a newline in a name
# broke the terminal listing, FIFOs and sockets were left out without being listed, and TOML front
# matter with CRLF line endings was refused while YAML with CRLF was accepted.

import os  # noqa: E402
import socket  # noqa: E402


def test_a_file_name_that_is_not_utf8_is_escaped_in_the_reply(cli, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / os.fsdecode(b"caf\xe9.md")).write_text("# Cafe\n\nA fact.\n")
    res = cli("import", str(notes))
    assert res.code == 0, res.stderr
    res.stdout.encode("utf-8")  # valid UTF-8: no lone surrogate from the name's raw bytes
    [created] = res.json["created"]
    assert created["path"].endswith("caf\\xe9.md")


def test_a_newline_in_a_file_name_is_escaped_in_the_reply(store_path, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "two\nlines.md").write_text("# Two\n\nA fact.\n")
    reply = api.import_records(api.open_store(str(store_path)), [str(notes)], attribution=api.attribution("cli"))
    [created] = reply["created"]
    assert "\n" not in created["path"] and created["path"].endswith("two\\nlines.md")


def _without_waiting(fifo, call):
    """`call()`, failing (not hanging) when it opens `fifo` and waits for a writer."""
    import threading

    out: dict = {}
    t = threading.Thread(target=lambda: out.setdefault("reply", call()), daemon=True)
    t.start()
    t.join(20)
    if t.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # the reader gets end of file
        t.join(5)
        pytest.fail("the import opened a FIFO and waited for a writer")
    return out["reply"]


def test_fifos_and_sockets_are_listed_as_skipped_not_a_regular_file(store_path, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    os.mkfifo(notes / "pipe.md")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(notes / "sock.md"))
    (notes / "real.md").write_text("# Real\n\nA fact.\n")
    try:
        store = api.open_store(str(store_path))
        reply = api.import_records(store, [str(notes)], attribution=api.attribution("cli"))
        direct = _without_waiting(notes / "pipe.md",
                                  lambda: api.import_records(store, [str(notes / "pipe.md")],
                                                             attribution=api.attribution("cli")))
    finally:
        sock.close()
    assert [c["key"] for c in reply["created"]] == ["real"]
    skipped = {s["path"].rsplit("/", 1)[-1]: s["reason"] for s in reply["skipped"]}
    assert set(skipped) == {"pipe.md", "sock.md"}
    assert all(r.startswith("not a regular file") for r in skipped.values())
    assert [s["reason"].startswith("not a regular file") for s in direct["skipped"]] == [True]


@pytest.mark.parametrize("fence,head", [("+++", 'title = "Crlf"\r\ntags = ["a"]'), ("---", "title: Crlf\r\ntags: [a]")])
def test_front_matter_with_crlf_line_endings_is_accepted_toml_and_yaml(store_path, tmp_path, fence, head):
    f = tmp_path / "crlf.md"
    f.write_bytes(f"{fence}\r\n{head}\r\n{fence}\r\nA fact.\r\n".encode())
    reply = api.import_records(api.open_store(str(store_path)), [str(f)], attribution=api.attribution("cli"))
    assert reply["skipped"] == [], reply["skipped"]
    record = api.read(store_path, "crlf").record
    assert record.title == "Crlf" and record.tags == ["a"]
