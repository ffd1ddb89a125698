"""Completions and man pages: generated from the Click tree, committed, and working in a shell."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kyb_cli.devtools import gen_docs

ROOT = Path(__file__).resolve().parents[1]


def test_committed_completions_and_man_pages_match_the_click_tree():
    stale = gen_docs.stale(ROOT)
    assert not stale, f"out of date: {stale}; regenerate with `{gen_docs.REGENERATE}`"


def test_generation_is_deterministic():
    assert gen_docs.generate() == gen_docs.generate()


def test_every_registered_command_has_a_man_page():
    from kyb_cli.cli.app import COMMANDS

    files = gen_docs.generate()
    for name in COMMANDS:
        assert f"man/kyb-{name}.1" in files
    assert "man/kyb-agents-install.1" in files  # nested groups are walked


def test_man_pages_carry_exit_codes_and_environment():
    from kyb_cli.core.errors import EXIT_CODES

    page = gen_docs.generate()["man/kyb-add.1"]
    assert ".SH EXIT STATUS" in page and ".SH ENVIRONMENT" in page
    for code in EXIT_CODES:
        assert f".B {code}\n" in page
    assert ".B KYB_STORE\n" in page and "\\fB\\-\\-key\\fR \\fITEXT\\fR" in page


def test_every_env_var_the_code_reads_is_documented():
    missing = sorted(gen_docs.environment_names_in_source() - set(gen_docs.ENVIRONMENT))
    assert not missing, f"describe {missing} in kyb_cli/devtools/gen_docs.py ENVIRONMENT, then regenerate"


@pytest.mark.skipif(shutil.which("man") is None, reason="needs man")
def test_man_page_renders():
    out = subprocess.run(["man", "-l", str(ROOT / "man" / "kyb-check.1")], capture_output=True, text=True,
                         env={"MANWIDTH": "100", "PATH": "/usr/bin:/bin", "MAN_KEEP_FORMATTING": ""}, timeout=60)
    assert out.returncode == 0 and "EXIT STATUS" in out.stdout and "warning" not in out.stderr


def bash_complete(*words: str) -> list[str]:
    script = (f"source {ROOT / 'completions' / 'kyb.bash'}\n"
              'COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _kyb; printf "%s\\n" "${COMPREPLY[@]}"\n')
    out = subprocess.run(["bash", "-c", script, "bash", *words], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return [w for w in out.stdout.splitlines() if w]


def test_bash_completes_commands_options_and_choices():
    assert bash_complete("kyb", "ch") == ["check"]
    assert bash_complete("kyb", "add", "--ti") == ["--title"]
    assert bash_complete("kyb", "--store", "/tmp/s", "ag") == ["agents"]
    assert bash_complete("kyb", "agents", "") == ["install", "uninstall"]
    assert bash_complete("kyb", "agents", "install", "--agent", "c") == ["claude", "codex", "cursor"]


def test_bash_skips_option_values_when_finding_the_command(tmp_path):
    (tmp_path / "notes.md").write_text("x")
    assert bash_complete("kyb", "check", str(tmp_path / "no")) == [str(tmp_path / "notes.md")]
    assert bash_complete("kyb", "add", "--key", "agents", "--j") == ["--json"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="needs zsh")
def test_zsh_script_parses_and_defines_every_command():
    out = subprocess.run(["zsh", "-f", "-c", f"autoload -U compinit; compinit -u; source {ROOT}/completions/_kyb; "
                          "whence -w _kyb_agents_install _kyb_check"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert "_kyb_agents_install: function" in out.stdout


@pytest.mark.skipif(shutil.which("fish") is None, reason="needs fish")
def test_fish_completes_subcommands_and_choices():
    script = (f"source {ROOT}/completions/kyb.fish; complete -C'kyb agents '; "
              "complete -C'kyb agents install --agent '")
    out = subprocess.run(["fish", "--no-config", "-c", script], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    words = [line.split("\t")[0] for line in out.stdout.splitlines()]
    assert words == ["install", "uninstall", "claude", "codex", "gemini"]


def test_man_pages_are_ascii_and_keep_unwrapped_help_blocks():
    """Non-ASCII (≤, …, —) is written as \\[uXXXX] so groff needs no preprocessor; a help paragraph
    Click keeps unwrapped (\\b: the query modes table) stays a table (.nf) instead of one run-on line."""
    pages = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "man").glob("*.1")}
    assert all(text.isascii() for text in pages.values())
    query = pages["kyb-query.1"]
    block = query.split(".nf\n", 1)[1].split("\n.fi", 1)[0]
    assert block.splitlines()[0].startswith("Modes (one at a time)")
    assert any(line.lstrip().startswith("(default)") for line in block.splitlines())


@pytest.mark.skipif(shutil.which("groff") is None, reason="needs groff")
def test_every_man_page_formats_without_groff_warnings():
    for page in sorted((ROOT / "man").glob("*.1")):
        out = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(page)], capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0 and out.stderr == "", (page.name, out.stderr)
