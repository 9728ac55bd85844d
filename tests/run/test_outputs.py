"""The output set: result, JUnit and summary are switched in together with one rename, and a crash at any step
of writing them leaves the previous set or the new one, never a mix (``qlab.run.outputs``)."""

from __future__ import annotations

import builtins
import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from qlab.adapters.atomic import write_atomic
from qlab.adapters.scrub import SecretSet, find_leaks
from qlab.contracts.errors import InputError
from qlab.engine.types import SearchRow
from qlab.run import outputs
from qlab.run.outputs import SETS, OutputPaths, prepare, release, stage_outputs, temp_paths, write_outputs


def _artifact(tag: str, *, secret: str = "") -> dict[str, Any]:
    """A small artifact whose every output (result, JUnit, summary) differs between tags."""
    case = {"case_id": f"case-{tag}", "suite": "s", "mode": "search", "status": "passed", "latency_ms": {},
            "assertions": [], "note": secret}  # fmt: skip
    return {
        "schema_version": "1",
        "run_id": f"run-{tag}",
        "project": tag,
        "cases": [case],
        "suites": {"s": {"mode": "search"}},
        "gates": [],
        "decision": {"verdict": "pass", "exit_code": 0, "reasons": [f"tag {tag}"]},
    }


def _visible(paths: OutputPaths) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in paths.by_role().values() if p.exists()}


def _expected(tmp_path: Path, tag: str) -> dict[str, bytes]:
    """What the set of ``tag`` looks like, written alone in a folder of its own."""
    paths = temp_paths(tmp_path / f"expected-{tag}")
    if not paths.result.exists():
        write_outputs(_artifact(tag), paths)
    return _visible(paths)


class Crash(BaseException):
    """qlab killed at this step (nothing after it runs, no handler catches it)."""


STEPS = ("replace", "symlink", "unlink", "fsync", "mkdir", "rename")


