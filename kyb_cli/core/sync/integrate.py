"""Sharing a store through any Git remote: fetch, integrate record by record, push; nothing is lost.

The network part runs the system `git` (fetch, push, clone): it is the only client that honours
everything a user already set up for Git — the SSH agent and `~/.ssh/config`, `core.sshCommand`,
credential helpers (macOS keychain, GCM, `gh auth`), `url.insteadOf`, proxies. pygit2/libgit2 would
need each of those re-implemented as callbacks. Git never prompts here (`GIT_TERMINAL_PROMPT=0`, no
controlling terminal, stdin closed) and every call has a timeout (`KYB_SYNC_TIMEOUT`, default 60 s),
so a missing credential is an error (exit 5), never a hang.

Integration runs in-process with pygit2 under the store's writer lock (`kyb_cli.core.merge`): a
fast-forward when one side contains the other, else one merge commit whose parents are local HEAD and
the fetched remote head, so every version written anywhere stays reachable with its own commit time.
A push that loses a race (someone pushed between our fetch and push) fetches and integrates again,
a bounded number of times.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pygit2

from kyb_cli.core import merge
from kyb_cli.core.attribution import Attribution
from kyb_cli.core.errors import KybError, Rejected, RemoteError, StoreError
from kyb_cli.core.store import SYNC_JOURNAL, Store, Transaction, _advance_head

REMOTE = "origin"
DEFAULT_TIMEOUT = 60.0
MAX_ATTEMPTS = 10  # push races lost in a row before giving up (backoff grows to ~2 s)
LOG_NAME = "sync.log"
JOURNAL_NAME = SYNC_JOURNAL
LOG_LIMIT = 512 * 1024

Progress = Callable[[str], None]


# -- the system git ---------------------------------------------------------------------------------

def git_timeout() -> float:
    try:
        return float(os.environ.get("KYB_SYNC_TIMEOUT", DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX"):
        env.pop(var, None)  # a hook's environment must not redirect our git at another repository
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("GCM_INTERACTIVE", "never")
    env["LC_ALL"] = "C"  # git's messages are parsed below
    return env


def run_git(args: list[str], cwd: Path, *, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """Run `git args` without a terminal and with a deadline; the whole process group dies on timeout."""
    timeout = git_timeout() if timeout is None else timeout
    try:
        proc = subprocess.Popen(
            ["git", *args], cwd=str(cwd), env=_git_env(), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )
    except FileNotFoundError:
        raise RemoteError("sync needs the `git` command, and it is not on PATH") from None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.communicate()
        raise RemoteError(
            f"git {args[0]} gave no answer within {timeout:g} s (a credential prompt or an unreachable "
            "host?) — local reads and writes keep working; raise KYB_SYNC_TIMEOUT or sync later"
        ) from None
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


# git's advice after every failed connection; it hides the line that says what actually went wrong
_BOILERPLATE = ("Please make sure you have the correct access rights", "and the repository exists.")


def _git_said(proc: subprocess.CompletedProcess[str]) -> str:
    """git's own reason in one line: its last few lines, without hints and the access-rights advice."""
    lines = [ln.strip() for ln in (proc.stderr or "").splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith(("hint:", "To ")) and ln not in _BOILERPLATE]
    return " / ".join(lines[-3:]) or f"git exited with {proc.returncode}"


# -- remotes ----------------------------------------------------------------------------------------

def remote_url(store: Store, name: str = REMOTE) -> str | None:
    """The remote's URL as Git has it (set by `kyb remote`, `kyb init --clone` or plain `git remote`)."""
    try:
        return store.repo.remotes[name].url
    except (KeyError, ValueError, pygit2.GitError):
        return None


def current_branch(store: Store) -> str:
    try:
        target = store.repo.lookup_reference("HEAD").target
    except (KeyError, pygit2.GitError) as exc:
        raise StoreError(f"cannot read HEAD: {exc}") from None
    if not isinstance(target, str) or not target.startswith("refs/heads/"):
        raise StoreError("the store's HEAD is detached; check out a branch (git -C STORE switch main) to sync")
    return target[len("refs/heads/"):]


def set_remote(store: Store, url: str, name: str = REMOTE) -> dict[str, Any]:
    """Point `name` at `url` (create or change it) and make the current branch track it for `git pull`."""
    url = url.strip()
    if not url:
        from kyb_cli.core.errors import UsageError

        raise UsageError("the remote URL is empty — give one (ssh, https or a path), e.g. kyb remote git@host:team/store.git")
    repo = store.repo
    try:
        if remote_url(store, name) is None:
            repo.remotes.create(name, url)
        else:
            repo.remotes.set_url(name, url)
    except (ValueError, pygit2.GitError) as exc:
        raise RemoteError(f"cannot set remote {name}: {exc}") from None
    _track(store, name)
    return {"remote": name, "url": url}


