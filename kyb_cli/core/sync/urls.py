"""Remote URLs as the user typed them, made to mean the same thing wherever git runs."""

from __future__ import annotations

import re
from pathlib import Path

_SCP = re.compile(r"^[^/:]+@[^/:]+:|^[A-Za-z0-9.-]+:(?!//)")  # user@host:path, host:path


def absolute_local(url: str) -> str:
    """A relative local path (`../team.git`) as an absolute one; URLs and scp-style remotes as given.
    git runs the clone's fetches inside the new store, where a relative path means something else."""
    if "://" in url or (_SCP.match(url) and not Path(url).exists()):
        return url
    candidate = Path(url).expanduser()
    return str(candidate.absolute()) if candidate.exists() else url
