"""Secrets through the command line: every field a write stores is scanned (the `rm --reason` too,
which lives for ever in the `Kyb-Reason` trailer); a refused write names the rule and the field,
echoes no part of the secret, exits 3 and writes nothing."""

from __future__ import annotations

import subprocess

import pytest

# Synthetic values shaped like real ones (random; never real credentials). Split so scanners of this
# file stay quiet.
GLPAT = "glpat-" + "Vb3kR8tQz1Lm6Wx2Nc9P"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
PG = "postgres://app:" + "Xk29dLqp7Zm4" + "@db-3.internal:5432/orders"
AWS = "AWS_SECRET_ACCESS_KEY=" + "9dF3kLq0Zp7XvB2nM8rT4yW6sH1jC5gA0eU3iO7q"
HEXKEY = "DATADOG_API_KEY=" + "3f9a2c8d1e7b4a6f5c0d9e8b7a6f5c4d"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiI0MjQyNDI0MjQyIiwiaWF0IjoxNzY0NTQ3MjAwfQ."
       + "Qm9xY2FyVGhpc0lzTm90QVJlYWxTaWduYXR1cmUx")

CASES = [
    ("body", ["add", "--key", "k", "--title", "T"], f"deploy token {GLPAT}"),
    ("title", ["add", "--key", "k", "--title", f"key {STRIPE}"], "b"),
    ("tags", ["add", "--key", "k", "--title", "T", "--tags", f"infra,{GLPAT}"], "b"),
    ("refs", ["add", "--key", "k", "--title", "T", "--refs", PG], "b"),
    ("service", ["incident", "--key", "inc-x", "--title", "T", "--service", AWS, "--severity", "low"], "b"),
    ("hosts", ["incident", "--key", "inc-x", "--title", "T", "--service", "s", "--severity", "low",
               "--hosts", f"node-1,{PG}"], "b"),
    ("detection", ["incident", "--key", "inc-x", "--title", "T", "--service", "s", "--severity", "low",
                   "--detection", f"curl -H 'Authorization: Bearer {JWT}' node-3"], "b"),
    ("affected", ["incident", "--key", "inc-x", "--title", "T", "--service", "s", "--severity", "low",
                  "--affected", f'[{{"scope": "{HEXKEY}", "from": "a", "to": "b"}}]'], "b"),
    ("assignee", ["task", "--key", "task-x", "--title", "T", "--assignee", GLPAT], "b"),
    ("waits_on", ["task", "--key", "task-x", "--title", "T", "--expected", "2027-01-01",
                  "--waits-on", HEXKEY], "b"),
]


def head(store) -> str:
    return subprocess.run(["git", "-C", str(store), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def _no_echo(secret: str, text: str) -> None:
    windows = {secret[i:i + 6] for i in range(len(secret) - 5)}
    assert not [w for w in windows if any(c.isdigit() for c in w) and w in text]


@pytest.mark.parametrize("field,args,body", CASES, ids=[c[0] for c in CASES])
def test_secret_in_any_stored_field_is_refused_naming_rule_and_field(kyb, store_path, field, args, body):
    before = head(store_path)
    res = kyb(*args, input=body)
    assert (res.code, res.stdout) == (3, "")
    assert res.stderr.startswith(f"kyb: {field} look") and "(rule " in res.stderr
    for secret in (GLPAT, STRIPE, PG, AWS, HEXKEY, JWT):
        _no_echo(secret, res.stderr)
    assert head(store_path) == before


def test_retraction_reason_is_secret_scanned(kyb, store_path):
    assert kyb("add", "--key", "k", "--title", "T", input="b").code == 0
    before = head(store_path)
    res = kyb("rm", "k", "--reason", f"wrong: the real one is {STRIPE}")
    assert (res.code, res.stdout) == (3, "")
    assert res.stderr.startswith("kyb: reason looks like a secret (rule stripe-key)")
    _no_echo(STRIPE, res.stderr)
    assert head(store_path) == before


def test_closing_resolution_is_secret_scanned(kyb, store_path):
    assert kyb("task", "--key", "task-x", "--title", "T", input="b").code == 0
    before = head(store_path)
    res = kyb("done", "task-x", "--resolution", f"rotated, new key {HEXKEY}")
    assert (res.code, res.stdout) == (3, "")
    assert res.stderr.startswith("kyb: resolution looks like a secret (rule secret-assignment)")
    _no_echo(HEXKEY, res.stderr)
    assert head(store_path) == before


@pytest.mark.parametrize("text", [
    "AKIAIOSFODNN7EXAMPLE", "xoxb-EXAMPLE-TOKEN-DO-NOT-USE", "password: ******** (redacted)",
    "sk-learn-preprocessing-pipeline-notes",
])
def test_documented_examples_and_lookalikes_are_written(kyb, text):
    res = kyb("add", "--key", "k", "--title", text, "--tags", "notes", input=text)
    assert res.code == 0, res.stderr
