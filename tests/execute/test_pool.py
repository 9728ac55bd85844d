"""The execute pool: as many workers as pay off, up to the environment's concurrency; every item once; an
error or Ctrl-C in a worker stops the rest, which are marked skipped."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from qlab.execute.pool import Pool


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


def _finish(pool: Pool[int], items: int, *, wall: float, cpu: float, every: float) -> None:
    """``items`` items of ``wall``/``cpu`` seconds each, finishing ``every`` seconds apart."""
    for _ in range(items):
        with pool.lock:
            pool._measured(wall, cpu, pool.window_at + every * (pool.window_items + 1))


def test_busy_cases_keep_one_worker() -> None:
    """The width follows w / (2c): a case that used most of its wall time on the CPU calls for no more workers;
    one that mostly waited calls for w / (2c) of them, capped at the width."""
    pool, _, _ = _pool(list(range(10)), width=8)
    pool.live = 1
    _finish(pool, 5, wall=0.0005, cpu=0.0004, every=0.0005)
    assert pool.target == 1
    _finish(pool, 1, wall=0.02, cpu=0.0005, every=0.02)  # one slow answer: 0.0044 / 0.0004 / 2 -> 5
    assert pool.target == 5
    _finish(pool, 20, wall=0.02, cpu=0.0005, every=0.02)
    assert pool.target == 8  # never past the width
    pool.live = 8
    _finish(pool, 20, wall=0.0005, cpu=0.0001, every=0.0005)  # 8 workers, 0.2 of a core busy
    assert pool.target == 8  # and a faster phase does not shrink it


def test_workers_that_saturate_the_gil_are_halved_down_to_one() -> None:
    """4 workers (the early doubling's guess) on CPU-bound cases: each case waits for the other three's turns
    (w = 4c), which looks like waiting for the server, but the workers keep a whole core busy."""
    pool, _, _ = _pool(list(range(100)), width=8)
    pool.live = pool.target = 4
    _finish(pool, 8, wall=0.002, cpu=0.0005, every=0.0005)
    assert pool.target == 4  # the first window pays for connections and lazy imports: not judged
    _finish(pool, 8, wall=0.002, cpu=0.0005, every=0.0005)
    assert pool.target == 2
    pool.live = 2
    _finish(pool, 4, wall=0.001, cpu=0.0005, every=0.0005)
    assert pool.target == 1
    pool.live = 1
    _finish(pool, 8, wall=0.0005, cpu=0.0005, every=0.0005)
    assert pool.target == 1
    _finish(pool, 20, wall=0.0015, cpu=0.0005, every=0.0015)  # slower answers: w / 2c = 1.5
    assert pool.target == 1  # back to 2, which saturated, only on twice the evidence
    _finish(pool, 20, wall=0.02, cpu=0.0005, every=0.02)  # a server that takes 20 ms after all
    assert pool.target == 8


def test_waiting_workers_are_not_halved() -> None:
    """16 workers on a 20 ms server: a third of a core busy, never taken back."""
    pool, _, _ = _pool(list(range(100)), width=16)
    pool.live = pool.target = 16
    _finish(pool, 64, wall=0.021, cpu=0.0005, every=0.021 / 16)
    assert pool.target == 16


def test_workers_beyond_a_lowered_target_end_after_their_case() -> None:
    late: set[str] = set()
    ran: list[int] = []

    def work(item: int) -> None:
        ran.append(item)
        if item == 40:  # the pool has grown on the waiting items: now a measurement halves it to one
            with pool.lock:
                pool._measured = lambda wall, cpu, now: False  # type: ignore[method-assign]
                pool.target = 1
        if item >= 80:
            late.add(threading.current_thread().name)
        time.sleep(0.002)

    pool, _, skipped = _pool(list(range(120)), work, width=4)
    pool.run()
    assert pool.workers == 4 and len(late) == 1 and sorted(ran) == list(range(120)) and skipped == []
    assert pool.live == 0


def test_an_error_in_a_case_stops_the_others_and_they_are_skipped() -> None:
    def fail_on_three(item: int) -> None:
        if item == 3:
            raise KeyboardInterrupt
        time.sleep(0.001)

    pool, _, skipped = _pool(list(range(50)), fail_on_three, width=1)
    with pytest.raises(KeyboardInterrupt):
        pool.run()
    assert skipped == list(range(4, 50))
