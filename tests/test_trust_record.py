"""Knowing whether to trust a record: verification, review dates, staleness, retired wording,
duplicates at create, rules for agents (README "Knowing whether to trust a record")."""

from __future__ import annotations

import json
import subprocess
from datetime import date, timedelta

import pytest
from kyb_cli.core.records.keys import path_of_key


def add(cli, key, body, *, title=None, tags="", extra=()):
    res = cli("add", "--key", key, "--title", title or key.replace("-", " ").capitalize(), "--tags", tags,
              "--body", body, *extra)
    assert res.code == 0, res.stderr
    return res.json


def _git(store_path, *args):
    return subprocess.run(["git", "-C", str(store_path), *args], capture_output=True, text=True, check=True).stdout


# -- verification ------------------------------------------------------------------------------------


def test_verification_by_an_agent_shows_by_and_is_one_verify_commit(cli, store_path, monkeypatch):
    add(cli, "checkout-write-path", "Checkout writes go to node-3, port 8080.")
    monkeypatch.setenv("KYB_AGENT", "claude-code")
    res = cli("verify", "checkout-write-path", "--source", "src/checkout/config.py", "--rev", "abc123",
              "--note", "read the listener config")
    assert res.code == 0, res.stderr
    reply = res.json
    assert (reply["action"], reply["changed"], reply["key"]) == ("verified", True, "checkout-write-path")
    assert _git(store_path, "log", "-1", "--format=%s").strip() == "kyb: verify checkout-write-path"
    assert _git(store_path, "rev-parse", "HEAD").strip() == reply["sha"]
    got = cli("get", "checkout-write-path").json
    when = _git(store_path, "log", "-1", "--format=%cI").strip()
    assert got["verified"] == {"by": "claude-code", "at": got["verified"]["at"], "source": "src/checkout/config.py",
                               "rev": "abc123", "note": "read the listener config", "sha": reply["sha"],
                               "current": True}
    assert got["verified"]["at"][:19] == when[:19]
    text = (store_path / path_of_key("checkout-write-path")).read_text()
    assert "[verified]" in text and "claude-code" not in text  # who and when are never stored in the file


def test_verified_is_null_when_never_verified_and_on_query_hits(cli):
    """Null on `get` and on full hits; a compact hit leaves an unset `verified` out (not in COMPACT_KEEPS)."""
    add(cli, "pool-size", "The pool size is 20.")
    assert cli("get", "pool-size").json["verified"] is None
    add(cli, "pool-max", "The max pool size is 40.")
    cli("verify", "pool-max", "--source", "app.toml")
    full = {h["key"]: h for h in cli("query", "pool", "--no-semantic", "--full").json["hits"]}
    assert full["pool-size"]["verified"] is None
    hits = {h["key"]: h for h in cli("query", "pool", "--no-semantic").json["hits"]}
    assert "verified" not in hits["pool-size"] and hits["pool-size"]["stale"] is False
    assert hits["pool-max"]["verified"]["source"] == "app.toml" and hits["pool-max"]["verified"]["current"] is True


def test_current_flips_on_a_body_change_and_not_on_a_tag_change(cli):
    add(cli, "cache-ttl", "Cache TTL is 300 seconds.")
    verified = cli("verify", "cache-ttl", "--source", "settings.py").json
    add(cli, "cache-ttl", "Cache TTL is 300 seconds.", tags="cache")
    got = cli("get", "cache-ttl").json
    assert got["verified"]["current"] is True and got["verified"]["sha"] == verified["sha"]
    add(cli, "cache-ttl", "Cache TTL is 600 seconds.", tags="cache")
    after = cli("get", "cache-ttl").json
    assert after["verified"]["current"] is False and after["verified"]["sha"] == verified["sha"]
    assert cli("query", "cache", "--no-semantic").json["hits"][0]["verified"]["current"] is False
    again = cli("verify", "cache-ttl", "--source", "settings.py")  # same source, new text: a new verification
    assert again.json["changed"] is True
    assert cli("get", "cache-ttl").json["verified"] == {**after["verified"], "sha": again.json["sha"],
                                                       "at": cli("get", "cache-ttl").json["verified"]["at"],
                                                       "current": True, "by": after["verified"]["by"]}


