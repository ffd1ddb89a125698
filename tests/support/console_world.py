"""A small store that looks like a team's memory, for the console's browser tests and screenshots.

Knowledge with several versions (so history, past hits and diffs exist), tasks with dates around
today (overdue hard, overdue, due soon, later, provisional), incidents of each severity and status.
Written through the CLI's commands (in-process), one commit per write, as agents would.
"""

from __future__ import annotations

import json
import os
import time
from datetime import date, timedelta
from pathlib import Path


def kyb(store: Path, env: dict[str, str], *args: str, body: str = "", agent: str = "claude-code") -> dict:
    """One CLI call, in this process (Click's runner: the same command code, without a Python start-up)."""
    from click.testing import CliRunner

    from kyb_cli.cli.app import cli

    full = {k: v for k, v in env.items() if k.startswith(("XDG_", "GIT_", "HOME"))}
    full.update(KYB_STORE=str(store), KYB_AGENT=agent, KYB_DEADLINES="off")
    result = CliRunner().invoke(cli, list(args), input=body, env=full, catch_exceptions=False)
    if result.exit_code != 0:
        raise RuntimeError(f"kyb {' '.join(args)}: {result.stderr}")
    return json.loads(result.stdout) if result.stdout.strip() else {}


def build(store: Path, env: dict[str, str] | None = None, today: date | None = None) -> dict[str, str]:
    """Create the store; returns a few keys the tests use."""
    env = dict(env or os.environ)
    day = today or date.today()
    rel = lambda n: (day + timedelta(days=n)).isoformat()  # noqa: E731
    kyb(store, env, "init", str(store))
    kyb(store, env, "add", "--key", "checkout-write-path", "--title", "Checkout write path", "--tags", "infra,checkout",
        body="Checkout writes go through svc-checkout on node-3, port 8080.\n\nOwner: payments team.", agent="codex")
    time.sleep(1.1)  # the first version alone owns the first second: the time slider's left end shows it
    kyb(store, env, "add", "--key", "orders-api-architecture", "--title", "orders-api architecture",
        "--tags", "orders,architecture", body="orders-api is a Go service behind envoy; state in Postgres (orders_db).")
    kyb(store, env, "add", "--key", "checkout-write-path", "--title", "Checkout write path", "--tags", "infra,checkout",
        body="Checkout writes go through svc-checkout on node-3, port 9090.\n\nOwner: payments team.")
    kyb(store, env, "add", "--key", "deploy-freeze-policy", "--title", "Deploy freeze policy", "--tags", "release",
        body="No deploys Friday after 15:00 UTC; exceptions need the release manager.", agent="gemini")
    kyb(store, env, "add", "--key", "checkout-write-path", "--title", "Checkout write path (v2)",
        "--tags", "infra,checkout,payments",
        body="Checkout writes go through svc-checkout on node-4, port 9090, via the new gateway.\n\n"
             "Owner: payments team.", agent="cursor")
    kyb(store, env, "add", "--key", "staging-db-password-location", "--title", "Where the staging DB password lives",
        "--tags", "secrets", "--refs", "vault://kv/staging/db", body="In Vault at kv/staging/db, never in the repo.")
    kyb(store, env, "task", "--key", "task-renew-wildcard-cert", "--title", "Renew *.example.org certificate",
        "--priority", "high", "--assignee", "release-duty", "--due", rel(-2), "--hard",
        body="The wildcard certificate expires; renew it with the CA and roll it to the edge.")
    kyb(store, env, "task", "--key", "task-rotate-deploy-keys", "--title", "Rotate deploy keys", "--priority", "medium",
        "--assignee", "ops", "--due", rel(-5), body="Quarterly rotation of the deploy keys.")
    kyb(store, env, "task", "--key", "task-migrate-orders-db", "--title", "Migrate orders_db to Postgres 17",
        "--priority", "critical", "--assignee", "agent-b", "--due", rel(2), "--hard", "--remind-days", "5",
        body="- [ ] dump and restore on staging\n- [ ] cut over\n")
    kyb(store, env, "task", "--key", "task-write-runbook", "--title", "Write the checkout runbook", "--priority", "low",
        "--due", rel(20), body="From the incident notes.")
    kyb(store, env, "task", "--key", "task-upgrade-envoy", "--title", "Upgrade envoy", "--expected", rel(1),
        "--waits-on", "vendor release 1.31", body="Waits for the vendor's release.")
    kyb(store, env, "task-status", "task-migrate-orders-db", "--status", "in_progress")
    kyb(store, env, "task", "--key", "task-clean-old-buckets", "--title", "Clean up old S3 buckets", "--priority", "low",
        body="Buckets from 2023 experiments.")
    kyb(store, env, "incident", "--key", f"inc-{rel(-3)}-orders-oom", "--title", "orders-api OOM-killed",
        "--service", "orders_api", "--severity", "high", "--hosts", "node-3",
        "--detection", "curl -s node-3:9090/healthz -> 200", body="## Symptom\nOOM kills every 20 min.\n\n## Follow-ups\n- [ ] heap alert\n")
    kyb(store, env, "incident", "--key", f"inc-{rel(-1)}-checkout-5xx", "--title", "checkout 5xx spike",
        "--service", "checkout", "--severity", "critical", body="## Symptom\n5xx at 12% for 10 minutes.")
    kyb(store, env, "incident", "--key", f"inc-{rel(-9)}-cdn-stale", "--title", "CDN served stale assets",
        "--service", "cdn", "--severity", "low", body="## Symptom\nOld JS for 30 min.")
    kyb(store, env, "resolve", f"inc-{rel(-9)}-cdn-stale", "--resolution", "purged; cache keys now versioned")
    kyb(store, env, "incident", "--key", f"inc-{rel(-6)}-search-slow", "--title", "search latency p95 over 2 s",
        "--service", "search", "--severity", "medium", body="## Symptom\nSlow queries.")
    kyb(store, env, "resolve", f"inc-{rel(-6)}-search-slow", "--status", "mitigated", "--resolution", "")
    kyb(store, env, "done", "task-clean-old-buckets", "--resolution", "12 buckets removed")
    return {"knowledge": "checkout-write-path", "task": "task-write-runbook", "overdue_hard": "task-renew-wildcard-cert",
            "overdue": "task-rotate-deploy-keys", "incident": f"inc-{rel(-1)}-checkout-5xx"}
