"""Issue 37, item 5, the import door:

- `kyb import` turned an empty file into a knowledge record with an empty body (`kyb add` refuses
  one): now the file is skipped and listed under `skipped` with the reason; nothing is written.
- Export -> import re-stamped a verification with the importer and the import time: the export now
  writes who verified a record and when into its `verified` table (`by`, `at`), the import keeps
  them, and reads answer with them."""

from __future__ import annotations

import json

import pytest

from kyb_cli import api
from kyb_cli.core.tools.export import export_rows
from tests.support.three_doors import head
from tests.support.doors import StoreDoor


def test_an_empty_file_is_skipped_on_import_with_the_reason(cli, store_path, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "empty.md").write_text("")
    (notes / "blank.md").write_text("  \n\n")
    (notes / "heading-only.md").write_text("---\ntitle: T\n---\n")
    (notes / "real.md").write_text("# Real\n\nA fact.\n")
    res = cli("import", str(notes))
    assert res.code == 0, res.stderr
    reply = res.json
    assert [c["key"] for c in reply["created"]] == ["real"]
    skipped = {s["path"].rsplit("/", 1)[-1]: s["reason"] for s in reply["skipped"]}
    assert set(skipped) == {"empty.md", "blank.md", "heading-only.md"}
    assert all("body is empty" in reason for reason in skipped.values()), skipped
    assert cli("get", "empty").code == 1


def test_an_empty_body_row_is_skipped_by_add_many_as_add_refuses_it(store_path):
    store = api.open_store(str(store_path))
    before = head(store_path)
    reply = api.handle("add-many", _Door(store), {"records": [{"key": "e", "title": "E", "body": " "}],
                                                  "one_commit": False, "dry_run": False})
    assert reply["created"] == [] and "body is empty" in reply["skipped"][0]["reason"]
    assert head(store_path) == before


def _Door(store):
    return StoreDoor(store, "mcp")


@pytest.mark.parametrize("fmt", ["jsonl", "json"])  # CSV has no verified column (csv_cannot_carry says so)
def test_export_then_import_keeps_who_verified_and_when(tmp_path, monkeypatch, fmt):
    src = api.init_store(tmp_path / "a")
    monkeypatch.setenv("KYB_AGENT", "ann")
    ann = api.attribution("cli")
    api.add_knowledge(src, key="port", title="Port", body="9090", tags=[], refs=[], attribution=ann)
    api.verify(src, "port", source="README.md", note="checked", attribution=ann)
    _, rows = export_rows(tmp_path / "a")
    stamped = rows[0]["verified"]
    assert stamped["by"] == "ann" and stamped["at"]
    exported = tmp_path / f"e.{fmt}"
    exported.write_text(api.export_text(rows, fmt), encoding="utf-8")

    monkeypatch.setenv("KYB_AGENT", "bob")
    dst = api.init_store(tmp_path / "b")
    reply = api.import_records(dst, [str(exported)], attribution=api.attribution("cli"), format=fmt)
    assert reply["skipped"] == [] and [c["key"] for c in reply["created"]] == ["port"]
    _, again = export_rows(tmp_path / "b")
    assert again[0]["verified"]["by"] == "ann" and again[0]["verified"]["at"] == stamped["at"]
    got = json.loads(json.dumps(api.read(tmp_path / "b", "port").to_json()))
    assert got["verified"]["by"] == "ann" and got["verified"]["at"] == stamped["at"], got["verified"]
    assert got["verified"]["current"] is True


def test_a_stamped_verification_time_that_is_not_a_time_is_refused(tmp_path):
    from kyb_cli.core.errors import Rejected
    from kyb_cli.core.records.model import Record
    from kyb_cli.core.records.validate import validate

    record = Record(key="k", title="T", body="b", verified={"source": "s", "by": "ann", "at": "yesterday"})
    with pytest.raises(Rejected, match="verified at"):
        validate(record)
