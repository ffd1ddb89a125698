"""Commit text decoded totally: a peer's commit may name any `encoding` (even one Python does not
know) or carry bytes that are not in it; kyb reads the message and author anyway (issue 24, failure 5)."""

from __future__ import annotations



def _decode(raw: bytes, encoding: str | None) -> str:
    try:
        return raw.decode(encoding or "utf-8", errors="replace")
    except LookupError:  # an unknown charset: UTF-8 with replacement characters
        return raw.decode("utf-8", errors="replace")


def message_of(commit) -> str:
    """`commit.message`, or its raw bytes decoded as UTF-8 when the encoding header is unusable."""
    try:
        return commit.message
    except (LookupError, UnicodeDecodeError, ValueError):
        return _decode(commit.raw_message, None)
