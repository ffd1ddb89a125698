"""`kyb check`: validate a store as plain files, the way a pre-commit hook or CI sees it.

Writes through kyb are validated before they are committed; hand edits and merges are not. This
checks record files on disk with the same rules: front matter (record.parse), key/path agreement,
the write rules (validate.validate, secrets included), `[[key]]` links that name no record, and
two files claiming one key. Each problem carries a file and a line so editors and hooks can jump.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from kyb_cli.core.canon.nofollow import LinkInTheWay
from kyb_cli.core.canon.nofollow import read_file as read_record_file  # never through a link, never waits on a FIFO
from kyb_cli.core.errors import KybError
from kyb_cli.core.records.keys import RECORD_DIRS, is_record_candidate, paths_of_key
from kyb_cli.core.records.model import Record, RecordFormatError, parse
from kyb_cli.core.records.secrets import scan as scan_secrets
from kyb_cli.core.records.validate import is_valid_key, validate

# `[[key]]` or `[[key|label]]`; only slug-shaped targets are links (not `[[affected]]` in prose code).
_LINK_RE = re.compile(r"\[\[([a-z0-9](?:[a-z0-9-]*[a-z0-9])?)(?:\|[^\]\n]*)?\]\]")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_INLINE_CODE_RE = re.compile(r"`[^`\n]*`")


NOT_PLAIN = ("a symbolic link or not a plain file: kyb never reads a record through a link "
             "(replace it with a plain file)")


@dataclass(frozen=True)
class Problem:
    path: str  # as shown to the user
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "message": self.message}


@dataclass
class CheckReport:
    checked: int
    problems: list[Problem]

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, object]:
        return {"ok": self.ok, "checked": self.checked, "problems": [p.to_json() for p in self.problems]}


@dataclass
class _File:
    root: Path  # the store directory (parent of knowledge/, incidents/, tasks/)
    rel: str | None  # store-relative path, None when the file is not in a record directory
    shown: str


def record_files(root: Path) -> list[Path]:
    """Every record file in a store's working tree (`<dir>/<h>/<key>.md` and the old `<dir>/<key>.md`)."""
    out: list[Path] = []
    for directory in RECORD_DIRS:
        base = root / directory
        if base.is_dir():
            out.extend(_md_entries(base))
    return out


def _md_entries(directory: Path) -> list[Path]:
    """The `*.md` entries of one record directory and of its bucket directories that are not
    directories — links, FIFOs and devices included, so the check reports them (check_files reads
    without following)."""
    found = [*directory.glob("*.md"), *(p for sub in directory.iterdir()
                                       if sub.is_dir() and not sub.is_symlink() for p in sub.glob("*.md"))]
    return sorted(p for p in found if p.is_symlink() or not p.is_dir())


def _shown(path: Path, given: str | None = None) -> str:
    if given is not None:
        return given
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _locate(path: Path, shown: str) -> _File:
    absolute = path.absolute()
    parent = absolute.parent
    if parent.name in RECORD_DIRS:
        return _File(parent.parent, f"{parent.name}/{absolute.name}", shown)
    if parent.parent.name in RECORD_DIRS:  # a bucket directory (records/keys.py)
        return _File(parent.parent.parent, f"{parent.parent.name}/{parent.name}/{absolute.name}", shown)
    return _File(parent, None, shown)


def expand(paths: Iterable[str]) -> list[_File]:
    """Files to check from command-line paths: files as given, directories as their record files."""
    files: list[_File] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            absolute = path.absolute()
            if absolute.name in RECORD_DIRS:  # one record directory of a store
                found = _md_entries(absolute)
            else:
                found = record_files(absolute)
            for file in found:
                shown = str(Path(given) / file.relative_to(absolute))
                files.append(_locate(file, shown))
        else:
            files.append(_locate(path, given))
    return files


def check_store(root: Path) -> CheckReport:
    """Check every record file in the working tree of the store at `root`."""
    return check_files([_locate(p, _shown(p)) for p in record_files(Path(root))])


