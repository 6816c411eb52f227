"""`claim: {from: FILE, format: …}`: real result files of `vllm bench serve`, GuideLLM and AIPerf
(tests/fixtures/claims/README.md names their sources) read into the claim's figures and conditions,
the fields read as neither reported, and the vendor-conditions arm re-running those conditions."""

from __future__ import annotations

import json
import logging
import statistics
from pathlib import Path

import pytest

from pipeline import REPO_ROOT
from pipeline.files.layout import PackLayout
from pipeline.pack.assemble.arms import conditions_text
from pipeline.plan import arms as plan_arms
from pipeline.plan.synthetic_prompts import ApproxTokenizer
from pipeline.quality import arms as arm_rules
from pipeline.spec import Spec, SpecError, claim_files, load_spec
from pipeline.spec.arms import Arms
from pipeline.spec.claim import Claim
from tests.support.specs import demo_spec_dict

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "claims"
TOKENIZER = ApproxTokenizer()


def claim(**fields) -> Claim:
    return Claim.model_validate(fields, context={"spec_dir": FIXTURES})


def test_a_vllm_bench_result_gives_its_figures_and_open_loop_conditions():
    read = claim(**{"from": "vllm_bench_results.json", "format": "vllm_bench", "record": 0})
    assert read.figures == {
        "requests_per_s": pytest.approx(8.369432347779671),
        "output_tokens_per_s": pytest.approx(2258.212337970085),
        "total_tokens_per_s": pytest.approx(10619.275253401978),
        "ttft_ms_p50": pytest.approx(52.868896000063614),
        "ttft_ms_p99": pytest.approx(98.69780922984769),
        "tpot_ms_p50": pytest.approx(13.686303201518745),
        "tpot_ms_p99": pytest.approx(15.793261194984588),
        "itl_ms_p50": pytest.approx(13.098381999952835),
        "itl_ms_p99": pytest.approx(34.48662216016601),
    }
    conditions = read.conditions
    # 299700 input and 80945 output tokens over 300 completed requests
    assert (conditions.input_tokens, conditions.output_tokens) == (999, 270)
    assert (conditions.request_rate, conditions.arrival_process, conditions.burstiness) == (10.0, "poisson", 1.0)
    assert (conditions.concurrency, conditions.num_requests, conditions.endpoint) == (None, 300, "completions")
    # the tool's means and spreads, its --metadata keys and its own typo: reported, not guessed
    for field in ("mean_ttft_ms", "std_itl_ms", "gpu", "deployment", "input_len", "request_goodput:", "model_id"):
        assert field in read.unmapped
    assert read.source == "vllm_bench result file vllm_bench_results.json"


def test_a_vllm_bench_run_at_an_infinite_rate_is_every_prompt_at_once():
    conditions = claim(**{"from": "vllm_bench_results.json", "format": "vllm_bench", "record": 2}).conditions
    assert (conditions.request_rate, conditions.concurrency, conditions.num_requests) == (None, 900, 900)


def test_a_guidellm_report_gives_its_percentiles_and_its_synchronous_strategy():
    read = claim(**{"from": "guidellm_benchmarks.json", "format": "guidellm"})
    assert read.figures["ttft_ms_p50"] == pytest.approx(16.38054847717285)
    assert read.figures["ttft_ms_p99"] == pytest.approx(21.281957626342773)
    assert read.figures["tpot_ms_p95"] == pytest.approx(4.993332549929619)
    assert read.figures["e2e_ms_p99"] == pytest.approx(689.1846656799316)  # request_latency, in seconds there
    assert read.figures["requests_per_s"] == pytest.approx(1.5481806532737452)
    assert read.figures["output_tokens_per_s"] == pytest.approx(198.13346751788123)
    conditions = read.conditions
    assert (conditions.input_tokens, conditions.output_tokens, conditions.concurrency) == (257, 128, 1)
    assert conditions.dataset == "synthetic (prompt_tokens=256,output_tokens=128)"
    # every request GuideLLM sent was a `text_completions` one: the endpoint is /v1/completions
    assert (conditions.request_rate, conditions.num_requests, conditions.endpoint) == (None, None, "completions")
    # a time-bounded run (max_duration 30 s, no max_number); the backend's own words are left unmapped
    assert {"benchmarks[].args.max_duration", "benchmarks[].worker"} <= set(read.unmapped)


@pytest.mark.parametrize(
    ("kinds", "endpoint"),
    [(["chat_completions"], "chat"), (["text_completions", "chat_completions"], None), (["audio"], None), ([], None)],
)
def test_a_guidellm_endpoint_is_its_requests_one_request_type(kinds, endpoint):
    requests = {"successful": [{"request_type": kind} for kind in kinds], "errored": [], "incomplete": None}
    assert claim_files._guidellm_endpoint(requests) == endpoint


