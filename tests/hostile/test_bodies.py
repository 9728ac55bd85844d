"""Rule: every body qlab reads has a cap of decoded bytes, enforced while it streams, and one total deadline —
an API's responses, specs and ``$ref``'d documents, an LLM's and an engine's replies, a live MCP server's
messages. Over the cap: ``response_too_large`` for a case, an ERROR for a spec. A compression bomb (gzip, and
``gzip, gzip``), an endless body and a body dripping one byte a second all stop; the peak RSS of the qlab
process stays under ``MEMORY_BOUND_MIB`` whatever the server sends (measured with ``wait4``).

On 6b179e1 a 1 GiB gzip response took the process past 13 GiB and a crash (exit 3), a spec dripping one byte
a second ran past its documented 15 s, and a live MCP server's endless message grew until the 60 s timeout.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
import yaml

from hostile.project import MEMORY_BOUND_MIB, api_project, github_output, run, spec_project
from hostile.server import HostileServer
from hostile.specs import SPECS, write_local
from qlab.adapters import http
from reliability.project import Op, reasons

MCP_SERVER = Path(__file__).with_name("mcp_server.py")
MiB = 1024 * 1024
CAP = 4 * MiB
DEADLINE_SEC = 2.0
SLACK_SEC = 6.0  # a loaded machine's scheduling, never the server's pace: the drip would go on for ever


@pytest.mark.parametrize("attack", ["gzip-bomb/512", "gzip-gzip/1024", "endless"])
def test_a_body_over_the_cap_stops_at_the_cap(hostile: HostileServer, attack: str) -> None:
    with http.make_client(timeout=30) as client, pytest.raises(http.BodyTooLarge) as caught:
        http.call(client, "GET", f"{hostile.url}/{attack}", max_bytes=CAP)
    assert caught.value.limit == CAP


@pytest.mark.parametrize("attack", ["drip/0.5", "drip-headers/0.5", "hang", "endless-empty-gzip"])
def test_a_body_that_never_ends_stops_at_the_deadline(hostile: HostileServer, attack: str) -> None:
    """Not a per-read timeout: every read of a drip returns within it, so only a total deadline stops it (as it
    stops a gzip stream of empty blocks, which grows no decoded byte)."""
    started = time.monotonic()
    with http.make_client(timeout=DEADLINE_SEC) as client, pytest.raises(http.TimeoutException):
        http.call(client, "GET", f"{hostile.url}/{attack}", max_bytes=CAP)
    assert time.monotonic() - started < DEADLINE_SEC + SLACK_SEC


def test_a_body_within_the_cap_is_decoded_through_each_encoding(hostile: HostileServer) -> None:
    with http.make_client() as client:
        response, body = http.call(client, "GET", f"{hostile.url}/gzip-gzip/1", max_bytes=CAP)
    assert response.headers["content-encoding"] == "gzip, gzip"  # what assertions see is what was sent
    assert len(body) == MiB + len('{"data": ""}') and body.startswith(b'{"data": "000')


def test_execute_responses_end_as_classified_case_failures_in_bounded_memory(
    tmp_path: Path, hostile: HostileServer
) -> None:
    ops = [
        Op("downloadArchive", "GET", "/gzip-bomb/1024", "Download the compressed archive"),
        Op("downloadExport", "GET", "/gzip-gzip/4096", "Download the doubly packed export"),
        Op("streamFeed", "GET", "/endless", "Stream the endless feed"),
        Op("waitReport", "GET", "/drip/1", "Wait for the dripping report"),
        Op("waitHeaders", "GET", "/drip-headers/1", "Wait for the dripping headers"),
        Op("waitEmpty", "GET", "/endless-empty-gzip", "Wait for the empty stream"),
    ]
    config = api_project(tmp_path / "p", hostile.url, ops, timeout_sec=3)
    done = run(config)
    assert done.code == 1, done.console  # the gate blocked: a verdict on these answers, not a crash
    assert reasons(config.parent / "out" / "result.json") == {
        "downloadArchive": ("failed", "response_too_large"),
        "downloadExport": ("failed", "response_too_large"),
        "streamFeed": ("failed", "response_too_large"),
        "waitReport": ("failed", "timeout"),
        "waitHeaders": ("failed", "timeout"),
        "waitEmpty": ("failed", "timeout"),
    }
    assert "larger than 16 MiB, decoded (limits.response_mib)" in done.console
    assert done.peak_rss_mib < MEMORY_BOUND_MIB, done.peak_rss_mib
    print(f"execute responses: peak RSS {done.peak_rss_mib:.0f} MiB")


def test_the_response_cap_is_configurable(tmp_path: Path, hostile: HostileServer) -> None:
    ops = [Op("downloadArchive", "GET", "/gzip-bomb/2", "Download the compressed archive")]
    config = api_project(tmp_path / "p", hostile.url, ops, extra={"limits": {"response_mib": 1}})
    done = run(config)
    assert reasons(config.parent / "out" / "result.json") == {
        "downloadArchive": ("failed", "response_too_large")
    }, done.console
    config = api_project(tmp_path / "q", hostile.url, ops, extra={"limits": {"response_mib": 3}})
    done = run(config)
    assert done.code == 0, done.console


@pytest.mark.parametrize(
    ("attack", "said"),
    [
        ("gzip-bomb/1024", "larger than 64 MiB (limits.spec_mib)"),
        ("gzip-gzip/4096", "larger than 64 MiB (limits.spec_mib)"),
        ("endless", "larger than 64 MiB (limits.spec_mib)"),
        ("drip/1", "not fetched within 3s (limits.spec_timeout_sec)"),
        ("drip-headers/1", "not fetched within 3s (limits.spec_timeout_sec)"),
    ],
)
def test_a_spec_fetch_over_its_cap_or_deadline_is_an_error(
    tmp_path: Path, hostile: HostileServer, attack: str, said: str
) -> None:
    config = spec_project(tmp_path / "p", f"{hostile.url}/{attack}", limits={"spec_timeout_sec": 3})
    done = run(config)
    assert done.code == 2 and "ERROR" in done.console and said in done.console, done.console
    assert github_output(config)["decision"] == "error"
    assert done.seconds < 3 + 20  # a process start and a run, then the drip's deadline: not the drip's pace
    assert done.peak_rss_mib < MEMORY_BOUND_MIB, done.peak_rss_mib
    print(f"spec fetch {attack}: peak RSS {done.peak_rss_mib:.0f} MiB in {done.seconds:.1f} s")


@pytest.mark.parametrize(
    ("name", "said"), [("bomb-ref", "larger than 64 MiB"), ("hang-ref", "not fetched within 3s")]
)
def test_a_remote_ref_over_its_cap_or_deadline_is_an_error(
    tmp_path: Path, hostile: HostileServer, name: str, said: str
) -> None:
    """With ``remote_refs: true`` (a spec the team trusts), a ``$ref``'d document is bounded like the spec."""
    config = spec_project(
        tmp_path / "p", hostile.spec(name), source={"remote_refs": True}, limits={"spec_timeout_sec": 3}
    )
    done = run(config)
    assert done.code == 2 and said in done.console and "$ref" in done.console, done.console
    assert done.peak_rss_mib < MEMORY_BOUND_MIB, done.peak_rss_mib
    print(f"remote $ref {name}: peak RSS {done.peak_rss_mib:.0f} MiB")


