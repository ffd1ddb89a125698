"""The MCP tools, made by a loop over the operations table (kyb_cli/api/operations.py).

Every operation the table offers to MCP is one tool: its name is `Operation.tool`, its description
the table's one description (`Operation.text("mcp")`), its input schema the table's fields
(mcp/params.py), and it calls the one handler every door calls (`api.handle`; `api.handle_dated`
for the four that carry the deadlines block and take the reader's `today`). Read tools are marked
read-only; `retract` is the one destructive tool; writes that change nothing when repeated are
marked idempotent. What a tool does beyond that is an entry in a small mapping below, never a
hand-written tool.
"""

from __future__ import annotations

from typing import Any, Callable

from mcp.types import CallToolResult, ToolAnnotations

from kyb_cli.api.operations import DATED, OPERATIONS, Operation
from kyb_cli.mcp.params import seal, tool_params
from kyb_cli.mcp.shared import Day

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
RETRACT = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                          open_world_hint=False)

# operation -> annotations; an operation not named here only reads (READ: a read-only server keeps it).
EFFECTS: dict[str, ToolAnnotations] = {
    "add": WRITE, "add-many": WRITE, "rm": RETRACT, "verify": WRITE, "incident": WRITE, "resolve": WRITE,
    "task": WRITE, "task-status": WRITE, "done": WRITE,
}
# operation -> the tool's text content when it is not the answer's JSON (context: the digest, for the model).
TEXTS: dict[str, Callable[[dict[str, Any]], str]] = {"context": lambda d: d["text"]}


def mcp_operations() -> list[Operation]:
    """The operations MCP offers, in the table's order."""
    return [op for op in OPERATIONS.values() if "mcp" in op.doors]


# tool name -> annotations; READ tools are the ones a read-only server keeps.
TOOLS: dict[str, ToolAnnotations] = {op.tool: EFFECTS.get(op.name, READ) for op in mcp_operations()}


def make_tool(op: Operation, door: Any) -> Callable[..., CallToolResult]:
    """The tool function of `op`: the table's MCP fields as its signature (plus `today` for a dated
    operation), calling the operation's handler through `door` (which resolves the store and shapes
    answers and errors)."""
    dated = op.name in DATED
    extra = {"today": (Day, None)} if dated else {}

    @tool_params(op.name, **extra)
    def tool(**a: Any) -> CallToolResult:
        def run() -> dict[str, Any]:
            from kyb_cli import api

            handle = api.handle_dated if dated else api.handle  # the deadlines block rides along
            return handle(op.name, door, a)

        return door.call(run, text=TEXTS.get(op.name))

    tool.__name__ = tool.__qualname__ = op.tool
    tool.__doc__ = op.text("mcp")
    return tool


class Tools:
    """Every MCP tool of `door` as an attribute named as the tool (`Tools(door).query(text=…)`): what
    `register` hands to the server, and what an in-process caller calls."""

    def __init__(self, door: Any) -> None:
        self.door = door
        for op in mcp_operations():
            setattr(self, op.tool, make_tool(op, door))


def register(server: Any, door: Any, *, readonly: bool = False) -> None:
    """Add every tool (only the read-only ones when `readonly`) to `server`."""
    tools = Tools(door)
    for op in mcp_operations():
        annotations = TOOLS[op.tool]
        if readonly and annotations is not READ:
            continue
        fn = getattr(tools, op.tool)
        server.tool(name=op.tool, description=op.text("mcp"), annotations=annotations)(fn)
        seal(server._tool_manager.get_tool(op.tool), fn.required)
