"""`kyb model pull/import/status`, pull tested only against a local server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import http.server
import threading

import pytest

from tests.support.tiny_model import build_tiny_model


class _Handler(http.server.BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}
    ranges: list[str | None] = []
    cut_first: set[str] = set()

    def do_GET(self):  # noqa: N802
        data = self.files.get(self.path.lstrip("/"))
        if data is None:
            self.send_error(404)
            return
        rng = self.headers.get("Range")
        self.ranges.append(rng)
        start = int(rng.split("=")[1].rstrip("-")) if rng else 0
        self.send_response(206 if rng else 200)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        if self.path.lstrip("/") in self.cut_first:  # a broken download: half, then the connection drops
            self.cut_first.discard(self.path.lstrip("/"))
            self.wfile.write(data[start:start + (len(data) - start) // 2])
            self.wfile.flush()
            self.connection.close()
            return
        self.wfile.write(data[start:])

    def log_message(self, *args):
        pass


@pytest.fixture
def server(tmp_path, monkeypatch):
    from kyb_cli.core.embed import pull

    src = build_tiny_model(tmp_path / "upstream")
    files = {"onnx/model_quantized.onnx": (src / "model.onnx").read_bytes(),
             "tokenizer.json": (src / "tokenizer.json").read_bytes()}
    handler = type("H", (_Handler,), {"files": files, "ranges": [], "cut_first": set()})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    pins = {name: pull.Pin(pin.remote, hashlib.sha256(files[pin.remote]).hexdigest(), len(files[pin.remote]))
            for name, pin in pull.PINS.items()}
    monkeypatch.setattr(pull, "PINS", pins)
    monkeypatch.delenv("KYB_MODEL", raising=False)
    monkeypatch.delenv("KYB_MODEL_URL", raising=False)
    yield f"http://127.0.0.1:{httpd.server_address[1]}/", handler, files
    httpd.shutdown()


def test_pull_verifies_and_installs_into_the_default_dir(cli, server):
    from kyb_cli.core.embed.files import default_model_dir

    url, _handler, files = server
    res = cli("model", "pull", "--url", url)
    assert res.code == 0 and res.json["action"] == "installed"
    assert (default_model_dir() / "model.onnx").read_bytes() == files["onnx/model_quantized.onnx"]
    status = cli("model", "status").json
    assert (status["found"], status["loads"], status["source"]) == (True, True, "default")
    assert cli("model", "pull", "--url", url).json["action"] == "unchanged"


def test_pull_resumes_a_broken_download(cli, server):
    from kyb_cli.core.embed.files import default_model_dir

    url, handler, files = server
    handler.cut_first.add("onnx/model_quantized.onnx")
    broken = cli("model", "pull", "--url", url)
    assert broken.code == 5 and broken.stdout == "" and not default_model_dir().exists()
    assert "run again to resume" in broken.stderr
    res = cli("model", "pull", "--url", url)
    assert res.code == 0
    assert handler.ranges[-2].startswith("bytes=") and handler.ranges[-2] != "bytes=0-"
    assert (default_model_dir() / "model.onnx").read_bytes() == files["onnx/model_quantized.onnx"]


def test_pull_rejects_a_file_that_does_not_match_its_pin(cli, server, monkeypatch):
    from kyb_cli.core.embed import pull
    from kyb_cli.core.embed.files import default_model_dir

    url, _handler, _files = server
    pin = pull.PINS["tokenizer.json"]
    monkeypatch.setitem(pull.PINS, "tokenizer.json", pull.Pin(pin.remote, "0" * 64, pin.size))
    res = cli("model", "pull", "--url", url)
    assert res.code == 5 and "does not match the pin" in res.stderr and res.stdout == ""
    assert not default_model_dir().exists()


def test_pull_url_from_environment(cli, server, monkeypatch):
    url, handler, _files = server
    monkeypatch.setenv("KYB_MODEL_URL", url)
    assert cli("model", "pull").code == 0 and handler.ranges


def test_import_copies_a_model_that_loads(cli, tmp_path):
    from kyb_cli.core.embed.files import default_model_dir

    src = build_tiny_model(tmp_path / "local")
    res = cli("model", "import", str(src))
    assert res.code == 0 and res.json["dim"] == 32
    assert (default_model_dir() / "tokenizer.json").read_bytes() == (src / "tokenizer.json").read_bytes()
    assert cli("model", "status").json["fingerprint"] == res.json["fingerprint"]


def test_import_refuses_a_model_that_does_not_load(cli, tmp_path):
    from kyb_cli.core.embed.files import default_model_dir

    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "model.onnx").write_bytes(b"garbage")
    (bad / "tokenizer.json").write_text("{}")
    res = cli("model", "import", str(bad))
    assert res.code == 2 and "does not load" in res.stderr and not default_model_dir().exists()


def test_status_without_a_model_says_why(cli, monkeypatch):
    monkeypatch.delenv("KYB_MODEL", raising=False)
    res = cli("model", "status")
    assert res.code == 0 and res.json["found"] is False and "no model" in res.json["reason"]
