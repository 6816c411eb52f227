"""evidence_pack (per candidate × model version, with history) and candidate_comparison (the
side-by-side pack of every candidate's latest version): every measured figure beside the
published one, traceable to the raw timings."""

import json
import shutil
from datetime import UTC

from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetExecutionContext,
    MaterializeResult,
    MetadataValue,
    asset,
)
from pydantic import MISSING

from assets.accuracy import accuracy_by_label, accuracy_summary
from assets.analysis import TABLES, figures, sweep_summary
from assets.replay import endpoint_fingerprint
from assets.support.checks import check_result, tied_check
from assets.support.metadata import input_run_id
from assets.support.partitions import (
    MODEL_VERSIONS,
    REVALIDATION_PARTITIONS,
    partition_candidate,
    partition_layout,
    partition_of,
)
from assets.support.run_records import (
    data_quality,
    materialised_assets,
    plan_run_id,
    shared_inputs_quality,
)
from assets.workload import prompt_profile
from pipeline.analysis.endpoint_view.endpoint_views import ENDPOINT_VIEWS
from pipeline.analysis.judge.figures_table import claimed_figures, claimed_verdicts
from pipeline.contracts import RAW_TIMINGS
from pipeline.files.hashing import sha256_file
from pipeline.files.layout import PackLayout
from pipeline.pack.assemble import gather, history
from pipeline.pack.assemble.arms import waterfall_charts
from pipeline.pack.assemble.inputs import read_pack_inputs
from pipeline.pack.assemble.model import build_pack, run_lineage
from pipeline.pack.assemble.sweep import sweep_charts
from pipeline.pack.assemble.ui_links import link_figures
from pipeline.pack.document import CheckResult, EvidencePackDraft, History, Partition, PartitionRun, RunLineage
from pipeline.pack.render.charts import comparison_charts, pack_charts
from pipeline.pack.render.pages import JSON_NAME, render_markdown, tolerance_label, write_pack
from pipeline.quality import expectations, rules
from pipeline.spec import LoadedSpec
from resources import PackStorage, SpecResource

GROUP = "pack"


def assemble(
    context, loaded: LoadedSpec, layout: PackLayout, run_id: str | None = None, generated_at: str | None = None
) -> EvidencePackDraft:
    """The pack from the files in `layout` (one partition's, or the gathered comparison); `run_id`
    and `generated_at`: the run it documents, when that is not this one (`measuring_run`)."""
    shutil.copyfile(loaded.path, layout.spec_copy)
    claim_file = loaded.spec.claim.from_
    if claim_file is not None and (copy := layout.claim_file_copy(claim_file)) is not None:
        copy.parent.mkdir(parents=True, exist_ok=True)  # the vendor's result file, as the claim read it
        shutil.copyfile(loaded.resolve(claim_file), copy)
    return build_pack(run_id or context.run_id, read_pack_inputs(loaded, layout), generated_at=generated_at)


def measuring_run(context, layout: PackLayout) -> tuple[str, str | None]:
    """The run a candidate's pack documents: the one that made its raw timings (the run id they
    carry), and when it was created (UTC). A run that re-materialises the pack on the same files
    writes the same bytes: its own id and clock are in the instance, not in the pack."""
    run_id = input_run_id(layout, [RAW_TIMINGS]) or context.run_id
    record = context.instance.get_run_record_by_id(run_id)
    created = None if record is None else record.create_timestamp.astimezone(UTC).isoformat(timespec="seconds")
    return run_id, created


