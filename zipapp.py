"""Build dist/kyb.pyz: kyb and every dependency in one file that runs as `python kyb.pyz …`.

    python zipapp.py                 # from the packages installed in this environment (offline)
    python zipapp.py --pip           # pip install --target a temp dir from this project instead
    python zipapp.py -o /tmp/kyb.pyz

The file runs on a machine with the same Python version and platform. zipimport cannot load
extension modules, so packages with native code (pygit2, apsw, sqlite-vec, onnxruntime, tokenizers,
numpy, ...) are extracted on first run into a versioned cache directory
(`$KYB_PYZ_CACHE`, else the user cache dir `kyb/pyz/<version>-<build id>`); pure-Python packages are
imported straight from the archive, and package metadata (`*.dist-info`) is extracted with them
because importlib.metadata cannot read it from a folder inside a zip. The `mcp` extra is bundled
when it is installed here, so `python kyb.pyz mcp` serves MCP from the one file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent
NATIVE_RE = re.compile(r"\.(so|pyd|dylib)(\.[0-9.]+)?$|\.so\.")

BOOTSTRAP = r'''"""kyb.pyz start-up: extract native packages once to a versioned cache, then run kyb."""
import json, os, shutil, sys, tempfile, zipfile


def _cache_root():
    explicit = os.environ.get("KYB_PYZ_CACHE")
    if explicit:
        return explicit
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return os.path.join(base, "kyb", "Cache", "pyz")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches/kyb/pyz")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "kyb", "pyz")


def _prepare(archive):
    with zipfile.ZipFile(archive) as zf:
        meta = json.loads(zf.read("_kyb_pyz.json"))
        target = os.path.join(_cache_root(), meta["version"] + "-" + meta["build_id"][:16])
        if not os.path.exists(os.path.join(target, ".complete")):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            tmp = tempfile.mkdtemp(prefix=".extract-", dir=os.path.dirname(target))
            try:
                for name in meta["native_files"]:
                    zf.extract("site/" + name, tmp)
                open(os.path.join(tmp, "site", ".complete"), "w").close()
                try:
                    os.rename(os.path.join(tmp, "site"), target)
                except OSError:
                    if not os.path.exists(os.path.join(target, ".complete")):
                        raise
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    return target


def main():
    archive = os.path.dirname(os.path.abspath(__file__))
    native = _prepare(archive)
    site = os.path.join(archive, "site")
    if sys.path and os.path.abspath(sys.path[0]) == archive:
        del sys.path[0]
    sys.path[0:0] = [native, site]
    # child processes (`python -m kyb_cli …`) find the same packages
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (native, site, os.environ.get("PYTHONPATH")) if p)
    from kyb_cli.cli.fast import main as kyb_main
    kyb_main()


if __name__ == "__main__":
    main()
'''


def _requirements(requirements: list[str], extras: tuple[str, ...] = ()) -> list[tuple[str, tuple[str, ...]]]:
    """(name, extras) of the requirements that apply here: markers true for no extra or for one of
    `extras` (the extras this distribution was asked for, e.g. pyjwt[crypto] -> cryptography)."""
    from packaging.requirements import Requirement  # ships with pip/setuptools

    out = []
    for text in requirements:
        req = Requirement(text)
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in ("", *extras)):
            continue
        out.append((req.name, tuple(sorted(req.extras))))
    return out


def _requirement_names(requirements: list[str]) -> list[str]:
    return [name for name, _extras in _requirements(requirements)]


def _closure(wanted: list[tuple[str, tuple[str, ...]]]) -> list[metadata.Distribution]:
    seen: dict[str, metadata.Distribution] = {}
    done: set[tuple[str, str]] = set()
    todo = list(wanted)
    while todo:
        name, extras = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen and all((key, e) in done for e in extras):
            continue
        try:
            dist = seen.get(key) or metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise SystemExit(f"zipapp: {name} is required but not installed here (try --pip)") from None
        seen[key] = dist
        done.update((key, e) for e in extras)
        todo.extend(_requirements(dist.requires or [], extras))
    return [seen[k] for k in sorted(seen)]


EXTRAS = ("mcp",)  # optional doors bundled when installed here (`kyb mcp` needs the MCP SDK)


def _project_requirements(extras: tuple[str, ...] = ()) -> list[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    optional = data["project"].get("optional-dependencies", {})
    return list(data["project"]["dependencies"]) + [r for extra in extras for r in optional.get(extra, [])]


def _installed_extras() -> tuple[str, ...]:
    """The extras whose requirements are all installed here; a missing one is left out with a note."""
    found = []
    for extra in EXTRAS:
        names = _requirement_names(_project_requirements((extra,))[len(_project_requirements()):])
        try:
            for name in names:
                metadata.distribution(name)
        except metadata.PackageNotFoundError:
            sys.stderr.write(f"zipapp: extra [{extra}] is not installed here, so `kyb {extra}` will not work "
                             f"in the zipapp (install kyb here with it: pip install -e '.[{extra}]', or build with --pip)\n")
            continue
        found.append(extra)
    return tuple(found)


def _copy_installed(site: Path) -> None:
    """Each dependency's files as its RECORD lists them (scripts and caches left out), then kyb_cli."""
    for dist in _closure(_requirements(_project_requirements(_installed_extras()))):
        base = Path(dist.locate_file(""))
        for file in dist.files or []:
            rel = Path(str(file))
            if rel.parts[0] == ".." or "__pycache__" in rel.parts or rel.suffix == ".pyc":
                continue
            source = base / rel
            if source.is_file():
                dest = site / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, dest)
    _copy_project(site)


