"""Incidents and tasks (the two work kinds) and their deadlines."""

from __future__ import annotations

from typing import Any

from kyb_cli.api._writes import writes

# The most rows `kyb tasks` / `kyb incidents` answer; more is a usage error in every door
# (the core's rule, kyb_cli.core.kinds.lifecycle.LISTING_MAX_LIMIT; a test keeps them equal).
LISTING_MAX_LIMIT = 200


def write_incident(store, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """Open or update an incident (closing it archives it in a second commit)."""
    from kyb_cli.core.kinds.incidents import write_incident as core

    with writes(store):
        return core(store, *args, **kwargs)


def resolve_incident(store, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """Change an incident's status (default resolved) with a resolution."""
    from kyb_cli.core.kinds.incidents import resolve_incident as core

    with writes(store):
        return core(store, *args, **kwargs)


def list_incidents(store, **kwargs: Any) -> list[dict[str, Any]]:
    from kyb_cli.core.kinds.incidents import list_incidents as core

    return core(store, **kwargs)


def parse_affected(value: Any) -> Any:
    from kyb_cli.core.kinds.incidents import parse_affected as core

    return core(value)


def incident_template() -> str:
    """The body template `kyb incident` offers at a terminal."""
    from kyb_cli.core.kinds.incidents import TEMPLATE

    return TEMPLATE


def write_task(store, *args: Any, **kwargs: Any) -> dict[str, Any]:
    from kyb_cli.core.kinds.tasks import write_task as core

    with writes(store):
        return core(store, *args, **kwargs)


def transition_task(store, *args: Any, **kwargs: Any) -> dict[str, Any]:
    from kyb_cli.core.kinds.tasks import transition_task as core

    with writes(store):
        return core(store, *args, **kwargs)


def close_task(store, *args: Any, **kwargs: Any) -> dict[str, Any]:
    from kyb_cli.core.kinds.tasks import close_task as core

    with writes(store):
        return core(store, *args, **kwargs)


def check_close_status(*args: Any, **kwargs: Any) -> Any:
    from kyb_cli.core.kinds.tasks import check_close_status as core

    return core(*args, **kwargs)


def list_tasks(store, **kwargs: Any) -> list[dict[str, Any]]:
    from kyb_cli.core.kinds.tasks import list_tasks as core

    return core(store, **kwargs)


def due_before_arg(*args: Any, **kwargs: Any) -> Any:
    from kyb_cli.core.kinds.tasks import due_before_arg as core

    return core(*args, **kwargs)


def remind_days_arg(value: Any) -> Any:
    from kyb_cli.core.kinds.tasks import remind_days_arg as core

    return core(value)


def keep():
    """The marker for "an argument the caller did not give: keep the stored value"."""
    from kyb_cli.core.kinds.lifecycle import KEEP

    return KEEP


def deadlines(*args: Any, **kwargs: Any):
    from kyb_cli.core.kinds.deadlines import deadlines as core

    return core(*args, **kwargs)


def dated_tasks(*args: Any, **kwargs: Any):
    from kyb_cli.core.kinds.deadlines import dated_tasks as core

    return core(*args, **kwargs)


def failing(*args: Any, **kwargs: Any):
    from kyb_cli.core.kinds.deadlines import failing as core

    return core(*args, **kwargs)


def describe(*args: Any, **kwargs: Any):
    from kyb_cli.core.kinds.deadlines import describe as core

    return core(*args, **kwargs)


def deadlines_block(*args: Any, **kwargs: Any):
    from kyb_cli.core.kinds.deadlines import block as core

    return core(*args, **kwargs)


def deadlines_switched_off() -> bool:
    from kyb_cli.core.kinds.deadlines import switched_off as core

    return core()
