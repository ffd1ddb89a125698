"""The user's config file (`config.toml` in the config dir, or `KYB_CONFIG`), read on demand.

    model = "/path/to/multilingual-e5-small"   # model directory
    [sync]
    auto = true                                 # sync in the background after each write
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any

from kyb_cli.core.errors import StoreError
from kyb_cli.core.known import pure, remember, settled, stamp


def _config_file() -> str:
    """The config file's path, a string: a `kyb query` reads the config and builds no Path (issue 38).
    Worked out once per value of the variables it depends on (a door asks twice per answer: the
    path's joins and normalising were 8.7 µs of load_config's 11.7), so a changed variable is seen
    by the next answer as before."""
    env = os.environ
    seen = (env.get("KYB_CONFIG"), env.get("XDG_CONFIG_HOME"), env.get("HOME"))
    found = _PATHS.get(seen)
    if found is None:
        found = _config_path(seen[0])
        if seen[2] is not None and sys.platform.startswith("linux"):  # the XDG rule: these 3 variables
            # decide it (without HOME, expanduser asks the password database; elsewhere platformdirs)
            remember(_PATHS, seen, found)
    return found


def _config_path(explicit: str | None) -> str:
    if explicit:
        return pure(explicit)
    from kyb_cli.core.config.dirs import config_dir_str

    return os.path.join(config_dir_str(), "config.toml")


_PATHS: dict[tuple, str] = {}  # (KYB_CONFIG, XDG_CONFIG_HOME, HOME) -> the config file's path


def load_config() -> dict[str, Any]:
    """The parsed config, `{}` when there is none; a broken file is a clear error. Read-only: the
    same dict is handed to every reader while the file is unchanged."""
    path = _config_file()
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return {}
    except OSError:
        st = None  # reading it says what is wrong
    seen = None if st is None else stamp(st)
    kept = _PARSED.get(str(path))
    if kept is not None and seen is not None and kept[0] == seen:
        return kept[1]
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise StoreError(f"cannot read config {path}: {exc.strerror}") from None
    import tomllib  # only when there is a file: most queries have none and skip the parser

    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StoreError(f"config {path} is not valid TOML: {exc}") from None
    if st is not None and settled(st):
        remember(_PARSED, str(path), (seen, parsed))
    return parsed


# A long-lived door reads the config on every answer (the models' paths, stale.days): parsed once per
# version of the file, known by its stat (core/known.py: a file changed within the last seconds is
# parsed every time, as Git treats a racily clean file).
_PARSED: dict[str, tuple[tuple, dict[str, Any]]] = {}