def _copy_project(site: Path) -> None:
    shutil.copytree(ROOT / "kyb_cli", site / "kyb_cli",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "devtools"), dirs_exist_ok=True)


def _pip_install(site: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-compile", "--target", str(site),
                    f"{ROOT}[{','.join(EXTRAS)}]"], check=True)
    shutil.rmtree(site / "bin", ignore_errors=True)


def build(output: Path, *, use_pip: bool = False) -> dict[str, object]:
    from kyb_cli import __version__

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kyb-pyz-") as tmp:
        site = Path(tmp) / "site"
        site.mkdir()
        (_pip_install if use_pip else _copy_installed)(site)
        files = sorted(p for p in site.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        rels = [p.relative_to(site).as_posix() for p in files]
        native_tops = {rel.split("/")[0] for rel in rels if NATIVE_RE.search(rel)}
        # Metadata is extracted too: importlib.metadata cannot look inside a folder of a zip, and
        # packages ask for their own version at import (httpx2 under the MCP SDK does).
        native_files = [rel for rel in rels if rel.split("/")[0] in native_tops
                        or rel.split("/")[0].endswith(".dist-info")]
        digest = hashlib.sha256()
        for rel, path in zip(rels, files):
            digest.update(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
        meta = {"version": __version__, "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
                "platform": sys.platform, "build_id": digest.hexdigest(), "native_files": native_files}
        output.parent.mkdir(parents=True, exist_ok=True)
        partial = output.with_name(output.name + ".partial")
        with open(partial, "wb") as raw:
            raw.write(b"#!/usr/bin/env python3\n")
            with zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
                zf.writestr("__main__.py", BOOTSTRAP)
                zf.writestr("_kyb_pyz.json", json.dumps(meta, indent=1))
                # Directory entries too: zipimport finds namespace packages (opentelemetry, which
                # the MCP SDK imports) only through them.
                for directory in sorted({"/".join(rel.split("/")[:n]) for rel in rels
                                         for n in range(1, rel.count("/") + 1)}):
                    zf.writestr(zipfile.ZipInfo(f"site/{directory}/"), b"")
                for rel, path in zip(rels, files):
                    zf.write(path, "site/" + rel)
        partial.chmod(0o755)
        os.replace(partial, output)
    return {"output": str(output), "bytes": output.stat().st_size, "files": len(rels),
            "native_packages": sorted(native_tops), "seconds": round(time.monotonic() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build dist/kyb.pyz (kyb and its dependencies in one file).")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "dist" / "kyb.pyz")
    parser.add_argument("--pip", action="store_true", help="pip install --target a temp dir instead of copying "
                                                           "the packages installed here")
    args = parser.parse_args(argv)
    report = build(args.output.absolute(), use_pip=args.pip)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
