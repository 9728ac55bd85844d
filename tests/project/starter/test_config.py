"""The starter's qlab.yaml: data through the emitter, the measured thresholds with what was measured beside
them, the execute gate commented out with its reason when it is not gated, the learn gate last; it validates
as written."""

from __future__ import annotations

from pathlib import Path

from qlab.collection.model import Tool
from qlab.project import load_project
from qlab.project.scaffold import schema_files, write_files
from qlab.project.starter.cases import search_cases
from qlab.project.starter.config import config_text
from qlab.project.starter.model import Figures, Measured, Starter, Threshold, clean_url


def _tools() -> tuple[Tool, ...]:
    return (
        Tool(
            "listPets", "listPets", "pets", "api", "openapi", summary="List pets.", method="GET", path="/pets"
        ),
        Tool("addPet", "addPet", "pets", "api", "openapi", summary="Add a pet.", method="POST", path="/pets"),
    )


def test_the_measured_config_validates_and_says_what_was_measured(tmp_path: Path) -> None:
    starter = Starter(project="pets", kind="openapi", source="specs/openapi.yaml", spec_label="openapi.yaml",
                      tools=_tools(), base_url="http://127.0.0.1:9")  # fmt: skip
    figures = Figures(
        schema_coverage=0.6123,
        search=Measured({"hit_at_k": 1.0, "top_1": 0.5, "mrr": 0.75}, cases=2),
        execute=None,
        execute_note="Not gated: --offline, no request was sent.",
        thresholds={
            "build": (Threshold("schema_coverage", "0.6123", 0.6123),),
            "search": (
                Threshold("hit_at_k", "1.0", 1.0),
                Threshold("top_1", "0.5", 0.5),
                Threshold("mrr", "0.75", 0.75),
            ),
        },
    )
    text = config_text(starter, profiles=[], auth=None, reads=True, figures=figures, execute_gated=False,
                       execute_note=figures.execute_note)  # fmt: skip
    assert "      - schema_coverage_below: 0.6123  # measured 0.6123 at init; raise me\n" in text
    assert "      hit_at_k: '>= 1.0'  # measured 1.0 at init; keep it\n" in text
    assert "      top_1: '>= 0.5'  # measured 0.5 at init; raise me\n" in text
    assert "  # Not gated: --offline, no request was sent.\n  # - name: execute\n" in text
    assert "base_url: ${PETS_BASE_URL:-http://127.0.0.1:9}" in text
    (tmp_path / "specs").mkdir()
    spec = (
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /pets:\n    get: {operationId: listPets}\n"
    )
    (tmp_path / "specs" / "openapi.yaml").write_text(spec)
    (tmp_path / "gates" / "execute_read").mkdir(parents=True)
    (tmp_path / "gates" / "execute_read" / "reads.yaml").write_text("- {id: r1, query: List pets.}\n")
    write_files(tmp_path, {"qlab.yaml": text.encode(), "gates/aliases.yaml": b"{}\n", **schema_files(),
                           "gates/search_core/operations.yaml": search_cases(_tools(), spec_label="x").encode()},
                force=False)  # fmt: skip
    project = load_project(tmp_path / "qlab.yaml")
    search = next(g for g in project.config.gates if g.name == "search")
    assert [(t.metric, t.value) for t in search.thresholds] == [
        ("hit_at_k", 1.0),
        ("top_1", 0.5),
        ("mrr", 0.75),
    ]
    # the learn gate comes last, so a blocked run in CI leaves its misses as proposals
    assert [g.stage for g in project.config.gates] == ["build", "search", "learn"]


def test_the_measuring_run_has_no_learn_gate() -> None:
    starter = Starter(project="pets", kind="openapi", source="specs/openapi.yaml", spec_label="openapi.yaml",
                      tools=_tools(), base_url="http://127.0.0.1:9")  # fmt: skip
    text = config_text(starter, profiles=[], auth=None, reads=False, figures=None, execute_gated=False)
    assert "stage: learn" not in text


def test_a_base_url_default_carries_no_interpolation_syntax() -> None:
    assert clean_url("https://api.example.com/v1") and clean_url("http://127.0.0.1:8080/a;b?c=d&e=%20")
    for url in ("https://x/${HOME}", "https://x/{region}", "https://x/a}b", "https://x/a b", "https://x/\n",
                "https://x/'", "ftp://x", "https://x/" + "a" * 3000):  # fmt: skip
        assert not clean_url(url), url
