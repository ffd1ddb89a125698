"""Which files `kyb import` reads: folders walked recursively with `.gitignore`-style excludes.

- `.gitignore` files inside an imported folder are honoured (each relative to its own directory,
  deeper ones after shallower, as git does), and so are `--exclude` patterns (relative to the folder
  given); matching uses `pathspec`'s GitIgnoreSpec (https://python-path-specification.readthedocs.io/).
- `.git` directories are never read.
- Symlinks are never followed: a linked file or directory is reported as skipped, saying whether it
  points out of the folder (its target is not read) or inside it (the target is imported from its
  own path, once).
- Only Markdown files (`.md`, `.markdown`) and plain-text notes (`.txt`, read as Markdown) are read from a folder; other files are reported as
  skipped ("not Markdown"), binary ones as binary. A file named on the command line is read in the
  format its suffix (or `--format`) says.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MARKDOWN_SUFFIXES = (".md", ".markdown")
TEXT_SUFFIXES = (".txt",)  # plain-text notes are Markdown without markup: read as Markdown by default
ROW_SUFFIXES = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv"}
READ_LIMIT = 4 * 1024 * 1024  # a bigger file cannot be a record (bodies are at most 1 MiB)


@dataclass
class Source:
    """A file to read (`fmt` set) or to report (`skip` set)."""

    shown: str  # the path as the reply shows it
    rel: str  # relative to the folder imported (the file name for a file given directly)
    root: str  # the folder imported (absolute), the manifest's key
    path: Path | None = None
    fmt: str = ""
    skip: str | None = None
    direct: bool = False  # named on the command line (followed if a symlink: the user chose it)


NOT_REGULAR = "not a regular file (a FIFO, socket or device is never opened)"


def shown_name(path: str) -> str:
    """A path as the reply shows it: valid UTF-8 on one line. Bytes that are not UTF-8 (surrogate
    escapes) become `\\xNN`, control characters (a newline in a name) `\\n`, `\\t`, `\\xNN`."""
    out = []
    for ch in path:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append(f"\\x{o - 0xDC00:02x}")
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif not ch.isprintable() or 0xD800 <= o <= 0xDFFF:
            out.append(f"\\x{o:02x}" if o < 256 else f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


def sources(paths: list[str], fmt: str, excludes: list[str]) -> list[Source]:
    """Every file under `paths` in a stable order (sorted by path within each argument)."""
    out: list[Source] = []
    for arg in paths:
        p = Path(arg)
        if p.is_symlink() and not p.exists():
            out.append(Source(shown=shown_name(arg), rel=p.name, root=str(p.parent.resolve()), skip="a broken symlink"))
        elif p.is_dir():
            out.extend(_walk(p, arg, fmt, excludes))
        elif not p.is_file():
            out.append(Source(shown=shown_name(arg), rel=p.name, root=str(p.resolve().parent), skip=NOT_REGULAR))
        else:
            rel = p.name
            out.append(Source(shown=shown_name(arg), rel=rel, root=str(p.resolve().parent), path=p,
                              fmt=_format_of(p.name, fmt, direct=True), direct=True))
    return out


def _format_of(name: str, fmt: str, *, direct: bool) -> str:
    if fmt != "auto":
        return fmt
    lower = name.lower()
    if lower.endswith(MARKDOWN_SUFFIXES + TEXT_SUFFIXES):
        return "md"
    suffix = os.path.splitext(lower)[1]
    if direct and suffix in ROW_SUFFIXES:
        return ROW_SUFFIXES[suffix]
    return "md" if direct else ""


def _walk(top: Path, shown_top: str, fmt: str, excludes: list[str]) -> list[Source]:
    import pathspec

    root = top.resolve()
    user = pathspec.GitIgnoreSpec.from_lines(excludes) if excludes else None
    specs: list[tuple[str, object]] = []  # (directory relative to root, its .gitignore spec)
    out: list[Source] = []

    def ignored(rel: str, is_dir: bool) -> bool:
        probe = rel + "/" if is_dir else rel
        if user is not None and user.match_file(probe):
            return True
        verdict = False
        for base, spec in specs:  # shallower first; a deeper file can re-include (`!pattern`)
            if base and not (rel == base or rel.startswith(base + "/")):
                continue
            sub = probe[len(base) + 1:] if base else probe
            result = spec.check_file(sub)
            if result.include is not None:
                verdict = result.include
        return verdict

    def shown(rel: str) -> str:
        return shown_name(os.path.join(shown_top, rel))

    def visit(directory: Path, rel_dir: str) -> None:
        gi = directory / ".gitignore"
        if gi.is_file() and not gi.is_symlink():
            try:
                lines = gi.read_text(encoding="utf-8", errors="replace").splitlines()
                specs.append((rel_dir, pathspec.GitIgnoreSpec.from_lines(lines)))
            except OSError:
                pass
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            out.append(Source(shown=shown(rel_dir) if rel_dir else shown_name(shown_top), rel=rel_dir, root=str(root),
                              skip=f"cannot read the folder: {exc.strerror}"))
            return
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.name == ".git":
                continue
            if entry.is_symlink():
                if ignored(rel, False):
                    continue
                out.append(Source(shown=shown(rel), rel=rel, root=str(root), skip=_symlink_reason(Path(entry.path), root)))
                continue
            if entry.is_dir():
                if not ignored(rel, True):
                    visit(Path(entry.path), rel)
                continue
            if ignored(rel, False) or entry.name == ".gitignore":
                continue
            if not entry.is_file():  # a FIFO, socket or device: listed, never opened
                out.append(Source(shown=shown(rel), rel=rel, root=str(root), skip=NOT_REGULAR))
                continue
            f = _format_of(entry.name, fmt, direct=False)
            if not f:
                out.append(Source(shown=shown(rel), rel=rel, root=str(root), path=Path(entry.path),
                                  skip="binary file" if is_binary(Path(entry.path)) else
                                  "not Markdown (name it on the command line, or --format md, to read it as Markdown)"))
                continue
            out.append(Source(shown=shown(rel), rel=rel, root=str(root), path=Path(entry.path), fmt=f))

    visit(top, "")
    return out


def _symlink_reason(link: Path, root: Path) -> str:
    try:
        target = link.resolve(strict=True)
    except (OSError, RuntimeError):
        return "symlink not followed (broken or a loop)"
    try:
        target.relative_to(root)
    except ValueError:
        return "symlink not followed: it points out of the folder"
    return "symlink not followed: its target inside the folder is imported from its own path"


def is_binary(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            head = f.read(8192)
    except OSError:
        return False
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a cut multi-byte character at the end is still text
    return False


def read_text(src: Source) -> tuple[str | None, str | None]:
    """(text, None) or (None, the reason it is skipped): binary, not UTF-8, too big, unreadable."""
    assert src.path is not None
    import errno

    import stat

    # O_NONBLOCK: a file swapped for a FIFO after the walk does not wait for a writer (fstat refuses it)
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if src.direct else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(src.path, flags)  # a file swapped for a symlink after the walk is not followed
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, "symlink not followed"
        return None, f"cannot read it: {exc.strerror}"
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None, NOT_REGULAR
    os.set_blocking(fd, True)
    limit = READ_LIMIT if src.fmt == "md" else None
    try:
        with os.fdopen(fd, "rb") as f:
            data = f.read(limit + 1) if limit else f.read()
    except OSError as exc:
        return None, f"cannot read it: {exc.strerror}"
    if limit and len(data) > limit:
        return None, f"file is larger than {READ_LIMIT // (1024 * 1024)} MiB; a record body is at most 1 MiB"
    if b"\0" in data[:8192]:
        return None, "binary file"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "not UTF-8 text (binary?)"
