"""Issue 37, item 6: usage errors echoed stray arguments verbatim, a secret or a whole PEM block
included. A usage error is one line and quotes an argument only as the core would (api.shown)."""

from __future__ import annotations

import pytest

from tests.test_tag_secrets import RSA

TOKEN = "ghp_" + "k3Jd9QxZ2mVtY7bWc4Lr8NsPf1Hg6Ue0Ao5T"  # shaped like a GitHub token, never a real one


@pytest.mark.parametrize("args", [
    ("get", "a", TOKEN),                 # a stray argument
    ("get", "a", "b", RSA),              # a PEM block where an option was expected
    ("query", "x", "--limit", TOKEN),    # a bad value of an option
])
def test_a_usage_error_never_echoes_a_secret_and_is_one_line(kyb, args):
    res = kyb(*args)
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr.startswith("kyb: ") and res.stderr.count("\n") == 1, res.stderr
    assert TOKEN not in res.stderr and "PRIVATE KEY" not in res.stderr and "MIIE" not in res.stderr
    assert "not shown" in res.stderr


def test_a_plain_stray_argument_is_still_named(kyb):
    res = kyb("get", "a", "extra")
    assert res.code == 2 and "(extra)" in res.stderr



@pytest.mark.parametrize("query", [f"q=x&limit={TOKEN}", f"q=x&{TOKEN}=1", f"q=x&kind={TOKEN}",
                                   f"q=x&semantic={TOKEN}"])
def test_an_http_usage_error_never_echoes_a_secret(store_path, query):
    """The same rule at the HTTP door: a bad value or an unknown parameter is quoted only when short
    and clean (api.argument_shown)."""
    pytest.importorskip("starlette")
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door
    from tests.support.asgi_call import asgi_call

    app = build_app(Door(store_path), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
    status, body = asgi_call(app, "GET", "/search", query=query)
    assert status == 400 and TOKEN not in body["error"] and "not shown" in body["error"], body
