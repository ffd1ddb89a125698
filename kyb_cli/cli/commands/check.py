"""`kyb check [PATHS]`: validate record files as they lie on disk (pre-commit hooks, CI, hand edits)."""

from __future__ import annotations

import sys

import click

from kyb_cli.cli.common import common_options, store_location
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import hand_example
from kyb_cli.api import Rejected


@click.command("check", epilog=hand_example("kyb check knowledge/checkout-path.md"))
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@common_options
def check_cmd(paths: tuple[str, ...]) -> None:
    """Validate record files: front matter, key/path agreement, the write rules (secrets
    included), broken [[links]] and duplicate keys.

    With no PATHS, every record file in the store's working tree (the Git checkout you are in
    when it holds record directories and no --store, KYB_STORE or .kyb.toml names another);
    directories are searched for record files. Prints one `file:line: message` per problem on stderr and exits 3; prints
    nothing and exits 0 when all is well (a short OK on a terminal, a report with --json).
    """
    from pathlib import Path

    from kyb_cli import api
    from kyb_cli.api import StoreError

    if paths:
        report = api.check_paths(paths)
    else:
        location = store_location()
        root = location.path
        if location.is_default:  # inside a store's own checkout, check that store, not the default one
            root = api.enclosing_store(Path.cwd().absolute()) or root
        if not root.is_dir():
            raise StoreError(f"no store at {root}")
        report = api.check_store(root)
    if not report.ok:
        for problem in report.problems:
            sys.stderr.write(f"{problem}\n")
        files = len({p.path for p in report.problems})
        count = len(report.problems)
        raise Rejected(f"{count} problem{'s' if count != 1 else ''} in {files} file{'s' if files != 1 else ''}")
    ctx = click.get_current_context()
    if ctx.meta.get("kyb.json") or sys.stdout.isatty():
        emit(report.to_json(), lambda c, d: c.print(f"OK: {d['checked']} record file(s) checked"))
