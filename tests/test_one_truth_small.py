"""Issue 25's smaller items, each named after what the user saw."""

from __future__ import annotations

from kyb_cli import api
from kyb_cli.core.tools.export import export_rows


def test_tags_infra_INFRA_infra_store_one_tag(store):
    who = api.attribution("cli")
    api.add_knowledge(store, key="net", title="Net", body="x", tags=["Infra", "INFRA", "infra", "DB"], refs=[],
                      attribution=who)
    assert api.read(store, "net").record.tags == ["infra", "db"]
    api.write_task(store, who, key="task-a", title="A", tags=["Ops", "ops"])
    assert api.read(store, "task-a").record.tags == ["ops"]
    api.write_incident(store, who, key="inc-2026-01-01-a", title="A", service="s", severity="low",
                       tags=["Web", "WEB"])
    assert api.read(store, "inc-2026-01-01-a").record.tags == ["web"]


def test_bare_kyb_prints_help_on_stdout_and_exits_0(cli):
    res = cli()
    assert res.code == 0 and "Usage: " in res.stdout and "Commands:" in res.stdout and res.stderr == ""


def test_kyb_help_add_is_the_help_of_add(cli):
    res = cli("help", "add")
    assert res.code == 0 and " add [OPTIONS]" in res.stdout
    bad = cli("help", "nope")
    assert bad.code == 2 and bad.stdout == ""


def test_kyb_completion_prints_a_script_for_each_shell(cli):
    for shell in ("bash", "zsh", "fish"):
        res = cli("completion", shell)
        assert res.code == 0 and "_KYB_COMPLETE" in res.stdout, shell
    assert cli("completion", "tcsh").code == 2


def test_adr_superseded_links_resolve_to_the_key_of_the_adr_that_replaced_it(store, tmp_path):
    adr = tmp_path / "adr"
    adr.mkdir()
    (adr / "0001-use-mysql.md").write_text("---\ntitle: Use MySQL\nstatus: Superseded\n---\n\n"
                                           "Superseded by [ADR-0003](0003-use-postgres.md).\n\nWe use MySQL.\n")
    (adr / "0002-use-redis.md").write_text("# Use Redis\n\nStatus: superseded by ADR-0003\n\nCache in Redis.\n")
    (adr / "0003-use-postgres.md").write_text("# Use Postgres\n\nStatus: Accepted\n\nWe use Postgres.\n")
    reply = api.import_records(store, [str(adr)], attribution=api.attribution("cli"))
    keys = {e["path"].rsplit("/", 1)[-1]: e["key"] for e in reply["created"]}
    new = keys["0003-use-postgres.md"]
    _, rows = export_rows(store.path)
    refs = {r["key"]: r["refs"] for r in rows}
    assert refs[keys["0001-use-mysql.md"]] == [new]
    assert refs[keys["0002-use-redis.md"]] == [new]


def test_txt_notes_in_a_folder_are_imported_as_markdown_with_the_first_line_as_title(store, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploy.txt").write_text("Deploy checklist\n\nDrain node-3, then deploy.\n")
    (notes / "raw.txt").write_text("the port is 9090 and it runs on node-3.\nsecond line\n")
    reply = api.import_records(store, [str(notes)], attribution=api.attribution("cli"))
    assert reply["skipped"] == []
    titles = {api.read(store, e["key"]).record.title for e in reply["created"]}
    assert titles == {"Deploy checklist", "raw"}


def test_importing_a_subfolder_after_its_parent_makes_no_duplicates(store, tmp_path):
    docs = tmp_path / "docs"
    (docs / "ops").mkdir(parents=True)
    (docs / "intro.md").write_text("# Intro\n\nHello.\n")
    (docs / "ops" / "deploy.md").write_text("# Deploy\n\nBlue-green.\n")
    who = api.attribution("cli")
    first = api.import_records(store, [str(docs)], attribution=who)
    again = api.import_records(store, [str(docs / "ops")], attribution=who)
    assert again["created"] == [] and [e["key"] for e in again["unchanged"]] == \
        [e["key"] for e in first["created"] if e["path"].endswith("deploy.md")]
    _, rows = export_rows(store.path)
    assert len(rows) == 2


def test_importing_a_subfolder_again_after_its_parent_still_makes_no_duplicates(store, tmp_path):
    """Met in the new-user trial: the second import of the subfolder created the record again under
    the subfolder's own slug (`rotate` beside `sub-rotate`), and the first one listed the file in
    `duplicates` though no other file had its key."""
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "intro.md").write_text("# Intro\n\nHello.\n")
    (notes / "sub" / "rotate.txt").write_text("Rotate the keys\n\nEvery 90 days rotate the signing keys.\n")
    who = api.attribution("cli")
    api.import_records(store, [str(notes)], attribution=who)
    for _ in range(2):
        again = api.import_records(store, [str(notes / "sub")], attribution=who)
        assert again["created"] == [] and [e["key"] for e in again["unchanged"]] == ["sub-rotate"]
        assert again["duplicates"] == []
    parent = api.import_records(store, [str(notes)], attribution=who)
    assert parent["created"] == [] and parent["duplicates"] == []
    _, rows = export_rows(store.path)
    assert len(rows) == 2


