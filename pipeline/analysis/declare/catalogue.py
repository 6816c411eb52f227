"""The metric catalogue: every figure loadproof reports, declared once, as data.

An entry says what a figure is (name, unit, direction, kind, a display name and a one-line
definition), where it may be judged (its bases), where analysis reads it (the table, which is also
the `sql/` query of the same name, and the columns of its value, interval ends, n and interval
method), how its interval is made, and the names a vendor's claim may give it (`claim_names`: the
field's own spellings, e.g. `vllm bench serve`'s `p99_ttft_ms`, read as this figure).

Everything else derives from these entries: the names a spec's claim accepts
(`pipeline/spec/claim.py`), the unit and direction a verdict uses (`metrics.describe`), what a
claim is about (`metrics.claim_kind`), the figures analysis writes (`pipeline/analysis/judge/figures.py`:
one row per figure of `data/figures.parquet`, read generically through `Source`), the rates the
throughput checks cover, the columns the capacity and the arms read, and the pack's glossary
(rendered from `glossary()`). Adding a figure is one entry here and the SQL that computes its
columns; `tests/unit/test_catalogue.py` fails until every entry is computed, checked, rendered and
re-computed by `loadproof verify`.

Percentile suffixes drop the decimal point: p99.9 is `p999` (so `ttft_ms_p999`).
"""

from __future__ import annotations

from pipeline.analysis.declare.catalogue_bill import BILL_CHECK
from pipeline.analysis.declare.catalogue_model import (  # noqa: F401  (re-exported: the stages read them from here)
    BASES,
    BATCH_MEANS,
    CAPACITY_AT_SLA,
    NO_INTERVAL,
    ORDER_STATISTIC,
    PERCENTILES,
    PRODUCTION_LOAD,
    TOLERANCES,
    USEFUL_SHARE,
    VENDOR_CONDITIONS,
    WILSON_OR_BATCH,
    WILSON_SCORE,
    Kind,
    Metric,
    Source,
    ToleranceDefault,
    capacity_source,
    headline_sources,
    latency_figure_name,
    vllm_names,
)
from pipeline.analysis.declare.catalogue_sizing import SIZING

# --- latency percentiles: one family each, at every percentile ---------------------------------

LATENCY_FAMILIES = {  # family -> (display, definition, the name `vllm bench serve` gives it)
    "ttft_ms": (
        "TTFT",
        "monotonic time from request send to the first streamed token of any kind: answer text, reasoning text or a "
        "tool-call piece",
        "ttft",
    ),
    "tpot_ms": ("TPOT", "(E2E − TTFT) / (output tokens − 1), per request, reasoning and tool calls included", "tpot"),
    "itl_ms": (
        "ITL",
        "the gaps between consecutive streamed token chunks (answer, reasoning, tool call), over every chunk of every "
        "request",
        "itl",
    ),
    "e2e_ms": ("E2E", "send to the end of the stream (or of the body when not streaming)", "e2el"),
    "ttfo_ms": (
        "TTFO",
        "time to first output token: send to the first answer-text or tool-call token after any reasoning (equal to "
        "TTFT for a model that does not reason)",
        None,
    ),
    "ttft_from_schedule_ms": (
        "TTFT from the schedule",
        "TTFT timed from the planned send time, so a request the client sent late keeps its wait",
        None,
    ),
    "e2e_from_schedule_ms": (
        "E2E from the schedule",
        "E2E timed from the planned send time, so a request the client sent late keeps its wait",
        None,
    ),
}
LATENCY_METRICS = tuple(LATENCY_FAMILIES)
# TTFT and E2E timed from the planned send instead of the actual one: when the client lagged,
# these carry the verdicts (a late send would otherwise hide the wait; pipeline/analysis/judge/figures.py)
FROM_SCHEDULE = {"ttft_ms": "ttft_from_schedule_ms", "e2e_ms": "e2e_from_schedule_ms"}


def _latency_entries() -> list[Metric]:
    out = []
    for family, (display, definition, vllm) in LATENCY_FAMILIES.items():
        for percentile in PERCENTILES:
            out.append(
                Metric(
                    name=latency_figure_name(family, percentile),
                    unit="ms",
                    larger_is_better=False,
                    kind="latency percentile",
                    sources=headline_sources(
                        Source(
                            "latency_percentiles",
                            "value",
                            "ci_low",
                            "ci_high",
                            "n",
                            method="interval_method",
                            row_metric=family,
                            row_percentile=percentile,
                        )
                    ),
                    interval=ORDER_STATISTIC,
                    display=f"{display} {percentile.replace('p999', 'p99.9')}",
                    definition=definition,
                    claim_names=vllm_names(vllm, percentile),
                )
            )
    return out


