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
    reply = api.import_records(dst, [str(exported)], attribution=api.attribution("cli"), fmt=fmt)
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
    reply = api.import_records(dst, [str(f)], attribution=api.attribution("cli"), fmt="jsonl")
    assert sorted(c["key"] for c in reply["created"]) == ["good-one", "good-two"]
    assert [s["path"] for s in reply["skipped"]] == [f"{f}:2"]
    assert reply["skipped"][0]["reason"].startswith("not JSONL")


def test_a_bad_csv_row_is_skipped_with_its_line_number_and_the_good_rows_import(tmp_path):
    dst = api.init_store(tmp_path / "b")
    f = tmp_path / "rows.csv"
    f.write_text('key,title,body\ngood-one,Good,"a\nfact"\nbad,B,x,y,z,w\ngood-two,Two,fact\n', encoding="utf-8")
    reply = api.import_records(dst, [str(f)], attribution=api.attribution("cli"), fmt="csv")
    assert sorted(c["key"] for c in reply["created"]) == ["good-one", "good-two"]
    assert [s["path"] for s in reply["skipped"]] == [f"{f}:4"]
    assert "fields" in reply["skipped"][0]["reason"]
