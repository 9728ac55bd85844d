"""The validated, frozen model of ``qlab.yaml`` and of case files.

Built only after the JSON Schema pass (``qlab.project.validate``), so constructors trust the shape. Every
object that came from a file keeps its ``origin`` (file, line, col) so later stages can point back at it
(GitHub annotations, located run-time errors).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

Stage = Literal["build", "search", "select", "plan", "execute", "learn"]
STAGES: tuple[Stage, ...] = ("build", "search", "select", "plan", "execute", "learn")
Mode = Literal["search", "plan", "execute"]
Category = Literal["flow", "step", "skill", "artifact", "evidence", "policy", "regression"]
CATEGORIES: tuple[Category, ...] = ("flow", "step", "skill", "artifact", "evidence", "policy", "regression")
# the recommended suites' cadences
Cadence = Literal[
    "every_search_change", "every_release_candidate", "every_plan_change", "dev_deployment_smoke", "manual"
]
CADENCES: tuple[Cadence, ...] = (
    "every_search_change",
    "every_release_candidate",
    "every_plan_change",
    "dev_deployment_smoke",
    "manual",
)
# a gate that lists no suites covers every suite of the modes its stage handles
STAGE_MODES: dict[str, tuple[str, ...]] = {
    "build": (),
    "search": ("search",),
    "select": ("plan",),
    "plan": ("plan",),
    "execute": ("execute",),
    "learn": (),
}
MutationSafety = Literal["read_only", "allow_mutation"]
GuardMode = Literal["block", "warn"]
# a case's lifecycle: active cases run and gate, draft cases run and report but never gate, archived ones do not run
Lifecycle = Literal["draft", "active", "archived"]
LIFECYCLES: tuple[Lifecycle, ...] = ("draft", "active", "archived")
# the assertion types the engine's stages check, by stage (``qlab.stages.engine_checks``); every other type checks
# the execute stage's response (``qlab.execute.assertions``)
ENGINE_ASSERTIONS: dict[str, frozenset[str]] = {
    "search": frozenset({"top_k_contains", "top_1_is"}),
    "select": frozenset({"selected_target", "not_overridden"}),
    "plan": frozenset({"plan_contains_tool", "plan_tools_equal", "plan_status", "no_user_input_slots"}),
}


def assertion_stage(kind: str) -> str:
    """The stage whose observations an assertion type checks."""
    return next((stage for stage, kinds in ENGINE_ASSERTIONS.items() if kind in kinds), "execute")


# what a suite evaluates (the eval suite's target type)
TargetType = Literal["flow", "skill", "artifact", "evidence", "policy"]
TARGET_TYPES: tuple[TargetType, ...] = ("flow", "skill", "artifact", "evidence", "policy")


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a node was written: 1-based line and column; 0 when unknown."""

    file: str
    line: int = 0
    col: int = 0


NO_ORIGIN = Origin("<memory>")


# --------------------------------------------------------------------------------------------- limits

MiB = 1024 * 1024
MAX_NAME = 64  # characters of a name in qlab.yaml (an environment, a suite …): the schema's maxLength


@dataclass(frozen=True, slots=True)
class Limits:
    """How much qlab reads from outside (``limits`` in qlab.yaml): each cap counts decoded bytes and is enforced
    while reading, so a compression bomb or an endless body stops at it."""

    response_mib: float = 16.0  # one HTTP response an execute case reads (a token endpoint's too)
    spec_mib: float = 64.0  # one spec document; its $ref'd documents share as much again
    spec_timeout_sec: float = 15.0  # the whole fetch of one spec document; its $ref'd ones share as much
    reply_mib: float = 16.0  # one reply of an engine service or an LLM endpoint, one MCP server message

    @property
    def response_bytes(self) -> int:
        return int(self.response_mib * MiB)

    @property
    def spec_bytes(self) -> int:
        return int(self.spec_mib * MiB)

    @property
    def reply_bytes(self) -> int:
        return int(self.reply_mib * MiB)


# --------------------------------------------------------------------------------------------- collection


@dataclass(frozen=True, slots=True)
class Source:
    """One collection source. ``kind`` says which key was used in qlab.yaml.

    - openapi / swagger: ``location`` is a path (relative to qlab.yaml) or an http(s) URL
    - mcp: ``location`` is a saved ``tools/list`` JSON file, or None with ``command``/``args``/``env`` for a live
      stdio server
    - python: ``location`` is ``module`` or ``module:attr``

    ``remote_refs``: the document's ``$ref``s may fetch other documents by URL (off unless qlab.yaml says so);
    ``headers_env``: header name -> environment variable, sent when fetching the source's URL; ``limits``: the
    config's, for reading it.
    """

    name: str
    kind: Literal["openapi", "swagger", "mcp", "python"]
    location: str | None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    origin: Origin = NO_ORIGIN
    remote_refs: bool = False
    headers_env: Mapping[str, str] = field(default_factory=dict)
    limits: Limits = Limits()


