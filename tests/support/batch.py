"""Many porcelain writes, one branch move: a test that needs a busy store (dozens of records, each
its own commit) but is not about one-write-one-commit-one-publish can build it at a fraction of
the cost of one locked write, one ref update, one working tree update and one index catch-up each.

    with one_publish(store, WHO):
        for n in range(60):
            add_knowledge(store, key=..., ...)   # unchanged calls: each is still its own commit

Inside the block every `store.writing(...)` joins the one open transaction (canon/transaction.py:
"the commits made inside move the branch once"), so each write is the same record and the same
commit it would be alone; the branch, the working tree and the index move once, at the end.
Not for writes that check earlier writes of the block through the index (it still shows the HEAD
the block started from): a task `blocked_by` a task written in the block is refused (NotFound).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator


@contextlib.contextmanager
def one_publish(store: Any, attribution: Any) -> Iterator[Any]:
    with store.writing(attribution) as tx:
        store.writing = lambda _attribution: contextlib.nullcontext(tx)  # instance attribute: this Store only
        try:
            yield tx
        finally:
            del store.writing
