"""Where kyb keeps things of the user's: config, data (the default store, models), cache.

platformdirs is imported only when asked, so a query against an explicit store does not pay for it.
On Linux it honours XDG_CONFIG_HOME / XDG_DATA_HOME / XDG_CACHE_HOME, which is how tests isolate.
"""

from __future__ import annotations

from pathlib import Path

APP = "kyb"


def config_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir(APP))


def cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP))


def default_store_path() -> Path:
    return data_dir() / "store"