@contextmanager
def crash_at(step: int) -> Iterator[list[str]]:
    """Count every file system step the writer takes (os calls, copies, file opens) and die at number ``step``."""
    done: list[str] = []
    patched: list[tuple[Any, str, Any]] = []

    def wrap(owner: Any, name: str) -> None:
        real = getattr(owner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            done.append(name)
            if len(done) == step:
                raise Crash(f"killed at step {step} ({name})")
            if name == "fsync":
                return None  # durability is the kernel's part; in process only the order of steps matters
            return real(*args, **kwargs)

        patched.append((owner, name, real))
        setattr(owner, name, counted)

    for name in STEPS:
        wrap(os, name)
    wrap(shutil, "copyfile")
    wrap(shutil, "rmtree")
    real_open = builtins.open
    outputs.open = lambda *a, **k: (done.append("open"), _die(done, step), real_open(*a, **k))[2]  # type: ignore[attr-defined]
    try:
        yield done
    finally:
        for owner, name, real in reversed(patched):
            setattr(owner, name, real)
        del outputs.open  # type: ignore[attr-defined]


def _die(done: list[str], step: int) -> None:
    if len(done) == step:
        raise Crash(f"killed at step {step} (open)")


def _crash_every_step(
    tmp_path: Path, make_old: Callable[[OutputPaths], None], *, old: dict[str, bytes]
) -> int:
    new = _expected(tmp_path, "new")
    step = 0
    while True:
        step += 1
        folder = tmp_path / f"run-{step}"
        paths = temp_paths(folder)
        make_old(paths)
        assert _visible(paths) == old
        try:
            with crash_at(step):
                write_outputs(_artifact("new"), paths)
        except Crash:
            seen = _visible(paths)
            assert seen in (old, new), f"a mix after a crash at step {step}: {sorted(seen)}"
            # the next run starts, cleans what the killed one left, and writes its own set
            prepare(paths)
            release(paths)
            leftovers = sorted(p.name for p in (folder / SETS).iterdir() if not p.name.startswith(".lock"))
            assert len(leftovers) <= 2, leftovers  # the current link and the set it points to
            write_outputs(_artifact("newer"), paths)
            assert _visible(paths) == _expected(tmp_path, "newer")
            continue
        assert _visible(paths) == new
        print(f"{step - 1} steps, each one a crash point")
        return step


def test_a_crash_at_any_step_leaves_the_old_set_or_the_new_one(tmp_path: Path) -> None:
    steps = _crash_every_step(
        tmp_path, lambda paths: write_outputs(_artifact("old"), paths), old=_expected(tmp_path, "old")
    )
    assert steps > 8  # every step of the switch was tried


def test_the_first_run_over_plain_files_of_an_earlier_qlab_never_shows_a_mix(tmp_path: Path) -> None:
    def plain_old(paths: OutputPaths) -> None:
        for name, data in _expected(tmp_path, "old").items():
            write_atomic(paths.result.parent / name, data.decode())

    _crash_every_step(tmp_path, plain_old, old=_expected(tmp_path, "old"))


def test_a_crash_before_any_set_leaves_nothing(tmp_path: Path) -> None:
    _crash_every_step(tmp_path, lambda paths: paths.result.parent.mkdir(parents=True, exist_ok=True), old={})


def test_the_visible_files_are_links_into_the_current_set(tmp_path: Path) -> None:
    paths = OutputPaths(
        tmp_path / "out" / "result.json", tmp_path / "reports" / "junit.xml", tmp_path / "out" / "summary.md"
    )
    write_outputs(_artifact("a"), paths)
    write_outputs(_artifact("b"), paths)
    assert all(p.is_symlink() for p in paths.by_role().values())
    assert b'"run_id": "run-b"' in paths.result.read_bytes() and b"tag b" in paths.summary.read_bytes()
    assert b"case-b" in paths.junit.read_bytes()  # --junit elsewhere: still switched with the set
    sets = [p for p in (tmp_path / "out" / SETS).iterdir() if p.is_dir() and not p.is_symlink()]
    assert len(sets) == 1  # the older sets are gone


def test_staged_outputs_are_never_visible_and_are_removed_by_the_switch(tmp_path: Path) -> None:
    paths = temp_paths(tmp_path / "out")
    staged = stage_outputs(_artifact("provisional"), paths)
    assert all(p.exists() for p in staged) and _visible(paths) == {}
    write_outputs(_artifact("final"), paths)
    assert not any(p.exists() for p in staged)


def test_stale_temp_files_and_sets_are_removed_unless_another_run_holds_the_folder(tmp_path: Path) -> None:
    paths = temp_paths(tmp_path / "out")
    write_outputs(_artifact("a"), paths)
    stale_tmp = paths.result.parent / ".result.json.k2j3h4.tmp"
    stale_tmp.write_text("x" * 1000)
    stale_set = paths.store / "result.json.20240101T000000-1-000001"
    stale_set.mkdir()
    (stale_set / "result").write_text("{}")
    with open(paths.store / ".lock", "a") as store_lock:  # another qlab run writing into the same folder
        fcntl.flock(store_lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        prepare(paths)
        assert stale_tmp.exists() and stale_set.exists()
    release(paths)
    prepare(paths)
    release(paths)
    assert not stale_tmp.exists() and not stale_set.exists()
    assert _visible(paths) == _expected(tmp_path, "a")


def test_every_output_goes_through_the_scrubber(tmp_path: Path) -> None:
    secret = "tok-CANARY-outputs-8a7b6c5d"
    paths = temp_paths(tmp_path / "out")
    write_outputs(
        _artifact("a", secret=f"echo {secret} and 4242"), paths, secrets=SecretSet([secret, "4242"])
    )
    for path in paths.by_role().values():
        assert secret not in path.read_text(encoding="utf-8"), path
    assert '"echo [REDACTED] and [REDACTED]"' in paths.result.read_text(encoding="utf-8")


def test_a_secret_in_a_case_s_search_rows_reaches_no_output(tmp_path: Path) -> None:
    """The rows of a failed search case are in result.json and in its JUnit failure text: every writer gets them
    scrubbed, and the scrub check over the written files finds nothing."""
    secret = "tok-CANARY-rows-5e6f7a8b"
    row = SearchRow(f"get-{secret}", 1, 2.5, {secret: 2.5}, (secret,), {secret: "member"})
    artifact = _artifact("a")
    artifact["cases"][0].update(
        status="failed",
        search={"hit": False, "hit_rank": None, "top_k": 5, "rows": (row,), "query_terms": [secret]},
        failure={"stage": "search", "reason": "expected_target_absent", "message": "not in the Top-K"},
    )
    paths = temp_paths(tmp_path / "out")
    write_outputs(artifact, paths, secrets=SecretSet([secret]))
    assert find_leaks(list(paths.by_role().values()), [secret]) == []
    assert '"tool_id":"get-[REDACTED]"' in paths.result.read_text(encoding="utf-8")
    assert "get-[REDACTED]" in paths.junit.read_text(encoding="utf-8")
    assert artifact["cases"][0]["search"]["rows"] == (row,)  # the run's own objects are left as they are


def test_without_symbolic_links_each_file_is_replaced_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outputs, "_links_work", lambda store: False)
    paths = temp_paths(tmp_path / "out")
    write_outputs(_artifact("a"), paths)
    assert not any(p.is_symlink() for p in paths.by_role().values()) and _visible(paths) == _expected(
        tmp_path, "a"
    )


def test_a_folder_where_an_output_belongs_is_an_input_error(tmp_path: Path) -> None:
    paths = temp_paths(tmp_path / "out")
    paths.junit.mkdir(parents=True)
    with pytest.raises(InputError, match="cannot be written"):
        write_outputs(_artifact("a"), paths)


def test_a_run_that_does_not_hold_the_folder_leaves_the_other_runs_sets_alone(tmp_path: Path) -> None:
    """Two runs writing into one folder: the one without the lock switches its set in but removes nothing, so
    the other's set, still being written, survives."""
    paths = temp_paths(tmp_path / "out")
    write_outputs(_artifact("a"), paths)
    other = paths.store / "result.json.20990101T000000-99-000001"  # another live run's set in the making
    other.mkdir()
    with open(paths.store / ".lock", "a") as store_lock:
        fcntl.flock(store_lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        write_outputs(_artifact("b"), paths)
        assert other.exists() and _visible(paths) == _expected(tmp_path, "b")
    write_outputs(_artifact("c"), paths)
    assert not other.exists()


# ----------------------------------------------------------------------------------- paths, locks, clean-up at their edges


def _config(tmp_path: Path, **output: str) -> Any:
    import dataclasses

    from run import fakes

    config = fakes.config(tmp_path)
    return dataclasses.replace(config, output=dataclasses.replace(config.output, **output))


def test_output_paths(tmp_path: Path) -> None:
    from qlab.run.shard import ShardSpec

    config = _config(tmp_path, dir="reports", result="r.json", junit="j.xml", summary="s.md")
    assert outputs.output_paths(config) == OutputPaths(tmp_path / "reports" / "r.json", tmp_path / "reports" / "j.xml",
                                                       tmp_path / "reports" / "s.md")  # fmt: skip
    # relative options are taken from the working directory and named absolute, as every output names them
    cwd = Path.cwd()
    assert outputs.output_paths(config, out_dir="x", junit_path="ci/junit.xml") == OutputPaths(
        cwd / "x/r.json", cwd / "ci/junit.xml", cwd / "x/s.md"
    )
    shard = outputs.output_paths(config, out_dir="x", shard=ShardSpec(2, 3))
    assert shard == OutputPaths(cwd / "x/qlab-shard-2-of-3.json", cwd / "x/junit-shard-2-of-3.xml",
                                cwd / "x/summary-shard-2-of-3.md")  # fmt: skip
    assert (
        outputs.output_paths(config, out_dir="x", junit_path="j/1.xml", shard=ShardSpec(1, 2)).junit
        == cwd / "j/1.xml"
    )
    assert temp_paths(tmp_path) == OutputPaths(
        tmp_path / "result.json", tmp_path / "junit.xml", tmp_path / "summary.md"
    )


def test_the_summary_links_its_siblings_relatively(tmp_path: Path) -> None:
    paths = OutputPaths(
        tmp_path / "out" / "result.json", tmp_path / "ci" / "junit.xml", tmp_path / "out" / "summary.md"
    )
    assert paths.links() == {"result": "result.json", "junit": (tmp_path / "ci" / "junit.xml").as_posix(),
                             "summary": "summary.md"}  # fmt: skip
    write_outputs(_artifact("a"), paths)
    assert "- result: [`result.json`](result.json)" in paths.summary.read_text(encoding="utf-8")


def test_outputs_go_into_folders_that_do_not_exist_yet(tmp_path: Path) -> None:
    paths = OutputPaths(
        tmp_path / "a" / "b" / "result.json",
        tmp_path / "c" / "d" / "junit.xml",
        tmp_path / "a" / "b" / "summary.md",
    )
    prepare(paths)
    release(paths)
    write_outputs(_artifact("a"), paths)
    assert _visible(paths).keys() == {"result.json", "junit.xml", "summary.md"}


def test_an_output_folder_that_cannot_be_made_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    paths = temp_paths(blocker / "out")
    with pytest.raises(InputError) as caught:
        prepare(paths)
    message = str(caught.value)
    assert (
        message.startswith(f"{blocker / 'out'}: cannot create the output folder:")
        and "check --out" in message
    )
    with pytest.raises(InputError) as caught:
        outputs.write_file(blocker / "x" / "r.json", "x")
    message = str(caught.value)
    assert message.startswith(f"{blocker / 'x' / 'r.json'}: cannot be written:") and "check --out" in message


def test_a_folder_standing_where_an_output_belongs_is_named(tmp_path: Path) -> None:
    paths = temp_paths(tmp_path / "out")
    paths.summary.mkdir(parents=True)
    with pytest.raises(InputError) as caught:
        write_outputs(_artifact("a"), paths)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'out'}: the outputs cannot be written:") and "a folder" in message
    blocked = temp_paths(tmp_path / "staged")
    blocked.store.parent.mkdir(parents=True)
    blocked.store.write_text("")
    with pytest.raises(InputError) as caught:
        stage_outputs(_artifact("a"), blocked)
    assert str(caught.value).startswith(f"{blocked.store}: the outputs cannot be written: ")


def test_staged_outputs_are_scrubbed_too(tmp_path: Path) -> None:
    secret = "tok-CANARY-staged-1f2e3d4c"
    staged = stage_outputs(
        _artifact("a", secret=secret), temp_paths(tmp_path / "out"), secrets=SecretSet([secret])
    )
    for path in staged:
        assert secret not in path.read_text(encoding="utf-8") and path.stat().st_size > 0


def test_logs_are_scrubbed_again_with_what_the_run_learnt_last(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("set-cookie sid=SESSION-abcdef123456\n", encoding="utf-8")
    clean = tmp_path / "clean.log"
    clean.write_text("nothing here\n", encoding="utf-8")
    before = clean.stat().st_mtime_ns
    outputs.rescrub_logs([tmp_path / "missing.log", log, clean], SecretSet(["SESSION-abcdef123456"]))
    assert log.read_text(encoding="utf-8") == "set-cookie sid=[REDACTED]\n"
    assert clean.stat().st_mtime_ns == before  # a log without a secret is left alone
    outputs.rescrub_logs([log], SecretSet())  # nothing known: nothing to do
    assert log.read_text(encoding="utf-8") == "set-cookie sid=[REDACTED]\n"


def test_the_folder_lock_is_taken_once_and_refused_to_a_second_holder(tmp_path: Path) -> None:
    store = tmp_path / "deep" / "out" / SETS
    assert outputs._lock(store) and outputs._lock(store)  # held: taken again at no cost
    outputs.release(temp_paths(store.parent))
    with open(store / ".lock", "a") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert not outputs._lock(store)
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert not outputs._lock(blocker / SETS)


def test_remove_stale_takes_only_what_killed_runs_leave(tmp_path: Path) -> None:
    paths = temp_paths(tmp_path / "out")
    write_outputs(_artifact("a"), paths)
    folder = paths.result.parent
    keep = {folder / "notes.tmp", folder / ".profile", folder / "x.link"}
    gone = {folder / ".result.json.abc.tmp", folder / ".junit.xml.20240101-1-1.link"}
    for path in keep | gone:
        path.write_text("x")
    (folder / ".dir.tmp").mkdir()
    (paths.store / ".result.json.current.123.link").symlink_to("nowhere")
    (paths.store / "result.json.current.x").write_text("")  # a file, not a set folder
    other = paths.store / "other.json.20240101T000000-1-000001"  # another result name's set
    other.mkdir()
    prepare(paths)
    release(paths)
    assert all(p.exists() for p in keep) and not any(p.exists() for p in gone)
    assert (
        (folder / ".dir.tmp").is_dir() and other.is_dir() and (paths.store / "result.json.current.x").exists()
    )
    assert not (paths.store / ".result.json.current.123.link").is_symlink()
    assert _visible(paths) == _expected(tmp_path, "a")


def test_symbolic_link_support_is_probed_once_per_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "new" / "out" / SETS
    assert outputs._links_work(store) is True
    assert not list(store.parent.glob(".qlab-link-probe-*"))  # the probe is removed

    def refuse(src: str, dst: str) -> None:
        raise OSError("not supported")

    monkeypatch.setattr(os, "symlink", refuse)
    assert outputs._links_work(store) is True  # remembered
    assert outputs._links_work(tmp_path / "other" / SETS) is False


def test_the_set_files_are_readable_by_others_when_the_umask_allows(tmp_path: Path) -> None:
    import stat

    paths = temp_paths(tmp_path / "out")
    write_outputs(_artifact("a"), paths)
    umask = os.umask(0o022)
    os.umask(umask)
    assert {stat.S_IMODE(p.resolve().stat().st_mode) for p in paths.by_role().values()} == {0o666 & ~umask}


# ------------------------------------------------------------------------------------------- each rule at its edge


def test_a_folder_already_switched_is_not_copied_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rule: only the first run over a folder (or a visible name someone replaced) snapshots what readers see;
    a folder whose names are already links into the sets is switched without copying a byte."""
    paths = temp_paths(tmp_path / "out")
    write_outputs(_artifact("a"), paths)
    copied: list[str] = []
    real = shutil.copyfile
    monkeypatch.setattr(shutil, "copyfile", lambda src, dst: copied.append(Path(src).name) or real(src, dst))
    write_outputs(_artifact("b"), paths)
    assert copied == []
    paths.junit.unlink()
    paths.junit.write_text("someone's own file")
    write_outputs(_artifact("c"), paths)
    assert sorted(copied) == ["junit.xml", "result.json", "summary.md"]  # readers kept seeing all three
    assert _visible(paths) == _expected(tmp_path, "c")


def test_the_links_lead_from_their_own_folder_whatever_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rule: a visible file links relatively from its own folder (a --junit path in a folder nobody made yet,
    without ``prepare``), so the output folder can be moved or read from anywhere."""
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    paths = OutputPaths(
        tmp_path / "out" / "result.json",
        tmp_path / "ci" / "deep" / "junit.xml",
        tmp_path / "out" / "summary.md",
    )
    write_outputs(_artifact("a"), paths)
    assert os.readlink(paths.junit) == f"../../out/{SETS}/result.json.current/junit"
    assert os.readlink(paths.result) == f"{SETS}/result.json.current/result"
    assert b"case-a" in paths.junit.read_bytes()


def test_a_log_with_bytes_that_are_not_utf8_is_scrubbed_too(tmp_path: Path) -> None:
    """Rule: a server log is read whatever bytes it holds (undecodable ones become U+FFFD) and scrubbed; a log
    that cannot be written back is left as it is, never stopping the run."""
    log = tmp_path / "server.log"
    log.write_bytes(b"\xff\xfe cookie SESSION-abcdef123456\n")
    outputs.rescrub_logs([log], SecretSet(["SESSION-abcdef123456"]))
    assert log.read_text(encoding="utf-8") == "\ufffd\ufffd cookie [REDACTED]\n"


def test_a_log_that_cannot_be_written_back_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "server.log"
    log.write_text("cookie SESSION-abcdef123456\n", encoding="utf-8")

    def refuse(path: Path, text: str) -> Path:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(outputs, "write_atomic", refuse)
    outputs.rescrub_logs([log], SecretSet(["SESSION-abcdef123456"]))
    assert log.read_text(encoding="utf-8") == "cookie SESSION-abcdef123456\n"


def test_a_file_system_without_modes_still_gets_the_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "chmod", refuse)
    paths = temp_paths(tmp_path / "out")
    write_outputs(_artifact("a"), paths)
    assert _visible(paths) == _expected(tmp_path, "a")


def test_the_folder_lock_outlives_the_clean_up_and_the_write(tmp_path: Path) -> None:
    """Rule: the clean-up never removes the folder's lock file, and writing the outputs keeps a lock the command
    took with ``prepare`` (it is given back by ``release``, at the end of the command)."""
    paths = temp_paths(tmp_path / "out")
    prepare(paths)
    write_outputs(_artifact("a"), paths)
    assert paths.store in outputs._LOCKS and (paths.store / ".lock").is_file()
    release(paths)
    prepare(paths)  # the clean-up runs again, holding the lock
    assert (paths.store / ".lock").is_file()
    release(paths)
    assert paths.store not in outputs._LOCKS


def test_a_staged_set_that_cannot_be_written_says_why(tmp_path: Path) -> None:
    blocked = temp_paths(tmp_path / "staged")
    blocked.store.parent.mkdir(parents=True)
    blocked.store.write_text("")
    with pytest.raises(InputError) as caught:
        stage_outputs(_artifact("a"), blocked)
    assert str(caught.value) == f"{blocked.store}: the outputs cannot be written: File exists"


def test_the_since_last_run_block_is_written_and_scrubbed(tmp_path: Path) -> None:
    """Rule: the summary compares with the run before, and what it shows of that run passes the scrubber too
    (the previous result was written before this run learnt its secrets)."""
    secret = "tok-CANARY-prev-123456"
    previous = {**_artifact("z"), "run_id": f"run-{secret}"}
    paths = temp_paths(tmp_path / "out")
    write_outputs(_artifact("a"), paths, secrets=SecretSet([secret]), previous=previous)
    summary = paths.summary.read_text(encoding="utf-8")
    assert "`run-[REDACTED]` (PASS)" in summary and secret not in summary


def test_the_set_is_utf8_whatever_the_locale(tmp_path: Path) -> None:
    """Rule: result, JUnit and summary are UTF-8 even where the locale's encoding is ASCII (``LANG=C``)."""
    import subprocess
    import sys

    out, here = tmp_path / "out", temp_paths(tmp_path / "here")
    artifact = {"project": "café", "run_id": "r", "cases": [{"case_id": "café-1", "suite": "s", "status": "passed"}],
                "decision": {"verdict": "pass", "exit_code": 0}}  # fmt: skip
    write_outputs(artifact, here)  # in this process, for comparison
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    code = (
        "import sys; from pathlib import Path; from qlab.run.outputs import temp_paths, write_outputs; "
        r"write_outputs({'project': 'caf\u00e9', 'run_id': 'r', 'cases': [{'case_id': 'caf\u00e9-1', 'suite': 's', "
        r"'status': 'passed'}], 'decision': {'verdict': 'pass', 'exit_code': 0}}, temp_paths(Path(sys.argv[1])))"
    )
    done = subprocess.run([sys.executable, "-c", code, str(out)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for name in ("result.json", "junit.xml", "summary.md"):
        theirs, ours = (out / name).read_bytes(), (here.result.parent / name).read_bytes()
        assert "café".encode() in theirs and theirs == ours, name
