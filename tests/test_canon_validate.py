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

SECRETS = [
    "ghp_abcdefghijklmnopqrstuvwxyz123456",
    "token: github_pat_11ABCDEFGH_abcdefghijklmnopqrst",
    "xoxb-123456789012-abcdefghijklmnop",
    "slack xoxp-1-2-3-abcdefghij",
    "key sk-proj-abcdefghijklmnopqrstuvwxyz",
    "AKIAIOSFODNN7EXAMPLE",
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
]


def test_secret_matrices_have_the_originals_sizes():
    assert (len(SECRETS), len(NOT_SECRETS)) == (13, 12)


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
    assert err.value.message.startswith("body looks like a secret (")
    assert err.value.message.endswith("…) — store secrets as pointers in refs")


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_secrets_not_flagged(text):
    assert find_secret(text) is None
    validate(Record(key="k", title="t", body=text, refs=[text]))


def test_secret_hit_is_first_20_chars():
    assert find_secret("x ghp_abcdefghijklmnopqrstuvwxyz123456 y") == "ghp_abcdefghijklmnop"


def test_refs_secrets_rejected_with_refs_message():
    with pytest.raises(Rejected) as err:
        validate(Record(key="k", title="t", refs=["see vault", "AKIAIOSFODNN7EXAMPLE"]))
    assert err.value.message == "refs look like a secret (AKIAIOSFODNN7EXAMPLE…) — refs are pointers, not the secrets"


def test_title_and_tags_are_not_secret_scanned():
    validate(Record(key="k", title="password: hunter2secret", tags=["AKIAIOSFODNN7EXAMPLE"]))


def test_secret_never_enters_the_store(cli, store_path):
    import pygit2

    head = pygit2.Repository(str(store_path)).head.target
    res = cli("add", "--key", "k", "--title", "t", input="password: hunter2secret")
    assert (res.code, res.stdout) == (3, "")
    assert "body looks like a secret (password: hunter2sec…)" in res.stderr
    assert pygit2.Repository(str(store_path)).head.target == head
    assert not (store_path / "knowledge").exists()


def test_refs_secret_rejected_through_cli(cli):
    res = cli("add", "--key", "k", "--title", "t", "--refs", "ok,ghp_abcdefghijklmnopqrstuvwxyz123456", input="b")
    assert (res.code, res.stdout) == (3, "")
    assert "refs look like a secret (ghp_abcdefghijklmnop…)" in res.stderr


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
