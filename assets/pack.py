"""evidence_pack: every measured figure beside the published one, traceable to the raw timings."""

import json
import shutil

import pyarrow.parquet as pq
from dagster import AssetCheckResult, AssetExecutionContext, MaterializeResult, MetadataValue, asset, asset_check

from assets.accuracy import accuracy_by_label, accuracy_summary
from assets.analysis import cost_per_decision, error_breakdown, latency_percentiles, throughput, throughput_buckets
from assets.ingest import prompt_profile
from pipeline import checks
from pipeline.pack.model import build_pack
from pipeline.pack.render import JSON_NAME, render_markdown, write_pack
from resources import PackStorage, SpecResource


@asset(
    group_name="pack",
    deps=[
        prompt_profile, latency_percentiles, throughput, throughput_buckets, error_breakdown, cost_per_decision,
        accuracy_summary, accuracy_by_label,
    ],
    description="evidence_pack.json + evidence_pack.md: claim vs measured, intervals, verdicts, lineage, manifest.",
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
    )
    files = write_pack(layout.root, pack)
    claimed = [f for f in pack["figures"] if f["claimed"] is not None]
    return MaterializeResult(
        metadata={
            "json": MetadataValue.path(str(files["json"])),
            "markdown": MetadataValue.path(str(files["markdown"])),
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
