"""Console: colour rules (NO_COLOR), live progress only on a TTY outside CI, the final gate table."""

from __future__ import annotations

import io

import artifact_samples as samples
from qlab.report import console


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_color_and_live_rules() -> None:
    assert console.use_color(Tty(), {}) is True
    assert console.use_color(Tty(), {"NO_COLOR": ""}) is False
    assert console.use_color(io.StringIO(), {}) is False
    assert console.live(Tty(), quiet=False, environ={}) is True
    assert console.live(Tty(), quiet=True, environ={}) is False
    assert console.live(Tty(), quiet=False, environ={"CI": "true"}) is False


def test_gate_table() -> None:
    text = console.gate_table(samples.result(), color=False)
    assert "\x1b[" not in text
    assert text.splitlines()[0].split() == ["gate", "stage", "status", "numbers"]
    assert "plan     plan     blocked  plan_hit_rate=0.500>=0.9" in text
    assert "BLOCK: 1 blocked, 2 failed, 4 passed (exit 1)" in text
    assert "\x1b[31m" in console.gate_table(samples.result(), color=True)


def test_progress_lines() -> None:
    from qlab.run.options import RunEvent

    stream = Tty()
    progress = console.Progress(stream, enabled=True, color=False)
    progress(RunEvent("stage_start", "search", "search", cases=3))
    progress(RunEvent("stage_end", "search", "search", cases=3, status="passed", duration_ms=1500))
    assert "▸ search (search) 3 case(s) …" in stream.getvalue()
    assert stream.getvalue().endswith("passed 1.50s\n")
    quiet = Tty()
    console.Progress(quiet, enabled=False, color=False)(RunEvent("stage_start", "g", "search"))
    assert quiet.getvalue() == ""
