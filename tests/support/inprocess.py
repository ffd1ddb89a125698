"""Run the `kyb` command line in this process, as `python -m kyb_cli` would run it in a child.

A child process costs ~0.12 s before kyb does anything (interpreter start, imports); the same
command in-process costs 5-60 ms. So tests run kyb here by default and start a process only where
the process boundary is the contract (tests/conftest.py `kyb_process`). What a child would have of
its own is given to each call: argv, the environment (a full copy, swapped in and out), the working
directory, stdin/stdout/stderr as pipes (not a terminal: JSON), an empty contextvars context, and
the exit code from SystemExit. The same entry point runs (`kyb_cli.cli.fast.main`: the fast query
path, then Click), so an argument that is not UTF-8 or a usage error is worded exactly as in a child.
"""

from __future__ import annotations

import contextvars
import io
import os
import sys
import traceback
from pathlib import Path


class _Pipe(io.TextIOWrapper):
    """A text stream over bytes, as a child's stdio on a pipe: not a terminal, UTF-8, the same
    error handler as this interpreter's stdout."""

    def __init__(self, data: bytes = b""):
        super().__init__(io.BytesIO(data), encoding="utf-8", errors=sys.stdout.errors or "strict",
                         newline=None if data else "\n", write_through=True)

    def isatty(self) -> bool:
        return False

    def captured(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8", "replace")  # as subprocess's text=True decodes


def run_inprocess(args, env: dict[str, str], cwd: str | Path | None = None, input: str | bytes | None = None):
    """(exit code, stdout, stderr) of `kyb ARGS` run here with `env` as the whole environment."""
    from kyb_cli.cli import fast

    argv = ["kyb", *(os.fsdecode(a) if isinstance(a, bytes) else os.fspath(a) if isinstance(a, os.PathLike)
                     else str(a) for a in args)]
    data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    saved_env, saved_argv, saved_cwd = dict(os.environ), sys.argv, os.getcwd()
    saved_io = sys.stdin, sys.stdout, sys.stderr
    stdin, stdout, stderr = _Pipe(data), _Pipe(), _Pipe()
    code = 0
    try:
        os.environ.clear()
        os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = argv
        sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
        try:
            # an empty context, as a new process: no call state of the test; and the exit a process's
            # own kyb takes without teardown (fast._leave) is this process's, so it is not taken here
            contextvars.Context().run(fast.main, False)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                stderr.write(f"{exc.code}\n")
        except KeyboardInterrupt:
            code = 130
        except BaseException:  # noqa: BLE001 - what a child would print as a traceback, exit 1
            traceback.print_exc(file=stderr)
            code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_io
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return code, stdout.captured(), stderr.captured()
