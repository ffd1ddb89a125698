"""`kyb index [--embed]`: bring the search index to HEAD; with --embed give every version a vector."""

from __future__ import annotations

import sys

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import table_command, table_options


@table_command("index")
@table_options("index")
@common_options
def index_cmd(embed: bool) -> None:
    from kyb_cli import api

    door = CliDoor()
    door.store()  # the store must exist (the default store is made on first use, as on every write)
    if not embed:
        emit(api.handle("index", door, {"embed": False}), _view)
        return
    if sys.stderr.isatty():
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        from kyb_cli.cli.output import console

        with Progress("embedding", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                      console=console(stderr=True), transient=True) as bar:
            task = bar.add_task("embedding", total=None)
            door.progress = lambda n, total: bar.update(task, completed=n, total=total)
            result = api.handle("index", door, {"embed": True})
    else:
        result = api.handle("index", door, {"embed": True})
    emit(result, _view)


def _view(c, d: dict) -> None:
    if "embedded" in d:
        c.print(f"{d['embedded']} embedded, {d['from_cache']} from the cache, "
                f"{d['pending_vectors']} pending, {d['seconds']} s (fingerprint {d['fingerprint']})")
        for name, m in (d.get("models") or {}).items():
            c.print(f"  {name}: " + (f"missing ({m['missing']})" if "missing" in m else
                                     f"{m['embedded']} embedded, {m['from_cache']} from the cache, {m['pending_vectors']} pending"))
    else:
        c.print(f"head {str(d.get('head') or '')[:12]}: {d['versions']} versions, {d['texts']} distinct texts")
        for fp, n in d.get("vectors", {}).items():
            c.print(f"  vectors {fp}: {n}" + (" (current model)" if fp == d.get("fingerprint") else ""))
        if d.get("fingerprint"):
            c.print(f"  pending under the current model: {d['pending_vectors']} versions")
        elif d.get("model"):
            c.print(f"  model: {d['model']}")
        for name, m in (d.get("models") or {}).items():  # each model of the registry
            c.print(f"  {name}: " + (f"missing ({m['missing']})" if "missing" in m
                                     else f"{m['pending_vectors']} versions pending (fingerprint {m['fingerprint']})"))
        bg = d.get("background") or {}
        if bg.get("running"):
            c.print(f"  background filler: {bg.get('stage', 'starting')}"
                    + (f" {bg.get('done', 0)}/{bg.get('total', 0)} commits" if bg.get("stage") == "history" else "")
                    + (f", {bg['pending']} vectors pending" if "pending" in bg else ""))
