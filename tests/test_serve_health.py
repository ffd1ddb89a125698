"""What `/healthz` reports beyond liveness, through `api.health` (the function the route calls)."""

from __future__ import annotations


def test_health_counts_versions_still_without_a_vector(tiny, cli, store_path):
    """`pending_vectors`: current versions lacking a vector under the installed model (null without one)."""
    from kyb_cli import api

    for n in range(3):
        assert cli("add", "--key", f"fact-{n}", "--title", f"Fact {n}", "--body", "b").code == 0
    assert cli("rm", "fact-2", "--reason", "wrong").code == 0
    before = api.health(store_path)
    assert before["pending_vectors"] == 2 and before["counts"]["knowledge"] == 2
    assert before["counts"]["states"] == {"active": 2, "archived": 0, "retracted": 1}
    assert cli("index", "--embed").code == 0
    assert api.health(store_path)["pending_vectors"] == 0


def test_health_without_a_model_has_no_pending_count(cli, store_path):
    from kyb_cli import api

    assert cli("add", "--key", "fact", "--title", "Fact", "--body", "b").code == 0
    assert api.health(store_path)["pending_vectors"] is None


def test_console_assets_ship_as_package_data():
    """Every file of the console is matched by pyproject's package-data globs (else a wheel lacks it)."""
    import fnmatch
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["kyb_cli.serve"]
    static = root / "kyb_cli" / "serve"
    files = [p.relative_to(static).as_posix() for p in (static / "static").rglob("*") if p.is_file()]
    assert files and all(any(fnmatch.fnmatch(f, g) and f.count("/") == g.count("/") for g in globs) for f in files)


def test_on_a_staged_index_the_server_answers_at_once_and_says_the_history_is_incomplete(store_path, tmp_path):
    """The no-waiting rule for a long-lived door: a question about the past does not wait for the
    background history; the answer and /healthz say `history_complete: false`."""
    import time

    from tests.support.index_helpers import T0, put
    from tests.support.serve_proc import Served
    from tests.test_serve_http import world

    put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 3", T0)
    put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 4", T0 + 86_400)
    env = dict(world(tmp_path), KYB_STAGE_AT="0", KYB_BACKGROUND="off")  # the filler never completes it
    server = Served.start(store_path, env=env)
    try:
        started = time.monotonic()
        past = server.get("/search?q=checkout&history=true&semantic=false")
        assert past.status == 200 and time.monotonic() - started < 20
        assert past.json["history_complete"] is False
        assert server.get("/knowledge/checkout-path").json["history_complete"] is False
        health = server.get("/healthz").json
        assert health["history_complete"] is False and health["head"]["sha"]
    finally:
        server.stop()