@dataclass(frozen=True, slots=True)
class CollectionConfig:
    sources: tuple[Source, ...]
    aliases_file: str | None = None  # reviewed aliases: {tool_id: [alias, ...]}
    auth_profile: str | None = None  # name in auth_profiles; the collection requires auth when set
    cache_dir: str = ".qlab/cache"


# --------------------------------------------------------------------------------------------- auth


@dataclass(frozen=True, slots=True)
class AuthProfile:
    """How to authenticate execute-stage requests. Values never appear here: only where to read them.

    type:
    - bearer: ``token_env`` or ``token_command``
    - api_key: ``header`` or ``query`` name, value from ``value_env``
    - basic: ``username_env``, ``password_env``
    - oauth2_client_credentials: ``token_url``, ``client_id_env``, ``client_secret_env``, ``scopes``
    - headers: ``headers``: header name -> env var name

    ``security_scheme``: the spec's security scheme this profile answers; operation-level ``security`` then
    picks the profiles a request sends (``qlab.execute.auth.profiles_for``).
    """

    name: str
    type: Literal["bearer", "api_key", "basic", "oauth2_client_credentials", "headers"]
    security_scheme: str | None = None
    token_env: str | None = None
    token_command: str | None = None
    header: str | None = None
    query: str | None = None
    value_env: str | None = None
    username_env: str | None = None
    password_env: str | None = None
    token_url: str | None = None
    client_id_env: str | None = None
    client_secret_env: str | None = None
    scopes: tuple[str, ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)
    origin: Origin = NO_ORIGIN

    def env_names(self) -> list[str]:
        """The environment variables this profile reads (names are not secret; their values are)."""
        names = [
            self.token_env,
            self.value_env,
            self.username_env,
            self.password_env,
            self.client_id_env,
            self.client_secret_env,
            *self.headers.values(),
        ]
        return [n for n in names if n]


# --------------------------------------------------------------------------------------------- engine


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """An OpenAI-compatible chat-completions endpoint used as the LLM target source."""

    base_url: str
    model: str
    api_key_env: str | None = None
    temperature: float = 0.0
    timeout_sec: float = 30.0
    cache_dir: str = ".qlab/llm-cache"
    price_per_1k_input: float = 0.0  # USD, for cost recording
    price_per_1k_output: float = 0.0


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """``type: builtin`` (default), ``hybrid`` (builtin + embeddings, the semantic extra), ``http`` (``url``) or
    ``python`` (``object: module:attr``)."""

    type: Literal["builtin", "hybrid", "http", "python"] = "builtin"
    url: str | None = None
    object: str | None = None
    timeout_sec: float = 30.0
    headers: Mapping[str, str] = field(default_factory=dict)  # header -> env var name (http engine)
    llm: LLMConfig | None = None
    limits: Limits = Limits()  # the config's: the size of a reply the engine and its LLM client read


# --------------------------------------------------------------------------------------------- environments


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """A dev server qlab starts before execute cases (Playwright's ``webServer``)."""

    command: str
    url: str  # polled until it answers < 500
    timeout_sec: float = 30.0
    reuse_existing: bool = True
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Environment:
    name: str
    base_url: str
    allowed_hosts: tuple[str, ...] = ()  # hosts mutating requests may reach
    auth: str | None = None  # auth profile name
    server: ServerConfig | None = None
    concurrency: int = 8
    retries: int = 2
    retry_backoff_sec: float = 0.2
    follow_redirects: bool = True
    # the fields scrubbed from its cases' records: its own sensitive_fields and the project's (Config.sensitive_fields)
    sensitive_fields: tuple[str, ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict)  # extra static request headers (non-secret)
    origin: Origin = NO_ORIGIN


def host_allowed(url: str, allowed_hosts: Iterable[str]) -> bool:
    """True when ``url``'s host matches an entry: ``host``, ``host:port`` or ``*.suffix`` (case-insensitive)."""
    parts = urlsplit(url)
    host = parts.hostname  # lower case already
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return False
    if not host:  # nothing to match: fail closed (":80" is no host)
        return False
    for entry in (e.strip().lower() for e in allowed_hosts):
        if not entry:
            continue
        if entry.startswith("*."):
            if host.endswith(entry[1:]):  # ".dev.test": a subdomain, never dev.test itself
                return True
        elif entry == host or (port is not None and entry == f"{host}:{port}"):
            return True
    return False


# --------------------------------------------------------------------------------------------- suites & gates


