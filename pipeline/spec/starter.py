"""The annotated spec `loadproof init` writes: what was found in the log and at the target, as YAML
text with a comment beside each value saying where it came from.

This module only renders (facts in, text out); pipeline/workload/init_spec.py finds the facts and
checks that `load_spec` accepts the text before it is written. The text is a jinja2 template, not
a YAML dump, so the comments stay beside their values. Every string goes in as a JSON string, which
YAML reads as the same double-quoted scalar, so no value can break the document.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import jinja2

from pipeline.spec import Sla
from pipeline.spec.claim import Tolerance
from pipeline.spec.workload import Workload

MIN_REPLAY_BOUND_S = 60.0  # max_duration_s is never below this, whatever the window
REPLAY_BOUND_WINDOWS = 3.0  # ... else this many windows: session turns and slow replies run past the window
DEFAULT_MAX_REJECT_RATE = float(Workload.model_fields["max_reject_rate"].default)  # the spec's own default
EDGE_SHARE = 1 / 12  # warm-up and cool-down: each this share of the window (the demo's 5 s of 60 s)
COMMENT_COLUMN = 34  # where the comments beside values start, as in examples/demo.yaml
CANDIDATE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")  # what a candidate name may not hold (pipeline/spec/candidates.py)


@dataclass(frozen=True)
class LoggedLatency:
    """One latency the log recorded (end − start, or first token − start): its p95 over n requests."""

    n: int
    p95_ms: float

    @property
    def suggested_ms(self) -> float:
        return round_up(self.p95_ms)


@dataclass(frozen=True)
class LogFacts:
    path: str  # as the spec writes it: relative to the spec's folder
    format: str
    detection: str  # how the format was chosen, in words
    columns: dict[str, str] | None  # a csv/parquet column mapping, as given
    accepted: int
    rejected: int
    first_arrival: str
    last_arrival: str
    window_s: float
    window_start: str
    window_end: str
    window_requests: int  # requests in the busiest window, before max_requests
    max_requests: int
    has_text: bool  # any request carries its messages (else prompts are synthetic)
    session_requests: int  # requests with a session id
    e2e: LoggedLatency | None = None
    ttft: LoggedLatency | None = None
    window_note: str | None = None  # why the window is as long as it is (None: given with --window-s)
    shards: int = 1  # client processes for the window's peak in flight (workload.replay.shards)
    shards_note: str = "the log records no latency to size it by: shards: auto sizes it at run time"

    @property
    def reject_share(self) -> float:
        total = self.accepted + self.rejected
        return self.rejected / total if total else 0.0


@dataclass(frozen=True)
class CandidateFacts:
    target: str  # --target as given
    base_url: str  # the OpenAI base URL (…/v1)
    models: tuple[str, ...]  # the ids GET /v1/models listed, in its order
    api_key_env: str | None = None

    @property
    def model(self) -> str:
        return self.models[0]

    @property
    def name(self) -> str:
        return CANDIDATE_NAME.sub("-", self.model).strip("-.") or "candidate"


@dataclass(frozen=True)
class StarterFacts:
    log: LogFacts
    candidate: CandidateFacts
    written_on: str  # the date, for the header
    spec_file: str  # the spec's own name, for the `loadproof run` line


def round_up(value: float) -> float:
    """`value` rounded up to two significant digits (8234.5 → 8300, 412 → 420, 0.213 → 0.22)."""
    if value <= 0:
        return value
    step = 10.0 ** (math.floor(math.log10(value)) - 1)
    return round(math.ceil(value / step - 1e-9) * step, 10)


def max_reject_rate(log: LogFacts) -> float:
    """The spec's default (0.05), or the log's own reject share rounded up when it is higher, so the
    run's blocking reject-rate check does not stop on the log init was given (the comment says so)."""
    return max(DEFAULT_MAX_REJECT_RATE, round_up(log.reject_share))


def render_starter_spec(facts: StarterFacts) -> str:
    environment = jinja2.Environment(
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True
    )
    environment.filters["q"] = json.dumps  # a JSON string is a YAML double-quoted scalar
    environment.filters["num"] = _number
    window = facts.log.window_s
    edge = round(window * EDGE_SHARE, 1)
    text = environment.from_string(TEMPLATE).render(
        facts=facts,
        log=facts.log,
        candidate=facts.candidate,
        edge_s=edge,
        max_duration_s=max(MIN_REPLAY_BOUND_S, REPLAY_BOUND_WINDOWS * window),
        max_reject_rate=max_reject_rate(facts.log),
        claim_figure=_claim_figure(facts.log),
        model_note=_model_note(facts.candidate),
        reject_note=_reject_note(facts.log),
        max_requests_note=_max_requests_note(facts.log),
        bound_note=f"a bound: {REPLAY_BOUND_WINDOWS:g} windows, at least {MIN_REPLAY_BOUND_S:g} s (turns run past it)",
        latency_note=_latency_note,
        sla_defaults=Sla(),
        tolerances=[(key, field.default) for key, field in Tolerance.model_fields.items()],
    )
    return "\n".join(_aligned(line) for line in text.split("\n"))