def test_current_flips_on_a_title_change(cli):
    add(cli, "dns-host", "ns1.example.net", title="DNS host")
    cli("verify", "dns-host", "--source", "zone file")
    add(cli, "dns-host", "ns1.example.net", title="Primary DNS host")
    assert cli("get", "dns-host").json["verified"]["current"] is False


def test_an_older_version_reads_with_its_own_verification(cli):
    add(cli, "queue-depth", "Alert at 1000 messages.")
    first = cli("verify", "queue-depth", "--source", "alerts.yaml").json
    add(cli, "queue-depth", "Alert at 5000 messages.")
    old = cli("get", "queue-depth", "--at", first["sha"]).json
    assert old["verified"]["current"] is True and old["verified"]["sha"] == first["sha"]


def test_verify_rules_source_required_knowledge_only_and_no_such_key(cli):
    res = cli("verify", "nothing-here", "--source", "x")
    assert res.code == 1 and res.stdout == ""
    add(cli, "k1", "text")
    res = cli("verify", "k1", "--source", "  ")
    assert res.code == 2 and res.stdout == ""
    # a synthetic, random-shaped token (a run of one letter is below the secret rules' entropy floor)
    res = cli("verify", "k1", "--source", "vault", "--note", "token ghp_" + "Zq7Lk2Vx9Rt4Nw8Pb3Hs6Jd1Fy5Gc0UmAe4T")
    assert res.code == 3 and res.stdout == ""
    assert cli("get", "k1").json["verified"] is None


def test_verified_table_round_trips_through_the_record_model():
    from kyb_cli.core.records.model import Record, content_digest, parse

    record = Record(key="a", title="T", body="b", review_by="2027-03-01", tags=["x"],
                    verified={"source": "s", "rev": "r", "note": "n", "content": content_digest("T", "b")},
                    extra={"owner": "team"})
    text = record.to_markdown()
    assert parse(text) == record and parse(text).to_markdown() == text
    assert text.index("review_by") < text.index("[verified]")
    assert Record(key="a", title="T").to_markdown() == '+++\nkey = "a"\ntitle = "T"\n+++\n'
    assert parse('+++\nkey = "a"\ntitle = "T"\nreview_by = 2027-03-01\n+++\n').review_by == "2027-03-01"


def test_a_hand_written_verified_table_without_a_digest_reads_from_its_commit(cli, store_path):
    path = store_path / path_of_key("hand")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('+++\nkey = "hand"\ntitle = "Hand"\n\n[verified]\nsource = "runbook"\n+++\n\nBody.\n')
    _git(store_path, "add", path_of_key("hand"))
    _git(store_path, "-c", "user.name=Ann", "-c", "user.email=ann@example.org", "commit", "-qm", "hand")
    got = cli("get", "hand").json
    assert got["verified"]["by"] == "Ann <ann@example.org>" and got["verified"]["current"] is True


# -- review dates and staleness ----------------------------------------------------------------------


def test_review_by_is_kept_when_omitted_and_cleared_by_an_empty_value(cli):
    add(cli, "tls-expiry", "Cert renews in March.", extra=("--review-by", "2027-03-01"))
    assert cli("get", "tls-expiry").json["review_by"] == "2027-03-01"
    add(cli, "tls-expiry", "Cert renews in March 2027.")
    assert cli("get", "tls-expiry").json["review_by"] == "2027-03-01"
    add(cli, "tls-expiry", "Cert renews in March 2027.", extra=("--review-by", ""))
    assert cli("get", "tls-expiry").json["review_by"] == ""
    bad = cli("add", "--key", "tls-expiry", "--title", "x", "--body", "y", "--review-by", "March")
    assert bad.code == 2 and bad.stdout == ""  # a date that is not a date: usage, every field (issue 37, item 5)


