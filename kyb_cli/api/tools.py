"""Tools over a store: check (the linter), export, doctor, agent instruction files, the model, the log."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable


def check_store(root: Path):
    """Check every record file in the working tree of the store at `root`, as `kyb check` does.

    Returns a CheckReport: `checked` (files), `problems` (each with path, line, message), `ok`,
    and `to_json()` -> `{ok, checked, problems}`. Problems are reported, not raised."""
    from kyb_cli.core.tools.check import check_store as core

    return core(root)


def check_paths(paths: Iterable[str]):
    """Check the record files at `paths` (as `kyb check FILE...`, e.g. from a pre-commit hook).

    Returns a CheckReport (as `check_store`). Problems are reported, not raised."""
    from kyb_cli.core.tools.check import check_paths as core

    return core(paths)


def enclosing_store(start: Path) -> Path | None:
    """The Git work tree around `start` when it holds record directories (a store checked out by hand,
    no .kyb.toml), else None: what `kyb check` run inside it means."""
    from kyb_cli.core.tools.check import enclosing_store as core

    return core(start)


def export_text(rows: list[dict], fmt: str) -> str:
    """`kyb export --format FMT` as text (jsonl | json | csv)."""
    from kyb_cli.core.tools.export import render

    return render(rows, fmt)


def export_csv_lost(rows: list[dict]) -> list[str]:
    """Field names with values that a CSV export cannot carry (use jsonl/json to keep them)."""
    from kyb_cli.core.tools.export import csv_cannot_carry

    return csv_cannot_carry(rows)


def export_media_type(fmt: str) -> str:
    """The HTTP media type of an export format."""
    from kyb_cli.core.tools.export import MEDIA_TYPES

    return MEDIA_TYPES[fmt]


def known_agents(home: Path | None = None, env: dict[str, str] | None = None) -> list:
    """Every coding agent kyb knows (claude, codex, gemini, cursor) as Agents `{name, label, home, instructions}`,
    their homes under `home` (default: $HOME; CODEX_HOME, CLAUDE_CONFIG_DIR in `env` move them)."""
    from kyb_cli.core.tools.agents import known_agents as core

    return core(home, env)


def found_agents(names: tuple[str, ...] = (), home: Path | None = None) -> list:
    """The Agents `kyb agents install` acts on: exactly the `names` given, else those whose home exists.
    Raises UsageError (exit 2: an unknown agent name)."""
    from kyb_cli.core.tools.agents import found_agents as core

    return core(names, home)


def plan_install(agents: list, project: Path | None = None, *, mcp: bool = False, hook: bool = False,
                 env: dict[str, str] | None = None) -> tuple[list, list[str]]:
    """(changes, notes): the Changes `kyb agents install` would make for `agents` (user level, or in
    `project`), nothing written: the instructions pointer and skill, plus the MCP server entry with
    `mcp` and the session-start hook with `hook`; notes name files left alone. `env` (default: this
    process's environment) locates the agents' homes. Apply with `apply_agent_changes`."""
    from kyb_cli.core.tools.agents import plan_install as core

    return core(agents, project, mcp=mcp, hook=hook, env=env)


def plan_uninstall(agents: list, project: Path | None = None, env: dict[str, str] | None = None) -> list:
    """The Changes `kyb agents uninstall` would make: everything install may have added for `agents`
    (whatever flags it was given) removed, nothing written."""
    from kyb_cli.core.tools.agents import plan_uninstall as core

    return core(agents, project, env)


def apply_agent_changes(changes: list) -> None:
    """Write planned Changes (`{path, before, after}`); a removed skill takes the directories install made."""
    from kyb_cli.core.tools.agents import apply

    apply(changes)


def model_pull(dest: Path | None = None, url: str | None = None, progress=None, timeout: float = 60.0,
               pins: dict | None = None) -> dict:
    """`kyb model pull`: download the pinned model files into `dest` (default: the model directory),
    verify their sha256, install atomically. Returns `{action: installed|unchanged, path, ...}`.
    Raises RemoteError (exit 5: download failed, a hash mismatch), StoreError (exit 4: cannot write)."""
    from kyb_cli.core.embed.pull import pull

    return pull(dest, url, progress, timeout, pins)


def model_import(source: Path, dest: Path | None = None, name: str | None = None) -> dict:
    """`kyb model import DIR [--name NAME]`: copy a local model directory in after checking that it
    loads and embeds. `name`: which model of the registry it is (multilingual-e5-small,
    bge-small-en-v1.5); without it, told from the tokenizer. Installed into that model's default
    directory unless `dest`. Returns `{action: imported, name, path, from, dim, ...}`. Raises
    UsageError (exit 2: not a directory, files missing, does not load, unknown or undetectable
    model, already the model directory), StoreError (exit 4: cannot write)."""
    from kyb_cli.core.embed.pull import import_model

    return import_model(source, dest, name)


def model_status() -> dict:
    """`kyb model status`: `{found, loads, recipe, path, source, fingerprint, dim, reason, ...}`, what
    multilingual-e5-small is found, where from, whether it loads, and `models`: the same for each
    model of the registry by name. Raises nothing: a missing model is `found: false`."""
    from kyb_cli.core.embed.pull import status

    return status()


def import_records(store, paths: list[str], *, attribution, format: str = "auto", kind: str = "knowledge",  # noqa: A002 - the table's name
                   tags: list[str] | None = None, key_from: str = "path", exclude: list[str] | None = None,
                   dry_run: bool = False, one_commit: bool = False, sync_deletes: bool = False,
                   progress: Any = None) -> dict[str, Any]:
    """`kyb import`: Markdown files and folders, or `kyb export` output, in one batch (one branch move).

    Returns `{created, updated, unchanged, skipped: [{path, reason}], missing, duplicates, commits, head}`
    (`dry_run: true` when nothing was written). `progress(phase, done, total)` is called as it goes.
    Raises UsageError (exit 2: a bad option, a missing path), StoreError (exit 4: not a store, locked)."""
    from kyb_cli.api._writes import writes
    from kyb_cli.core.tools.importer import import_records as core

    with writes(store):
        return core(store, paths, attribution=attribution, fmt=format, kind=kind, tags=tags, key_from=key_from,
                    excludes=exclude, dry_run=dry_run, one_commit=one_commit, sync_deletes=sync_deletes,
                    progress=progress)


def migrate_store(store, attribution) -> dict:
    """`kyb migrate`: move every record file of an old, flat store to its fanned-out path in one commit
    (blobs unchanged; not a new version of any record): `{changed, moved, sha}`. A no-op on a store
    already fanned out. The first write after an upgrade does the same move by itself."""
    from kyb_cli.core.canon.transaction import migrate

    return migrate(store, attribution)
