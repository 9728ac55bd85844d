"""The LLM target source against a local OpenAI-compatible chat-completions stub on 127.0.0.1.

The stub stands in for a paid external service (an OpenAI-compatible endpoint): tests may only reach
127.0.0.1, and a real endpoint would cost money and answer differently from run to run. It speaks the same
protocol: ``POST /v1/chat/completions`` with model, messages and temperature, answering ``choices`` and
``usage``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from qlab.contracts.errors import InputError
from qlab.engine.builtin import BuiltinEngine
from qlab.engine.llm import Candidate, LLMClient, parse_target
from qlab.engine.types import LLM_TARGET_KEPT, LLM_TARGET_OVERRIDDEN
from qlab.project.model import LLMConfig

from .helpers import demo_collection
from .stub_servers import serve

KEY = "sk-test-not-a-real-key"


def chat(answer: str, *, prompt_tokens: int = 120, completion_tokens: int = 4) -> Any:
    """A stub that checks the request and answers ``answer``."""

    def handle(path: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
        if path != "/v1/chat/completions":
            return 404, {"error": "not found"}
        if headers.get("authorization") != f"Bearer {KEY}":
            return 401, {"error": "bad key"}
        assert body["temperature"] == 0.0 and body["model"] == "stub-model"
        assert body["messages"][0]["role"] == "system"
        return 200, {
            "id": "chatcmpl-1",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    return handle


def client(url: str, tmp_path: Path, **kw: Any) -> LLMClient:
    config = LLMConfig(
        base_url=f"{url}/v1",
        model="stub-model",
        api_key_env="QLAB_TEST_LLM_KEY",
        cache_dir="llm-cache",
        price_per_1k_input=0.5,
        price_per_1k_output=1.5,
        **kw,
    )
    return LLMClient(config, base_dir=tmp_path, environ={"QLAB_TEST_LLM_KEY": KEY})


CANDIDATES = [
    Candidate("getMemberDeliveryDetail", "Get member delivery detail"),
    Candidate("getMemberDeliveryList"),
]


def test_choice_tokens_cost_and_the_disk_cache(tmp_path: Path) -> None:
    with serve(chat("getMemberDeliveryList")) as (url, seen):
        llm = client(url, tmp_path)
        first = llm.choose("Find the member delivery detail", CANDIDATES, {"memberNo": "M-1001"})
        assert first.target == "getMemberDeliveryList"
        assert first.usage == {
            "prompt_tokens": 120,
            "completion_tokens": 4,
            "total_tokens": 124,
            "cost_usd": pytest.approx(120 / 1000 * 0.5 + 4 / 1000 * 1.5),
            "cached": False,
            "model": "stub-model",
        }
        assert len(seen) == 1
        prompt = seen[0][2]["messages"][1]["content"]
        assert "Find the member delivery detail" in prompt and "- getMemberDeliveryList" in prompt
        assert '"memberNo": "M-1001"' in prompt
        second = llm.choose("Find the member delivery detail", CANDIDATES, {"memberNo": "M-1001"})
        assert len(seen) == 1  # served from the disk cache: the endpoint was not called again
        assert second.target == first.target
        assert second.usage["cached"] is True and second.usage["cost_usd"] == 0.0
        assert second.usage["total_tokens"] == 124
        files = list((tmp_path / "llm-cache").rglob("*.json"))
        assert len(files) == 1 and KEY not in files[0].read_text()
        llm.choose("another query", CANDIDATES, {})
        assert len(seen) == 2  # a different prompt is a different cache entry
        llm.close()
    # a new client (a new run) reads the same cache with the server gone
    again = client(url, tmp_path).choose(
        "Find the member delivery detail", CANDIDATES, {"memberNo": "M-1001"}
    )
    assert again.target == "getMemberDeliveryList" and again.usage["cached"] is True


def test_builtin_engine_asks_the_llm_and_the_guardrails_override_it(tmp_path: Path) -> None:
    with serve(chat("getMemberDeliveryList")) as (url, seen):
        engine = BuiltinEngine(demo_collection(), llm=client(url, tmp_path))
        result = engine.search("Find the member delivery detail", k=5)
        selection = engine.select(
            "Find the member delivery detail", result, entities={"memberNo": "M-1001"}, llm_target=None
        )
        assert selection.llm_target == "getMemberDeliveryList"
        assert selection.selected_target == "getMemberDeliveryDetail"
        assert selection.reason_codes[0] == LLM_TARGET_OVERRIDDEN
        assert selection.llm_usage["total_tokens"] == 124
        # a recorded llm_target wins: the endpoint is not asked
        listed = engine.search("list a member's deliveries", k=5)
        kept = engine.select(
            "list a member's deliveries", listed, entities={}, llm_target="getMemberDeliveryList"
        )
        assert kept.reason_codes == (LLM_TARGET_KEPT,) and kept.llm_usage == {}
        assert len(seen) == 1
        engine.close()


def test_missing_key_bad_status_and_bad_reply_are_input_errors(tmp_path: Path) -> None:
    config = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", api_key_env="QLAB_TEST_LLM_KEY")
    with pytest.raises(InputError, match="QLAB_TEST_LLM_KEY is not set"):
        LLMClient(config, base_dir=tmp_path, environ={}).choose("q", CANDIDATES, {})
    for reply, message in [
        ((500, {"error": "boom"}), "answered 500"),
        ((200, {"choices": []}), re.escape("$.choices[0].message.content: missing")),
        ((200, b"not json"), "not JSON"),
        (
            (200, {"choices": [{"message": {"content": "x"}}], "usage": {"total_tokens": "many"}}),
            "usage.total_tokens",
        ),
    ]:
        with serve(lambda p, h, b, reply=reply: reply) as (url, _), pytest.raises(InputError, match=message):
            client(url, tmp_path).choose(f"q {message}", CANDIDATES, {})
    with pytest.raises(InputError, match="ConnectError"):
        client("http://127.0.0.1:9", tmp_path).choose("q4", CANDIDATES, {})


@pytest.mark.parametrize(
    ("answer", "target"),
    [
        ("getMemberDeliveryList", "getMemberDeliveryList"),
        ("`getMemberDeliveryDetail`.", "getMemberDeliveryDetail"),
        ("getmemberdeliverylist", "getMemberDeliveryList"),
        ("The best fit is getMemberDeliveryDetail because ...", "getMemberDeliveryDetail"),
        ("NONE", None),
        ("", None),
        ("trackDelivery", "trackDelivery"),  # not a candidate: the selector reports llm_target_not_in_top_k
    ],
)
def test_parse_target(answer: str, target: str | None) -> None:
    assert parse_target(answer, CANDIDATES) == target