@dataclass(frozen=True, slots=True)
class Suite:
    name: str
    mode: Mode
    cases: tuple[str, ...]  # globs, relative to qlab.yaml
    category: Category = "flow"
    cadence: Cadence | None = None
    required: bool = True
    must_pass: bool = (
        False  # tolerate no failing case, whatever the gate states (as category regression does)
    )
    critical: tuple[str, ...] = ()  # case ids whose failure/ambiguity always stops the gate
    environment: str | None = None
    k: int = 8  # default Top-K for the suite's cases
    repeat: int = 1  # run each case n times ...
    min_pass: int = 1  # ... and require this many passes
    description: str = ""
    target_type: TargetType | None = None  # what the suite evaluates: flow, skill, artifact, evidence, policy
    target_ref: str | None = None  # which one, e.g. member-delivery-skill@1.2.0
    created_at: str | None = None
    origin: Origin = NO_ORIGIN


@dataclass(frozen=True, slots=True)
class Threshold:
    """``metric op value``, from ``hit_at_k: ">= 0.95"`` or ``{metric: hit_at_k, op: ">=", value: 0.95}``."""

    metric: str
    op: Literal[">=", ">", "<=", "<", "==", "!="]
    value: float
    origin: Origin = NO_ORIGIN

    def holds(self, actual: float) -> bool:
        return {
            ">=": actual >= self.value,
            ">": actual > self.value,
            "<=": actual <= self.value,
            "<": actual < self.value,
            "==": actual == self.value,
            "!=": actual != self.value,
        }[self.op]


@dataclass(frozen=True, slots=True)
class StopCondition:
    """A named stop condition of a stage, with an optional argument.

    Known names: schema_coverage_below (value), expected_target_absent, ambiguous_critical,
    required_fields_unsatisfied, auth_not_ready, mutation_unsafe, assertion_failed, scrub_failed,
    any_failure. ``value`` is the argument (a number) where the name takes one.
    """

    name: str
    value: float | None = None
    origin: Origin = NO_ORIGIN


@dataclass(frozen=True, slots=True)
class Guard:
    """An in-run check at a stage boundary : schema, policy, budget. ``mode`` says block or warn."""

    name: Literal[
        "output_schema",
        "mutation_safety",
        "host_allowlist",
        "scrub",
        "budget",
        "citation_coverage",
        "evidence_quality",
    ]
    mode: GuardMode = "block"


@dataclass(frozen=True, slots=True)
class Gate:
    """A stage gate. ``max_failures``: failing cases each required suite may have (None: what the thresholds
    allow, else none; ``qlab.run.gates``). ``include_manual``: run the ``cadence: manual`` suites it names on every
    run, not only when asked for."""

    name: str
    stage: Stage
    suites: tuple[str, ...] = ()
    thresholds: tuple[Threshold, ...] = ()
    stop_if: tuple[StopCondition, ...] = ()
    guards: tuple[Guard, ...] = ()
    max_failures: int | None = None
    include_manual: bool = False
    origin: Origin = NO_ORIGIN


@dataclass(frozen=True, slots=True)
class Budget:
    """Run budget checked at every stage boundary."""

    max_llm_cost_usd: float | None = None
    max_llm_tokens: int | None = None
    max_duration_sec: float | None = None


# --------------------------------------------------------------------------------------------- governance


@dataclass(frozen=True, slots=True)
class PromotionRule:
    """How to judge a baseline → candidate change of ``change_type``.

    ``suites``: suites compared; ``require``: conditions such as ``no_regression``, ``metric_not_worse``,
    ``plan_target_correct``, ``readiness_improves``, ``shadow_improves``, ``scrub_passes``,
    ``auth_ready``, ``read_assertions_pass``; ``tolerance``: allowed metric drop; ``same``: what must be equal
    between runs (``cases``, ``collection``, ``model``).
    """

    change_type: str
    suites: tuple[str, ...] = ()
    require: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    tolerance: float = 0.0
    bootstrap: bool = False
    same: tuple[str, ...] = ("cases",)
    origin: Origin = NO_ORIGIN


@dataclass(frozen=True, slots=True)
class ReleaseSkill:
    """A skill's five release gates: trigger → functional → policy → regression → human review."""

    name: str
    trigger_cases: str | None = None
    golden_cases: str | None = None
    trigger_precision_min: float = 0.9
    trigger_recall_min: float = 0.9
    functional_pass_min: float = 1.0
    permissions: tuple[str, ...] = ()  # tool ids / families the skill may use
    trigger_phrases: tuple[str, ...] = ()  # triggers.phrases: a query holding one fires the skill
    step_types: tuple[str, ...] = ()  # triggers.step_types: read, write, delete (empty: any)
    max_tool_calls: int | None = None
    max_cost_usd: float | None = None
    max_latency_ms: float | None = None
    regression_suite: str | None = None
    record_file: str = ".qlab/releases.json"
    approvals_file: str = ".qlab/approvals.json"
    origin: Origin = NO_ORIGIN


