"""`kyb edit KEY`: change a record in $VISUAL/$EDITOR, as a file, without retyping its title and tags."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import click

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit, note
from kyb_cli.cli.render import write_reply
from kyb_cli.cli.options import table_command, table_options


def editor_command() -> list[str]:
    """$VISUAL, else $EDITOR, else vi — split as a shell would (`code --wait` works)."""
    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            return shlex.split(value)
    return ["vi"]


def run_editor(path: Path) -> None:
    from kyb_cli import api

    cmd = editor_command()
    try:
        proc = subprocess.run([*cmd, str(path)])
    except FileNotFoundError:
        raise api.UsageError(f"cannot start the editor '{cmd[0]}' — set VISUAL or EDITOR") from None
    if proc.returncode != 0:
        raise api.UsageError(f"the editor '{cmd[0]}' exited with {proc.returncode}; nothing was written "
                             f"(your text is in {path})")


def _interactive() -> bool:
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


@table_command("edit")
@table_options("edit")
@common_options
def edit_cmd(key: str) -> None:
    from kyb_cli import api

    door = CliDoor()
    door.edit = lambda original, save: _edit_loop(key, original, save)
    emit(api.handle("edit", door, {"key": key}), write_reply)


def _edit_loop(key: str, original: str, save):
    """The editor on a temporary file until `save` keeps a text (or the text is unchanged); a rejected
    text stays in its file, and on a terminal kyb offers to edit it again."""
    from kyb_cli import api

    fd, name = tempfile.mkstemp(prefix=f"kyb-edit-{key}-", suffix=".md")
    path = Path(name)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
        fh.write(original)
    while True:
        run_editor(path)
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            reply = save(text)
        except api.Rejected as exc:
            if _interactive():
                note(f"{exc.message} — your edit is kept in {path}")
                if click.confirm("kyb: edit it again?", default=True, err=True):
                    continue
            raise api.Rejected(f"edit not saved: {exc.message} (your text is in {path})") from None
        path.unlink(missing_ok=True)
        return reply
