"""Run execute cases on worker threads, as many as pay off, up to the environment's ``concurrency``.

Why adaptive: threads only help while a case spends its time *waiting* for the server. Against a server that
answers in well under a millisecond (nginx on loopback) the cases are CPU-bound, the GIL serializes them, and
a pool of 8 is measured 1.66x slower than one thread (``bench/bench_execute.py alternatives``); against a
server that takes 20 ms, 16 threads are 16x faster. So the pool starts one worker and adds workers from what
it measures:

- on every finished case, a moving average of its wall time ``w`` and its thread's CPU time ``c``: by Little's
  law ``w / c`` workers keep one core busy, so the pool grows to ``w / (2c)`` (half a core of client work,
  leaving room for the GIL hand-offs), capped at ``concurrency``;
- before the first case finishes: a case in flight for more than ``TICK`` whose thread used under half that
  time on the CPU is waiting, so the pool doubles (1, 2, 4, …) every ``TICK``.

Workers are never taken away: a slow phase followed by a fast one keeps the width it had. The main thread
sleeps while the workers run: after the first item it is woken only when a measurement calls for more
workers or when all is done, not after every item (each wake-up is a GIL hand-off: 2,000 items against
nginx on one worker took 7,900 voluntary context switches when it was woken per item, 1,200 now, as many as
running them inline).

Ctrl-C reaches only the main thread, at any point (even inside ``Thread.start``), so the protocol never depends
on where it lands: a worker takes a case only under the lock and only while ``cancel`` is unset, and counts
itself running. On Ctrl-C the main thread sets ``cancel`` (cases in flight stop before their next step and run
their cleanup), waits until nothing is running, marks the untaken cases skipped, re-raises.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

T = TypeVar("T")
TICK = 0.002  # seconds between the main thread's looks at the cases in flight while the pool may grow
SMOOTHING = 0.2  # weight of the newest case in the moving averages
CTRL_C_PATIENCE = (
    1  # Ctrl-C presses absorbed while cases in flight finish and clean up; the next one abandons
)


class _Clock:
    """Seconds a thread has been *busy*: running, or runnable and waiting for a core.

    Linux: run time + run-queue delay from ``/proc/self/task/<id>/schedstat`` (~4 µs a read). Waiting for a
    core is not waiting for the server: with CPU time alone, a loaded machine made CPU-bound cases look like
    waiting ones, and the pool grew to 3 workers against nginx. Elsewhere: the thread's CPU time, where the
    platform has a clock for it (``read`` is None where it has none). Each reading thread has its own."""

    __slots__ = ("_file", "read")

    def __init__(self, native_id: int, ident: int) -> None:
        self._file = None
        self.read: Callable[[], float] | None = None
        try:
            self._file = open(f"/proc/self/task/{native_id}/schedstat", "rb", buffering=0)  # noqa: SIM115
            self.read = self._schedstat
            self.read()
        except (OSError, ValueError):
            self.close()
            self.read = _cpu_time(ident)

    def _schedstat(self) -> float:
        file = self._file
        assert file is not None
        file.seek(0)
        run_ns, wait_ns, *_ = file.read(96).split()
        return (int(run_ns) + int(wait_ns)) / 1e9

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _cpu_time(ident: int) -> Callable[[], float] | None:
    """A reader of thread ``ident``'s CPU time (Linux, BSDs, macOS), or None."""
    if ident == threading.get_ident():
        return time.thread_time
    try:
        clock = time.pthread_getcpuclockid(ident)
        time.clock_gettime(clock)
    except (AttributeError, OSError):
        return None
    return lambda: time.clock_gettime(clock)


class _Slot:
    """What one worker is doing: the case it started and when (wall and busy time), and the clocks of its
    thread: ``own`` read by the worker, ``watch`` by the main thread."""

    __slots__ = ("busy", "busy_at", "own", "wall_at", "watch")

    def __init__(self) -> None:
        self.busy = False
        self.wall_at = 0.0
        self.busy_at = 0.0
        self.own: _Clock | None = None
        self.watch: _Clock | None = None


