"""The LLM target source: an OpenAI-compatible chat-completions endpoint asked to pick one of the Top-K tools.

``engine.llm`` in qlab.yaml names the endpoint (``base_url``, ``model``, ``api_key_env``, temperature 0 by
default). A request is ``POST <base_url>/chat/completions`` with the model, the messages and the temperature;
the API key, read from the environment variable, goes in ``Authorization: Bearer`` and nowhere else.

Responses are cached on disk under ``cache_dir`` by a sha256 of the request content (endpoint, model,
temperature, messages), one JSON file each, so a rerun of the same suite costs nothing and answers the same.
Every call reports its usage: prompt, completion and total tokens, the cost in USD from the configured prices
(0 for an answer served from the cache: nothing was spent), whether it was cached, and the model.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qlab.adapters import http, strictjson
from qlab.contracts.errors import DependencyError, InputError
from qlab.project.model import Limits, LLMConfig

SYSTEM_PROMPT = (
    "You choose the one API operation that fulfils a user's request. "
    "Answer with the operation id only, exactly as listed, or NONE if no operation fits."
)


@dataclass(frozen=True, slots=True)
class Candidate:
    tool_id: str
    summary: str = ""


@dataclass(frozen=True, slots=True)
class Completion:
    content: str
    usage: Mapping[str, Any]  # prompt_tokens, completion_tokens, total_tokens, cost_usd, cached, model


@dataclass(frozen=True, slots=True)
class LLMChoice:
    """The LLM's target (None when it chose nothing usable) and the call's usage."""

    target: str | None
    usage: Mapping[str, Any]
    answer: str = ""


def build_messages(
    query: str, candidates: Sequence[Candidate], entities: Mapping[str, Any]
) -> list[dict[str, str]]:
    lines = [f"Request: {query}"]
    if entities:
        lines.append(f"Known values: {json.dumps(dict(entities), sort_keys=True, default=str)}")
    lines.append("Operations:")
    lines += [f"- {c.tool_id}: {c.summary}" if c.summary else f"- {c.tool_id}" for c in candidates]
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(lines)}]


def parse_target(answer: str, candidates: Sequence[Candidate]) -> str | None:
    """The tool id in an LLM answer: the whole answer, a candidate named in it, or its first word."""
    text = answer.strip().strip("`'\".").strip()
    if not text or text.upper() == "NONE":
        return None
    ids = [c.tool_id for c in candidates]
    if text in ids:
        return text
    lowered = {tool_id.lower(): tool_id for tool_id in ids}
    if text.lower() in lowered:
        return lowered[text.lower()]
    found = [
        (m.start(), tool_id)
        for tool_id in ids
        if (m := re.search(rf"(?<![\w-]){re.escape(tool_id)}(?![\w-])", text)) is not None
    ]
    if found:
        return min(found)[1]
    return text.split()[0].strip("`'\".,:;")


class LLMClient:
    """One endpoint. ``transport`` lets tests inject ``httpx.MockTransport``; ``environ`` the environment."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        base_dir: Path,
        environ: Mapping[str, str] | None = None,
        transport: http.BaseTransport | None = None,
        max_bytes: int = Limits().reply_bytes,
    ) -> None:
        self.config = config
        self.max_bytes = max_bytes
        self.cache_dir = (
            Path(config.cache_dir) if Path(config.cache_dir).is_absolute() else base_dir / config.cache_dir
        )
        self._environ = os.environ if environ is None else environ
        self.transport = transport
        self.http: http.Client | None = None

    @property
    def url(self) -> str:
        return self.config.base_url.rstrip("/") + "/chat/completions"

    def _headers(self) -> dict[str, str]:
        name = self.config.api_key_env
        if not name:
            return {}
        key = self._environ.get(name)
        if not key:
            raise InputError(
                f"engine.llm.api_key_env: the environment variable {name} is not set; "
                "export the API key there, or remove api_key_env for an endpoint without a key"
            )
        return {"Authorization": f"Bearer {key}"}

    def cache_key(self, messages: Sequence[Mapping[str, str]]) -> str:
        body = {
            "url": self.url,
            "model": self.config.model,
            "temperature": self.config.temperature,
            "messages": list(messages),
        }
        return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()

    def complete(self, messages: Sequence[Mapping[str, str]]) -> Completion:
        """The assistant's answer to ``messages``, from the cache or the endpoint."""
        key = self.cache_key(messages)
        path = self.cache_dir / key[:2] / f"{key}.json"
        cached = self._read_cache(path)
        if cached is not None:
            content, tokens = cached
            return Completion(content, self._usage(tokens, cached=True))
        content, tokens = self._call(messages)
        self._write_cache(path, content, tokens)
        return Completion(content, self._usage(tokens, cached=False))

    def choose(self, query: str, candidates: Sequence[Candidate], entities: Mapping[str, Any]) -> LLMChoice:
        """Ask the endpoint which candidate fulfils ``query``."""
        completion = self.complete(build_messages(query, candidates, entities))
        return LLMChoice(parse_target(completion.content, candidates), completion.usage, completion.content)

    def close(self) -> None:
        if self.http is not None:
            self.http.close()
            self.http = None

    # ----------------------------------------------------------------------------------------- internals

    def _usage(self, tokens: Mapping[str, int], *, cached: bool) -> dict[str, Any]:
        prompt, completion = tokens.get("prompt_tokens", 0), tokens.get("completion_tokens", 0)
        cost = (
            prompt / 1000 * self.config.price_per_1k_input
            + completion / 1000 * self.config.price_per_1k_output
        )
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": tokens.get("total_tokens", prompt + completion),
            "cost_usd": 0.0 if cached else round(cost, 8),
            "cached": cached,
            "model": self.config.model,
        }

    def _call(self, messages: Sequence[Mapping[str, str]]) -> tuple[str, dict[str, int]]:
        if self.http is None:
            self.http = http.make_client(timeout=self.config.timeout_sec, transport=self.transport)
        body = {
            "model": self.config.model,
            "messages": list(messages),
            "temperature": self.config.temperature,
        }
        headers = self._headers()
        try:
            response, reply = http.call(
                self.http, "POST", self.url, json=body, headers=headers, max_bytes=self.max_bytes
            )
        except http.BodyTooLarge as exc:
            raise InputError(f"LLM endpoint {self.url}: {exc} (limits.reply_mib)") from None
        except (
            http.HTTPError
        ) as exc:  # the endpoint is down: qlab cannot judge the case (exit 2, not a block)
            raise DependencyError(
                f"LLM endpoint {self.url}: {type(exc).__name__}: {exc}", reason="llm_unreachable"
            ) from None
        if response.status_code >= 400:
            raise DependencyError(
                f"LLM endpoint {self.url} answered {response.status_code}: {_excerpt(reply, 200)}",
                reason="llm_unreachable",
            )
        try:
            data = strictjson.json_of(reply)
        except (ValueError, RecursionError) as exc:
            raise InputError(f"LLM endpoint {self.url}: $: the reply is not JSON ({exc})") from None
        return _content(data, self.url), _tokens(data, self.url)

    def _read_cache(self, path: Path) -> tuple[str, dict[str, int]] | None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return str(data["content"]), {k: int(v) for k, v in data["usage"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # absent or unreadable: ask the endpoint again

    def _write_cache(self, path: Path, content: str, tokens: Mapping[str, int]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(
            json.dumps({"model": self.config.model, "content": content, "usage": dict(tokens)})
        )
        os.replace(temporary, path)  # atomic: a concurrent reader sees the old state or the whole file


def _excerpt(body: bytes, size: int) -> str:
    return body[:size].decode("utf-8", "replace")


def _content(data: Any, url: str) -> str:
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise InputError(f"LLM endpoint {url}: $.choices[0].message.content: missing") from None
    if not isinstance(content, str):
        raise InputError(f"LLM endpoint {url}: $.choices[0].message.content: expected a string")
    return content


def _tokens(data: Any, url: str) -> dict[str, int]:
    usage = data.get("usage") if isinstance(data, Mapping) else None
    if usage is None:
        return {}
    if not isinstance(usage, Mapping):
        raise InputError(f"LLM endpoint {url}: $.usage: expected an object")
    out = {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = usage.get(key)
        if value is not None:
            if not isinstance(value, int) or isinstance(value, bool):
                raise InputError(f"LLM endpoint {url}: $.usage.{key}: expected an integer")
            out[key] = value
    return out
