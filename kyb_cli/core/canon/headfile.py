"""Read a store's HEAD from the files under `.git/` without importing pygit2.

The query path only needs to know whether HEAD moved since the index was built; importing pygit2
costs 70-110 ms, more than the whole query. Anything unusual (reftable, odd refs) returns None and
the caller falls back to pygit2, so this is an optimisation, never the authority.
"""

from __future__ import annotations

import os
import re

from kyb_cli.core.errors import StoreError
from kyb_cli.core.known import made_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`

_SHA = re.compile(r"^[0-9a-f]{40}$")


def git_dir(store_path: Path) -> Path:
    """The store's Git directory (`.git/`, or where a `.git` file's `gitdir:` points); a StoreError
    when its `kyb/` is a symbolic link (`refuse_linked_kyb_dir`)."""
    return made_path(git_dir_str(store_path))


def git_dir_str(store_path: Path | str) -> str:
    """`git_dir` as a string: the query path joins strings and never imports pathlib (issue 38)."""
    plain = os.path.join(store_path, ".git")  # strings first: a door asks on every answer
    if os.path.isdir(plain):
        if os.path.islink(os.path.join(plain, "kyb")):
            refuse_linked_kyb_dir(plain, store_path)
        return plain
    from pathlib import Path  # a `.git` file (a linked worktree) or no store: not the usual answer

    dot = Path(plain)
    if dot.is_file():
        try:
            text = dot.read_text(encoding="utf-8").strip()
        except OSError:
            text = ""
        if text.startswith("gitdir:"):
            target = Path(text[len("gitdir:"):].strip())
            return str(refuse_linked_kyb_dir(target if target.is_absolute() else (dot.parent / target), store_path))
    if not os.path.exists(store_path):
        raise StoreError(f"no store at {store_path} — create one with `kyb init {store_path}`")
    raise StoreError(f"{store_path} is not a kyb store (no Git repository) — create one with `kyb init {store_path}`")


def refuse_linked_kyb_dir(gdir: Path, store_path: Path | str = "") -> Path:
    """`gdir`, unless its `kyb/` (index, locks, journal, quarantine) is a symbolic link: kyb writes
    nothing through a link, so the index and locks would land outside the store (issue 37 item 6).
    A StoreError (exit 4) naming the link and the fix, before anything is written there."""
    kyb = os.path.join(gdir, "kyb")
    if os.path.islink(kyb):
        try:
            target = f" (to {os.readlink(kyb)})"
        except OSError:
            target = ""
        raise StoreError(f"{kyb} is a symbolic link{target}: kyb keeps its index, locks and journal inside "
                         f"the store and never writes through a link — nothing was written; fix: remove the "
                         f"link (rm {kyb}; its target is left as it is, kyb makes a fresh directory), then "
                         f"try again", path=str(store_path or gdir))
    return made_path(os.fspath(gdir))


def _read(path: str) -> str:
    """Path.read_text(encoding="ascii") without a Path, and without the ascii codec's import (~0.3 ms
    of a one-shot query, issue 38): UnicodeDecodeError past ASCII, newlines read as text mode reads them."""
    with open(path, "rb") as fh:
        data = fh.read()
    if not data.isascii():
        raise UnicodeDecodeError("ascii", data, 0, len(data), "ordinal not in range(128)")
    return data.decode().replace("\r\n", "\n").replace("\r", "\n")


def _read_ref(gdir: Path, ref: str) -> str | None:
    try:
        text = _read(os.path.join(gdir, ref)).strip()
    except (OSError, UnicodeDecodeError):
        text = None
    if text is not None:
        return text if _SHA.match(text) else None
    # A worktree keeps branch refs in the common dir. Strings, as above: a store after `git gc` or a
    # clone has its refs packed, and its queries import no pathlib either (issue 38).
    common = gdir
    try:
        with open(os.path.join(gdir, "commondir")) as fh:
            common_rel = fh.read().strip()
        common = os.path.join(gdir, common_rel)  # an absolute common_rel is taken as it is
        text = _read(os.path.join(common, ref)).strip()
        if _SHA.match(text):
            return text
    except (OSError, UnicodeDecodeError):
        pass
    try:
        with open(os.path.join(common, "packed-refs"), encoding="utf-8") as fh:
            packed = fh.read()
    except (OSError, UnicodeDecodeError):
        return None
    for line in packed.splitlines():
        if line.endswith(" " + ref):
            sha = line.split(" ", 1)[0]
            return sha if _SHA.match(sha) else None
    return None


def head_sha(gdir: Path) -> str | None:
    """HEAD's commit sha, or None when it cannot be told from the files (unborn, unusual layout)."""
    try:
        text = _read(os.path.join(gdir, "HEAD")).strip()
    except (OSError, UnicodeDecodeError):
        return None
    if _SHA.match(text):
        return text
    if text.startswith("ref:"):
        ref = text[4:].strip()
        if ref.startswith("refs/") and ".." not in ref:
            return _read_ref(gdir, ref)
    return None
