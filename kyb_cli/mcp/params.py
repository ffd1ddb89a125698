"""MCP tool signatures made from the operations table (kyb_cli/api/operations.py).

`@tool_params("task")` gives a tool function the table's fields as its signature: the SDK builds the
input schema from it (type, default, description, bounds, allowed values), so a tool takes exactly
what the table says. The function itself takes `**a` and gets every argument, defaults filled in.
`extra` adds a door-only argument (the reader's `today` for the deadlines block) with its type.
The schema is closed (`seal`): `required` lists the table's required fields and
`additionalProperties: false` says an argument the table does not name is refused (server.py's
`call_tool` refuses it with the known ones before the SDK sees the call).
"""

from __future__ import annotations

import functools
import inspect
from typing import Annotated, Any, Callable, Literal, Optional

from mcp.types import CallToolResult
from pydantic import BaseModel, create_model
from pydantic import Field as Schema

from kyb_cli.api.operations import OPERATIONS, Field

_TYPES: dict[str, Any] = {"string": str, "integer": int, "boolean": bool, "strings": list[str], "texts": list[str],
                          "objects": list[dict[str, Any]], "any": int | str}


def _item_model(field: Field) -> type[BaseModel]:
    """The object type of a list field with `items` (add_many's records: add's fields), for its schema."""
    parts: dict[str, Any] = {f.name: (annotation(f), ... if f.required else f.default) for f in field.items}
    return create_model(field.name.title().replace("_", ""), **parts)


def annotation(field: Field) -> Any:
    """The Python type the SDK turns into this field's JSON Schema."""
    kind: Any = (list[_item_model(field)] if field.items  # type: ignore[misc]
                 else Literal[field.enum] if field.enum else _TYPES[field.type])  # type: ignore[valid-type]
    if field.nullable or (field.default is None and not field.required):
        kind = Optional[kind]  # noqa: UP045 - a runtime type built from a variable
    listed = field.type in ("strings", "texts", "objects")  # a list's bounds are its length
    if not listed:  # a number's bounds: advertised in the schema, checked by the core (api.handle), one wording
        extra = {k: v for k, v in (("minimum", field.minimum), ("maximum", field.maximum)) if v is not None}
        return Annotated[kind, Schema(description=field.description, json_schema_extra=extra or None)]
    bounds = {k: v for k, v in (("min_length", field.minimum), ("max_length", field.maximum)) if v is not None}
    return Annotated[kind, Schema(description=field.description, **bounds)]


def _plain(value: Any) -> Any:
    """An argument as JSON data: the SDK hands a list of objects over as models, a handler takes dicts."""
    if isinstance(value, list):
        return [v.model_dump() if isinstance(v, BaseModel) else v for v in value]
    return value


def tool_params(operation: str, **extra: tuple[Any, Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a `def tool(**a)` function the signature of `operation`'s MCP fields (plus `extra`)."""
    params: list[inspect.Parameter] = []
    for field in OPERATIONS[operation].fields_of("mcp"):
        default = inspect.Parameter.empty if field.required else field.default
        params.append(inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=annotation(field)))
    for name, (kind, default) in extra.items():
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind))
    signature = inspect.Signature(params, return_annotation=CallToolResult)
    required = [f.name for f in OPERATIONS[operation].fields_of("mcp") if f.required]

    names = [p.name for p in params]
    defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    allowed, needed = frozenset(names), frozenset(n for n in names if n not in defaults)

    def decorate(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def tool(**given: Any) -> CallToolResult:
            # what signature.bind + apply_defaults give, without building a BoundArguments per call
            if not (given.keys() <= allowed and needed <= given.keys()):
                signature.bind(**given)  # raises the TypeError naming the argument
            return method(**{n: _plain(given[n]) if n in given else defaults[n] for n in names})

        tool.__signature__ = signature  # type: ignore[attr-defined]
        tool.required = required  # type: ignore[attr-defined]
        return tool

    return decorate


def seal(tool: Any, required: list[str]) -> None:
    """Close a registered tool's input schema: `required` from the table (present even when empty)
    and `additionalProperties: false`; its argument model refuses an extra argument too, so no way
    into the tool ignores a misspelled name."""
    from pydantic import ConfigDict

    tool.parameters["required"] = list(required)
    tool.parameters["additionalProperties"] = False
    model = tool.fn_metadata.arg_model
    tool.fn_metadata.arg_model = type(model.__name__, (model,), {
        "model_config": ConfigDict(**{**model.model_config, "extra": "forbid"}), "__module__": model.__module__})
