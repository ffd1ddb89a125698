"""kyb's Python API, the porcelain: the only entry into `kyb_cli.core` for every door (CLI, MCP, HTTP).

    from kyb_cli import api

    store = api.open_store()                        # the default store is created on first use
    api.add_knowledge(store, key="port", title="Port", body="9090", tags=[], refs=[],
                      attribution=api.attribution("script"))
    path, reply = api.query(None, "port")            # the same pipeline `kyb query` runs
    api.read(path, "port").to_json()

Functions are grouped by area (records, work, search, sync, tools, store) and re-exported here.
Each imports core inside its body, so `import kyb_cli.api` stays light (the `kyb query` hot path
loads no pygit2, numpy, onnxruntime, rich or platformdirs), and the areas a query does not use
(records, work, tools, trust, the operations table…) are imported on first use of one of their
names (`_LAZY`, PEP 562): `kyb query` pays for search and store only (~5 ms of its floor, issue 27). The error classes come with it: every
failure is a KybError with an exit code (docs/ARCHITECTURE.md, "Output contract").
`help(api.write_task)` shows the call: every function has an explicit signature and a docstring
saying what it returns and raises; docs/API.md is the reference, by area.

`__all__` is the public surface: the functions of the area modules, the error classes, and the
constants KEEP (an argument not given: keep the stored value), LISTING_MAX_LIMIT, REMOTE,
EXIT_CODES and EXIT_INTERNAL (with `internal_error_message`, what a door says of a bug).
"""

from kyb_cli.api.failure import InternalError, internal_error
from kyb_cli.api.preload import preload
from kyb_cli.api.search import (
    context, context_hook_json, context_unavailable, embed_all, health, history_incomplete, history_wait_policy,
    index_status, keep_warm, query, rebuild_index, render_context, reset_history_state, semantic_available,
    semantic_off_message, semantic_missing_message, pending_vectors_message,
)
from kyb_cli.api.store import attribution, git_dir, init_store, locate, open_store, store_path
from kyb_cli.api.sync import REMOTE, background_sync, clone, remote_url, set_remote, sync  # sync: the function
from kyb_cli.core.errors import (  # noqa: F401 - re-exported: the doors catch these
    EXIT_CODES, EXIT_INTERNAL, KybError, LockTimeout, NotFound, Rejected, RemoteError, StoreError, UsageError,
    internal_error_message,
)

# The other areas' names, imported when first asked for (`api.write_task`, `from kyb_cli.api import handle`).
_LAZY = {name: area for area, names in {
    "handlers": "handle",
    "limits": "loads_json",
    "operations": "example min_strength_arg spelled",
    "records": """add_knowledge check_knowledge_key diff edit_text event_time history is_date is_store read
                  retract_knowledge save_edit split_list tags""",
    "tools": """add_many apply_agent_changes check_paths check_store diagnose enclosing_store export_csv_lost
                export_media_type export_rows export_text found_agents import_records known_agents log
                model_import model_pull model_status plan_install plan_uninstall""",
    "trust": "annotate_hits rules stale today_arg trust_of verify",
    "work": """KEEP LISTING_MAX_LIMIT close_task dated_tasks deadlines deadlines_block deadlines_switched_off describe
               failing incident_template list_incidents list_tasks resolve_incident transition_task write_incident
               write_task""",
}.items() for name in names.split()}

# The public surface, in the order of the areas (docs/API.md).
__all__ = [
    "add_knowledge", "check_knowledge_key", "diff", "edit_text", "event_time", "history", "is_date",
    "is_store", "read", "retract_knowledge", "save_edit", "split_list", "tags", "context",
    "context_hook_json", "context_unavailable", "embed_all", "health", "history_incomplete",
    "history_wait_policy", "index_status", "keep_warm", "query", "rebuild_index", "render_context",
    "reset_history_state", "semantic_available", "semantic_off_message", "semantic_missing_message",
    "pending_vectors_message", "InternalError", "internal_error", "handle", "loads_json", "example",
    "min_strength_arg", "spelled", "preload", "attribution", "git_dir", "init_store", "locate",
    "open_store", "store_path", "annotate_hits", "rules", "stale", "today_arg", "trust_of", "verify",
    "sync", "REMOTE", "background_sync", "clone", "remote_url", "set_remote", "add_many",
    "apply_agent_changes", "check_paths", "check_store", "diagnose", "enclosing_store", "export_csv_lost",
    "export_media_type", "export_rows", "export_text", "found_agents", "import_records", "known_agents",
    "log", "model_import", "model_pull", "model_status", "plan_install", "plan_uninstall", "KEEP",
    "LISTING_MAX_LIMIT", "close_task", "dated_tasks", "deadlines", "deadlines_block",
    "deadlines_switched_off", "describe", "failing", "incident_template", "list_incidents", "list_tasks",
    "resolve_incident", "transition_task", "write_incident", "write_task", "EXIT_CODES", "EXIT_INTERNAL",
    "KybError", "LockTimeout", "NotFound", "Rejected", "RemoteError", "StoreError", "UsageError",
    "internal_error_message",
]


def __getattr__(name: str):
    area = _LAZY.get(name)
    if area is None:
        raise AttributeError(f"module 'kyb_cli.api' has no attribute '{name}'")
    import importlib

    value = getattr(importlib.import_module(f"kyb_cli.api.{area}"), name)
    globals()[name] = value  # asked once: later reads are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
