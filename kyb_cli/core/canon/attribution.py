"""Who wrote a change: agent, session, workspace and transport, recorded as commit trailers.

`KYB_AGENT` / `KYB_SESSION` / `KYB_WORKSPACE` win. Otherwise kyb walks up the process tree and takes
the nearest known coding agent (so Claude Code inside an Antigravity terminal is Claude Code), with
the session id that agent exposes in its environment, or its pid and start time. No agent: `human`.
The labels are client-supplied: an audit aid, not identity.
"""

from __future__ import annotations

import os

# No dataclasses, no pathlib, no @plain: a `kyb query` labels its reads (issue 40), and each would
# cost it a millisecond or more of its floor.

# (label, process names, environment variables that carry the agent's own session id)
KNOWN_AGENTS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("claude-code", ("claude",), ("CLAUDE_SESSION_ID", "CLAUDE_CODE_SESSION_ID")),
    ("codex", ("codex",), ("CODEX_SESSION_ID", "CODEX_THREAD_ID")),
    ("gemini", ("gemini",), ("GEMINI_SESSION_ID",)),
    ("antigravity", ("antigravity",), ("ANTIGRAVITY_SESSION_ID",)),
    ("cursor", ("cursor", "cursor-agent"), ("CURSOR_SESSION_ID", "CURSOR_TRACE_ID")),
    ("aider", ("aider",), ("AIDER_SESSION_ID",)),
    ("opencode", ("opencode",), ("OPENCODE_SESSION_ID",)),
    ("goose", ("goose",), ("GOOSE_SESSION_ID",)),
)


