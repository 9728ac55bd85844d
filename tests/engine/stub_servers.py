"""Real HTTP servers on 127.0.0.1 in a thread, for the LLM client and the http engine tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handler = Callable[[str, dict[str, str], Any], tuple[int, Any]]  # (path, headers, body) -> (status, reply)


@contextmanager
def serve(handle: Handler) -> Iterator[tuple[str, list[tuple[str, dict[str, str], Any]]]]:
    """Serve ``handle`` on a free loopback port; yields the base URL and the list of requests received.

    A reply that is ``bytes`` is sent as is (for invalid-JSON tests); anything else is sent as JSON.
    """
    seen: list[tuple[str, dict[str, str], Any]] = []

    class _Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw
            headers = {k.lower(): v for k, v in self.headers.items()}
            seen.append((self.path, headers, body))
            status, reply = handle(self.path, headers, body)
            data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
