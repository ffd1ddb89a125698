"""`kyb model pull | import DIR | status`: get the embedding model and see what semantic search uses."""

from __future__ import annotations

import click

from kyb_cli.cli.common import HintGroup, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import hand_example


@click.group("model", epilog=hand_example("kyb model status"), cls=HintGroup)
def model_cmd() -> None:
    """The embedding models for semantic search (int8 ONNX): multilingual-e5-small (every question)
    and bge-small-en-v1.5 (English questions too, optional).

    e5 is found as KYB_MODEL, else `model = "DIR"` in the config file, else the default model
    directory; bge as KYB_MODEL_EN, else `model_en = "DIR"`, else its default directory.
    """


@model_cmd.command("pull", epilog=hand_example("kyb model pull"))
@click.option("--url", metavar="URL", help="Base URL to download from (else KYB_MODEL_URL, else the public one).")
@click.option("--dir", "dest", metavar="DIR", type=click.Path(file_okay=False),
              help="Install here instead of the default model directory.")
@common_options
def pull_cmd(url: str | None, dest: str | None) -> None:
    """Download the pinned model files, verify sha256, resume a broken download, install atomically."""
    import sys

    from kyb_cli import api

    progress_bar = None
    tasks: dict[str, int] = {}
    if sys.stderr.isatty():
        from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

        from kyb_cli.cli.output import console

        progress_bar = Progress("{task.description}", BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                                console=console(stderr=True), transient=True)

    def progress(name: str, done: int, total: int) -> None:
        if progress_bar is None:
            return
        if name not in tasks:
            tasks[name] = progress_bar.add_task(name, total=total)
        progress_bar.update(tasks[name], completed=done)

    if progress_bar is not None:
        with progress_bar:
            result = api.model_pull(dest=dest, url=url, progress=progress)
    else:
        result = api.model_pull(dest=dest, url=url, progress=progress)
    emit(result, lambda c, d: c.print(f"model {d['action']}: {d['path']}"))


@model_cmd.command("import", epilog=hand_example("kyb model import ./multilingual-e5-small"))
@click.argument("source", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--dir", "dest", metavar="DIR", type=click.Path(file_okay=False),
              help="Install here instead of the default model directory.")
@click.option("--name", metavar="NAME", help="Which model it is: multilingual-e5-small or bge-small-en-v1.5 "
              "(default: told from its tokenizer).")
@common_options
def import_cmd(source: str, dest: str | None, name: str | None) -> None:
    """Copy a local model directory (model.onnx + tokenizer.json) in, after checking it loads."""
    from kyb_cli import api

    result = api.model_import(source, dest, name)
    emit(result, lambda c, d: c.print(f"model {d['name']} imported into {d['path']} (fingerprint {d['fingerprint']})"))


@model_cmd.command("status", epilog=hand_example("kyb model status"))
@common_options
def status_cmd() -> None:
    """Which model is found, where from, whether it loads, and its fingerprint (each model)."""
    from kyb_cli import api

    result = api.model_status()

    def human(c, d):
        for name, m in (d.get("models") or {"model": d}).items():
            if not m.get("found"):
                c.print(f"{name}: not found: {m.get('reason')}")
                continue
            state = "loads" if m.get("loads") else f"does not load: {m.get('reason')}"
            c.print(f"{name}: {m['path']} (from {m['source']}), {state}")
            c.print(f"  fingerprint {m['fingerprint']}" + (f", dim {m['dim']}" if m.get("dim") else ""))

    emit(result, human)
