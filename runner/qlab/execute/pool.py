"""Run execute cases on worker threads, as many as pay off, up to the environment's ``concurrency``.

Threads only help while a case waits for the server: against a fast server the cases are CPU-bound and the
GIL serializes them. So the pool starts one worker and grows from what it measures (``_measured``; before any
case finished, ``_look_at_the_cases_in_flight``), shrinks when the workers saturate the GIL, and otherwise
never takes a worker away. The main thread sleeps while the workers run, woken only when a measurement calls
for more workers or when all is done.

Ctrl-C reaches only the main thread, at any point, so the protocol never depends on where it lands: a worker
takes a case only under the lock and only while ``cancel`` is unset, and counts itself running. On Ctrl-C the
main thread sets ``cancel`` (cases in flight stop before their next step and run their cleanup), waits until
nothing is running (``_drain``), marks the untaken cases skipped and re-raises.
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
SATURATED = 0.8  # cores the workers' CPU time fills at which some of them are too many (the GIL allows one)
CTRL_C_PATIENCE = (
    1  # Ctrl-C presses absorbed while cases in flight finish and clean up; the next one abandons
)


def _cpu_clock(ident: int | None) -> Callable[[], float] | None:
    """A reader of thread ``ident``'s CPU time, where the platform has one (Linux, BSDs, macOS)."""
    try:
        clock = time.pthread_getcpuclockid(ident or 0)
        time.clock_gettime(clock)
    except (AttributeError, OSError):
        return None
    return lambda: time.clock_gettime(clock)


class _Slot:
    """What one worker is doing: the case it started and when (wall and thread CPU time)."""

    __slots__ = ("busy", "cpu", "cpu_at", "wall_at")

    def __init__(self) -> None:
        self.busy = False
        self.wall_at = 0.0
        self.cpu_at = 0.0
        self.cpu: Callable[[], float] | None = None


class Pool(Generic[T]):
    """One run of ``work`` over ``items`` on at most ``width`` workers. ``skip`` marks an untaken item when
    the run is interrupted; ``cancel`` is the event the items' work watches. An exception raised by ``work``
    stops the other items like Ctrl-C does and is raised again by ``run``."""

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
        self.live = 0  # workers started and not yet ended
        self.peak = 0  # the most workers live at once
        self.window_at = 0.0  # the current window of finished items: its start, their CPU time, their count
        self.window_cpu = 0.0
        self.window_items = 0
        self.windows = 0  # windows closed
        self.saturated = 0  # the fewest workers seen to saturate the GIL (0: none yet)
        self.slots: list[_Slot] = []
        self.threads: list[threading.Thread] = []
        self.escaped: list[BaseException] = []  # a KeyboardInterrupt/SystemExit raised inside a worker

    @property
    def workers(self) -> int:
        """The most workers the run had at once (for the stage's details)."""
        return self.peak

    def run(self) -> None:
        try:
            with self.lock:
                self.live = self.peak = 1
                self.window_at = time.perf_counter()
            self._start(1)
            while True:
                with self.lock:
                    if self._finished():
                        break
                    # only before the first item finishes is there anything to look at; after that a worker
                    # wakes this thread when its measurement calls for more workers, or when all is done
                    early = self.wall is None and self.live < self.width and self.next < len(self.items)
                    self.lock.wait(TICK if early else None)
                    if early:
                        self._look_at_the_cases_in_flight()
                    wanted = min(self.target, self.width) - self.live
                    if wanted > 0:
                        self.live += wanted
                        self.peak = max(self.peak, self.live)
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
        slot.cpu = _cpu_clock(threading.get_ident())
        first = True  # a worker's first item opens its connection and pays lazy imports: not measured
        while True:
            with self.lock:
                if self.cancel.is_set() or self.next >= len(self.items) or self.live > self.target:
                    self.live -= 1  # done, or one worker too many
                    return
                index = self.next
                self.next += 1
                self.running += 1
                slot.busy, slot.wall_at, slot.cpu_at = True, time.perf_counter(), time.thread_time()
            try:
                self.work(self.items[index])
            except BaseException as exc:  # the item already ran its cleanup; stop the others like Ctrl-C does
                self.escaped.append(exc)
                self.cancel.set()
            finally:
                now, cpu = time.perf_counter(), time.thread_time() - slot.cpu_at
                with self.lock:
                    slot.busy = False
                    self.running -= 1
                    grow = not first and self._measured(now - slot.wall_at, cpu, now)
                    if grow or self._finished():
                        self.lock.notify_all()  # not after every item: each wake-up costs a GIL hand-off
                first = False

    def _measured(self, wall: float, cpu: float, now: float) -> bool:
        """Fold one item finished at ``now`` into the averages and the width they call for (lock held); True
        when that width is more workers than the pool has.

        By Little's law ``wall / cpu`` workers keep one core busy; the pool grows to ``wall / (2 cpu)`` (half
        a core of client work, room for the GIL hand-offs). Cases also wait for the other workers' turns,
        which looks like waiting for the server, so windows of finished items (two per worker) are watched
        too: when the workers' CPU time filled ``SATURATED`` of a window and fewer workers are called for,
        half of them end; growing back to a width that saturated takes twice the evidence (no seesaw)."""
        if self.wall is None:
            self.wall, self.cpu = wall, cpu
        else:
            self.wall += SMOOTHING * (wall - self.wall)
            self.cpu += SMOOTHING * (cpu - self.cpu)
        fit = min(self.width, self.width if self.cpu <= 0 else math.floor(self.wall / (2 * self.cpu)))
        if self.saturated <= fit < 2 * self.saturated:
            fit = self.saturated - 1  # back to a width that saturated only on twice the evidence: no seesaw
        self.target = max(self.target, fit)
        self.window_cpu += cpu
        self.window_items += 1
        if self.window_items >= 2 * self.live and now > self.window_at:
            cores = self.window_cpu / (now - self.window_at)
            if self.windows and cores >= SATURATED and fit < self.live:
                self.target = max(1, self.live // 2)  # too many workers for one GIL: half of them end
                self.saturated = min(self.saturated or self.live, self.live)
            self.windows += 1
            self.window_at, self.window_cpu, self.window_items = now, 0.0, 0
        return self.target > self.live

    def _look_at_the_cases_in_flight(self) -> None:
        """Before any item finished: an item waiting (in flight > TICK, under half of it on the CPU) doubles
        the width (lock held). A guess, which ``_measured`` can take back once items finish."""
        if self.wall is not None:
            return
        now = time.perf_counter()
        for slot in self.slots:
            if not slot.busy or slot.cpu is None or now - slot.wall_at <= TICK:
                continue
            if slot.cpu() - slot.cpu_at < (now - slot.wall_at) / 2:
                self.target = max(self.target, min(self.width, 2 * self.live))
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
