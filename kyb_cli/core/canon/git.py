"""THE one runner of the system `git` program, for the network (sync) and for local plumbing (index).

Every call: no terminal and no prompt (`GIT_TERMINAL_PROMPT=0`, stdin closed or fed), an environment
scrubbed of variables that would point git at another repository (a hook's `GIT_DIR` …), `LC_ALL=C`
because callers parse git's messages, a deadline, and on timeout the whole process group is killed
(git spawns ssh, credential helpers, pack-objects). A missing `git` is a clear error, not a traceback.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

from kyb_cli.core.errors import RemoteError, StoreError, UsageError

# A hook, an IDE or a parent git process may export these; any of them would redirect our git.
SCRUBBED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE")
NETWORK_TIMEOUT = 60.0  # KYB_SYNC_TIMEOUT's default: fetch, push, clone
LOCAL_TIMEOUT = 600.0  # local plumbing (log, cat-file) on a big store; a deadline, not an expectation


def available() -> bool:
    """True when the `git` program is on PATH."""
    return shutil.which("git") is not None


def version() -> str | None:
    """`git --version`, or None when git is not on PATH."""
    if not available():
        return None
    import tempfile

    res = run(["--version"], cwd=Path(tempfile.gettempdir()), text=True, timeout=30.0)
    return res.stdout.strip() if res.returncode == 0 else None


def network_timeout() -> float:
    """`KYB_SYNC_TIMEOUT` seconds, else 60."""
    from kyb_cli.core.settings import env_float

    return env_float("KYB_SYNC_TIMEOUT", NETWORK_TIMEOUT)


def environment() -> dict[str, str]:
    """The environment every git call runs with (see the module docstring)."""
    env = dict(os.environ)
    for var in SCRUBBED:
        env.pop(var, None)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("GCM_INTERACTIVE", "never")
    env["LC_ALL"] = "C"
    return env


def could_be_revision(text: str) -> bool:
    """False for what no revision name can be: empty, an option (`-…`), or holding a control
    character (NUL, newline…: git refuses them in names, and a NUL cannot even reach a process)."""
    return bool(text) and not text.startswith("-") and not any(ch < " " or ch == "\x7f" for ch in text)


def run(args: list[str], cwd: Path, *, input: bytes | None = None, text: bool = False,
        network: bool = False, timeout: float | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run `git args` in `cwd`; returns the finished process (the caller reads returncode and output).

    `network`: the deadline is `KYB_SYNC_TIMEOUT` and a timeout or missing git is a RemoteError (exit 5);
    otherwise the deadline is LOCAL_TIMEOUT and those are a StoreError (exit 4).
    `env`: variables set on top of the scrubbed environment (sync's quarantined object directory).
    """
    error = RemoteError if network else StoreError
    if any("\x00" in arg for arg in args):  # only input can put one there, and no process can take it
        raise UsageError("an argument contains a NUL character; arguments are text — remove it")
    if timeout is None:
        timeout = network_timeout() if network else LOCAL_TIMEOUT
    if not Path(cwd).is_dir():
        raise error(f"no store at {cwd} — create one with `kyb init {cwd}`")
    data: bytes | str | None = input
    if text and input is not None:
        data = input.decode("utf-8")
    try:
        proc = subprocess.Popen(
            ["git", *args], cwd=str(cwd), env={**environment(), **(env or {})},
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=text, start_new_session=True,
        )
    except FileNotFoundError:
        what = "sync" if network else "the search index"
        raise error(f"{what} needs the `git` command, and it is not on PATH") from None
    try:
        out, err = proc.communicate(input=data, timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.communicate()
        verb = next((a for a in args if not a.startswith("-") and a not in ("-C", "-c")), "command")
        if network:
            raise RemoteError(
                f"git {verb} gave no answer within {timeout:g} s (a credential prompt or an unreachable "
                "host?) — local reads and writes keep working; raise KYB_SYNC_TIMEOUT or sync later"
            ) from None
        raise StoreError(f"git {verb} gave no answer within {timeout:g} s") from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def cat_file(store_path: Path, specs: list[str]) -> list[tuple[str, str, bytes] | None]:
    """(oid, type, content) or None (missing, ambiguous) per object spec, in one `git cat-file --batch`."""
    if not specs:
        return []
    if any("\n" in s or not s for s in specs):
        raise ValueError("object name with a newline")
    res = run(["-C", str(store_path), "cat-file", "--batch"], cwd=Path(store_path),
              input=("\n".join(specs) + "\n").encode())
    if res.returncode != 0:
        raise StoreError(f"git cat-file failed: {res.stderr.decode(errors='replace').strip()}")
    return parse_batch(res.stdout, len(specs))


def parse_batch(data: bytes, count: int) -> list[tuple[str, str, bytes] | None]:
    """The `count` answers of one `git cat-file --batch` output: (oid, type, content), or None for a
    name git could not resolve ("<spec> missing" / "ambiguous"). THE parser of that format."""
    out: list[tuple[str, str, bytes] | None] = []
    pos = 0
    for _ in range(count):
        nl = data.index(b"\n", pos)
        header = data[pos:nl].split(b" ")
        pos = nl + 1
        if len(header) != 3 or not header[2].isdigit():
            out.append(None)
            continue
        size = int(header[2])
        out.append((header[0].decode(), header[1].decode(), data[pos:pos + size]))
        pos += size + 1
    return out
