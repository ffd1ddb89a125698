"""The porcelain is documented as the Python API: explicit signatures, docstrings, `__all__`, docs/API.md.

`help(api.write_task)` must tell a Python user what a call takes, so no public api function hides
its parameters behind `*args`/`**kwargs`, and a wrapper's defaults are the core function's own.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

from kyb_cli import api
from kyb_cli.devtools import gen_api_docs

ROOT = Path(__file__).resolve().parents[1]
ALL_FUNCTIONS = [(area, f) for area in gen_api_docs.area_modules() for f in gen_api_docs.public_functions(area)]

# api function -> the core function it wraps, parameter for parameter (same names, kinds, defaults).
WRAPS = {
    "audit_label": "kyb_cli.core.canon.attribution:audit_label",
    "io_error": "kyb_cli.core.canon.permissions:io_error",
    "write_incident": "kyb_cli.core.kinds.incidents:write_incident",
    "resolve_incident": "kyb_cli.core.kinds.incidents:resolve_incident",
    "write_task": "kyb_cli.core.kinds.tasks:write_task",
    "transition_task": "kyb_cli.core.kinds.tasks:transition_task",
    "close_task": "kyb_cli.core.kinds.tasks:close_task",
    "failing": "kyb_cli.core.kinds.deadlines:failing",
    "describe": "kyb_cli.core.kinds.deadlines:describe",
    "found_agents": "kyb_cli.core.tools.agents:found_agents",
    "known_agents": "kyb_cli.core.tools.agents:known_agents",
    "plan_install": "kyb_cli.core.tools.agents:plan_install",
    "plan_uninstall": "kyb_cli.core.tools.agents:plan_uninstall",
    "apply_agent_changes": "kyb_cli.core.tools.agents:apply",
    "model_pull": "kyb_cli.core.embed.pull:pull",
    "model_import": "kyb_cli.core.embed.pull:import_model",
    "check_store": "kyb_cli.core.tools.check:check_store",
    "check_paths": "kyb_cli.core.tools.check:check_paths",
    "enclosing_store": "kyb_cli.core.tools.check:enclosing_store",
    "import_records": "kyb_cli.core.tools.importer:import_records",
    "rebuild_index": "kyb_cli.core.index.fresh:rebuild",
    "embed_all": "kyb_cli.core.index.vectors:embed_all",
    "index_status": "kyb_cli.core.index.vectors:status",
    "sync": "kyb_cli.core.sync.flow:sync",
    "background_sync": "kyb_cli.core.sync.background:background_sync",
    "remote_url": "kyb_cli.core.sync.remote:remote_url",
    "set_remote": "kyb_cli.core.sync.remote:set_remote",
    "clone": "kyb_cli.core.sync.flow:clone",
    "attribution": "kyb_cli.core.canon.attribution:detect",
    "retract_knowledge": "kyb_cli.core.kinds.knowledge:retract_knowledge",
    "edit_text": "kyb_cli.core.kinds.edit:edit_text",
    "save_edit": "kyb_cli.core.kinds.edit:save_edit",
    "init_store": "kyb_cli.core.canon.repo:init_store",
    "health": "kyb_cli.core.tools.health:health",
    "export_text": "kyb_cli.core.tools.export:render",
    "export_csv_lost": "kyb_cli.core.tools.export:csv_cannot_carry",
    "verify": "kyb_cli.core.kinds.verify:verify",
    "migrate_store": "kyb_cli.core.canon.transaction:migrate",
}
# Where the api speaks the operation table's name for a parameter the core calls otherwise (the one
# vocabulary of the doors and Python callers): api name -> core name.
TABLE_NAMES = {"parent": "parent_task", "started": "started_at", "detected": "detected_at", "format": "fmt",
               "exclude": "excludes"}

# api function -> the table operation it performs: its parameters are the operation's fields, by name.
OPERATION_OF = {
    "add_knowledge": "add", "write_task": "task", "transition_task": "task-status", "close_task": "done",
    "write_incident": "incident", "resolve_incident": "resolve", "retract_knowledge": "rm", "verify": "verify",
    "read": "get", "history": "history", "query": "query", "import_records": "import",
}
# What a Python caller passes besides the table's fields: the store and writer a door supplies, a
# progress callback, the reader's day.
NOT_FIELDS = {"store", "attribution", "progress", "today"}


def _core(target: str):
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize("area,func", ALL_FUNCTIONS, ids=[f"{a}.{f.__name__}" for a, f in ALL_FUNCTIONS])
def test_every_api_function_has_a_docstring_and_an_explicit_signature(area, func):
    assert (inspect.getdoc(func) or "").strip(), f"api.{area}.{func.__name__} has no docstring"
    hidden = [p.name for p in inspect.signature(func).parameters.values()
              if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    assert not hidden, f"api.{func.__name__} hides its parameters behind *{hidden}: spell them out"


def test_api_all_lists_exactly_the_public_functions_errors_and_constants():
    functions = {f.__name__ for _area, f in ALL_FUNCTIONS}
    errors = {name for name, obj in vars(api).items() if isinstance(obj, type) and issubclass(obj, api.KybError)}
    assert errors == set(gen_api_docs.ERRORS)
    assert sorted(api.__all__) == sorted(functions | errors | set(gen_api_docs.CONSTANTS))
    for name in api.__all__:
        assert hasattr(api, name)
    for name in functions:
        assert getattr(api, name) is next(f for _a, f in ALL_FUNCTIONS if f.__name__ == name), name


@pytest.mark.parametrize("name", sorted(WRAPS))
def test_api_wrapper_keeps_the_core_functions_parameters_and_defaults(name):
    """Same names in the same order, same kinds (keyword-only where core's are), same defaults; core's
    KEEP default is the api's KEEP (a marker of its own, so importing the api loads no core)."""
    from kyb_cli.core.kinds.lifecycle import KEEP as CORE_KEEP

    ours = inspect.signature(getattr(api, name)).parameters
    theirs = inspect.signature(_core(WRAPS[name])).parameters
    core_name = {n: TABLE_NAMES.get(n, n) for n in ours}
    assert [core_name[n] for n in ours] == list(theirs), f"api.{name} parameters differ from {WRAPS[name]}"
    for qname, q in ours.items():
        p = theirs[core_name[qname]]
        pname = qname
        assert q.kind == p.kind, f"api.{name}({pname}) kind {q.kind} != core {p.kind}"
        expected = api.KEEP if p.default is CORE_KEEP else p.default
        assert q.default is expected or q.default == expected, f"api.{name}({pname}) default {q.default!r} != {p.default!r}"


@pytest.mark.parametrize("name", sorted(OPERATION_OF))
def test_api_functions_take_the_operation_tables_names(name):
    """One vocabulary: `api.write_task(parent=…)` as MCP's `parent` and the CLI's `--parent`; a porcelain
    function that re-declared a field under another name (`parent_task`, `started_at`, `fmt`) fails here."""
    from kyb_cli.api.operations import OPERATIONS

    params = set(inspect.signature(getattr(api, name)).parameters) - NOT_FIELDS
    fields = {f.name for f in OPERATIONS[OPERATION_OF[name]].fields}
    assert params - fields == set(), f"api.{name} names parameters the table does not: {params - fields}"


def test_every_api_function_is_either_checked_against_core_or_composed_in_the_api():
    """A new pass-through must join WRAPS (so its defaults are checked); the rest compose core calls."""
    composed = {"add_knowledge", "read", "history", "is_store", "split_list",
                "query", "semantic_off_message", "semantic_missing_message", "pending_vectors_message", "context_unavailable", "context_hook_json",
                "locate", "open_store", "store_path", "git_dir", "incident_template", "handle",
                "deadlines_switched_off", "model_status", "semantic_available", "export_media_type",
                "history_wait_policy", "history_incomplete", "with_history_flag", "reset_history_state", "keep_warm",
                "trust_of", "today_arg", "reader_day", "deadlines_block",
                "preload", "internal_error", "answer_text", "argument_shown", "argument_shown_in", "loads_json", "has_lone_surrogate",
                "example", "spelled",
                "check_arguments", "out_of_bounds", "with_deadlines", "as_error", "handle_dated", "answer",
                "recall", "recall_hook"}
    functions = {f.__name__ for _area, f in ALL_FUNCTIONS}
    assert functions - set(WRAPS) - composed == set(), "add new api functions to WRAPS (or to `composed`)"


def test_api_keep_marker_keeps_the_stored_tags_and_due_date(store):
    """KEEP (the default, or passed as `api.KEEP`) keeps the stored value; [] clears."""
    who = api.attribution("test", environ={})
    api.write_task(store, who, key="task-a", title="A", tags=["x"], due="2030-01-01")
    api.write_task(store, who, key="task-a", title="A again")
    found = api.read(store.path, "task-a").record
    assert (found.tags, found.due) == (["x"], "2030-01-01")
    api.write_task(store, who, key="task-a", title="A", tags=api.KEEP, due=api.KEEP, body="b")
    found = api.read(store.path, "task-a").record
    assert (found.tags, found.due) == (["x"], "2030-01-01")
    api.write_task(store, who, key="task-a", title="A", tags=[], due="")
    found = api.read(store.path, "task-a").record
    assert (found.tags, found.due) == ([], "")


def test_api_keep_marker_is_false_and_prints_as_keep():
    assert not api.KEEP and repr(api.KEEP) == "KEEP"


def test_committed_api_reference_matches_the_api():
    assert not gen_api_docs.stale(ROOT), f"docs/API.md is out of date; regenerate with `{gen_api_docs.REGENERATE}`"


def test_api_reference_has_one_entry_per_function_grouped_by_area():
    text = gen_api_docs.generate()
    for area in ("records", "work", "search", "sync", "tools", "store"):
        assert f"\n## {area}\n" in text
    for area, func in ALL_FUNCTIONS:
        entry = f"### `api.{func.__name__}`"
        assert text.count(entry) == 1, entry
        section = text[text.index(f"\n## {area}\n"):]
        assert entry in section.split("\n## ", 2)[1]
    assert "write_task(store, attribution, *, key: str" in text and "tags: Any = KEEP" in text
    assert "*args" not in text and "**kwargs" not in text


def test_readme_python_api_section_links_the_reference():
    section = (ROOT / "docs" / "guide" / "python-api.md").read_text(encoding="utf-8")  # the guide's page
    assert "docs/API.md" in section and "](../API.md)" in section
    assert "docs/guide/python-api.md" in (ROOT / "README.md").read_text(encoding="utf-8")