def write(
    context, loaded: LoadedSpec, layout: PackLayout, pack: EvidencePackDraft, extra: dict | None = None
) -> MaterializeResult:
    """The pack's pages, and their metadata: each page with its sha256, the input files the pack's
    lineage names with theirs (the same values: `inputs`), the verdicts."""
    document = pack.document()
    charts = {
        **pack_charts(layout, loaded.spec),
        **comparison_charts(document),
        **sweep_charts(document["sweep"]),
        **waterfall_charts(document.get("headline_waterfall")),
    }
    confidence = loaded.spec.analysis.confidence
    files = write_pack(layout.root, pack, charts, confidence=confidence)
    return MaterializeResult(
        metadata={
            **{name: MetadataValue.path(str(path)) for name, path in files.items()},
            **{f"{name}_sha256": sha256_file(path) for name, path in files.items()},
            # path, sha256, rows of each input file, as the pack's lineage rows name them
            "inputs": MetadataValue.json(document.get("inputs", [])),
            "figures": len(document["figures"]),
            # candidate/metric/basis: the pack's own figures (data/figures.parquet's rows), as it renders them
            "verdicts": MetadataValue.json(claimed_verdicts(document["figures"])),
            # the tolerance each verdict used, under the same keys
            "tolerances": MetadataValue.json(
                {key: tolerance_label(row) for key, row in claimed_figures(document["figures"]).items()}
            ),
            "summary": MetadataValue.md(render_markdown(document, confidence=confidence).split("## Conditions")[0]),
            "run_id": context.run_id,
            **(extra or {}),
        }
    )


PACK_DEPS = [
    prompt_profile,
    endpoint_fingerprint,
    *(file.name for file in TABLES),
    accuracy_summary,
    accuracy_by_label,
    sweep_summary,
    "arm_figures",  # assets/arms.py: the vendor's conditions and the attribution ladder
    figures,  # every figure the pack shows, made by analysis
    *(file.name for file in ENDPOINT_VIEWS),  # the endpoint's own view, made by analysis
]


