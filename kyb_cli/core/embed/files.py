"""Where each model is (its setting, e.g. KYB_MODEL > config `model` > the default dir) and its fingerprint.

The fingerprint covers the bytes of `model.onnx` and `tokenizer.json` and the recipe, so a vector is
only ever served to the model and recipe that made it. Hashing 120 MB on every query would cost more
than the query, so file digests are memoised in the cache database, keyed by path, size, mtime and
inode: an edited or replaced file is hashed again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from kyb_cli.core.embed.models import E5, ModelSpec
from kyb_cli.core.embed.recipe import sha256
from kyb_cli.core.known import remember, settled, stamp
from kyb_cli.core.plain import plain

MODEL_FILES = ("model.onnx", "tokenizer.json")


@plain(frozen=True)  # not dataclasses (inspect, ast: ~8 ms of a hybrid `kyb query`)
class ModelLocation:
    """A model directory and where its path came from: its setting ("KYB_MODEL"), "config" or "default"."""

    path: Path
    source: str
    spec: ModelSpec = E5


def default_model_dir(spec: ModelSpec = E5) -> Path:
    from kyb_cli.core.config.dirs import data_dir

    return data_dir() / "models" / spec.name


def missing_files(path: Path) -> list[str]:
    return [name for name in MODEL_FILES if not os.path.isfile(os.path.join(path, name))]  # no Path: every answer


def locate_model(spec: ModelSpec = E5) -> ModelLocation | str:
    """The directory of model `spec`, or a one-line reason why there is none (never raises)."""
    from kyb_cli.core.settings import env_path

    if spec.package:  # an installed package (USE): no directory to name
        from kyb_cli.core.embed.package import locate

        found = locate(spec)
        return found if isinstance(found, str) else ModelLocation(found, "package", spec)
    explicit = env_path(spec.env)
    if explicit:
        location = ModelLocation(explicit, spec.env, spec)
    else:
        try:
            from kyb_cli.core.config.file import load_config

            configured = load_config().get(spec.config_key)
        except Exception as exc:  # a broken config must not break a query
            return f"config unreadable ({getattr(exc, 'message', exc)})"
        if configured:
            location = ModelLocation(Path(str(configured)).expanduser(), "config", spec)
        else:
            path = default_model_dir(spec)
            if not path.exists():
                what = "no model" if spec is E5 else f"no {spec.name} model"
                return f"{what} ({spec.env} unset, no `{spec.config_key}` in config, nothing at {path})"
            location = ModelLocation(path, "default", spec)
    missing = missing_files(location.path)
    if missing:
        return f"no {'/'.join(missing)} in {location.path} (from {location.source})"
    return location


def file_sha256(path: Path, chunk: int = 1 << 20) -> str:
    """hashlib's sha256, not recipe.sha256: a model file is ~35-120 MB, which OpenSSL hashes ~5x
    faster than the interpreter's builtin (0.09 vs 0.47 s for e5's model.onnx here); only the first
    look at a model file pays it (its stamp is remembered), never a question."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


# The same memo in this process's memory, by the same stamp: a long-lived door asks for the
# fingerprint on every answer, and the stat alone then tells it the model is the one it knew
# (a replaced or edited file has another stamp and is read from the cache, else hashed, again).
_DIGESTS: dict[tuple[str, int, int, int], str] = {}


# A door's answer first looks the file up by the path as given and the stamp a stat through it finds
# (core/known.py): one syscall, where resolving the path costs one per component. Set only when the
# resolved file is that very one and settled, so a retargeted link or a replaced file misses it.
_SEEN: dict[tuple, str] = {}


def file_digests(path: Path, cache=None) -> dict[str, str]:
    """sha256 of each model file, memoised in `cache` (a VectorCache) by (path, size, mtime, inode)."""
    out: dict[str, str] = {}
    for name in MODEL_FILES:
        named = os.path.join(path, name)  # strings: a Path costs more than the stat on every answer
        given = os.stat(named)
        quick = (named, *stamp(given))
        known = _SEEN.get(quick)
        if known is not None:
            out[name] = known
            continue
        known, st = _digest_of((path / name).resolve(), cache)
        if quick[1:] == stamp(st) and settled(st):
            remember(_SEEN, quick, known)
        out[name] = known
    return out


def _digest_of(file: Path, cache=None) -> tuple[str, os.stat_result]:
    """(sha256 of `file`, its stat), memoised in this process and in `cache` (a VectorCache) by
    (path, size, mtime, inode): a model's files are hashed once, not per query."""
    st = file.stat()
    where = (str(file), st.st_size, st.st_mtime_ns, st.st_ino)
    known = _DIGESTS.get(where)
    if known is None and cache is not None:
        known = cache.known_digest(*where)
    if known is None:
        known = file_sha256(file)
        if cache is not None:
            cache.remember_digest(*where, known)
    return remember(_DIGESTS, where, known), st


def package_digests(resources: Path, spec: ModelSpec, cache=None) -> dict[str, str]:
    """{"version": the package's version, file name: sha256} for every file under `resources` of a
    model that is an installed package (embed/package.py), each digest memoised as a model file's."""
    from kyb_cli.core.embed.package import version

    out = {"version": version(spec, resources)}
    for name in sorted(os.listdir(resources)):
        file = resources / name
        if file.is_file():
            out[name] = _digest_of(file, cache)[0]
    return out


_FINGERPRINTS: dict[tuple, str] = {}  # (digests, spec, the recipe as it is now) -> fingerprint


def fingerprint_of(digests: dict[str, str], spec: ModelSpec = E5) -> str:
    """Model files + this model's recipe -> a short stable id ("e5-…" is not assumed: any model works)."""
    from kyb_cli.core.embed.recipe import RECIPE

    memo = (tuple(digests.items()), spec, repr(RECIPE))  # the recipe is read each time: a test may change it
    found = _FINGERPRINTS.get(memo)
    return found if found is not None else remember(_FINGERPRINTS, memo, _fingerprint_of(digests, spec))


def _fingerprint_of(digests: dict[str, str], spec: ModelSpec) -> str:
    blob = json.dumps({"files": digests, "recipe": spec.recipe()}, sort_keys=True).encode()
    return sha256(blob).hexdigest()[:24]


def fingerprint(location: ModelLocation | Path, cache=None) -> str:
    if isinstance(location, ModelLocation) and location.spec.package:
        return fingerprint_of(package_digests(location.path, location.spec, cache), location.spec)
    if isinstance(location, ModelLocation):
        return fingerprint_of(file_digests(location.path, cache), location.spec)
    return fingerprint_of(file_digests(Path(location), cache))