def _aligned(line: str) -> str:
    """A value's comment (after a tab in the template) starts at COMMENT_COLUMN, or two spaces on."""
    code, tab, comment = line.partition("\t")
    return f"{code.ljust(COMMENT_COLUMN - 2)}  {comment}" if tab else line


def _model_note(candidate: CandidateFacts) -> str:
    if len(candidate.models) == 1:
        return "the one model GET /models lists"
    return f"the first of the {len(candidate.models)} models GET /models lists; the others: " + ", ".join(
        candidate.models[1:]
    )


def _reject_note(log: LogFacts) -> str:
    lines = log.accepted + log.rejected
    share = f"the log quarantines {log.rejected} of its {lines} lines ({100 * log.reject_share:.2f} %)"
    if max_reject_rate(log) > DEFAULT_MAX_REJECT_RATE:
        return f"{share}: raised from {DEFAULT_MAX_REJECT_RATE:g} so the run does not stop on it (see its quarantine)"
    return share


def _latency_note(what: str, latency: LoggedLatency) -> str:
    return f"the log's own {what}: p95 {latency.p95_ms:.1f} ms of {latency.n} requests, rounded up"


def _max_requests_note(log: LogFacts) -> str:
    if log.max_requests >= log.window_requests:
        return f"at least the window's {log.window_requests}: every request in it is sent"
    return f"the window's first {log.max_requests} of its {log.window_requests} requests are sent"


def sent_summary(log: LogFacts) -> str:
    """What `init` prints of the window: how many requests it holds, how many a run sends and why."""
    held = f"busiest {_number(log.window_s)} s: {log.window_requests} requests"
    if log.max_requests >= log.window_requests:
        return f"{held}, sends all {log.window_requests} (max_requests {log.max_requests})"
    return (
        f"{held}, sends the first {log.max_requests} (max_requests: one run's bound on time and cost; "
        f"--max-requests {log.window_requests} sends them all)"
    )


def _claim_figure(log: LogFacts) -> tuple[str, float, str, str]:
    """The stub's one figure (a claim needs one to load): the log's own p95 latency where it has one."""
    if log.e2e is not None:
        return "e2e_ms_p95", log.e2e.suggested_ms, "the log's own p95 end-to-end latency", "as sla.e2e_ms below"
    if log.ttft is not None:
        return "ttft_ms_p95", log.ttft.suggested_ms, "the log's own p95 time to first token", "as sla.ttft_ms below"
    placeholder = "at most 1 % of requests fail (a placeholder: the log records no latency)"
    return "error_rate", 0.01, placeholder, "FILL IN"


def _number(value: float) -> str:
    """A number as YAML reads it back: never in exponent form (PyYAML reads `1e-05` as a string)."""
    return str(int(value)) if float(value).is_integer() else f"{value:.10f}".rstrip("0")


