"""`kyb get KEY --version N` counts a key's content versions; `kyb history` numbers them the same way."""

from __future__ import annotations


def _three_versions(kyb):
    for n in (1, 2, 3):
        assert kyb("add", "--key", "port", "--title", "Port", "--body", f"port {n}").code == 0


def test_version_n_counts_from_the_first_content_version(kyb):
    _three_versions(kyb)
    assert [kyb("get", "port", "--version", str(n)).json["body"] for n in (1, 2, 3)] == ["port 1", "port 2", "port 3"]
    assert kyb("get", "port", "--version", "3").json["is_head"] is True
    assert kyb("get", "port", "--version", "1").json["is_head"] is False


def test_negative_version_counts_back_from_the_current_one(kyb):
    _three_versions(kyb)
    assert kyb("get", "port", "--version", "-1").json["body"] == "port 2"
    assert kyb("get", "port", "--version", "-2").json["body"] == "port 1"


def test_version_past_either_end_is_not_found_with_the_range(kyb):
    _three_versions(kyb)
    for n in ("4", "-3"):
        res = kyb("get", "port", "--version", n)
        assert res.code == 1 and res.stdout == ""
        assert "--version 1..3" in res.stderr and "-1..-2" in res.stderr
    res = kyb("get", "port", "--version", "0")
    assert res.code == 2 and res.stdout == ""


def test_version_and_at_together_are_a_usage_error(kyb):
    _three_versions(kyb)
    res = kyb("get", "port", "--version", "1", "--at", "HEAD")
    assert res.code == 2 and res.stdout == ""


def test_history_numbers_content_versions_and_not_removals(kyb):
    _three_versions(kyb)
    assert kyb("rm", "port", "--reason", "wrong port").code == 0
    rows = kyb("history", "port").json["versions"]
    assert [(r["change"], r["version"]) for r in rows] == [("deleted", None), ("modified", 3), ("modified", 2),
                                                           ("added", 1)]
    # a retracted key's versions stay readable by number
    assert kyb("get", "port", "--version", "-1").json["body"] == "port 2"
