"""Read commits and blobs through the `git` program: `git log --raw` and `git cat-file --batch`.

A full rebuild needs one tree diff per commit; git's diff of large trees out of a packfile is ~10x
faster than pygit2's, and the catch-up path then needs no pygit2 import at all (70-110 ms).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from kyb_cli.core.canon import git
from kyb_cli.core.errors import StoreError
from kyb_cli.core.records.keys import key_of_path

_BASE = ["-c", "core.quotepath=off", "-c", "log.showSignature=false", "-c", "diff.renames=false"]


@dataclass
class Commit:
    sha: str
    when: int
    parents: list[str]
    changes: dict[str, str | None] = field(default_factory=dict)  # path -> blob (None: absent)


def available() -> bool:
    return git.available()


def _git(store_path: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    """Local plumbing through the one git runner (canon/git.py): scrubbed environment, a deadline."""
    return git.run(["-C", str(store_path), *_BASE, *args], cwd=Path(store_path), input=input)


def head(store_path: Path) -> str | None:
    res = _git(store_path, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    out = res.stdout.decode().strip()
    return out if res.returncode == 0 and out else None


def is_ancestor(store_path: Path, old: str, new: str) -> bool:
    return _git(store_path, "merge-base", "--is-ancestor", old, new).returncode == 0


def commits(store_path: Path, head_sha: str, since: str | None = None) -> Iterator[Commit]:
    """Commits reachable from `head_sha` and not from `since`, parents first, with record changes.

    A merge's changes are the paths that differ from any of its parents, with the merged blob.
    """
    rng = [head_sha] if since is None else [f"{since}..{head_sha}"]
    res = _git(store_path, "log", "--raw", "--no-renames", "--no-abbrev", "--root", "--topo-order",
               "--reverse", "--diff-merges=separate", "--no-ext-diff", "--format=C %H %ct %P",
               *rng, "--", "knowledge", "incidents", "tasks")
    if res.returncode != 0:
        raise StoreError(f"git log failed: {res.stderr.decode(errors='replace').strip()}")
    # Paths limit the diff but also hide commits that touch no record; list every commit separately.
    all_res = _git(store_path, "rev-list", "--topo-order", "--reverse", "--timestamp", *rng)
    if all_res.returncode != 0:
        raise StoreError(f"git rev-list failed: {all_res.stderr.decode(errors='replace').strip()}")
    changes: dict[str, dict[str, str | None]] = {}
    parents: dict[str, list[str]] = {}
    current: dict[str, str | None] | None = None
    for line in res.stdout.decode("utf-8", errors="replace").splitlines():
        if line.startswith("C "):
            fields = line.split()
            sha = fields[1]
            parents[sha] = fields[3:]
            current = changes.setdefault(sha, {})
        elif line.startswith(":") and current is not None:
            meta, _tab, path = line.partition("\t")
            if key_of_path(path) is None:
                continue
            parts = meta.split()
            status, dst = parts[4], parts[3]
            current[path] = None if status.startswith("D") else dst
    for line in all_res.stdout.decode().splitlines():
        when, sha = line.split()
        yield Commit(sha, int(when), parents.get(sha, []), changes.get(sha, {}))


def blobs(store_path: Path, shas: list[str]) -> dict[str, bytes]:
    """Blob contents by sha, in one `git cat-file --batch` call."""
    if not shas:
        return {}
    res = _git(store_path, "cat-file", "--batch", input=("\n".join(shas) + "\n").encode())
    if res.returncode != 0:
        raise StoreError(f"git cat-file failed: {res.stderr.decode(errors='replace').strip()}")
    out: dict[str, bytes] = {}
    data = res.stdout
    pos = 0
    while pos < len(data):
        nl = data.index(b"\n", pos)
        header = data[pos:nl].split()
        pos = nl + 1
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        out[header[0].decode()] = data[pos:pos + size]
        pos += size + 1
    return out
