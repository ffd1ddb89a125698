"""`kyb man [COMMAND]...`: the man page of kyb or of COMMAND, wherever the package put it.

A wheel installs the pages (generated into man/ by kyb_cli.devtools.gen_docs) as data files under
<prefix>/share/man/man1, where `man` looks when the venv's bin/ is on PATH and where pipx links
them from; a plain `pip install` into a venv nobody put on MANPATH still reaches them through this
command. On a terminal it opens the page with `man -l`; on a pipe it prints the roff source
(`kyb man add | man -l -`); `--path` prints where the page is.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import click


def man_dirs() -> list[Path]:
    """Where an installed kyb's pages are (the install prefix, the user base), then a checkout's man/."""
    prefixes = [sys.prefix, sys.exec_prefix, sys.base_prefix, getattr(site, "USER_BASE", None) or ""]
    dirs = [Path(p) / "share" / "man" / "man1" for p in dict.fromkeys(prefixes) if p]
    dirs.append(Path(__file__).resolve().parents[3] / "man")  # a source checkout
    return dirs


def find_page(slug: str) -> Path | None:
    for directory in man_dirs():
        page = directory / f"{slug}.1"
        if page.is_file():
            return page
    return None


@click.command("man")
@click.argument("command", nargs=-1)
@click.option("--path", "show_path", is_flag=True, help="Print the page's file path instead of the page.")
@click.pass_context
def man_cmd(ctx: click.Context, command: tuple[str, ...], show_path: bool) -> None:
    """Show the man page of kyb, or of COMMAND (`kyb man add`, `kyb man agents install`): opened with
    `man` on a terminal, its roff source on a pipe.

    \b
    Example: kyb man query          # the page of `kyb query`
             kyb man --path add     # where it is installed
    """
    from kyb_cli import api

    group = ctx.parent.command if ctx.parent else ctx.command
    target = group
    for name in command:
        sub = target.get_command(ctx, name) if isinstance(target, click.Group) else None
        if sub is None:
            raise click.UsageError(f"No such command '{' '.join(command)}'; `kyb help` lists them")
        target = sub
    slug = "-".join(("kyb", *command))
    page = find_page(slug)
    if page is None:
        where = ", ".join(str(d) for d in man_dirs())
        raise api.NotFound(f"the man page {slug}.1 is not installed (looked in {where}); "
                           f"`kyb {' '.join(command) + ' ' if command else ''}--help` has the same text")
    if show_path:
        click.echo(str(page))
        return
    if sys.stdout.isatty() and shutil.which("man") and not os.environ.get("KYB_OUTPUT"):
        sys.exit(subprocess.call(["man", "-l", str(page)]))
    click.echo(page.read_text(encoding="utf-8"), nl=False)
