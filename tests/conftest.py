from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import servers

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
DATA = SHARED / "data"


@pytest.fixture(scope="session")
def httpbin_url() -> Iterator[str]:
    """A real httpbin on 127.0.0.1 for the whole session."""
    with servers.httpbin() as url:
        yield url


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not DATA.exists():
        pytest.skip(f"shared data not found at {DATA}")
    return DATA


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the CI's GitHub variables unless they set them."""
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "NO_COLOR", "QLAB_DEBUG"):
        monkeypatch.delenv(name, raising=False)
