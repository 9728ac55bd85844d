from __future__ import annotations

from collections.abc import Iterator

import pytest

from hostile.server import HostileServer


@pytest.fixture(scope="module")
def hostile() -> Iterator[HostileServer]:
    """The hostile server, one per test module."""
    with HostileServer() as server:
        yield server
