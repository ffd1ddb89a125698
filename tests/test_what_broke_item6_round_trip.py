"""Issue 37, item 6: export -> import restored nothing and exited 0 when one record held U+2028,
U+2029 or U+0085 (JSONL split with str.splitlines()), or a lone CR or a field over 128 KiB (CSV);
one bad row skipped the whole file. Every row round-trips now, and a bad row is skipped alone,
named by its line."""

from __future__ import annotations

import json

import pytest

BODIES = {
    "line-sep": "before\u2028after",
    "para-sep": "before\u2029after",
    "next-line": "before\u0085after",
    "lone-cr": "before\rafter",
    "big": "word " * 30_000,  # 150 KB: over the csv module's default 128 KiB field limit
    "plain": "an ordinary body",
}


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "json"])
def test_export_then_import_round_trips_separators_a_lone_cr_and_a_big_field(kyb, store_path, tmp_path, fmt):
    for key, body in BODIES.items():
        res = kyb("add", "--key", f"rt-{key}", "--title", f"T {key}", "--body", body)
        assert res.code == 0, res.stderr
    exported = kyb("export", "--format", fmt)
    assert exported.code == 0, exported.stderr
    dump = tmp_path / f"dump.{fmt}"
    dump.write_bytes(exported.stdout.encode("utf-8"))
    other = tmp_path / "other"
    assert kyb("init", str(other)).code == 0
    imported = kyb("import", str(dump), env={"KYB_STORE": str(other)})
    assert imported.code == 0, imported.stderr
    reply = imported.json
    assert not reply.get("skipped"), reply.get("skipped")
    for key, body in BODIES.items():
        got = kyb("get", f"rt-{key}", env={"KYB_STORE": str(other)})
        assert got.code == 0, (key, got.stderr)
        assert got.json["body"] == body.strip() or got.json["body"] == body, key


def test_one_bad_jsonl_row_is_skipped_alone_with_its_line(kyb, tmp_path):
    text = (json.dumps({"key": "good-one", "title": "Good", "body": "fine"}) + "\n{not json\n"
            + json.dumps({"key": "good-two", "title": "Two", "body": "b"}) + "\n")
    dump = tmp_path / "rows.jsonl"
    dump.write_text(text)
    res = kyb("import", str(dump))
    assert res.code == 0, res.stderr
    reply = res.json
    assert sorted(c["key"] for c in reply["created"]) == ["good-one", "good-two"]
    assert [s["path"].rsplit(":", 1)[-1] for s in reply["skipped"]] == ["2"]
    assert reply["skipped"][0]["reason"].startswith("not JSONL: ")
