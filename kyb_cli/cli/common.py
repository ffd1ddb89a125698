"""Options and helpers shared by subcommands: --store/--json, the store, bodies, attribution."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import click

from kyb_cli.api import UsageError


class HintGroup(click.Group):
    """A group that remembers which subcommand a usage error belongs to, so the error line can say
    `see kyb agents install --help` and not `kyb --help` (Click raises some parse errors, such as
    an option missing its value, before the subcommand's context exists)."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except click.exceptions.ClickException as exc:
            if getattr(exc, "ctx", None) is None and not getattr(exc, "kyb_help", None) \
                    and ctx.invoked_subcommand:
                exc.kyb_help = f"{ctx.command_path} {ctx.invoked_subcommand}"  # type: ignore[union-attr]
            raise


def help_hint(exc: BaseException) -> str:
    """`kyb query --help`: the help of the command a usage error came from (else `kyb --help`)."""
    ctx = getattr(exc, "ctx", None)
    path = getattr(exc, "kyb_help", None) or (ctx.command_path if ctx is not None else "kyb")
    return f"`{path} --help`"


def meta_callback(name: str):
    """An option callback that puts a given value into click's context meta under `name`."""

    def callback(ctx: click.Context, _param: click.Parameter, value: object) -> object:
        if value not in (None, False):
            ctx.meta[name] = value
        return value

    return callback


def common_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--store` and `--json` accepted after the subcommand too (`kyb get k --json`)."""
    func = click.option("--json", "as_json", is_flag=True, expose_value=False,
                        callback=meta_callback("kyb.json"), help="JSON output even on a terminal.")(func)
    func = click.option("--store", "store", metavar="PATH", expose_value=False,
                        callback=meta_callback("kyb.store"),
                        help="Store to use (else KYB_STORE, .kyb.toml, the default store).")(func)
    return func


def store_location():
    """Where the store of this call is (`--store` > KYB_STORE > .kyb.toml > the default store)."""
    from kyb_cli import api

    return api.locate(click.get_current_context().meta.get("kyb.store"))


def open_store():
    """The store this call works on. The default store is created on first use."""
    from kyb_cli import api

    return api.open_store(click.get_current_context().meta.get("kyb.store"))


def read_store_path() -> Path:
    """The store to read, as a path (reads go through the index, without pygit2 on the usual path).

    The default store is created on first use, as `open_store()` does; any other missing or broken
    store is reported by the index with its usual message."""
    from kyb_cli import api

    return api.store_path(click.get_current_context().meta.get("kyb.store"))


def read_body(body: str | None, file: str | None) -> str:
    """The body from --body, --file (or `-`), else stdin.

    Bytes are read as they are (CRLF stays CRLF) and must be UTF-8. On a terminal, stdin is read
    after a one-line prompt on stderr (end with Ctrl-D), so a forgotten pipe never looks like a hang
    and never writes an empty body by surprise.
    """
    if body is not None and file is not None:
        raise UsageError("give the body with --body or --file, not both")
    if body is not None:
        return body
    if file is not None and file != "-":
        try:
            data = Path(file).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read --file {file}: {exc.strerror}") from None
        return _utf8(data, f"--file {file}")
    return _read_stdin("kyb: type the body (Markdown), then Ctrl-D on an empty line; "
                       "or pass --body TEXT / --file PATH\n", "the body on stdin")


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _read_stdin(prompt: str, what: str) -> str:
    stream = sys.stdin
    if stream is None:
        return ""
    if _stdin_is_terminal():
        sys.stderr.write(prompt)
        sys.stderr.flush()
    raw = getattr(stream, "buffer", None)
    data = raw.read() if raw is not None else stream.read().encode("utf-8")
    return _utf8(data, what)


def read_resolution(resolution: str | None, *, closing: bool) -> str:
    """`--resolution`, else stdin when piped. At a terminal, kyb asks for it only when the call closes
    the record (a status change such as `mitigated` needs none, so it never waits for Ctrl-D)."""
    if resolution is not None:
        return resolution
    if _stdin_is_terminal() and not closing:
        return ""
    return _read_stdin("kyb: type the resolution (what fixed it, or what came of it), then Ctrl-D on an "
                       "empty line; or pass --resolution TEXT\n", "the resolution on stdin")


def _utf8(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} is not UTF-8 text (byte {exc.start})") from None


def attribution(transport: str = "cli"):
    from kyb_cli import api

    return api.attribution(transport)


def body_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--body` (the table's `body` field; omitted: stdin) and the CLI's own `--file`."""
    from kyb_cli.api.operations import BODY
    from kyb_cli.cli.options import make_param

    func = click.option("--file", "body_file", metavar="PATH", help="Read the body from a file (- for stdin).")(func)
    return make_param(BODY, default=None, metavar="TEXT", help=f"{BODY.description} Default: stdin.")(func)


def fields_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--fields a,b,c`: keep only these fields of each row, in JSON and as the table's columns."""
    return click.option("--fields", "fields", metavar="A,B,C", expose_value=False,
                        callback=meta_callback("kyb.fields"),
                        help="Keep only these fields of each row (JSON and table columns).")(func)


class CliDoor:
    """What a table handler (api.handle) needs from the command line: this call's store and writer."""

    @staticmethod
    def store():
        return open_store()

    @staticmethod
    def path() -> Path:
        return read_store_path()

    @property
    def store_arg(self) -> str | None:
        """`--store` as given (None: KYB_STORE, .kyb.toml, the default store)."""
        return click.get_current_context().meta.get("kyb.store")

    @staticmethod
    def attribution():
        return attribution()


class LocatedDoor(CliDoor):
    """A CliDoor that reads the located store as it is, creating no default store: a digest or a CI
    gate on a store that is not there must say so, not answer from a new empty one."""

    @staticmethod
    def path() -> Path:
        return store_location().path


def quiet_on_usage_errors(note: Callable[[bool, str], None], *, hook_only: bool) -> type[click.Command]:
    """A Command class whose option errors end in exit 0 and `note(hook_mode, message)`: a hook's
    command line must never break a session or a prompt. `hook_only`: only with --hook-json (else
    the usual usage error, exit 2). A KybError from an option callback (a bad `--today`) counts too,
    worded with the CLI's spelling."""

    class QuietOnUsageErrors(click.Command):
        def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
            from kyb_cli.api import KybError, spelled

            hook = "--hook-json" in args
            try:
                return super().parse_args(ctx, args)
            except (click.ClickException, KybError) as exc:
                if hook_only and not hook:
                    raise
                note(hook, exc.format_message() if isinstance(exc, click.ClickException) else spelled(exc, "cli"))
                ctx.exit(0)
                raise  # pragma: no cover - ctx.exit raises

    return QuietOnUsageErrors