def test_stale_when_review_by_passed(cli):
    add(cli, "tls-expiry", "Cert renews in March.", extra=("--review-by", "2027-03-01"))
    cli("verify", "tls-expiry", "--source", "certbot")
    assert cli("stale", "--today", "2027-03-01").json["count"] == 0
    later = cli("stale", "--today", "2027-03-02").json
    assert [(s["key"], s["review_by"]) for s in later["stale"]] == [("tls-expiry", "2027-03-01")]
    assert "review_by" in later["stale"][0]["reason"]


def test_stale_when_never_verified_counts_from_the_last_change(cli):
    add(cli, "old-fact", "Something.")
    today = date.today()
    assert cli("stale", "--today", (today + timedelta(days=89)).isoformat()).json["count"] == 0
    out = cli("stale", "--today", (today + timedelta(days=92)).isoformat()).json
    row = out["stale"][0]
    assert set(row) == {"key", "title", "reason", "last_verified_at", "last_changed_at", "review_by"}
    assert (row["key"], row["last_verified_at"], row["review_by"]) == ("old-fact", None, None)
    assert "never verified" in row["reason"]
    assert cli("stale", "--days", "200", "--today", (today + timedelta(days=92)).isoformat()).json["count"] == 0


def test_stale_when_the_verification_is_old_or_not_current(cli):
    add(cli, "a-fact", "Alpha.")
    add(cli, "b-fact", "Beta.")
    cli("verify", "a-fact", "--source", "docs")
    cli("verify", "b-fact", "--source", "docs")
    add(cli, "b-fact", "Beta changed.")
    soon = cli("stale").json
    assert [s["key"] for s in soon["stale"]] == ["b-fact"] and "changed since" in soon["stale"][0]["reason"]
    far = cli("stale", "--today", (date.today() + timedelta(days=100)).isoformat()).json
    assert {s["key"] for s in far["stale"]} == {"a-fact", "b-fact"}
    assert all(s["last_verified_at"] for s in far["stale"])
    hits = {h["key"]: h["stale"] for h in cli("query", "fact", "--no-semantic").json["hits"]}
    assert hits == {"a-fact": False, "b-fact": True}


def test_stale_days_from_config(cli, isolated_dirs, monkeypatch, tmp_path):
    config = tmp_path / "kyb-config.toml"
    config.write_text("[stale]\ndays = 10\n")
    monkeypatch.setenv("KYB_CONFIG", str(config))
    add(cli, "short-lived", "Text.")
    assert cli("stale", "--today", (date.today() + timedelta(days=12)).isoformat()).json["count"] == 1


def test_stale_fail_exits_3_with_empty_stdout_and_the_list_on_stderr(cli):
    add(cli, "old-fact", "Something.")
    far = (date.today() + timedelta(days=365)).isoformat()
    res = cli("stale", "--fail", "--today", far)
    assert res.code == 3 and res.stdout == ""
    assert json.loads(res.stderr)["stale"][0]["key"] == "old-fact"
    ok = cli("stale", "--fail")
    assert ok.code == 0 and ok.json["count"] == 0
    assert cli("stale", "--today", "soon").code == 2


def test_context_shows_the_stale_count_and_the_five_oldest(cli):
    for n in range(7):
        add(cli, f"fact-{n}", f"Fact number {n}.")
    far = (date.today() + timedelta(days=400)).isoformat()
    data = cli("context", "--json", "--today", far).json
    assert data["digest"]["stale_total"] == 7
    assert [s["key"] for s in data["digest"]["stale"]] == [f"fact-{n}" for n in range(5)]
    assert "Stale knowledge to check again (7" in data["text"]


# -- retired wording ---------------------------------------------------------------------------------


