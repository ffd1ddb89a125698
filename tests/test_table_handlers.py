"""Issue 36: the table is the whole operation. Every operation of the table has one handler that
api.handle runs for every door, including the CLI's store upkeep (index, reindex, remote, sync) and
the two that take files or an editor (import, edit); a Python caller runs them the same way."""

from __future__ import annotations

from kyb_cli import api
from kyb_cli.api.handlers import HANDLERS
from kyb_cli.api.operations import OPERATIONS


class Door:
    """What a handler needs from a door: the store, its path and the writer; `edit` the door's editor."""

    def __init__(self, store):
        self._store = store

    def store(self):
        return self._store

    def path(self):
        return self._store.path

    @staticmethod
    def attribution():
        return api.attribution("test", environ={})


def _fields(name, **given):
    return {f.name: f.default for f in OPERATIONS[name].fields} | given


def test_every_table_operation_has_a_handler():
    assert set(OPERATIONS) - set(HANDLERS) == set()


def test_import_through_the_table_takes_the_tables_names(store, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "port.md").write_text("# Checkout port\n\nport 9090\n", encoding="utf-8")
    (notes / "skip.md").write_text("# Skipped\n\nleft out\n", encoding="utf-8")
    reply = api.handle("import", Door(store), _fields("import", paths=[str(notes)], exclude=["skip.md"],
                                                      tags=["imported"]))
    assert [e["key"] for e in reply["created"]] == ["port"]
    assert api.read(store.path, "port").record.tags == ["imported"]


def test_edit_unchanged_text_makes_no_commit_and_a_changed_one_is_one_version(store):
    api.handle("add", Door(store), _fields("add", key="port", title="Port", body="9090"))
    door = Door(store)
    door.edit = lambda original, save: save(original)
    assert api.handle("edit", door, {"key": "port"}) == {"changed": False, "key": "port"}
    door.edit = lambda original, save: save(original.replace("9090", "9443"))
    reply = api.handle("edit", door, {"key": "port"})
    assert reply["changed"] and api.read(store.path, "port").record.body.strip() == "9443"
