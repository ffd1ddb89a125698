"""The user's config file (`config.toml` in the config dir, or `KYB_CONFIG`), read on demand.

    model = "/path/to/multilingual-e5-small"   # model directory
    [sync]
    auto = true                                 # sync in the background after each write
"""

from __future__ import annotations

import os
import time
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any

from kyb_cli.core.errors import StoreError


def config_path() -> Path:
    explicit = os.environ.get("KYB_CONFIG")
    if explicit:
        return Path(explicit)
    from kyb_cli.core.config.dirs import config_dir

    return config_dir() / "config.toml"


def load_config() -> dict[str, Any]:
    """The parsed config, `{}` when there is none; a broken file is a clear error. Read-only: the
    same dict is handed to every reader while the file is unchanged."""
    path = config_path()
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return {}
    except OSError:
        st = None  # reading it says what is wrong
    stamp = None if st is None else (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    known = _PARSED.get(str(path))
    if known is not None and stamp is not None and known[0] == stamp:
        return known[1]
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise StoreError(f"cannot read config {path}: {exc.strerror}") from None
    import tomllib  # only when there is a file: most queries have none and skip the parser

    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StoreError(f"config {path} is not valid TOML: {exc}") from None
    if stamp is not None and time.time_ns() - max(stamp[3], stamp[4]) > _SETTLED_NS:
        _PARSED[str(path)] = (stamp, parsed)
    return parsed


# A long-lived door reads the config on every answer (the models' paths, stale.days): parsed once per
# version of the file, known by its stat. A file changed in the last two seconds is parsed every time
# (as Git treats a racily clean file): a rewrite of the same size within one clock tick has the same stamp.
_PARSED: dict[str, tuple[tuple[int, int, int, int, int], dict[str, Any]]] = {}
_SETTLED_NS = 2_000_000_000
