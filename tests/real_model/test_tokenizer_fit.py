"""The real-tokenizer proof (issue 18): prompts fitted under the model's own tokenizer are as long
as the server counts them.

An Azure-style length-only trace (context and generated lengths, no text) is planned with
`workload.prompts.tokenizer: gguf:<the Gemma GGUF>` (the chat template's overhead measured by the
plan's own probe) and, apart, with `server` (llama-server's own `/tokenize`). The server's count of
each fitted prompt is what it prefills: llama-server renders the chat with its `gemma` template
(`/apply-template`) and tokenizes the result (BOS added, special tokens parsed), so the proof asks
those two endpoints for every request (prefilling ~1,000 tokens each would take minutes on 2 shared
cores) and checks, on a few short prompts, that this equals the non-streamed `usage.prompt_tokens`.
At least 99 % of requests must sit within ±1 % of the logged length. Streamed replies carry usage
and the server's own per-request timings, and the raw timings keep both.

Needs the `model` extra (`make real-model`); skipped cleanly without it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyarrow as pa
import pytest

from pipeline.plan.prompt_tokenizer import prompts_tokenizer
from pipeline.plan.replay_plan import build_plan, planned_requests, prompt_fit_summary
from pipeline.reference.llama_server import MODEL_ALIAS, LlamaServer, gemma_gguf
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.spec.candidates import Candidate
from pipeline.spec.workload import Prompts, Replay
from tests.support.real_engine import REAL_MODEL_MARKS

pytestmark = REAL_MODEL_MARKS

REQUESTS = 200  # the proof's n: each fit is ~10 tokenizations, each check one call of the tokenize endpoint
SERVER_FIT_REQUESTS = 100  # each fit is ~10 calls of the live /tokenize
WITHIN = 0.01
N_CTX = 4096


def azure_style_lengths(n: int, seed: int = 18) -> list[tuple[int, int]]:
    """(context, generated) tokens shaped like Azure's 2023 conversation trace: log-normal context
    lengths around a median of ~1,000 (clipped to 64…3,500 so prompt + reply fit the context),
    short replies."""
    rng = random.Random(seed)
    return [
        (min(3500, max(64, round(rng.lognormvariate(6.9, 0.7)))), min(400, max(1, round(rng.lognormvariate(4.8, 0.8)))))
        for _ in range(n)
    ]


def length_only_sample(lengths: list[tuple[int, int]]) -> pa.Table:
    """A production sample of a length-only trace, as sampling leaves it (no text)."""
    return pa.table(
        {
            "request_id": [f"azure:{i + 2}" for i in range(len(lengths))],
            "window_offset_s": [i * 0.5 for i in range(len(lengths))],
            "messages_json": pa.array([None] * len(lengths), pa.string()),
            "prompt_tokens": [context for context, _ in lengths],
            "output_tokens": [generated for _, generated in lengths],
            "source_line": list(range(2, len(lengths) + 2)),
        }
    )


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaServer]:
    with LlamaServer(n_ctx=N_CTX) as server:
        yield server


def candidate(llama: LlamaServer) -> Candidate:
    return Candidate.model_validate(
        {"name": "gemma", "base_url": llama.base_url, "model": MODEL_ALIAS, "price": {"usd_per_hour": 1.0}}
    )


def target_for(llama: LlamaServer):
    return lambda c: Target(c.name, llama.base_url, MODEL_ALIAS)


def usage_prompt_tokens(llama: LlamaServer, messages: list[dict]) -> int:
    """The server's count of record: a non-streamed one-token completion's usage.prompt_tokens."""
    body = {"model": MODEL_ALIAS, "messages": messages, "max_tokens": 1, "stream": False}
    response = httpx.post(f"{llama.base_url}/chat/completions", json=body, timeout=600)
    response.raise_for_status()
    return response.json()["usage"]["prompt_tokens"]


def prefilled_tokens(llama: LlamaServer, messages: list[dict]) -> int:
    """What the server prefills for a chat: the chat rendered by its own template
    (`/apply-template`), tokenized by its own `/tokenize` with BOS and special tokens as a
    completion request tokenizes its prompt."""
    root = llama.root_url
    prompt = httpx.post(f"{root}/apply-template", json={"messages": messages}, timeout=60).json()["prompt"]
    body = {"content": prompt, "add_special": True, "parse_special": True}
    response = httpx.post(f"{root}/tokenize", json=body, timeout=60)
    response.raise_for_status()
    return len(response.json()["tokens"])


def deviations(llama: LlamaServer, plan: pa.Table) -> list[float]:
    return [
        (prefilled_tokens(llama, json.loads(row["messages_json"])) - row["prompt_tokens_logged"])
        / row["prompt_tokens_logged"]
        for row in plan.to_pylist()
    ]


def test_the_tokenize_endpoint_counts_what_the_server_prefills(llama: LlamaServer) -> None:
    """The proof's yardstick: for short chats, the tokenize count of the rendered chat is the
    non-streamed usage.prompt_tokens (prefilling long ones too would take minutes)."""
    for words in (5, 40, 120):
        messages = [{"role": "user", "content": " ".join(["account card, transfer payment."] * (words // 4))}]
        assert prefilled_tokens(llama, messages) == usage_prompt_tokens(llama, messages)


def test_gguf_fitted_prompts_are_the_logged_length_the_server_counts(llama: LlamaServer) -> None:
    prompts = Prompts(tokenizer=f"gguf:{gemma_gguf()}")
    tokenizer = prompts_tokenizer(prompts, Path, [candidate(llama)], target_for(llama))
    plan = build_plan(length_only_sample(azure_style_lengths(REQUESTS)), Replay(), prompts, tokenizer)
    summary = prompt_fit_summary(plan, tokenizer)
    assert summary["tokenizer"]["name"] == "gguf:gemma-3-270m-q4_k_m.gguf"
    assert summary["tokenizer"]["template_tokens"] > 0  # BOS and Gemma's turn markers
    found = deviations(llama, plan)
    within = sum(abs(d) <= WITHIN for d in found) / len(found)
    print(
        f"\ngguf fit, server's count: n={len(found)} within ±1 %: {within:.3f} max |deviation| "
        f"{max(map(abs, found)):.4f}; plan's own: {summary['synthetic']}"
    )
    assert within >= 0.99, sorted(found, key=abs)[-5:]


def test_server_tokenize_endpoint_is_probed_and_fits(llama: LlamaServer) -> None:
    """`tokenizer: server` fits through the live `/tokenize`, the template's overhead (BOS and
    Gemma's turn markers) measured by the plan's own one-token probe."""
    prompts = Prompts(tokenizer="server")
    tokenizer = prompts_tokenizer(prompts, Path, [candidate(llama)], target_for(llama))
    assert tokenizer.name == "server:llama.cpp"  # llama-server's /tokenize {"content"}
    plan = build_plan(
        length_only_sample(azure_style_lengths(SERVER_FIT_REQUESTS, seed=7)), Replay(), prompts, tokenizer
    )
    found = deviations(llama, plan)
    within = sum(abs(d) <= WITHIN for d in found) / len(found)
    print(
        f"\nserver fit, server's count: n={len(found)} within ±1 %: {within:.3f} "
        f"max |deviation| {max(map(abs, found)):.4f}"
    )
    assert within >= 0.99, sorted(found, key=abs)[-5:]


def test_streamed_usage_and_the_servers_own_timings_are_kept(tmp_path: Path, llama: LlamaServer) -> None:
    """llama-server streams usage (asked with `stream_options.include_usage`) and its per-request
    `timings`: the replay counts output by usage, keeps the timings beside it (prefilled + cached
    prompt tokens = usage's prompt tokens; decoded tokens = usage's completion tokens), and a reply
    cut at max_tokens passes the output ≤ max_tokens check."""
    from pipeline.quality import expectations

    prompts = Prompts(tokenizer=f"gguf:{gemma_gguf()}", template_tokens=0)
    tokenizer = prompts_tokenizer(prompts)
    plan = planned_requests(
        build_plan(length_only_sample([(80, 24), (120, 24), (60, 24)]), Replay(), prompts, tokenizer)
    )
    with Journal(tmp_path / "journal.jsonl") as journal:
        run_replay(
            plan,
            Target("llama", llama.base_url, MODEL_ALIAS),
            ReplaySettings(mode="concurrency", concurrency=1, request_timeout_s=120),
            "run",
            journal,
        )
    table = journal_to_table(tmp_path / "journal.jsonl")
    rows = table.to_pylist()
    assert all(r["status"] == "ok" and r["usage_issue"] is None for r in rows), [
        (
            r["status"],
            r["error_type"],
            r["error_message"],
            r["usage_issue"],
            r["output_tokens"],
            r["content_chunks"],
            r["finish_reason"],
        )
        for r in rows
    ]
    for row in rows:
        assert row["output_tokens_source"] == "usage" and 0 < row["output_tokens"] <= 24
        assert row["server_predicted_n"] == row["output_tokens"]
        assert row["server_prompt_n"] + row["server_cache_n"] == row["prompt_tokens"]
        assert 0 < row["server_prompt_ms"] < row["ttft_ms"] and 0 < row["server_predicted_ms"] < row["e2e_ms"]
    assert expectations.validate(expectations.raw_timings_suite, table.to_pandas(), name="raw_timings").passed
