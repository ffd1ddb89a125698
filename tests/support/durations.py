"""The test-duration guard: at the end of a run, a report of every test not marked `slow` whose call
took more than LIMIT seconds (a report, never a failure: timing on a loaded 2-core machine is noisy).
Works under xdist too (the controller sees every report). Loaded by tests/conftest.py."""

from __future__ import annotations

import os

LIMIT = float(os.environ.get("KYB_TEST_SLOW_LIMIT", "5") or 5)  # tests' own knob, not a kyb setting

_slow: list[tuple[float, str]] = []


def pytest_runtest_logreport(report) -> None:
    if report.when == "call" and report.duration > LIMIT and "slow" not in report.keywords:
        _slow.append((report.duration, report.nodeid))


def pytest_terminal_summary(terminalreporter) -> None:
    if not _slow:
        return
    terminalreporter.section(f"unmarked tests over {LIMIT:g} s (mark them @pytest.mark.slow or make them faster)")
    for duration, nodeid in sorted(_slow, reverse=True):
        terminalreporter.write_line(f"{duration:6.1f} s  {nodeid}")
