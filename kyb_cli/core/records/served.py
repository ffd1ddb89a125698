"""Which versions are served: a record path, a file that parses, its key equal to the path's, and
the protective write rules (size, no secret-looking text). Above keys, model and validate, so the key
authority (keys.py) imports neither the parser nor the rules.
"""

from __future__ import annotations

from kyb_cli.core.records.fields import stored_fields
from kyb_cli.core.records.keys import served_path_problem
from kyb_cli.core.records.model import RecordFormatError, parse
from kyb_cli.core.records.limits import record_problem as size_problem
from kyb_cli.core.records.secrets import scan_fields
from kyb_cli.core.records.validate import (BODY_MAX_BYTES, secret_message, tag_problem,
                                           typed_field_problem)


def load(path: str, data: bytes | str):
    """The record stored at `path` if kyb may serve it; RecordFormatError (`.reason`) otherwise.

    Served means: a record path, a file that parses, the front matter's key equal to the path's,
    no field that looks like a secret, typed fields (dates, closed sets) of their type and a body
    within the size limit — the write rules `kyb add`
    enforces that protect a reader. (Kind-field rules such as an incident's service are `kyb
    check`'s business: a hand-written record missing one is still served.) A version that fails is
    unreadable: never served by any door, listed by sync as held out, never winning a conflict.
    """
    problem = served_path_problem(path)  # is_record_candidate, then path_problem
    if problem is not None:
        raise RecordFormatError(problem, path=path)
    record = parse(data, path=path)
    key = path.rsplit("/", 1)[1][:-3]
    if record.key != key:
        raise RecordFormatError(f"the front matter says key = '{record.key}' but the file is {path} "
                                f"(key '{key}')", path=path)
    problem = _protective_rules(record, isinstance(data, bytes))
    if problem is not None:
        raise RecordFormatError(f"breaks a write rule: {problem}", path=path)
    return record


def _protective_rules(record, decoded: bool = False) -> str | None:
    """The write rules that keep a reader safe: size, the limits, no secret-looking text in any
    field (the same scanner over the same fields as a local write), tags one line each, and the
    typed fields (dates, closed sets) holding what their type allows (validate.typed_field_problem).
    `decoded`: the record was parsed from bytes (strict UTF-8: no lone surrogate), so a body of at
    most a quarter of the limit in characters is within it without encoding it (4 bytes a character
    at most)."""
    body = record.body
    if not (decoded and len(body) * 4 <= BODY_MAX_BYTES):
        size = len(body.encode("utf-8"))
        if size > BODY_MAX_BYTES:
            return f"body is {size:,} bytes; the limit is {BODY_MAX_BYTES:,} (1 MiB)"
    fields = stored_fields(record)  # walked once for both: every record a snapshot indexes comes here
    too_big = size_problem(record, fields)
    if too_big is not None:
        return too_big
    found = scan_fields(fields)
    if found is not None:
        return secret_message(found)
    bad_tag = tag_problem(record.tags)
    if bad_tag is not None:
        return f"tags: {bad_tag}"
    return typed_field_problem(record)  # dates and closed sets: the rule a local write runs


def record_problem(path: str, data: bytes | str) -> str | None:
    """Why the file at `path` is not a servable record (see `load`), or None when it is one."""
    try:
        load(path, data)
    except RecordFormatError as exc:
        return exc.reason
    return None
