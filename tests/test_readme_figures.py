"""README's test figures come from a command (bench/readme_figures.py), not from memory (issue 25 item 14).

The count drifts as the suite grows; the drift test fails when README's count is more than the stated
tolerance off what pytest collects. The time cannot be checked cheaply, so README must say which
command and machine measured it (or carry the marked placeholder the lead fills with `--write TIME`).
"""

from __future__ import annotations

import pytest

from bench import readme_figures


def test_readme_states_its_test_figures_in_the_sentence_the_command_writes():
    figures = readme_figures.stated(readme_figures.README.read_text())
    assert figures is not None, "README lost its <!-- readme-figures --> sentence"
    assert figures["time"] == readme_figures.PLACEHOLDER or "bench/readme_figures.py" in figures["how"]


def test_readme_states_the_count_tolerance_the_drift_test_uses():
    assert f"{readme_figures.TOLERANCE:.0%} off" in readme_figures.README.read_text()


def test_the_count_tolerance_accepts_small_drift_and_rejects_large():
    assert readme_figures.within_tolerance(1_000, 1_050)
    assert not readme_figures.within_tolerance(740, 1_620)


@pytest.mark.slow
def test_readme_test_count_is_within_tolerance_of_the_collected_count():
    stated = int(readme_figures.stated(readme_figures.README.read_text())["count"].replace(",", ""))
    actual = readme_figures.collected()
    assert readme_figures.within_tolerance(stated, actual), (
        f"README says about {stated:,} tests, pytest collects {actual:,}: run python bench/readme_figures.py")