def test_an_aiperf_export_gives_its_figures_and_closed_loop_conditions():
    read = claim(**{"from": "aiperf_profile_export_aiperf.json", "format": "aiperf"})
    assert read.figures == {
        "e2e_ms_p50": pytest.approx(0.6734304999999999),
        "e2e_ms_p90": pytest.approx(0.9101727000000001),
        "e2e_ms_p95": pytest.approx(10.865638499999939),
        "e2e_ms_p99": pytest.approx(15.14387014),
        "requests_per_s": pytest.approx(1854.929714829192),
        "output_tokens_per_s": pytest.approx(1022443.0554692096),
        "total_tokens_per_s": pytest.approx(2042654.398625265),
    }
    conditions = read.conditions
    assert (conditions.input_tokens, conditions.output_tokens) == (550, 551)
    assert (conditions.concurrency, conditions.num_requests, conditions.request_rate) == (4, 64, None)
    assert (conditions.endpoint, conditions.dataset) == ("chat", "synthetic")
    assert {"usage_prompt_tokens", "input_config.tokenizer", "e2e_output_token_throughput"} <= set(read.unmapped)


@pytest.mark.parametrize(
    ("fields", "mode", "concurrency", "count", "lengths"),
    [
        ({"from": "vllm_bench_results.json", "format": "vllm_bench", "record": 0}, "trace", 1, 300, (999, 270)),
        # a closed loop is sized in waves of its concurrency (1 + 6 by default), not the file's own sample
        (
            {"from": "vllm_bench_results.json", "format": "vllm_bench", "record": 2},
            "concurrency",
            900,
            6300,
            (999, 267),
        ),
        ({"from": "guidellm_benchmarks.json", "format": "guidellm"}, "concurrency", 1, 7, (257, 128)),
        ({"from": "aiperf_profile_export_aiperf.json", "format": "aiperf"}, "concurrency", 4, 28, (550, 551)),
    ],
)
def test_the_vendor_arm_reruns_the_files_conditions(fields, mode, concurrency, count, lengths):
    conditions = claim(**fields).conditions
    arm = plan_arms.vendor_conditions_arm(conditions, Arms(), TOKENIZER, min_tokens=True)
    assert arm is not None and (arm.mode, arm.concurrency, len(arm.requests)) == (mode, concurrency, count)
    assert {TOKENIZER.count_messages(item.messages) for item in arm.requests} == {lengths[0]}
    assert {item.max_tokens for item in arm.requests} == {lengths[1]}
    spec = Spec.model_validate(_spec_with(fields), context={"spec_dir": FIXTURES})
    assert arm_rules.planned_arm_requests(spec, 0)[plan_arms.VENDOR_CONDITIONS] == count


def test_an_open_loop_vendor_arm_arrives_at_the_claimed_rate_and_runs_no_ladder():
    conditions = claim(**{"from": "vllm_bench_results.json", "format": "vllm_bench", "record": 0}).conditions
    arm = plan_arms.vendor_conditions_arm(conditions, Arms(), TOKENIZER, min_tokens=False)
    assert arm is not None
    offsets = [item.scheduled_offset_s for item in arm.requests]
    assert offsets[0] == 0.0 and all(b >= a for a, b in zip(offsets, offsets[1:]))
    assert 1 / statistics.mean(b - a for a, b in zip(offsets, offsets[1:])) == pytest.approx(10.0, rel=0.15)
    again = plan_arms.vendor_conditions_arm(conditions, Arms(), TOKENIZER, min_tokens=False)
    assert again is not None and [item.scheduled_offset_s for item in again.requests] == offsets  # seeded
    assert plan_arms.ladder_arms([], conditions, Arms(), TOKENIZER, True) == []


def test_a_spec_set_arms_requests_bounds_the_files_count():
    conditions = claim(**{"from": "vllm_bench_results.json", "format": "vllm_bench", "record": 0}).conditions
    assert plan_arms.vendor_request_count(conditions, Arms()) == 300  # the file's num_prompts
    assert plan_arms.vendor_request_count(conditions, Arms(requests=100)) == 100  # set: the smaller wins
    assert plan_arms.vendor_request_count(conditions, Arms(requests=1000)) == 300


def _spec_with(claim_block: dict) -> dict:
    data = demo_spec_dict()
    data["claim"] = claim_block
    data["workload"]["replay"]["arms"] = {}
    return data


def test_hand_written_figures_and_conditions_win_over_the_file_and_the_load_says_so(write_spec, caplog):
    path = write_spec(
        _spec_with(
            {
                "from": str(FIXTURES / "aiperf_profile_export_aiperf.json"),
                "format": "aiperf",
                "source": "vendor datasheet, table 3",
                "figures": {"request_throughput": 1500.0, "p99_ttft_ms": 250.0},
                "conditions": {"concurrency": 8, "hardware": "1x H100"},
            }
        )
    )
    with caplog.at_level(logging.WARNING, logger="pipeline.spec"):
        loaded = load_spec(path).spec.claim
    assert loaded.source == "vendor datasheet, table 3"
    assert loaded.figures["requests_per_s"] == 1500.0  # hand-written wins
    assert loaded.figures["ttft_ms_p99"] == 250.0  # the file has none: added
    assert loaded.figures["e2e_ms_p99"] == pytest.approx(15.14387014)  # the file's, where nothing is hand-written
    assert (loaded.conditions.concurrency, loaded.conditions.num_requests, loaded.conditions.hardware) == (
        8,
        64,
        "1x H100",
    )
    assert loaded.notes == [
        "figure requests_per_s: hand-written value wins over the file's 1854.93",
        "condition concurrency: hand-written 8 wins over the file's 4",
    ]
    assert "hand-written value wins" in caplog.text and "hand-written 8 wins" in caplog.text


