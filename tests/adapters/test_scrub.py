"""``qlab.adapters.scrub``: workflow commands made inert in what qlab prints and logs. (The scrubber's forms and key
rules are tested in tests/execute/test_scrub.py.)"""

from __future__ import annotations

import io
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actions_runner import commands
from qlab.adapters.scrub import (
    REDACTED,
    ScrubbedStream,
    Scrubber,
    SecretSet,
    console,
    log_line,
    neutralize_commands,
    watch_console,
    workflow_command,
)

# the commands an attacker wants, in both forms, and the disguises a culture-aware comparison sees through
HOSTILE = [
    "::add-mask::FORGED",
    "::set-output name=decision::pass",
    "::error title=qlab::FORGED",
    "  ::warning::FORGED",
    "\t::notice::FORGED",
    "\u200b::debug::FORGED",
    "\x1b::group::FORGED",
    "\u2028::endgroup::",
    ":\u200b:stop-commands::FORGED",
    "##[add-mask]FORGED",
    "text before ##[set-output name=decision;]pass",
    "##[error]FORGED",
    "#\u200b#[add-mask]FORGED",
    "#\u00ad#\ufeff[set-env name=X;]1",
    "###[error]FORGED",
    "a\r::error::FORGED",
    "a\r\n##[error]FORGED",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_every_form_of_a_workflow_command_is_made_inert(text: str) -> None:
    assert commands(text), "the model must see the command before"  # the test's own premise
    inert = neutralize_commands(text)
    assert commands(inert) == []
    assert inert.replace("\\", "") == text  # visible, and nothing else changed
    assert neutralize_commands(inert) == inert


@pytest.mark.parametrize(
    "text", ["plain", "a: b :: c", "# heading", "issue #12 [link]", "x ::error:: y", "C:\\path", "[#]"]
)
def test_text_that_commands_nothing_is_left_as_it_is(text: str) -> None:
    assert neutralize_commands(text) == text


_PIECES = st.sampled_from(
    [":", "::", "#", "##", "[", "]", " ", "\t", "\r", "\n", "\r\n", "a", "add-mask", "error", "=", ";", "\\",
     "\u200b", "\x1b", "\x00", "\u2028", "\xa0", "\ufeff", "\u00ad", "\u2066", "\ufe0f", "\U000e0041", "%"]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=40).map("".join))
def test_no_text_commands_the_runner_once_made_inert(text: str) -> None:
    inert = neutralize_commands(text)
    assert commands(inert) == []
    assert inert.replace("\\", "") == text.replace("\\", "")
    assert neutralize_commands(inert) == inert


def test_the_console_makes_outside_text_inert_and_keeps_qlab_s_own_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with console():
        print("##", end="", flush=True)  # a command split by a flush is still one line to the runner
        print("[add-mask]FORGED")
        print("::add-mask::FORGED", file=sys.stderr)
        print("progress ", end="")
        workflow_command("::error file=cases/a.yaml,line=3,title=qlab s/a::a case failed ##[add-mask]x")
        print("\r::warning::FORGED", end="\r")
    out, err = capsys.readouterr()
    found = commands(out) + commands(err)
    assert [(c.form, c.name) for c in found] == [("::", "error")], out + err
    assert found[0].data == "a case failed ##\\[add-mask]x"
    assert out.startswith("##\\[add-mask]FORGED\nprogress \n::error ") and err == ":\\:add-mask::FORGED\n"


def test_qlab_s_own_commands_are_scrubbed_too(capsys: pytest.CaptureFixture[str]) -> None:
    secret = "tok-CANARY-annotation-1a2b"
    with console():
        watch_console(SecretSet([secret]))
        workflow_command(f"::error title=qlab::the API said {secret}")
    assert capsys.readouterr().out == f"::error title=qlab::the API said {REDACTED}\n"


def test_without_a_console_a_command_is_printed_as_it_is() -> None:
    inner = io.StringIO()
    stream = ScrubbedStream(inner)
    stream.write("::add-mask::x\n")
    stream.command("::notice::ok")
    assert inner.getvalue() == ":\\:add-mask::x\n::notice::ok\n"


def test_log_lines_are_scrubbed_and_inert() -> None:
    secret = "tok-CANARY-log-3c4d5e"
    line = log_line(f"::add-mask::{secret} ##[error]x", SecretSet([secret]))
    assert line == f":\\:add-mask::{REDACTED} ##\\[error]x" and commands(line) == []
    assert log_line("::error::x") == ":\\:error::x"


def test_sensitive_fields_given_as_an_iterator_are_kept_for_the_key_rule_and_for_later_scrubbers() -> None:
    """Rule: a scrubber reads its sensitive fields once, whatever iterable they come in: the key rule applies them
    and ``fields`` (what a derived scrubber is built with) still names them."""
    clean = Scrubber(frozenset(), sensitive_fields=(f for f in ["userId"]))
    assert clean({"user_id": "u-777", "other": "x"}) == {"user_id": "[REDACTED]", "other": "x"}
    assert clean.fields == ("userId",)
