"""Coverage-guided fuzz (atheris / libFuzzer) of qlab's YAML and spec loaders. By hand, for a bounded time; not CI.

    pip install atheris                                   # CPython 3.8-3.11 wheels on Linux x86-64
    python bench/fuzz_loaders.py yaml   -max_total_time=300
    python bench/fuzz_loaders.py config -max_total_time=300
    python bench/fuzz_loaders.py case   -max_total_time=300
    python bench/fuzz_loaders.py spec   -max_total_time=300
    python bench/fuzz_loaders.py .qlab/fuzz-crashes/spec-crash-<sha1>   # replay a saved input on every target

Targets (each input is the raw bytes of one file):

- ``yaml``: ``qlab.project.yamlio.parse_yaml`` (the one module that wraps pyyaml; config, cases and specs);
- ``config``: ``qlab.project.load_project`` with the input as qlab.yaml (demo project around it);
- ``case``: ``load_project`` with the input as a case file of a minimal project (YAML, JSON and JSONL in turn);
- ``spec``: ``qlab.collection.openapi.load_tools`` with the input as an OpenAPI/Swagger document (YAML or JSON).

The property is the README's: a document gives a model, or a ``qlab.contracts.errors.InputError`` (exit 2) whose message
names the file. Anything else (RecursionError, TypeError, KeyError, an InputError without the file name, ...)
is a finding: libFuzzer stops and saves the input as ``.qlab/fuzz-crashes/<target>-crash-<sha1>``. The seed corpus is the demo project's
qlab.yaml, case files and openapi.yaml, with a dictionary of YAML/JSON/OpenAPI tokens. Results of the runs so
far are in docs/reliability.md.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

try:
    import atheris
except ImportError:  # pragma: no cover - a bench, run by hand
    sys.exit("atheris is not installed: pip install atheris (Linux x86-64, CPython <= 3.11)")

with atheris.instrument_imports(include=["qlab"]):
    from qlab.collection.openapi import load_tools
    from qlab.contracts.errors import InputError
    from qlab.project import load_project
    from qlab.project.scaffold import demo_files
    from qlab.project.yamlio import parse_yaml

WORK = Path(".qlab") / "fuzz-work"  # the projects the targets load, rewritten on every start (git-ignored)
DEMO = demo_files()
MINIMAL = b"""version: 1
project: fuzz
collection: {sources: [{name: demo, openapi: openapi.yaml}]}
suites:
  s: {mode: search, cases: ["cases/*"]}
