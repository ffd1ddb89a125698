"""`kyb query TEXT`: ask what is true now, what any version said, what the store said at a moment,
or what changed in a window. Hybrid: BM25 fused with vectors by meaning in every time mode."""

from __future__ import annotations

from typing import Any

import click

from kyb_cli.cli.common import CliDoor, common_options, fields_option
from kyb_cli.cli.deadlines_block import deadline_options
from kyb_cli.cli.options import table_command, table_fields, table_options
from kyb_cli.cli import output
from kyb_cli.cli.output import emit
from kyb_cli.cli.waiting import wait_options


class QueryCommand(click.Command):
    """Any text is a query (`-x`, `*`, emoji), but a mistyped `--option` is a usage error, not text,
    and `-h` is help.

    Words that start with one dash are searched as text; an unknown `--long` option before `--`
    is refused with a did-you-mean, so `--histroy` never silently turns into a current-state search.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        known = {opt for param in self.get_params(ctx) for opt in (*param.opts, *param.secondary_opts)}
        # `-h` alone is help, as for every other command; `-dash`, `-x` stay text (`-- -h` searches it).
        dash = args.index("--") if "--" in args else len(args)
        args = ["--help" if i < dash and arg == "-h" else arg for i, arg in enumerate(args)]
        for arg in args:
            if arg == "--":
                break
            if arg.startswith("--") and arg.split("=", 1)[0] not in known:
                import difflib

                name = arg.split("=", 1)[0]
                close = difflib.get_close_matches(name, sorted(o for o in known if o.startswith("--")), n=1)
                raise click.NoSuchOption(name, possibilities=close, ctx=ctx)
        return super().parse_args(ctx, args)


@table_command("query", cls=QueryCommand, context_settings={
    "ignore_unknown_options": True, "help_option_names": ["--help"]})
@table_options("query", overrides={"text": {"nargs": -1, "type": click.UNPROCESSED}})
@wait_options
@deadline_options
@fields_option
@common_options
def query_cmd(**given: Any) -> None:
    """-h is help, as for every command; to search for a word that starts with a dash, put it after
    `--` (`kyb query -- -h`).

    \b
    Modes (one at a time):
      (default)                  current state: live and archived records, never retracted ones
      --history                  every content version, current included
      --as-of T                  the store as it was at T (slice first, then match)
      --changed-between A B      versions written in the window, the latest match per key
      --as-of-event T [--as-of W]  what was true in the world at T (effective_at, else write time),
                                 by what the store knows now (or knew at W)
    T, A and B are RFC 3339 datetimes (2026-10-11T16:00:00Z; no offset = UTC), bare dates (end of
    day 23:59:59 UTC for --as-of and B, 00:00:00 UTC for A) or revisions (sha, tag, HEAD~3 = that
    commit's time). Versions written in the same second cannot be told apart by a time.

    With a model (kyb model pull / KYB_MODEL), every mode is hybrid: the same slice is searched by
    meaning too, so a question in another language or other words finds the record. A query embeds
    only its own text: versions still without a vector are filled in the background, and
    `pending_vectors` says how many the searched slice lacks (`kyb index --embed` fills all now).

    On a fresh clone the history is read in the background after the first answer: a question
    about the past waits for it (--no-wait: answer now, with "history_complete": false).
    """
    from kyb_cli import api

    door = CliDoor()
    fields = table_fields("query", given)
    fields["text"] = " ".join(fields["text"])  # the words of the command line are one question
    kept = click.get_current_context().meta.get("kyb.fields") or ""
    asked = set(kept.replace(" ", "").split(",")) - {""}  # `--fields key,body`, `key,tags`, `key,status`:
    # a field a compact hit may leave out asks for the full hits; the terminal's table shows the score (the
    # full hits are what the index read: nothing more to do)
    fields["full"] = fields["full"] or bool(asked - set(api.COMPACT_KEEPS)) or not output.wants_json()
    response = api.handle("query", door, fields)
    if response.get("semantic_off"):
        from kyb_cli.cli.output import note

        note(api.semantic_off_message(response["semantic_off"]))
    missing = api.semantic_missing_message(response)
    if missing:
        from kyb_cli.cli.output import note

        note(missing)
    pending = api.pending_vectors_message(response)
    if pending:
        from kyb_cli.cli.output import note

        note(pending)
    emit(response, query_view)
    from kyb_cli.cli.deadlines_block import print_deadlines_block

    print_deadlines_block(door.path())


def query_view(c: Any, d: dict[str, Any]) -> None:
    from kyb_cli.cli.render import narrow

    if narrow(c) and not any("explain" in h for h in d["hits"]):
        _query_lines(c, d)
    else:
        _query_table(c, d)
    _query_footer(c, d)


def _version(h: dict[str, Any], clock: int = 19) -> str:
    return (f"{h['sha'][:10]} {h['committed_at'][:clock]}" if h.get("sha") else "[dim]not indexed yet[/dim]") \
        + ("" if h["is_head"] else " [dim](past)[/dim]") \
        + (" [yellow](changed since you read it)[/yellow]" if h.get("changed_since_your_read") else "")


def _about(h: dict[str, Any]) -> str:
    """What a hit is about, on one line: its snippet, else (a listing of old answers) its body's first line."""
    from kyb_cli.cli.render import snippet

    return " ".join((h.get("snippet") or snippet(h.get("body") or "")).split())


def _style(h: dict[str, Any]) -> str:
    from kyb_cli.cli.render import EMPHASIS

    return next((EMPHASIS[h[f]] for f in ("priority", "severity") if h.get(f) in EMPHASIS), "bold")


def _query_lines(c: Any, d: dict[str, Any]) -> None:
    """A narrow terminal: each hit in at most three lines — key and title, state/version/score, snippet."""
    from rich.markup import escape

    from kyb_cli.cli.render import STATE_STYLE, line

    for h in d["hits"]:
        weak = " dim" if h.get("strength") == "weak" else ""
        head = f"[{_style(h)}{weak}]{h['key']}[/]  " + (f"[dim]{escape(h['title'])}[/dim]" if weak
                                                        else escape(h["title"]))
        c.print(head if len(h["key"]) >= c.width - 4 else line(head, c.width))  # a key is never cut
        score = f" · {h['score']:.3f}" if h.get("score") else ""
        c.print(line(f"  [{STATE_STYLE.get(h['state'], 'white')}]{h['state']}[/] [dim]· {_version(h, 10)}"
                     f"{score} · {h.get('strength', '')}[/dim]", c.width))
        text = _about(h)
        if text:
            c.print(line(f"  [dim]{escape(text)}[/dim]", c.width))


def _query_table(c: Any, d: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from kyb_cli.cli.render import STATE_STYLE, keep_whole

    table = Table(box=None, pad_edge=False, show_header=True, header_style="dim")
    explain = any("explain" in h for h in d["hits"])
    scored = any(h.get("score") for h in d["hits"])  # a listing (no text) has no relevance to show
    columns = ("key", "title", "state", "version") + ("score",) * scored \
        + ("lex", "vec", "cosine", "fused") * explain
    for col in columns:
        table.add_column(col)
    keep_whole(table.columns[0], [h["key"] for h in d["hits"]])
    for h in d["hits"]:
        version = _version(h)
        state = f"[{STATE_STYLE.get(h['state'], 'white')}]{h['state']}[/]"
        text = _about(h)
        text = text if len(text) <= 120 else text[:119] + "…"  # two lines under the title, not ten
        title = escape(h["title"]) + (f"\n[dim]{escape(text)}[/dim]" if text else "")
        row = [f"[{_style(h)}]{h['key']}[/]", title, state, version] + [f"{h.get('score') or 0:.3f}"] * scored
        if explain:
            e = h.get("explain") or {}
            row += [_cell(e.get("lexical_rank")), _cell(e.get("vector_rank")), _cell(e.get("cosine"), "{:.3f}"),
                    _cell(e.get("fused"), "{:.4f}")]
        table.add_row(*row, style="dim" if h.get("strength") == "weak" else None)
    c.print(table)


def _query_footer(c: Any, d: dict[str, Any]) -> None:
    from kyb_cli.cli.render import plural

    semantic = "hybrid" if d.get("semantic") else "lexical"
    pending = f", {d['pending_vectors']} pending vectors" if d.get("pending_vectors") else ""
    sure = "" if d.get("confident", True) or not d["count"] else ", [bold]no strong hit[/bold]: weak matches only (dim)"
    c.print(f"[dim]{plural(d['count'], 'hit')}, mode {d['mode']}, {semantic}{pending}{sure}, "
            f"head {str(d.get('head') or '')[:12]}[/dim]")


def _cell(value: Any, fmt: str = "{}") -> str:
    return "-" if value is None else fmt.format(value)
