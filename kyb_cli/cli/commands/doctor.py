"""`kyb doctor`: store, git, index, vectors per fingerprint, model, cache — and how to fix each."""

from __future__ import annotations

import sys

import click

from kyb_cli.cli.common import LocatedDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import table_command, table_options


@table_command("doctor")
@table_options("doctor")
@common_options
def doctor_cmd(fix: bool) -> None:
    from kyb_cli import api

    report = api.handle("doctor", LocatedDoor(), {"fix": fix})
    emit(report, _view)
    for line in report["problems"]:
        sys.stderr.write(f"kyb: doctor: {line}\n")
    if not report["healthy"]:
        click.get_current_context().exit(4)


def _view(c, d: dict) -> None:
    store = d["store"]
    c.print(f"store  {store['path']}: " + ("ok" if store.get("ok") else "[red]broken[/red]"))
    c.print(f"git    {d['git'].get('version') or '[red]missing[/red]'}")
    if d.get("fixed"):
        c.print(f"fixed  {len(d['fixed'])} record file(s): {', '.join(d['fixed'])}")
    tree = d.get("worktree")
    if tree is not None:
        c.print("tree   " + ("ok" if tree["ok"] else f"[red]{len(tree['paths'])} record file(s) not as committed[/red]"))
    idx = d.get("index") or {}
    m = d["model"]
    names = {x.get("fingerprint"): name for name, x in (m.get("models") or {}).items() if x.get("fingerprint")}
    if idx.get("ok"):
        c.print(f"index  head {str(idx.get('head') or '')[:12]}, {idx['versions']} versions, {idx['texts']} texts")
        for fp, n in idx["vectors"].items():
            c.print(f"       vectors {fp}: {n}" + (f" (current, {names[fp]})" if fp in names else
                                                  " (current)" if fp == idx.get("fingerprint") else " (old)"))
        if idx.get("fingerprint"):
            c.print(f"       pending: {idx['pending_vectors']}")
    for name, x in (m.get("models") or {"model": m}).items():
        c.print(f"model  {name} {x.get('path') or '-'}: " + ("loads" if x.get("loads") else str(x.get("reason"))))
    for fp, n in (d.get("cache") or {}).get("vectors", {}).items():
        c.print(f"cache  {fp}: {n}" + (f" (current, {names[fp]})" if fp in names else
                                       " (current)" if fp == m.get("fingerprint") else ""))
    for w in d["warnings"]:
        c.print(f"[yellow]warning[/yellow] {w}")
    c.print("[green]healthy[/green]" if d["healthy"] else f"[red]{len(d['problems'])} problem(s)[/red]")
