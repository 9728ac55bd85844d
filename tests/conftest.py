from __future__ import annotations

import os
import random
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

import servers
import wheels

# A shell's background job (and some CI runners) starts Python with SIGINT ignored, and an ignored signal stays
# ignored across exec: the Ctrl-C tests (in this process and in the qlab processes they start) would see nothing.
# Handled here as a terminal would, so every process the tests start gets the default disposition.
signal.signal(signal.SIGINT, signal.default_int_handler)

# Hypothesis. Locally: its default profile, and the reliability properties' 40 derandomised examples (fast, the
# same every run). In CI (``CI`` set): the ``ci`` profile below — random inputs on every run, never derandomised,
# more examples (100 for the reliability properties, tests/reliability/generators.py, and where a test sets none),
# no deadline (shared runners are slow) — and one seed for the whole session, printed in the header and under
# every failing property test: a failure found in CI replays with ``pytest --hypothesis-seed=N`` (or
# ``QLAB_HYPOTHESIS_SEED=N``).
settings.register_profile(
    "ci",
    max_examples=100,
    derandomize=False,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
if servers.in_ci():
    settings.load_profile("ci")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """In CI, every Hypothesis test of the session draws from one random seed (the hypothesis plugin reads
    ``--hypothesis-seed`` after this hook)."""
    if servers.in_ci() and config.getoption("hypothesis_seed", None) is None:
        seed = os.environ.get("QLAB_HYPOTHESIS_SEED") or str(random.SystemRandom().randrange(2**32))
        config.option.hypothesis_seed = seed


def _seed(config: pytest.Config) -> str | None:
    seed = config.getoption("hypothesis_seed", None)
    return None if seed is None else str(seed)


def pytest_report_header(config: pytest.Config) -> str | None:
    seed = _seed(config)
    return None if seed is None else f"hypothesis seed {seed} (replay: pytest --hypothesis-seed={seed})"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failing property test says which seed drew its inputs (Hypothesis prints only the example)."""
    outcome = yield
    report = outcome.get_result()
    seed = _seed(item.config)
    if (
        report.failed
        and seed is not None
        and getattr(getattr(item, "obj", None), "is_hypothesis_test", False)
    ):
        report.sections.append(("hypothesis seed", f"replay: pytest {item.nodeid} --hypothesis-seed={seed}"))


ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"  # real specs and JUnit schemas the tests carry, each with its SOURCE.md


@pytest.fixture(scope="session")
def httpbin_url() -> Iterator[str]:
    """A real httpbin on 127.0.0.1 for the whole session."""
    with servers.httpbin() as url:
        yield url


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's wheel, built once per session (``tests/wheels.py``)."""
    return wheels.build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real specs the tests carry (``tests/data``: petstore3, kubernetes, RestBench's Spotify and TMDB)."""
    return DATA


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never see the CI's GitHub variables unless they set them."""
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "NO_COLOR", "QLAB_DEBUG"):
        monkeypatch.delenv(name, raising=False)
