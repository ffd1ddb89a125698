"""Issue 37, item 6: usage errors echoed stray arguments verbatim, a secret or a whole PEM block
included. The CLI's one place that words a Click usage error (cli/app.py `main`) shows a quoted
argument only when it is short and passes the secret scan, else `<N characters, not shown>`, and the
message is one line. Run in-process through the real entry point (`kyb` fixture)."""

from __future__ import annotations

import pytest

TOKEN = "ghp_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn\n-----END RSA PRIVATE KEY-----"
LONG = "word " * 40


@pytest.mark.parametrize("args", [
    ("get", "port", TOKEN),                 # unexpected extra argument
    ("get", "port", PEM),                   # a PEM block is taken for an option
    (TOKEN,),                               # no such command
    ("export", "--format", TOKEN),          # invalid choice
    ("get", "port", f"--x={TOKEN}"),
    ("get", "port", LONG),
], ids=["extra-token", "extra-pem", "command-token", "choice-token", "option-token", "extra-long"])
def test_a_usage_error_never_echoes_a_secret_or_a_long_stray_argument(kyb, args):
    res = kyb(*args)
    assert res.code == 2, (res.code, res.stderr)
    assert res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert TOKEN not in res.stderr and "PRIVATE KEY" not in res.stderr and "MIIE" not in res.stderr
    assert LONG.strip() not in res.stderr
    assert "not shown" in res.stderr or args[-1].startswith("--x=")  # Click names only `--x` there


def test_a_usage_error_still_names_a_short_clean_stray_argument(kyb):
    res = kyb("get", "port", "extra", "more")
    assert res.code == 2 and "(extra more)" in res.stderr, res.stderr