TEMPLATE = """\
# A re-validation spec written by `loadproof init` on {{ facts.written_on }} from
#   the log:    {{ log.path }}
#   the target: {{ candidate.target }} (GET {{ candidate.base_url }}/models)
# Each value is a starting point, the reason it was chosen beside it; the lines marked FILL IN are
# yours to write. Paths are relative to this file's folder. Then: loadproof run {{ facts.spec_file }}
# Every field is explained in examples/demo.yaml and docs/reference/spec.md (the docs site).
name: {{ ("re-validation of " ~ candidate.model ~ " on " ~ log.path.split("/")[-1]) | q }}

# The vendor's claim: the published figures this re-validation puts to the test.
# FILL IN: replace the stub with the vendor's figures and the conditions they were measured under,
# or read both from the vendor's own result file instead:
#   from: results.json\t# relative to this file
#   format: vllm_bench\t# or guidellm, aiperf
# Until then the stub claims {{ claim_figure[2] }}: the first
# run asks whether the candidate serves this traffic as well as production logged it.
claim:
  source: {{ ("stub written by loadproof init: " ~ claim_figure[2] ~ "; replace with the vendor's source") | q }}
  figures:
    {{ claim_figure[0] }}: {{ claim_figure[1] | num }}\t# {{ claim_figure[3] }}
    # output_tokens_per_s: 4200\t# the names a claim may use: pipeline/analysis/declare/catalogue.py
    # ttft_ms_p95: 250
    # tpot_ms_p50: 12
  # conditions:\t# what the vendor's benchmark ran at: the pack sets them beside this log
  #   hardware: "1x H100 80GB"
  #   precision: fp8
  #   concurrency: 64
  #   input_tokens: 1024
  #   output_tokens: 128
  # tolerance:\t# how far a figure may fall short of its claim and still "hold within tolerance"
{% for key, fraction in tolerances %}
  #   {{ key }}: {{ fraction | num }}
{% endfor %}
  # (the defaults above apply unless set; why each: docs/claim.md, "Verdicts and tolerances")

candidates:
  - name: {{ candidate.name | q }}\t# from the model id (letters, digits, _ . - only)
    base_url: {{ candidate.base_url | q }}\t# --target, where its OpenAI API answers
    model: {{ candidate.model | q }}\t# {{ model_note }}
    api: chat\t# the OpenAI API the replay speaks: chat, completions (legacy) or responses
{% if candidate.api_key_env %}
    api_key_env: {{ candidate.api_key_env }}\t# the NAME of the variable holding the key: read at launch, never written
{% else %}
    # api_key_env: OPENAI_API_KEY\t# the NAME of the variable holding the key (init was given none)
{% endif %}
    # tokenizer: hf:PATH\t# the served model's own (hf:, gguf: or server): the bill check's verdict needs it
    price:\t# FILL IN: what the candidate costs (0 makes every cost figure 0)
      usd_per_hour: 0\t# per replica; or usd_per_million_input_tokens and _output_tokens
      replicas: 1

workload:
  log:
    path: {{ log.path | q }}
    format: {{ log.format }}\t# {{ log.detection }}
{% if log.columns %}
    columns:\t# as given with --column
{% for name, column in log.columns.items() %}
      {{ name }}: {{ column | q }}
{% endfor %}
{% endif %}
    # timezone: UTC\t# of timestamps written without a zone
  max_reject_rate: {{ max_reject_rate | num }}\t# {{ reject_note }}
  # The log: {{ log.accepted }} requests from {{ log.first_arrival }} to {{ log.last_arrival }}.
  # Its busiest {{ log.window_s | num }} s: {{ log.window_requests }} requests from {{ log.window_start }} to
  # {{ log.window_end }} (the run draws the same window from the same log).
  sample:
    mode: busiest_window\t# or peak_hour, explicit_window (start_at, end_at), stratified
{% if log.window_note %}
    window_s: {{ log.window_s | num }}	# {{ log.window_note }}
{% else %}
    window_s: {{ log.window_s | num }}	# given with --window-s
{% endif %}
    max_requests: {{ log.max_requests }}\t# {{ max_requests_note }}
{% if not log.has_text %}
  prompts:\t# the log has lengths, not text: prompts are synthetic, fitted to the logged lengths
    tokenizer: loadproof-approx\t# against a real model, its own: hf:PATH, gguf:PATH or server
{% endif %}
  replay:
    mode: trace\t# at the logged arrival times (time_scale: 0.5 sends twice as fast)
{% if log.session_requests %}
    sessions: auto\t# {{ log.session_requests }} requests carry a session id: turns in order, after each reply
{% else %}
    sessions: auto\t# the log carries no session id: every request goes on its own
{% endif %}
    warmup_s: {{ edge_s | num }}\t# the window's first and last 1/12: sent, left out of the figures
    cooldown_s: {{ edge_s | num }}
    max_duration_s: {{ max_duration_s | num }}\t# {{ bound_note }}
    shards: {{ log.shards }}\t# {{ log.shards_note }}

# The SLA: per-request bounds; a run (or a load level) meets it when min_attainment of its
# requests succeed within every bound.
sla:
{% if log.ttft %}
  ttft_ms: {{ log.ttft.suggested_ms | num }}\t# {{ latency_note("TTFT", log.ttft) }}
{% else %}
  # ttft_ms: 500\t# FILL IN: the log records no time to first token
{% endif %}
{% if log.e2e %}
  e2e_ms: {{ log.e2e.suggested_ms | num }}\t# {{ latency_note("latency", log.e2e) }}
{% else %}
  # e2e_ms: 6000\t# FILL IN: the log records no latency
{% endif %}
  # tpot_ms: 50\t# time per output token, if production bounds it
  min_attainment: {{ sla_defaults.min_attainment | num }}
  max_error_rate: {{ sla_defaults.max_error_rate | num }}
  # per_user:\t# users at an SLO tier (needs workload.replay.sweep: the capacity search's levels)
  #   output_tokens_per_s_min: 30\t# each stream's output speed after its first token (30 / 100 / 300)
  #   ttft_ms_max: 15000\t# and its TTFT ceiling
  #   min_share: 0.95\t# share of a level's streams that must meet both

# accuracy:\t# a labelled slice of your own task, scored: examples/demo.yaml shows one

privacy:
  text: hash\t# the default: no prompt or reply text in the pack, only hashes
\t# and lengths; the replay's copy stays in <pack>.private/
"""
