"""Record files round-trip byte-stable (rule "file format"), through the library and through the CLI."""

from __future__ import annotations

import pytest

from kyb_cli.core.records.keys import kind_of_key, path_of_key
from kyb_cli.core.records.model import Record, RecordFormatError, parse

BODIES = {
    "plain": "Checkout writes go through svc-checkout on node-3, port 9090.",
    "plus_lines": "before\n+++\nkey = \"evil\"\n+++\nafter",
    "dash_lines": "---\ntitle: yaml\n---\nbody after dashes",
    "crlf": "line one\r\nline two\r\n\r\nline four",
    "code_fence": "```toml\n+++\nkey = \"x\"\n+++\n```\n\n```python\nprint('hi')\n```",
    "unicode": "Привет, мир — ünïcödé ✓ 🚀 中文",
    "indented_first_line": "    four-space code block\n    second line",
    "trailing_spaces_inside": "a  \nb\t\nc",
    "toml_lookalike": "key = \"other\"\ntitle = \"not me\"",
    "empty": "",
}

TITLES = ["true", "123", "null", "false", "1.5", "- dash", "| pipe", "line one\nline two", "Путь записи",
          'quote " and \\ backslash', "'single'", "+++", "[table]", "  padded  "]


def roundtrip(record: Record) -> Record:
    text = record.to_markdown()
    again = parse(text)
    assert again.to_markdown() == text  # byte-stable
    return again


@pytest.mark.parametrize("name", sorted(BODIES))
def test_body_roundtrip_byte_stable(name):
    body = BODIES[name]
    back = roundtrip(Record(key="k", title="t", body=body))
    assert back.body == body


def test_huge_body_roundtrip_20000_lines():
    body = "\n".join(f"line {i} with some text +++ --- ```" for i in range(20_000))
    back = roundtrip(Record(key="k", title="t", body=body))
    assert back.body == body
    assert back.body.count("\n") == 19_999


@pytest.mark.parametrize("title", TITLES)
def test_title_roundtrip_yaml_and_toml_special(title):
    back = roundtrip(Record(key="k", title=title, body="b"))
    assert back.title == title
    assert isinstance(back.title, str)


def test_tags_and_refs_special_chars_roundtrip_verbatim():
    tags = ["UPPER", "кириллица", "a:b", "with space", 'q"uote', "back\\slash", "=eq", "#hash"]
    refs = ["see .env on host-a", "https://example.invalid/a?b=c#d", "path/with spaces/file.md", "+++"]
    back = roundtrip(Record(key="k", title="t", tags=tags, refs=refs))
    assert back.tags == tags
    assert back.refs == refs


def test_record_format_is_toml_between_plus_lines_without_updated_at():
    text = Record(key="checkout-write-path", title="Checkout write path", tags=["infra"],
                  body="Port 9090.").to_markdown()
    assert text == '+++\nkey = "checkout-write-path"\ntitle = "Checkout write path"\ntags = ["infra"]\n+++\n\nPort 9090.\n'
    assert "updated_at" not in text and "kind" not in text


def test_knowledge_front_matter_stays_clean():
    text = Record(key="k", title="t", body="b").to_markdown()
    for name in ("kind", "service", "severity", "status", "hosts", "knowledge", "tags", "refs"):
        assert f"\n{name} =" not in text


def test_hand_written_file_with_extra_keys_survives():
    text = '+++\nkey = "k"\ntitle = "T"\nowner = "platform team"\nreviewed = 2026-01-02\n[links]\nwiki = "x"\n+++\n\nBody.\n'
    record = parse(text)
    assert record.extra["owner"] == "platform team"
    out = record.to_markdown()
    again = parse(out)
    assert again.extra == record.extra
    assert again.to_markdown() == out


def test_hand_written_crlf_file_parses():
    text = '+++\r\nkey = "k"\r\ntitle = "T"\r\n+++\r\n\r\nBody line\r\nsecond\r\n'
    record = parse(text)
    assert (record.key, record.title) == ("k", "T")
    assert record.body == "Body line\r\nsecond"


@pytest.mark.parametrize("text,fragment", [
    ("no front matter\n", "missing front matter"),
    ("+++\nkey = \"k\"\ntitle = \"t\"\n", "unclosed front matter"),
    ("+++\nkey = \"k\"\ntitle = \n+++\n", "broken TOML"),
    ("+++\ntitle = \"t\"\n+++\n", "no 'key'"),
    ("+++\nkey = \"k\"\ntitle = \"t\"\ntags = \"notalist\"\n+++\n", "'tags' must be a list"),
])
def test_broken_files_give_clear_format_errors(text, fragment):
    with pytest.raises(RecordFormatError) as err:
        parse(text, path=path_of_key("k"))
    assert fragment in err.value.message
    assert err.value.message.startswith(path_of_key("k"))


def test_kind_and_path_follow_the_key_prefix():
    import hashlib

    def bucket(key: str) -> str:
        return hashlib.sha1(key.encode()).hexdigest()[:2]

    assert (kind_of_key("inc-2026-x"), path_of_key("inc-2026-x")) == (
        "incident", f"incidents/{bucket('inc-2026-x')}/inc-2026-x.md")
    assert (kind_of_key("task-x"), path_of_key("task-x")) == ("task", f"tasks/{bucket('task-x')}/task-x.md")
    assert (kind_of_key("incx"), path_of_key("incx")) == ("knowledge", f"knowledge/{bucket('incx')}/incx.md")


