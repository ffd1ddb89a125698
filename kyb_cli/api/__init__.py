"""kyb's Python API, the porcelain: the only entry into `kyb_cli.core` for every door (CLI, MCP, HTTP).

    from kyb_cli import api

    store = api.open_store()                        # the default store is created on first use
    api.add_knowledge(store, key="port", title="Port", body="9090", tags=[], refs=[],
                      attribution=api.attribution("script"))
    path, reply = api.query(None, "port")            # the same pipeline `kyb query` runs
    api.read(path, "port").to_json()

Functions are grouped by area (records, work, search, sync, tools, store) and re-exported here.
Every operation of the table (api/operations.py) is `api.handle(name, door, fields)`, the call
the doors make; a function here that only forwarded to the core for one of them is gone.
Each imports core inside its body, so `import kyb_cli.api` stays light (the `kyb query` hot path
loads no pygit2, numpy, onnxruntime, rich or platformdirs), and the areas a query does not use
(records, work, tools, trust, the operations table…) are imported on first use of one of their
names (`_LAZY`, PEP 562): `kyb query` pays for search and store only (~5 ms of its floor, issue 27). The error classes come with it: every
failure is a KybError with an exit code (docs/ARCHITECTURE.md, "Output contract").
`help(api.write_task)` shows the call: every function has an explicit signature and a docstring
saying what it returns and raises; docs/API.md is the reference, by area.

`__all__` is the public surface: the functions of the area modules, the error classes, and the
constants KEEP (an argument not given: keep the stored value), LISTING_MAX_LIMIT, REMOTE,
EXIT_CODES and EXIT_INTERNAL (with `internal_error_message`, what a door says of a bug), COMPACT_DROPS
(what a query hit leaves out unless `full`) and COMPACT_KEEPS (what it always carries).
"""

from types import ModuleType as _ModuleType

from kyb_cli.api.failure import (
    InternalError, answer, answer_text, argument_shown, argument_shown_in, as_error, internal_error, io_error,
)
from kyb_cli.api.preload import preload
from kyb_cli.api.search import (
    context_hook_json, context_unavailable, embed_all, health, history_incomplete, history_wait_policy,
    index_status, keep_warm, query, rebuild_index, reset_history_state, semantic_available, with_history_flag,
    semantic_off_message, semantic_missing_message, pending_vectors_message,
)
from kyb_cli.api.store import attribution, audit_label, git_dir, init_store, locate, open_store, store_path
from kyb_cli.api.sync import REMOTE, background_sync, clone, remote_url, set_remote, sync  # sync: the function
from kyb_cli.core.errors import (  # noqa: F401 - re-exported: the doors catch these
    EXIT_CODES, EXIT_INTERNAL, KybError, LockTimeout, NotFound, Rejected, RemoteError, StoreError, UsageError,
    internal_error_message,
)

# The other areas' names, imported when first asked for (`api.write_task`, `from kyb_cli.api import handle`).
_LAZY = {name: area for area, names in {
    "handlers": "handle handle_dated",
    "limits": "has_lone_surrogate loads_json",
    "operations": "COMPACT_DROPS COMPACT_KEEPS check_arguments example out_of_bounds spelled",
    "recalls": "recall recall_hook",
    "records": "add_knowledge edit_text history is_store read retract_knowledge save_edit split_list",
    "tools": """apply_agent_changes check_paths check_store enclosing_store export_csv_lost export_media_type
                export_text found_agents import_records known_agents migrate_store model_import model_pull model_status
                plan_install plan_uninstall""",
    "trust": "reader_day today_arg trust_of verify",
    "work": """KEEP LISTING_MAX_LIMIT close_task deadlines_block deadlines_switched_off describe failing
               incident_template resolve_incident transition_task with_deadlines write_incident write_task""",
}.items() for name in names.split()}

# The public surface: everything imported above but the area modules themselves (`api.sync` is the
# function, not the module), then the lazy areas' names.
__all__ = [name for name, obj in dict(globals()).items()
           if not name.startswith("_") and not isinstance(obj, _ModuleType)] + list(_LAZY)


def __getattr__(name: str):
    area = _LAZY.get(name)
    if area is None:
        raise AttributeError(f"module 'kyb_cli.api' has no attribute '{name}'")
    module = f"kyb_cli.api.{area}"
    __import__(module)  # not importlib: its import is ~0.4 ms of every `kyb query` (issue 38)
    import sys

    value = getattr(sys.modules[module], name)
    globals()[name] = value  # asked once: later reads are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