def _rate(
    name: str,
    unit: str,
    display: str,
    definition: str,
    claim_names: tuple[str, ...] = (),
    capacity: Source | None = None,
    vendor_conditions: bool = True,
) -> Metric:
    """A rate of the steady window, from sql/throughput.sql, with its batch-means interval; at the
    capacity at the SLA too where the capacity rows carry it."""
    headline = Source(
        "throughput", name, f"{name}_ci_low", f"{name}_ci_high", "requests_in_window", "rate_interval_method"
    )
    sources = headline_sources(headline, vendor_conditions)
    if capacity is not None:
        sources = {PRODUCTION_LOAD: headline, CAPACITY_AT_SLA: capacity, **sources}
    return Metric(
        name=name,
        unit=unit,
        larger_is_better=True,
        kind="rate",
        sources=sources,
        interval=BATCH_MEANS,
        display=display,
        definition=definition,
        claim_names=claim_names,
    )


CATALOGUE: tuple[Metric, ...] = (
    *_latency_entries(),
    _rate(
        "output_tokens_per_s",
        "tokens/s",
        "Output tokens/s",
        "output tokens of the successful requests sent in the steady window / the window's seconds",
        ("output_throughput", "output_token_throughput"),
        capacity=capacity_source("output_tokens_per_s", "ci_low", "ci_high"),
    ),
    _rate(
        "total_tokens_per_s",
        "tokens/s",
        "Total tokens/s",
        "prompt + output tokens of the successful requests sent in the steady window / the window's seconds",
        ("total_token_throughput",),
    ),
    _rate(
        "requests_per_s",
        "requests/s",
        "Requests/s",
        "successful requests sent in the steady window / the window's seconds",
        ("request_throughput",),
        capacity=capacity_source("requests_per_s", "requests_per_s_ci_low", "requests_per_s_ci_high"),
    ),
    _rate(
        "goodput_requests_per_s",
        "requests/s",
        "Goodput (requests/s)",
        "requests sent in the steady window that succeeded and met every SLA bound / the window's seconds",
        ("request_goodput",),
        vendor_conditions=False,  # the SLA is not an arm's business
    ),
    _rate(
        "goodput_output_tokens_per_s",
        "tokens/s",
        "Goodput (output tokens/s)",
        "output tokens of the requests sent in the steady window that succeeded and met every SLA bound / the "
        "window's seconds",
        vendor_conditions=False,
    ),
    Metric(
        name="sla_attainment",
        unit="fraction",
        larger_is_better=True,
        kind="proportion",
        sources=headline_sources(
            Source(
                "throughput",
                "sla_attainment",
                "sla_attainment_ci_low",
                "sla_attainment_ci_high",
                "requests_in_window",
                "sla_attainment_interval_method",
            ),
            vendor_conditions=False,
        ),
        interval=WILSON_OR_BATCH,
        display="SLA attainment",
        definition="the share of steady-window requests that succeeded and met every SLA bound (errors miss)",
    ),
    Metric(
        name="error_rate",
        unit="fraction",
        larger_is_better=False,
        kind="proportion",
        sources=headline_sources(
            Source(
                "throughput",
                "error_rate",
                "error_rate_ci_low",
                "error_rate_ci_high",
                "requests_planned",
                "error_rate_interval_method",
            )
        ),
        interval=WILSON_SCORE,
        display="Error rate",
        definition="failed requests / every planned request",
    ),
    Metric(
        name="accuracy",
        unit="fraction",
        larger_is_better=True,
        kind="quality",
        sources=headline_sources(
            Source("accuracy_summary", "accuracy", "accuracy_ci_low", "accuracy_ci_high", "scored"),
            vendor_conditions=False,
        ),
        interval=WILSON_SCORE,
        display="Accuracy",
        definition="correct / scored items on the buyer's labelled slice",
    ),
    Metric(
        name="cost_per_decision_usd",
        unit="USD",
        larger_is_better=False,
        kind="cost",
        sources=headline_sources(
            Source(
                "cost_per_decision",
                "cost_per_decision_usd",
                "cost_per_decision_usd_ci_low",
                "cost_per_decision_usd_ci_high",
                "requests_in_window",
            ),
            vendor_conditions=False,
        ),
        interval=USEFUL_SHARE,
        display="Cost per useful decision",
        definition="the measured window's cost / the requests in it that succeeded, met the SLA and were correct "
        "where scored",
    ),
    Metric(
        name="cost_per_million_output_tokens_usd",
        unit="USD",
        larger_is_better=False,
        kind="cost",
        sources=headline_sources(
            Source("cost_per_decision", "cost_per_million_output_tokens_usd", None, None, "requests_in_window"),
            vendor_conditions=False,
        ),
        interval=NO_INTERVAL,
        display="Cost per million output tokens",
        definition="the measured window's cost / its output tokens × 10⁶",
    ),
    Metric(
        name="cost_per_decision_at_max_sla_load_usd",
        unit="USD",
        larger_is_better=False,
        kind="cost",
        sources={
            CAPACITY_AT_SLA: Source(
                "sweep_summary",
                "cost_per_decision_at_max_sla_load_usd",
                "cost_per_decision_at_max_sla_load_usd_ci_low",
                "cost_per_decision_at_max_sla_load_usd_ci_high",
                "requests_in_window_at_max_sla_load",
            )
        },
        interval=USEFUL_SHARE,
        display="Cost per useful decision at the capacity",
        definition="cost per useful decision at the highest load level still meeting the SLA",
    ),
    *SIZING,
)


