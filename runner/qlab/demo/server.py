"""The demo Member Delivery API: ``runner/qlab/demo/openapi.yaml``, served with the standard library only.

    python -m qlab.demo.server --port 8765 [--host 127.0.0.1] [--token-env QLAB_DEMO_TOKEN] [--verbose]

Every operation of the spec answers with its documented statuses and shapes; the data is ``qlab.demo.data``
in memory (thread-safe, reset on restart). The bearer-protected operations accept ``Authorization: Bearer
<token>``, the token being the value of the ``--token-env`` variable (``demo-token`` when it is unset), and
answer 401 otherwise. createOrder answers 201; cancelOrder deletes the order (204): the cleanup path.

A bad request the spec gives no status for (a body that is not JSON, a missing field, an unknown delivery)
gets 400 or 404 with the spec's ``Error`` shape. Unknown query values filter to nothing; an out-of-range
``limit`` is clamped to 1..100. Requests are logged to stderr only with ``--verbose``.
"""

from __future__ import annotations

import argparse
import hmac
import json
import os
import re
import sys
import threading
from collections.abc import Callable
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from qlab.demo import data

Reply = tuple[int, Any]
_DELIVERY_FIELDS = ("deliveryId", "memberNo", "orderId", "status", "carrierCode", "eta")
_ORDER_STATUSES = ("open", "paid", "shipped", "cancelled")


