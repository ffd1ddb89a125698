"""Run the kyb command line with a fault at one named step of a write: the test-only fault hook.

    python -m tests.support.faults POINT ACTION [kyb args...]

kyb itself reads no environment variable for faults: its writes call `kyb_cli.core.canon.faults.step(name)`,
a no-op; this runner replaces that function before running `kyb` in the same process, so a fault
can only happen where a test started this runner (never in a normal run).

POINT is a step name (see STEPS); ACTION is `kill` (SIGKILL: a power cut for the process),
`enospc` (the step raises OSError 28, as a full disk does) or `readonly-knowledge` (the step makes
$KYB_STORE/knowledge read-only and goes on: EACCES midway, in a process the file modes bind).
"""

from __future__ import annotations

import errno
import os
import signal
import sys

# The steps of one user action's write, in order (canon/transaction.py):
#   before-commit  the new tree and blobs are written, the commit object is not
#   before-ref     the commit objects and the journal are written, the branch has not moved
#   after-ref      the branch moved (the write happened), the working tree is not updated yet
#   after-worktree the working tree and Git index are updated, the journal is not removed yet
STEPS = ("before-commit", "before-ref", "after-ref", "after-worktree")
SYNC_STEPS = ("after-push",)  # sync's (sync/remote.py): the push landed, the tracking ref is not set
FILLER_STEPS = ("filler-before-swap",)  # the background filler's (index/history.py): ARGS is the store
ACTIONS = ("kill", "enospc", "readonly-knowledge")


def install(point: str, action: str) -> None:
    from kyb_cli.core.canon import faults

    def step(name: str) -> None:
        if name != point:
            return
        if action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if action == "readonly-knowledge":
            os.chmod(os.path.join(os.environ["KYB_STORE"], "knowledge"), 0o555)
            return
        raise OSError(errno.ENOSPC, "No space left on device")

    faults.step = step


def main(argv: list[str]) -> None:
    point, action, *args = argv
    if point not in STEPS + SYNC_STEPS + FILLER_STEPS or action not in ACTIONS:
        raise SystemExit(f"usage: python -m tests.support.faults {'|'.join(STEPS + SYNC_STEPS + FILLER_STEPS)} "
                         f"{'|'.join(ACTIONS)} ARGS")
    install(point, action)
    if point in FILLER_STEPS:
        from kyb_cli.core.index.filler import main as filler_main

        sys.exit(filler_main(args))
    from kyb_cli.cli.app import main as kyb_main

    sys.argv = ["kyb", *args]
    kyb_main()


if __name__ == "__main__":
    main(sys.argv[1:])
