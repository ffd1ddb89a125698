"""`kyb doctor` and `kyb model status` remember that a model loaded (embed/pull.py `_load_check`): the
same files, recipe and runtime are not loaded again; changed files are; a failure is never kept."""

from __future__ import annotations

import pytest

from tests.support.tiny_model import build_tiny_model


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    model = build_tiny_model(tmp_path / "model")
    monkeypatch.setenv("KYB_MODEL", str(model))
    return model


def _loads(monkeypatch) -> list[str]:
    from kyb_cli.core.embed import embedder

    made: list[str] = []
    real = embedder.Embedder.__init__

    def counting(self, path, *args, **kwargs):
        made.append(str(path))
        real(self, path, *args, **kwargs)

    monkeypatch.setattr(embedder.Embedder, "__init__", counting)
    return made


def test_a_model_that_loaded_is_not_loaded_again(cli, tiny, monkeypatch):
    made = _loads(monkeypatch)
    first = cli("model", "status").json
    second = cli("model", "status").json
    assert first["loads"] and second["loads"] and len(made) == 1
    assert "remembered" not in first and second["remembered"] is True
    assert {k: second[k] for k in ("dim", "load_s", "token_type_ids")} == \
        {k: first[k] for k in ("dim", "load_s", "token_type_ids")}


def test_changed_model_files_are_loaded_again(cli, tiny, monkeypatch):
    made = _loads(monkeypatch)
    assert cli("model", "status").json["loads"]
    (tiny / "tokenizer.json").write_text((tiny / "tokenizer.json").read_text() + "\n")
    again = cli("model", "status").json
    assert again["loads"] and "remembered" not in again and len(made) == 2


def test_a_model_that_fails_to_load_is_checked_every_time(cli, tiny, monkeypatch):
    made = _loads(monkeypatch)
    (tiny / "model.onnx").write_bytes(b"not an onnx model")
    for _ in range(2):
        status = cli("model", "status").json
        assert status["loads"] is False and "reason" in status and "remembered" not in status
    assert len(made) == 2
