"""Issue 37, item 6: a non-UTF-8 KYB_AGENT, KYB_SESSION or KYB_WORKSPACE made every write an internal
error (exit 70). Now it is a usage error (exit 2), one line naming the variable, the raw bytes never
echoed, stdout empty and nothing written. A child process: the environment's bytes are the contract."""

from __future__ import annotations

import os

import pytest

from tests.support.three_doors import head


@pytest.mark.parametrize("var", ["KYB_AGENT", "KYB_SESSION", "KYB_WORKSPACE"])
def test_a_non_utf8_attribution_variable_is_a_usage_error_naming_it(kyb_process, store_path, var):
    assert kyb_process("init").code == 0
    before = head(store_path)
    res = kyb_process("add", "--key", "port", "--title", "Port", "--body", "9090",
                      env={var: os.fsdecode(b"lab\xffel\xfe")})
    assert res.code == 2, (res.code, res.stderr)
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and var in lines[0], res.stderr
    assert "\ufffd" not in res.stderr and "\\xff" not in res.stderr and "internal error" not in res.stderr
    assert head(store_path) == before