class Attribution:
    """Who: four labels, immutable, compared and hashed by value."""

    __slots__ = ("agent", "session", "workspace", "transport")
    agent: str
    session: str
    workspace: str
    transport: str

    def __init__(self, agent: str, session: str, workspace: str, transport: str) -> None:
        for name, value in zip(self.__slots__, (agent, session, workspace, transport)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field '{name}'")

    def _labels(self) -> tuple[str, str, str, str]:
        return self.agent, self.session, self.workspace, self.transport

    def __eq__(self, other: object) -> bool:
        return other._labels() == self._labels() if type(other) is Attribution else NotImplemented

    def __hash__(self) -> int:
        return hash(self._labels())

    def __repr__(self) -> str:
        return "Attribution(" + ", ".join(f"{n}={v!r}" for n, v in zip(self.__slots__, self._labels())) + ")"

    def trailers(self) -> list[tuple[str, str]]:
        """The commit trailers; Rejected when a label looks like a secret (labels are committed to
        history and the audit log, so they pass the same scanner as every stored field)."""
        from kyb_cli.core.errors import Rejected
        from kyb_cli.core.records.secrets import first_secret

        for name, value in (("agent", self.agent), ("session", self.session), ("workspace", self.workspace)):
            found = first_secret(value, f"the {name} label")
            if found is not None:
                raise Rejected(f"the {name} label (KYB_{name.upper()} / X-Kyb-{name.title()}) looks like a "
                               f"secret (rule {found.rule}) — use a plain label")
        return [
            ("Kyb-Agent", self.agent),
            ("Kyb-Session", self.session),
            ("Kyb-Workspace", self.workspace),
            ("Kyb-Transport", self.transport),
        ]


def _label_var(env, name: str) -> str:
    """A label from the environment, stripped; UsageError (exit 2) naming the variable when its bytes
    are not UTF-8 (Python hands them over as surrogate escapes that no commit can hold). The value
    itself is never quoted."""
    value = env.get(name, "")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        from kyb_cli.core.errors import UsageError

        raise UsageError(f"{name} is not valid UTF-8 text; set it to a plain label (or unset it)") from None
    return value.strip()


def _one_line(value: str) -> str:
    return " ".join(value.split())


def detect(transport: str = "cli", *, environ: dict[str, str] | None = None) -> Attribution:
    """Attribution for a write made now by this process."""
    env = os.environ if environ is None else environ
    agent = _label_var(env, "KYB_AGENT")
    session = _label_var(env, "KYB_SESSION")
    found = None if agent else _agent_of_parent()
    if not agent and found is None and not _has_proc():
        agent = _agent_from_env_markers(env)  # no /proc (macOS): the agents' own markers
    if not agent:
        if found is not None:
            agent, pid = found
            if not session:
                session = _session_from_env(agent, env) or _pid_session(pid)
        else:
            agent = "human"
    if not session:
        session = _session_from_env(agent, env) or ""
    workspace = _label_var(env, "KYB_WORKSPACE") or _workspace()
    return Attribution(_one_line(agent), _one_line(session), _one_line(workspace), transport)


_PROC: list[bool] = []  # whether /proc is there, asked once per process (a stat: ~3 µs of each answer's labels)


def _has_proc() -> bool:
    if not _PROC:
        _PROC.append(os.path.exists("/proc/self"))
    return _PROC[0]


# Variables some agents set for the commands they run; used only where /proc cannot be walked,
# because nested agents inherit each other's variables and the process tree is the better witness.
ENV_MARKERS: tuple[tuple[str, str], ...] = (
    ("CLAUDECODE", "claude-code"),
    ("GEMINI_CLI", "gemini"),
    ("CURSOR_AGENT", "cursor"),
)


def _agent_from_env_markers(env: os._Environ[str] | dict[str, str]) -> str:
    for var, label in ENV_MARKERS:
        if env.get(var):
            return label
    return ""


def _session_from_env(agent: str, env: os._Environ[str] | dict[str, str]) -> str:
    for label, _names, variables in KNOWN_AGENTS:
        if label == agent:
            for var in variables:
                if env.get(var):
                    return _label_var(env, var)
    return ""


def _pid_session(pid: int) -> str:
    start = _proc_stat(pid)
    return f"pid-{pid}-{start[1]}" if start else f"pid-{pid}"


_WORKSPACES: dict[str, str] = {}


def _workspace() -> str:
    """The nearest folder up from the working directory with `.git` or `.kyb.toml` (found once per
    process and directory: a long-lived door labels every answer's reads)."""
    try:
        here = os.getcwd()
    except OSError:
        return ""
    if here not in _WORKSPACES:
        _WORKSPACES[here] = _workspace_of(here)
    return _WORKSPACES[here]


def _workspace_of(cwd: str) -> str:
    parent = cwd
    while True:
        if os.path.exists(os.path.join(parent, ".git")) or os.path.exists(os.path.join(parent, ".kyb.toml")):
            return parent
        up = os.path.dirname(parent)
        if up == parent:
            return cwd
        parent = up


def _read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _proc_stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, start time) of a process from /proc; None where /proc is not there."""
    try:
        raw = _read(f"/proc/{pid}/stat").decode(errors="replace")
    except OSError:
        return None
    rest = raw[raw.rfind(")") + 2:].split()
    try:
        return int(rest[1]), rest[19]
    except (IndexError, ValueError):
        return None


def _process_names(pid: int) -> list[str]:
    names: list[str] = []
    try:
        names.append(_read(f"/proc/{pid}/comm").decode(errors="replace").strip().lower())
    except OSError:
        pass
    try:
        argv = _read(f"/proc/{pid}/cmdline").split(b"\0")
        for arg in argv[:2]:
            if arg:
                names.append(os.path.basename(arg.decode(errors="replace")).lower())
    except OSError:
        pass
    return names


_WALKED: dict[int, tuple[str, int] | None] = {}


def _agent_of_parent() -> tuple[str, int] | None:
    """`_agent_in_process_tree`, walked once per process (and parent): a long-lived door (kyb mcp)
    labels every answer's reads without walking /proc per answer."""
    parent = os.getppid()
    if parent not in _WALKED:
        _WALKED[parent] = _agent_in_process_tree()
    return _WALKED[parent]


def _agent_in_process_tree(max_depth: int = 40) -> tuple[str, int] | None:
    """The nearest ancestor process that is a known coding agent, as (label, pid)."""
    pid = os.getppid()
    for _ in range(max_depth):
        if pid <= 1:
            return None
        names = _process_names(pid)
        for label, process_names, _vars in KNOWN_AGENTS:
            for name in names:
                stem = name.removesuffix(".js").removesuffix(".exe")
                if stem in process_names or any(stem.startswith(p + "-") for p in process_names):
                    return label, pid
        stat = _proc_stat(pid)
        if stat is None:
            return None
        pid = stat[0]
    return None


WITHHELD = "(withheld: the label looks like a secret)"


_LABELS: dict[str, str] = {}  # label -> what an audit line keeps (the scanner is a pure function of the text)
LABELS_MAX = 256


def audit_label(value: str) -> str:
    """`value`, or WITHHELD when it looks like a secret: an audit line keeps a label only as a
    commit would (the scanner of `trailers`), since the log is kept and read like history. Kept per
    label: `kyb serve` audits every request, and the scan was ~0.1 ms of each."""
    kept = _LABELS.get(value)
    if kept is None:
        from kyb_cli.core.records.secrets import first_secret

        kept = WITHHELD if value and first_secret(value, "the agent label") is not None else value
        if len(_LABELS) >= LABELS_MAX:
            _LABELS.clear()
        _LABELS[value] = kept
    return kept