@dataclass(frozen=True, slots=True)
class LearningConfig:
    suggestions_file: str = ".qlab/suggestions.json"
    proposals_dir: str = "gates/proposals"
    regression_suite: str | None = None
    knowledge_file: str | None = None  # project knowledge (query rewrites, entity defaults) the run applies


@dataclass(frozen=True, slots=True)
class OutputConfig:
    dir: str = ".qlab/out"
    junit: str = "junit.xml"
    result: str = "result.json"
    summary: str = "summary.md"
    history: int = 10  # results of earlier runs kept under dir/history (0: none)
    identity_fields: str = (
        "sensitive"  # "kept": the identity fields (qlab.adapters.scrub.IDENTITY_FIELDS) are not scrubbed
    )


@dataclass(frozen=True, slots=True)
class Config:
    version: int
    project: str
    path: str  # absolute path of qlab.yaml; relative paths in it resolve from its folder
    collection: CollectionConfig
    engine: EngineConfig
    environments: Mapping[str, Environment]
    auth_profiles: Mapping[str, AuthProfile]
    suites: Mapping[str, Suite]  # insertion order = file order
    gates: tuple[Gate, ...]
    promotion: Mapping[str, PromotionRule] = field(default_factory=dict)
    release: Mapping[str, ReleaseSkill] = field(default_factory=dict)
    learning: LearningConfig = LearningConfig()
    budget: Budget = Budget()
    output: OutputConfig = OutputConfig()
    # the fields scrubbed from every output, by key and (a case's provided entity) by value: the identity fields
    # unless output.identity_fields is "kept", and every environment's sensitive_fields
    sensitive_fields: tuple[str, ...] = ()
    limits: Limits = Limits()
    digest: str = ""  # sha256 of the raw config bytes after interpolation
    # sha256 the shards of one matrix must share: the interpolated config, but with each environment's base_url,
    # allowed_hosts and server url/command as written (a port or host read from the environment may differ per
    # shard runner; ``qlab merge`` records which did)
    shard_digest: str = ""
    target_version: str | None = (
        None  # the version the run evaluates (``qlab run --target-version`` overrides)
    )
    # each environment variable qlab.yaml reads (``${VAR}``) with a digest of its value, never the value: a
    # result records them, so a release judged under another value can say which variable differed
    variables: tuple[tuple[str, str], ...] = ()


# --------------------------------------------------------------------------------------------- cases


@dataclass(frozen=True, slots=True)
class Assertion:
    """A typed assertion. ``type`` is a key of ``qlab.execute.assertions`` / the stage assertion registry;
    ``args`` holds the remaining keys (``tool``, ``k``, ``equals``, ``in``, ``path``, ...) as written."""

    type: str
    args: Mapping[str, Any] = field(default_factory=dict)
    origin: Origin = NO_ORIGIN


@dataclass(frozen=True, slots=True)
class CleanupStep:
    """A request run after an execute case, whatever happened. Either a tool call or a raw request."""

    tool: str | None = None
    method: str | None = None
    path: str | None = None
    arguments: Mapping[str, Any] = field(
        default_factory=dict
    )  # may reference captures: "${captures.orderId}"
    expect_status: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Capture:
    name: str
    path: str  # JSONPath into the response body


@dataclass(frozen=True, slots=True)
class ClaimsCheck:
    """Where an execute case's response carries claims and evidence items, and the in-run minimums
    (``qlab.execute.claims``): citation coverage and evidence quality."""

    claims: str = "$.claims"  # JSONPath of the list of claims
    evidence: str = "$.evidence"  # JSONPath of the list of evidence items
    citation_required: bool = True  # every claim must cite an evidence item
    min_citation_coverage: float = 1.0
    min_evidence_quality: float = 0.0


@dataclass(frozen=True, slots=True)
class Case:
    """One case (the search / plan / execute shapes; fields are additive). ``status`` is the case's lifecycle
    (draft, active, archived), not a result."""

    id: str
    mode: Mode
    query: str
    suite: str
    file: str
    origin: Origin
    expected_target: str | None = None
    expected_top_k: int | None = None
    provided_entities: Mapping[str, Any] = field(default_factory=dict)
    llm_target: str | None = None
    mutation_safety: MutationSafety = "read_only"
    cleanup: tuple[CleanupStep, ...] = ()
    captures: tuple[Capture, ...] = ()
    assertions: tuple[Assertion, ...] = ()
    timeout_sec: float = 30.0
    tags: tuple[str, ...] = ()
    flaky: bool = False
    follow_redirects: bool | None = None
    expected_plan_tools: tuple[str, ...] = ()
    description: str = ""
    name: str = ""
    status: Lifecycle = "active"
    created_at: str = ""
    trace: Mapping[str, Any] = field(default_factory=dict)  # the run and case it was proposed from
    claims: ClaimsCheck | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)  # the case as written (for proposals / provenance)
