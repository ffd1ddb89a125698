"""The detached filler nices its autogroup too (issue 39): with the kernel's autogroups a session is
a group of its own and CPU is shared between groups first, so a niced filler in its own session took
as much CPU as a `kyb add`. Only a session leader does it (its group is its own, never the caller's)."""

from __future__ import annotations

import os


def run_nice(monkeypatch, tmp_path, leader: bool):
    from kyb_cli.core.index import filler

    group = tmp_path / "autogroup"
    group.write_text("/autogroup-1 nice 0\n")
    monkeypatch.setattr(filler, "AUTOGROUP", str(group))
    monkeypatch.setattr(filler, "_NICED", False)
    monkeypatch.setattr(os, "nice", lambda n: 0)
    monkeypatch.setattr(os, "getsid", lambda pid: os.getpid() if leader else os.getpid() + 1)
    filler._nice_once()
    return group.read_text()


def test_a_session_leader_nices_its_autogroup(monkeypatch, tmp_path):
    assert run_nice(monkeypatch, tmp_path, leader=True) == "10"


def test_a_process_in_its_callers_session_leaves_the_group_alone(monkeypatch, tmp_path):
    assert run_nice(monkeypatch, tmp_path, leader=False) == "/autogroup-1 nice 0\n"