def test_retired_elsewhere_on_the_port_example(cli):
    add(cli, "checkout-write-path", "Checkout writes go to node-3, port 8080.")
    add(cli, "checkout-runbook", "Restart svc-checkout on node-3, port 8080 when writes stall.")
    res = cli("add", "--key", "checkout-write-path", "--title", "Checkout write path",
              "--body", "Checkout writes go to node-3, port 9090.")
    assert res.code == 0
    assert res.json["retired_elsewhere"] == [{"key": "checkout-runbook", "phrase": "8080"}]
    lines = [line for line in res.stderr.splitlines() if "checkout-runbook" in line]
    assert len(lines) == 1 and '"8080"' in lines[0]


def test_retired_elsewhere_on_a_removed_sentence(cli):
    add(cli, "deploy-steps", "Build the image.\nAlways drain the canary pool before deploying.\nShip it.")
    add(cli, "deploy-notes", "From the old guide: always drain the canary pool before deploying. Then wait.")
    reply = add(cli, "deploy-steps", "Build the image.\nShip it.")
    assert reply["retired_elsewhere"] == [
        {"key": "deploy-notes", "phrase": "Always drain the canary pool before deploying"}]


def test_retired_elsewhere_not_for_common_words(cli):
    add(cli, "team-habits", "We review the code and then we deploy it.")
    add(cli, "other-habits", "They review code, then deploy.")
    reply = add(cli, "team-habits", "We pair on the code.")
    assert reply["retired_elsewhere"] == []


def test_retired_elsewhere_ignores_retracted_records_and_the_record_itself(cli):
    add(cli, "db-host", "Primary is db-7.internal.")
    add(cli, "db-old", "Failover to db-7.internal.")
    assert cli("rm", "db-old", "--reason", "obsolete").code == 0
    assert add(cli, "db-host", "Primary is db-9.internal.")["retired_elsewhere"] == []


# -- duplicates at create ----------------------------------------------------------------------------


def test_similar_for_checkout_write_path_vs_checkout_writes_path(cli):
    first = add(cli, "checkout-write-path", "Checkout writes go to node-3.")
    assert first["similar"] == []
    second = add(cli, "checkout-writes-path", "Unrelated words here entirely.", title="Writes")
    assert [(s["key"], s["title"]) for s in second["similar"]] == [("checkout-write-path", "Checkout write path")]
    assert "edit" in second["similar"][0]["why"] and 0 < second["similar"][0]["score"] <= 1


def test_similar_same_title_and_near_duplicate_text(cli):
    add(cli, "pg-backup", "Nightly pg_dump to s3 bucket backups-prod at 02:00 UTC, kept 30 days.",
        title="Postgres backups")
    same_title = add(cli, "database-backup-policy", "Something else.", title="Postgres backups")
    assert [(s["key"], s["why"]) for s in same_title["similar"]] == [("pg-backup", "same title")]
    near = add(cli, "nightly-dumps", "Nightly pg_dump to s3 bucket backups-prod at 02:00 UTC, kept 30 days!",
               title="Nightly dumps")
    assert [(s["key"], s["why"]) for s in near["similar"]] == [("pg-backup", "near-duplicate text")]
    assert "similar" not in add(cli, "nightly-dumps", "Changed.", title="Nightly dumps")  # updates: no hint


def test_the_near_text_query_matches_every_text_within_the_threshold_and_not_any_shared_word():
    """The candidates of `near-duplicate text` (kinds/wording._near_text_query): every word set whose
    words-in-common reach TEXT_SIMILAR satisfies the FTS query; one sharing only common words does not."""
    import random
    import re

    from kyb_cli.core.kinds.wording import TEXT_SIMILAR, _near_text_query

    def satisfies(query: str, words: set[str]) -> bool:
        groups = [re.findall(r'"([^"]+)"', g) for g in query.split(" OR ")]
        return any(all(w in words for w in g) for g in groups)

    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(40)]
    checked = 0
    for _ in range(3000):
        mine = set(rng.sample(vocab, rng.randrange(3, 25)))
        theirs = set(mine)
        for _ in range(rng.randrange(0, 4)):
            theirs.discard(rng.choice(sorted(theirs)))
        theirs |= set(rng.sample(vocab, rng.randrange(0, 3)))
        if len(mine & theirs) / len(mine | theirs) >= TEXT_SIMILAR:
            checked += 1
            assert satisfies(_near_text_query(mine), theirs), (sorted(mine), sorted(theirs))
    assert checked > 500
    mine = {"port", "on", "node", "9003", "bench", "write", "3"}
    assert not satisfies(_near_text_query(mine), {"port", "on", "node", "8000", "other"})


