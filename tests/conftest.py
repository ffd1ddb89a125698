"""Shared fixtures: every test gets its own store and its own config/data/cache dirs.

`kyb` runs the real command line (`python -m kyb_cli`'s entry point, fast path included) in this
process, with its own argv, environment, cwd and pipes (tests/support/inprocess.py); `kyb_process`
runs it as a child process, for the tests whose contract is the process boundary (exit codes on a
real pipe, signals, locking between processes, inherited descriptors); `cli` runs Click's runner;
`tiny` points KYB_MODEL at the tests' own tiny model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

# As a `kyb` process runs (cli/fast.one_blas_thread), set before any test module loads numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[1]
SHARED_MODEL = ROOT.parent / "shared" / "models" / "multilingual-e5-small"


pytest_plugins = ["tests.support.durations"]  # the end-of-run report of unmarked tests over ~5 s

TEST_GIT_NAME = "kyb test"
TEST_GIT_EMAIL = "test@kyb.invalid"


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path_factory, monkeypatch):
    """HOME, config, data, cache and Git's config under a temp dir: no test sees the user's machine.

    The suite passes on a machine with no ~/.gitconfig and as any user (rule: tests are hermetic).
    `git` run by a test reads only GIT_CONFIG_GLOBAL, a file written here
    with a test identity; no system config (GIT_CONFIG_NOSYSTEM). kyb's own commits (pygit2) read
    the fake HOME, which has no .gitconfig, so they are signed `kyb <kyb@localhost>` as on a fresh
    machine; libgit2 fixes its config search path when first used, so in-process commits get it
    pointed at the fake HOME here too.
    """
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_CACHE_HOME", "cache"),
                     ("XDG_STATE_HOME", "state")):
        monkeypatch.setenv(var, str(home / sub))
    gitconfig = home / "test.gitconfig"
    gitconfig.write_text(f"[user]\n\tname = {TEST_GIT_NAME}\n\temail = {TEST_GIT_EMAIL}\n"
                         "[init]\n\tdefaultBranch = main\n")
    for var in [v for v in os.environ if v.startswith("GIT_")]:
        monkeypatch.delenv(var, raising=False)  # GIT_DIR, GIT_AUTHOR_* … of the calling shell
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "PRE_COMMIT_HOME"):
        monkeypatch.delenv(var, raising=False)
    import pygit2

    for level, path in ((pygit2.enums.ConfigLevel.GLOBAL, home), (pygit2.enums.ConfigLevel.XDG, home / "config" / "git"),
                        (pygit2.enums.ConfigLevel.SYSTEM, home / "no-system-config")):
        pygit2.settings.search_path[level] = str(path)
    # The real model (CI sets KYB_MODEL) is only for the tests that ask for it by name; the rest
    # run as a user without a model would, unless they set up the tiny model themselves.
    for var in ("KYB_STORE", "KYB_CONFIG", "KYB_AGENT", "KYB_SESSION", "KYB_WORKSPACE", "KYB_OUTPUT",
                "KYB_MODEL", "KYB_MODEL_EN", "KYB_MODEL_URL", "KYB_EMBED_HELPER", "KYB_STAGE_AT"):
        monkeypatch.delenv(var, raising=False)
    # No detached background filler unless a test asks for one (tests/test_index_staged.py).
    monkeypatch.setenv("KYB_BACKGROUND", "off")
    # The USE vote (core/embed/package.py) is installed in the test venv: off unless a test turns it
    # on (tests/test_use_vote.py), so the suite's questions cost no third model.
    monkeypatch.setenv("KYB_USE", "off")
    monkeypatch.setenv("KYB_HELPER_IDLE", "60")  # embedding helpers started by tests do not linger
    monkeypatch.setenv("KYB_DEADLINES", os.environ.get("KYB_TEST_DEADLINES", "off"))
    from kyb_cli.api import reset_history_state

    reset_history_state()  # a call's wait policy set by an earlier test (a parsed --no-wait) never leaks
    yield home


@pytest.fixture
def store_path(tmp_path) -> Path:
    from kyb_cli.core.canon.repo import init_store

    path = tmp_path / "store"
    init_store(path)
    return path


@pytest.fixture
def store(store_path):
    from kyb_cli.core.canon.repo import Store

    return Store(store_path)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    """The tests' tiny model (tests/support/tiny_model.py), built once per test module."""
    from tests.support.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture
def tiny(tiny_dir, monkeypatch):
    """KYB_MODEL -> the tiny model, in-process embedding only (helper tests live elsewhere)."""
    monkeypatch.setenv("KYB_MODEL", str(tiny_dir))
    monkeypatch.setenv("KYB_EMBED_HELPER", "0")
    from kyb_cli.core import embed

    embed._EMBEDDERS.clear()
    return tiny_dir


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self):
        return json.loads(self.stdout)


class KybProcess:
    """Runs `python -m kyb_cli` against one store, as a separate process."""

    def __init__(self, store_path: Path, env: dict[str, str]):
        self.store_path = store_path
        self.env = env

    def _env(self, env: dict[str, str] | None) -> dict[str, str]:
        full_env = dict(self.env)
        if self.store_path is not None:
            full_env["KYB_STORE"] = str(self.store_path)
        if env:
            full_env.update(env)
        return full_env

    def __call__(self, *args: str, input: str | None = None, env: dict[str, str] | None = None,
                 cwd: str | Path | None = None, timeout: float = 60) -> Result:
        full_env = self._env(env)
        proc = subprocess.run(
            [sys.executable, "-m", "kyb_cli", *args],
            input=input if input is not None else "",
            capture_output=True, text=True, env=full_env, cwd=cwd, timeout=timeout,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)


class Kyb(KybProcess):
    """Runs the `kyb` command line against one store in this process, as a child would run it."""

    def __call__(self, *args: str, input: str | None = None, env: dict[str, str] | None = None,
                 cwd: str | Path | None = None, timeout: float = 60) -> Result:
        from tests.support.inprocess import run_inprocess

        return Result(*run_inprocess(args, self._env(env), cwd=cwd, input=input))


@pytest.fixture
def kyb(store_path, isolated_dirs) -> Kyb:
    return Kyb(store_path, dict(os.environ))


@pytest.fixture
def kyb_process(store_path, isolated_dirs) -> KybProcess:
    """kyb as a child process: only where the process boundary is what the test checks."""
    return KybProcess(store_path, dict(os.environ))


@pytest.fixture
def cli(store_path, monkeypatch):
    """In-process runner: cli("add", "--key", ...) -> Result (stdout is not a terminal: JSON)."""
    from click.testing import CliRunner

    from kyb_cli.cli.app import cli as kyb_cli

    monkeypatch.setenv("KYB_STORE", str(store_path))
    runner = CliRunner()

    def run(*args: str, input: str | None = None) -> Result:
        res = runner.invoke(kyb_cli, list(args), input=input, catch_exceptions=False)
        return Result(res.exit_code, res.stdout, res.stderr)

    return run
