"""Every command's --help ends with real examples, and each example parses with the command it shows."""

from __future__ import annotations

import shlex
from pathlib import Path

import click
import pytest

from qlab.cli import COMMANDS, cli
from qlab.commands.examples import EXAMPLES


def _commands() -> list[tuple[str, click.Command]]:
    out = []
    for name in COMMANDS:
        command = cli.get_command(click.Context(cli), name)
        assert command is not None, name
        out.append((name, command))
        if isinstance(command, click.Group):
            out += [(f"{name} {sub}", command.commands[sub]) for sub in command.commands]
    return out


@pytest.mark.parametrize(("name", "command"), _commands(), ids=lambda v: v if isinstance(v, str) else "")
def test_help_ends_with_examples(name: str, command: click.Command) -> None:
    text = command.get_help(click.Context(command, info_name=f"qlab {name}"))
    lines = text.rstrip().splitlines()
    examples = EXAMPLES[name]
    assert 1 <= len(examples) <= 2
    assert lines[-1].strip() == examples[-1][0], text
    assert "Examples:" in text


@pytest.mark.parametrize(
    "line", [line for rows in EXAMPLES.values() for line, _ in rows], ids=lambda line: line[:60]
)
def test_each_example_parses(line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    words = shlex.split(line.split(" > ")[0])
    monkeypatch.chdir(tmp_path)
    for word in words:  # the files an example names exist, as they would in the project it is written for
        if word.endswith((".json", ".yaml")):
            (tmp_path / word).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / word).write_text("{}")
    assert words[0] == "qlab"
    command: click.Command = cli
    args = words[1:]
    while (
        isinstance(command, click.Group)
        and args
        and args[0] in (command.list_commands(click.Context(command)))
    ):
        found = command.get_command(click.Context(command), args[0])
        assert found is not None
        command, args = found, args[1:]
    # parsing checks option names, arity, types and choices; nothing runs
    with command.make_context(f"qlab {line}", list(args)) as ctx:
        assert ctx.command is command
    unknown = [w for w in args if w.startswith("--") and w.split("=")[0] not in _option_names(command)]
    assert not unknown, f"{line}: unknown options {unknown}"


def _option_names(command: click.Command) -> set[str]:
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}


def test_every_command_has_examples() -> None:
    assert {name for name, _ in _commands()} == set(EXAMPLES)
