"""`kyb reindex`: rebuild the sidecar index from Git now (it is a cache; reads also self-repair)."""

from __future__ import annotations

import sys

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import table_command, table_options


@table_command("reindex")
@table_options("reindex")
@common_options
def reindex_cmd() -> None:
    from kyb_cli import api

    door = CliDoor()
    door.store()  # the store must exist (the default store is made on first use, as on every write)
    if sys.stderr.isatty():
        from rich.progress import Progress

        with Progress(transient=True) as progress:
            task = progress.add_task("indexing commits", total=None)
            door.progress = lambda n, total: progress.update(task, completed=n, total=total)
            data = api.handle("reindex", door, {})
    else:
        data = api.handle("reindex", door, {})
    emit(data, reindex_view)


def reindex_view(c, d) -> None:
    """One readable line on a terminal (the JSON stays for pipes and --json)."""
    from kyb_cli.cli.render import plural

    took = f" in {d['seconds']:.1f} s" if isinstance(d.get("seconds"), (int, float)) else ""
    c.print(f"[green]reindexed[/green] {plural(d.get('commits', 0), 'commit')}, {plural(d.get('keys', 0), 'key')}, "
            f"{plural(d.get('versions', 0), 'version')}{took}; head {str(d.get('head') or '')[:12]}")
    if d.get("skipped"):
        c.print(f"[yellow]{plural(d['skipped'], 'version')} skipped[/yellow] "
                "(record files that do not parse; `kyb check` says why)")
