"""A hostile MCP server over stdio: ``python mcp_server.py MODE``. It reads the client's ``initialize`` and then
attacks instead of answering:

- ``huge-message``: one answer that never ends (a line without its newline), as fast as the pipe takes it;
- ``endless-pages``: a valid ``tools/list`` whose every page names a next one, each page a MiB of tools.

Standard library only: the test starts it the way qlab.yaml's ``mcp: {command, args}`` does.
"""

from __future__ import annotations

import contextlib
import json
import sys


def _answer(message_id: object, result: object) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n").encode()


def main(mode: str) -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        request = json.loads(line)
        method, message_id = request.get("method"), request.get("id")
        if method == "initialize":
            if mode == "huge-message":
                out.write(b'{"jsonrpc": "2.0", "id": %d, "result": {"padding": "' % int(message_id))
                block = b"x" * (1 << 20)
                while True:
                    out.write(block)
            info = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hostile", "version": "1"}}  # fmt: skip
            out.write(_answer(message_id, info))
        elif method == "tools/list":
            tools = [
                {"name": f"tool_{i}", "description": "d" * 1000, "inputSchema": {"type": "object"}}
                for i in range(1000)
            ]
            out.write(_answer(message_id, {"tools": tools, "nextCursor": "more"}))
        out.flush()


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        main(sys.argv[1])
