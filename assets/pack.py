"""evidence_pack (per candidate × model version, with history) and candidate_comparison (the
side-by-side pack of every candidate's latest version): every measured figure beside the
published one, traceable to the raw timings."""

import json
import shutil

import pyarrow.parquet as pq
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetExecutionContext,
    AssetKey,
    DagsterEventType,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)

from assets.accuracy import accuracy_by_label, accuracy_summary
from assets.analysis import cost_per_decision, error_breakdown, latency_percentiles, throughput, throughput_buckets
from assets.fingerprint import endpoint_fingerprint
from assets.ingest import prompt_profile
from assets.partitions import MODEL_VERSIONS, REVALIDATION_PARTITIONS, partition_candidate, partition_of
from assets.sweep import sweep_summary
from pipeline.duck.session import run_query
from pipeline.pack import gather, history
from pipeline.pack.charts import comparison_charts, pack_charts
from pipeline.pack.layout import PackLayout
from pipeline.pack.model import build_pack, run_lineage
from pipeline.pack.render import JSON_NAME, render_markdown, write_pack
from pipeline.pack.sweep import read_sweep_tables, sweep_charts
from pipeline.quality import expectations, rules
from pipeline.spec import LoadedSpec
from resources import PackStorage, SpecResource


def data_quality(context) -> list[dict]:
    """Every asset check evaluated so far in this run: what was checked and whether it passed."""
    return _check_results(context, context.run_id)


def shared_inputs_quality(context, evaluated: list[dict]) -> list[dict]:
    """The checks of the shared inputs (log to plan) from the run that last planned, when this
    partition's run did not materialise them itself (a later candidate of the same CLI run)."""
    event = context.instance.get_latest_materialization_event(AssetKey("replay_plan"))
    if event is None or event.run_id == context.run_id:
        return []
    graph = context.job_def.asset_layer.asset_graph
    unpartitioned = {key.to_user_string() for key in graph.get_all_asset_keys() if graph.get(key).partitions_def is None}
    assets_here = {row["asset"] for row in evaluated}
    shared = [row for row in _check_results(context, event.run_id) if row["asset"] in unpartitioned - assets_here]
    return [{**row, "run_id": event.run_id} for row in shared]


def _check_results(context, run_id: str) -> list[dict]:
    records = context.instance.get_records_for_run(run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION).records
    results = []
    for record in records:
        evaluation = record.event_log_entry.dagster_event.event_specific_data
        results.append(
            {
                "asset": evaluation.asset_key.to_user_string(),
                "check": evaluation.check_name,
                "passed": evaluation.passed,
                "severity": "blocking" if evaluation.blocking else evaluation.severity.value.lower(),
            }
        )
    return results


def materialised_assets(context) -> list[str]:
    """The assets this run has materialised so far: the pack's upstream lineage in the UI."""
    records = context.instance.get_records_for_run(context.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION).records
    return sorted({record.event_log_entry.dagster_event.asset_key.to_user_string() for record in records})


def assemble(context, loaded: LoadedSpec, layout: PackLayout, replay_summary: dict) -> dict:
    """The pack model from the tables in `layout` (one partition's, or the gathered comparison)."""
    shutil.copyfile(loaded.path, layout.spec_copy)
    sweep_levels, sweep_rows, sweep_replay, sweep_timings_rows = read_sweep_tables(layout)
    pack = build_pack(
        loaded=loaded,
        run_id=context.run_id,
        layout=layout,
        profile=json.loads(layout.json("prompt_profile").read_text()),
        replay_summary=replay_summary,
        latency_rows=pq.read_table(layout.table("latency_percentiles")).to_pylist(),
        throughput_rows=pq.read_table(layout.table("throughput")).to_pylist(),
        cost_rows=pq.read_table(layout.table("cost_per_decision")).to_pylist(),
        raw_timings_rows=pq.read_metadata(layout.table("raw_timings")).num_rows,
        accuracy_rows=pq.read_table(layout.table("accuracy_summary")).to_pylist(),
        accuracy_label_rows=pq.read_table(layout.table("accuracy_by_label")).to_pylist(),
        error_rows=pq.read_table(layout.table("error_breakdown")).to_pylist(),
        accuracy_results_rows=pq.read_metadata(layout.table("accuracy_results")).num_rows,
        calibration=json.loads(layout.json("client_calibration").read_text()),
        sweep_level_rows=sweep_levels,
        sweep_summary_rows=sweep_rows,
        sweep_replay=sweep_replay,
        sweep_timings_rows=sweep_timings_rows,
    )
    pack["endpoint_fingerprints"] = json.loads(layout.json("endpoint_fingerprint").read_text())
    pack["token_agreement"] = run_query("token_agreement", {"raw_timings": layout.table("raw_timings")}).to_pylist()
    return pack


