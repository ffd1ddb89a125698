"""Where kyb keeps things of the user's: config, data (the default store, models), cache.

platformdirs is imported only when asked, so a query against an explicit store does not pay for it.
On Linux it honours XDG_CONFIG_HOME / XDG_DATA_HOME / XDG_CACHE_HOME, which is how tests isolate.
"""

from __future__ import annotations

import os
import sys

from kyb_cli.core.known import made_path, pure

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`

APP = "kyb"


def _xdg(var: str, fallback: str) -> Path | None:
    """On Linux, the XDG rule platformdirs applies, without importing it (every query asks where
    the model and the vector cache are)."""
    found = _xdg_str(var, fallback)
    return None if found is None else made_path(found)  # a door asks every answer


def _xdg_str(var: str, fallback: str) -> str | None:
    """`_xdg` as a string: a `kyb query` builds no Path (issue 38)."""
    if not sys.platform.startswith("linux"):
        return None
    value = os.environ.get(var, "").strip()
    return pure(os.path.join(value or os.path.expanduser(fallback), APP))


def config_dir_str() -> str:
    """`config_dir()` as a string (the config file is looked for on every query)."""
    fast = _xdg_str("XDG_CONFIG_HOME", "~/.config")
    return fast if fast is not None else str(config_dir())


def config_dir() -> Path:
    fast = _xdg("XDG_CONFIG_HOME", "~/.config")
    if fast is not None:
        return fast
    import platformdirs
    from pathlib import Path

    return Path(platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    fast = _xdg("XDG_DATA_HOME", "~/.local/share")
    if fast is not None:
        return fast
    import platformdirs
    from pathlib import Path

    return Path(platformdirs.user_data_dir(APP))


def cache_dir() -> Path:
    fast = _xdg("XDG_CACHE_HOME", "~/.cache")
    if fast is not None:
        return fast
    import platformdirs
    from pathlib import Path

    return Path(platformdirs.user_cache_dir(APP))


def default_store_path() -> Path:
    return data_dir() / "store"
