"""Commit text decoded totally: a peer's commit may name any `encoding` (even one Python does not
know) or carry bytes that are not in it; kyb reads the message and author anyway (issue 24, failure 5)."""

from __future__ import annotations

from types import SimpleNamespace


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


def author_of(commit):
    """`commit.author`, or a stand-in with `name`, `email`, `time`, `offset` decoded totally."""
    sig = commit.author
    try:
        sig.name, sig.email  # noqa: B018 - the decode is what may fail
        return sig
    except (LookupError, UnicodeDecodeError, ValueError):
        return SimpleNamespace(name=_decode(sig.raw_name, None), email=_decode(sig.raw_email, None),
                               time=sig.time, offset=sig.offset)
