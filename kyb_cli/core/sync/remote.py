"""Remotes and push: the network side of sync (the fetch is incoming.py's), all through the system `git`.

The system `git` is the only client that honours everything a user already set up for Git — the
SSH agent and `~/.ssh/config`, `core.sshCommand`, credential helpers (macOS keychain, GCM,
`gh auth`), `url.insteadOf`, proxies; pygit2/libgit2 would need each of those re-implemented as
callbacks. Every call goes through the one runner (canon/git.py): git never prompts here and has
a deadline (`KYB_SYNC_TIMEOUT`, default 60 s), so a missing credential is an error (exit 5), never a hang.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pygit2

from kyb_cli.core.canon import faults, git
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.errors import RemoteError, StoreError, UsageError

REMOTE = "origin"
MAX_ATTEMPTS = 10  # concurrent fetches into one store waited out (and push races, see flow.py)


def run_git(args: list[str], cwd: Path, *, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """`git args` over the network: text output, KYB_SYNC_TIMEOUT, RemoteError on timeout or no git."""
    return git.run(args, cwd, text=True, network=True, timeout=timeout)


# git's advice after every failed connection; it hides the line that says what actually went wrong
_BOILERPLATE = ("Please make sure you have the correct access rights", "and the repository exists.")


def git_said(proc: subprocess.CompletedProcess[str]) -> str:
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
    store.require_kyb_store()  # only stores are written, their config included
    import os

    from kyb_cli.core.canon.permissions import denied_path, permission_error

    if not os.access(store.git_dir, os.W_OK | os.X_OK):  # git writes config.lock there, then renames
        raise permission_error(Path(store.path), store.git_dir)  # a read-only store: exit 4, as documented
    repo = store.repo
    try:
        if remote_url(store, name) is None:
            repo.remotes.create(name, url)
        else:
            repo.remotes.set_url(name, url)
        track(store, name)
    except (ValueError, pygit2.GitError, OSError) as exc:
        denied = denied_path(exc)
        if denied is not None:
            raise permission_error(Path(store.path), denied if str(denied) not in ("", ".") else store.git_dir) from None
        raise RemoteError(f"cannot set remote {name}: {exc}") from None
    return {"remote": name, "url": url}


def track(store: Store, name: str) -> None:
    """The current branch tracks `name` (so a plain `git pull` in the store works too)."""
    try:
        branch = current_branch(store)
    except StoreError:
        return
    config = store.repo.config
    config[f"branch.{branch}.remote"] = name
    config[f"branch.{branch}.merge"] = f"refs/heads/{branch}"


def remote_branch(store: Store, name: str = REMOTE) -> str | None:
    """The branch the remote's HEAD names (else `main`, else its first branch); None when it has none."""
    proc = run_git(["ls-remote", "--symref", name, "HEAD", "refs/heads/*"], cwd=store.path)
    if proc.returncode != 0:
        raise RemoteError(f"cannot clone {remote_url(store, name)}: {git_said(proc)}", remote=name)
    head = None
    branches = []
    for line in proc.stdout.splitlines():
        if line.startswith("ref: ") and line.endswith("\tHEAD"):
            head = line[5:].split("\t", 1)[0]
        elif "\trefs/heads/" in line:
            branches.append(line.split("\t", 1)[1][len("refs/heads/"):])
    if head is not None and head.startswith("refs/heads/") and head[len("refs/heads/"):] in branches:
        return head[len("refs/heads/"):]
    if not branches:
        return None
    return "main" if "main" in branches else sorted(branches)[0]


def push(store: Store, sha: str, branch: str, name: str = REMOTE) -> bool:
    """True when pushed; False when the remote moved since our fetch (retry); RemoteError otherwise."""
    proc = run_git(["push", "--porcelain", "--quiet", name, f"{sha}:refs/heads/{branch}"], cwd=store.path)
    if proc.returncode == 0:
        try:
            faults.step("after-push")
            store.repo.references.create(f"refs/remotes/{name}/{branch}", sha, force=True)
        except (ValueError, pygit2.GitError, OSError) as exc:  # e.g. a full disk after the push landed:
            from kyb_cli.core.canon.diskfull import is_disk_full  # the tracking ref is a cache (the next
            from kyb_cli.core.canon.transaction import warn  # fetch sets it); the sync succeeded

            why = "the disk is full" if is_disk_full(exc, store.git_dir) else str(exc)
            warn(f"the sync landed: {sha[:12]} is on remote '{name}'; kyb could not note that in the store "
                 f"({why}) — nothing is lost, the next sync notes it")
        return True
    said = (proc.stdout or "") + "\n" + (proc.stderr or "")
    raced = ("[rejected]" in said and ("fetch first" in said or "non-fast-forward" in said)) or (
        "[remote rejected]" in said and ("failed to update ref" in said or "cannot lock ref" in said))
    if raced:
        return False
    raise RemoteError(f"push to remote '{name}' failed: {git_said(proc)}", remote=name)
