"""Property-based tests of the config and case loader: any document gives a valid Project, or a ConfigError
whose every diagnostic names the file (and a line and column where it has one) — never another exception.

Inputs: random structures dumped as YAML and JSON, random bytes, random unicode, deep nesting, and mutations
(byte-level and structural) of the real demo qlab.yaml and its case files. A sample goes through the CLI
(``qlab validate``), in process and in a subprocess: exit 0 or 2, never 3, never a traceback.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from qlab.cli import main
from qlab.contracts.errors import ConfigError, InputError
from qlab.project import load_project
from qlab.project.load import Project
from qlab.project.model import Config
from qlab.project.scaffold import demo_files
from reliability.generators import (
    BYTES,
    SETTINGS,
    UNICODE,
    deep,
    documents,
    note_outcome,
    text_mutation,
    to_json,
    to_yaml,
    tree_mutation,
)

DEMO = demo_files()
CONFIG = DEMO["qlab.yaml"]
CASE_FILE = "gates/execute_mutation/orders.yaml"  # the richest case file: captures, cleanup, assertions
MINIMAL = b"""version: 1
project: fuzz
collection: {sources: [{name: demo, openapi: openapi.yaml}]}
suites:
  s: {mode: search, cases: ["cases/*"]}
gates: [{name: search, stage: search, suites: [s]}]
"""


def _write(root: Path, files: dict[str, bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo project (what ``qlab init`` writes); each example swaps one file and puts it back."""
    root = tmp_path_factory.mktemp("demo")
    _write(root, DEMO)
    return root


@pytest.fixture(scope="module")
def minimal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One search suite whose glob takes any file under cases/ (YAML, JSON, JSONL)."""
    root = tmp_path_factory.mktemp("minimal")
    _write(root, {"qlab.yaml": MINIMAL, "openapi.yaml": DEMO["openapi.yaml"], "cases/seed.yaml": b"[]\n"})
    (root / "cases" / "seed.yaml").unlink()
    return root


@contextlib.contextmanager
def swapped(path: Path, content: bytes) -> Iterator[Path]:
    """``path`` holds ``content`` for the block, then what it held before (or nothing)."""
    before = path.read_bytes() if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    try:
        yield path
    finally:
        if before is None:
            path.unlink()
        else:
            path.write_bytes(before)


def outcome(config: Path, written: Path) -> str:
    """``valid`` or ``invalid``; fails the test on anything but a Project or a located ConfigError."""
    try:
        project = load_project(config, environ={})
    except ConfigError as exc:
        errors = [d for d in exc.diagnostics if d.severity == "error"]
        assert errors, f"a ConfigError without an error diagnostic: {exc}"
        for d in errors:
            assert d.file, d
            assert d.line >= 0 and d.col >= 0, d
            # every diagnostic names a file of the project (the one we broke, or one it references)
            named = Path(d.file)
            assert named == written or named.is_relative_to(config.parent) or named.name == written.name, d
            assert d.render().startswith(d.file), d
        assert any(Path(d.file) == written for d in errors) or written.name != "qlab.yaml", exc
        note_outcome("invalid (ConfigError, exit 2)")
        return "invalid"
    assert isinstance(project, Project) and isinstance(project.config, Config)
    note_outcome("valid Project")
    return "valid"


def cli_validate(config: Path) -> tuple[int, str, str]:
    """``qlab validate --config`` in process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exit_:
        main(["validate", "--config", str(config)])
    code = exit_.value.code
    return (code if isinstance(code, int) else 0), out.getvalue(), err.getvalue()


def assert_clean_exit(code: int, stderr: str, file: Path) -> None:
    assert code in (0, 2), stderr
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    if code == 2:
        assert str(file) in stderr or file.name in stderr, stderr


# ------------------------------------------------------------------------------------------------ qlab.yaml


@SETTINGS
@given(content=documents(to_yaml) | documents(to_json))
def test_random_documents_as_qlab_yaml(demo: Path, content: bytes) -> None:
    config = demo / "qlab.yaml"
    with swapped(config, content):
        outcome(config, config)


@SETTINGS
@given(content=BYTES | UNICODE | deep())
def test_random_bytes_unicode_and_deep_nesting_as_qlab_yaml(demo: Path, content: bytes) -> None:
    config = demo / "qlab.yaml"
    with swapped(config, content):
        outcome(config, config)


@SETTINGS
@given(content=text_mutation(CONFIG))
def test_byte_mutations_of_the_demo_qlab_yaml(demo: Path, content: bytes) -> None:
    config = demo / "qlab.yaml"
    with swapped(config, content):
        outcome(config, config)


