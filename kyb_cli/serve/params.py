"""Arguments of an HTTP route: declared once, checked on every request, and described in OpenAPI.

A `P` names one query or JSON-body argument with its type and default. Query strings carry text, so
booleans read `true|false|1|0|yes|no` and lists are comma lists (`tags=a,b`), except texts, given
once per value (`also=a, b&also=c` is two phrasings); JSON bodies carry
real types (a list may also be a comma string, as on the CLI). An unknown argument is a usage error,
as an unknown CLI option is, so a typo never silently changes the question.
"""

from __future__ import annotations

from typing import Any

from kyb_cli.api import UsageError, argument_shown
from kyb_cli.api.operations import Field

TRUE = {"true", "1", "yes", "on"}
FALSE = {"false", "0", "no", "off", ""}


P = Field  # one HTTP argument is one field of the operations table (kyb_cli/api/operations.py)


def _split(value: str | list[str]) -> list[str]:
    from kyb_cli import api

    return api.split_list(value)  # the core's one list rule


def from_query(spec: P, raw: str) -> Any:
    """One query-string value, converted and checked."""
    if spec.type == "boolean":
        value = raw.strip().lower()
        if value in TRUE:
            return True
        if value in FALSE:
            return False
        raise UsageError(f"{spec.name}: '{argument_shown(raw)}' is not true or false")
    if spec.type == "integer":
        try:
            number = int(raw)
        except ValueError:
            raise UsageError(f"{spec.name}: '{argument_shown(raw)}' is not a whole number") from None
        return _bounded(spec, number)
    if spec.type == "strings":
        return _split(raw)
    return _choice(spec, raw)


def from_json(spec: P, value: Any) -> Any:
    """One JSON-body value, checked against its type."""
    if value is None:
        if spec.nullable or not spec.required:
            return None if spec.nullable else _default(spec)
        raise UsageError(f"{spec.name}: required")
    kind = spec.type
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "integer" and isinstance(value, int) and not isinstance(value, bool):
        return _bounded(spec, value)
    if kind == "string" and isinstance(value, str):
        return _choice(spec, value)
    if kind == "strings":
        if isinstance(value, str):
            return _split(value)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return _split(value)
    if kind == "texts":
        if isinstance(value, str):
            return [value] if value.strip() else []
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [v for v in value if v.strip()]
    if kind == "objects" and isinstance(value, list) and all(isinstance(v, dict) for v in value):
        return value
    if kind == "any":
        return value
    want = {"strings": "a list of strings", "texts": "a list of strings", "objects": "a list of objects", "integer": "a whole number",
            "boolean": "true or false", "string": "a string"}[kind]
    raise UsageError(f"{spec.name}: must be {want}")


def _default(spec: P) -> Any:
    return list(spec.default) if isinstance(spec.default, list) else spec.default


def _bounded(spec: P, number: int) -> int:
    from kyb_cli.api.operations import out_of_bounds

    problem = out_of_bounds(spec.minimum, spec.maximum, number)
    if problem:
        raise UsageError(f"{spec.name}: {problem}")
    return number


def _choice(spec: P, value: str) -> str:
    if spec.enum and value not in spec.enum:
        raise UsageError(f"{spec.name}: '{argument_shown(value)}' is not one of {', '.join(spec.enum)}")
    return value


def parse_query(specs: tuple[P, ...], items: list[tuple[str, str]]) -> dict[str, Any]:
    """All query arguments of a route, defaults filled in."""
    known = {s.name: s for s in specs}
    out: dict[str, Any] = {}
    for name, raw in items:
        spec = known.get(name)
        if spec is None:
            raise UsageError(f"unknown parameter '{argument_shown(name)}' (known: {', '.join(known) or 'none'}; see /openapi.json)")
        if spec.type == "texts":  # repeated, each value whole
            if raw.strip():
                out.setdefault(name, []).append(raw)
            continue
        if name in out:
            raise UsageError(f"{name}: given twice")
        out[name] = from_query(spec, raw)
    return _complete(specs, out)


def parse_body(specs: tuple[P, ...], data: Any) -> dict[str, Any]:
    """All JSON-body arguments of a route (the body must be one object)."""
    if not isinstance(data, dict):
        raise UsageError("the request body must be a JSON object")
    known = {s.name: s for s in specs}
    out: dict[str, Any] = {}
    for name, value in data.items():
        spec = known.get(name)
        if spec is None:
            raise UsageError(f"unknown field '{argument_shown(name)}' (known: {', '.join(known)}; see /openapi.json)")
        out[name] = from_json(spec, value)
    return _complete(specs, out)


def _complete(specs: tuple[P, ...], out: dict[str, Any]) -> dict[str, Any]:
    for spec in specs:
        if spec.name not in out:
            if spec.required:
                raise UsageError(f"{spec.name}: required")
            out[spec.name] = _default(spec)
    return out
