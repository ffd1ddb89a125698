"""A door looks a model file's digest up by the path as given and one stat through it
(core/embed/files.py `_SEEN`): a link retargeted, or a file replaced, is hashed again."""

import os

from kyb_cli.core.embed import files


def test_a_retargeted_link_or_a_replaced_file_is_hashed_again(tmp_path):
    a, b, model = tmp_path / "a", tmp_path / "b", tmp_path / "model"
    for d, fill in ((a, b"1"), (b, b"2")):
        d.mkdir()
        (d / "model.onnx").write_bytes(fill * 64)  # same size, other bytes
        (d / "tokenizer.json").write_bytes(b"{}")
    model.mkdir()
    os.symlink(a / "model.onnx", model / "model.onnx")
    (model / "tokenizer.json").write_bytes(b"{}")
    first = files.file_digests(model)
    assert files.file_digests(model) == first
    os.unlink(model / "model.onnx")
    os.symlink(b / "model.onnx", model / "model.onnx")
    second = files.file_digests(model)
    assert second["model.onnx"] == files.file_sha256(b / "model.onnx") != first["model.onnx"]
    (model / "tokenizer.json").unlink()
    (model / "tokenizer.json").write_bytes(b"[1]")  # replaced (another size: the stamp is size, mtime, inode)
    assert files.file_digests(model)["tokenizer.json"] == files.file_sha256(model / "tokenizer.json")