def test_the_file_is_found_beside_the_spec(write_spec, tmp_path: Path):
    (tmp_path / "vendor.json").write_bytes((FIXTURES / "aiperf_profile_export_aiperf.json").read_bytes())
    loaded = load_spec(write_spec(_spec_with({"from": "vendor.json", "format": "aiperf"}))).spec.claim
    assert loaded.conditions.concurrency == 4


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"from": "absent.json", "format": "aiperf"}, "claim.from: .*absent.json: cannot read the claim file"),
        (
            {"from": "vllm_bench_results.json", "format": "vllm_bench"},
            "holds 9 results; hint: say which with claim.record",
        ),
        (
            {"from": "vllm_bench_results.json", "format": "vllm_bench", "record": 9},
            "claim.record 9 is not one of its 9",
        ),
        (
            {"from": "aiperf_profile_export_aiperf.json", "format": "genai_perf"},
            "claim.format: 'genai_perf'; hint: one of",
        ),
        ({"format": "aiperf"}, "claim.format without claim.from"),
        ({"from": "README.md", "format": "guidellm"}, "README.md: not JSON"),
    ],
)
def test_a_claim_file_that_cannot_be_read_is_named_with_the_field(write_spec, tmp_path: Path, block, message):
    for name in ("vllm_bench_results.json", "aiperf_profile_export_aiperf.json", "README.md"):
        (tmp_path / name).write_bytes((FIXTURES / name).read_bytes())
    path = write_spec(_spec_with(block))
    with pytest.raises(SpecError, match=message) as raised:
        load_spec(path)
    assert str(path) in str(raised.value) and ": claim: " in str(raised.value)


def test_the_packs_vendor_conditions_say_the_open_loop_and_the_count():
    fields = {"from": "vllm_bench_results.json", "format": "vllm_bench", "record": 0}
    spec = Spec.model_validate(_spec_with(fields), context={"spec_dir": FIXTURES})
    assert conditions_text(spec) == (
        "999 tokens in, 270 out, open loop at 10 requests/s (poisson arrivals), 300 requests (the claim's 300)"
    )
    aiperf = {"from": "aiperf_profile_export_aiperf.json", "format": "aiperf"}
    spec = Spec.model_validate(_spec_with(aiperf), context={"spec_dir": FIXTURES})
    assert conditions_text(spec) == (
        "550 tokens in, 551 out, closed loop at concurrency 4, 28 requests: 7 waves of 4, the first warm-up "
        "(the vendor's sample: 64)"
    )


def test_a_vllm_bench_result_with_a_concurrency_cap_and_detailed_lengths(tmp_path: Path):
    """The real record 0, as `--max-concurrency 16 --save-detailed` against the chat endpoint would
    have written it (the fields those flags add): the cap is the closed loop (the rate stays in
    the conditions, not applied), the per-request lengths' means are the lengths."""
    record = json.loads((FIXTURES / "vllm_bench_results.json").read_text().splitlines()[0])
    record.update(max_concurrency=16, endpoint_type="openai-chat", input_lens=[1000, 998], output_lens=[500, 301])
    (tmp_path / "detailed.json").write_text(json.dumps(record))
    read = Claim.model_validate({"from": "detailed.json", "format": "vllm_bench"}, context={"spec_dir": tmp_path})
    conditions = read.conditions
    assert (conditions.input_tokens, conditions.output_tokens, conditions.concurrency) == (999, 400, 16)
    assert (conditions.request_rate, conditions.endpoint) == (10.0, "chat")
    arm = plan_arms.vendor_conditions_arm(conditions, Arms(), TOKENIZER, min_tokens=False)
    assert arm is not None and (arm.mode, arm.concurrency, len(arm.requests)) == ("concurrency", 16, 7 * 16)
    assert not {"input_lens", "output_lens", "max_concurrency", "endpoint_type"} & set(read.unmapped)


def test_the_pack_keeps_the_claim_file_beside_its_spec_copy_so_verify_loads_it(write_spec, tmp_path: Path):
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "run.json").write_bytes((FIXTURES / "aiperf_profile_export_aiperf.json").read_bytes())
    spec_path = write_spec(_spec_with({"from": "vendor/run.json", "format": "aiperf"}))
    layout = PackLayout(tmp_path / "pack")
    copy = layout.claim_file_copy("vendor/run.json")
    assert copy == tmp_path / "pack" / "vendor" / "run.json"
    copy.parent.mkdir(parents=True)
    copy.write_bytes((tmp_path / "vendor" / "run.json").read_bytes())
    layout.spec_copy.write_bytes(spec_path.read_bytes())  # as assets/pack.py assembles the pack
    assert load_spec(layout.spec_copy).spec.claim.conditions.concurrency == 4
    assert layout.claim_file_copy("/abs/run.json") is None and layout.claim_file_copy("../run.json") is None
