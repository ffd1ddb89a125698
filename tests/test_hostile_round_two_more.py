"""Issue 24, "Hostile input, round two" (the items left after tests/test_hostile_round_two.py), and
issue 25 item 13's doctor part: one test (or a few) named after each numbered failure."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest


# -- issue 25 item 13: doctor with a broken model blames the model, not the cache -----------------

def test_item_13_doctor_with_a_truncated_model_blames_the_model_not_the_cache(cli, tiny, tmp_path, monkeypatch):
    assert cli("add", "--key", "k", "--title", "T", input="checkout writes go to node 3").code == 0
    assert cli("index", "--embed").code == 0  # the good model's vectors are now in the user cache
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in os.listdir(tiny):
        (broken / name).write_bytes((Path(tiny) / name).read_bytes())
    onnx = (broken / "model.onnx").read_bytes()
    (broken / "model.onnx").write_bytes(onnx[: len(onnx) // 3])  # truncated, as a cut download is
    monkeypatch.setenv("KYB_MODEL", str(broken))
    from kyb_cli.core import embed

    embed._EMBEDDERS.clear()
    res = cli("doctor")
    assert res.code == 4
    said = res.json["problems"] + res.json["warnings"]
    model = [p for p in res.json["problems"] if p.startswith("model:")]
    assert model and "model.onnx" in model[0] and "kyb model import" in model[0], said
    assert not any("delete" in line and "cache" in line for line in said), said
    assert not any("another model" in line for line in said), said
