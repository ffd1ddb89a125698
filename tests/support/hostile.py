"""A hostile peer for sync tests: commits built with Git plumbing straight into a bare remote.

Nothing here goes through kyb: trees are made with `git mktree` (which accepts `..`, `.git`,
symlinks, gitlinks and odd modes) and commits with `git hash-object --literally` (any commit time,
any message), so a test can push exactly what a malicious or broken peer would. The victim is a
store driven only through the CLI (`python -m kyb_cli`), the way a user runs it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "peer", "GIT_AUTHOR_EMAIL": "peer@example.invalid",
           "GIT_COMMITTER_NAME": "peer", "GIT_COMMITTER_EMAIL": "peer@example.invalid",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}
BLOB, EXEC, LINK, TREE, GITLINK = "100644", "100755", "120000", "040000", "160000"


def git(*args: str, cwd: Path | None = None, input: bytes | str | None = None,
        check: bool = True) -> str:
    env = {**os.environ, **GIT_ENV}
    data = input.encode() if isinstance(input, str) else input
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, input=data, capture_output=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout.decode(errors="replace").strip()


def record_text(key: str, title: str | None = None, body: str = "", **fields) -> str:
    """A record file as kyb writes it (front matter keys in kyb's order are not needed to parse)."""
    lines = ["+++", f'key = "{key}"', f'title = "{title or key}"']
    for name, value in fields.items():
        lines.append(f"{name} = {json.dumps(value)}")
    lines.append("+++")
    return "\n".join(lines) + "\n" + (f"\n{body}\n" if body else "")


@dataclass
class Entry:
    mode: str
    sha: str


class Peer:
    """Writes objects into the bare `remote` and moves its branch: a peer with push rights."""

    def __init__(self, remote: Path, branch: str = "main") -> None:
        self.remote = remote
        self.branch = branch
        self.when = 1_800_000_000

    def g(self, *args: str, input: bytes | str | None = None, check: bool = True) -> str:
        return git("--git-dir", str(self.remote), *args, input=input, check=check)

    def tip(self) -> str | None:
        out = self.g("rev-parse", "--verify", "-q", f"refs/heads/{self.branch}", check=False)
        return out or None

    def files(self, rev: str | None = None) -> dict[str, Entry]:
        """Every non-tree entry of `rev`'s tree by full path."""
        rev = rev or self.tip()
        if rev is None:
            return {}
        out: dict[str, Entry] = {}
        for line in self.g("ls-tree", "-r", "-z", "--full-tree", rev).split("\0"):
            if not line:
                continue
            meta, _tab, path = line.partition("\t")
            mode, _type, sha = meta.split()
            out[path] = Entry(mode, sha)
        return out

    def blob(self, data: bytes | str) -> str:
        return self.g("hash-object", "-w", "--stdin", input=data)

    def blobs(self, datas: list[bytes]) -> list[str]:
        """Many blobs written as one pack by `git fast-import` (their shas in order): a bulk push
        without a loose object file each (50,000 of those took ~8 s of a test)."""
        import tempfile

        stream = bytearray()
        for i, data in enumerate(datas, 1):
            stream += b"blob\nmark :%d\ndata %d\n" % (i, len(data)) + data + b"\n"
        with tempfile.TemporaryDirectory() as tmp:
            marks = Path(tmp) / "marks"
            self.g("fast-import", "--quiet", f"--export-marks={marks}", input=bytes(stream))
            got = dict(line.split() for line in marks.read_text().splitlines())
        return [got[f":{i}"] for i in range(1, len(datas) + 1)]

    def tree(self, files: dict[str, Entry]) -> str:
        """Nested trees from full paths; components are taken literally (`..`, `.git`)."""
        root: dict = {}
        for path, entry in files.items():
            node = root
            parts = path.split("/")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = entry
        return self._mktree(root)

    def _mktree(self, node: dict) -> str:
        lines = []
        for name, value in node.items():
            if isinstance(value, dict):
                lines.append(f"{TREE} tree {self._mktree(value)}\t{name}")
            else:
                kind = {TREE: "tree", GITLINK: "commit"}.get(value.mode, "blob")
                lines.append(f"{value.mode} {kind} {value.sha}\t{name}")
        return self.g("mktree", "--missing", input="\n".join(lines) + "\n")

    def commit(self, tree: str, parents: list[str], message: str = "peer: edit\n",
               when: int | None = None) -> str:
        if when is None:
            self.when += 10
            when = self.when
        head = [f"tree {tree}"] + [f"parent {p}" for p in parents]
        head += [f"author peer <peer@example.invalid> {when} +0000",
                 f"committer peer <peer@example.invalid> {when} +0000"]
        raw = "\n".join(head) + "\n\n" + message
        return self.g("hash-object", "-t", "commit", "-w", "--stdin", "--literally", input=raw)

    def push(self, commit: str) -> str:
        """Move the remote's branch to `commit` (a force push: the remote accepts anything)."""
        self.g("update-ref", f"refs/heads/{self.branch}", commit)
        return commit

    def push_records(self, texts: dict[str, str], folder: Path, message: str) -> str:
        """One commit on the tip adding `texts` (key → record file), the blobs written in one
        `hash-object` call through files in `folder` (a bulk peer push for the sync benches)."""
        folder.mkdir(exist_ok=True)
        paths = []
        for i, text in enumerate(texts.values()):
            path = folder / f"{i}.md"
            path.write_text(text)
            paths.append(str(path))
        shas = self.g("hash-object", "-w", "--stdin-paths", input="\n".join(paths) + "\n").split()
        from kyb_cli.core.records.keys import path_of_key

        files = self.files()
        for key, sha in zip(texts, shas):
            files[path_of_key(key)] = Entry(BLOB, sha)  # a peer on the fanned-out layout
        return self.push(self.commit(self.tree(files), [self.tip()], message))

    def write(self, changes: dict[str, tuple[str, bytes | str] | Entry | None], *,
              message: str = "peer: edit\n", when: int | None = None,
              parents: list[str] | None = None) -> str:
        """One commit on the tip: path -> (mode, content) | Entry | None (removed); pushed."""
        files = self.files()
        for path, change in changes.items():
            if change is None:
                files.pop(path, None)
            elif isinstance(change, Entry):
                files[path] = change
            else:
                mode, data = change
                files[path] = Entry(mode, self.blob(data))
        tip = self.tip()
        parents = parents if parents is not None else ([tip] if tip else [])
        return self.push(self.commit(self.tree(files), parents, message, when))


def snapshot(store: Path) -> dict:
    """What a refused sync must leave exactly as it was: HEAD, index, working tree, hooks, config."""
    gdir = store / ".git"
    worktree = {}
    for path in sorted(store.rglob("*")):
        rel = path.relative_to(store)
        if rel.parts and rel.parts[0] == ".git":
            continue
        worktree[str(rel)] = ("link", os.readlink(path)) if path.is_symlink() else (
            ("dir", "") if path.is_dir() else ("file", hashlib.sha1(path.read_bytes()).hexdigest()))
    index = gdir / "index"
    return {
        "head": git("rev-parse", "HEAD", cwd=store),
        "index": hashlib.sha1(index.read_bytes()).hexdigest() if index.exists() else None,
        "worktree": worktree,
        "hooks": sorted(p.name for p in (gdir / "hooks").iterdir()) if (gdir / "hooks").exists() else [],
        "config": (gdir / "config").read_text(),
    }


def outside_files(root: Path, *, skip: tuple[Path, ...]) -> set[str]:
    """Every path under `root` except the trees in `skip` (stores and remotes)."""
    out = set()
    for path in root.rglob("*"):
        if any(path == s or s in path.parents for s in skip):
            continue
        out.add(str(path.relative_to(root)))
    return out


def kyb_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KYB_", "GIT_"))}
    env.update(GIT_ENV)
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"),
               XDG_CACHE_HOME=str(home / "cache"), KYB_DEADLINES="off", KYB_HELPER_IDLE="60",
               GIT_CONFIG_GLOBAL=str(home / "gitconfig"))
    return env


