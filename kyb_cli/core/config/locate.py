"""Which store a command works on.

`--store PATH` > `KYB_STORE` > the nearest `.kyb.toml` walking up from the working directory
(`store = "path"`, relative to that file) > the default store in the user data directory.
"""

from __future__ import annotations

import os
from kyb_cli.core.plain import plain

from kyb_cli.core.errors import StoreError
from kyb_cli.core.known import made_path, pure, remember

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`

WORKSPACE_FILE = ".kyb.toml"


@plain(frozen=True)
class StoreLocation:
    where: str  # the path as a string: a `kyb query` builds no Path (pathlib was ~4 ms of it, issue 38)
    source: str  # "--store", "KYB_STORE", ".kyb.toml:<file>", "default"

    @property
    def path(self) -> Path:
        return made_path(self.where)

    @property
    def is_default(self) -> bool:
        return self.source == "default"


_STORE_DIRS = ("knowledge", "incidents", "tasks")


def _is_store(directory: Path) -> bool:
    """A kyb store's root: its files come from peers, so a `.kyb.toml` in its tree is not trusted."""
    try:
        return (directory / ".git").is_dir() and (
            (directory / ".git" / "kyb").is_dir() or any((directory / d).is_dir() for d in _STORE_DIRS))
    except OSError:
        return False


def find_workspace_file(start: Path) -> Path | None:
    """The nearest `.kyb.toml` above `start`, skipping any inside a store's own tree (a peer could
    plant one there to redirect kyb run inside the store; issue 24, failure 10)."""
    chain = (start, *start.parents)
    inside = next((i for i, d in enumerate(chain) if _is_store(d)), None)
    for i, directory in enumerate(chain):
        if inside is not None and i <= inside:
            continue
        candidate = directory / WORKSPACE_FILE
        if candidate.is_file():
            return candidate
    return None


def _absolute(given: str | os.PathLike[str]) -> str:
    """`str(Path(given).expanduser().absolute())`; a plain string without `~` without pathlib (issue 38):
    its parts as PurePosixPath keeps them (no empty or `.` parts; `..` stays), under the working directory."""
    if not isinstance(given, str) or given.startswith("~") or os.sep != "/":
        from pathlib import Path

        return str(Path(given).expanduser().absolute())
    return pure(given if given.startswith("/") else os.getcwd() + "/" + given)


def _given(given: str | os.PathLike[str], source: str) -> StoreLocation:
    """The location of a store named by `--store` or KYB_STORE; an absolute path's made once per
    process (a door locates its store three times per answer: ~2 µs each of normalising)."""
    if not (isinstance(given, str) and given.startswith("/") and os.sep == "/"):
        return StoreLocation(_absolute(given), source)  # relative: under the working directory of now
    found = _GIVEN.get((given, source))
    if found is None:
        found = remember(_GIVEN, (given, source), StoreLocation(_absolute(given), source))
    return found


_GIVEN: dict[tuple[str, str], StoreLocation] = {}  # (absolute path as given, source) -> its location (frozen)


def locate(explicit: str | os.PathLike[str] | None = None, *, cwd: Path | None = None) -> StoreLocation:
    if explicit:
        return _given(explicit, "--store")
    env = os.environ.get("KYB_STORE")
    if env:
        return _given(env, "KYB_STORE")
    from pathlib import Path  # a .kyb.toml or the default store: not `--store`'s path

    try:
        start = (cwd or Path.cwd()).absolute()
    except OSError:
        start = None
    if start is not None:
        workspace = find_workspace_file(start)
        if workspace is not None:
            import tomllib  # only with a .kyb.toml: a `kyb query --store P` does not pay for the parser

            try:
                data = tomllib.loads(workspace.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError) as exc:
                raise StoreError(f"{workspace}: cannot read it as TOML ({exc})") from None
            store = data.get("store")
            if not isinstance(store, str) or not store.strip():
                raise StoreError(f"{workspace}: needs a line like store = \"path/to/store\"")
            path = (workspace.parent / Path(store).expanduser()).absolute()
            return StoreLocation(str(path), f".kyb.toml:{workspace}")
    from kyb_cli.core.config.dirs import default_store_path

    return StoreLocation(str(default_store_path()), "default")
