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
