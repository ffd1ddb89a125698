"""`--no-wait` and what a historical question shows while it waits for a staged index's history.

Commands that need past versions (`query --history/--as-of/--changed-between`, `history`,
`get --at`, `export --at`) add `@wait_options`. Before the history of a new index is in (see
core/index/staged.py, through kyb_cli.api) they wait for it: a progress bar on a terminal, one line on stderr on a
pipe. `--no-wait` answers at once from what is indexed, with `"history_complete": false`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any, Callable


class WaitDisplay:
    """progress(done, total, stage) from the core: a transient bar on a terminal, else one line."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.task: Any = None
        self.said = False

    def __call__(self, done: int, total: int, stage: str) -> None:
        if stage == "done":
            if self.bar is not None:
                self.bar.stop()
                self.bar = None
            return
        try:
            tty = sys.stderr.isatty()
        except (AttributeError, ValueError):
            tty = False
        if not tty:
            if not self.said:
                self.said = True
                sys.stderr.write(f"kyb: waiting for the index to read the history ({done:,} of {total:,} "
                                 "commits); --no-wait answers at once from what is indexed\n")
                sys.stderr.flush()
            return
        if self.bar is None:
            from rich.progress import Progress

            from kyb_cli.cli.consoles import console

            self.bar = Progress(console=console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("reading history (--no-wait: answer now)", total=total or None)
        self.bar.update(self.task, completed=done, total=total or None)


def set_policy(no_wait: bool) -> None:
    from kyb_cli import api

    api.history_wait_policy(not no_wait, WaitDisplay())


def _set_policy(_ctx, _param, value: bool) -> bool:
    set_policy(value)
    return value


def wait_options(func: Callable[..., Any]) -> Callable[..., Any]:
    import click

    return click.option("--no-wait", "no_wait", is_flag=True, expose_value=False, callback=_set_policy,
                        help="While a new index is still reading history, answer now from what is "
                             "indexed (\"history_complete\": false) instead of waiting.")(func)


def history_flag() -> dict[str, bool]:
    """`{"history_complete": False}` when this process answered from an incomplete index, else {}."""
    from kyb_cli import api

    return {"history_complete": False} if api.history_incomplete() else {}
