"""Commit trailers: the `Key: value` lines (Kyb-Action, Kyb-Reason, Kyb-Agent …) kyb writes last in a
commit message (canon/attribution.py, canon/transaction.py) and reads back for history and reasons.

Served commit text (rule "commit-text-redacted", issue 37 item 6): a local write refuses a label, a
reason or a message that looks like a secret, but a peer's commit (or a hand commit) may hold one.
A commit cannot be held out the way a record version is — every later commit descends from it, and
the remote cannot drop it without rewriting history — so what kyb serves of a commit (its subject
line, its author, each trailer value) goes through `served_text`: a value the secret scanner
(records/secrets.py) flags is replaced by a marker naming the rule, never shown in any door.
"""

from __future__ import annotations

from kyb_cli.core.records.secrets import first_secret


def served_text(text: str, field: str = "text") -> str:
    """`text` as a read may serve it: unchanged, or a marker naming the secret rule it matched."""
    found = first_secret(text, field) if text else None
    if found is None:
        return text
    return f"<redacted: {field} looks like a secret (rule {found.rule})>"


def parse_trailers(message: str) -> dict[str, str]:
    """The `Key: value` lines of a commit message's last paragraph, each value as served (`served_text`)."""
    paragraphs = message.strip().split("\n\n")
    out: dict[str, str] = {}
    if len(paragraphs) < 2:
        return out
    for line in paragraphs[-1].splitlines():
        name, sep, value = line.partition(": ")
        if sep and name and " " not in name:
            out[name] = served_text(value.strip(), name)
    return out