@SETTINGS
@given(content=tree_mutation(yaml.safe_load(CONFIG), to_yaml))
def test_structural_mutations_of_the_demo_qlab_yaml_via_the_cli(demo: Path, content: bytes) -> None:
    config = demo / "qlab.yaml"
    with swapped(config, content):
        expected = outcome(config, config)
        code, _out, err = cli_validate(config)
        assert_clean_exit(code, err, config)
        assert (code == 0) == (expected == "valid"), err


# ------------------------------------------------------------------------------------------------ case files


@SETTINGS
@given(content=text_mutation(DEMO[CASE_FILE]) | tree_mutation(yaml.safe_load(DEMO[CASE_FILE]), to_yaml))
def test_mutations_of_a_demo_case_file(demo: Path, content: bytes) -> None:
    case_file = demo / CASE_FILE
    with swapped(case_file, content):
        outcome(demo / "qlab.yaml", case_file)


@SETTINGS
@given(
    suffix=st.sampled_from([".yaml", ".json", ".jsonl"]),
    content=documents(to_yaml) | documents(to_json) | BYTES | UNICODE | deep(),
)
def test_random_case_files_in_every_format(minimal: Path, suffix: str, content: bytes) -> None:
    case_file = minimal / "cases" / f"fuzz{suffix}"
    with swapped(case_file, content):
        outcome(minimal / "qlab.yaml", case_file)
        code, _out, err = cli_validate(minimal / "qlab.yaml")
        assert_clean_exit(code, err, case_file)


@SETTINGS
@given(
    cases=st.lists(
        st.fixed_dictionaries(
            {"id": st.text(max_size=8), "query": st.text(max_size=20)},
            optional={
                "expected_target": st.text(max_size=10) | st.none(),
                "mode": st.sampled_from(["search", "plan", "execute", "nope"]),
                "assertions": st.lists(
                    st.dictionaries(
                        st.sampled_from(["type", "path", "in", "k", "tool"]),
                        st.text(max_size=5) | st.integers(),
                    ),
                    max_size=3,
                ),
                "timeout_sec": st.integers(-5, 5) | st.floats(allow_nan=True),
                "tags": st.lists(st.text(max_size=5)) | st.text(),
            },
        ),
        max_size=6,
    ),
    as_json=st.booleans(),
)
def test_case_shaped_documents(minimal: Path, cases: list[dict[str, object]], as_json: bool) -> None:
    """Documents that look like case lists (ids, queries, assertions) reach the semantic checks."""
    case_file = minimal / "cases" / ("shaped.json" if as_json else "shaped.yaml")
    with swapped(case_file, to_json(cases) if as_json else to_yaml(cases)):
        outcome(minimal / "qlab.yaml", case_file)


# ------------------------------------------------------------------------------------------------ subprocess sample

SAMPLE = {
    "binary.yaml": b"\x00\x01\x02\xff\xfe",
    "latin1.yaml": "project: caf\xe9\n".encode("latin-1"),
    "utf16.yaml": "version: 1\n".encode("utf-16"),
    "deep-flow.yaml": b"[" * 5000 + b"]" * 5000,
    "deep-block.yaml": "".join(f"{'  ' * i}k:\n" for i in range(400)).encode(),
    "alias-bomb.yaml": b'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n'
    b"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n",
    "python-tag.yaml": b"version: !!python/object/apply:os.system ['echo pwned']\n",
    "tab-indent.yaml": b"version: 1\nsuites:\n\tx: 1\n",
    "empty.yaml": b"",
    "scalar.yaml": b"42\n",
    "truncated.yaml": CONFIG[: len(CONFIG) // 2],
    "unset-var.yaml": CONFIG.replace(b"${QLAB_DEMO_PORT:-8765}", b"${QLAB_NO_SUCH_VAR}"),
}


@pytest.mark.parametrize("name", sorted(SAMPLE))
def test_subprocess_sample_exits_2_with_the_file_named(tmp_path: Path, name: str) -> None:
    _write(tmp_path, DEMO)
    config = tmp_path / "qlab.yaml"
    config.write_bytes(SAMPLE[name])
    done = subprocess.run(
        [sys.executable, "-m", "qlab", "validate", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert_clean_exit(done.returncode, done.stderr, config)
    assert not (tmp_path / "pwned").exists()


def test_input_error_is_the_root_of_every_refusal() -> None:
    """The property tests accept ConfigError only; it is an InputError, so the CLI maps it to exit 2."""
    assert issubclass(ConfigError, InputError) and ConfigError([]).exit_code == 2
