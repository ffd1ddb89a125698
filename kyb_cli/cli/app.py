"""The `kyb` command group: lazy subcommands, shared options, and the error/exit-code contract.

Subcommands live one per module in `kyb_cli.cli.commands` and are imported only when called, so
`kyb query` pays for what a query needs and nothing else. Every `KybError` becomes one line on
stderr and its documented exit code; stdout stays empty on failure.
"""

from __future__ import annotations

import sys

import click

from kyb_cli import __version__
from kyb_cli.api import EXIT_INTERNAL, KybError
from kyb_cli.cli.common import HintGroup, help_hint, meta_callback

# name -> "module:function" under kyb_cli.cli.commands; keep alphabetical within groups.
COMMANDS: dict[str, str] = {
    "init": "init:init_cmd",
    "add": "add:add_cmd",
    "get": "get:get_cmd",
    "history": "history:history_cmd",
    "diff": "diff:diff_cmd",
    "edit": "edit:edit_cmd",
    "log": "log:log_cmd",
    "rm": "rm:rm_cmd",
    "verify": "verify:verify_cmd",
    "stale": "stale:stale_cmd",
    "rules": "rules:rules_cmd",
    "tags": "tags:tags_cmd",
    "sync": "sync:sync_cmd",
    "remote": "remote:remote_cmd",
    "query": "query:query_cmd",
    "export": "export:export_cmd",
    "import": "import_:import_cmd",
    "reindex": "reindex:reindex_cmd",
    "migrate": "migrate:migrate_cmd",
    "incident": "incident:incident_cmd",
    "resolve": "resolve:resolve_cmd",
    "incidents": "incidents:incidents_cmd",
    "task": "task:task_cmd",
    "task-status": "task_status:task_status_cmd",
    "done": "done:done_cmd",
    "tasks": "tasks:tasks_cmd",
    "deadlines": "deadlines:deadlines_cmd",
    "check": "check:check_cmd",
    "agents": "agents:agents_group",
    "model": "model:model_cmd",
    "index": "index:index_cmd",
    "doctor": "doctor:doctor_cmd",
    "context": "context:context_cmd",
    "recall": "recall:recall_cmd",
    "reads": "reads:reads_cmd",
    "mcp": "mcp:mcp_cmd",
    "serve": "serve:serve_cmd",
    "help": "help_:help_cmd",
    "completion": "help_:completion_cmd",
    "man": "man:man_cmd",
}

EPILOG = """\b
Exit codes: 0 success (no hits is a success), 1 not found, 2 usage error,
3 rejected by a rule (nothing written), 4 store error, 5 remote error.
Output is JSON when stdout is not a terminal or with --json.
Write time is commit time: every change is one Git commit, its sha the version id.

\b
Example:
  kyb query 'checkout port'"""


class LazyGroup(HintGroup):
    """A group whose commands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        module = __import__(f"kyb_cli.cli.commands.{module_name}", fromlist=[attr])
        return getattr(module, attr)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """A lone surrogate in an argument (bytes that are not UTF-8 from the shell, or a Python
        caller's bad string) is a usage error before any command sees it (fast.py says it for argv)."""
        for n, arg in enumerate(args, 1):
            if isinstance(arg, str) and any("\ud800" <= ch <= "\udfff" for ch in arg):
                raise click.UsageError(f"argument {n} is not valid UTF-8 — keys, titles and text are UTF-8", ctx)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        from kyb_cli import api

        own = (click.exceptions.ClickException, click.exceptions.Exit, click.Abort, BrokenPipeError)
        try:  # the envelope every door uses: a fresh call context (one process, several calls), one KybError
            return api.answer(lambda: super(LazyGroup, self).invoke(ctx), own=own)
        except BrokenPipeError:
            ctx.exit(0)
        except KybError as error:  # a store error (an OSError: disk full, permissions… is exit 4), or a bug (70)
            import os

            if error.exit_code == EXIT_INTERNAL and os.environ.get("KYB_DEBUG") and error.__cause__:
                raise error.__cause__  # the traceback of the bug, with KYB_DEBUG=1
            from kyb_cli.cli.output import print_error

            print_error(error)
            ctx.exit(error.exit_code)
        except (KeyboardInterrupt, click.Abort):
            sys.stderr.write("kyb: interrupted; a write in progress either finished or left the store as it was\n")
            ctx.exit(130)


@click.group(cls=LazyGroup, epilog=EPILOG, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kyb")
@click.option("--store", "store", metavar="PATH", expose_value=False, callback=meta_callback("kyb.store"),
              help="Store to use (else KYB_STORE, the nearest .kyb.toml, the default store).")
@click.option("--json", "as_json", is_flag=True, expose_value=False, callback=meta_callback("kyb.json"),
              help="JSON output even on a terminal.")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """kyb: a local-first memory for coding agents, kept in Git.

    Small explicit records under stable keys; every change a commit. Ask what is true now,
    what the store said at a moment, what changed in a window, how a piece of work ended.
    """
    if ctx.invoked_subcommand is None:  # bare `kyb`: the help, on stdout, exit 0 (not a usage error)
        click.echo(ctx.get_help())
        ctx.exit(0)


def _worded(message: str, args: list[str]) -> str:
    """A Click usage message as kyb says it: an argument it quotes is shown only when short and
    clean of secrets (api.argument_shown), else `<N characters, not shown>`; always one line."""
    from kyb_cli import api

    for arg in sorted({a for a in args if isinstance(a, str) and a}, key=len, reverse=True):
        shown = api.argument_shown(arg)
        if shown == arg:
            continue
        for spelled in (arg, repr(arg)[1:-1]):  # Click quotes some names with repr (`'\\n'` for a newline)
            message = message.replace(spelled, shown)
    return api.argument_shown_in(" ".join(message.split()))


def main() -> None:
    """Run `kyb`; usage errors are one `kyb: …` line on stderr with exit 2, like every other error."""
    try:
        code = cli.main(prog_name="kyb", standalone_mode=False)
    except click.exceptions.ClickException as exc:
        sys.stderr.write(f"kyb: {_worded(exc.format_message(), sys.argv[1:])} (see {help_hint(exc)})\n")
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        sys.stderr.write("kyb: interrupted\n")
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
