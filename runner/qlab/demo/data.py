"""The demo API's seed data: exactly the "Demo data contract" of ``gates/README.md`` (members M-1001..M-1003,
deliveries D-5001..D-5003, orders O-9001..O-9004, carriers CJ/HJ/LT, account A-1).

The gate cases under ``gates/`` are written against these values; change the contract, this file and the cases
together. ``seed()`` returns fresh
copies, so each server (and each test) starts from the same state.
"""

from __future__ import annotations

import copy
from typing import Any

DEFAULT_TOKEN = "demo-token"  # the bearer token the demo server accepts when its token env var is unset

ACCOUNT: dict[str, Any] = {
    "accountId": "A-1",
    "memberNo": "M-1001",
    "scopes": ["members:read", "orders:write"],
}

MEMBERS: list[dict[str, Any]] = [
    {"memberNo": "M-1001", "name": "Mina Park", "tier": "premium", "email": "mina.park@example.com"},
    {"memberNo": "M-1002", "name": "Jun Lee", "tier": "plus", "email": "jun.lee@example.com"},
    {"memberNo": "M-1003", "name": "Ara Kim", "tier": "basic", "email": "ara.kim@example.com"},
]

CARRIERS: list[dict[str, Any]] = [
    {"carrierCode": "CJ", "name": "CJ Logistics"},
    {"carrierCode": "HJ", "name": "Hanjin"},
    {"carrierCode": "LT", "name": "Lotte Global"},
]

ORDERS: list[dict[str, Any]] = [
    {
        "orderId": "O-9001",
        "memberNo": "M-1001",
        "status": "shipped",
        "items": ["SKU-100"],
        "address": "1 Garden Road",
    },
    {
        "orderId": "O-9002",
        "memberNo": "M-1001",
        "status": "paid",
        "items": ["SKU-200"],
        "address": "1 Garden Road",
    },
    {
        "orderId": "O-9003",
        "memberNo": "M-1002",
        "status": "shipped",
        "items": ["SKU-100", "SKU-300"],
        "address": "5 Lake View",
    },
    {
        "orderId": "O-9004",
        "memberNo": "M-1003",
        "status": "open",
        "items": ["SKU-300"],
        "address": "7 Hill Street",
    },
]

# Deliveries carry their detail (address, events oldest first); the list endpoints drop those two fields.
DELIVERIES: list[dict[str, Any]] = [
    {
        "deliveryId": "D-5001",
        "memberNo": "M-1001",
        "orderId": "O-9001",
        "status": "in_transit",
        "carrierCode": "CJ",
        "eta": "2025-07-03",
        "address": "1 Garden Road",
        "events": [
            {"at": "2025-07-01T08:00:00Z", "status": "picked_up", "location": "Icheon hub"},
            {"at": "2025-07-02T17:30:00Z", "status": "in_transit", "location": "Daejeon sorting centre"},
        ],
    },
    {
        "deliveryId": "D-5002",
        "memberNo": "M-1001",
        "orderId": "O-9002",
        "status": "scheduled",
        "carrierCode": "HJ",
        "eta": "2025-07-10",
        "address": "1 Garden Road",
        "events": [{"at": "2025-07-05T09:15:00Z", "status": "label_created", "location": "Seoul warehouse"}],
    },
    {
        "deliveryId": "D-5003",
        "memberNo": "M-1002",
        "orderId": "O-9003",
        "status": "delivered",
        "carrierCode": "CJ",
        "eta": "2025-06-28",
        "address": "5 Lake View",
        "events": [
            {"at": "2025-06-26T10:00:00Z", "status": "picked_up", "location": "Busan depot"},
            {"at": "2025-06-28T12:41:00Z", "status": "delivered", "location": "5 Lake View"},
        ],
    },
]


def seed() -> dict[str, Any]:
    """Fresh, independent copies of every collection (the server mutates its own)."""
    return copy.deepcopy(
        {
            "account": ACCOUNT,
            "members": MEMBERS,
            "carriers": CARRIERS,
            "orders": ORDERS,
            "deliveries": DELIVERIES,
        }
    )
