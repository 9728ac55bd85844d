"""The execute pool: as many workers as pay off, up to the environment's concurrency; every item once; an
error or Ctrl-C in a worker stops the rest, which are marked skipped."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from qlab.execute.pool import Pool, _Clock


def _pool(
    items: list[int], work: Callable[[int], None] | None = None, *, width: int = 8
) -> tuple[Pool[int], list[int], list[int]]:
    done: list[int] = []
    skipped: list[int] = []
    lock = threading.Lock()

    def record(item: int) -> None:
        with lock:
            done.append(item)

    pool: Pool[int] = Pool(
        items,
        work or record,
        width=width,
        cancel=threading.Event(),
        skip=skipped.append,  # type: ignore[arg-type]
    )
    return pool, done, skipped


def test_waiting_cases_grow_the_pool_to_its_width() -> None:
    seen: set[str] = set()

    def wait(item: int) -> None:  # a server that takes 20 ms: the thread uses no CPU meanwhile
        seen.add(threading.current_thread().name)
        time.sleep(0.02)

    pool, _, skipped = _pool(list(range(40)), wait, width=8)
    pool.run()
    assert pool.workers == 8 and len(seen) == 8 and skipped == []


def test_every_item_runs_once() -> None:
    pool, done, skipped = _pool(list(range(500)))
    pool.run()
    assert sorted(done) == list(range(500)) and skipped == []


def test_busy_cases_keep_one_worker() -> None:
    """The width follows w / (2c): a case that used most of its wall time on the CPU calls for no more workers;
    one that mostly waited calls for w / (2c) of them, capped at the width."""
    pool, _, _ = _pool(list(range(10)), width=8)
    with pool.lock:
        for _ in range(5):
            pool._measured(wall=0.0005, cpu=0.0004)
    assert pool.target == 1
    with pool.lock:
        pool._measured(wall=0.02, cpu=0.0005)  # one slow answer moves the average: 0.0044 / 0.0004 / 2 -> 5
    assert pool.target == 5
    with pool.lock:
        for _ in range(20):
            pool._measured(wall=0.02, cpu=0.0005)
    assert pool.target == 8  # never past the width
    with pool.lock:
        for _ in range(20):
            pool._measured(wall=0.0005, cpu=0.0004)
    assert pool.target == 8  # and never shrinks


def test_an_error_in_a_case_stops_the_others_and_they_are_skipped() -> None:
    def fail_on_three(item: int) -> None:
        if item == 3:
            raise KeyboardInterrupt
        time.sleep(0.001)

    pool, _, skipped = _pool(list(range(50)), fail_on_three, width=1)
    with pytest.raises(KeyboardInterrupt):
        pool.run()
    assert skipped == list(range(4, 50))


def _spin(seconds: float) -> None:
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        pass


def test_a_threads_busy_time_counts_running_and_waiting_for_a_core_not_sleeping() -> None:
    """On a loaded machine a CPU-bound case spends part of its wall time waiting for a core: that is busy
    time (Linux's schedstat counts it), else the pool would take it for waiting on the server and grow."""
    clock = _Clock(threading.get_native_id(), threading.get_ident())
    try:
        assert clock.read is not None
        before = clock.read()
        time.sleep(0.05)
        slept = clock.read() - before
        if clock._file is None:  # no schedstat here: CPU time, which misses the waits for a core
            pytest.skip("this platform has no per-thread run-queue delay")
        before, started = clock.read(), time.perf_counter()
        _spin(0.05)
        spun, wall = clock.read() - before, time.perf_counter() - started
        assert slept < 0.025 and spun > 0.8 * wall
    finally:
        clock.close()


def test_busy_clocks_are_closed_when_the_workers_end() -> None:
    pool, done, _ = _pool(list(range(20)), width=4)
    pool.run()
    assert len(done) == 20 and all(s.own is None and s.watch is None for s in pool.slots)
