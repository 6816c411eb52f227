"""The evidence-pack document (`evidence_pack.json`), typed: every key the pack writes, and what
a reader may rely on.

The pack is a published contract: buyers, `loadproof verify`, the history of the next model
version and the side-by-side comparison all read it. These models are that contract in code, so a
renamed key fails the type checker and a malformed value fails when the pack is built or written,
not when somebody reads it. `schemas/evidence_pack.schema.json` is generated from them
(`python -m pipeline.pack.document.schema`; a unit test fails when the committed file differs); the
published schema never closes an object, so keys may be added without breaking a reader of an
older schema; none may be renamed. The measured parts and the conventions (absent keys, numbers,
table rows): `pack/document/parts.py`; here, the run's records the assets add, and the document itself.
"""

from __future__ import annotations

from typing import Any

from pydantic import MISSING, Field

from pipeline.pack.document.decision_parts import Decision
from pipeline.pack.document.endpoint_parts import (
    ClientValidity,
    ColdCacheNote,
    EndpointFingerprint,
    GpuEnergy,
    PrefixCacheHits,
    ServerLoadLevel,
    ServerTimings,
    ServerTtft,
    TokenAgreement,
)
from pipeline.pack.document.parts import (
    AccuracySection,
    Claim,
    ConcurrencyRow,
    Condition,
    DivergenceAxis,
    ErrorRow,
    ExecutiveSummary,
    Figure,
    FileRef,
    LatencyBucket,
    Number,
    Part,
    ProxyVerdict,
    RankingRow,
    RelativePath,
    ReplaySummary,
    ReplyMixRow,
    Sha256,
    SideBySide,
    SweepSection,
)
from pipeline.pack.document.section_parts import (
    BillCheckRow,
    CapacityRow,
    SteadyStateRow,
    VendorConditionsRow,
    WaterfallRow,
)


class Partition(Part):
    """A candidate × model-version pack: which partition it measured."""

    candidate: str
    model_version: str


class GlossaryEntry(Part):
    """One figure (a latency family once) as the metric catalogue declares it
    (`pipeline/analysis/declare/catalogue.py` `glossary`): the pack's definitions are rendered from it."""

    name: str
    display: str
    unit: str
    better: str  # "higher" or "lower"
    bases: list[str]
    definition: str
    interval: str
    source: str


class PartitionRun(Part):
    """The partition (candidate, version, run) a side-by-side pack's figures come from."""

    candidate: str
    model_version: str
    run_id: str


class HistoryRow(Part):
    candidate: str
    metric: str
    unit: str
    claimed: Number | None
    previous: Number | None
    current: Number | None
    delta: Number | None  # current − previous
    relative_change: Number | None
    previous_verdict: str | None  # as the previous pack wrote it
    current_verdict: str | None
    verdict_changed: bool


class History(Part):
    """A candidate × model-version pack beside the previous version's run: figure deltas."""

    previous_model_version: str | None
    previous_run_id: str | None
    rows: list[HistoryRow]
    fingerprint_changed: bool | None


class CheckResult(Part):
    """One asset check that guarded the figures (`run_id`: borrowed from the run that planned;
    `partition`: a side-by-side pack's, from that partition's pack)."""

    asset: str
    check: str
    passed: bool
    severity: str
    explanation: list[str] | MISSING = MISSING  # a failed suite's lines: what, how many rows, example ids, what to do
    run_id: str | MISSING = MISSING
    partition: str | MISSING = MISSING


class RunLineage(Part):
    """Which run and assets made the pack, with which code."""

    run_id: str
    asset_keys: list[str]
    code_version: str
    partition_runs: list[PartitionRun] | MISSING = MISSING  # a side-by-side pack: each partition's run
    plan_run_id: str | MISSING = MISSING  # a side-by-side pack: the run that ingested, sampled and planned


class ManifestEntry(Part):
    path: RelativePath
    sha256: Sha256


class SubPack(Part):
    """A complete pack in a folder below this one (candidates/<candidate>/<version>/), covered
    through its own manifest: `sha256` is its evidence_pack.json's (which holds that manifest),
    `run_id` the run that wrote it (`pack/audit/tree.py`)."""

    path: RelativePath
    sha256: Sha256
    run_id: str