def _decoys_and_near_duplicates(cli) -> None:
    """25 live records holding every word of "Foxtrot: alpha bravo charlie delta echo" three times (bm25
    ranks them above the near duplicates) that fail the 0.8 test (6 of 10 words shared), then 3 near
    duplicates (6 of 7 words shared)."""
    for i in range(25):
        add(cli, f"decoy-{i}", "alpha bravo charlie delta echo foxtrot " * 3 + "golf hotel", title=f"Decoy {i}")
    for key in ("near-one", "near-two", "near-three"):
        add(cli, key, "alpha bravo charlie delta echo", title="Foxtrot notes")


def test_similar_checks_every_candidate_of_the_near_text_query_not_the_20_best_ranked(cli):
    """Every live text the query matches is checked (up to NEAR_CANDIDATES), so a near duplicate is
    named however many texts share its words and however bm25 would rank them."""
    _decoys_and_near_duplicates(cli)
    reply = add(cli, "fresh-key", "alpha bravo charlie delta echo", title="Foxtrot")
    assert [(s["key"], s["why"], s["score"]) for s in reply["similar"]] == [
        (k, "near-duplicate text", 0.857) for k in ("near-one", "near-three", "near-two")]


def test_above_near_candidates_the_best_by_bm25_are_checked(cli, monkeypatch):
    from kyb_cli.core.kinds import wording

    add(cli, "pg-backup", "Nightly pg_dump to s3 bucket backups-prod at 02:00 UTC, kept 30 days.",
        title="Postgres backups")
    add(cli, "pg-other", "Nightly pg_dump to s3 bucket backups-prod at 03:00 UTC, kept 30 days.",
        title="Postgres dumps")
    monkeypatch.setattr(wording, "NEAR_CANDIDATES", 1)  # two candidates: ranked, and both among the best
    reply = add(cli, "nightly-dumps", "Nightly pg_dump to s3 bucket backups-prod at 02:00 UTC, kept 30 days!",
                title="Nightly dumps")
    assert [(s["key"], s["why"], s["score"]) for s in reply["similar"]] == [
        ("pg-backup", "near-duplicate text", 0.882), ("pg-other", "near-duplicate text", 0.833)]


def test_the_live_match_query_builds_no_automatic_index_over_every_key(tmp_path):
    """keys.version_id has no index: joined on it, SQLite built one over every key for each query
    (0.12-0.14 s a write at 100k keys). The query goes fts -> versions -> keys by primary keys."""
    from kyb_cli.core.index import schema
    from kyb_cli.core.kinds.wording import _CURRENT_MATCHES

    conn = schema.connect(tmp_path / "i.sqlite", create=True)
    schema.create(conn)
    plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN SELECT k.key, v.doc FROM {_CURRENT_MATCHES}",
                                           ('"a"', "k"))]
    assert plan[0].startswith("SCAN fts") and not any("AUTOMATIC" in step or "SCAN" in step for step in plan[1:])


def test_similar_includes_keys_that_left_the_tree(cli):
    add(cli, "redis-port", "6379")
    cli("rm", "redis-port", "--reason", "wrong")
    reply = add(cli, "redis-ports", "6380")
    assert reply["similar"][0]["key"] == "redis-port" and "retracted" in reply["similar"][0]["why"]


