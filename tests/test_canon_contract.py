"""The contract agents rely on: JSON off a terminal, rich on one, errors on stderr with empty stdout,
exit codes 0/1/2/3/4, a bounded lock wait, and a body typed at a terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time

import pytest


def test_json_when_stdout_is_not_a_terminal(kyb):
    res = kyb("add", "--key", "k", "--title", "T", input="b")
    assert res.code == 0 and json.loads(res.stdout)["action"] == "created"
    assert res.stdout.count("\n") == 1  # one JSON document, one line


@pytest.mark.parametrize("args,code,fragment", [
    (("get", "nope"), 1, "kyb: no record 'nope'"),
    (("get", "k", "--at", "nosuchrev"), 1, "unknown revision"),
    (("history", "nope"), 1, "no history"),
    (("add", "--title", "T"), 2, "Missing option '--key'"),
    (("add", "--key", "k", "--title", "T", "--bogus"), 2, "No such option '--bogus'"),
    (("frobnicate",), 2, "No such command 'frobnicate'"),
    (("add", "--key", "k", "--title", "T", "--body", "x", "--file", "y"), 2, "not both"),
    (("add", "--key", "k", "--title", "T", "--file", "/nonexistent/f"), 2, "cannot read --file"),
    (("add", "--key", "Bad Key", "--title", "T"), 3, "key must be a slug"),
    (("rm", "k", "--reason", " "), 3, "retracting needs a reason"),
])
def test_errors_on_stderr_with_empty_stdout_and_exit_code(cli, args, code, fragment):
    cli("add", "--key", "k", "--title", "T", input="b")
    res = cli(*args, input="body")
    assert (res.code, res.stdout) == (code, "")
    assert fragment in res.stderr


def test_not_a_store_exits_4(kyb, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "file.txt").write_text("x")
    for args in (("get", "k"), ("add", "--key", "k", "--title", "T"), ("history", "k"), ("tags",)):
        res = kyb(*args, input="b", env={"KYB_STORE": str(plain)})
        assert (res.code, res.stdout) == (4, "")
        assert f"{plain} is not a kyb store" in res.stderr


def test_init_refuses_a_non_empty_directory_exit_4(kyb, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "file.txt").write_text("x")
    res = kyb("init", str(plain))
    assert (res.code, res.stdout) == (4, "")
    assert "exists and is not empty" in res.stderr


def test_invalid_utf8_body_is_a_usage_error(kyb, store_path):
    proc = subprocess.run([sys.executable, "-m", "kyb_cli", "add", "--key", "k", "--title", "T"],
                          input=b"\xff\xfe bad", capture_output=True, env={**kyb.env, "KYB_STORE": str(store_path)})
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert b"not UTF-8" in proc.stderr


HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, f"{os.getpid()}\\n".encode())
print("held", flush=True)
time.sleep(60)
"""


def test_lock_held_past_timeout_exits_4_with_clear_message(kyb, store_path):
    lock = store_path / ".git" / "kyb" / "write.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        head = (store_path / ".git" / "refs" / "heads" / "main").read_text()
        started = time.monotonic()
        res = kyb("add", "--key", "k", "--title", "T", input="b", env={"KYB_LOCK_TIMEOUT": "0.5"})
        waited = time.monotonic() - started
        assert (res.code, res.stdout) == (4, "")
        assert res.stderr.strip() == (
            f"kyb: the store is locked by another writer (pid {holder.pid}) for more than 0.5 s; "
            "nothing was written — try again, or raise KYB_LOCK_TIMEOUT"
        )
        assert waited >= 0.5
        assert (store_path / ".git" / "refs" / "heads" / "main").read_text() == head
    finally:
        holder.kill()
        holder.wait()
    assert kyb("add", "--key", "k", "--title", "T", input="b").code == 0  # released when the holder died


def test_lock_wait_succeeds_when_released_in_time(kyb, store_path):
    """A process: the writer lock is held by another process while this one waits."""
    lock = store_path / ".git" / "kyb" / "write.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER.replace("time.sleep(60)", "time.sleep(0.7)"),
                               str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        res = kyb("add", "--key", "k", "--title", "T", input="b", env={"KYB_LOCK_TIMEOUT": "10"})
        assert res.code == 0, res.stderr
    finally:
        holder.kill()
        holder.wait()


# -- on a terminal ----------------------------------------------------------------------------------

def run_on_tty(args: list[str], env: dict[str, str], typed: bytes = b"", timeout: float = 30):
    """Run kyb with stdin and stdout on a pseudo-terminal; returns (code, terminal output, stderr)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "kyb_cli", *args], stdin=slave, stdout=slave,
                            stderr=subprocess.PIPE, env={**env, "COLUMNS": "120", "TERM": "xterm-256color"})
    os.close(slave)
    out = b""
    err = b""
    deadline = time.monotonic() + timeout
    sent = not typed
    err_fd = proc.stderr.fileno()
    open_fds = {master, err_fd}
    try:
        while open_fds and time.monotonic() < deadline:
            ready, _, _ = select.select(list(open_fds), [], [], 0.1)
            for fd in ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # EIO: the terminal's other side is closed
                    chunk = b""
                if not chunk:
                    open_fds.discard(fd)
                elif fd == err_fd:
                    err += chunk
                else:
                    out += chunk
            if not sent and b"Ctrl-D" in err:
                os.write(master, typed)
                sent = True
        code = proc.wait(timeout=5)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return code, out.decode(errors="replace"), err.decode(errors="replace")


def test_body_typed_at_a_terminal_with_a_prompt(kyb, store_path):
    env = {**kyb.env, "KYB_STORE": str(store_path)}
    code, out, err = run_on_tty(["add", "--key", "k", "--title", "T"], env, typed=b"typed at a terminal\n\x04")
    assert code == 0, err
    assert "type the body (Markdown), then Ctrl-D" in err
    assert "created" in out and not out.lstrip().startswith("{")
    assert kyb("get", "k").json["body"] == "typed at a terminal"


def test_rich_on_a_terminal_json_with_flag(kyb, store_path):
    env = {**kyb.env, "KYB_STORE": str(store_path), "NO_COLOR": "1"}
    kyb("add", "--key", "k", "--title", "Checkout path", "--tags", "infra", input="port 9090")
    code, out, _ = run_on_tty(["get", "k"], env)
    assert code == 0
    assert "Checkout path" in out and "port 9090" in out and not out.lstrip().startswith("{")
    assert "\x1b[3" not in out  # NO_COLOR: no foreground colours
    code, out, _ = run_on_tty(["get", "k", "--json"], env)
    assert code == 0 and json.loads(out.replace("\r\n", "\n"))["body"] == "port 9090"
    code, out, _ = run_on_tty(["--json", "history", "k"], env)
    assert code == 0 and json.loads(out.replace("\r\n", "\n"))["versions"][0]["change"] == "added"


def test_error_on_a_terminal_leaves_stdout_empty(kyb, store_path):
    env = {**kyb.env, "KYB_STORE": str(store_path)}
    code, out, err = run_on_tty(["get", "nope"], env)
    assert (code, out) == (1, "")
    assert err == "kyb: no record 'nope'\n"
