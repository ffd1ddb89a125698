"""vulture's false positives in kyb_cli, each with why it is used (tests/test_layout_rules.py runs
vulture with this file; anything else vulture finds is dead code and goes).

Click commands are left out by `--ignore-decorators` (they are reached by name: cli/app.COMMANDS)."""

# ruff: noqa

is_store  # public Python API (docs/API.md), no door needs it
_ = object()
_.no_wrap  # rich Table column options (cli/render.py), read by rich
_.min_width
_.intra_op_num_threads  # onnxruntime SessionOptions (core/embed/embedder.py), read by onnxruntime
_.inter_op_num_threads
_.graph_optimization_level
_.log_severity_level
_.archived_at  # CatalogEntry fields (core/records/versions.py), serialised by to_json/asdict
_.archived_sha
archived_sha
archived_at
environment_names_in_source  # devtools/gen_docs.py: used by tests/test_doors_docs.py
run_after  # core/index/staged.py: the detached filler process calls it by name (staged._AFTER, a `python -c`)
_.task_status  # an MCP tool (mcp/tools.py), registered by name
_.handle_exit  # uvicorn Server hook overridden (serve/run.py), called by uvicorn
frame  # its signature
_.force_exit  # uvicorn Server attribute
find_secret  # records/validate.py: the one-text scan, used by tests/test_canon_validate.py
_.__signature__  # mcp/params.py: read by inspect.signature, which the MCP SDK builds the input schema from
_.run_stdio_async  # MCPServer hook overridden (mcp/server.py), called by the SDK's run("stdio")
__getattr__  # PEP 562 module hooks (api/__init__.py, core/embed/__init__.py): lazy areas, called by the import system
__dir__
_.__match_args__  # core/plain.py: what dataclasses sets, read by `match` statements
