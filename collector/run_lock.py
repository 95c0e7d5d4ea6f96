"""One writer per output directory: an exclusive ``flock`` on ``<out>/.collect.lock`` held for a whole run.

The lock is advisory and released by the kernel when the process ends, however it ends (SIGKILL included), so a
crashed run never leaves a stale lock behind.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from collector.exceptions import CollectLockedError

__all__ = ["LOCK_FILE", "run_lock"]

LOCK_FILE = ".collect.lock"


@contextmanager
def run_lock(out: Path, command: str) -> Iterator[None]:
    """Hold the lock of ``out`` (created) while the block runs.

    Raises:
        CollectLockedError: another process holds it (one line naming its pid and ``out``); never waits.
    """
    out.mkdir(parents=True, exist_ok=True)
    fd = os.open(out / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            raise CollectLockedError(f"another {command} (pid {holder}) is writing to {out}; "
                                     f"wait for it to finish or use another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