def write(context, loaded: LoadedSpec, layout: PackLayout, pack: dict) -> MaterializeResult:
    charts = {**pack_charts(layout, loaded.spec), **comparison_charts(pack), **sweep_charts(pack["sweep"])}
    files = write_pack(layout.root, pack, charts)
    claimed = [f for f in pack["figures"] if f["claimed"] is not None]
    return MaterializeResult(
        metadata={
            **{name: MetadataValue.path(str(path)) for name, path in files.items()},
            "figures": len(pack["figures"]),
            "verdicts": MetadataValue.json({f"{f['candidate']}/{f['metric']}": f["verdict"] for f in claimed}),
            "summary": MetadataValue.md(render_markdown(pack).split("## Conditions")[0]),
            "run_id": context.run_id,
        }
    )


PACK_DEPS = [
    prompt_profile, endpoint_fingerprint, latency_percentiles, throughput, throughput_buckets, error_breakdown,
    cost_per_decision, accuracy_summary, accuracy_by_label, sweep_summary,
]


@asset(
    group_name="pack",
    deps=PACK_DEPS,
    partitions_def=REVALIDATION_PARTITIONS,
    description="One candidate at one model version: evidence_pack.{html,md,json} with claim vs measured, intervals, verdicts, plots, lineage, manifest, and the figure deltas against the previous version's run.",
)
def evidence_pack(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    loaded, shared, layout = spec.load(), storage.layout(), storage.partition_layout(context)
    candidate, version = partition_of(context)
    pack = assemble(context, loaded, layout, json.loads(layout.json("replay_summary").read_text()))
    pack["partition"] = {"candidate": candidate, "model_version": version}
    keys = [REVALIDATION_PARTITIONS.get_partition_key_from_str(k) for k in context.instance.get_materialized_partitions(context.asset_key)]
    measured = {k.keys_by_dimension["model_version"] for k in keys if k.keys_by_dimension["candidate"] == candidate}
    before = history.previous_version(context.instance.get_dynamic_partitions(MODEL_VERSIONS.name), measured, version)
    pack["history"] = history.compare(pack, history.load_previous_pack(shared.candidate_dir(candidate), before), before)
    evaluated = data_quality(context)
    pack["data_quality"] = shared_inputs_quality(context, evaluated) + evaluated
    pack["lineage"] = run_lineage(context.run_id, materialised_assets(context) + ["evidence_pack"])
    result = write(context, loaded, layout, pack)
    gather.record_latest(shared, candidate, version, context.run_id)
    return result


@asset(
    group_name="pack",
    deps=[evidence_pack],
    description="Every candidate's latest measured version side by side (evidence_pack.* at the top of the pack folder): tables, ranking by cost per decision, each figure traceable to the gathered raw timings.",
)
def candidate_comparison(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    loaded, layout = spec.load(), storage.layout()
    versions = gather.latest_versions(layout, [c.name for c in loaded.spec.candidates])
    pack = assemble(context, loaded, layout, gather.gather(layout, versions))
    pack["partitions"] = [{"candidate": v.candidate, "model_version": v.model_version, "run_id": v.run_id} for v in versions]
    pack["data_quality"] = gather.partition_quality(versions) + data_quality(context)
    pack["lineage"] = run_lineage(context.run_id, materialised_assets(context) + ["candidate_comparison"])
    pack["lineage"]["partition_runs"] = pack["partitions"]
    return write(context, loaded, layout, pack)


def _lineage_hashes_match(layout: PackLayout) -> AssetCheckResult:
    outcome = rules.lineage_hashes_match(json.loads((layout.root / JSON_NAME).read_text()), layout.root)
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


def _claims_accounted_for(layout: PackLayout, candidates: list[str]) -> AssetCheckResult:
    pack = json.loads((layout.root / JSON_NAME).read_text())
    params = {"claims": len(pack["claim"]["figures"]), "candidates": len(candidates)}
    outcome = expectations.validate(expectations.claims_suite, expectations.claims_frame(pack, candidates), params, name="evidence_pack_claims")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


LINEAGE_DESCRIPTION = "Every file a figure's lineage names is in the pack with the recorded sha256."
CLAIMS_DESCRIPTION = "great-expectations: every claimed figure has, for every candidate, a measured figure (with a verdict) or a stated reason."


@asset_check(asset=evidence_pack, description=LINEAGE_DESCRIPTION)
def evidence_pack_lineage_hashes_match(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    return _lineage_hashes_match(storage.partition_layout(context))


@asset_check(asset=evidence_pack, description=CLAIMS_DESCRIPTION)
def evidence_pack_claims_accounted_for(context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    return _claims_accounted_for(storage.partition_layout(context), [partition_candidate(context, spec.load().spec).name])


@asset_check(asset=candidate_comparison, description=LINEAGE_DESCRIPTION)
def candidate_comparison_lineage_hashes_match(storage: PackStorage) -> AssetCheckResult:
    return _lineage_hashes_match(storage.layout())


@asset_check(asset=candidate_comparison, description=CLAIMS_DESCRIPTION)
def candidate_comparison_claims_accounted_for(spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    return _claims_accounted_for(storage.layout(), [c.name for c in spec.load().spec.candidates])
