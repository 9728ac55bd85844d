"""A dev server's keeper: it stops the server's whole process group when qlab dies, even by SIGKILL.

    python -m qlab.execute.supervise FD -- COMMAND [ARG...]

``dev_server`` starts this module as the leader of a new session, with ``FD`` the read end of a pipe whose
only write end qlab holds. The keeper starts COMMAND in its own group and waits. When qlab exits for any
reason the kernel closes the write end, the read returns EOF, and the keeper sends the group SIGTERM, then
SIGKILL after a grace period. A normal stop (qlab signals the group) and a server that exits on its own end
the keeper too, with the server's exit code.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time

GRACE_SEC = 5.0


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: python -m qlab.execute.supervise FD -- COMMAND [ARG...]\n")
        return 2
    fd, command = int(argv[0]), argv[2:]
    # A group SIGTERM (qlab stopping the server) reaches the keeper too: it waits for the server instead of dying.
    signal.signal(signal.SIGTERM, lambda _sig, _frame: None)
    try:
        child = subprocess.Popen(command)
    except OSError as exc:
        sys.stderr.write(f"qlab supervise: cannot start {command[0]}: {exc}\n")
        return 127
    while child.poll() is None:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready and not os.read(fd, 1):  # EOF: qlab is gone
            _stop_group(child)
            break
    return child.wait()


def _stop_group(child: subprocess.Popen[bytes]) -> None:
    group = os.getpgid(0)
    os.killpg(group, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_SEC
    while child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.killpg(group, signal.SIGKILL)  # whatever is left of the group, the keeper included


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
