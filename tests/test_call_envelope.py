"""Issue 36: one per-call envelope (`api.answer`) for every door, not three copies of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kyb_cli import api

PKG = Path(api.__file__).resolve().parent.parent.parent


def test_answer_gives_the_answer_or_one_kyb_error():
    assert api.answer(lambda: {"ok": 1}) == {"ok": 1}
    with pytest.raises(api.NotFound):
        api.answer(lambda: (_ for _ in ()).throw(api.NotFound("no record 'x'")))
    with pytest.raises(api.KybError) as bug:
        api.answer(lambda: 1 / 0)
    assert bug.value.exit_code == api.EXIT_INTERNAL and isinstance(bug.value.__cause__, ZeroDivisionError)
    with pytest.raises(api.KybError) as disk:
        api.answer(lambda: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    assert disk.value.exit_code == 4
    with pytest.raises(BrokenPipeError):  # a door's own: raised as it is
        api.answer(lambda: (_ for _ in ()).throw(BrokenPipeError()), own=(BrokenPipeError,))


@pytest.mark.parametrize("door", ["cli/app.py", "mcp/server.py", "serve/app.py"])
def test_every_door_calls_the_one_envelope(door):
    source = (PKG / "kyb_cli" / door).read_text()
    assert "api.answer(" in source, door
    for copy in ("reset_history_state", "with_history_flag", "as_error"):
        assert copy not in source, (door, copy)
