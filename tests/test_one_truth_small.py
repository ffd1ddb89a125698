"""Issue 25's smaller items, each named after what the user saw."""

from __future__ import annotations

from kyb_cli import api


def test_tags_infra_INFRA_infra_store_one_tag(store):
    who = api.attribution("cli")
    api.add_knowledge(store, key="net", title="Net", body="x", tags=["Infra", "INFRA", "infra", "DB"], refs=[],
                      attribution=who)
    assert api.read(store, "net").record.tags == ["infra", "db"]
    api.write_task(store, who, key="task-a", title="A", tags=["Ops", "ops"])
    assert api.read(store, "task-a").record.tags == ["ops"]
    api.write_incident(store, who, key="inc-2026-01-01-a", title="A", service="s", severity="low",
                       tags=["Web", "WEB"])
    assert api.read(store, "inc-2026-01-01-a").record.tags == ["web"]
