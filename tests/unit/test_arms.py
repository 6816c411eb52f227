"""The arms without a server: what each arm plans, a closed loop's steady window on hand-built
timings, a step's change interval, the waterfall's order and the arm checks."""

from __future__ import annotations

import dataclasses
import json
import math

import pyarrow as pa
import pytest

from pipeline.analysis.judge.arms import arm_figures, arm_metrics, arm_window
from pipeline.analysis.judge.figures_table import judged_vendor_figures
from pipeline.analysis.statistics.stats import INSTRUMENT_ERROR_RULE
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.pack.assemble import arms as pack_arms
from pipeline.plan import arms as plan_arms
from pipeline.plan.synthetic_prompts import ApproxTokenizer
from pipeline.quality import arms as arm_rules
from pipeline.replay.conditions.arms import ARM_TIMINGS_SCHEMA, with_arm
from pipeline.spec import Spec
from pipeline.spec.arms import Arms
from pipeline.spec.claim import ClaimConditions
from tests.support.arm_plans import buyer_plan, judged_at_vendor_conditions
from tests.support.raw_timings import MS, S, timing
from tests.support.specs import demo_spec_dict

CONDITIONS = ClaimConditions(input_tokens=64, output_tokens=16, concurrency=4)
TOKENIZER = ApproxTokenizer()


def test_the_vendor_arm_sends_the_claimed_lengths_closed_loop_at_the_claimed_concurrency():
    arm = plan_arms.vendor_conditions_arm(CONDITIONS, Arms(requests=5), TOKENIZER, min_tokens=True)
    assert arm is not None and (arm.arm, arm.mode, arm.concurrency) == ("a_vendor_conditions", "concurrency", 4)
    assert [item.request_id for item in arm.requests] == [f"a_vendor_conditions-{i:05d}" for i in range(5)]
    assert {TOKENIZER.count_messages(item.messages) for item in arm.requests} == {64}
    assert {(item.max_tokens, item.min_tokens, item.scheduled_offset_s) for item in arm.requests} == {(16, 16, None)}
    assert len({json.dumps(item.messages) for item in arm.requests}) == 5  # no shared prefix
    without = plan_arms.vendor_conditions_arm(CONDITIONS, Arms(requests=5), TOKENIZER, min_tokens=False)
    assert without is not None and {item.min_tokens for item in without.requests} == {None}


def test_no_arm_when_the_claim_does_not_say_its_lengths_and_concurrency():
    partial = ClaimConditions(input_tokens=64, concurrency=4)
    assert plan_arms.vendor_conditions_arm(partial, Arms(), TOKENIZER, True) is None
    assert plan_arms.ladder_arms(buyer_plan(), partial, Arms(), TOKENIZER, True) == []


def test_the_vendors_steps_speak_the_claims_api_and_the_buyers_steps_the_candidates():
    """(a)-(c) on the API the vendor's benchmark called (`vllm bench serve`: completions); from (d)
    on, the buyer's requests as the candidate's `api` sends them (None: the candidate's own)."""
    conditions = CONDITIONS.model_copy(update={"endpoint": "completions"})
    vendor = plan_arms.vendor_conditions_arm(conditions, Arms(requests=5), TOKENIZER, False)
    ladder = plan_arms.ladder_arms(buyer_plan(), conditions, Arms(requests=5), TOKENIZER, True)
    assert vendor is not None and [vendor.api, *(arm.api for arm in ladder)] == ["completions"] * 3 + [None]
    unsaid = plan_arms.vendor_conditions_arm(CONDITIONS, Arms(requests=5), TOKENIZER, False)
    assert unsaid is not None and unsaid.api is None


