"""The rich console the CLI writes readable output to: a leaf, so output and waiting both use it
without importing each other."""

from __future__ import annotations

import os


def console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, no_color=bool(os.environ.get("NO_COLOR")), highlight=False)
