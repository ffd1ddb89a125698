"""Validation exactly as the original (rules "key slugs", "titles", "key prefixes", "secret patterns", "refs") plus the body size limit."""

from __future__ import annotations

import pytest

from kyb_cli.core.errors import Rejected
from kyb_cli.core.records.model import Record
from kyb_cli.core.records.validate import (
    BODY_MAX_BYTES,
    KEY_MESSAGE,
    check_key_for_kind,
    find_secret,
    is_valid_key,
    validate,
)

VALID_KEYS = ["a", "9key", "a--b", "0", "checkout-write-path", "a1-b2-c3", "x" * 100, "inc", "task", "incx"]
INVALID_KEYS = ["", "-a", "a-", "A", "a b", "a_b", "a.b", "a/b", "../etc", ".git", "ключ", "key!", "a\\b",
                "x" * 101, "-", "Key"]

# The original's secret families, as synthetic values shaped like real ones (random, never real
# credentials; split literals keep scanners of this file quiet). The full corpus and its published
# matrix are tests/data/secrets_corpus.jsonl and tests/test_secrets_matrix.py.
SECRETS = [
    "ghp_" + "Zq7Lk2Vx9Rt4Nw8Pb3Hs6Jd1Fy5Gc0UmAe4T",
    "token: github_pat_" + "11ABCDEFGH0_aB3dE5gH7jK9mN1pQ3sT5vW7",
    "xoxb-" + "123456789012-1234567890123-aB3dE5gH7jK9mN1pQ3sT5vW7",
    "slack xoxp-" + "1234567890-1234567890-1234567890-0a1b2c3d4e5f60718293a4b5c6d7e8f9",
    "key sk-proj-" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1",
    "AKIA" + "Q4RZ7N2KXW5TBM3Y",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----",
    "password: hunter2secret",
    "password=SuperSecret99",
    "passwd = qwerty123456",
    "Пароль: сложный123пароль",
]
NOT_SECRETS = [
    "0123456789abcdef0123456789abcdef01234567",
    "mentions the ghp_ prefix, no token",
    "sk-short",
    "AKIA alone is not a key",
    "-----BEGIN CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----",
    "ssh-rsa AAAAB3NzaC1yc2E user@host is a public key",
    "пароль лежит в 1Password",
    "password policy: minimum 12 chars",
    "plain text about nats and streams",
    "xoxb- truncated is harmless",
    "[[task-web-app-symbol-references-coordinate-base]]",
    # documented examples, redactions and look-alikes the original refused by mistake
    "AKIAIOSFODNN7EXAMPLE",
    "xoxb-EXAMPLE-TOKEN-DO-NOT-USE",
    "password: ******** (redacted)",
    "sk-learn-preprocessing-pipeline-notes",
]


def test_secret_lists_keep_the_originals_families():
    assert (len(SECRETS), len(NOT_SECRETS)) == (13, 16)


@pytest.mark.parametrize("key", VALID_KEYS)
def test_valid_keys(key):
    assert is_valid_key(key)
    validate(Record(key=key, title="t"))


@pytest.mark.parametrize("key", INVALID_KEYS)
def test_invalid_keys_rejected_with_slug_message(key):
    assert not is_valid_key(key)
    with pytest.raises(Rejected) as err:
        validate(Record(key=key, title="t"))
    assert err.value.message == KEY_MESSAGE
    assert err.value.exit_code == 3


def test_key_length_limit_100_ok_101_rejected(cli):
    assert cli("add", "--key", "k" * 100, "--title", "t", input="b").code == 0
    res = cli("add", "--key", "k" * 101, "--title", "t", input="b")
    assert (res.code, res.stdout) == (3, "")
    assert KEY_MESSAGE in res.stderr


@pytest.mark.parametrize("key,message", [
    ("inc-2026-x", "keys starting with 'inc-' are reserved for incident reports"),
    ("task-x", "keys starting with 'task-' are reserved for tasks"),
])
def test_prefixes_reserved_knowledge_side(cli, key, message):
    res = cli("add", "--key", key, "--title", "t", input="b")
    assert (res.code, res.stdout) == (3, "")
    assert res.stderr.strip() == f"kyb: {message}"


@pytest.mark.parametrize("key,kind,message", [
    ("orders-oom", "incident", "incident keys must start with 'inc-' (e.g. inc-2026-07-22-orders-api-oom)"),
    ("task-x", "incident", "incident keys must start with 'inc-' (e.g. inc-2026-07-22-orders-api-oom)"),
    ("raise-retention", "task", "task keys must start with 'task-' (e.g. task-raise-log-retention)"),
    ("inc-x", "task", "task keys must start with 'task-' (e.g. task-raise-log-retention)"),
    ("x", "note", "kind must be 'knowledge', 'incident' or 'task', got 'note'"),
])
def test_prefixes_reserved_incident_and_task_side(key, kind, message):
    with pytest.raises(Rejected) as err:
        check_key_for_kind(key, kind)
    assert err.value.message == message