def test_each_ladder_step_adds_one_axis_of_the_buyers_load():
    plan = buyer_plan()
    lengths, outputs, structure = plan_arms.ladder_arms(plan, CONDITIONS, Arms(requests=5), TOKENIZER, True)
    assert [arm.arm for arm in (lengths, outputs, structure)] == [
        "b_prompt_lengths",
        "c_output_lengths",
        "d_request_structure",
    ]
    assert {arm.mode for arm in (lengths, outputs, structure)} == {"concurrency"}
    # (b): the plan's prompt lengths, synthetic text, the vendor's output length
    assert [TOKENIZER.count_messages(i.messages) for i in lengths.requests] == [
        i.prompt_tokens_client for i in plan[:5]
    ]
    assert {i.max_tokens for i in lengths.requests} == {16}
    # (c): + the plan's output lengths, same prompts
    assert [i.max_tokens for i in outputs.requests] == [i.max_tokens for i in plan[:5]]
    assert [i.messages for i in outputs.requests] == [i.messages for i in lengths.requests]
    # (d): the plan's own requests, the session kept (renamed), no think time in a closed loop
    assert [i.messages for i in structure.requests] == [i.messages for i in plan[:5]]
    second_turn = structure.requests[2]
    assert (second_turn.follows_request_id, second_turn.think_time_s) == ("d_request_structure-00000", 0.0)


def test_the_request_settings_step_adds_the_buyers_tools_schemas_and_reasoning_settings():
    fields = {"tools": [{"type": "function", "function": {"name": "card_status"}}], "reasoning_effort": "high"}
    plan = [dataclasses.replace(item, request_fields=fields if i % 2 else None) for i, item in enumerate(buyer_plan())]
    *_, structure, settings = plan_arms.ladder_arms(plan, CONDITIONS, Arms(requests=5), TOKENIZER, True)
    assert (structure.arm, settings.arm) == ("d_request_structure", "d2_request_settings")
    # (d) sends the buyer's requests as the vendor's benchmark would: no request fields
    assert {item.request_fields is None for item in structure.requests} == {True}
    # (d2): the same requests, now with the fields each carried, the session kept (renamed)
    assert [i.request_fields for i in settings.requests] == [i.request_fields for i in plan[:5]]
    assert [i.messages for i in settings.requests] == [i.messages for i in structure.requests]
    assert settings.requests[2].follows_request_id == "d2_request_settings-00000"
    # the arrival step takes (d2)'s requests, fields and all
    assert plan_arms.last_closed_loop([structure, settings]) is settings
    arrivals = plan_arms.arrival_process_arm(plan, settings, rate_per_s=1.0)
    assert arrivals is not None and arrivals.requests[1].request_fields == fields
    assert arrivals.requests[2].follows_request_id == "e_arrival_process-00000"
    # a plan without request fields has no (d2): the step would repeat (d)
    assert [arm.arm for arm in plan_arms.ladder_arms(buyer_plan(), CONDITIONS, Arms(requests=5), TOKENIZER, True)][
        -1
    ] == "d_request_structure"
    planned = arm_rules.planned_arm_requests(Spec.model_validate(demo_spec_dict()), 30, request_fields=True)
    assert "d2_request_settings" in planned


def test_the_arrival_step_rescales_the_plans_offsets_to_the_request_structure_steps_rate():
    plan = buyer_plan()
    structure = plan_arms.ladder_arms(plan, CONDITIONS, Arms(requests=5), TOKENIZER, True)[-1]
    arm = plan_arms.arrival_process_arm(plan, structure, rate_per_s=2.5)
    assert arm is not None and (arm.arm, arm.mode) == ("e_arrival_process", "trace")
    offsets = [i.scheduled_offset_s for i in arm.requests]
    # five requests over the plan's 8 s span: 0.625/s logged; at 2.5/s the span is 2 s
    assert offsets == pytest.approx([0.0, 0.5, 1.0, 1.5, 2.0])
    assert len(arm.requests) / (max(offsets) - min(offsets)) == pytest.approx(2.5)
    assert arm.requests[2].think_time_s == pytest.approx(0.75)  # think times scaled by the same factor
    assert arm.requests[2].follows_request_id == "e_arrival_process-00000"
    assert plan_arms.arrival_process_arm(plan, structure, rate_per_s=None) is None


def closed_loop_rows(requests: int, concurrency: int, latency_s: float, tokens: int = 10) -> list[dict]:
    """A closed loop on a virtual clock: each worker sends its next request when its last ends."""
    rows = []
    for index in range(requests):
        worker, wave = index % concurrency, index // concurrency
        sent = int((wave * latency_s + worker * 0.001) * S) + S
        rows.append(timing(f"a-{index:05d}", sent, 50 * MS, int(latency_s * S), tokens=tokens))
    return rows