def _track(store: Store, name: str) -> None:
    try:
        branch = current_branch(store)
    except StoreError:
        return
    config = store.repo.config
    config[f"branch.{branch}.remote"] = name
    config[f"branch.{branch}.merge"] = f"refs/heads/{branch}"


def clone(url: str, path: Path) -> Store:
    """A working store from a remote (`kyb init --clone`); an empty remote gives a fresh store to push."""
    path = Path(path).absolute()
    if path.exists() and any(path.iterdir()):
        raise StoreError(f"{path} exists and is not empty; kyb init --clone wants a new or empty directory")
    path.parent.mkdir(parents=True, exist_ok=True)
    proc = run_git(["clone", "--quiet", "--", url, str(path)], cwd=path.parent)
    if proc.returncode != 0:
        raise RemoteError(f"cannot clone {url}: {_git_said(proc)}")
    store = Store(path)
    repo = store.repo
    if repo.head_is_unborn:
        branches = sorted(r for r in repo.references if r.startswith(f"refs/remotes/{REMOTE}/")
                          and not r.endswith("/HEAD"))
        if branches:  # the remote's HEAD names a branch it does not have: take main, else the first
            ref = f"refs/remotes/{REMOTE}/main"
            ref = ref if ref in branches else branches[0]
            name = ref.rsplit("/", 1)[1]
            commit = repo.lookup_reference(ref).peel(pygit2.Commit)
            repo.branches.local.create(name, commit)
            repo.set_head(f"refs/heads/{name}")
            repo.checkout_head(strategy=pygit2.enums.CheckoutStrategy.FORCE)
        else:  # an empty remote: start the store here, the first sync pushes it
            repo.set_head("refs/heads/main")
            sig = store._signature()
            repo.create_commit("HEAD", sig, sig, "kyb: init store\n", repo.TreeBuilder().write(), [])
    _track(store, REMOTE)
    store.kyb_dir.mkdir(parents=True, exist_ok=True)
    return store


# -- sync -------------------------------------------------------------------------------------------

@dataclass
class Step:
    """What one integration did to local HEAD."""

    head: str | None
    kind: str  # up_to_date | ahead | fast_forward | merged | no_remote_branch
    incoming: int = 0
    conflicts: list[merge.Conflict] = field(default_factory=list)


def fetch(store: Store, name: str = REMOTE) -> None:
    """Update `refs/remotes/<name>/*`; a concurrent fetch into the same store is waited out, not an error."""
    for attempt in range(MAX_ATTEMPTS):
        proc = run_git(["fetch", "--quiet", "--prune", "--no-tags", name,
                        f"+refs/heads/*:refs/remotes/{name}/*"], cwd=store.path)
        if proc.returncode == 0 or "cannot lock ref" not in (proc.stderr or ""):
            break
        time.sleep(random.uniform(0.05, 0.2) * (attempt + 1))
    if proc.returncode != 0:
        raise RemoteError(
            f"cannot reach remote '{name}' ({remote_url(store, name)}): {_git_said(proc)} — local reads and "
            "writes keep working; sync again when the remote is reachable",
            remote=name,
        )


def push(store: Store, sha: str, branch: str, name: str = REMOTE) -> bool:
    """True when pushed; False when the remote moved since our fetch (retry); RemoteError otherwise."""
    proc = run_git(["push", "--porcelain", "--quiet", name, f"{sha}:refs/heads/{branch}"], cwd=store.path)
    if proc.returncode == 0:
        try:
            store.repo.references.create(f"refs/remotes/{name}/{branch}", sha, force=True)
        except (ValueError, pygit2.GitError):
            pass
        return True
    said = (proc.stdout or "") + "\n" + (proc.stderr or "")
    raced = ("[rejected]" in said and ("fetch first" in said or "non-fast-forward" in said)) or (
        "[remote rejected]" in said and ("failed to update ref" in said or "cannot lock ref" in said))
    if raced:
        return False
    raise RemoteError(f"push to remote '{name}' failed: {_git_said(proc)}", remote=name)


def _count(repo: pygit2.Repository, tip: pygit2.Oid, hide: pygit2.Oid | None) -> int:
    walker = repo.walk(tip)
    if hide is not None:
        walker.hide(hide)
    return sum(1 for _ in walker)


