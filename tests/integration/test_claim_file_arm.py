"""A vendor's `vllm bench serve` result file as the claim, its conditions re-run against the
reference endpoint over loopback: the file's lengths, an open loop at its 10 requests/s (Poisson,
seeded), its 300 prompts bounded to 40 by the spec's `workload.replay.arms.requests`; the arm has
a steady window and figures at the vendor's conditions. The profile decodes at a fixed 5 ms a
token, so 40 requests of ~270 tokens arriving over ~4 s stay well inside the bound."""

from __future__ import annotations

from pathlib import Path

from pipeline import REPO_ROOT
from pipeline.analysis.judge.arms import arm_figures, measured
from pipeline.pack.assemble import arms as pack_arms
from pipeline.plan import arms as plan_arms
from pipeline.plan.synthetic_prompts import ApproxTokenizer
from pipeline.reference import ReferenceServer
from pipeline.replay.conditions.arms import ArmPlan, run_arms
from pipeline.spec import Spec
from tests.support.arm_plans import judged_at_vendor_conditions, reference_arm_runs
from tests.support.profiles import steady_profile
from tests.support.specs import demo_spec_dict

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "claims"


def test_a_vllm_bench_file_is_rerun_as_an_open_loop_at_its_rate(tmp_path: Path):
    data = demo_spec_dict()
    data["claim"] = {"from": "vllm_bench_results.json", "format": "vllm_bench", "record": 0}
    data["workload"]["replay"]["arms"] = {"requests": 40, "max_duration_s": 30, "ladder": False}
    spec = Spec.model_validate(data, context={"spec_dir": FIXTURES})
    arms = spec.workload.replay.arms
    assert arms is not None
    arm = plan_arms.vendor_conditions_arm(spec.claim.conditions, arms, ApproxTokenizer(), False)
    assert arm is not None and (arm.mode, len(arm.requests)) == ("trace", 40)
    with ReferenceServer(str(steady_profile(tmp_path))) as server:
        timings, summaries = run_arms(
            [arm],
            reference_arm_runs(server.base_url, "run-claim-file", tmp_path),
            arms.max_duration_s,
        )
    # vllm bench serve's default backend calls /v1/completions: the arm does too
    assert spec.claim.conditions.endpoint == arm.api == "completions"
    assert [(s["arm"], s["mode"], s["sent"], s["api"]) for s in summaries] == [
        ("a_vendor_conditions", "trace", 40, "completions")
    ]
    assert set(timings.column("status").to_pylist()) == {"ok"} and min(timings.column("content_chunks").to_pylist()) > 0
    figures = arm_figures(timings, spec)
    rate = measured(figures, "ref", plan_arms.VENDOR_CONDITIONS, "requests_per_s")
    assert rate is not None and 5 < rate < 20  # 40 seeded Poisson arrivals at 10/s
    rows = pack_arms.vendor_conditions_section(
        spec,
        figures.to_pylist(),
        judged_at_vendor_conditions(spec, figures.to_pylist()),
        {"sql": "s", "inputs": [{"path": "p", "sha256": "0" * 64}]},
    )
    assert {row.metric for row in rows} >= {"requests_per_s", "ttft_ms_p99", "itl_ms_p50"}
    assert all(row.n > 0 for row in rows)
    assert rows[0].conditions.startswith("999 tokens in, 270 out, open loop at 10 requests/s (poisson arrivals)")


def _rerun(tmp_path: Path, claim: dict, requests: int) -> tuple[Spec, ArmPlan, list[dict]]:
    """The claim file's vendor-conditions arm, bounded to `requests`, run against the reference."""
    data = demo_spec_dict()
    data["claim"] = claim
    data["workload"]["replay"]["arms"] = {"requests": requests, "max_duration_s": 30, "ladder": False}
    spec = Spec.model_validate(data, context={"spec_dir": FIXTURES})
    arms = spec.workload.replay.arms
    assert arms is not None
    arm = plan_arms.vendor_conditions_arm(spec.claim.conditions, arms, ApproxTokenizer(), False)
    assert arm is not None
    with ReferenceServer(str(steady_profile(tmp_path))) as server:
        timings, summaries = run_arms(
            [arm], reference_arm_runs(server.base_url, "run-claim-file", tmp_path), arms.max_duration_s
        )
    assert set(timings.column("status").to_pylist()) == {"ok"}
    return spec, arm, summaries


def test_a_guidellm_report_is_rerun_one_request_at_a_time_on_text_completions(tmp_path: Path):
    """GuideLLM's synchronous benchmark (one request in flight), 257 tokens in and 128 out, every
    request a `text_completions` one: the arm is a closed loop of one on /v1/completions."""
    spec, arm, summaries = _rerun(tmp_path, {"from": "guidellm_benchmarks.json", "format": "guidellm"}, 6)
    assert (spec.claim.conditions.concurrency, spec.claim.conditions.endpoint) == (1, "completions")
    assert (arm.mode, arm.concurrency, arm.api, len(arm.requests)) == ("concurrency", 1, "completions", 6)
    assert {request.max_tokens for request in arm.requests} == {128}
    assert [(s["mode"], s["sent"], s["api"]) for s in summaries] == [("concurrency", 6, "completions")]


def test_an_aiperf_export_is_rerun_at_its_concurrency_on_its_endpoint(tmp_path: Path):
    """AIPerf's closed loop: its concurrency, its lengths (550 in, 551 out) and its endpoint."""
    spec, arm, summaries = _rerun(tmp_path, {"from": "aiperf_profile_export_aiperf.json", "format": "aiperf"}, 4)
    conditions = spec.claim.conditions
    assert conditions.concurrency is not None and conditions.endpoint is not None
    assert (arm.mode, arm.concurrency, arm.api) == ("concurrency", conditions.concurrency, conditions.endpoint)
    assert {request.max_tokens for request in arm.requests} == {551}
    assert [(s["mode"], s["sent"]) for s in summaries] == [("concurrency", 4)]
