"""Where the store is: --store > KYB_STORE > nearest .kyb.toml (relative to it) > the default store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kyb_cli.cli.app import cli as kyb_cli
from kyb_cli.core.config.locate import locate
from kyb_cli.core.canon.repo import init_store
from kyb_cli.core.records.keys import path_of_key


def run(*args: str, input: str = "body"):
    res = CliRunner().invoke(kyb_cli, list(args), input=input, catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def keys_in(store: Path) -> set[str]:
    return {p.stem for p in (store / "knowledge").glob("*/*.md")}


@pytest.fixture
def stores(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a, b, c = (init_store(tmp_path / n).path for n in ("a", "b", "c"))
    return a, b, c


def test_store_flag_beats_env_and_workspace_file(stores, tmp_path, monkeypatch):
    a, b, c = stores
    monkeypatch.setenv("KYB_STORE", str(b))
    (tmp_path / ".kyb.toml").write_text('store = "c"\n')
    assert run("add", "--key", "k1", "--title", "t", "--store", str(a))[0] == 0
    assert run("--store", str(a), "add", "--key", "k2", "--title", "t")[0] == 0
    assert keys_in(a) == {"k1", "k2"} and not keys_in(b) and not keys_in(c)


def test_env_beats_workspace_file(stores, tmp_path, monkeypatch):
    a, b, c = stores
    monkeypatch.setenv("KYB_STORE", str(b))
    (tmp_path / ".kyb.toml").write_text('store = "c"\n')
    assert run("add", "--key", "k", "--title", "t")[0] == 0
    assert keys_in(b) == {"k"} and not keys_in(c)


def test_workspace_file_path_is_relative_to_that_file(stores, tmp_path, monkeypatch):
    _a, _b, c = stores
    ws = tmp_path / "ws"
    deep = ws / "src" / "deep"
    deep.mkdir(parents=True)
    (ws / ".kyb.toml").write_text('store = "../c"\n')
    monkeypatch.chdir(deep)
    assert run("add", "--key", "k", "--title", "t")[0] == 0
    assert keys_in(c) == {"k"}
    assert locate().source == f".kyb.toml:{ws / '.kyb.toml'}"


def test_nearest_workspace_file_wins(stores, tmp_path, monkeypatch):
    a, b, _c = stores
    inner = tmp_path / "outer" / "inner"
    inner.mkdir(parents=True)
    (tmp_path / "outer" / ".kyb.toml").write_text(f'store = "{a}"\n')
    (inner / ".kyb.toml").write_text(f'store = "{b}"\n')
    monkeypatch.chdir(inner)
    assert run("add", "--key", "k", "--title", "t")[0] == 0
    assert keys_in(b) == {"k"} and not keys_in(a)


def test_default_store_created_on_first_write(tmp_path, monkeypatch, isolated_dirs):
    monkeypatch.chdir(tmp_path)
    default = isolated_dirs / "data" / "kyb" / "store"
    assert locate().path == default and locate().is_default
    assert not default.exists()
    code, out, _err = run("add", "--key", "first", "--title", "First", input="hello")
    assert code == 0 and json.loads(out)["action"] == "created"
    assert (default / path_of_key("first")).exists()
    assert json.loads(run("get", "first")[1])["body"] == "hello"


def test_explicit_store_is_not_created_implicitly(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "missing"
    monkeypatch.setenv("KYB_STORE", str(missing))
    code, out, err = run("add", "--key", "k", "--title", "t")
    assert (code, out) == (4, "")
    assert f"no store at {missing}" in err and "kyb init" in err
    assert not missing.exists()


def test_init_creates_the_store_the_workspace_file_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".kyb.toml").write_text('store = "team-memory"\n')
    code, out, _ = run("init")
    assert code == 0 and json.loads(out)["store"] == str(tmp_path / "team-memory")
    assert run("add", "--key", "k", "--title", "t")[0] == 0
    assert keys_in(tmp_path / "team-memory") == {"k"}


@pytest.mark.parametrize("content,fragment", [
    ("store = \n", "cannot read it as TOML"),
    ("other = 1\n", 'needs a line like store = "path/to/store"'),
])
def test_broken_workspace_file_is_a_store_error(tmp_path, monkeypatch, content, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".kyb.toml").write_text(content)
    code, out, err = run("get", "k")
    assert (code, out) == (4, "")
    assert fragment in err


def test_directory_inside_another_repository_is_not_a_store(store_path, monkeypatch, tmp_path):
    """No upward search: pointing at a subfolder of some Git checkout must not write into that checkout."""
    sub = store_path / "knowledge"
    sub.mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, err = run("--store", str(sub), "add", "--key", "k", "--title", "t")
    assert (code, out) == (4, "")
    assert "is not a kyb store" in err


def test_a_named_store_is_located_the_same_from_the_kept_locations(tmp_path, monkeypatch):
    """`--store` / KYB_STORE given as an absolute path: its location is made once per process
    (locate._given) and equals the one made afresh; a relative one still follows the working directory."""
    from kyb_cli.core.config import locate as where

    monkeypatch.delenv("KYB_STORE", raising=False)
    for given in (str(tmp_path / "s"), str(tmp_path) + "//s/./", str(tmp_path / "a" / ".." / "s")):
        for _ in range(2):
            assert where.locate(given) == where.StoreLocation(where._absolute(given), "--store")
        monkeypatch.setenv("KYB_STORE", given)
        assert where.locate() == where.StoreLocation(where._absolute(given), "KYB_STORE")
        monkeypatch.delenv("KYB_STORE")
    for sub in ("one", "two"):
        (tmp_path / sub).mkdir()
        monkeypatch.chdir(tmp_path / sub)
        assert where.locate("rel").where == str(tmp_path / sub / "rel")