class Pool(Generic[T]):
    """One run of ``work`` over ``items`` (see the module docstring). ``skip`` marks an untaken item when
    the run is interrupted; ``cancel`` is the event the items' work watches."""

    def __init__(
        self,
        items: Sequence[T],
        work: Callable[[T], None],
        *,
        width: int,
        cancel: threading.Event,
        skip: Callable[[T], None],
    ) -> None:
        self.items, self.work, self.skip, self.cancel = items, work, skip, cancel
        self.width = max(1, min(width, len(items)))
        self.lock = threading.Condition()
        self.next = 0  # index of the next item to take
        self.running = 0  # items being worked on
        self.wall: float | None = None  # moving averages over finished items, seconds
        self.cpu = 0.0
        self.target = 1  # workers wanted
        self.slots: list[_Slot] = []
        self.threads: list[threading.Thread] = []
        self.escaped: list[BaseException] = []  # a KeyboardInterrupt/SystemExit raised inside a worker

    @property
    def workers(self) -> int:
        """How many workers the run used (for the stage's details)."""
        return len(self.threads)

    def run(self) -> None:
        try:
            self._start(1)
            while True:
                with self.lock:
                    if self._finished():
                        break
                    # only before the first item finishes is there anything to look at; after that a worker
                    # wakes this thread when its measurement calls for more workers, or when all is done
                    early = (
                        self.wall is None and len(self.threads) < self.width and self.next < len(self.items)
                    )
                    self.lock.wait(TICK if early else None)
                    if early:
                        self._look_at_the_cases_in_flight()
                    wanted = min(self.target, self.width) - len(self.threads)
                if wanted > 0:
                    self._start(wanted)
            for thread in self.threads:
                thread.join()
            if self.escaped:
                raise self.escaped[0]
        except BaseException:
            self._drain(CTRL_C_PATIENCE)
            with self.lock:
                taken = self.next
            for item in self.items[taken:]:
                self.skip(item)
            raise

    def _finished(self) -> bool:
        done = self.next >= len(self.items) or self.cancel.is_set()
        return done and self.running == 0

    def _start(self, count: int) -> None:
        for _ in range(count):
            slot = _Slot()
            thread = threading.Thread(
                target=self._worker, args=(slot,), name=f"qlab-execute-{len(self.threads)}", daemon=True
            )
            self.slots.append(slot)
            self.threads.append(thread)
            thread.start()

    def _worker(self, slot: _Slot) -> None:
        me = threading.get_native_id(), threading.get_ident()
        own = slot.own = _Clock(*me)
        with self.lock:
            slot.watch = _Clock(*me)
        try:
            self._work(slot, own.read or time.thread_time)
        finally:
            with self.lock:
                own.close()
                if slot.watch is not None:
                    slot.watch.close()
                slot.own = slot.watch = None

    def _work(self, slot: _Slot, busy: Callable[[], float]) -> None:
        while True:
            with self.lock:
                if self.cancel.is_set() or self.next >= len(self.items):
                    return
                index = self.next
                self.next += 1
                self.running += 1
                slot.busy, slot.wall_at, slot.busy_at = True, time.perf_counter(), busy()
            try:
                self.work(self.items[index])
            except BaseException as exc:  # the item already ran its cleanup; stop the others like Ctrl-C does
                self.escaped.append(exc)
                self.cancel.set()
            finally:
                wall, cpu = time.perf_counter() - slot.wall_at, busy() - slot.busy_at
                with self.lock:
                    slot.busy = False
                    self.running -= 1
                    if self._measured(wall, cpu) or self._finished():
                        self.lock.notify_all()  # not after every item: each wake-up costs a GIL hand-off

    def _measured(self, wall: float, cpu: float) -> bool:
        """Fold one finished item into the averages and the width they call for (lock held); True when
        that width is more workers than the pool has."""
        if self.wall is None:
            self.wall, self.cpu = wall, cpu
        else:
            self.wall += SMOOTHING * (wall - self.wall)
            self.cpu += SMOOTHING * (cpu - self.cpu)
        fit = self.width if self.cpu <= 0 else math.floor(self.wall / (2 * self.cpu))
        self.target = max(self.target, min(self.width, fit))
        return self.target > len(self.threads)

    def _look_at_the_cases_in_flight(self) -> None:
        """Before any item finished: an item waiting (in flight > TICK, under half of it on the CPU) doubles
        the width (lock held)."""
        if self.wall is not None:
            return
        now = time.perf_counter()
        for slot in self.slots:
            watch = slot.watch.read if slot.watch is not None else None
            if not slot.busy or watch is None or now - slot.wall_at <= TICK:
                continue
            if watch() - slot.busy_at < (now - slot.wall_at) / 2:
                self.target = max(self.target, min(self.width, 2 * len(self.threads)))
                return

    def _drain(self, patience: int) -> None:
        """Wait until no item is running. Cleanup is not optional, so ``patience`` more Ctrl-C are absorbed
        (the in-flight request cannot be cut short from here; each case is bounded by its timeout_sec); one
        more abandons the running items."""
        while True:
            try:
                self.cancel.set()
                with self.lock:
                    while self.running:
                        self.lock.wait()
                return
            except KeyboardInterrupt:
                if patience <= 0:
                    raise
                patience -= 1


__all__ = ["CTRL_C_PATIENCE", "Pool"]
