"""A long-lived door parses the config once per version of the file (core/config/file.py, by core/known.py's stamps), and still
sees every change at the next read: a rewrite of the same size in the same clock tick included."""

import os

from kyb_cli.core import known
from kyb_cli.core.config import file


def test_a_change_is_seen_by_the_next_read(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    monkeypatch.setenv("KYB_CONFIG", str(path))
    assert file.load_config() == {}
    path.write_text("[stale]\ndays = 30\n")
    assert file.load_config() == {"stale": {"days": 30}}
    path.write_text("[stale]\ndays = 60\n")  # same size, same inode, maybe the same mtime: just written
    assert file.load_config() == {"stale": {"days": 60}}


def test_a_settled_file_is_parsed_once_and_a_change_still_seen(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    monkeypatch.setenv("KYB_CONFIG", str(path))
    monkeypatch.setattr(known, "SETTLED_NS", 0)  # settled at once (utime sets the ctime to now)
    path.write_text("[stale]\ndays = 30\n")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))  # the rewrite below has another mtime
    first = file.load_config()
    assert file.load_config() is first  # kept
    path.write_text("[stale]\ndays = 60\n")
    assert file.load_config() == {"stale": {"days": 60}}
    path.unlink()
    assert file.load_config() == {}


def test_the_config_files_path_follows_its_variables_at_the_next_read(tmp_path, monkeypatch):
    """The path is worked out once per (KYB_CONFIG, XDG_CONFIG_HOME, HOME): each change is still seen,
    and the kept path is the one worked out afresh (file._config_path)."""
    monkeypatch.delenv("KYB_CONFIG", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    for home in ("h1", "h2"):
        (tmp_path / home / ".config" / "kyb").mkdir(parents=True)
        (tmp_path / home / ".config" / "kyb" / "config.toml").write_text(f'[who]\nhome = "{home}"\n')
    (tmp_path / "x" / "kyb").mkdir(parents=True)
    (tmp_path / "x" / "kyb" / "config.toml").write_text('[who]\nhome = "xdg"\n')
    (tmp_path / "c.toml").write_text('[who]\nhome = "explicit"\n')
    steps = [("HOME", str(tmp_path / "h1"), "h1"), ("HOME", str(tmp_path / "h2"), "h2"),
             ("XDG_CONFIG_HOME", str(tmp_path / "x"), "xdg"), ("KYB_CONFIG", str(tmp_path / "c.toml"), "explicit"),
             ("KYB_CONFIG", "", "xdg"), ("XDG_CONFIG_HOME", "", "h2"), ("HOME", str(tmp_path / "h1"), "h1")]
    for name, value, expected in steps * 2:  # the second round from the kept paths
        monkeypatch.setenv(name, value)
        assert file.load_config()["who"]["home"] == expected
        assert file._config_file() == file._config_path(os.environ.get("KYB_CONFIG"))