def arm_table(rows: list[dict], arm: str = "a_vendor_conditions") -> pa.Table:
    return with_arm(pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), arm).cast(ARM_TIMINGS_SCHEMA)


def demo_spec(**claim_figures) -> Spec:
    data = demo_spec_dict()
    data["claim"]["conditions"]["concurrency"] = 4
    if claim_figures:
        data["claim"]["figures"] = claim_figures
    return Spec.model_validate(data)


def test_a_closed_loops_steady_window_leaves_out_the_first_wave_and_the_drain():
    """Four workers, 1 s per request, replies in clumps of four (a batching server): the window
    runs from the first reply to the end that found nothing left to send, whole cycles only."""
    rows = closed_loop_rows(requests=20, concurrency=4, latency_s=1.0)
    table = arm_table(rows)
    warmup_s, cooldown_s = arm_window(table, concurrency=4)
    sends, ends = sorted(r["t_sent_ns"] for r in rows), sorted(r["t_end_ns"] for r in rows)
    assert warmup_s == pytest.approx((sends[4] - sends[0]) / S)  # the fifth send: the first reply's
    assert cooldown_s == pytest.approx((ends[-1] - ends[20 - 4]) / S)  # from the 17th end
    figures = {r["metric"]: r for r in arm_figures(table, demo_spec()).to_pylist()}
    assert figures["requests_per_s"]["n"] == 16  # every request after the first wave
    assert figures["requests_per_s"]["measured"] == pytest.approx(4.0)  # concurrency / latency, exactly
    assert figures["output_tokens_per_s"]["measured"] == pytest.approx(40.0)
    assert arm_window(arm_table(rows[:4]), concurrency=4) is None  # only the first wave: no window
    empty = {r["metric"]: r for r in arm_figures(arm_table(rows[:4]), demo_spec()).to_pylist()}
    assert empty["output_tokens_per_s"]["measured"] is None and empty["output_tokens_per_s"]["n"] == 0


def test_an_arm_reports_the_claimed_throughput_and_latency_figures_not_accuracy():
    spec = demo_spec()
    assert "accuracy" not in arm_metrics(spec)
    assert {"output_tokens_per_s", "ttft_ms_p95", "e2e_ms_p99", "error_rate", "requests_per_s"} <= set(
        arm_metrics(spec)
    )


def test_a_steps_change_combines_two_independent_intervals():
    previous = {"measured": 100.0, "ci_low": 90.0, "ci_high": 120.0}
    current = {"measured": 60.0, "ci_low": 57.0, "ci_high": 64.0}
    change, low, high = pack_arms.change_interval(previous, current)
    assert change == -40.0
    assert low == pytest.approx(-40.0 - math.hypot(3.0, 20.0))  # current's low side, previous's high side
    assert high == pytest.approx(-40.0 + math.hypot(4.0, 10.0))
    assert pack_arms.change_interval(previous, {**current, "ci_high": None})[1:] == (None, None)


def arm_row(arm: str, metric: str, measured: float) -> dict:
    return {
        "candidate": "c",
        "arm": arm,
        "metric": metric,
        "measured": measured,
        "ci_low": measured * 0.9,
        "ci_high": measured * 1.1,
        "n": 50,
        "interval_method": None,
    }


def test_the_waterfall_walks_the_axes_in_order_and_ends_at_capacity_and_production_load():
    spec = demo_spec(output_tokens_per_s=4200, accuracy=0.9)
    rows = [arm_row(arm, "output_tokens_per_s", 1000.0 - 100 * i) for i, arm in enumerate(plan_arms.LADDER)]
    levels = [{"candidate": "c", "load_level": 2.0, "output_tokens_per_s": 450.0, "requests_in_window": 80}]
    summary = [{"candidate": "c", "max_sla_load_level": 2.0}]
    figures = [
        {
            "candidate": "c",
            "metric": "output_tokens_per_s",
            "measured": 300.0,
            "ci_low": 280.0,
            "ci_high": 320.0,
            "n": 200,
            "lineage": None,
        }
    ]
    (row,) = pack_arms.headline_waterfall(spec, rows, figures, levels, summary, None, None)
    assert [s.axis for s in row.steps] == [
        "vendor conditions",
        "prompt lengths",
        "output lengths",
        "request structure",
        "request settings",
        "arrival process",
        "capacity at SLA",
        "production load",
    ]
    assert [s.measured for s in row.steps] == [1000.0, 900.0, 800.0, 700.0, 600.0, 500.0, 450.0, 300.0]
    assert [s.change for s in row.steps] == [None, -100.0, -100.0, -100.0, -100.0, -100.0, -50.0, -150.0]
    vendor = pack_arms.vendor_conditions_section(
        spec,
        rows,
        judged_at_vendor_conditions(spec, rows),
        {"sql": "sql/arm_window.sql", "inputs": [{"path": "data/arm_timings.parquet", "sha256": "0" * 64}]},
    )
    assert [(v.metric, v.verdict) for v in vendor] == [("output_tokens_per_s", "not reproduced")]


