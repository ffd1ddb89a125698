"""The table's two records: a `Field` (one parameter of an operation: type, default, help, allowed
values, bounds, `keep`, an example, each door's spelling) and an `Operation` (its fields, summary,
example, doors). THE table itself, one `Operation` per operation, is operations.py."""

from __future__ import annotations

import re

from kyb_cli.core.plain import plain, replace  # not dataclasses: a `kyb query` imports this table (issue 36)
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any


@plain(frozen=True)
class Field:
    name: str
    type: str = "string"  # string | integer | boolean | strings | texts | objects | any
    # (texts: a list of strings each kept whole — no comma splitting; repeated in a query string)
    default: Any = None
    description: str = ""
    required: bool = False
    enum: tuple[str, ...] | None = None
    minimum: int | None = None  # a number's bounds; a list's item counts (advertised: the core enforces them)
    maximum: int | None = None
    nullable: bool = False  # `keep`: null (or absent) keeps the stored value
    example: Any = None
    http: str | None = None  # the HTTP name when it is not `name`
    cli: str | None = None  # the Click parameter name when it is not `name`
    positional: bool = False  # a CLI argument (KEY, query's TEXT), not an option; a path segment where a route says
    metavar: str | None = None  # the CLI's placeholder (DATE, REV, N); DATE also says: a calendar date, one rule (api.handlers._check_dates)
    aliases: tuple[str, ...] = ()  # further CLI spellings kept for old scripts (`--parent-task`)
    doors: tuple[str, ...] = ("cli", "mcp", "http")  # a field one door lacks says so here, with why
    multiple: bool = False  # a repeatable CLI option (`--exclude A`, `--tag a --tag b,c`): every value as given
    items: tuple[Field, ...] = ()  # objects: the fields of each object (`add_many`'s records are `add`'s)

    @property
    def flag(self) -> str:
        """The CLI spelling: `--remind-days` for `remind_days`, `KEY` for a positional."""
        return (self.metavar or self.name.upper()) if self.positional else "--" + self.name.replace("_", "-")

    @property
    def arity(self) -> int:
        """Arguments one use of the CLI option takes: N for a list of exactly N (`--changed-between A B`), else 1."""
        exact = self.type == "strings" and not self.multiple and self.minimum and self.minimum == self.maximum
        return self.minimum if exact else 1  # type: ignore[return-value]

    def spelling(self, door: str) -> str:
        """How a caller of `door` (cli | mcp | http) spells this field, for error messages."""
        return self.flag if door == "cli" else (self.http or self.name) if door == "http" else self.name

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of this field (for /openapi.json and MCP)."""
        base: dict[str, Any] = dict({
            "string": {"type": "string"}, "integer": {"type": "integer"}, "boolean": {"type": "boolean"},
            "strings": {"type": "array", "items": {"type": "string"}},
            "texts": {"type": "array", "items": {"type": "string"}},
            "objects": {"type": "array", "items": {"type": "object"}},
            "any": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        }[self.type])
        if self.enum:
            base["enum"] = list(self.enum)
        if self.items:
            base["items"] = {"type": "object", "properties": {f.name: f.schema() for f in self.items},
                             "required": [f.name for f in self.items if f.required]}
        array = base.get("type") == "array"  # a list's bounds are its length
        if self.minimum is not None:
            base["minItems" if array else "minimum"] = self.minimum
        if self.maximum is not None:
            base["maxItems" if array else "maximum"] = self.maximum
        if self.default not in (None, [], "") or self.type == "boolean":
            base["default"] = self.default if self.default is not None else False
        if self.nullable:
            base = {"anyOf": [base, {"type": "null"}]}
        if self.description:
            base["description"] = self.description
        if self.example is not None:
            base["examples"] = [self.example]
        return base

    def for_http(self) -> Field:
        return replace(self, name=self.http) if self.http else self


@plain(frozen=True)
class Operation:
    name: str
    summary: str
    fields: tuple[Field, ...]
    example: str = ""  # one CLI call, shown in --help (an MCP-only operation: one tool call)
    doors: tuple[str, ...] = ("cli", "mcp", "http")  # the doors that offer this operation
    mcp: str = ""  # the MCP tool name when it is not `name` with `_` for `-` (`retract` for `rm`)

    @property
    def tool(self) -> str:
        return self.mcp or self.name.replace("-", "_")

    def fields_of(self, door: str) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if door in f.doors)

    def http_fields(self, path: str = "") -> tuple[Field, ...]:
        """The query/body arguments of the operation's route at `path` (a `{key}` there is not one)."""
        return tuple(f.for_http() for f in self.fields_of("http") if "{%s}" % (f.http or f.name) not in path)

    def named(self, values: dict[str, Any], door: str) -> dict[str, Any]:
        """A door's values (`include_all` on the CLI, `from` over HTTP) under the table's field names."""
        spelled = {"cli": lambda f: f.cli or f.name, "http": lambda f: f.http or f.name}.get(door, lambda f: f.name)
        return {f.name: values[spelled(f)] for f in self.fields if spelled(f) in values}

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)

    def text(self, door: str) -> str:
        """The one description every door shows: `summary`, a blank line, the rest (api/descriptions.py),
        each `field` named as a caller of `door` spells it (`--as-of`, KEY on the CLI; `q` over HTTP)."""
        from kyb_cli.api.descriptions import DETAILS

        named = {f.name: f for f in self.fields_of(door)}

        def spell(m: re.Match[str]) -> str:
            f = named.get(m.group(1))
            if f is None:
                return m.group(0)
            if door == "cli" and f.positional:
                return (f.metavar or f.name.upper()).strip("[].…")
            return f"`{f.spelling(door)}`"

        text = "\n\n".join(part for part in (self.summary, DETAILS.get(self.name, "")) if part)
        return re.sub(r"`([a-z_]+)`", spell, text)
