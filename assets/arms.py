"""The arms group, per candidate × model version: the vendor's own benchmark at `claim.conditions`
and the attribution ladder's steps (pipeline/plan/arms.py), sent after every other replay into
`arm_timings`; then `arm_figures`, each arm analysed by the headline's queries over its own steady
window. Both are empty without `workload.replay.arms` (or without the claim's lengths and
concurrency), so the graph is the same for every spec."""

import json

import pyarrow.parquet as pq
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetExecutionContext,
    MaterializeResult,
    MetadataValue,
)

from assets.replay import replay_plan
from assets.support.checks import check_result, tied_check
from assets.support.metadata import query_files, write_table
from assets.support.partition_assets import partition_asset
from assets.support.partitions import partition_candidate, partition_layout
from assets.support.replays import PartitionReplay, replay_asset
from assets.sweep import sweep_timings
from pipeline.analysis.judge import arms as arm_analysis
from pipeline.analysis.judge.arms import ARM_FIGURES_SCHEMA
from pipeline.contracts import ARM_FIGURES, ARM_TIMINGS, REPLAY_PLAN
from pipeline.files.layout import PackLayout
from pipeline.pack.assemble.arms import arm_steps
from pipeline.plan import arms as arm_plans
from pipeline.plan.replay_plan import plan_tokenizer
from pipeline.quality import arms as arm_rules
from pipeline.replay.conditions.arms import ARM_TIMINGS_SCHEMA, run_arms
from pipeline.spec import Spec
from resources import PackStorage, SpecResource

GROUP = "arms"


@replay_asset(
    group_name=GROUP,
    deps=[replay_plan, sweep_timings],  # after every other replay: no two ever overlap
    description=(
        "The claim's own benchmark at claim.conditions, then the attribution ladder's steps (the buyer's prompt "
        "lengths, output lengths, requests, their tools, schemas and reasoning settings, arrivals), each a bounded "
        "replay; every row carries `arm`."
    ),
)
def arm_timings(context: AssetExecutionContext, run: PartitionReplay) -> MaterializeResult:
    conditions, arms = run.spec.claim.conditions, run.replay.arms
    summaries: list[dict] = []
    if arms is None or not arm_plans.runnable(conditions):
        timings = ARM_TIMINGS_SCHEMA.empty_table()
    else:
        # the claimed lengths under the plan's own tokenizer (hf:, gguf:, server): the lengths the server counts
        tokenizer, min_tokens = plan_tokenizer(run.loaded, run.endpoint.target), run.spec.workload.prompts.min_tokens
        vendor = arm_plans.vendor_conditions_arm(conditions, arms, tokenizer, min_tokens)
        ladder = arm_plans.ladder_arms(run.plan, conditions, arms, tokenizer, min_tokens)

        def arrival_step(ran: dict) -> list:
            structure = arm_plans.last_closed_loop(ladder)
            if structure is None:
                return []
            figures = arm_analysis.arm_figures(ran[structure.arm], run.spec)
            rate = arm_analysis.measured(figures, run.candidate.name, structure.arm, "requests_per_s")
            arm = arm_plans.arrival_process_arm(run.plan, structure, rate)
            return [arm] if arm is not None else []

        scrapes = run.scrapes("arm")
        timings, summaries = run_arms(
            [arm for arm in [vendor, *ladder] if arm is not None],
            run.runs,
            arms.max_duration_s,
            follow_up=arrival_step if arms.ladder else None,
            log=context.log.info,
            around_arm=scrapes.around,  # the server's own view of each arm, in data/server_metrics.parquet
        )
        scrapes.write(run.layout, context.log.warning)
    meta = run.write(ARM_TIMINGS, timings, inputs=[REPLAY_PLAN])
    meta["arms"] = MetadataValue.json(json.loads(json.dumps(summaries, default=str)))
    return MaterializeResult(metadata=meta)


def _arm_rows(storage: PackStorage, context) -> list[dict]:
    columns = ["candidate", "arm", "request_id", "t_sent_ns", "t_end_ns"]
    return pq.read_table(partition_layout(storage, context).path(ARM_TIMINGS), columns=columns).to_pylist()


@tied_check(
    asset=arm_timings,
    blocking=True,
    description="Each arm sent what it planned: one row per planned request (ids <arm>-<n>), each once.",
)
def arm_timings_one_row_per_planned_request(
    context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage
) -> AssetCheckResult:
    loaded, layout = spec.load().spec, partition_layout(storage, context)
    plan = pq.read_table(layout.path(REPLAY_PLAN), columns=["labelled_item_id", "request_fields"]).to_pylist()
    production = [row for row in plan if row["labelled_item_id"] is None]
    with_fields = any(row["request_fields"] for row in production)
    planned = arm_rules.planned_arm_requests(loaded, len(production), with_fields)
    return check_result(
        arm_rules.arm_timings_complete(_arm_rows(storage, context), planned, partition_candidate(context, loaded).name)
    )


@tied_check(
    asset=arm_timings,
    blocking=True,
    description="Each arm bounded: first send to last end within workload.replay.arms.max_duration_s + one timeout.",
)
def arm_timings_bounded(
    context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage
) -> AssetCheckResult:
    replay = spec.load().spec.workload.replay
    limit = replay.arms.max_duration_s if replay.arms is not None else 0.0
    return check_result(arm_rules.arm_timings_bounded(_arm_rows(storage, context), limit, replay.request_timeout_s))


@partition_asset(
    group_name=GROUP,
    deps=[arm_timings],
    description=(
        "Per arm: every claimed throughput and latency figure (and output tokens/s, requests/s) over the arm's "
        "steady window, with its interval: the headline's queries over that arm's rows only."
    ),
)
def arm_figures(context: AssetExecutionContext, spec: Spec, layout: PackLayout) -> MaterializeResult:
    timings = pq.read_table(layout.path(ARM_TIMINGS))
    table = arm_analysis.arm_figures(timings, spec) if timings.num_rows else ARM_FIGURES_SCHEMA.empty_table()
    meta = write_table(context, layout, ARM_FIGURES, table, inputs=[ARM_TIMINGS])
    steps = arm_steps()  # the queries the pack's vendor-conditions lineage names: the last computed the figure
    return MaterializeResult(metadata=meta | query_files(steps[-1], steps[:-1]))


@tied_check(
    asset=arm_figures,
    description="Every arm that ran has its figures: one row per arm × figure, intervals around the value.",
)
def arm_figures_complete(
    context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage
) -> AssetCheckResult:
    layout = partition_layout(storage, context)
    ran = set(pq.read_table(layout.path(ARM_TIMINGS), columns=["arm"]).column("arm").to_pylist())
    outcome = arm_rules.arm_figures_complete(
        pq.read_table(layout.path(ARM_FIGURES)).to_pylist(), ran, arm_analysis.arm_metrics(spec.load().spec)
    )
    return check_result(outcome)