def test_revived_after_kyb_rm(cli):
    add(cli, "feature-flag", "Flag X is on.")
    gone = cli("rm", "feature-flag", "--reason", "flag X was removed in v2")
    res = cli("add", "--key", "feature-flag", "--title", "Feature flag", "--body", "Flag Y is on.")
    reply = res.json
    assert reply["revived"] is True and reply["action"] == "created"
    assert reply["retracted_reason"] == "flag X was removed in v2"
    assert reply["retracted_sha"] == gone.json["sha"] and reply["retracted_at"]
    assert "feature-flag" in res.stderr
    assert "revived" not in add(cli, "fresh-key", "New.")


# -- rules for agents --------------------------------------------------------------------------------


def test_rules_lists_records_tagged_rule(cli):
    add(cli, "rule-verify-first", "Verify a fact against code before relying on it.", tags="rule")
    add(cli, "plain-note", "Not a rule.", tags="notes")
    out = cli("rules").json
    assert out["count"] == 1 and out["rules"][0]["key"] == "rule-verify-first"
    assert out["rules"][0]["body"] == "Verify a fact against code before relying on it."


def test_rules_in_kyb_context_first_whole_and_labelled(cli):
    body = "Never push to main directly.\nOpen a pull request and wait for review."
    add(cli, "rule-no-push", body, tags="rule")
    add(cli, "some-fact", "A fact.")
    text = cli("context", "--json").json["text"]
    assert text.startswith("Standing rules of this store")
    assert body in text and text.index(body) < text.index("<kyb-records>")
    assert "## Rule rule-no-push" in text


def test_rules_too_long_for_the_budget_are_named_not_cut(cli):
    from kyb_cli.core.tools.context import approx_tokens

    add(cli, "rule-a", "Short rule.", tags="rule")
    add(cli, "rule-b", "word " * 3000, tags="rule")
    text = cli("context", "--json").json["text"]
    assert "Short rule." in text and "word word" not in text
    assert "rule-b" in text and "kyb rules" in text
    assert approx_tokens(text) <= 1900 + 50


@pytest.mark.parametrize("command", [("verify", "k", "--help"), ("stale", "--help"), ("rules", "--help")])
def test_new_commands_have_help(cli, command):
    assert cli(*command).code == 0


def test_similar_names_every_reason_once_per_key(cli):
    add(cli, "checkout-write-path", "Checkout writes go to node-3.", title="Checkout write path")
    reply = add(cli, "checkout-writes-path", "Other words.", title="Checkout write path")
    assert [(s["key"], s["why"], s["score"]) for s in reply["similar"]] == [
        ("checkout-write-path", "key within 1 edit; same title", 1.0)]


def _readme_block() -> str:
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "records.md").read_text(encoding="utf-8")
    section = text.split("## Knowing whether to trust a record\n", 1)[1]
    return section.split("```sh\n", 1)[1].split("```\n", 1)[0]


def test_readme_trust_section_runs_as_written(cli):
    """The README's record template (Decision / Reason / Verification / Revisit if / Related) and
    its commands, run one by one as a shell would (continuations joined, the heredoc as stdin)."""
    import shlex

    lines = _readme_block().replace("\\\n", " ").splitlines()
    replies = []
    while lines:
        line = lines.pop(0)
        stdin = None
        if "<<'TEXT'" in line:
            line = line.replace("<<'TEXT'", "")
            end = lines.index("TEXT")
            stdin, lines = "\n".join(lines[:end]) + "\n", lines[end + 1:]
        args = shlex.split(line)
        assert args[0] == "kyb"
        res = cli(*args[1:], input=stdin)
        assert res.code == 0, (line, res.stderr)
        replies.append(res.json)
    body = replies[0]
    assert body["action"] == "created"
    got = replies[2]
    for label in ("Decision:", "Reason:", "Verification:", "Revisit if:", "Related:"):
        assert label in got["body"]
    assert got["verified"]["source"] == "services/checkout/listener.toml" and got["verified"]["current"]
    assert got["review_by"] == "2027-06-01"
    assert [s["key"] for s in replies[3]["stale"]] == ["checkout-write-path"]  # review_by has passed
    assert replies[5]["rules"][0]["key"] == "rule-verify-before-relying"