def test_context_brief_as_json_is_brief_too(cli):
    cli("add", "--key", "port", "--title", "Port", "--tags", "infra", "--body", "9090")
    res = cli("context", "--brief", "--json")
    assert res.code == 0
    import json

    data = json.loads(res.stdout)
    assert data["brief"] is True and "digest" not in data and len(res.stdout) < len(data["text"]) + 100


def test_a_search_by_meaning_with_pending_vectors_says_so_on_stderr():
    assert "3 versions not embedded yet" in api.pending_vectors_message({"semantic": True, "pending_vectors": 3})
    assert api.pending_vectors_message({"semantic": True, "pending_vectors": 0}) is None
    assert api.pending_vectors_message({"semantic": False, "pending_vectors": 5}) is None


def test_readme_mcp_table_lists_every_mcp_tool_log_verify_stale_rules_too():
    import re
    from pathlib import Path

    import pytest

    tools = pytest.importorskip("kyb_cli.mcp.tools")
    readme = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "agents.md").read_text()
    table = readme[readme.index("| tool | CLI equivalent | annotations |"):]
    table = table[:table.index("\n\n")]
    listed = set(re.findall(r"`([a-z_]+)`", "\n".join(line.split("|")[1] for line in table.splitlines()[2:])))
    assert set(tools.TOOLS) <= listed, set(tools.TOOLS) - listed


def test_man_name_lines_are_whole_sentences_not_cut_with_an_ellipsis():
    from pathlib import Path

    for page in (Path(__file__).resolve().parents[1] / "man").glob("*.1"):
        lines = page.read_text().splitlines()
        name = lines[lines.index(".SH NAME") + 1]
        assert not name.endswith(("...", "…")), page.name


def test_kyb_mcp_help_names_every_tool_the_server_serves(cli):
    import pytest

    tools = pytest.importorskip("kyb_cli.mcp.tools")
    res = cli("mcp", "--help")
    assert res.code == 0
    missing = [name for name in tools.TOOLS if name not in res.stdout.replace("\n", " ")]
    assert missing == [], missing


def test_kyb_init_makes_the_one_commit_readme_and_its_help_describe(cli, tmp_path):
    """Issue 25 item 14: `kyb init` was described as making an empty repository, but it commits."""
    from pathlib import Path

    import pygit2

    res = cli("init", str(tmp_path / "fresh"))
    assert res.code == 0 and res.json["created"] is True
    repo = pygit2.Repository(str(tmp_path / "fresh"))
    commits = list(repo.walk(repo.head.target))
    assert [c.message.strip() for c in commits] == ["kyb: init store"] and len(commits[0].tree) == 0
    assert repo.head.shorthand == "main"
    readme = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "records.md").read_text()
    assert "on branch `main` with one commit, `kyb: init store` (no records yet)" in readme
    assert "empty repository" not in cli("init", "--help").stdout
