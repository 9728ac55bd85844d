"""User-facing text names the concepts (acceptance metrics, eval categories, release gates, ...), never the
internal specification documents ("seed 000", "seed 003"): users have never seen those.

Checked: the README, the changelog, docs/, the JSON Schemas' descriptions, the action and example workflows,
the demo project and its scaffold copy, every string constant in qlab's code that is not a docstring, every
command's --help, and a result rendered as summary, HTML and JUnit.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click
import pytest

import artifact_samples as samples
from qlab.cli import COMMANDS, cli
from qlab.report import junit, markdown
from qlab.report.html import render_html

ROOT = Path(__file__).resolve().parents[1]
# "seed 000", "seed 003's", "the seeds", "the seed's block", "seed defaults"; a random seed stays a seed
FORBIDDEN = re.compile(r"(?i)\bseeds?\s*#?\d{3}\b|\bthe seeds\b|\bseed's\b|\bseeds'|\bseed defaults?\b")
TEXT_FILES = sorted(
    {
        ROOT / "README.md",
        ROOT / "CHANGELOG.md",
        ROOT / "action.yml",
        ROOT / "qlab.yaml",
        *ROOT.glob("docs/*.md"),
        *ROOT.glob("schemas/*.json"),
        *ROOT.glob("examples/**/*.yml"),
        *(p for p in ROOT.glob("gates/**/*") if p.is_file()),
        *(p for p in ROOT.glob("runner/qlab/project/scaffold/**/*") if p.is_file()),
    }
)


def _found(text: str) -> list[str]:
    return [m.group(0) for m in FORBIDDEN.finditer(text)]


@pytest.mark.parametrize("path", TEXT_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_user_facing_files(path: Path) -> None:
    assert not _found(path.read_text(encoding="utf-8")), path


def _strings(path: Path) -> list[tuple[int, str]]:
    """Every string constant of a module except docstrings (which reach no output but --help, checked below)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_strings_in_the_code() -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {text[:80]!r}"
        for path in sorted((ROOT / "runner" / "qlab").rglob("*.py"))
        for line, text in _strings(path)
        if _found(text)
    ]
    assert not bad, "\n".join(bad)


def test_every_help_text() -> None:
    for name in COMMANDS:
        command = cli.get_command(click.Context(cli), name)
        assert command is not None
        commands = [command, *(command.commands.values() if isinstance(command, click.Group) else ())]
        for each in commands:
            text = each.get_help(click.Context(each, info_name=f"qlab {name}"))
            assert not _found(text), (name, _found(text))


def test_rendered_reports() -> None:
    artifact = samples.full(samples.result())
    for text in (markdown.render(artifact), render_html([artifact]), junit.render(artifact)):
        assert not _found(text)


def test_the_pattern_catches_what_it_is_for() -> None:
    for text in ("seed 000", "Seed 003's", "(seed 000 stage 1)", "the seed's block", "seed defaults"):
        assert _found(text), text
    for text in (
        "Seed of the paired bootstrap",
        "hash-seed order",
        "the demo API's seed data",
        "randomizes the seed",
    ):
        assert not _found(text), text
