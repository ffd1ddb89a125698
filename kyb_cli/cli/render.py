"""Human views for a terminal (rich). Only called when stdout is a terminal; JSON is the default elsewhere."""

from __future__ import annotations

from typing import Any

STATE_STYLE = {"active": "green", "archived": "yellow", "retracted": "red"}
# Rows that need attention stand out on a terminal: critical red, high yellow (priority, severity).
EMPHASIS = {"critical": "bold red", "high": "yellow"}


# Below this many columns a listing is a few short lines per row instead of a table, whose columns
# would wrap a title or a snippet into a dozen lines (issue 42: a hit in 3 lines at 80 columns).
NARROW = 100


def narrow(c: Any) -> bool:
    """True when the terminal is too narrow for a listing's table."""
    return c.width < NARROW


def line(markup: str, width: int) -> Any:
    """One terminal line of rich markup, cut to `width` with an ellipsis (never wrapped)."""
    from rich.text import Text

    text = Text.from_markup(markup)
    text.truncate(max(width, 1), overflow="ellipsis")
    text.no_wrap = True
    return text


def plural(count: int, noun: str) -> str:
    """`1 task`, `3 tasks`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def snippet(body: str, width: int = 60) -> str:
    """The first line of text of a body, cut to `width`: what a hit is about, at a glance."""
    for line in body.splitlines():
        line = " ".join(line.split()).lstrip("#>-* ").strip()
        if line and not line.startswith("```"):
            return line if len(line) <= width else line[:width - 1] + "…"
    return ""


def is_overdue(row: dict[str, Any], today: Any = None) -> bool:
    """A live task whose due date is behind today (the deadlines block's rule, for highlighting)."""
    from datetime import date

    if not row.get("due") or row.get("archived") or row.get("status") not in ("open", "in_progress", "blocked"):
        return False
    try:
        return date.fromisoformat(row["due"]) < (today or date.today())
    except ValueError:
        return False


def keep_whole(column: Any, keys: list[str]) -> None:
    """A key is what you type next: never cut or wrapped; other columns give way."""
    column.no_wrap = True
    column.min_width = min(max((len(k) for k in keys), default=3), 100)


def write_reply(c: Any, d: dict[str, Any]) -> None:
    if not d.get("changed"):
        c.print(f"[dim]unchanged[/dim] {d['key']} (identical content, no commit)")
        return
    closed = f"  [yellow]archived[/yellow] [dim]{d['archive_sha'][:12]}[/dim]" if d.get("archive_sha") else ""
    c.print(f"[bold green]{d['action']}[/bold green] {d['key']}  [dim]{d.get('sha', '')[:12]}[/dim]{closed}")
    for key, value in d.items():
        if key in ("action", "changed", "key", "sha", "archived", "archive_sha"):
            continue
        if isinstance(value, list):
            for item in value:
                c.print(f"  [yellow]{key}[/yellow]: {item}")
        else:
            c.print(f"  [yellow]{key}[/yellow]: {value}")


def record_view(c: Any, d: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    meta = Table.grid(padding=(0, 1))
    meta.add_column(style="dim")
    meta.add_column()
    state = d.get("state", "active")
    meta.add_row("key", f"[bold]{d['key']}[/bold]  ({d['kind']})")
    meta.add_row("state", f"[{STATE_STYLE.get(state, 'white')}]{state}[/]")
    older = "" if d.get("is_head", True) else "  [yellow](an older version, not the current one)[/]"
    if d.get("sha"):
        meta.add_row("version", f"{d['sha'][:12]}  {d.get('committed_at', '')}{older}")
    else:  # a snapshot: the commit that wrote it is known once the history is indexed
        meta.add_row("version", "[dim]commit not indexed yet (history is still being read)[/dim]")
    shown = dict(d)
    shown.update(shown.pop("extra", None) or {})
    for name, value in shown.items():
        if name in ("key", "title", "kind", "state", "sha", "committed_at", "body", "is_head") \
                or value in ("", [], None) or value is False:
            continue  # a flag that is off (`hard = false`) says nothing: no `hard  False` line
        if name == "verified" and isinstance(value, dict):
            value = verified_line(value)
        elif name == "changed_since_your_read" and isinstance(value, dict):  # receipts (issue 40)
            name = "changed"
            value = f"[yellow]since you read it: you read {value['read_sha'][:12]} at {value['read_at']}[/]"
        elif value is True:
            value = "yes"
        elif name in ("priority", "severity") and value in EMPHASIS:
            value = f"[{EMPHASIS[value]}]{value}[/]"
        if isinstance(value, list):
            value = ", ".join(v if isinstance(v, str) else str(v) for v in value)
        meta.add_row(name, str(value))
    c.print(Panel(meta, title=f"[bold]{escape(d['title'])}[/bold]", title_align="left"))
    if d.get("body"):
        # The body as written: every line break kept, no Markdown reflow, no markup (`[x]` stays).
        c.print(Text(d["body"]))


def verified_line(v: dict[str, Any]) -> str:
    """`by claude-code 2026-12-01T… from src/x.py @ abc123 (current)`: a verification in one line."""
    from rich.markup import escape

    rev = f" @ {escape(v['rev'])}" if v.get("rev") else ""
    note = f" — {escape(v['note'])}" if v.get("note") else ""
    state = "[green]current[/]" if v.get("current") else "[yellow]text changed since[/]"
    return f"by {escape(str(v.get('by') or '?'))} {v.get('at', '')} from {escape(v.get('source', ''))}{rev}{note} ({state})"


def history_view(c: Any, d: dict[str, Any]) -> None:
    """History as JSON says it: the number `--version` takes, and which row is current and which lost a
    sync merge (issue 25 item 2: on a terminal nothing marked the kept version after a conflict)."""
    from rich.table import Table

    table = Table(title=d["key"])
    for name in ("version", "sha", "committed_at", "change", "standing", "agent"):
        table.add_column(name, no_wrap=True)  # a cut timestamp or sha is useless; the message may wrap
    table.add_column("message")
    colours = {"added": "green", "modified": "cyan", "deleted": "red"}
    for row in d["versions"]:
        table.add_row(str(row.get("version") or ""), row["sha"][:12], row["committed_at"],
                      f"[{colours.get(row['change'], 'white')}]{row['change']}[/]", standing(row),
                      row.get("agent", ""), row.get("message", ""))
    c.print(table)


def standing(row: dict[str, Any]) -> str:
    """`current`, `lost merge 7b2ec67af8f1`, or nothing: where a history row stands."""
    if row.get("current"):
        return "[green]current[/]"
    if row.get("lost_merge"):
        return f"[yellow]lost merge {row['lost_merge'][:12]}[/]"
    return ""


_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), 0x0b, 0x0c, 0x0d, *range(0x0e, 0x20), *range(0x7f, 0xa0))}


def terminal_text(text: str) -> str:
    """`text` safe to print on a terminal: control characters (ESC, CSI, BEL, CR, C1 …) shown as
    `\\xNN`, so a title, body or commit trailer cannot move the cursor, retitle the window or hide
    lines (issue 24, failure 9). Newlines and tabs stay. JSON output keeps its own escaping."""
    return text.replace("\r\n", "\n").translate(_CONTROL)


def terminal_safe(data: Any) -> Any:
    """`data` with every string passed through terminal_text (dict keys too)."""
    if isinstance(data, str):
        return terminal_text(data)
    if isinstance(data, dict):
        return {terminal_safe(k): terminal_safe(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [terminal_safe(v) for v in data]
    return data