def integrate(store: Store, remote_head: pygit2.Commit | None, attribution: Attribution | None,
              name: str = REMOTE) -> Step:
    """Bring `remote_head` into local HEAD under the writer lock: fast-forward, or one merge commit."""
    repo = store.repo
    with store.locked():
        local = store.head_commit()
        if remote_head is None:
            return Step(head=str(local.id) if local else None, kind="no_remote_branch")
        if local is not None and (local.id == remote_head.id or repo.descendant_of(local.id, remote_head.id)):
            kind = "up_to_date" if local.id == remote_head.id else "ahead"
            return Step(head=str(local.id), kind=kind)
        incoming = _count(repo, remote_head.id, local.id if local else None)
        if local is None or repo.descendant_of(remote_head.id, local.id):
            changes = merge.tree_changes(repo, local.tree if local else None, remote_head.tree)
            merge.check_records(repo, remote_head.tree.id, list(changes), {p: remote_head for p in changes})
            _refuse_hand_edits(store, local, changes)
            elsewhere = merge.decided_elsewhere(repo, remote_head.id, local.id if local else None)
            _move_head(store, local, remote_head.id, changes, f"kyb: sync fast-forward to {name}")
            return Step(head=str(remote_head.id), kind="fast_forward", incoming=incoming, conflicts=elsewhere)
        base_id = repo.merge_base(local.id, remote_head.id)
        base = repo[base_id] if base_id is not None else None
        result = merge.integrate(repo, local, remote_head, base)
        ours = merge.tree_changes(repo, base.tree if base else None, local.tree)
        merge.check_records(repo, result.tree, sorted(set(ours) | set(result.changes)),
                            {**{p: local for p in ours}, **{p: remote_head for p in result.changes}})
        _refuse_hand_edits(store, local, result.changes)
        message = _merge_message(name, incoming, _count(repo, local.id, remote_head.id), result, attribution)
        sig = store._signature()
        commit = repo.create_commit(None, sig, sig, message, result.tree, [local.id, remote_head.id])
        elsewhere = merge.decided_elsewhere(repo, remote_head.id, local.id)
        _move_head(store, local, commit, result.changes, message.split("\n", 1)[0])
        for conflict in result.conflicts:
            conflict.merge = str(commit)
        return Step(head=str(commit), kind="merged", incoming=incoming, conflicts=result.conflicts + elsewhere)


def _merge_message(name: str, incoming: int, outgoing: int, result: merge.Integration,
                   attribution: Attribution | None) -> str:
    lines = [f"kyb: sync merge {name}", "",
             f"Integrated {incoming} remote and {outgoing} local commit(s) record by record; "
             f"{len(result.conflicts)} conflict(s).", ""]
    trailers = [("Kyb-Action", "sync")]
    trailers += [("Kyb-Conflict", c.trailer()) for c in result.conflicts]
    if attribution is not None:
        trailers += attribution.trailers()
    lines += [f"{k}: {v}" for k, v in trailers if v]
    return "\n".join(lines) + "\n"


def _refuse_hand_edits(store: Store, local: pygit2.Commit | None, changes: dict[str, Any]) -> None:
    tx = Transaction(store, None)  # type: ignore[arg-type]
    for path in sorted(changes):
        committed = merge.entry_at(local, path) if local is not None else None
        try:
            tx._refuse_hand_edits(path, committed[0] if committed else None)
        except Rejected:
            raise Rejected(
                f"{path} has uncommitted changes in the store's working tree and sync would change it; "
                f"nothing was merged — commit them (git -C {store.path} commit {path}) or discard them "
                f"(git -C {store.path} checkout -- {path}) and sync again"
            ) from None


def _move_head(store: Store, local: pygit2.Commit | None, new: pygit2.Oid, changes: dict[str, Any],
               log: str) -> None:
    """Move the branch, then bring the changed files and the Git index along (journaled for crashes)."""
    try:
        store.kyb_dir.mkdir(parents=True, exist_ok=True)
        journal = store.kyb_dir / JOURNAL_NAME
        tmp = journal.with_suffix(".tmp")
        tmp.write_text(json.dumps({"commit": str(new), "paths": sorted(changes)}))
        os.replace(tmp, journal)
        _advance_head(store.repo, local, new, log)
        store.update_worktree({p: _entry(store, new, p) for p in changes})
        journal.unlink(missing_ok=True)
    except (OSError, pygit2.GitError) as exc:
        raise StoreError(f"sync could not update the store, it is unchanged or recoverable: {exc}") from None


def _entry(store: Store, commit: pygit2.Oid | str, path: str) -> merge.Entry | None:
    return merge.entry_at(store.repo[commit].peel(pygit2.Commit), path)


def recover(store: Store) -> None:
    """Finish a sync that died after moving the branch but before updating the files (under the lock)."""
    journal = store.kyb_dir / JOURNAL_NAME
    try:
        data = json.loads(journal.read_text())
    except FileNotFoundError:
        return
    except (OSError, ValueError):
        data = None
    if isinstance(data, dict) and data.get("commit") == store.head_sha():
        paths = [p for p in data.get("paths", []) if isinstance(p, str) and ".." not in p.split("/")]
        store.update_worktree({p: _entry(store, data["commit"], p) for p in paths})
    journal.unlink(missing_ok=True)


