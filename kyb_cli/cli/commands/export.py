"""`kyb export [--at REV] [--format jsonl|json|csv]`: a snapshot, one row per key with its state."""

from __future__ import annotations

import sys

from kyb_cli.cli.common import LocatedDoor, common_options
from kyb_cli.cli.waiting import history_flag, wait_options
from kyb_cli.cli.options import table_command, table_options


@table_command("export")
@table_options("export")
@wait_options
@common_options
def export_cmd(at: str | None, fmt: str) -> None:
    from kyb_cli import api

    rows = api.handle("export", LocatedDoor(), {"at": at, "format": fmt})["rows"]
    flag = history_flag()
    if flag:  # each row says it: a row is the unit a consumer of jsonl reads
        rows = [{**r, **flag} for r in rows]
        if fmt == "csv":
            sys.stderr.write("kyb: history is still being indexed: rows are what is indexed so far\n")
    if fmt == "csv":
        lost = api.export_csv_lost(rows)
        if lost:
            sys.stderr.write(f"kyb: CSV cannot carry {', '.join(lost)}; an import of this file loses them "
                             "(use --format jsonl or json for a full round trip)\n")
    text = api.export_text(rows, fmt)
    sys.stdout.write(text)
    sys.stdout.flush()

