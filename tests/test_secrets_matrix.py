"""The secrets matrix: tests/data/secrets_corpus.jsonl (synthetic secrets and look-alikes) against the
detector, with the numbers README publishes ("What kyb promises" → secrets). A change to the rules
that moves any number fails here until README and PUBLISHED are updated together."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kyb_cli.core.errors import Rejected
from kyb_cli.core.records.model import Record
from kyb_cli.core.records import secrets
from kyb_cli.core.records.validate import validate

CORPUS = Path(__file__).resolve().parent / "data" / "secrets_corpus.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
SECRETS = [r for r in ROWS if r["expect"] == "secret"]
CLEAN = [r for r in ROWS if r["expect"] == "clean"]

# What README publishes: secrets caught / missed, look-alikes refused by mistake (false positives).
PUBLISHED = {"secrets": 54, "caught": 51, "missed": 3, "lookalikes": 48, "false_positives": 0}


def _caught(row) -> bool:
    return secrets.first_secret(row["text"], row["field"]) is not None


def test_corpus_is_big_enough_and_synthetic():
    assert len(SECRETS) >= 40 and len(CLEAN) >= 40
    assert CORPUS.read_text(encoding="utf-8") == "".join(
        json.dumps(r, ensure_ascii=False) + "\n" for r in _regenerated())


def _regenerated():
    from tests.support.secret_corpus import rows

    return rows()


def test_matrix_matches_the_published_numbers():
    caught = sum(_caught(r) for r in SECRETS)
    false_positives = sum(_caught(r) for r in CLEAN)
    assert {"secrets": len(SECRETS), "caught": caught, "missed": len(SECRETS) - caught,
            "lookalikes": len(CLEAN), "false_positives": false_positives} == PUBLISHED


@pytest.mark.parametrize("row", SECRETS, ids=[r["what"] for r in SECRETS])
def test_each_secret_is_caught_unless_published_as_missed(row):
    assert _caught(row) is not row["what"].startswith("MISSED:")


@pytest.mark.parametrize("row", CLEAN, ids=[r["what"] for r in CLEAN])
def test_each_lookalike_passes(row):
    assert not _caught(row)


def _record_with(field: str, text: str) -> Record | None:
    """A valid record that stores `text` under `field` (None for fields that are not record fields)."""
    if field in ("title", "body"):
        return Record(key="k", title="t", **{field: text}) if field == "body" else Record(key="k", title=text)
    if field in ("tags", "refs"):
        return Record(key="k", title="t", **{field: [text]})
    if field in ("service", "detection", "resolution", "hosts"):
        base = dict(key="inc-x", title="t", service="s", severity="low", status="resolved", resolution="r")
        base[field] = [text] if field == "hosts" else text
        return Record(**base)
    if field in ("assignee", "blocked_reason"):
        return Record(key="task-x", title="t", status="blocked", **{field: text})
    if field == "waits_on":
        return Record(key="task-x", title="t", status="open", expected="2026-12-01", waits_on=text)
    return None


@pytest.mark.parametrize("row", [r for r in SECRETS if not r["what"].startswith("MISSED:")
                                 and _record_with(r["field"], r["text"]) is not None],
                         ids=lambda r: r["what"])
def test_a_write_storing_the_secret_in_its_field_is_refused_naming_rule_and_field(row):
    with pytest.raises(Rejected) as err:
        validate(_record_with(row["field"], row["text"]))
    message = err.value.message
    assert message.startswith(f"{row['field']} look") and "(rule " in message
    found = secrets.first_secret(row["text"], row["field"])
    secret_text = row["text"][found.start:]
    windows = {secret_text[i:i + 6] for i in range(0, min(len(secret_text), 60) - 5)}
    assert not [w for w in windows if any(c.isdigit() for c in w) and w in message]


def test_scanning_a_record_costs_well_under_a_millisecond_per_kilobyte():
    body = ("Checkout writes go through svc-checkout on node-3, port 8080; the api key is rotated by "
            "the vault job, token lifetimes are 1h, password policy: 12 chars.\n") * 30  # ~4.5 KB
    record = Record(key="k", title="Checkout write path", body=body, tags=["infra"], refs=["runbooks/x.md"])
    validate(record)  # compile what the text needs
    best = float("inf")
    for _ in range(20):  # the best of 20: a loaded machine slows some runs, not the code
        start = time.perf_counter()
        validate(record)
        best = min(best, time.perf_counter() - start)
    assert best < 0.005, f"{best * 1000:.2f} ms per validate"
