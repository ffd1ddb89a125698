"""Human views for a terminal (rich). Only called when stdout is a terminal; JSON is the default elsewhere."""

from __future__ import annotations

from typing import Any

STATE_STYLE = {"active": "green", "archived": "yellow", "retracted": "red"}


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
    from rich.markdown import Markdown
    from rich.panel import Panel
    from rich.table import Table

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
                or value in ("", [], None):
            continue
        if isinstance(value, list):
            value = ", ".join(v if isinstance(v, str) else str(v) for v in value)
        meta.add_row(name, str(value))
    c.print(Panel(meta, title=f"[bold]{d['title']}[/bold]", title_align="left"))
    if d.get("body"):
        c.print(Markdown(d["body"]))


def history_view(c: Any, d: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=d["key"])
    for name in ("sha", "committed_at", "change", "agent"):
        table.add_column(name, no_wrap=True)  # a cut timestamp or sha is useless; the message may wrap
    table.add_column("message")
    colours = {"added": "green", "modified": "cyan", "deleted": "red"}
    for row in d["versions"]:
        table.add_row(row["sha"][:12], row["committed_at"], f"[{colours.get(row['change'], 'white')}]{row['change']}[/]",
                      row.get("agent", ""), row.get("message", ""))
    c.print(table)