class EvidencePackDraft(Part):
    """The pack while the assets assemble it: `build_pack` fills the figures and sections, the
    asset adds the partition, history, checks and lineage; `EvidencePack` is what is written."""

    run_id: str = Field(min_length=1)
    spec_sha256: Sha256
    spec_name: str | MISSING = MISSING
    generated_at: str | MISSING = MISSING
    claim: Claim | MISSING = MISSING
    figures: list[Figure]
    # the claim at the vendor's own conditions, and the headline walked to the buyer's load (pack/assemble/arms.py)
    vendor_conditions: list[VendorConditionsRow] | MISSING = MISSING
    headline_waterfall: list[WaterfallRow] | MISSING = MISSING
    conditions: list[Condition] | MISSING = MISSING
    proxy_verdict: ProxyVerdict | None | MISSING = MISSING  # None: the claim divergence did not run
    # the rule on condition divergence, kept as "what to expect" once the proxy verdict is measured
    expected_proxy_verdict: ProxyVerdict | None | MISSING = MISSING
    # per candidate the bottom line and its claims, then the recommendation (pack/assemble/decision.py)
    decision: Decision | MISSING = MISSING
    executive_summary: list[ExecutiveSummary] | MISSING = MISSING
    claim_divergence: list[DivergenceAxis] | MISSING = MISSING
    profile: dict[str, Any] | MISSING = MISSING  # prompt_profile.json, as the workload stage wrote it
    replay: ReplaySummary | MISSING = MISSING
    client_validity: ClientValidity
    inputs: list[FileRef] | MISSING = MISSING
    side_by_side: SideBySide | MISSING = MISSING
    ranking: list[RankingRow] | MISSING = MISSING
    accuracy: AccuracySection | None | MISSING = MISSING  # None: no labelled slice
    latency_by_bucket: list[LatencyBucket] | MISSING = MISSING
    reply_mix: list[ReplyMixRow] | MISSING = MISSING  # reasoning, tool calls, structured output; [] when none
    bill_check: list[BillCheckRow] | MISSING = MISSING  # billed vs counted tokens; [] without usage reported
    errors_by_type: list[ErrorRow] | MISSING = MISSING
    concurrency: list[ConcurrencyRow] | MISSING = MISSING
    steady_state: list[SteadyStateRow] | MISSING = MISSING  # each candidate's window and its tests
    sweep: SweepSection | None | MISSING = MISSING  # None: no load sweep ran
    capacity: list[CapacityRow] | None | MISSING = MISSING  # the capacity at the SLA; None: no sweep
    versions: dict[str, str | None] | MISSING = MISSING
    endpoint_fingerprints: list[EndpointFingerprint] | MISSING = MISSING
    token_agreement: list[TokenAgreement] | MISSING = MISSING
    prefix_cache: list[PrefixCacheHits] | MISSING = MISSING  # the server's cache hits vs the ceiling
    cold_cache: ColdCacheNote | None | MISSING = MISSING  # None: the log has no prefix blocks
    # per request kind, the client's TTFT and TPOT vs the server's own per-request timings; [] when none
    server_timings: list[ServerTimings] | MISSING = MISSING
    server_ttft: list[ServerTtft] | MISSING = MISSING  # the server's TTFT histogram vs the client's
    server_levels: list[ServerLoadLevel] | MISSING = MISSING  # its queue and KV use per load level
    gpu_energy: list[GpuEnergy] | MISSING = MISSING  # GPU utilisation, power, J per output token
    partition: Partition | MISSING = MISSING
    partitions: list[PartitionRun] | MISSING = MISSING
    history: History | MISSING = MISSING
    data_quality: list[CheckResult] | MISSING = MISSING
    lineage: RunLineage | MISSING = MISSING
    glossary: list[GlossaryEntry] | MISSING = MISSING  # what each figure is, from the metric catalogue

    def document(self) -> dict[str, Any]:
        """The document as plain values: the keys that were set, in the model's order."""
        return self.model_dump()


class EvidencePack(EvidencePackDraft):
    """evidence_pack.json: every measured figure beside the published one, traceable to the raw
    timings. Keys may be added; none of these may be renamed."""

    data_quality: list[CheckResult]
    lineage: RunLineage
    manifest: list[ManifestEntry]  # every file below the pack folder outside its sub-packs and `.dagster`
    # absent: written before whole-folder manifests (its journal/ and candidates/ were in no manifest)
    subpacks: list[SubPack] | MISSING = MISSING