def test_prefixes_accepted_for_their_own_kind():
    check_key_for_kind("inc-2026-07-22-x", "incident")
    check_key_for_kind("task-x", "task")
    check_key_for_kind("incident-review", "knowledge")


@pytest.mark.parametrize("title", ["", "   ", "\n\t"])
def test_empty_title_rejected(cli, title):
    res = cli("add", "--key", "k", "--title", title, input="b")
    assert (res.code, res.stdout, res.stderr.strip()) == (3, "", "kyb: title is empty")


@pytest.mark.parametrize("text", SECRETS)
def test_secrets_detected(text):
    assert find_secret(text) is not None
    with pytest.raises(Rejected) as err:
        validate(Record(key="k", title="t", body=f"context\n{text}\nmore"))
    assert err.value.message.startswith("body looks like a secret (rule ")
    assert err.value.message.endswith(") — store secrets as pointers in refs")


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_secrets_not_flagged(text):
    assert find_secret(text) is None
    validate(Record(key="k", title="t", body=text, refs=[text]))


@pytest.mark.parametrize("text", SECRETS)
def test_secret_message_names_the_rule_and_field_and_echoes_nothing(text):
    with pytest.raises(Rejected) as err:
        validate(Record(key="k", title="t", body=text))
    value = text.split(":", 1)[-1].split("=", 1)[-1].strip()
    windows = [value[i:i + 6] for i in range(max(1, len(value) - 5))]
    assert not [w for w in windows if any(c.isdigit() for c in w) and w in err.value.message]


def test_refs_secrets_rejected_with_refs_message():
    with pytest.raises(Rejected) as err:
        validate(Record(key="k", title="t", refs=["see vault", SECRETS[5]]))
    assert err.value.message == "refs look like a secret (rule aws-access-key-id) — refs are pointers, not the secrets"


@pytest.mark.parametrize("field,record", [
    ("title", Record(key="k", title="password: hunter2secret")),
    ("tags", Record(key="k", title="t", tags=["AKIA" + "Q4RZ7N2KXW5TBM3Y"])),
    ("service", Record(key="inc-x", title="t", service="password=SuperSecret99", severity="low")),
    ("hosts", Record(key="inc-x", title="t", service="s", severity="low", hosts=["https://u:Xk29dLqp7Zm@host"])),
    ("affected", Record(key="inc-x", title="t", service="s", severity="low",
                        affected=[{"scope": "passwd = qwerty123456", "from": "a", "to": "b"}])),
    ("waits_on", Record(key="task-x", title="t", status="open", expected="2026-12-01",
                        waits_on="DB_PASSWORD=Xk29dLqp7Zm4Qw")),
    ("note", Record(key="k", title="t", extra={"note": "password: hunter2secret"})),
])
def test_every_stored_field_is_secret_scanned(field, record):
    with pytest.raises(Rejected) as err:
        validate(record)
    assert err.value.message.startswith(f"{field} look")


def test_secret_never_enters_the_store(cli, store_path):
    import pygit2

    head = pygit2.Repository(str(store_path)).head.target
    res = cli("add", "--key", "k", "--title", "t", input="password: hunter2secret")
    assert (res.code, res.stdout) == (3, "")
    assert "body looks like a secret (rule password-assignment)" in res.stderr
    assert "hunter" not in res.stderr
    assert pygit2.Repository(str(store_path)).head.target == head
    assert not (store_path / "knowledge").exists()


def test_refs_secret_rejected_through_cli(cli):
    res = cli("add", "--key", "k", "--title", "t", "--refs", "ok," + SECRETS[0], input="b")
    assert (res.code, res.stdout) == (3, "")
    assert "refs look like a secret (rule github-token)" in res.stderr
    assert SECRETS[0][4:10] not in res.stderr


def test_body_size_limit_message(cli, tmp_path):
    big = tmp_path / "big.md"
    big.write_text("x" * (BODY_MAX_BYTES + 1))
    res = cli("add", "--key", "k", "--title", "t", "--file", str(big))
    assert (res.code, res.stdout) == (3, "")
    assert res.stderr.strip() == (
        "kyb: body is 1,048,577 bytes; the limit is 1,048,576 (1 MiB) — "
        "keep records small and put a pointer to large logs in refs"
    )


def test_body_at_size_limit_accepted():
    validate(Record(key="k", title="t", body="x" * BODY_MAX_BYTES))
