"""The user's config file (`config.toml` in the config dir, or `KYB_CONFIG`), read on demand.

    model = "/path/to/multilingual-e5-small"   # model directory
    [sync]
    auto = true                                 # sync in the background after each write
"""

from __future__ import annotations

import os
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
    """The parsed config, `{}` when there is none; a broken file is a clear error."""
    path = config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise StoreError(f"cannot read config {path}: {exc.strerror}") from None
    import tomllib  # only when there is a file: most queries have none and skip the parser

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StoreError(f"config {path} is not valid TOML: {exc}") from None
