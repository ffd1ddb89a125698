"""THE list rule of every door (`a, b,,c` -> [a, b, c]): a leaf, so a query's tag filter imports nothing."""

from __future__ import annotations


def split_list(value: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """`a, b,,c` -> ["a", "b", "c"]: the one list rule of every door. A text is a comma list (the CLI,
    an HTTP query string); a JSON list (MCP, an HTTP body) keeps its items, trimmed, blanks dropped."""
    if not value:
        return []
    items = value.split(",") if isinstance(value, str) else value
    return [item.strip() for item in items if item and item.strip()]


def split_each(values: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """Every item of a list read as a comma list too (`--tag a --tag b,c` -> [a, b, c]): for a filter
    whose items can never hold a comma (tags), so a list and a comma list mean the same in every door."""
    if not values or isinstance(values, str):
        return split_list(values)
    return [item for value in values for item in split_list(value)]
