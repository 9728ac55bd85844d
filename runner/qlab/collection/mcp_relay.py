"""Bounds what a live MCP server may send: ``python mcp_relay.py MESSAGE_BYTES TOTAL_BYTES -- COMMAND ARGS``.

qlab starts a live MCP server through this relay (``qlab.collection.mcp``). The server shares the relay's stdin,
stderr and process group; its stdout passes through the relay, which counts it: a message (a line) longer than
MESSAGE_BYTES, or more than TOTAL_BYTES in all, stops the server and the relay with exit code 3 and a line on
stderr, ``MARK too large: message`` (or ``total``), so the client never buffers more than the caps whatever the
server writes.

Standard library only, run as a script (not imported through the qlab package): it starts before every live
MCP server.
"""

from __future__ import annotations

import os
import subprocess
import sys

MARK = "qlab-mcp-relay:"
EXIT_TOO_LARGE = 3
EXIT_NOT_STARTED = 127
_CHUNK = 64 * 1024


def relay(message_cap: int, total_cap: int, command: list[str]) -> int:
    try:
        server = subprocess.Popen(command, stdout=subprocess.PIPE)
    except OSError as exc:
        sys.stderr.write(f"{MARK} not started: {exc.strerror or exc}\n")
        return EXIT_NOT_STARTED
    assert server.stdout is not None
    source, out = server.stdout.fileno(), sys.stdout.buffer
    total = line = 0
    while chunk := os.read(source, _CHUNK):
        total += len(chunk)
        segments = chunk.split(b"\n")  # the last one is the start of a line still open
        if len(segments) == 1:
            line = longest = line + len(chunk)
        else:
            longest = max(line + len(segments[0]), *(len(s) for s in segments[1:]))
            line = len(segments[-1])
        if longest > message_cap or total > total_cap:
            server.kill()
            sys.stderr.write(f"{MARK} too large: {'message' if longest > message_cap else 'total'}\n")
            sys.stderr.flush()
            return EXIT_TOO_LARGE
        out.write(chunk)
        out.flush()
    return server.wait()


def main(argv: list[str]) -> int:
    message_cap, total_cap, separator, *command = argv
    assert separator == "--" and command, "usage: mcp_relay.py MESSAGE_BYTES TOTAL_BYTES -- COMMAND ARGS"
    return relay(int(message_cap), int(total_cap), command)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(1)
