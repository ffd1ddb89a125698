"""`kyb import PATH…`: bring Markdown notes (or `kyb export` output) in, in one batch, repeatably."""

from __future__ import annotations

import sys
from typing import Any

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit, wants_json
from kyb_cli.cli.options import table_command, table_fields, table_options


@table_command("import")
@table_options("import")
@common_options
def import_cmd(**given: Any) -> None:
    from kyb_cli import api

    door = CliDoor()
    with _progress() as progress:
        door.progress = progress
        reply = api.handle("import", door, table_fields("import", given))
    emit(reply, _human)


class _progress:
    """A progress bar on stderr when it is a terminal and the answer is not JSON; else nothing."""

    def __enter__(self):
        self.bar = None
        if wants_json() or not sys.stderr.isatty():
            return None
        from rich.progress import Progress

        from kyb_cli.cli.output import console

        self.bar = Progress(transient=True, console=console(True))
        self.bar.start()
        self.tasks: dict[str, Any] = {}
        return self.update

    def update(self, phase: str, done: int, total: int) -> None:
        task = self.tasks.get(phase)
        if task is None:
            task = self.tasks[phase] = self.bar.add_task(phase, total=max(total, 1))
        self.bar.update(task, completed=done, total=max(total, 1))

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()
        return False


def _human(c: Any, d: dict[str, Any]) -> None:
    verb = "would change" if d.get("dry_run") else "changed"
    c.print(f"[bold]{len(d['created'])} created, {len(d['updated'])} updated, {len(d['unchanged'])} unchanged, "
            f"{len(d['skipped'])} skipped[/bold] — {d['commits']} commit(s) {verb}"
            + (f", HEAD {d['head'][:12]}" if d.get("head") else ""))
    for name, style in (("created", "green"), ("updated", "cyan")):
        for e in d[name]:
            state = f" [red]({e['state']}: {e.get('reason', '')})[/red]" if e.get("state") else ""
            c.print(f"  [{style}]{name}[/{style}] {e['key']}  [dim]{e['path']}[/dim]{state}")
    for e in d["skipped"]:
        c.print(f"  [yellow]skipped[/yellow] {e['path']}: {e['reason']}")
    for e in d.get("duplicates", []):
        c.print(f"  [magenta]duplicate[/magenta] {e['path']} → {e['key']} (also {e['same_as']})")
    for e in d.get("missing", []):
        what = "retracted" if e.get("retracted") else "kept (use --sync-deletes to retract)"
        c.print(f"  [red]missing[/red] {e['path']} ({e['key']}): {what}")