def test_brief_context_points_to_the_rules(cli):
    add(cli, "rule-one", "Query before you add.", tags="rule")
    assert "1 standing rule for agents: `kyb rules`." in cli("context", "--brief", "--json").json["text"]


def test_a_bad_stale_days_is_a_usage_error_for_stale_and_never_breaks_reads(cli, monkeypatch, tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text('[stale]\ndays = "ninety"\n')
    monkeypatch.setenv("KYB_CONFIG", str(config))
    add(cli, "a-fact", "Alpha.")
    res = cli("stale")
    assert res.code == 2 and res.stdout == "" and "stale.days" in res.stderr
    assert cli("get", "a-fact").json["stale"] is False
    assert cli("query", "alpha", "--no-semantic").json["hits"][0]["stale"] is False


def _import_docs(cli, tmp_path, docs):
    """Import `docs` (dicts) as one JSONL file, as a user's `kyb import docs.jsonl`."""
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    assert cli("import", str(path)).code == 0


def _rewrite(cli, key, title, body):
    """`kyb add` over an existing key (the update whose retired phrases are looked for elsewhere)."""
    res = cli("add", "--key", key, "--title", title, "--body", body)
    assert res.code == 0, res.stderr
    return res


def test_a_port_change_after_importing_docs_names_no_document_that_uses_the_port_for_something_else(cli, tmp_path):
    """Issue 25 item 9: with a docs folder imported, every port change named unrelated runbooks that
    mention 8080 (three stderr lines), so users learned to ignore the hint. A bare number is the same
    instruction only where it is said about the same subject."""
    _import_docs(cli, tmp_path, [
        {"key": "cadvisor-metrics", "title": "cAdvisor", "body": "cAdvisor exposes container metrics on :8080."},
        {"key": "grafana-proxy", "title": "Grafana behind a proxy", "body": "Point the proxy at localhost:8080."},
        {"key": "jenkins-agents", "title": "Jenkins agents", "body": "Agents connect to port 8080 of the controller."},
    ])
    add(cli, "checkout-port", "The checkout API listens on port 8080.")
    add(cli, "checkout-restart", "Restart the checkout API, then wait until it answers on 8080.")
    res = _rewrite(cli, "checkout-port", "Checkout port", "The checkout API listens on port 9090.")
    assert res.json["retired_elsewhere"] == [{"key": "checkout-restart", "phrase": "8080"}]
    assert [line for line in res.stderr.splitlines() if "still says" in line] == [
        'kyb: checkout-restart still says "8080", which this update removed from checkout-port']


def test_a_port_change_names_no_document_whose_only_shared_word_is_part_of_a_host_name(cli, tmp_path):
    """Issue 25 item 9, met again in the new-user trial: README's own example (svc-checkout on node-3,
    port 9090 → 8080) named Prometheus' Node Exporter guide, which opens localhost:9090 — the "node" of
    `node-3` is a host name, not a subject the two share. A runbook naming node-3 is still found."""
    _import_docs(cli, tmp_path, [{"key": "prom-node-exporter", "title": "Monitoring Linux host metrics with the Node Exporter",
                                  "body": "Navigate to `localhost:9090/graph` in your browser to enter expressions."}])
    add(cli, "checkout-write-path", "Checkout writes go through svc-checkout on node-3, port 9090.")
    add(cli, "payments-runbook", "If payments stall, restart the proxy on node-3, port 9090.")
    res = _rewrite(cli, "checkout-write-path", "Checkout write path",
                   "Checkout writes go through svc-checkout on node-3, port 8080.")
    assert res.json["retired_elsewhere"] == [{"key": "payments-runbook", "phrase": "9090"}]