# -- through the CLI: what goes in comes out, and the file on disk is the same bytes as in Git ----

@pytest.mark.parametrize("name", ["plus_lines", "dash_lines", "crlf", "code_fence", "unicode"])
def test_cli_body_roundtrip_byte_stable(cli, store_path, name):
    body = BODIES[name]
    res = cli("add", "--key", "k", "--title", "T", input=body)
    assert res.code == 0, res.stderr
    got = cli("get", "k").json
    assert got["body"] == body
    on_disk = (store_path / path_of_key("k")).read_bytes()
    assert parse(on_disk).body == body
    # writing the same again is a no-op: the stored bytes are stable
    assert cli("add", "--key", "k", "--title", "T", input=body).json == {"changed": False, "key": "k"}


@pytest.mark.parametrize("title", ["true", "123", "null", "line one\nline two", "Путь записи"])
def test_cli_title_roundtrip(cli, title):
    assert cli("add", "--key", "k", "--title", title, input="b").code == 0
    assert cli("get", "k").json["title"] == title


def test_cli_huge_body_roundtrip(cli, tmp_path):
    body = "\n".join(f"row {i}" for i in range(20_000))
    src = tmp_path / "big.md"
    src.write_text(body)
    assert cli("add", "--key", "big", "--title", "T", "--file", str(src)).code == 0
    assert cli("get", "big").json["body"] == body


def test_cli_crlf_from_file_is_kept(cli, tmp_path):
    src = tmp_path / "crlf.md"
    src.write_bytes(b"a\r\nb\r\n")
    assert cli("add", "--key", "k", "--title", "T", "--file", str(src)).code == 0
    assert cli("get", "k").json["body"] == "a\r\nb"


def test_cli_hand_added_front_matter_survives_an_update(cli, store_path):
    """A key a person added by hand (and committed) is kept when kyb writes a new version."""
    import subprocess

    cli("add", "--key", "k", "--title", "T", input="v1")
    f = store_path / path_of_key("k")
    f.write_text(f.read_text().replace('title = "T"\n', 'title = "T"\nowner = "platform"\n'))
    subprocess.run(["git", "-C", str(store_path), "commit", "-qam", "hand edit"], check=True,
                   env={"GIT_AUTHOR_NAME": "p", "GIT_AUTHOR_EMAIL": "p@x", "GIT_COMMITTER_NAME": "p",
                        "GIT_COMMITTER_EMAIL": "p@x", "PATH": "/usr/bin:/bin"})
    assert cli("get", "k").json["extra"] == {"owner": "platform"}
    assert cli("add", "--key", "k", "--title", "T", input="v2").json["action"] == "updated"
    got = cli("get", "k").json
    assert got["body"] == "v2" and got["extra"] == {"owner": "platform"}


DATED = [  # TOML dates and times a person or a peer may write into front matter
    'owner = "platform"\nreviewed = 2026-01-01\n',
    'seen = 2026-01-01T10:00:00Z\nat = 07:30:00\nlocal = 2026-01-01T10:00:00\n',
    'days = [2026-01-01, 2026-01-02]\n\n[t]\nd = 2026-01-01\n\n[t.deeper]\nwhen = 2026-01-01T10:00:00+02:00\n',
    'ratio = nan\nbig = inf\nlow = -inf\nfine = 1.5\n',
]


@pytest.mark.parametrize("lines", DATED, ids=["top", "times", "tables", "nan-inf"])
def test_hand_added_dates_are_answered_as_iso_text_and_kept_as_toml(cli, store_path, lines):
    """A TOML date in hand-added front matter: every JSON answer says it as ISO 8601 text (before,
    `kyb query` and `get` exited 70 on `date is not JSON serializable`, and so did a fresh clone's
    whole snapshot), and the next version kyb writes keeps the TOML value."""
    import datetime
    import subprocess
    import tomllib

    cli("add", "--key", "k", "--title", "T", input="v1 dated")
    f = store_path / path_of_key("k")
    f.write_text(f.read_text().replace('title = "T"\n', 'title = "T"\n' + lines, 1))
    subprocess.run(["git", "-C", str(store_path), "commit", "-qam", "hand edit"], check=True,
                   env={"GIT_AUTHOR_NAME": "p", "GIT_AUTHOR_EMAIL": "p@x", "GIT_COMMITTER_NAME": "p",
                        "GIT_COMMITTER_EMAIL": "p@x", "PATH": "/usr/bin:/bin"})
    toml = tomllib.loads(lines)

    def iso(v):
        if isinstance(v, dict):
            return {k: iso(x) for k, x in v.items()}
        if isinstance(v, list):
            return [iso(x) for x in v]
        if isinstance(v, float) and v - v != 0:
            return repr(v)
        return v.isoformat() if isinstance(v, (datetime.date, datetime.time)) else v

    got = cli("get", "k")
    assert got.code == 0 and got.json["extra"] == iso(toml), got.stderr
    assert "NaN" not in got.stdout and "Infinity" not in got.stdout  # strict JSON
    found = cli("query", "dated", "--no-semantic", "--full")
    assert found.code == 0 and found.json["hits"][0]["extra"] == iso(toml), found.stderr
    assert cli("add", "--key", "k", "--title", "T", input="v2 dated").json["action"] == "updated"
    assert iso(parse(f.read_text()).extra) == iso(toml)  # TOML's values are kept, not their text
    assert parse(f.read_text()).extra.keys() == toml.keys()
    assert all(type(parse(f.read_text()).extra[k]) is type(v) for k, v in toml.items())
