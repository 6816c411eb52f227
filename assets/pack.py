"""evidence_pack: every measured figure beside the published one, traceable to the raw timings."""

import json
import shutil

import pyarrow.parquet as pq
from dagster import (
    AssetCheckResult,
    AssetExecutionContext,
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
from pipeline import checks, expectations
from pipeline.pack.charts import comparison_charts, pack_charts
from pipeline.pack.model import build_pack, run_lineage
from pipeline.pack.render import JSON_NAME, render_markdown, write_pack
from pipeline.sqlrun import run_query
from resources import PackStorage, SpecResource


def data_quality(context: AssetExecutionContext) -> list[dict]:
    """Every asset check evaluated so far in this run: what was checked and whether it passed."""
    records = context.instance.get_records_for_run(context.run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION).records
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


def materialised_assets(context: AssetExecutionContext) -> list[str]:
    """The assets this run has materialised so far: the pack's upstream lineage in the UI."""
    records = context.instance.get_records_for_run(context.run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION).records
    return sorted({record.event_log_entry.dagster_event.asset_key.to_user_string() for record in records})


@asset(
    group_name="pack",
    deps=[
        prompt_profile, endpoint_fingerprint, latency_percentiles, throughput, throughput_buckets, error_breakdown,
        cost_per_decision, accuracy_summary, accuracy_by_label,
    ],
    description="evidence_pack.{html,md,json}: claim vs measured, intervals, verdicts, plots, lineage, manifest.",
)
def evidence_pack(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    loaded, layout = spec.load(), storage.layout()
    shutil.copyfile(loaded.path, layout.spec_copy)
    pack = build_pack(
        loaded=loaded,
        run_id=context.run_id,
        layout=layout,
        profile=json.loads(layout.json("prompt_profile").read_text()),
        replay_summary=json.loads(layout.json("replay_summary").read_text()),
        latency_rows=pq.read_table(layout.table("latency_percentiles")).to_pylist(),
        throughput_rows=pq.read_table(layout.table("throughput")).to_pylist(),
        cost_rows=pq.read_table(layout.table("cost_per_decision")).to_pylist(),
        raw_timings_rows=pq.read_metadata(layout.table("raw_timings")).num_rows,
        accuracy_rows=pq.read_table(layout.table("accuracy_summary")).to_pylist(),
        accuracy_label_rows=pq.read_table(layout.table("accuracy_by_label")).to_pylist(),
        error_rows=pq.read_table(layout.table("error_breakdown")).to_pylist(),
        accuracy_results_rows=pq.read_metadata(layout.table("accuracy_results")).num_rows,
        calibration=json.loads(layout.json("client_calibration").read_text()),
    )
    pack["endpoint_fingerprints"] = json.loads(layout.json("endpoint_fingerprint").read_text())
    pack["token_agreement"] = run_query("token_agreement", {"raw_timings": layout.table("raw_timings")}).to_pylist()
    pack["data_quality"] = data_quality(context)
    pack["lineage"] = run_lineage(context.run_id, materialised_assets(context) + ["evidence_pack"])
    files = write_pack(layout.root, pack, {**pack_charts(layout, loaded.spec), **comparison_charts(pack)})
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


@asset_check(asset=evidence_pack, description="Every file a figure's lineage names is in the pack with the recorded sha256.")
def evidence_pack_lineage_hashes_match(storage: PackStorage) -> AssetCheckResult:
    layout = storage.layout()
    outcome = checks.lineage_hashes_match(json.loads((layout.root / JSON_NAME).read_text()), layout.root)
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset_check(asset=evidence_pack, description="great-expectations: every claimed figure has, for every candidate, a measured figure (with a verdict) or a stated reason.")
def evidence_pack_claims_accounted_for(spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    pack = json.loads((storage.layout().root / JSON_NAME).read_text())
    candidates = [c.name for c in spec.load().spec.candidates]
    params = {"claims": len(pack["claim"]["figures"]), "candidates": len(candidates)}
    outcome = expectations.validate(expectations.claims_suite, expectations.claims_frame(pack, candidates), params, name="evidence_pack_claims")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)