gates: [{name: search, stage: search, suites: [s]}]
"""
DICTIONARY = [
    ":", ": ", "- ", "[", "]", "{", "}", ",", "&a", "*a", "<<:", "!!str", "!!python/object", "---", "...", "%YAML 1.2",
    "? ", "|", ">", "'", '"', "#", "\\t", "${", "${X:-d}", "null", "true", "~", ".nan", "1e999", "0x1F",
    "version", "project", "collection", "sources", "openapi", "suites", "gates", "mode", "cases", "stage",
    "thresholds", "stop_if", "environments", "base_url", "auth_profiles", "id", "query", "expected_target",
    "assertions", "cleanup", "captures", "type", "paths", "components", "schemas", "parameters", "responses",
    "requestBody", "$ref", "#/components/schemas/", "operationId", "get", "post", "in", "required", "items",
    "properties", "allOf", "swagger", "2.0", "3.0.3", "3.1.0",
]  # fmt: skip


def _write(root: Path, files: dict[str, bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def _expect_located(exc: InputError, name: str) -> None:
    """An InputError is fine when it says which file; an unlocated one is a finding."""
    if name not in str(exc):
        raise AssertionError(f"an InputError that does not name {name}: {exc}") from exc


def target_yaml(data: bytes) -> None:
    text = data.decode("utf-8", errors="replace")
    try:
        parse_yaml(text, "fuzz.yaml")
    except InputError as exc:
        _expect_located(exc, "fuzz.yaml")


def target_config(data: bytes) -> None:
    config = WORK / "demo" / "qlab.yaml"
    config.write_bytes(data)
    try:
        load_project(config, environ={})
    except InputError as exc:
        _expect_located(exc, "qlab.yaml")


_SUFFIXES = (".yaml", ".json", ".jsonl")


def target_case(data: bytes) -> None:
    suffix = _SUFFIXES[len(data) % len(_SUFFIXES)]  # each format gets its share of inputs
    folder = WORK / "minimal" / "cases"
    for old in folder.iterdir():
        old.unlink()
    (folder / f"fuzz{suffix}").write_bytes(data)
    try:
        load_project(WORK / "minimal" / "qlab.yaml", environ={})
    except InputError as exc:
        _expect_located(exc, "fuzz")


def target_spec(data: bytes) -> None:
    suffix = ".json" if data.lstrip()[:1] in (b"{", b"[") else ".yaml"
    path = WORK / "specs" / f"spec{suffix}"
    path.write_bytes(data)
    try:
        load_tools(str(path))
    except InputError as exc:
        _expect_located(exc, "spec")


TARGETS: dict[str, tuple[Callable[[bytes], None], list[bytes]]] = {
    "yaml": (
        target_yaml,
        [DEMO["qlab.yaml"], DEMO["openapi.yaml"], DEMO["gates/execute_mutation/orders.yaml"]],
    ),
    "config": (target_config, [DEMO["qlab.yaml"]]),
    "case": (
        target_case,
        [v for k, v in DEMO.items() if k.startswith("gates/") and k.endswith((".yaml", ".json"))],
    ),
    "spec": (target_spec, [DEMO["openapi.yaml"]]),
}


def _escape(token: str) -> str:
    """A libFuzzer dictionary entry: printable ASCII as is, anything else (and quote, backslash) as \\xNN."""
    return "".join(
        chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\x{b:02X}" for b in token.encode("utf-8")
    )


def _prepare(name: str) -> list[str]:
    """Write the projects the targets load, the seed corpus and the dictionary; returns libFuzzer arguments."""
    _write(WORK / "demo", DEMO)
    _write(WORK / "minimal", {"qlab.yaml": MINIMAL, "openapi.yaml": DEMO["openapi.yaml"]})
    (WORK / "minimal" / "cases").mkdir(exist_ok=True)
    (WORK / "specs").mkdir(exist_ok=True)
    corpus = Path(".qlab") / "fuzz-corpus" / name  # kept between runs; .qlab/ is git-ignored
    corpus.mkdir(parents=True, exist_ok=True)
    for index, seed in enumerate(TARGETS[name][1]):
        (corpus / f"seed-{index}").write_bytes(seed)
    dictionary = WORK / "tokens.dict"
    dictionary.write_text("".join(f'"{_escape(t)}"\n' for t in DICTIONARY), encoding="ascii")
    crashes = Path(".qlab") / "fuzz-crashes"
    crashes.mkdir(parents=True, exist_ok=True)
    return [str(corpus), f"-dict={dictionary}", f"-artifact_prefix={crashes}/{name}-"]


def main(argv: list[str]) -> None:
    if len(argv) < 2 or (argv[1] not in TARGETS and not Path(argv[1]).is_file()):
        sys.exit(f"usage: {argv[0]} {{{'|'.join(TARGETS)}}} [libFuzzer options] | {argv[0]} CRASH_FILE")
    if Path(argv[1]).is_file():  # replay: every target on one saved input
        _prepare("replay")
        data = Path(argv[1]).read_bytes()
        for name, (target, _seeds) in TARGETS.items():
            print(f"{name}: ", end="", flush=True)
            target(data)
            print("ok")
        return
    name = argv[1]
    target = TARGETS[name][0]
    atheris.Setup([argv[0], *_prepare(name), *argv[2:]], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
