"""The network side of sync: remotes, clone, fetch and push, all through the system `git`.

The system `git` is the only client that honours everything a user already set up for Git — the
SSH agent and `~/.ssh/config`, `core.sshCommand`, credential helpers (macOS keychain, GCM,
`gh auth`), `url.insteadOf`, proxies; pygit2/libgit2 would need each of those re-implemented as
callbacks. Every call goes through the one runner (canon/git.py): git never prompts here and has
a deadline (`KYB_SYNC_TIMEOUT`, default 60 s), so a missing credential is an error (exit 5), never a hang.
"""

from __future__ import annotations

import random
import subprocess
import time
from pathlib import Path
from typing import Any

import pygit2

from kyb_cli.core.canon import git
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.errors import RemoteError, StoreError, UsageError

REMOTE = "origin"
MAX_ATTEMPTS = 10  # concurrent fetches into one store waited out (and push races, see integrate.py)


def run_git(args: list[str], cwd: Path, *, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """`git args` over the network: text output, KYB_SYNC_TIMEOUT, RemoteError on timeout or no git."""
    return git.run(args, cwd, text=True, network=True, timeout=timeout)


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
            store.commit_empty_root()
    _track(store, REMOTE)
    store.kyb_dir.mkdir(parents=True, exist_ok=True)
    return store


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
