"""The test-duration guard (tests/support/durations.py) reports an unmarked test over the limit,
and neither one marked slow nor a quick one."""

from __future__ import annotations

from types import SimpleNamespace

from tests.support import durations


class Terminal:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def section(self, title: str) -> None:
        self.lines.append(f"== {title}")

    def write_line(self, line: str) -> None:
        self.lines.append(line)


def test_duration_guard_reports_unmarked_slow_tests_only(monkeypatch):
    monkeypatch.setattr(durations, "_slow", [])
    over = durations.LIMIT + 1
    for nodeid, duration, keywords in (("t::sleepy", over, {}), ("t::marked", over, {"slow": 1}),
                                       ("t::quick", 0.01, {})):
        durations.pytest_runtest_logreport(SimpleNamespace(when="call", duration=duration, keywords=keywords,
                                                           nodeid=nodeid))
    terminal = Terminal()
    durations.pytest_terminal_summary(terminal)
    assert terminal.lines[0].startswith("== unmarked tests over")
    assert [line.split()[-1] for line in terminal.lines[1:]] == ["t::sleepy"]


def test_duration_guard_says_nothing_when_every_test_is_quick(monkeypatch):
    monkeypatch.setattr(durations, "_slow", [])
    terminal = Terminal()
    durations.pytest_terminal_summary(terminal)
    assert terminal.lines == []
