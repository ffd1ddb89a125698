"""A peer's push is input we do not trust: fetch into quarantine, check, then let it in (or not).

Rules (docs/guide/sharing.md "Sharing a store"; tests/test_sync_hostile.py names each):
- refuse-unsafe: Git's own object checks run on every fetch (`fetch.fsckObjects`), and kyb adds its
  own over what the incoming tip would write: no `..`, `.` or `.git` component in any case or
  spelling (`.GIT`, `.git. `, `git~1`), no symlink, no gitlink, only plain files (100644) under
  the record directories, no blob over `KYB_SYNC_MAX_BLOB` bytes (default 16 MiB). Any of these
  refuses the whole sync or clone: `Refused` (exit 4) with `{"refused": [{commit, path, reason}]}`.
- quarantine: fetched objects land in a directory of their own (`GIT_OBJECT_DIRECTORY`, the store's
  objects as alternates, the way `git receive-pack` quarantines a push) and no ref is written; only
  an accepted fetch moves them into the store and updates `refs/remotes/<remote>/<branch>`. A
  refused fetch leaves the store's objects, refs, HEAD, index and working tree exactly as they were.
- held-out: record files at the tip that break the write rules are found here too (`problems`), so
  the integration can keep them out of conflicts and report them.
The commit named for a problem is the newest incoming commit that wrote that entry.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kyb_cli.core.canon import git
from kyb_cli.core.errors import RemoteError, StoreError
from kyb_cli.core.records import keys, limits, served

MAX_BLOB_DEFAULT = 16 * 1024 * 1024
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
FSCK = ["-c", "fetch.fsckObjects=true", "-c", "transfer.fsckObjects=true"]
NO_FSCK = ["-c", "fetch.fsckObjects=false", "-c", "transfer.fsckObjects=false"]
_FSCK_LINE = re.compile(r"error: object ([0-9a-f]{40}): (\w+): (.*)")
SCAN_LIMIT = 2000  # incoming commits scanned to name the culprit of a failed object check


@dataclass
class Problem:
    """One thing a peer sent that kyb will not take as it is."""

    commit: str
    path: str
    reason: str
    oid: str = ""  # the entry's object id (held-out bookkeeping); not part of the reply

    def to_json(self) -> dict[str, str]:
        return {"commit": self.commit, "path": self.path, "reason": self.reason}


class Refused(StoreError):
    """refuse-unsafe: nothing was written; the JSON line lists every problem."""

    def __init__(self, problems: list[Problem], *, what: str = "sync") -> None:
        first = problems[0]
        where = f"{first.path} in {first.commit[:12]}" if first.path else first.commit[:12]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(
            f"{what} refused: the remote holds content kyb will not write ({where}: {first.reason}){more}; "
            "nothing was changed here — the remote must be repaired (docs/guide/sharing.md, "
            "\"Repairing a remote\")",
            refused=[p.to_json() for p in problems],
        )
        self.problems = problems


SHALLOW = ("remote '{remote}' sent no usable history — a shallow clone (`git rev-parse "
           "--is-shallow-repository` says true there) cannot be synced with, and syncing again will not "
           "help: run `git fetch --unshallow` in that repository, or point kyb at a full copy")


def max_blob() -> int:
    from kyb_cli.core.settings import env_int

    return env_int("KYB_SYNC_MAX_BLOB", MAX_BLOB_DEFAULT, minimum=1)


# -- the checks ------------------------------------------------------------------------------------

def unsafe_entry(path: str, mode: str) -> str | None:
    """Why the tree entry (`path`, octal `mode`) must never be written, or None when it is fine."""
    reason = keys.unsafe_path(path) or limits.path_problem(path)
    if reason is not None:
        return reason
    if mode == "120000":
        return "a symbolic link (kyb never writes or reads through links)"
    if mode == "160000":
        return "a gitlink (submodule entry); a store holds only files"
    if mode not in ("100644", "100755", "040000"):
        return f"an unknown file mode {mode}"
    top = path.split("/", 1)[0]
    if top in keys.RECORD_DIRS and "/" in path and mode == "100755":
        return "an executable file under a record directory (records are plain 100644 files)"
    return None


# -- git in the quarantine -----------------------------------------------------------------------------

@dataclass
class Quarantine:
    """An object directory of its own inside `.git/kyb/`, seeing the store's objects as alternates."""

    git_dir: Path
    path: Path = field(init=False)

    def __post_init__(self) -> None:
        base = self.git_dir / "kyb"
        base.mkdir(parents=True, exist_ok=True)
        self.path = base / f"quarantine-{os.getpid()}"
        shutil.rmtree(self.path, ignore_errors=True)
        (self.path / "pack").mkdir(parents=True)
        (self.path / "info").mkdir()

    @property
    def env(self) -> dict[str, str]:
        return {"GIT_OBJECT_DIRECTORY": str(self.path),
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.git_dir / "objects")}

    def run(self, cwd: Path, *args: str, input: bytes | None = None, network: bool = False):
        return git.run(list(args), cwd, input=input, network=network, env=self.env)

    def admit(self) -> None:
        """Move the quarantined objects into the store (packs before their indexes), then drop it."""
        objects = self.git_dir / "objects"
        files = sorted(p for p in self.path.rglob("*") if p.is_file() and p.parent.name != "info")
        files.sort(key=lambda p: (p.suffix == ".idx", str(p)))  # an .idx never precedes its .pack
        for src in files:
            dst = objects / src.relative_to(self.path)
            if dst.exists():
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dst)
        self.drop()

    def drop(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


@dataclass
class Incoming:
    """An accepted fetch: the remote tip, and what the check found at it."""

    tip: str
    held_out: list[Problem] = field(default_factory=list)


def _fetch(q: Quarantine, cwd: Path, remote: str, branch: str, *, fsck: bool):
    return q.run(cwd, *(FSCK if fsck else NO_FSCK), "fetch", "--quiet", "--no-tags", "--refmap=",
                 remote, f"refs/heads/{branch}", network=True)


def _fetch_head(git_dir: Path) -> str | None:
    try:
        text = (git_dir / "FETCH_HEAD").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    first = text.split("\t", 1)[0].strip()
    return first if re.fullmatch(r"[0-9a-f]{40}", first) else None


def fetch(store_path: Path, git_dir: Path, remote: str, branch: str, local: str | None,
          said) -> Incoming | None:
    """Fetch `branch` of `remote` into quarantine and check it; None when the remote has no such branch.

    Raises Refused (nothing written) or RemoteError (unreachable). On success the objects are in
    the store and `refs/remotes/<remote>/<branch>` points at the tip.
    """
    from kyb_cli.core.canon import lock
    from kyb_cli.core.canon.permissions import refuse_unwritable

    refuse_unwritable(store_path, git_dir)  # the quarantine, the objects, the refs: all written here
    # One fetch at a time per store: git writes the fetched tip to the store's FETCH_HEAD.
    with lock.exclusive(git_dir / "kyb" / "fetch.lock", timeout=max(lock.lock_timeout(), 3 * git.network_timeout())):
        return _fetch_locked(store_path, git_dir, remote, branch, local, said)


def sweep_quarantines(git_dir: Path) -> None:
    """Remove the quarantine directories of syncs that were killed (call under the fetch lock: no
    other fetch of this store is running, so every quarantine left there is dead)."""
    base = git_dir / "kyb"
    try:
        stale = [p for p in base.iterdir() if p.name.startswith("quarantine-")]
    except OSError:
        return
    for path in stale:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _fetch_locked(store_path: Path, git_dir: Path, remote: str, branch: str, local: str | None,
                  said) -> Incoming | None:
    sweep_quarantines(git_dir)
    q = Quarantine(git_dir)
    try:
        proc = _fetch(q, store_path, remote, branch, fsck=True)
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", errors="replace") if isinstance(proc.stderr, bytes) else proc.stderr
            if "couldn't find remote ref" in err:
                return None
            if "shallow" in err:
                raise RemoteError(SHALLOW.format(remote=remote), remote=remote)
            failed = [m.groups() for m in map(_FSCK_LINE.match, err.splitlines()) if m]
            if failed:
                q.drop()
                q = Quarantine(git_dir)
                raise Refused(_name_fsck_failures(q, store_path, remote, branch, local, failed))
            _refuse_disk_full(store_path, git_dir, err)
            text = subprocess.CompletedProcess(proc.args, proc.returncode, _text(proc.stdout), err)
            raise RemoteError(
                f"cannot reach remote '{remote}': {said(text)} — local reads and writes keep working; "
                "sync again when the remote is reachable", remote=remote)
        tip = _fetch_head(git_dir)
        if tip is None:  # seen with a shallow remote: git takes nothing and says nothing
            raise RemoteError(SHALLOW.format(remote=remote), remote=remote)
        not_commit = _not_a_commit(q, store_path, tip, branch)
        if not_commit is not None:
            raise Refused([not_commit])
        problems, held = check_tip(q, store_path, tip, local)
        if problems:
            raise Refused(problems)
        q.admit()
        res = git.run(["update-ref", f"refs/remotes/{remote}/{branch}", tip], store_path)
        if res.returncode != 0:
            raise StoreError(f"cannot update refs/remotes/{remote}/{branch}: {res.stderr!r}")
        return Incoming(tip, held)
    finally:
        q.drop()


def _refuse_disk_full(store_path: Path, git_dir: Path, err: str) -> None:
    """A fetch that failed because the local disk is full is not an unreachable remote: the store
    error (exit 4) that names the store and what to free (canon/diskfull.py); the quarantine is dropped."""
    from kyb_cli.core.canon.diskfull import disk_full_error, is_disk_full

    if is_disk_full(RuntimeError(err), git_dir):
        raise disk_full_error(store_path)


def _not_a_commit(q: Quarantine, cwd: Path, tip: str, branch: str) -> Problem | None:
    """refuse-unsafe: a branch names a commit; a remote `main` pointing at a tree, a blob or a tag
    object is refused (nothing written) instead of failing deep in the merge."""
    res = q.run(cwd, "cat-file", "-t", tip)
    kind = _text(res.stdout).strip() if res.returncode == 0 else ""
    if kind == "commit":
        return None
    what = f"a {kind}" if kind else "an object that cannot be read"
    return Problem(tip, "", f"the remote's branch '{branch}' points at {what}, not a commit — a branch "
                            "holds commits; the remote must be repaired (point it at a commit)")


def _name_fsck_failures(q: Quarantine, cwd: Path, remote: str, branch: str, local: str | None,
                        failed: list[tuple[str, str, str]]) -> list[Problem]:
    """Git's checks refused objects: fetch again without them (still quarantined) only to say which
    commit and path; the objects are dropped right after."""
    git_said = {obj: f"{msg}: {text}" for obj, msg, text in failed}
    proc = _fetch(q, cwd, remote, branch, fsck=False)
    tip = _fetch_head(q.git_dir) if proc.returncode == 0 else None
    problems: list[Problem] = []
    if tip is not None:
        commits = _incoming(q, cwd, tip, local, oldest_first=True)[:SCAN_LIMIT]
        for sha in commits:
            if sha in git_said:
                problems.append(Problem(sha, "", f"Git's object check: {git_said[sha]}"))
        seen: set[tuple[str, str]] = set()
        for sha in commits:
            for path, mode, oid in _ls_tree(q, cwd, sha):
                reason = unsafe_entry(path, mode)
                if oid in git_said and reason is None:
                    reason = f"Git's object check: {git_said[oid]}"
                if reason is not None and (path, oid) not in seen:
                    seen.add((path, oid))
                    problems.append(Problem(sha, path, reason))
    problems = deepest(problems)
    if not problems:
        obj, msg, text = failed[0]
        problems.append(Problem(tip or obj, "", f"Git's object check: {msg}: {text} (object {obj})"))
    return problems


def deepest(problems: list[Problem]) -> list[Problem]:
    """Drop a problem on a directory when one inside it is reported (`.git` under `.git/hooks/x`)."""
    paths = {p.path for p in problems}
    return [p for p in problems if not p.path or not any(o.startswith(p.path + "/") for o in paths)]


def _incoming(q: Quarantine, cwd: Path, tip: str, local: str | None, *, oldest_first: bool = False) -> list[str]:
    args = ["rev-list", "--topo-order"] + (["--reverse"] if oldest_first else []) + [tip]
    if local:
        args += ["--not", local]
    res = q.run(cwd, *args)
    if res.returncode != 0:
        raise StoreError(f"git rev-list failed: {_text(res.stderr)}")
    return _text(res.stdout).split()


def _ls_tree(q: Quarantine, cwd: Path, rev: str) -> list[tuple[str, str, str]]:
    res = q.run(cwd, "ls-tree", "-r", "-t", "-z", "--full-tree", rev)
    out = []
    for item in _text(res.stdout).split("\0"):
        if item:
            meta, _tab, path = item.partition("\t")
            mode, _type, oid = meta.split()
            out.append((path, mode, oid))
    return out


def _text(data: Any) -> str:
    return data.decode("utf-8", errors="replace") if isinstance(data, bytes) else (data or "")


def changed_entries(run, cwd: Path, old: str | None, new: str) -> list[tuple[str, str, str]]:
    """(path, new mode, new oid) of every entry, trees included, that `new` adds or changes vs `old`."""
    res = run(cwd, "diff-tree", "-r", "-t", "-z", "--no-renames", old or EMPTY_TREE, new)
    if res.returncode != 0:
        raise StoreError(f"git diff-tree failed: {_text(res.stderr)}")
    parts = _text(res.stdout).split("\0")
    out = []
    i = 0
    while i + 1 < len(parts):
        meta, path = parts[i], parts[i + 1]
        i += 2
        if not meta.startswith(":"):
            continue
        _om, nm, _oo, no, status = meta[1:].split()[:5]
        if not status.startswith("D"):
            out.append((path, nm, no))
    return out


def check_tip(q: Quarantine, cwd: Path, tip: str, local: str | None) -> tuple[list[Problem], list[Problem]]:
    """(refused, held_out) at `tip` for what the remote changed since it and `local` parted (their
    merge base): unsafe entries, big blobs, records breaking the write rules. Nothing, when `local`
    already contains `tip`."""
    base = None
    if local:
        res = q.run(cwd, "merge-base", local, tip)
        base = _text(res.stdout).strip() or None if res.returncode == 0 else None
        if base == tip:
            return [], []
    entries = changed_entries(q.run, cwd, base, tip)
    unsafe: list[tuple[str, str, str]] = []
    for path, mode, oid in entries:
        reason = unsafe_entry(path, mode)
        if reason is not None:
            unsafe.append((path, oid, reason))
    blobs = [(p, o) for p, m, o in entries if m in ("100644", "100755")]
    sizes = _sizes(q, cwd, [o for _p, o in blobs])
    cap = max_blob()
    for path, oid in blobs:
        if sizes.get(oid, 0) > cap:
            unsafe.append((path, oid, f"a blob of {sizes[oid]:,} bytes, over the cap of {cap:,} bytes "
                                      "(KYB_SYNC_MAX_BLOB)"))
    unsafe += _over_totals(q, cwd, tip, local, blobs, sizes)
    unsafe += _doubled(q, cwd, tip, entries)
    held: list[tuple[str, str, str]] = []
    if not unsafe:
        candidates = [(p, o) for p, m, o in entries if m == "100644" and keys.is_record_candidate(p)]
        contents = dict(zip([o for _p, o in candidates],
                            [obj[2] if obj else b"" for obj in _cat(q, cwd, [o for _p, o in candidates])]))
        for path, oid in candidates:
            reason = served.record_problem(path, contents.get(oid, b""))
            if reason is not None:
                held.append((path, oid, reason))
    named = writers(q.run, cwd, tip, local, {(p, o) for p, o, _r in unsafe + held})
    refused = deepest([Problem(o if p == "(commit)" else named.get((p, o), tip), p, r, o)
                       for p, o, r in sorted(unsafe)])
    held_out = [Problem(named.get((p, o), tip), p, r, o) for p, o, r in sorted(held)]
    return refused, held_out


def _over_totals(q: Quarantine, cwd: Path, tip: str, local: str | None, blobs: list[tuple[str, str]],
                 sizes: dict[str, int]) -> list[tuple[str, str, str]]:
    """The per-sync totals (records/limits.py): what all incoming paths add up to (one 15 MiB blob
    under 1,000 paths is 15 GiB in every clone), and each incoming commit object's size."""
    out: list[tuple[str, str, str]] = []
    total, cap = sum(sizes.get(o, 0) for _p, o in blobs), limits.sync_incoming_max()
    if total > cap and blobs:
        path, oid = max(blobs, key=lambda b: sizes.get(b[1], 0))
        out.append((path, oid, f"this sync would bring in {total:,} bytes of files, over the cap of {cap:,} "
                               "(KYB_SYNC_MAX_INCOMING: raise it for this sync if the remote is trusted)"))
    commits = _incoming(q, cwd, tip, local)
    for oid, size in _sizes(q, cwd, commits).items():
        if size > limits.COMMIT_MAX_BYTES:
            out.append(("(commit)", oid, f"a commit object of {size:,} bytes (headers and message), over "
                                         f"the limit of {limits.COMMIT_MAX_BYTES:,}"))
    return out


def _sizes(q: Quarantine, cwd: Path, oids: list[str]) -> dict[str, int]:
    if not oids:
        return {}
    res = q.run(cwd, "cat-file", "--batch-check=%(objectname) %(objectsize)",
                input=("\n".join(oids) + "\n").encode())
    out = {}
    for line in _text(res.stdout).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


def _doubled(q: Quarantine, cwd: Path, tip: str, entries: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """A key the tip holds at both its paths (the old flat one and the fanned-out one): one key is
    one file, so such a tree is refused, whichever path it came in by (records/keys.py)."""
    seen: dict[str, tuple[str, str]] = {}
    for path, mode, oid in entries:
        key = keys.key_of_path(path)
        if key is not None and mode != "040000":
            seen.setdefault(key, (path, oid))
    if not seen:
        return []
    # the tip's record paths in one listing: a `tip:path` look-up per key re-reads a flat directory of
    # every key each time (git does not keep it), 50,000 incoming records in one commit took minutes
    res = q.run(cwd, "ls-tree", "-r", "-z", "--name-only", tip, "--", *keys.RECORD_DIRS)
    held = set(_text(res.stdout).split("\0"))
    out = []
    for key in sorted(seen):
        new, old = keys.paths_of_key(key)
        if new in held and old in held:
            out.append((*seen[key], f"the key '{key}' is held at two paths ({new} and {old}): one key is one file"))
    return out


def _cat(q: Quarantine, cwd: Path, oids: list[str]) -> list[tuple[str, str, bytes] | None]:
    if not oids:
        return []
    from kyb_cli.core.canon.git import parse_batch

    res = q.run(cwd, "cat-file", "--batch", input=("\n".join(oids) + "\n").encode())
    return parse_batch(res.stdout, len(oids))


def writers(run, cwd: Path, tip: str, local: str | None, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """For each (path, oid), the newest commit in `tip --not local` that set `path` to `oid`.

    One `git diff-tree --stdin` over the incoming commits, newest first; a non-merge writer is
    preferred (a merge only picks a side), a merge is named when nothing else wrote it.
    """
    if not wanted:
        return {}
    args = ["rev-list", "--topo-order", tip] + (["--not", local] if local else [])
    revs = _text(run(cwd, *args).stdout).split()
    if not revs:
        return {}
    res = run(cwd, "diff-tree", "--stdin", "-r", "-t", "-z", "--root", "-m", "--no-renames",
              input=("\n".join(revs) + "\n").encode())
    found: dict[tuple[str, str], str] = {}
    merges: dict[tuple[str, str], str] = {}
    current = None
    is_merge = False
    parts = _text(res.stdout).split("\0")
    i = 0
    while i < len(parts):
        item = parts[i]
        if not item.startswith(":"):
            words = item.split()
            if words and re.fullmatch(r"[0-9a-f]{40}", words[0]):
                current = words[0]
                is_merge = "(from" in item
            i += 1
            continue
        if i + 1 >= len(parts):
            break
        path = parts[i + 1]
        i += 2
        fields = item[1:].split()
        key = (path, fields[3])
        if key in wanted and current is not None:
            target = merges if is_merge else found
            target.setdefault(key, current)
    return {**merges, **found}