def enclosing_store(start: Path) -> Path | None:
    """The Git work tree around `start` when it holds record directories: a store checked out by
    hand (no .kyb.toml), which is what `kyb check` run inside it means."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory if any((directory / d).is_dir() for d in RECORD_DIRS) else None
    return None


def check_paths(paths: Iterable[str]) -> CheckReport:
    return check_files(expand(paths))


def check_files(files: list[_File]) -> CheckReport:
    _KEYS_CACHE.clear()  # one call sees one moment of the working tree
    problems: list[Problem] = []
    parsed: list[tuple[_File, Record, str]] = []
    for file in files:
        path = file.root / file.rel if file.rel else Path(file.shown)
        if not path.exists() and not path.is_symlink():
            problems.append(Problem(file.shown, 1, "no such file"))
            continue
        if file.rel is None or _named_key(file.rel) is None:
            problems.append(Problem(file.shown, 1, "not a record file: records are knowledge/<h>/<key>.md, "
                                                   "incidents/<h>/<key>.md or tasks/<h>/<key>.md"))
            continue
        try:
            data = read_record_file(file.root, file.rel)
        except LinkInTheWay:
            problems.append(Problem(file.shown, 1, NOT_PLAIN))
            continue
        except OSError as exc:
            problems.append(Problem(file.shown, 1, f"cannot read: {exc.strerror}"))
            continue
        if data is None:
            problems.append(Problem(file.shown, 1, "no such file"))
            continue
        try:
            record = parse(data, path=file.rel)
        except RecordFormatError as exc:
            problems.append(_format_problem(file.shown, exc))
            continue
        text = data.decode("utf-8")
        problems.extend(_file_problems(file, record, text))
        parsed.append((file, record, text))

    problems.extend(_duplicate_keys(parsed))
    problems.extend(_broken_links(parsed))
    return CheckReport(checked=len(files), problems=problems)


def _named_key(rel: str) -> str | None:
    """The key a record file's name says (the key authority's candidate rule); check then reports
    every way the file breaks the rules (wrong directory for the key, front matter key, write rules)."""
    return rel.rsplit("/", 1)[1][:-3] if is_record_candidate(rel) else None


_TOML_AT_RE = re.compile(r" \(at line (\d+), column \d+\)$")


def _format_problem(shown: str, exc: RecordFormatError) -> Problem:
    """A parse error at its file line (tomllib counts from the first line after `+++`)."""
    m = _TOML_AT_RE.search(exc.reason)
    if m:
        return Problem(shown, int(m.group(1)) + 1, exc.reason[:m.start()])
    return Problem(shown, exc.line or 1, exc.reason)


def _field_line(text: str, name: str) -> int:
    """The line where front matter field `name` is set (1-based), else the first line."""
    pattern = re.compile(rf"^\s*{re.escape(name)}\s*=", re.MULTILINE)
    m = pattern.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else 1


def _body_start(text: str) -> int:
    """Line number of the first body line (after the closing +++ and one blank line)."""
    lines = text.split("\n")
    for i, line in enumerate(lines[1:], start=2):
        if line.rstrip("\r").rstrip() == "+++":
            return min(i + 1, len(lines))
    return 1


def _file_problems(file: _File, record: Record, text: str) -> list[Problem]:
    problems: list[Problem] = []
    expected_key = _named_key(file.rel or "")
    if record.key != expected_key:
        problems.append(Problem(
            file.shown, _field_line(text, "key"),
            f"key '{record.key}' does not match the file name (expected key '{expected_key}' "
            f"in {file.rel}, or the file {record.path})"))
    elif is_valid_key(record.key) and file.rel not in paths_of_key(record.key):  # the old flat path is one too
        why = ("the kind follows the key prefix" if file.rel.split("/", 1)[0] != record.path.split("/", 1)[0]
               else "the directory is the first two hex characters of the key's sha1")
        problems.append(Problem(
            file.shown, _field_line(text, "key"),
            f"key '{record.key}' belongs in {record.path}, not {file.rel} ({why})"))
    try:
        validate(record)
    except KybError as exc:
        problems.append(Problem(file.shown, _rule_line(text, exc.message), exc.message))
    return problems


def _rule_line(text: str, message: str) -> int:
    """Best line for a validation message: the secret's line, else the field it names."""
    named = re.search(r"looks? like a secret \(rule ([a-z0-9-]+)\)", message)
    if named is not None:
        hit = next((f for f in scan_secrets(text) if f.rule == named.group(1)), None)
        if hit is not None:
            return text.count("\n", 0, hit.start) + 1
    field = message.split(" ", 1)[0].strip("'")
    if field == "body":
        return _body_start(text)
    if field == "closing":  # "closing a task needs a resolution"
        field = "status"
    line = _field_line(text, field)
    return line


