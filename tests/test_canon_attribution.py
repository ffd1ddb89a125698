"""Attribution (ATT-3): KYB_AGENT/KYB_SESSION win; else the nearest coding agent up the process tree;
else `human`; transport `cli`. Agents are faked with real processes named like them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kyb_cli.core.canon.attribution import detect
from kyb_cli.core.records.keys import path_of_key
from kyb_cli.core.records.trailers import parse_trailers

RELAY = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"


def trailers(store: Path) -> dict[str, str]:
    message = subprocess.run(["git", "-C", str(store), "log", "-1", "--format=%B"], check=True,
                             capture_output=True, text=True).stdout
    return parse_trailers(message)


def kyb_argv(key: str = "k") -> list[str]:
    return [sys.executable, "-m", "kyb_cli", "add", "--key", key, "--title", "T"]


def named(tmp_path: Path, name: str) -> str:
    """A symlink to the Python binary called `name`: its process shows that name in /proc comm."""
    link = tmp_path / "bin" / name
    link.parent.mkdir(exist_ok=True)
    if not link.exists():
        link.symlink_to(sys.executable)
    return str(link)


def run(argv: list[str], env: dict[str, str], body: str = "b") -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, input=body, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture
def env(kyb, store_path):
    clean = {k: v for k, v in kyb.env.items() if k not in ("CLAUDECODE", "GEMINI_CLI", "CURSOR_AGENT")}
    return {**clean, "KYB_STORE": str(store_path)}


def test_agent_detected_from_a_parent_named_claude(env, store_path, tmp_path):
    run([named(tmp_path, "claude"), "-c", RELAY, *kyb_argv()], env)
    t = trailers(store_path)
    assert (t["Kyb-Agent"], t["Kyb-Transport"]) == ("claude-code", "cli")
    assert t["Kyb-Session"].startswith("pid-")


def test_agent_detected_from_argv0_via_exec_a(env, store_path):
    """`exec -a claude` changes only argv[0] (cmdline), not comm: both are looked at."""
    cmd = " ".join(f"'{a}'" for a in kyb_argv()) + "; exit $?"
    run(["bash", "-c", f'exec -a claude bash -c "{cmd}"'], env)
    assert trailers(store_path)["Kyb-Agent"] == "claude-code"


@pytest.mark.parametrize("outer,inner,expected", [
    ("antigravity", "claude", "claude-code"),
    ("claude", "codex", "codex"),
])
def test_nearest_agent_wins_when_nested(env, store_path, tmp_path, outer, inner, expected):
    run([named(tmp_path, outer), "-c", RELAY, named(tmp_path, inner), "-c", RELAY, *kyb_argv()], env)
    assert trailers(store_path)["Kyb-Agent"] == expected


def test_session_is_the_agent_process_when_it_exposes_none(env, store_path, tmp_path):
    """Two writes under the same agent process share a session; a new agent process is a new session."""
    script = f"import subprocess, sys; [subprocess.check_call({kyb_argv('a') + ['--body', 'b']!r} if i == 0 else " \
             f"{kyb_argv('b') + ['--body', 'b']!r}, " \
             f"stdin=subprocess.DEVNULL) for i in range(2)]"
    subprocess.run([named(tmp_path, "claude"), "-c", script], env=env, check=True, capture_output=True)
    log = subprocess.run(["git", "-C", str(store_path), "log", "-2", "--format=%B%x00"], capture_output=True,
                         text=True, check=True).stdout.split("\0")
    sessions = {parse_trailers(m)["Kyb-Session"] for m in log if m.strip()}
    assert len(sessions) == 1 and sessions.pop().startswith("pid-")


def test_kyb_agent_and_session_win_over_the_process_tree(env, store_path, tmp_path):
    run([named(tmp_path, "claude"), "-c", RELAY, *kyb_argv()],
        {**env, "KYB_AGENT": "my-bot", "KYB_SESSION": "run-42", "KYB_WORKSPACE": "/srv/proj"})
    t = trailers(store_path)
    assert (t["Kyb-Agent"], t["Kyb-Session"], t["Kyb-Workspace"], t["Kyb-Transport"]) == \
        ("my-bot", "run-42", "/srv/proj", "cli")


def test_no_agent_is_human(env, store_path, tmp_path):
    """kyb started by a process that has exited (re-parented away from this test's process tree)."""
    read_end, write_end = os.pipe()
    launcher = ("import subprocess, sys; subprocess.Popen(sys.argv[1:], stdin=int(%d), stdout=subprocess.DEVNULL, "
                "stderr=subprocess.DEVNULL, start_new_session=True, pass_fds=(%d,))" % (read_end, read_end))
    subprocess.run([sys.executable, "-c", launcher, *kyb_argv("orphan")], env=env, check=True, pass_fds=(read_end,))
    os.close(read_end)
    os.write(write_end, b"body")  # kyb reads its body, then works out who it is: its parent is gone by now
    os.close(write_end)
    target = store_path / path_of_key("orphan")  # fanned out (issue 39): the wait ends when it lands
    deadline = time.monotonic() + 60
    while not target.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    t = trailers(store_path)
    assert (t["Kyb-Agent"], t["Kyb-Transport"]) == ("human", "cli")
    assert "Kyb-Session" not in t


def test_explicit_agent_from_environment_library():
    a = detect("mcp", environ={"KYB_AGENT": "  codex \n", "KYB_SESSION": "s1", "KYB_WORKSPACE": "/w"})
    assert (a.agent, a.session, a.workspace, a.transport) == ("codex", "s1", "/w", "mcp")


def test_workspace_is_the_nearest_project_root(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    (project / "src" / "deep").mkdir(parents=True)
    (project / ".kyb.toml").write_text('store = "s"\n')
    monkeypatch.chdir(project / "src" / "deep")
    assert detect(environ={"KYB_AGENT": "x"}).workspace == str(project)


def test_whether_proc_is_there_is_asked_once_and_answered_as_the_filesystem_says():
    import os

    from kyb_cli.core.canon import attribution

    assert attribution._has_proc() is os.path.exists("/proc/self") is attribution._has_proc()
