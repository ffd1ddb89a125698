"""kyb's managed block in a user's file (between a begin and an end marker): find it, put it in
place, take it out, every other byte kept. Shared by agent instruction files (agents.py) and agent
config files (wiring.py), so neither imports the other."""

from __future__ import annotations


class SectionError(ValueError):
    """The markers are not one complete begin..end section (a lone marker, two sections): kyb
    changes nothing rather than guess which lines are its own."""


def find_block(text: str, begin: str, end_mark: str) -> tuple[int, int] | None:
    """(start, end) of our block including its trailing newline; None when neither marker is there.
    SectionError when the markers do not make exactly one complete section."""
    begins, ends = text.count(begin), text.count(end_mark)
    if begins == 0 and ends == 0:
        return None
    start = text.find(begin)
    end = text.find(end_mark, start + len(begin)) if start >= 0 else -1
    if begins != 1 or ends != 1 or end < 0:
        what = ("a begin marker with no end marker" if begins > ends else
                "an end marker with no begin marker" if ends > begins else
                "more than one kyb section" if begins > 1 else "the end marker before the begin marker")
        raise SectionError(f"kyb's markers are broken ({what}); fix or remove them by hand, nothing was changed")
    end += len(end_mark)
    if text.startswith("\r\n", end):
        end += 2
    elif text.startswith("\n", end):
        end += 1
    return start, end


def with_section(text: str | None, block: str, begin: str, end: str) -> str:
    """The file text with our block in place: replaced where it is, else appended after a newline."""
    if text is None:
        return block
    found = find_block(text, begin, end)
    if found is not None:
        return text[:found[0]] + block + text[found[1]:]
    return text + "\n" + block


def without_section(text: str, begin: str, end: str) -> str | None:
    """The file text with our block and the newline install put before it removed (None: delete)."""
    found = find_block(text, begin, end)
    if found is None:
        return text
    start, stop = found
    if start == 0:
        rest = text[stop:]
        return None if rest == "" else rest
    # install put exactly one "\n" before the block
    if text[start - 1] == "\n":
        start -= 1
    return text[:start] + text[stop:]