class HttpProblem(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Store:
    """The in-memory API state; every handler runs under its lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        seeded = data.seed()
        self.account: dict[str, Any] = seeded["account"]
        self.members: dict[str, dict[str, Any]] = {m["memberNo"]: m for m in seeded["members"]}
        self.carriers: list[dict[str, Any]] = seeded["carriers"]
        self.orders: dict[str, dict[str, Any]] = {o["orderId"]: o for o in seeded["orders"]}
        self.deliveries: dict[str, dict[str, Any]] = {d["deliveryId"]: d for d in seeded["deliveries"]}
        self.next_order = 1 + max(int(k.split("-")[1]) for k in self.orders)
        self.explained: set[str] = set()  # deliveries whose explanation is ready (see ``explanation``)

    # ------------------------------------------------------------------------------------------ reads

    def health(self, q: dict[str, str]) -> Reply:
        return 200, {"status": "ok"}

    def list_members(self, q: dict[str, str]) -> Reply:
        rows = list(self.members.values())
        if q.get("name"):
            rows = [m for m in rows if q["name"].lower() in m["name"].lower()]
        if q.get("tier"):
            rows = [m for m in rows if m["tier"] == q["tier"]]
        return 200, {"data": rows[: _limit(q.get("limit"))]}

    def get_member(self, q: dict[str, str], member_no: str) -> Reply:
        return 200, {"data": self._member(member_no)}

    def member_deliveries(self, q: dict[str, str], member_no: str) -> Reply:
        self._member(member_no)
        rows = [d for d in self.deliveries.values() if d["memberNo"] == member_no]
        if q.get("status"):
            rows = [d for d in rows if d["status"] == q["status"]]
        rows.sort(key=lambda d: d["eta"], reverse=True)  # newest first
        return 200, {"data": [_summary(d) for d in rows]}

    def delivery_detail(self, q: dict[str, str], member_no: str, delivery_id: str) -> Reply:
        self._member(member_no)
        delivery = self._delivery(delivery_id)
        if delivery["memberNo"] != member_no:
            raise HttpProblem(404, f"member {member_no} has no delivery {delivery_id}")
        return 200, {"data": delivery}

    def tracking(self, q: dict[str, str], delivery_id: str) -> Reply:
        return 200, {"data": self._delivery(delivery_id)["events"]}

    def explanation(self, q: dict[str, str], delivery_id: str) -> Reply:
        """Claims about the delivery, each citing the carrier records it rests on. The first request for a
        delivery answers 503 (Retry-After: 0) while the explanation is prepared: the demo's retry path."""
        delivery = self._delivery(delivery_id)
        if delivery_id not in self.explained:
            self.explained.add(delivery_id)
            raise HttpProblem(503, "the explanation is being prepared; retry")
        carrier = next((c for c in self.carriers if c["carrierCode"] == delivery.get("carrierCode")), None)
        claims: list[dict[str, Any]] = []
        evidence: list[dict[str, Any]] = []
        for n, event in enumerate(delivery["events"], start=1):
            where = event.get("location", "an unknown place")
            said = event["status"].replace("_", " ")
            evidence.append({"id": f"ev-{n}", "source": "carrier-tracking",
                             "excerpt": f"{delivery_id} {said} at {where} on {event['at'][:10]}"})  # fmt: skip
            claims.append({"text": f"Delivery {delivery_id} was {said} at {where}", "evidence": [f"ev-{n}"]})
        if carrier is not None:
            evidence.append({"id": "ev-carrier", "source": "carrier-registry",
                             "excerpt": f"{carrier['name']} ({carrier['carrierCode']}) carries delivery {delivery_id}"})  # fmt: skip
            claims.append(
                {"text": f"{carrier['name']} carries delivery {delivery_id}", "evidence": ["ev-carrier"]}
            )
        status = delivery["status"].replace("_", " ")
        answer = f"Delivery {delivery_id} is {status}" + (
            f", expected on {delivery['eta']}" if delivery.get("eta") else ""
        )
        return 200, {
            "data": {"deliveryId": delivery_id, "answer": answer, "claims": claims, "evidence": evidence}
        }

    def list_carriers(self, q: dict[str, str]) -> Reply:
        return 200, {"data": self.carriers}

    def list_orders(self, q: dict[str, str]) -> Reply:
        rows = list(self.orders.values())
        if q.get("memberNo"):
            rows = [o for o in rows if o["memberNo"] == q["memberNo"]]
        return 200, {"data": rows}

    def get_order(self, q: dict[str, str], order_id: str) -> Reply:
        return 200, {"data": self._order(order_id)}

    def my_profile(self, q: dict[str, str]) -> Reply:
        return 200, {"data": self.account}

    # ------------------------------------------------------------------------------------------ writes

    def create_order(self, q: dict[str, str], body: Any) -> Reply:
        body = _object(body)
        member_no, items = body.get("memberNo"), body.get("items")
        if not isinstance(member_no, str) or member_no not in self.members:
            raise HttpProblem(400, "memberNo must name an existing member")
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise HttpProblem(400, "items must be an array of SKU strings")
        order: dict[str, Any] = {
            "orderId": f"O-{self.next_order}",
            "memberNo": member_no,
            "status": "open",
            "items": items,
        }
        if isinstance(body.get("address"), str):
            order["address"] = body["address"]
        self.next_order += 1
        self.orders[order["orderId"]] = order
        return 201, {"data": order}

    def update_order(self, q: dict[str, str], body: Any, order_id: str) -> Reply:
        order = self._order(order_id)
        body = _object(body)
        if "status" in body and body["status"] not in _ORDER_STATUSES:
            raise HttpProblem(400, f"status must be one of {', '.join(_ORDER_STATUSES)}")
        if "address" in body and not isinstance(body["address"], str):
            raise HttpProblem(400, "address must be a string")
        order.update({k: body[k] for k in ("address", "status") if k in body})
        return 200, {"data": order}

    def cancel_order(self, q: dict[str, str], order_id: str) -> Reply:
        self._order(order_id)
        del self.orders[order_id]
        return 204, None

    def reschedule(self, q: dict[str, str], body: Any, delivery_id: str) -> Reply:
        delivery = self._delivery(delivery_id)
        body = _object(body)
        try:
            new_date = date.fromisoformat(str(body.get("date")))
        except ValueError:
            raise HttpProblem(400, "date must be a date such as 2026-04-01") from None
        delivery["eta"] = new_date.isoformat()
        return 200, {"data": _summary(delivery)}

    # ------------------------------------------------------------------------------------------ lookups

    def _member(self, member_no: str) -> dict[str, Any]:
        if member_no not in self.members:
            raise HttpProblem(404, f"member {member_no} not found")
        return self.members[member_no]

    def _delivery(self, delivery_id: str) -> dict[str, Any]:
        if delivery_id not in self.deliveries:
            raise HttpProblem(404, f"delivery {delivery_id} not found")
        return self.deliveries[delivery_id]

    def _order(self, order_id: str) -> dict[str, Any]:
        if order_id not in self.orders:
            raise HttpProblem(404, f"order {order_id} not found")
        return self.orders[order_id]


def _summary(delivery: dict[str, Any]) -> dict[str, Any]:
    return {k: delivery[k] for k in _DELIVERY_FIELDS if k in delivery}


def _object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise HttpProblem(400, "the request body must be a JSON object")
    return body


def _limit(raw: str | None) -> int:
    try:
        return min(100, max(1, int(raw))) if raw else 20
    except ValueError:
        return 20


# (method, path pattern, Store method name, bearer required, takes a body)
ROUTES: tuple[tuple[str, re.Pattern[str], str, bool, bool], ...] = tuple(
    (method, re.compile(f"^{pattern}$"), name, secured, body)
    for method, pattern, name, secured, body in (
        ("GET", r"/health", "health", False, False),
        ("GET", r"/members", "list_members", False, False),
        ("GET", r"/members/([^/]+)", "get_member", False, False),
        ("GET", r"/members/([^/]+)/deliveries", "member_deliveries", False, False),
        ("GET", r"/members/([^/]+)/deliveries/([^/]+)", "delivery_detail", False, False),
        ("GET", r"/deliveries/([^/]+)/tracking", "tracking", False, False),
        ("GET", r"/deliveries/([^/]+)/explanation", "explanation", False, False),
        ("POST", r"/deliveries/([^/]+)/reschedule", "reschedule", True, True),
        ("GET", r"/carriers", "list_carriers", False, False),
        ("GET", r"/orders", "list_orders", False, False),
        ("POST", r"/orders", "create_order", True, True),
        ("GET", r"/orders/([^/]+)", "get_order", False, False),
        ("PATCH", r"/orders/([^/]+)", "update_order", True, True),
        ("DELETE", r"/orders/([^/]+)", "cancel_order", True, False),
        ("GET", r"/me/profile", "my_profile", True, False),
    )
)


class DemoHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real API would
    # Headers and body are two writes: with Nagle on, the client's delayed ACK stalls every keep-alive
    # response. TCP_NODELAY sends each write at once.
    disable_nagle_algorithm = True
    server: DemoServer

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def do_PUT(self) -> None:
        self._handle("PUT")  # no route takes PUT: a JSON 405 rather than http.server's HTML 501

    def _handle(self, method: str) -> None:
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            status, payload = self._dispatch(method, parts.path.rstrip("/") or "/", query, raw)
        except HttpProblem as exc:
            status, payload = exc.status, {"error": str(exc)}
        self._send(status, payload)

    def _dispatch(self, method: str, path: str, query: dict[str, str], raw: bytes) -> Reply:
        allowed: list[str] = []
        for route_method, pattern, name, secured, takes_body in ROUTES:
            match = pattern.match(path)
            if match is None:
                continue
            if route_method != method:
                allowed.append(route_method)
                continue
            if secured and not self._authorized():
                raise HttpProblem(401, "missing or invalid bearer token")
            args: list[Any] = [query]
            if takes_body:
                args.append(_parse(raw))
            args.extend(unquote(g) for g in match.groups())
            handler: Callable[..., Reply] = getattr(self.server.store, name)
            with self.server.store.lock:
                return handler(*args)
        if allowed:
            raise HttpProblem(405, f"{method} is not allowed here; use {', '.join(sorted(set(allowed)))}")
        raise HttpProblem(404, f"no such path: {path}")

    def _authorized(self) -> bool:
        expected = f"Bearer {self.server.token}".encode()
        given = self.headers.get("Authorization", "").encode()
        return hmac.compare_digest(given, expected)

    def _send(self, status: int, payload: Any) -> None:
        body = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        if payload is not None:
            self.send_header("Content-Type", "application/json")
        if status == 401:
            self.send_header("WWW-Authenticate", 'Bearer realm="qlab-demo"')
        if status == 503:
            self.send_header("Retry-After", "0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        raise HttpProblem(400, "the request body is not valid JSON") from None


class DemoServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], *, token: str, verbose: bool = False) -> None:
        super().__init__(address, DemoHandler)
        self.store = Store()
        self.token = token
        self.verbose = verbose


def make_server(
    host: str = "127.0.0.1", port: int = 8765, *, token: str = data.DEFAULT_TOKEN, verbose: bool = False
) -> DemoServer:
    """A bound, not yet serving demo server (``port=0`` picks a free port: read ``server_address``)."""
    return DemoServer((host, port), token=token, verbose=verbose)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m qlab.demo.server", description="qlab's demo Member Delivery API"
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--token-env",
        default="QLAB_DEMO_TOKEN",
        help="env var holding the bearer token (default token: demo-token)",
    )
    parser.add_argument("--verbose", action="store_true", help="log requests to stderr")
    args = parser.parse_args(argv)
    token = os.environ.get(args.token_env, "").strip() or data.DEFAULT_TOKEN
    try:
        server = make_server(args.host, args.port, token=token, verbose=args.verbose)
    except OSError as exc:
        sys.stderr.write(f"cannot listen on {args.host}:{args.port}: {exc}\n")
        return 2
    if args.verbose:
        sys.stderr.write(f"qlab demo API on http://{args.host}:{server.server_address[1]}\n")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