def test_the_waterfalls_capacity_step_below_the_production_load_says_how_far_below():
    spec = demo_spec(output_tokens_per_s=4200)
    rows = [arm_row(arm, "output_tokens_per_s", 1000.0) for arm in plan_arms.LADDER]
    levels = [{"candidate": "c", "load_level": 0.25, "output_tokens_per_s": 90.0, "requests_in_window": 20}]
    summary = [
        {"candidate": "c", "max_sla_load_level": 0.25, "max_sla_load_level_label": "0.25×", "headroom_factor": 0.25}
    ]
    (row,) = pack_arms.headline_waterfall(spec, rows, [], levels, summary, None, None)
    step = next(s for s in row.steps if s.axis == "capacity at SLA")
    assert step.measured == 90.0
    assert (
        step.label == "capacity at the buyer's SLA (highest SLA-meeting sweep level, 0.25×: 0.25× the production load)"
    )
    nothing = [{"candidate": "c", "max_sla_load_level": None, "min_load_level_label": "1 in flight"}]
    (row,) = pack_arms.headline_waterfall(spec, rows, [], levels, nothing, None, None)
    step = next(s for s in row.steps if s.axis == "capacity at SLA")
    assert step.measured is None and step.reason == "no load level met the SLA, down to 1 in flight"


def test_the_arm_check_catches_a_missing_a_duplicated_and_an_unplanned_request():
    planned = {"a_vendor_conditions": 3}
    good = [
        {"candidate": "c", "arm": "a_vendor_conditions", "request_id": f"a_vendor_conditions-{i:05d}"} for i in range(3)
    ]
    assert arm_rules.arm_timings_complete(good, planned, "c").passed
    assert not arm_rules.arm_timings_complete(good[:2], planned, "c").passed
    assert not arm_rules.arm_timings_complete(good + good[:1], planned, "c").passed
    stray = {"candidate": "c", "arm": "z_unplanned", "request_id": "z-00000"}
    assert not arm_rules.arm_timings_complete([*good, stray], planned, "c").passed


def test_the_arm_check_bounds_each_arms_span():
    rows = [{"arm": "a", "t_sent_ns": 0, "t_end_ns": 5 * S}, {"arm": "a", "t_sent_ns": S, "t_end_ns": 12 * S}]
    assert arm_rules.arm_timings_bounded(rows, max_duration_s=10, request_timeout_s=5).passed
    assert not arm_rules.arm_timings_bounded(rows, max_duration_s=5, request_timeout_s=5).passed


def test_planned_arm_requests_follow_the_spec():
    data = demo_spec_dict()
    data["workload"]["replay"]["arms"] = {"requests": 50}
    planned = arm_rules.planned_arm_requests(Spec.model_validate(data), production_requests=30)
    assert planned == dict.fromkeys(
        ["a_vendor_conditions", "b_prompt_lengths", "c_output_lengths", "d_request_structure"], 50
    )


def test_a_request_failing_at_once_does_not_open_the_window_before_any_reply():
    """A 429 in the first wave frees its worker at the start: the request sent in its place is the
    (concurrency + 1)-th send, yet nothing has been served yet; the window opens at the first reply."""
    rows = [timing(f"a-{i:05d}", S + i * MS, 50 * MS, S) for i in range(3)]  # replies end at ~2 s
    rows.append(timing("a-00003", S + 3 * MS, 0, MS, error="http_429"))  # fails at once
    rows.append(timing("a-00004", S + 5 * MS, 50 * MS, S))  # sent in its place, before any reply
    rows += [timing(f"a-{i:05d}", 2 * S + i * MS, 50 * MS, S) for i in range(5, 12)]  # the steady refills
    warmup_s, _ = arm_window(arm_table(rows), concurrency=4)
    assert warmup_s == pytest.approx((2 * S + 5 * MS - S) / S)  # the first send after the first reply