def _reply_mix(name: str, unit: str, kind: Kind, display: str, definition: str, interval: str, n: str) -> Metric:
    """What the steady window's successful replies held (sql/reply_mix.sql, in the throughput
    table): judged at the production load only — the vendor's synthetic prompts carry no tools,
    schemas or reasoning settings of the buyer's."""
    return Metric(
        name=name,
        unit=unit,
        larger_is_better=kind == "quality",
        kind=kind,
        sources={PRODUCTION_LOAD: Source("throughput", name, f"{name}_ci_low", f"{name}_ci_high", n)},
        interval=interval,
        display=display,
        definition=definition,
    )


REPLY_MIX = (
    _reply_mix(
        "reasoning_tokens_per_request",
        "tokens",
        "per request",
        "Reasoning tokens per request",
        "reasoning tokens (usage's completion_tokens_details.reasoning_tokens, else the streamed reasoning under the "
        "plan's tokenizer) per successful steady-window request; they are output tokens",
        BATCH_MEANS + " (ratio estimator)",
        "replies",
    ),
    _reply_mix(
        "reasoning_share",
        "fraction",
        "proportion",
        "Reasoning share of output",
        "reasoning tokens / output tokens of the successful steady-window requests (1 − it is the answer-only share)",
        BATCH_MEANS + " (ratio estimator)",
        "replies",
    ),
    _reply_mix(
        "tool_call_schema_accuracy",
        "fraction",
        "quality",
        "Tool-call schema accuracy",
        "of the replies that end in tool_calls, the share whose every call names a tool that was offered and whose "
        "arguments parse and validate against that tool's JSON schema (K2-Vendor-Verifier's schema_accuracy)",
        WILSON_SCORE,
        "tool_call_replies",
    ),
    _reply_mix(
        "structured_output_valid_rate",
        "fraction",
        "quality",
        "Structured-output valid rate",
        "of the replies to a json_schema (or json_object) request, the share that validate against it",
        WILSON_SCORE,
        "structured_replies",
    ),
)
CATALOGUE = CATALOGUE + REPLY_MIX + BILL_CHECK  # billed vs counted tokens: catalogue_bill.py

BY_NAME = {metric.name: metric for metric in CATALOGUE}
BY_CLAIM_NAME = {alias: metric.name for metric in CATALOGUE for alias in metric.claim_names}


def metric(name: str) -> Metric:
    """The entry of a figure; KeyError names the figure."""
    return BY_NAME[name]


def names(kind: Kind | None = None, basis: str | None = None) -> tuple[str, ...]:
    """The figures' names, in catalogue order, of one kind and/or judged at one basis."""
    return tuple(m.name for m in CATALOGUE if (kind is None or m.kind == kind) and (basis is None or basis in m.bases))


def canonical_name(claimed: str) -> str | None:
    """The figure a claim's name means (its own name, or one of its `claim_names`); None if unknown."""
    return claimed if claimed in BY_NAME else BY_CLAIM_NAME.get(claimed)


def glossary() -> list[dict]:
    """The pack's glossary: one row per figure family (a latency family once, not per percentile)."""
    rows, seen = [], set()
    for m in CATALOGUE:
        key = m.source.row_metric or m.name
        if key in seen:
            continue
        seen.add(key)
        family = m.source.row_metric
        rows.append(
            {
                "name": f"{family}_p50 … _p999" if family else m.name,
                "display": m.display.rsplit(" ", 1)[0] + " percentiles" if family else m.display,
                "unit": m.unit,
                "better": "higher" if m.larger_is_better else "lower",
                "bases": list(m.bases),
                "definition": m.definition,
                "interval": m.interval,
                "source": " / ".join(dict.fromkeys(f"sql/{s.sql}.sql" for s in m.sources.values())),
            }
        )
    return rows
