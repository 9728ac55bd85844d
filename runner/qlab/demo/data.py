"""The demo API's seed data (members M-1001..M-1003, deliveries D-5001..D-5005, orders O-9001..O-9004).

Gate cases under ``gates/`` are written against these values; change them together. ``seed()`` returns fresh
copies, so each server (and each test) starts from the same state.
"""

from __future__ import annotations

import copy
from typing import Any

DEFAULT_TOKEN = "demo-token"  # the bearer token the demo server accepts when its token env var is unset

ACCOUNT: dict[str, Any] = {
    "accountId": "A-7001",
    "memberNo": "M-1001",
    "scopes": ["profile:read", "orders:write", "deliveries:write"],
}

MEMBERS: list[dict[str, Any]] = [
    {"memberNo": "M-1001", "name": "Hana Kim", "tier": "premium", "email": "hana.kim@example.com"},
    {"memberNo": "M-1002", "name": "Luis Ortega", "tier": "plus", "email": "luis.ortega@example.com"},
    {"memberNo": "M-1003", "name": "Amara Okafor", "tier": "basic", "email": "amara.okafor@example.com"},
]

CARRIERS: list[dict[str, Any]] = [
    {"carrierCode": "PX", "name": "ParcelExpress"},
    {"carrierCode": "SW", "name": "Swift Couriers"},
    {"carrierCode": "GP", "name": "GreenPost"},
]

ORDERS: list[dict[str, Any]] = [
    {
        "orderId": "O-9001",
        "memberNo": "M-1001",
        "status": "shipped",
        "items": ["SKU-100", "SKU-205"],
        "address": "12 Harbour Road, Busan",
    },
    {
        "orderId": "O-9002",
        "memberNo": "M-1001",
        "status": "paid",
        "items": ["SKU-310"],
        "address": "12 Harbour Road, Busan",
    },
    {
        "orderId": "O-9003",
        "memberNo": "M-1002",
        "status": "shipped",
        "items": ["SKU-100"],
        "address": "4 Calle Mayor, Madrid",
    },
    {
        "orderId": "O-9004",
        "memberNo": "M-1003",
        "status": "open",
        "items": ["SKU-777", "SKU-778"],
        "address": "9 Marina Street, Lagos",
    },
]

# Deliveries carry their detail (address, events); the list endpoints drop those two fields.
DELIVERIES: list[dict[str, Any]] = [
    {
        "deliveryId": "D-5001",
        "memberNo": "M-1001",
        "orderId": "O-9001",
        "status": "in_transit",
        "carrierCode": "PX",
        "eta": "2026-03-14",
        "address": "12 Harbour Road, Busan",
        "events": [
            {"at": "2026-03-10T08:00:00Z", "status": "picked_up", "location": "Incheon hub"},
            {"at": "2026-03-11T17:30:00Z", "status": "in_transit", "location": "Daegu sorting centre"},
        ],
    },
    {
        "deliveryId": "D-5002",
        "memberNo": "M-1001",
        "orderId": "O-9002",
        "status": "scheduled",
        "carrierCode": "SW",
        "eta": "2026-03-20",
        "address": "12 Harbour Road, Busan",
        "events": [{"at": "2026-03-12T09:15:00Z", "status": "label_created", "location": "Seoul warehouse"}],
    },
    {
        "deliveryId": "D-5003",
        "memberNo": "M-1002",
        "orderId": "O-9003",
        "status": "delivered",
        "carrierCode": "GP",
        "eta": "2026-03-02",
        "address": "4 Calle Mayor, Madrid",
        "events": [
            {"at": "2026-02-27T10:00:00Z", "status": "picked_up", "location": "Zaragoza depot"},
            {"at": "2026-03-02T12:41:00Z", "status": "delivered", "location": "Madrid"},
        ],
    },
    {
        "deliveryId": "D-5004",
        "memberNo": "M-1003",
        "orderId": "O-9004",
        "status": "failed",
        "carrierCode": "PX",
        "eta": "2026-03-09",
        "address": "9 Marina Street, Lagos",
        "events": [{"at": "2026-03-09T15:05:00Z", "status": "recipient_absent", "location": "Lagos"}],
    },
    {
        "deliveryId": "D-5005",
        "memberNo": "M-1002",
        "orderId": "O-9003",
        "status": "scheduled",
        "carrierCode": "SW",
        "eta": "2026-03-25",
        "address": "4 Calle Mayor, Madrid",
        "events": [],
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
