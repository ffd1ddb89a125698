"""The entry point, with a fast path for the hottest call: `kyb query …` answered in JSON.

Agents ask `kyb query TEXT [options]` on a pipe more than anything else, and importing Click and
building the command tree costs about as much as the query itself (~25-45 ms of ~120 ms at 10k
keys). This module parses that one form by hand — its options read from the operations table's
QUERY entry, as the Click command's are — and calls the same handler (api.handle) the Click command
calls, printing the same bytes. Anything it does not fully understand — another command,
an unknown or misspelt option, `--help`, a value Click would refuse, a terminal wanting rich output,
any error — goes to Click unchanged (`kyb_cli.cli.app`), which
then also words every error. So the fast path can only be faster, never different:
tests/test_cli_fast.py runs each form both ways and compares, and tests/test_doors_parity.py holds
its options to Click's, spelling by spelling and value by value.
"""

from __future__ import annotations

import functools
import os
import re
import sys

# The CLI's door-only options that the fast path takes itself (tests/test_doors_parity.py: DOOR_ONLY says
# why each is the CLI's alone; `--fields` is not here: a call with it goes to Click). Every other option
# is a field of the operations table's QUERY entry, read by `_options` below.
_DOOR_FLAGS = {"--json": "json", "--no-deadlines": "no_deadlines", "--no-wait": "no_wait"}
_DOOR_VALUED = {"--store": "store", "--today": "today"}


@functools.cache
def _options() -> tuple[dict, dict, tuple]:
    """`kyb query`'s flags {flag: (name, value)} and valued options {flag: Field}, and its fields, all
    from the table's QUERY entry (the Click options are made from the same entry: cli/options.py), kept
    in its own module: the rest of the table is not built (api/_query_op.py). Importing it is importing
    `kyb_cli.api`, which the answer needs anyway."""
    from kyb_cli.api._query_op import QUERY

    fields = QUERY.fields_of("cli")
    flags = {flag: (name, True) for flag, name in _DOOR_FLAGS.items()}
    valued: dict = {}
    for field in fields:
        if field.positional:
            continue
        if field.type == "boolean":
            flags[field.flag] = (field.name, True)
            if field.default is not False:  # `--semantic/--no-semantic`
                flags["--no-" + field.flag[2:]] = (field.name, False)
        else:
            valued.update(dict.fromkeys((field.flag, *field.aliases), field))
    return flags, valued, fields


def _take(field, value: str, opts: dict) -> bool:
    """Put one option value in `opts` as Click would; False when Click must judge it."""
    if field.enum and value not in field.enum:
        return False
    if field.type == "integer":
        if not re.fullmatch(r"[0-9]{1,6}", value):
            return False
        number = int(value)
        if (field.minimum is not None and number < field.minimum) or \
                (field.maximum is not None and number > field.maximum):
            return False
        opts[field.name] = number
    elif field.multiple or field.type == "texts":
        opts[field.name].append(value)
    elif field.type == "string":
        opts[field.name] = value
    else:
        return False  # a comma list or another shape: Click's conversion decides
    return True


def parse(argv: list[str]) -> dict | None:
    """The options of a plain `kyb [--store P] [--json] query …` call, or None (leave it to Click)."""
    opts: dict = {}
    i = 0
    while i < len(argv) and argv[i] != "query":  # group options before the subcommand
        name, eq, value = argv[i].partition("=")
        if name == "--json" and not eq:
            opts["json"] = True
        elif name == "--store":
            if not eq:
                i += 1
                if i >= len(argv):
                    return None
                value = argv[i]
            opts["store"] = value
        else:
            return None
        i += 1
    if i >= len(argv):
        return None
    flags, valued, fields = _options()
    for field in fields:
        opts[field.name] = [] if field.multiple or field.type == "texts" else field.default
    opts["text"] = []
    rest = argv[i + 1:]
    j = 0
    while j < len(rest):
        arg = rest[j]
        if arg == "--":
            opts["text"] += rest[j + 1:]
            break
        if arg.startswith("-") and arg != "-":
            name, eq, value = arg.partition("=")
            field = valued.get(name)
            if name in flags and not eq:
                key, flag = flags[name]
                opts[key] = flag
            elif name in _DOOR_VALUED or (field is not None and field.arity == 1):
                if not eq:
                    j += 1
                    if j >= len(rest):
                        return None
                    value = rest[j]
                if value.startswith("--"):
                    return None  # `--as-of --histroy`: Click says which option is unknown
                if field is None:
                    opts[_DOOR_VALUED[name]] = value
                elif not _take(field, value, opts):
                    return None
            elif field is not None and not eq:  # exactly N values (`--changed-between A B`)
                if j + field.arity >= len(rest):
                    return None
                opts[field.name] = tuple(rest[j + 1:j + 1 + field.arity])
                j += field.arity
            else:
                return None  # -x, --help, a typo: Click's parser decides (and words the error)
        else:
            opts["text"].append(arg)
        j += 1
    if opts.get("today") is not None and not _valid_date(opts["today"]):
        return None
    return opts


class _Door:
    """What api.handle's query needs from this door: the store as `--store` named it."""

    def __init__(self, store_arg: str | None) -> None:
        self.store_arg = store_arg

    def path(self):
        from kyb_cli.api.store import _where

        return _where(self.store_arg)  # api.store_path as a string: no pathlib on a query (issue 38)

    @staticmethod
    def attribution():
        """Who reads, for the read log (api/_receipts.py): the labels a write from here would carry."""
        from kyb_cli import api

        return api.attribution("cli")


