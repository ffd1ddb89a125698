"""THE parser for KYB_* environment settings (numbers and on/off flags).

Every numeric setting is read here, so a bad value is one clear usage error (exit 2) naming the
variable, never a silent fallback that hides a typo: `KYB_LOCK_TIMEOUT=abc` answers
`kyb: KYB_LOCK_TIMEOUT='abc' is not a number (seconds)`. Unset or empty means the documented default.
"""

from __future__ import annotations

import os

from kyb_cli.core.errors import UsageError

OFF_VALUES = ("0", "off", "false", "no")


def env_float(name: str, default: float, *, minimum: float | None = 0.0, unit: str = "seconds") -> float:
    """A float from `$name`, `default` when unset or empty; UsageError when not a number or below `minimum`."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"{name}={raw!r} is not a number ({unit})") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise UsageError(f"{name}={raw!r} is not a finite number ({unit})")
    if minimum is not None and value < minimum:
        raise UsageError(f"{name}={raw!r} must be at least {minimum:g} ({unit})")
    return value


def env_int(name: str, default: int, *, minimum: int | None = 0) -> int:
    """An integer from `$name`, `default` when unset or empty; UsageError otherwise."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise UsageError(f"{name}={raw!r} is not a whole number") from None
    if minimum is not None and value < minimum:
        raise UsageError(f"{name}={raw!r} must be at least {minimum}")
    return value


def env_off(name: str) -> bool:
    """True when `$name` switches something off (0, off, false, no; any case)."""
    return os.environ.get(name, "").strip().lower() in OFF_VALUES


def env_choice(name: str, choices: tuple[str, ...]) -> str | None:
    """One of `choices` from `$name` (any case), None when unset or empty; UsageError otherwise."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    if raw.lower() not in choices:
        raise UsageError(f"{name}={raw!r} is not one of: {', '.join(choices)}")
    return raw.lower()


def env_path(name: str):
    """A directory named by `$name` (`~` expanded), None when unset or empty (model settings:
    KYB_MODEL for multilingual-e5-small, KYB_MODEL_EN for bge-small-en-v1.5, core/embed/models.py)."""
    from pathlib import Path

    raw = os.environ.get(name, "").strip()
    return Path(raw).expanduser() if raw else None
