"""Named steps of a write, for the fault tests: `step(name)` does nothing in kyb.

The test runner (tests/support/faults.py) replaces `step` in its own process to kill the writer or
make the step fail as a full disk does, at exactly one point. kyb reads no setting for it, so no
environment, config file or argument can reach a fault in a normal run.

Steps, in order (transaction.publish and the sync integration):
  before-commit   blobs and trees are written, the commit object is not
  before-ref      the commit objects and the journal are written, the branch has not moved
  after-ref       the branch moved: the write happened; the working tree is not updated yet
  after-worktree  the working tree and the Git index are updated; the journal is not removed yet
and of sync (sync/remote.py):
  after-push      the push landed on the remote; the local remote-tracking ref is not updated yet
and of the background filler (index/history.py):
  filler-before-swap  the full index is built beside the snapshot, not swapped in yet
"""

from __future__ import annotations


def step(name: str) -> None:  # noqa: ARG001 - replaced by the fault tests only
    return None