def test_a_plan_shorter_than_the_arm_is_sent_over_again_sessions_and_arrivals_kept():
    plan = buyer_plan()  # six requests, 0 … 10 s
    *_, structure = plan_arms.ladder_arms(plan, CONDITIONS, Arms(requests=9), TOKENIZER, True)
    assert len(structure.requests) == 9
    # the second pass's copy of the session turn follows the second pass's copy of its first turn
    assert structure.requests[8].follows_request_id == "d_request_structure-00006"
    arm = plan_arms.arrival_process_arm(plan, structure, rate_per_s=9 / 8)
    assert arm is not None
    # the second pass starts one mean gap (2 s) after the first pass's 10 s; logged 9/16 per s, asked 9/8
    assert [i.scheduled_offset_s for i in arm.requests] == pytest.approx([0, 1, 2, 3, 4, 5, 6, 7, 8])


def test_the_figures_check_wants_every_figure_of_every_arm_that_ran_inside_its_interval():
    row = {"arm": "a", "metric": "m", "measured": 1.0, "ci_low": 0.5, "ci_high": 2.0}
    assert arm_rules.arm_figures_complete([row], {"a"}, ["m"]).passed
    assert not arm_rules.arm_figures_complete([row], {"a", "b"}, ["m"]).passed
    assert not arm_rules.arm_figures_complete([{**row, "ci_low": 1.5}], {"a"}, ["m"]).passed


def test_an_arms_latency_figures_carry_its_loop_lag_and_a_vendor_verdict_is_judged_with_it():
    """Issue 45 item 2: the arm's loop receipt lag (`arm_loop_lag_p99_ms`, recorded as it ran) rides
    on its TTFT and E2E figures, not on TPOT (spread over the reply's tokens) nor a rate; a hold at
    the vendor's conditions stands where the error is within a quarter of the claim's tolerance
    (C·t/4) and is inconclusive, by the instrument rule, where it is not."""
    rows = closed_loop_rows(requests=80, concurrency=4, latency_s=1.0)
    claims = {"ttft_ms_p50": 1000, "e2e_ms_p90": 4000, "tpot_ms_p50": 200, "output_tokens_per_s": 1}
    spec = demo_spec(**claims)

    def judged(lag_ms: float | None) -> dict[str, dict]:
        table = with_arm(pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), "a_vendor_conditions", lag_ms)
        figure_rows = arm_figures(table.cast(ARM_TIMINGS_SCHEMA), spec).to_pylist()
        return {f["metric"]: f for f in judged_vendor_figures(spec, figure_rows)}

    quiet, busy, unprobed = judged(2.0), judged(30.0), judged(None)
    assert {m: quiet[m].get("instrument_error_ms") for m in claims} == {
        "ttft_ms_p50": 2.0,
        "e2e_ms_p90": 2.0,
        "tpot_ms_p50": None,
        "output_tokens_per_s": None,
    }
    assert quiet["ttft_ms_p50"]["instrument_error_source"] == "loop receipt lag"
    assert quiet["ttft_ms_p50"]["tolerance"] == pytest.approx(0.1)  # the latency default
    assert quiet["ttft_ms_p50"]["verdict"] == "holds" == unprobed["ttft_ms_p50"]["verdict"]  # 2 ms ≤ 25 ms
    assert "instrument_error_ms" not in unprobed["ttft_ms_p50"]
    assert busy["ttft_ms_p50"]["verdict"] == "inconclusive"  # 30 ms > ¼ × 10 % of 1,000 ms
    assert busy["ttft_ms_p50"]["decision_rule"] == INSTRUMENT_ERROR_RULE
    assert busy["e2e_ms_p90"]["verdict"] == "holds"  # 30 ms ≤ ¼ × 10 % of 4,000 ms
    assert busy["tpot_ms_p50"]["verdict"] == quiet["tpot_ms_p50"]["verdict"] == "holds"