@pytest.mark.parametrize("name", ["many-refs", "slow-refs"])
def test_the_documents_of_remote_refs_share_the_caps(
    tmp_path: Path, hostile: HostileServer, name: str
) -> None:
    """Each document within the caps, but not all of them together: the spec's refs cannot add up to an
    unbounded read (ten 10 MiB documents, or ten that take 1.5 s each against a 3 s deadline)."""
    config = spec_project(
        tmp_path / "p", hostile.spec(name), source={"remote_refs": True}, limits={"spec_timeout_sec": 3}
    )
    done = run(config)
    assert done.code == 2 and "together" in done.console and "$ref" in done.console, done.console
    assert done.seconds < 3 + 20  # the shared deadline, not ten documents' pace
    assert done.peak_rss_mib < MEMORY_BOUND_MIB, done.peak_rss_mib
    print(f"remote $refs {name}: peak RSS {done.peak_rss_mib:.0f} MiB in {done.seconds:.1f} s")


def _local_spec(tmp_path: Path, hostile: HostileServer) -> Path:
    return write_local(tmp_path / "spec", SPECS["valid"](hostile.url))


def test_an_llm_reply_over_its_cap_fails_the_case_in_bounded_memory(
    tmp_path: Path, hostile: HostileServer
) -> None:
    llm = {"base_url": f"{hostile.url}/gzip-bomb/2048", "model": "m", "cache_dir": "llm-cache"}
    config = spec_project(
        tmp_path / "p", str(_local_spec(tmp_path, hostile)), engine={"type": "builtin", "llm": llm}
    )
    data = yaml.safe_load(config.read_text())
    data["suites"] = {"plans": {"mode": "plan", "cases": ["cases.yaml"]}}
    data["gates"] = [{"name": "select", "stage": "select", "suites": ["plans"]}]
    config.write_text(yaml.safe_dump(data))
    done = run(config)
    assert done.code == 1 and "larger than 16 MiB, decoded (limits.reply_mib)" in done.console, done.console
    assert reasons(config.parent / "out" / "result.json") == {"find-items": ("error", "engine_error")}
    assert done.peak_rss_mib < MEMORY_BOUND_MIB, done.peak_rss_mib
    print(f"LLM reply: peak RSS {done.peak_rss_mib:.0f} MiB")


def test_an_engine_reply_over_its_cap_fails_the_case_in_bounded_memory(
    tmp_path: Path, hostile: HostileServer
) -> None:
    engine = {"type": "http", "url": f"{hostile.url}/gzip-gzip/4096"}
    config = spec_project(tmp_path / "p", str(_local_spec(tmp_path, hostile)), engine=engine)
    done = run(config)
    assert done.code == 1 and "larger than 16 MiB, decoded (limits.reply_mib)" in done.console, done.console
    assert reasons(config.parent / "out" / "result.json") == {"find-items": ("error", "engine_error")}
    assert done.peak_rss_mib < MEMORY_BOUND_MIB, done.peak_rss_mib
    print(f"engine reply: peak RSS {done.peak_rss_mib:.0f} MiB")


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("huge-message", "wrote a message larger than 16 MiB (limits.reply_mib)"),
        ("endless-pages", "wrote more than 64 MiB in all (limits.spec_mib)"),
    ],
)
def test_a_live_mcp_server_that_floods_is_stopped_in_bounded_memory(
    tmp_path: Path, mode: str, said: str
) -> None:
    pytest.importorskip("mcp", reason="the MCP SDK is the mcp extra: pip install 'qlab[mcp]'")
    config = spec_project(tmp_path / "p", "unused.json")
    data = yaml.safe_load(config.read_text())
    data["collection"]["sources"] = [
        {"name": "tools", "mcp": {"command": sys.executable, "args": [str(MCP_SERVER), mode]}}
    ]
    config.write_text(yaml.safe_dump(data))
    done = run(config)
    assert done.code == 2 and said in done.console and "qlab stopped it" in done.console, done.console
    assert done.peak_rss_mib < MEMORY_BOUND_MIB, done.peak_rss_mib
    print(f"MCP {mode}: peak RSS {done.peak_rss_mib:.0f} MiB")
