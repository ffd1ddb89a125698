"""A real tiny filesystem for disk-full tests: a tmpfs of SIZE mounted under the test's tmp_path
(root or CAP_SYS_ADMIN; the test is skipped, saying why, where it cannot mount one)."""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path


@contextlib.contextmanager
def tiny_tmpfs(where: Path, size: str):
    import pytest

    mnt = where / "tiny"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN): {proc.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
