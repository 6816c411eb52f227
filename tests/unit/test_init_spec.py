"""`loadproof init`'s parts without a server (issue 27, item 5): the spec writer renders facts into
a spec `load_spec` accepts, each suggestion beside the reason for it; the log's format is found by
the ingest itself; the log survey reads the bundled log as the run will; bad input is an error
that names the file, line or option, with a hint."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import yaml

from pipeline.preflight import window_requests_for
from pipeline.spec import load_spec
from pipeline.spec.claim import Tolerance
from pipeline.spec.starter import CandidateFacts, LogFacts, LoggedLatency, StarterFacts, render_starter_spec, round_up
from pipeline.workload.init_spec import (
    InitError,
    WindowSizing,
    openai_base_url,
    peak_in_flight,
    sized_window,
    survey_log,
    window_shards,
    write_starter_spec,
)
from pipeline.workload.logs import ingest_log
from pipeline.workload.logs.detect import UnknownLogFormat, detect_format
from tests.support.specs import DEMO_LOG

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "logs"
SECRET = "sk-init-must-never-be-written"


def log_facts(**overrides) -> LogFacts:
    facts = {
        "path": "data/requests.jsonl",
        "format": "openai_jsonl",
        "detection": "detected: it reads 200 of the first 200 lines; no other format reads any",
        "columns": None,
        "accepted": 1000,
        "rejected": 3,
        "first_arrival": "2026-11-02T14:00:00.000Z",
        "last_arrival": "2026-11-02T15:00:00.000Z",
        "window_s": 30.0,
        "window_start": "2026-11-02T14:10:00.000Z",
        "window_end": "2026-11-02T14:10:30.000Z",
        "window_requests": 80,
        "max_requests": 500,
        "has_text": True,
        "session_requests": 0,
        "e2e": LoggedLatency(n=1000, p95_ms=4711.7),
        "ttft": LoggedLatency(n=990, p95_ms=212.4),
    }
    return LogFacts(**{**facts, **overrides})


def starter(log: LogFacts, models: tuple[str, ...] = ("meta/llama-3.1-8b",), key_env: str | None = None):
    candidate = CandidateFacts("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1", models, key_env)
    return StarterFacts(log=log, candidate=candidate, written_on="2026-12-01", spec_file="spec.yaml")


def written(tmp_path: Path, facts: StarterFacts) -> tuple[str, object]:
    path = tmp_path / "spec.yaml"
    path.write_text(render_starter_spec(facts))
    return path.read_text(), load_spec(path).spec


def test_round_up_keeps_two_significant_digits_and_never_rounds_down():
    assert [round_up(v) for v in (4711.7, 4700.0, 412.0, 0.213, 9.91, 12000.1)] == [4800, 4700, 420, 0.22, 10, 13000]


def test_the_written_spec_loads_with_the_logs_own_latencies_as_sla_and_claim(tmp_path):
    text, spec = written(tmp_path, starter(log_facts()))
    assert spec.sla.e2e_ms == 4800 and spec.sla.ttft_ms == 220  # p95 rounded up
    assert spec.claim.figures == {"e2e_ms_p95": 4800}
    assert spec.candidates[0].model == "meta/llama-3.1-8b"
    assert spec.candidates[0].name == "meta-llama-3.1-8b"  # a name the spec accepts, from the model id
    assert spec.candidates[0].base_url == "http://127.0.0.1:8000/v1"
    assert spec.candidates[0].api_key_env is None
    assert spec.workload.log.format == "openai_jsonl" and spec.workload.log.path == "data/requests.jsonl"
    assert (spec.workload.sample.mode, spec.workload.sample.window_s, spec.workload.sample.max_requests) == (
        "busiest_window",
        30,
        500,
    )
    assert spec.workload.replay.warmup_s == spec.workload.replay.cooldown_s == 2.5  # 1/12 of the window
    assert spec.workload.replay.max_duration_s == 90  # three windows
    # each choice says where it came from
    assert "p95 4711.7 ms of 1000 requests, rounded up" in text and "p95 212.4 ms of 990 requests" in text
    assert "80 requests from 2026-11-02T14:10:00.000Z to" in text
    assert "detected: it reads 200 of the first 200 lines" in text
    assert "FILL IN" in text and "# api_key_env: OPENAI_API_KEY" in text
    assert "from: results.json" in text  # the claim file alternative, commented


def test_a_log_without_latencies_gets_commented_placeholders_and_a_placeholder_claim(tmp_path):
    text, spec = written(tmp_path, starter(log_facts(e2e=None, ttft=None)))
    assert spec.sla.e2e_ms is None and spec.sla.ttft_ms is None
    assert "# e2e_ms: 6000" in text and "FILL IN: the log records no latency" in text
    assert spec.claim.figures == {"error_rate": 0.01}
    assert "placeholder" in spec.claim.source


def test_only_the_key_variables_name_is_written_and_other_models_are_named(tmp_path, monkeypatch):
    monkeypatch.setenv("VENDOR_KEY", SECRET)
    text, spec = written(tmp_path, starter(log_facts(), models=("a", "b", "c"), key_env="VENDOR_KEY"))
    assert spec.candidates[0].api_key_env == "VENDOR_KEY" and SECRET not in text
    assert spec.candidates[0].model == "a" and "the first of the 3 models GET /models lists; the others: b, c" in text


def test_a_length_only_log_gets_a_prompts_section_and_a_mapping_is_written_back(tmp_path):
    columns = {"arrival": "ts", "arrival_unit": "ms", "prompt_tokens": "p", "output_tokens": "o"}
    log = log_facts(format="csv", columns=columns, has_text=False, path="trace.csv")
    text, spec = written(tmp_path, starter(log))
    assert spec.workload.prompts.tokenizer == "loadproof-approx" and "lengths, not text" in text
    assert spec.workload.log.columns is not None and spec.workload.log.columns.arrival_unit == "ms"


def test_a_reject_share_above_the_default_raises_max_reject_rate_and_says_so(tmp_path):
    text, spec = written(tmp_path, starter(log_facts(accepted=900, rejected=100)))
    assert spec.workload.max_reject_rate == 0.1
    assert "raised from 0.05" in text


def test_strings_cannot_break_the_yaml(tmp_path):
    odd = 'model: "x" # {y}\n- z'
    _, spec = written(tmp_path, starter(log_facts(path='logs/a "b" #c.jsonl'), models=(odd,)))
    assert spec.candidates[0].model == odd and spec.workload.log.path == 'logs/a "b" #c.jsonl'


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("bedrock_invocations.jsonl", "bedrock_invocations"),
        ("langfuse_observations.jsonl", "langfuse"),
        ("litellm_spend_logs.csv", "litellm_spend_logs"),
        ("litellm_spend_logs.jsonl", "litellm_spend_logs"),
        ("otel_genai_spans.jsonl", "otel_genai"),
    ],
)
def test_the_ingest_detects_each_vendor_format(name, expected):
    assert detect_format(str(FIXTURES / name), Path.cwd()).format == expected


def test_the_bundled_log_azure_csv_and_a_gzipped_mooncake_trace_are_detected(tmp_path):
    assert detect_format(str(DEMO_LOG), Path.cwd()).format == "openai_jsonl"
    azure = tmp_path / "azure.csv"
    azure.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n")
    assert detect_format(str(azure), Path.cwd()).format == "azure_csv"
    mooncake = tmp_path / "trace.jsonl.gz"
    line = {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47]}
    mooncake.write_bytes(gzip.compress((json.dumps(line) + "\n").encode()))
    # the loadproof trace is Mooncake's superset, read by the same query: the registry's first is named
    assert detect_format(str(mooncake), Path.cwd()).format == "mooncake_jsonl"


def test_an_unknown_format_names_the_file_each_formats_reason_and_a_hint(tmp_path):
    odd = tmp_path / "odd.csv"
    odd.write_text("when,in,out\n1,2,3\n")
    with pytest.raises(UnknownLogFormat) as error:
        detect_format(str(odd), Path.cwd())
    message = str(error.value)
    assert message.startswith(f"{odd}: no log format the ingest knows reads its first 2 lines")
    assert "line 1: header has no column 'TIMESTAMP' (mapped to arrival) (azure_csv)" in message
    assert (
        "line 1: not valid JSON (openai_jsonl, mooncake_jsonl," in message and "--format csv with --column" in message
    )


def test_the_survey_of_the_bundled_log_is_what_the_run_will_sample(tmp_path):
    facts = survey_log(load_log_source(), "detected", tmp_path / "spec.yaml", 60.0, 500, WindowSizing())
    rows = ingest_log(DEMO_LOG, "openai_jsonl").rows
    latencies = rows.column("logged_latency_ms").to_numpy()
    assert (facts.accepted, facts.rejected) == (rows.num_rows, 2)  # the bundled log's two bad lines
    assert facts.e2e == LoggedLatency(
        n=rows.num_rows, p95_ms=float(np.percentile(latencies, 95, method="inverted_cdf"))
    )
    assert facts.ttft is None  # the bundled log records no first-token time
    assert facts.has_text and facts.session_requests == pc.count(rows.column("session_id")).as_py()
    assert 0 < facts.window_requests < rows.num_rows
    assert facts.path == str(DEMO_LOG)  # outside the spec's folder: absolute
    assert facts.window_start.startswith("2026-")  # epoch numbers (openai_jsonl's `created`): dates, not offsets
    beside = survey_log(load_log_source(), "detected", DEMO_LOG.parent.parent / "spec.yaml", 60.0, 500, WindowSizing())
    assert beside.path == "data/production_requests.jsonl"  # inside it: relative, so the two move together


def test_a_window_not_given_is_the_shortest_that_holds_what_a_p99_claim_needs(tmp_path):
    wanted, why = window_requests_for(0.99, 0.95, 5, 1 / 12)
    assert wanted == 887 and "368 for a 95% interval, x2.0 for 5 send-time batches" in why
    every_second = np.arange(0, 3_600, dtype=np.int64) * 1_000_000  # one request a second for an hour
    assert sized_window(every_second, 100) == (120.0, 120)  # 60 s and 90 s hold fewer
    assert sized_window(every_second, 5_000) == (600.0, 600)  # none holds them: the longest, and what it holds
    sizing = WindowSizing(wanted, why)
    facts = survey_log(load_log_source(), "detected", tmp_path / "spec.yaml", None, None, sizing)
    assert facts.window_note is not None and why in facts.window_note
    assert facts.max_requests >= facts.window_requests >= wanted  # the sized window is sent whole, not cut to 500
    given = survey_log(load_log_source(), "detected", tmp_path / "spec.yaml", 60.0, 500, sizing)
    assert given.window_note is None and given.window_s == 60.0


def load_log_source():
    from pipeline.spec.workload import LogSource

    return LogSource(path=str(DEMO_LOG), format="openai_jsonl")


@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1"),
        ("https://host/openai/v1", "https://host/openai/v1"),
    ],
)
def test_the_target_becomes_an_openai_base_url(url, base):
    assert openai_base_url(url) == base


def test_bad_input_is_an_error_naming_what_and_a_hint(tmp_path, monkeypatch):
    existing = tmp_path / "spec.yaml"
    existing.write_text("name: mine\n")
    with pytest.raises(InitError, match=r"spec.yaml: already exists; hint: choose another --out"):
        write_starter_spec(str(DEMO_LOG), "http://127.0.0.1:1", existing)
    assert existing.read_text() == "name: mine\n"  # never overwritten
    with pytest.raises(InitError, match=r"--target 'ftp://x': not an http\(s\) URL; hint:"):
        openai_base_url("ftp://x")
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(InitError, match=r"--api-key-env NO_SUCH_KEY_VAR: the variable is not set; hint: export"):
        write_starter_spec(str(DEMO_LOG), "http://127.0.0.1:1", tmp_path / "new.yaml", api_key_env="NO_SUCH_KEY_VAR")


def test_a_rendered_spec_is_plain_yaml_with_its_comments_in_one_column():
    text = render_starter_spec(starter(log_facts()))
    assert yaml.safe_load(text)["name"] == "re-validation of meta/llama-3.1-8b on requests.jsonl"
    assert "\t" not in text
    assert "    mode: busiest_window          # or peak_hour" in text
    assert "  # ttft_ms: 500" not in text and "  ttft_ms: 220                    # the log's own TTFT" in text


def test_the_claims_tolerances_and_the_candidates_tokenizer_are_written_commented_and_load_uncommented(tmp_path):
    text, spec = written(tmp_path, starter(log_facts()))
    assert spec.claim.tolerance is not None and spec.claim.tolerance.model_fields_set == set()  # defaults apply
    assert "  # tolerance:" in text and "  #   throughput: 0.1" in text and "  #   accuracy: 0.01" in text
    assert "    # tokenizer: hf:PATH" in text
    # uncommented as written, the block sets each kind to its default and the tokenizer loads
    kinds = "|".join(Tolerance.model_fields)
    uncommented = re.sub(r"^  # (tolerance:)", r"  \1", text, flags=re.MULTILINE)
    uncommented = re.sub(rf"^  #(   (?:{kinds}): [\d.]+)$", r"  \1", uncommented, flags=re.MULTILINE)
    uncommented = uncommented.replace("    # tokenizer: hf:PATH", "    tokenizer: server")
    path = tmp_path / "uncommented.yaml"
    path.write_text(uncommented)
    loaded = load_spec(path).spec
    assert loaded.claim.tolerance is not None
    assert loaded.claim.tolerance.model_fields_set == set(Tolerance.model_fields)
    assert loaded.claim.tolerance.of("output_tokens_per_s")[0] == 0.1
    assert loaded.candidates[0].tokenizer == "server"


def test_a_relative_trace_shows_offsets_not_1970_dates(tmp_path):
    from pipeline.spec.workload import LogSource

    trace = tmp_path / "trace.jsonl"
    lines = [{"timestamp": 1000 * i, "input_length": 100, "output_length": 10, "hash_ids": [i]} for i in range(30)]
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines))  # Mooncake: ms after offset 0
    source = LogSource(path=str(trace), format="mooncake_jsonl")
    facts = survey_log(source, "given", tmp_path / "spec.yaml", 10.0, 500, WindowSizing())
    assert (facts.first_arrival, facts.last_arrival) == ("offset 0.000 s", "offset 29.000 s")
    assert facts.window_start.startswith("offset ") and "1970" not in facts.window_end
    dated = LogSource(path=str(trace), format="mooncake_jsonl", origin="2026-11-01T00:00:00Z")
    dated_facts = survey_log(dated, "given", tmp_path / "spec.yaml", 10.0, 500, WindowSizing())
    assert dated_facts.first_arrival == "2026-11-01T00:00:00.000Z"  # with an origin, dates


def test_init_says_what_it_sends_of_the_window_and_why():
    from pipeline.spec.starter import sent_summary

    facts = LogFacts(
        path="log.jsonl", format="openai_jsonl", detection="detected", columns=None, accepted=900, rejected=0,
        first_arrival="a", last_arrival="b", window_s=60, window_start="c", window_end="d", window_requests=723,
        max_requests=500, has_text=True, session_requests=0,
    )  # fmt: skip
    assert sent_summary(facts) == (
        "busiest 60 s: 723 requests, sends the first 500 (max_requests: one run's bound on time and cost; "
        "--max-requests 723 sends them all)"
    )
    assert sent_summary(LogFacts(**{**facts.__dict__, "max_requests": 800})) == (
        "busiest 60 s: 723 requests, sends all 723 (max_requests 800)"
    )


def test_init_sizes_the_client_processes_by_the_windows_peak_in_flight():
    """`shards` in the written spec: one process per 128 requests in flight at the window's peak,
    at the logged latencies (an end and a start at one instant do not overlap); no latency, no count."""
    arrivals = np.arange(300, dtype=np.int64) * 10_000  # one every 10 ms
    assert peak_in_flight(arrivals, np.full(300, 10.0)) == 1  # each ends as the next starts
    assert peak_in_flight(arrivals, np.full(300, 2_000.0)) == 200  # 2 s each: 200 at once
    latency = pa.chunked_array([np.full(300, 2_000.0)])
    sized = window_shards(arrivals, latency, 0, int(arrivals[-1]) + 1)
    assert sized["shards"] == 2 and sized["shards_note"].startswith("the window's peak: 200 requests in flight")
    assert window_shards(arrivals, latency, 0, 1_000_000)["shards"] == 1  # the first second's 100 only
    assert window_shards(arrivals, pa.chunked_array([pa.array([None] * 300, pa.float64())]), 0, 10**9) == {}
