"""The replay plan: what to send and when, computed up front from the production sample.

Requests whose log has text are replayed with it; length-only traces get a synthetic prompt
fitted to the logged length under a named tokenizer (pipeline/plan/synthetic_prompts.py). The plan
records the requested (logged) and achieved (counted under the named tokenizer) prompt length of
every request,
and the logged output length as max_tokens (and as min_tokens, for servers that honour it with
ignore_eos, so the output length is the logged one too). The logged request fields (tools,
response_format, temperature, ...) go as logged, after the spec's `workload.replay.request`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import cast

import pyarrow as pa

from pipeline.contracts import REPLAY_PLAN_SCHEMA
from pipeline.plan import arrivals
from pipeline.plan import sessions as session_plan
from pipeline.plan.prompt_tokenizer import plan_tokenizer as plan_tokenizer  # the replay_plan asset's way in
from pipeline.plan.prompt_tokenizer import tokenizer_record
from pipeline.plan.synthetic_prompts import ApproxTokenizer, Tokenizer, fit_messages
from pipeline.privacy import require_text
from pipeline.replay.recording.records import PlannedRequest
from pipeline.spec.workload import Prompts
from pipeline.tokens.tokenizers import APPROX, SPEC_FIELD

WITHIN_SHARE = 0.01  # the fit summary counts the requests within ±1 % of the logged length


def tokenizer_for(prompts: Prompts) -> Tokenizer:
    """The tokenizer that needs neither the spec's folder nor a server: loadproof-approx. It counts
    labelled items (their text is given, not fitted: the count only bounds the context) and the
    plans of specs that name no other; a real one comes from `prompt_tokenizer.plan_tokenizer`."""
    return ApproxTokenizer()


def synthetic_messages(prompt_tokens: int, seed: str) -> list[dict]:
    """A stand-in prompt of exactly `prompt_tokens` tokens (loadproof-approx)."""
    return fit_messages(prompt_tokens, seed, ApproxTokenizer())[0]


def planned_offsets(sample: pa.Table, replay, leads: list[bool] | None = None) -> Sequence[float | None]:
    """trace: the logged offsets × time_scale; rate: a seeded synthetic process over the `leads`
    (default every row; a chained session turn has no offset of its own); concurrency: none (the
    order is the log's and each request goes when a worker is free)."""
    if replay.mode == "trace":
        return arrivals.scaled_trace(sample.column("window_offset_s").to_pylist(), replay.time_scale)
    if replay.mode == "rate":
        leads = leads or [True] * sample.num_rows
        synthetic = iter(
            arrivals.synthetic(
                sum(leads), replay.rate_per_s, replay.arrival, replay.seed, replay.burstiness, replay.ramp_up_s
            )
        )
        return [next(synthetic) if lead else None for lead in leads]
    return [None] * sample.num_rows


def build_plan(
    sample: pa.Table, replay, prompts: Prompts | None = None, tokenizer: Tokenizer | None = None
) -> pa.Table:
    """One planned request per sampled request, in the log's order, with its planned offset
    (see `planned_offsets`) and its prompt: the logged one, or a synthetic one fitted to the
    logged length under `tokenizer` (the one `prompt_tokenizer.plan_tokenizer` made of the spec's
    `prompts`; loadproof-approx needs none); a later session turn carries only its own messages
    and follows its previous turn (pipeline/plan/sessions.py). The `tokenizer` column holds the
    setting the replay loads to count replies that come without usage."""
    prompts = prompts or Prompts()
    if tokenizer is None:
        if prompts.tokenizer != APPROX:
            raise ValueError(f"{SPEC_FIELD}: {prompts.tokenizer}: pass the tokenizer plan_tokenizer made of it")
        tokenizer = tokenizer_for(prompts)
    tokenizer_setting = getattr(tokenizer, "setting", tokenizer.name)
    has_prefixes = "prefix_hashes" in sample.schema.names
    links = session_plan.link_turns(sample, getattr(replay, "sessions", "auto") == "auto")
    think_scale = replay.time_scale if replay.mode == "trace" else 1.0
    rules = getattr(replay, "request", None) or {}
    records = sample.to_pylist()
    rows: list[dict] = []
    chain_first: dict[int, list[dict]] = {}  # row -> logged messages of its chain's first turn
    for index, (record, offset, link) in enumerate(
        zip(records, planned_offsets(sample, replay, session_plan.lead_rows(links)), links)
    ):
        logged = session_plan.parse_messages(record["messages_json"])
        if link.follows is not None:  # a chained turn
            previous, previous_row = records[link.follows], rows[link.follows]
            chain_first[index] = chain_first[link.follows]
            previous_logged = session_plan.parse_messages(previous["messages_json"])
            if logged is not None and previous_logged is not None:
                messages, source = session_plan.own_messages(previous_logged, logged, chain_first[index]), "logged"
                own = tokenizer.count_messages(messages)
            else:
                target = session_plan.synthetic_target(
                    record["prompt_tokens"], previous_row["prompt_tokens_client"], previous["output_tokens"]
                )
                messages, own = fit_messages(target, record["request_id"], tokenizer)
                source = "synthetic"
            achieved = session_plan.expected_context(
                previous_row["prompt_tokens_client"], previous["output_tokens"], own
            )
        elif logged is not None:
            messages, source = logged, "logged"
            achieved = tokenizer.count_messages(messages)
        else:
            prefixes = record["prefix_hashes"] if has_prefixes else None
            messages, achieved = fit_messages(
                record["prompt_tokens"], record["request_id"], tokenizer, prefixes, prompts.prefix_block_tokens
            )
            source = "synthetic"
        if not link.chained:
            chain_first[index] = messages
        rows.append(
            {
                "request_id": record["request_id"],
                "scheduled_offset_s": offset,
                "messages_json": json.dumps(messages, ensure_ascii=False),
                "max_tokens": record["output_tokens"],
                "min_tokens": record["output_tokens"] if prompts.min_tokens else None,
                "prompt_source": source,
                "tokenizer": tokenizer_setting,
                "prompt_tokens_logged": record["prompt_tokens"],
                "prompt_tokens_client": achieved,
                "prompt_tokens_error": achieved - record["prompt_tokens"],
                "source_line": record["source_line"],
                "session_id": link.session_id,
                "session_turn": link.session_turn,
                "follows_request_id": records[link.follows]["request_id"] if link.chained else None,
                # a chained turn always has a logged think time (sql/session_turns.sql: every turn after the first)
                "think_time_s": cast(float, link.think_time_logged_s) * think_scale if link.chained else None,
                "think_time_logged_s": link.think_time_logged_s,
                "request_fields": request_fields_to_send(record.get("request_fields"), rules),
            }
        )
    return pa.Table.from_pylist(rows, schema=REPLAY_PLAN_SCHEMA)


def request_fields_to_send(logged: str | None, rules: dict) -> str | None:
    """The logged request fields (JSON text) after the spec's `workload.replay.request`: a field
    kept as logged unless its rule drops it or sets it (a set field goes in whether or not the log
    had it); NULL when nothing is left."""
    fields = json.loads(logged) if logged else {}
    for name, rule in rules.items():
        if rule == "drop":
            fields.pop(name, None)
        elif rule != "keep":
            fields[name] = rule.set
    return json.dumps(fields, ensure_ascii=False) if fields else None


def prompt_fit_summary(plan: pa.Table, tokenizer: Tokenizer | None = None) -> dict:
    """Achieved vs requested prompt lengths, by prompt source (for the plan's metadata): how many
    exactly, how many within ±1 % of the logged length, the largest miss; with the tokenizer they
    were fitted under (name, setting, template overhead, the tokenize endpoint that answered) and
    the tokens the offered tools add under it."""
    summary: dict[str, dict] = {}
    for row in plan.select(["prompt_source", "prompt_tokens_error", "prompt_tokens_logged"]).to_pylist():
        entry = summary.setdefault(
            row["prompt_source"], {"requests": 0, "exact": 0, "within_1pct": 0, "max_abs_error": 0}
        )
        error = abs(row["prompt_tokens_error"])
        entry["requests"] += 1
        entry["exact"] += error == 0
        entry["within_1pct"] += error <= WITHIN_SHARE * row["prompt_tokens_logged"]
        entry["max_abs_error"] = max(entry["max_abs_error"], error)
    if tokenizer is not None:
        summary["tokenizer"] = tokenizer_record(tokenizer)
        summary["tool_definitions"] = tool_definition_tokens(plan, tokenizer)
    return summary


def tool_definition_tokens(plan: pa.Table, tokenizer: Tokenizer) -> dict:
    """The prompt tokens the offered tools add (their definitions' JSON text, counted under the
    plan's tokenizer; a server's template wraps them its own way): how many requests send tools,
    their mean and largest count."""
    if "request_fields" not in plan.schema.names:
        return {"requests": 0, "tokens_mean": None, "tokens_max": None}
    counts: dict[str, int] = {}  # the same tools are counted once
    per_request = []
    for text in plan.column("request_fields").to_pylist():
        tools = json.loads(text).get("tools") if text else None
        if tools:
            key = json.dumps(tools, ensure_ascii=False)
            if key not in counts:
                counts[key] = tokenizer.count_text(key)
            per_request.append(counts[key])
    if not per_request:
        return {"requests": 0, "tokens_mean": None, "tokens_max": None}
    return {
        "requests": len(per_request),
        "tokens_mean": sum(per_request) / len(per_request),
        "tokens_max": max(per_request),
    }


def planned_requests(plan: pa.Table) -> list[PlannedRequest]:
    return [
        PlannedRequest(
            request_id=row["request_id"],
            scheduled_offset_s=row["scheduled_offset_s"],
            messages=require_text(json.loads(row["messages_json"]), f"replay plan, request {row['request_id']}"),
            max_tokens=row["max_tokens"],
            prompt_tokens_client=row["prompt_tokens_client"],
            min_tokens=row.get("min_tokens"),
            session_id=row.get("session_id"),
            session_turn=row.get("session_turn"),
            follows_request_id=row.get("follows_request_id"),
            think_time_s=row.get("think_time_s"),
            labelled_item_id=row.get("labelled_item_id"),
            tokenizer=row.get("tokenizer"),
            request_fields=json.loads(row["request_fields"]) if row.get("request_fields") else None,
        )
        for row in plan.to_pylist()
    ]
