"""`kyb reindex`: rebuild the sidecar index from Git now (it is a cache; reads also self-repair)."""

from __future__ import annotations

import sys

import click

from kyb_cli.cli.common import common_options, open_store
from kyb_cli.cli.output import emit


@click.command("reindex")
@common_options
def reindex_cmd() -> None:
    """Rebuild the search index from every commit; prints counts and the time it took."""
    from kyb_cli import api

    store = open_store()
    if sys.stderr.isatty():
        from rich.progress import Progress

        with Progress(transient=True) as progress:
            task = progress.add_task("indexing commits", total=None)
            work = api.rebuild_index(store.path, progress=lambda n, total: progress.update(task, completed=n, total=total))
    else:
        work = api.rebuild_index(store.path)
    emit({k: work[k] for k in ("head", "commits", "keys", "versions", "events", "seconds") if k in work}
         | {"skipped": len(work.get("skipped", []))})
