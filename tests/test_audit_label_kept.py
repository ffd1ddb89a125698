"""An audit line's agent label is scanned once per label (core/canon/attribution.audit_label keeps
the verdict: the scanner is a pure function of the text), the same verdict every time, bounded; the audit
file of `kyb serve` is still made with its directory when missing."""

from __future__ import annotations

from kyb_cli.core.canon import attribution

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a GitHub token's shape


def test_a_label_is_judged_the_same_every_time_and_the_memo_stays_bounded(monkeypatch):
    monkeypatch.setattr(attribution, "_LABELS", {})
    monkeypatch.setattr(attribution, "LABELS_MAX", 4)
    for _ in range(3):
        assert attribution.audit_label(SECRET) == attribution.WITHHELD
        assert attribution.audit_label("bot " + SECRET) == attribution.WITHHELD
        assert attribution.audit_label("claude-code") == "claude-code"
        assert attribution.audit_label("") == ""
    for n in range(10):
        assert attribution.audit_label(f"agent-{n}") == f"agent-{n}"
        assert len(attribution._LABELS) <= 4
    assert attribution.audit_label(SECRET) == attribution.WITHHELD


def test_the_audit_file_and_its_directory_are_made_when_missing(tmp_path):
    """The audit line is opened first and its directory made only when missing (not a mkdir per request)."""
    import json
    import time

    from kyb_cli.serve.guard import Guard

    path = tmp_path / "gone" / "kyb" / "audit.jsonl"
    guard = Guard(None, bind_host="127.0.0.1", port_of=lambda: 1, token=None, readonly=False, audit_path=path)
    guard.audit("GET", "/search", 200, time.perf_counter(), "claude-code")
    guard.audit("GET", "/tags", 200, time.perf_counter(), SECRET)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["path"], r["agent"]) for r in rows] == [("/search", "claude-code"), ("/tags", attribution.WITHHELD)]
