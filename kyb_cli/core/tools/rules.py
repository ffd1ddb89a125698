"""Rules for agents: live knowledge tagged `rule` is the store's standing instructions (rule "rules for agents").

`kyb rules` lists them; `kyb context` puts them first, each whole or not at all, within its budget
(tools/context.py), labelled as rules so they are not mistaken for reference notes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RULE_TAG = "rule"


def rules(store_path: Path) -> dict[str, Any]:
    """`{"count", "rules": [{"key", "title", "body", "tags", "sha", "committed_at"}]}`, by key."""
    from kyb_cli.core.index.fresh import with_index
    from kyb_cli.core.timestamps import rfc3339

    def run(f):
        return f.conn.execute(
            "SELECT k.key, v.sha, v.committed_at, v.doc FROM keys k JOIN versions v ON v.id = k.version_id "
            "WHERE k.kind = 'knowledge' AND k.state = 'active' "
            "AND EXISTS (SELECT 1 FROM json_each(v.tags_lc) WHERE value = ?) ORDER BY k.key",
            (RULE_TAG,)).fetchall()

    out = []
    for key, sha, when, doc in with_index(Path(store_path), run):
        d = json.loads(doc)
        out.append({"key": key, "title": d.get("title", ""), "body": d.get("body", ""),
                    "tags": d.get("tags", []), "sha": sha, "committed_at": rfc3339(when)})
    return {"count": len(out), "rules": out}
