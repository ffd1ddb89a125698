"""Commit trailers: the `Key: value` lines (Kyb-Action, Kyb-Reason, Kyb-Agent …) kyb writes last in a
commit message (canon/attribution.py, canon/transaction.py) and reads back for history and reasons."""

from __future__ import annotations


def parse_trailers(message: str) -> dict[str, str]:
    """The `Key: value` lines of a commit message's last paragraph."""
    paragraphs = message.strip().split("\n\n")
    out: dict[str, str] = {}
    if len(paragraphs) < 2:
        return out
    for line in paragraphs[-1].splitlines():
        name, sep, value = line.partition(": ")
        if sep and name and " " not in name:
            out[name] = value.strip()
    return out
