"""KYB_* numeric settings are parsed in one place (core/settings.py): a bad value is a usage error."""

from __future__ import annotations

import pytest

from kyb_cli.core.errors import UsageError
from kyb_cli.core.settings import env_float


def test_bad_lock_timeout_is_a_usage_error_and_nothing_is_written(kyb, store_path):
    res = kyb("add", "--key", "k", "--title", "t", "--body", "b", env={"KYB_LOCK_TIMEOUT": "abc"})
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr == "kyb: KYB_LOCK_TIMEOUT='abc' is not a number (seconds)\n"
    assert not (store_path / "knowledge" / "k.md").exists()


@pytest.mark.parametrize("raw", ["abc", "nan", "inf", "-1"])
def test_settings_reject_what_is_not_a_finite_non_negative_number(monkeypatch, raw):
    monkeypatch.setenv("KYB_SYNC_TIMEOUT", raw)
    with pytest.raises(UsageError, match="KYB_SYNC_TIMEOUT"):
        env_float("KYB_SYNC_TIMEOUT", 60.0)


@pytest.mark.parametrize("raw,expected", [("", 60.0), ("  ", 60.0), ("2.5", 2.5), ("0", 0.0)])
def test_settings_unset_or_empty_mean_the_default(monkeypatch, raw, expected):
    monkeypatch.setenv("KYB_SYNC_TIMEOUT", raw)
    assert env_float("KYB_SYNC_TIMEOUT", 60.0) == expected


@pytest.mark.parametrize("name,raw", [("KYB_STAGE_AT", "many"), ("KYB_STAGE_AT", "-1"),
                                      ("KYB_EMBED_THREADS", "two"), ("KYB_EMBED_THREADS", "0")])
def test_staging_and_embedding_settings_are_parsed_by_settings_no_silent_fallback(monkeypatch, name, raw):
    from kyb_cli.core.embed.embedder import _threads
    from kyb_cli.core.index.staged import stage_at

    monkeypatch.setenv(name, raw)
    with pytest.raises(UsageError, match=name):
        (stage_at if name == "KYB_STAGE_AT" else _threads)()


def test_a_bad_stage_at_is_a_usage_error_on_a_read(monkeypatch, store_path):
    from kyb_cli import api

    monkeypatch.setenv("KYB_STAGE_AT", "lots")
    with pytest.raises(api.UsageError, match="KYB_STAGE_AT='lots' is not a whole number"):
        api.query(str(store_path), "anything", semantic=False)


@pytest.mark.parametrize("raw,on", [("off", False), ("0", False), ("No", False), ("on", True), ("", True)])
def test_background_switch_uses_the_settings_off_values(monkeypatch, raw, on):
    from kyb_cli.core.index.staged import background_enabled

    monkeypatch.setenv("KYB_BACKGROUND", raw)
    assert background_enabled() is on


def test_no_core_module_but_settings_reads_a_kyb_number_or_switch():
    """KYB_STAGE_AT, KYB_BACKGROUND, KYB_EMBED_THREADS are read through settings.py, and KYB_FAULT by no module."""
    from pathlib import Path

    core = Path(__file__).resolve().parents[1] / "kyb_cli" / "core"
    for path in core.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "KYB_FAULT" not in text, path
        for name in ("KYB_STAGE_AT", "KYB_BACKGROUND", "KYB_EMBED_THREADS"):
            assert f'environ.get("{name}"' not in text and f"environ.get({name}" not in text, (path, name)
