"""The limits every door applies to what a caller sends (docs/guide/sharing.md "Limits"), from the one core table."""

from __future__ import annotations

from typing import Any


def loads_json(raw: bytes | str) -> Any:
    """JSON with the nesting limit and no lone surrogates; ValueError (the door's 400 / exit 2) otherwise,
    never RecursionError."""
    from kyb_cli.core.records.limits import loads_json as core

    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    return core(text)


def has_lone_surrogate(text: str) -> bool:
    """Whether `text` holds a code point U+D800-U+DFFF (not Unicode text: it cannot be stored or sent
    as UTF-8): the core's one test, for the doors' guards."""
    from kyb_cli.core.records.limits import has_lone_surrogate as core

    return core(text)
