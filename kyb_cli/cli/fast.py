"""The entry point, with a fast path for the hottest call: `kyb query …` answered in JSON.

Agents ask `kyb query TEXT [options]` on a pipe more than anything else, and importing Click and
building the command tree costs about as much as the query itself (~25-45 ms of ~120 ms at 10k
keys). This module parses that one form by hand and calls the same core functions the Click
command calls, printing the same bytes. Anything it does not fully understand — another command,
an unknown or misspelt option, `--help`, a value Click would refuse, a terminal wanting rich output,
any error — goes to Click unchanged (`kyb_cli.cli.app`), which
then also words every error. So the fast path can only be faster, never different:
tests/test_cli_fast.py runs each form both ways and compares.
"""

from __future__ import annotations

import os
import re
import sys

_FLAGS = {"--history": ("history", True), "--recent": ("recent", True), "--explain": ("explain", True),
          "--semantic": ("semantic", True), "--no-semantic": ("semantic", False), "--json": ("json", True),
          "--no-deadlines": ("no_deadlines", True), "--no-wait": ("no_wait", True)}
_VALUED = {"--as-of": "as_of", "--kind": "kind", "--status": "status", "--service": "service",
           "--priority": "priority", "--assignee": "assignee", "--parent": "parent", "--limit": "limit",
           "--store": "store", "--today": "today"}
_KINDS = ("knowledge", "incident", "task")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse(argv: list[str]) -> dict | None:
    """The options of a plain `kyb [--store P] [--json] query …` call, or None (leave it to Click)."""
    opts: dict = {"text": [], "tags": [], "semantic": True, "limit": "10"}
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
    rest = argv[i + 1:]
    j = 0
    while j < len(rest):
        arg = rest[j]
        if arg == "--":
            opts["text"] += rest[j + 1:]
            break
        if arg.startswith("-") and arg != "-":
            name, eq, value = arg.partition("=")
            if name in _FLAGS and not eq:
                key, flag = _FLAGS[name]
                opts[key] = flag
            elif name in _VALUED:
                if not eq:
                    j += 1
                    if j >= len(rest):
                        return None
                    value = rest[j]
                opts[_VALUED[name]] = value
            elif name == "--tag":
                if not eq:
                    j += 1
                    if j >= len(rest):
                        return None
                    value = rest[j]
                opts["tags"].append(value)
            elif name == "--changed-between" and not eq:
                if j + 2 >= len(rest):
                    return None
                opts["changed_between"] = (rest[j + 1], rest[j + 2])
                j += 2
            else:
                return None  # -x, --help, a typo: Click's parser decides (and words the error)
        else:
            opts["text"].append(arg)
        j += 1
    if opts.get("kind") is not None and opts["kind"] not in _KINDS:
        return None
    if not re.fullmatch(r"\d{1,3}", opts["limit"]) or int(opts["limit"]) > 100:
        return None
    if opts.get("today") is not None and not _valid_date(opts["today"]):
        return None
    return opts


def _valid_date(text: str) -> bool:
    if not _DATE.match(text):
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
    import json

    try:
        from kyb_cli import api
        from kyb_cli.cli.waiting import history_flag, set_policy

        set_policy(bool(opts.get("no_wait")))
        path, response = api.query(opts.get("store"), " ".join(opts["text"]), history=bool(opts.get("history")),
                                   as_of=opts.get("as_of"), changed_between=opts.get("changed_between"),
                                   tags=[t.strip() for v in opts["tags"] for t in v.split(",") if t.strip()],
                                   kind=opts.get("kind"), status=opts.get("status"), service=opts.get("service"),
                                   priority=opts.get("priority"), assignee=opts.get("assignee"),
                                   parent=opts.get("parent"), limit=int(opts["limit"]),
                                   recent=bool(opts.get("recent")), semantic=bool(opts["semantic"]),
                                   explain=bool(opts.get("explain")))
    except KeyboardInterrupt:
        sys.stderr.write("kyb: interrupted; a write in progress either finished or left the store as it was\n")
        return 130
    except Exception:  # noqa: BLE001 - a KybError or a bug
        return None  # Click runs it again and words the error (or the internal error) as it always does
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
        if "history_complete" not in response:
            response = {**response, **history_flag()}
        sys.stdout.write(json.dumps(response, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        return 0
    from kyb_cli.cli.deadlines_block import print_deadlines_block

    print_deadlines_block(path, today=opts.get("today"), off=bool(opts.get("no_deadlines")))
    return 0


def main() -> None:
    """`kyb`: the fast path for a plain JSON query, else the Click command line."""
    argv = sys.argv[1:]
    for n, arg in enumerate(argv, 1):  # bytes that are not UTF-8 arrive as lone surrogates
        if any("\udc80" <= ch <= "\udcff" for ch in arg):
            sys.stderr.write(f"kyb: argument {n} is not valid UTF-8 — keys, titles and text are UTF-8 "
                             "(exit 2: usage)\n")
            sys.exit(2)
    if argv and "query" in argv[:4] and os.environ.get("KYB_FAST", "1") != "0":
        code = query(argv)
        if code is not None:
            sys.exit(code)
    from kyb_cli.cli.app import main as click_main

    click_main()