def _valid_date(text: str) -> bool:
    if not re.match(r"^\d{4}-\d{2}-\d{2}$", text):  # compiled only with --today (issue 38)
        return False
    from datetime import date

    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _wants_json(opts: dict) -> bool:
    if opts.get("json") or os.environ.get("KYB_OUTPUT") == "json":
        return True
    try:
        return not sys.stdout.isatty()
    except (AttributeError, ValueError):
        return True


def query(argv: list[str]) -> int | None:
    """Answer `kyb query …` without Click; None when Click should take the call (nothing printed)."""
    opts = parse(argv)
    if opts is None or not _wants_json(opts):
        return None
    try:
        from kyb_cli import api
        from kyb_cli.cli.waiting import set_policy

        door = _Door(opts.get("store"))
        fields = {**opts, "text": " ".join(opts["text"])}
        given = {f.name: fields[f.name] for f in _options()[2]}

        def run():
            set_policy(bool(opts.get("no_wait")))  # inside the call: the envelope starts it afresh
            return api.handle("query", door, given)

        response = api.answer(run)  # the envelope of every door
        path = door.path()
    except KeyboardInterrupt:
        sys.stderr.write("kyb: interrupted; a write in progress either finished or left the store as it was\n")
        return 130
    except Exception as exc:  # noqa: BLE001 - worded here as the Click door words it (cli/app.py): never run twice
        return _failed(exc)
    try:
        if response.get("semantic_off"):
            sys.stderr.write(f"kyb: {api.semantic_off_message(response['semantic_off'])}\n")
            sys.stderr.flush()
        missing = api.semantic_missing_message(response)
        if missing:
            sys.stderr.write(f"kyb: {missing}\n")
        pending = api.pending_vectors_message(response)
        if pending:
            sys.stderr.write(f"kyb: {pending}\n")
        sys.stdout.write(api.answer_text(response) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        return 0
    from kyb_cli.cli.deadlines_block import print_deadlines_block

    print_deadlines_block(path, today=opts.get("today"), off=bool(opts.get("no_deadlines")))
    return 0


def _failed(exc: Exception) -> int:
    """A failed fast-path query, worded and classed by the one mapping every door uses (api.as_error;
    the call already ran: handing it to Click would ask the question twice)."""
    from kyb_cli import api
    from kyb_cli.cli.output import print_error

    if isinstance(exc, BrokenPipeError):
        return 0
    error = api.as_error(exc)  # a KybError from api.answer as it is; what failed outside it, classed the same
    if error.exit_code == api.EXIT_INTERNAL and os.environ.get("KYB_DEBUG"):
        raise error.__cause__ or exc  # the traceback of the bug, with KYB_DEBUG=1 (as cli/app.py)
    print_error(error)
    return error.exit_code


def _leave(code: int) -> None:
    """End the process with `code` once the answer is out, without the interpreter's teardown: freeing
    every module and object of a process about to end was ~7 ms of a ~50 ms query (issue 38). The
    streams are flushed and the SQLite connections closed (the read log's WAL checkpoints on close) as
    teardown would; whatever else may want it (an atexit callback, a thread, a profiler or tracer, a
    stream that will not flush) gets the ordinary exit. Returns only when os._exit was not taken."""
    import atexit

    threading = sys.modules.get("threading")
    if getattr(atexit, "_ncallbacks", lambda: 1)() or sys.getprofile() or sys.gettrace() or \
            (threading is not None and threading.active_count() > 1):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        apsw = sys.modules.get("apsw")
        for conn in apsw.connections() if apsw is not None else ():
            conn.close()
    except Exception:  # noqa: BLE001 - a closed pipe, a busy connection: the interpreter's own exit decides
        return
    os._exit(code)


def one_blas_thread(environ) -> None:
    """numpy's OpenBLAS, one thread, unless the user set it: kyb's products are one question against
    at most some 10^5 rows, and OpenBLAS's extra threads only spin between calls — a warm `kyb mcp` at
    10k keys spent 106 ms of CPU a hybrid call, 49 ms with one (bench/bench_warm.py --large, server
    CPU/call). Read when numpy loads, so set first thing; kyb's own workers inherit it."""
    environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(own_process: bool = True) -> None:
    """`kyb`: the fast path for a plain JSON query, else the Click command line. `own_process`: False
    for a caller that runs kyb inside its own process (tests/support/inprocess.py): never os._exit."""
    one_blas_thread(os.environ)
    argv = sys.argv[1:]
    for n, arg in enumerate(argv, 1):  # bytes that are not UTF-8 arrive as lone surrogates
        if any("\udc80" <= ch <= "\udcff" for ch in arg):
            sys.stderr.write(f"kyb: argument {n} is not valid UTF-8 — keys, titles and text are UTF-8 "
                             "(exit 2: usage)\n")
            sys.exit(2)
    if argv and "query" in argv[:4] and os.environ.get("KYB_FAST", "1") != "0":
        if own_process:  # a one-shot process: its cyclic garbage dies with it; the collector's
            import gc    # ~16 passes over the modules it imports were ~3 ms of a query (issue 38)

            gc.disable()
        code = query(argv)
        if code is not None:
            if own_process:
                _leave(code)
            sys.exit(code)
        if own_process:
            gc.enable()  # Click's commands may run long (an import, a sync): collected as usual
    from kyb_cli.cli.app import main as click_main

    click_main()