def _duplicate_keys(parsed: list[tuple[_File, Record, str]]) -> list[Problem]:
    seen: dict[tuple[Path, str], _File] = {}
    problems: list[Problem] = []
    for file, record, text in parsed:
        # Files of the same store that are not being checked can still hold the key.
        others = _store_keys(file.root).get(record.key, [])
        first = seen.get((file.root, record.key))
        if first is not None:
            problems.append(Problem(file.shown, _field_line(text, "key"),
                                    f"duplicate key '{record.key}' (also in {first.shown})"))
            continue
        seen[(file.root, record.key)] = file
        clash = [rel for rel in others if rel != file.rel]
        if clash:
            problems.append(Problem(file.shown, _field_line(text, "key"),
                                    f"duplicate key '{record.key}' (also in {', '.join(clash)})"))
    return problems


_KEYS_CACHE: dict[Path, dict[str, list[str]]] = {}


def _store_keys(root: Path) -> dict[str, list[str]]:
    """key -> store-relative files claiming it, for every record file under `root` (cached per call)."""
    cached = _KEYS_CACHE.get(root)
    if cached is not None:
        return cached
    keys: dict[str, list[str]] = {}
    for path in record_files(root):
        rel = path.relative_to(root).as_posix()
        try:
            data = read_record_file(root, rel)
            if data is None:
                continue
            record = parse(data, path=rel)
        except (RecordFormatError, OSError, KybError):
            key = _named_key(rel)
            if key is not None:
                keys.setdefault(key, []).append(rel)
            continue
        keys.setdefault(record.key, []).append(rel)
    _KEYS_CACHE[root] = keys
    return keys


def _links(body_text: str, first_line: int) -> Iterable[tuple[int, str]]:
    """(line, key) of each `[[key]]` outside fenced and inline code."""
    in_fence = False
    for offset, line in enumerate(body_text.split("\n")):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for m in _LINK_RE.finditer(_INLINE_CODE_RE.sub("", line)):
            yield first_line + offset, m.group(1)


def _broken_links(parsed: list[tuple[_File, Record, str]]) -> list[Problem]:
    problems: list[Problem] = []
    history_cache: dict[tuple[Path, str], bool] = {}
    for file, record, text in parsed:
        start = _body_start(text)
        body_text = "\n".join(text.split("\n")[start - 1:])
        for line, key in _links(body_text, start):
            if key in _store_keys(file.root):
                continue
            cache_key = (file.root, key)
            if cache_key not in history_cache:
                history_cache[cache_key] = _existed(file.root, key)
            if not history_cache[cache_key]:
                problems.append(Problem(file.shown, line, f"broken link [[{key}]]: no record '{key}' in this store"))
    return problems


def _existed(root: Path, key: str) -> bool:
    """True when `key` is a record in the store's history (archived incidents and tasks leave the tree)."""
    if not (root / ".git").exists() or not is_valid_key(key):
        return False
    from kyb_cli.core.errors import NotFound
    from kyb_cli.core.index.reads import read

    try:
        read(root, key)
        return True
    except NotFound as exc:
        return exc.details.get("state") == "retracted"
    except KybError:
        return False