def sync(store: Store, *, attribution: Attribution | None = None, name: str = REMOTE,
         attempts: int = MAX_ATTEMPTS, progress: Progress | None = None) -> dict[str, Any]:
    """Fetch, integrate, push; on a lost push race fetch and integrate again (at most `attempts` times)."""
    say = progress or (lambda _msg: None)
    url = remote_url(store, name)
    if url is None:
        raise RemoteError(f"the store has no remote '{name}' — set one with `kyb remote URL` "
                          f"(or `git -C {store.path} remote add {name} URL`)")
    branch = current_branch(store)
    reply: dict[str, Any] = {
        "remote": name, "url": url, "branch": branch, "fetched": False, "incoming": 0,
        "fast_forward": False, "merged": False, "merges": [], "pushed": False, "conflicts": [],
        "head": None, "attempts": 0,
    }
    for attempt in range(1, max(1, attempts) + 1):
        reply["attempts"] = attempt
        say(f"fetching from {name}")
        fetch(store, name)
        reply["fetched"] = True
        ref = store.repo.references.get(f"refs/remotes/{name}/{branch}")
        remote_head = ref.peel(pygit2.Commit) if ref is not None else None
        say("integrating")
        step = integrate(store, remote_head, attribution, name)
        reply["incoming"] += step.incoming
        reply["fast_forward"] = reply["fast_forward"] or step.kind == "fast_forward"
        if step.kind == "merged":
            reply["merged"] = True
            reply["merges"].append(step.head)
        reply["conflicts"].extend(c.to_json() for c in step.conflicts)
        reply["head"] = step.head
        if step.head is None or (remote_head is not None and step.head == str(remote_head.id)):
            return reply
        say(f"pushing to {name}")
        if push(store, step.head, branch, name):
            reply["pushed"] = True
            return reply
        time.sleep(min(2.0, 0.05 * 2 ** attempt) * random.uniform(0.5, 1.5))
    raise RemoteError(
        f"remote '{name}' kept moving: {attempts} attempts lost the push race; everything is committed "
        "locally, sync again", remote=name, head=reply["head"])


# -- automatic sync after writes --------------------------------------------------------------------

def log_path(store: Store) -> Path:
    return store.kyb_dir / LOG_NAME


def _log(store: Store, entry: dict[str, Any]) -> None:
    path = log_path(store)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_LIMIT:
            os.replace(path, path.with_suffix(".log.1"))
        entry = {"at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "pid": os.getpid(), **entry}
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
    except OSError:
        pass


def auto_enabled() -> bool:
    from kyb_cli.core.config import load_config

    section = load_config().get("sync")
    return isinstance(section, dict) and section.get("auto") is True


def after_write(store: Store) -> None:
    """With `sync.auto = true`, start a detached background sync; never raises, never waits for it."""
    try:
        if remote_url(store) is None or not auto_enabled():
            return
        if _background_running(store):
            return
        import sys

        log = open(log_path(store), "a", encoding="utf-8")
        try:
            subprocess.Popen(
                [sys.executable, "-m", "kyb_cli", "sync", "--background", "--store", str(store.path)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                start_new_session=True, close_fds=True, cwd=str(store.path),
            )
        finally:
            log.close()
    except Exception as exc:  # noqa: BLE001 - the write already succeeded; a failed start is only logged
        _log(store, {"ok": False, "error": f"could not start background sync: {exc}"})


def _try_lock(path: Path) -> int | None:
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError:
        os.close(fd)
        return None


def _background_running(store: Store) -> bool:
    """True when a background sync holds the sync lock and has been asked to go again (no new process)."""
    lock_path = store.kyb_dir / "sync.lock"
    fd = _try_lock(lock_path)
    if fd is not None:
        os.close(fd)
        return False
    (store.kyb_dir / "sync.again").touch()
    fd = _try_lock(lock_path)  # it may have finished before seeing our request: then start one
    if fd is not None:
        os.close(fd)
        return False
    return True


def background_sync(store: Store, attribution: Attribution | None = None) -> None:
    """One background sync at a time per store; a request arriving meanwhile makes the running one go again."""
    again = store.kyb_dir / "sync.again"
    store.kyb_dir.mkdir(parents=True, exist_ok=True)
    while True:
        fd = _try_lock(store.kyb_dir / "sync.lock")
        if fd is None:
            again.touch()
            return
        try:
            again.unlink(missing_ok=True)
            try:
                result = sync(store, attribution=attribution)
                _log(store, {"ok": True, "result": result})
            except KybError as exc:
                _log(store, {"ok": False, "exit": exc.exit_code, "error": exc.message})
            except Exception as exc:  # noqa: BLE001 - a background process has nobody else to tell
                _log(store, {"ok": False, "error": f"{type(exc).__name__}: {exc}"})
        finally:
            os.close(fd)
        if not again.exists():
            return