@asset(
    group_name=GROUP,
    deps=PACK_DEPS,
    partitions_def=REVALIDATION_PARTITIONS,
    description=(
        "One candidate at one model version: evidence_pack.{html,md,json} with claim vs measured, intervals, "
        "verdicts, plots, lineage, manifest, and the figure deltas against the previous version's run."
    ),
)
def evidence_pack(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    loaded, shared, layout = spec.load(), storage.layout(), partition_layout(storage, context)
    candidate, version = partition_of(context)
    run_id, created = measuring_run(context, layout)
    pack = assemble(context, loaded, layout, run_id, created)
    pack.partition = Partition(candidate=candidate, model_version=version)
    link_figures(pack.figures, {candidate: (version, run_id)}, storage.ui_url)
    keys = [
        REVALIDATION_PARTITIONS.get_partition_key_from_str(k)
        for k in context.instance.get_materialized_partitions(context.asset_key)
    ]
    measured = {k.keys_by_dimension["model_version"] for k in keys if k.keys_by_dimension["candidate"] == candidate}
    before = history.previous_version(context.instance.get_dynamic_partitions(MODEL_VERSIONS.name), measured, version)
    previous = history.load_previous_pack(shared.candidate_dir(candidate), before)
    pack.history = History.model_validate(history.compare(pack.document(), previous, before))
    evaluated = data_quality(context, run_id)
    pack.data_quality = [
        CheckResult.model_validate(row) for row in shared_inputs_quality(context, evaluated, run_id) + evaluated
    ]
    upstream = [key for key in materialised_assets(context, run_id) if key != "evidence_pack"]
    pack.lineage = run_lineage(run_id, [*upstream, "evidence_pack"])
    result = write(context, loaded, layout, pack)
    gather.record_latest(shared, candidate, version, run_id)
    return result


@asset(
    group_name=GROUP,
    deps=[evidence_pack],
    description=(
        "Every candidate's latest measured version side by side (evidence_pack.* at the top of the pack folder): "
        "tables, ranking by cost per decision, each figure traceable to the gathered raw timings."
    ),
)
def candidate_comparison(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    loaded, layout = spec.load(), storage.layout()
    versions = gather.latest_versions(layout, [c.name for c in loaded.spec.candidates])
    gather.gather(layout, versions)
    pack = assemble(context, loaded, layout)
    pack.partitions = [
        PartitionRun(candidate=v.candidate, model_version=v.model_version, run_id=v.run_id) for v in versions
    ]
    runs = {v.candidate: (v.model_version, v.run_id) for v in versions}
    link_figures(pack.figures, runs, storage.ui_url, combined=True)
    pack.data_quality = [
        CheckResult.model_validate(row) for row in gather.partition_quality(versions) + data_quality(context)
    ]
    assets = materialised_assets(context) + ["candidate_comparison"]
    planned = plan_run_id(context)  # a side-by-side run planned in a run of its own
    planned_apart = planned if planned not in {v.run_id for v in versions} else None
    pack.lineage = run_lineage(context.run_id, assets, partition_runs=pack.partitions, plan_run_id=planned_apart)
    # each combined file of the top data/ (the files this pack's figures were read from) with its sha256,
    # where the figures' `combined_url` lands; and the partition files and runs it was merged from
    merged = gather.merged_from(layout, versions)
    combined = {entry["path"]: entry["sha256"] for entry in merged}
    pack = first_run_kept(pack, layout)
    return write(context, loaded, layout, pack, {**combined, "merged_from": MetadataValue.json(merged)})


WRITER_IDENTITY = ("run_id", "generated_at", "lineage")  # the run that wrote a pack, not what it says


def first_run_kept(pack: EvidencePackDraft, layout: PackLayout) -> EvidencePackDraft:
    """`pack`, or where the folder already holds one that says the same in every part but the run
    that wrote it (`WRITER_IDENTITY`), that one's run id, time and lineage: re-made by a later run on
    the same inputs, the comparison keeps its bytes, and a sealed pack still verifies (the later
    run's own id and clock are in the instance). A partition's pack needs none of this: it names
    its measuring run (`measuring_run`)."""
    try:
        before = json.loads((layout.root / JSON_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return pack
    now = json.loads(json.dumps(pack.document(), default=str))
    if not before.get("run_id") or any(now[key] != before.get(key) for key in now if key not in WRITER_IDENTITY):
        return pack
    kept = pack.model_copy(deep=True)
    kept.run_id, kept.generated_at = before["run_id"], before.get("generated_at", MISSING)
    kept.lineage = RunLineage.model_validate(before["lineage"]) if "lineage" in before else MISSING
    return kept


def _lineage_hashes_match(layout: PackLayout) -> AssetCheckResult:
    outcome = rules.lineage_hashes_match(json.loads((layout.root / JSON_NAME).read_text()), layout.root)
    return check_result(outcome)


def _claims_accounted_for(layout: PackLayout, candidates: list[str]) -> AssetCheckResult:
    pack = json.loads((layout.root / JSON_NAME).read_text())
    params = {"claims": len(pack["claim"]["figures"]), "candidates": len(candidates)}
    outcome = expectations.validate(
        expectations.claims_suite, expectations.claims_frame(pack, candidates), params, name="evidence_pack_claims"
    )
    return check_result(outcome)


LINEAGE_DESCRIPTION = "Every file a figure's lineage names is in the pack with the recorded sha256."
CLAIMS_DESCRIPTION = (
    "great-expectations: every claimed figure is accounted for, for every candidate: a verdict at some basis "
    "(holds, holds within tolerance, not reproduced, inconclusive), on a measured figure or, where no run of the "
    "spec judges it, an inconclusive one stating why and the setting that would judge it."
)


@tied_check(asset=evidence_pack, description=LINEAGE_DESCRIPTION)
def evidence_pack_lineage_hashes_match(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    return _lineage_hashes_match(partition_layout(storage, context))


@tied_check(asset=evidence_pack, description=CLAIMS_DESCRIPTION)
def evidence_pack_claims_accounted_for(
    context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage
) -> AssetCheckResult:
    return _claims_accounted_for(
        partition_layout(storage, context), [partition_candidate(context, spec.load().spec).name]
    )


@tied_check(asset=candidate_comparison, description=LINEAGE_DESCRIPTION)
def candidate_comparison_lineage_hashes_match(storage: PackStorage) -> AssetCheckResult:
    return _lineage_hashes_match(storage.layout())


@tied_check(asset=candidate_comparison, description=CLAIMS_DESCRIPTION)
def candidate_comparison_claims_accounted_for(spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    return _claims_accounted_for(storage.layout(), [c.name for c in spec.load().spec.candidates])