def run_kyb(env: dict[str, str], *args: str, store: Path | None = None, input: str = "",
            timeout: float = 120, extra: dict[str, str] | None = None,
            process: bool = False) -> subprocess.CompletedProcess[str]:
    """`kyb ARGS` with `env` as the whole environment: in this process as a child would run it
    (tests/support/inprocess.py), or as a child process with `process=True`."""
    full = dict(env)
    if store is not None:
        full["KYB_STORE"] = str(store)
    full.update(extra or {})
    if not process:
        from tests.support.inprocess import run_inprocess

        code, out, err = run_inprocess(args, full, input=input)
        return subprocess.CompletedProcess(["kyb", *args], code, out, err)
    return subprocess.run([sys.executable, "-m", "kyb_cli", *args], input=input, capture_output=True,
                          text=True, env=full, timeout=timeout)


def refused_report(stderr: str) -> list[dict]:
    """The refusal contract: exactly one `kyb:` line and one JSON line `{"refused": [...]}`."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 2, f"want a kyb line and a JSON line, got: {stderr!r}"
    assert lines[0].startswith("kyb: "), lines
    data = json.loads(lines[1])
    assert list(data) == ["refused"] and data["refused"], data
    for item in data["refused"]:
        assert set(item) == {"commit", "path", "reason"}, item
        assert isinstance(item["reason"], str) and item["reason"]
    return data["refused"]


# -- permissions: a process that the file modes bind (root bypasses them; this drops that power) ----

def unprivileged() -> list[str]:
    """A command prefix under which file modes bind: nothing for a normal user; for root,
    `setpriv` without the capabilities that override them (CAP_DAC_OVERRIDE and friends)."""
    import shutil

    import pytest

    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: file modes cannot be made to bind")
    return ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search,-fowner"]


def kyb_bound(home: Path | dict, store: Path, *args: str, input: str = "", extra: dict | None = None,
              fault: tuple[str, str] | None = None):
    """`kyb ARGS` in a subprocess that file modes bind (the process boundary is the contract);
    `home`: a home directory, or a ready environment (the team fixture's); `fault`: (POINT, ACTION)
    of the test-only fault runner (tests/support/faults.py)."""
    base = home if isinstance(home, dict) else kyb_env(home)
    env = {**base, "KYB_STORE": str(store), "KYB_BACKGROUND": "off", **(extra or {})}
    runner = ["tests.support.faults", *fault] if fault else ["kyb_cli"]
    return subprocess.run([*unprivileged(), sys.executable, "-m", *runner, *args], input=input,
                          capture_output=True, text=True, env=env, timeout=120)
