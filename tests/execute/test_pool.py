"""The execute pool: as many workers as pay off, up to the environment's concurrency; every item once; an
error or Ctrl-C in a worker stops the rest, which are marked skipped."""

from __future__ import annotations

import threading
import time

import pytest

from qlab.execute.pool import Pool


def _pool(items: list[int], work: object = None, *, width: int = 8) -> tuple[Pool[int], list[int], list[int]]:
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
