"""`loadproof verify PACK_DIR`: re-check every hash of an evidence pack and re-compute every
figure from its raw timings, with the SQL copied into the pack.

What is checked, in the folder given and in every sub-pack it lists (candidates/<c>/<v>/):
1. the hash tree (`pack/audit/tree.py`): every file in the manifest exists with its sha256, every
   sub-pack's evidence_pack.json has the sha256 its parent recorded, and no file anywhere below
   the folder is outside every manifest (the Dagster instance folder `.dagster` is the only
   exclusion). A pack written before whole-folder manifests (no `subpacks` key) fails with one
   line that says so: its journal/ and candidates/ were in no manifest, so the folder cannot be
   verified whole, and exit status 0 must mean that it was;
2. the lineage: every figure's SQL and input files carry the sha256 the figure recorded;
3. the spec copy (`spec.yaml`) has the pack's `spec_sha256`;
4. every figure: the analysis is re-run from `data/raw_timings.parquet` (and the accuracy
   results) with the pack's queries, and measured value, interval and n must match; ITL too:
   its microsecond histogram is re-built from the gap lists, and must equal the pack's
   `data/itl_histogram.parquet` that the latency figures were read from;
5. a load sweep: every level's figures and the summary are re-computed from the raw timings
   and `data/sweep_timings.parquet`, and every value must match the pack's `sweep` section;
   so must every `capacity` row (re-derived from the re-computed summary; why a search that did
   not close its bracket stopped is read from `data/sweep_replay.json`, the search's record);
6. the signature (`pack/audit/signing.py`): with a public key, the folder given must carry a signature
   of its root by that key; without one, a signature present in any pack must still name that
   pack's root (a stale signature is a problem, not a silent pass).

Steps 2-5 run for each sub-pack too, not only its hashes: a candidate's own pack (its history,
an older model version the side-by-side pack no longer shows) is evidence an auditor may read on
its own, and hashes only prove that the files did not change since they were written, not that
its figures follow from its raw timings. It costs about half a second per sub-pack.

Every problem names its path relative to the folder given.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import interrupts
from pipeline.analysis.judge.figures import figure_key, figure_rows
from pipeline.analysis.judge.figures_table import figures_table, partition_figures, same_value, table_differences
from pipeline.analysis.sizing import sweep as sweep_analysis
from pipeline.analysis.sizing.capacity import capacity_rows, peak_to_mean_of
from pipeline.analysis.tabulate import tables as analysis_tables
from pipeline.analysis.tabulate.repeats import first_run
from pipeline.contracts import (
    ACCURACY_RESULTS,
    CAPACITY,
    FIGURES,
    ITL_HISTOGRAM,
    RAW_TIMINGS,
    REPLAY_SUMMARY,
    SWEEP_REPLAY,
    SWEEP_TIMINGS,
)
from pipeline.duck.catalog import REPO_QUERIES, QueryCatalog
from pipeline.files.hashing import sha256_file
from pipeline.files.layout import PackLayout
from pipeline.pack.assemble.decision import decision_block
from pipeline.pack.assemble.served_precision import served_precision_rows, with_served_precision
from pipeline.pack.assemble.summary import MEASURED, executive_summary, measured_proxy_verdict
from pipeline.pack.audit.arm_verify import recompute_arms
from pipeline.pack.audit.bill_verify import recheck_bill_section
from pipeline.pack.audit.signing import signature_problem, stale_signature
from pipeline.pack.audit.tree import INSTANCE_DIR, JSON_NAME, SUBPACKS_KEY, covered_by
from pipeline.pack.audit.view_verify import recompute_views
from pipeline.quality import rules
from pipeline.spec import load_spec

# the verdict too: the top pack's document is the tree's root, hashed by nothing above it, so a
# verdict edited there is caught only by re-deriving it (or by a signature)
COMPARED = ("measured", "ci_low", "ci_high", "n", "verdict", "tolerance", "tolerance_source")
RESOLUTION = ("requests_to_resolve", "minutes_to_resolve", "to_resolve")  # what would settle an inconclusive one
HOW_FAR = ("times_claimed", "percent_from_claim")  # how far from its claim (absent in packs written before it)
ITL_HISTOGRAM_KEY = ("candidate", "load_level", "in_steady_window", "prompt_bucket_lower", "gap_us")


@dataclass
class Verification:
    packs_checked: int = 0  # the folder given and every sub-pack below it
    files_checked: int = 0
    figures_recomputed: int = 0
    sweep_rows_recomputed: int = 0
    arm_rows_recomputed: int = 0  # vendor_conditions rows and headline_waterfall steps
    signature_checked: bool = False  # the root's signature held for the public key given
    problems: list[str] = field(default_factory=list)
    # the files whose sha256 differs from their manifest, relative to the folder given: the CLI
    # names the Dagster run that rewrote each, where the pack's instance is at hand
    rewritten: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_pack(pack_dir: Path, public_key: Path | None = None) -> Verification:
    """Verify the folder; with `public_key` (a PEM file), also its root's signature by that key."""
    result = Verification()
    if (interrupted := interrupts.interrupted_problem(Path(pack_dir))) is not None:
        result.problems.append(interrupted)  # a run stopped by a signal: no pack to verify
        return result
    _verify(Path(pack_dir), "", result, keyed=public_key is not None)
    if public_key is not None and (Path(pack_dir) / JSON_NAME).is_file():
        problem = signature_problem(Path(pack_dir), public_key)
        if problem is None:
            result.signature_checked = True
        else:
            result.problems.append(problem)
    return result


def _verify(pack_dir: Path, prefix: str, result: Verification, keyed: bool = False) -> None:
    """Verify the pack in `pack_dir` and, through its `subpacks`, every pack below it; `prefix`
    (`candidates/<c>/<v>/` for a sub-pack) makes each problem's path relative to the top; `keyed`:
    this folder's signature is checked with a key afterwards (which names a stale root itself)."""
    document = pack_dir / JSON_NAME
    if not document.is_file():
        result.problems.append(f"{prefix}{JSON_NAME}: not found (not an evidence pack folder?)")
        return
    pack = json.loads(document.read_text())
    result.packs_checked += 1
    problems = len(result.problems)
    _check_tree(pack, pack_dir, prefix, result)
    if not keyed and (stale := stale_signature(pack_dir)):
        result.problems.append(f"{prefix}{stale}")
    lineage = rules.lineage_hashes_match(pack, pack_dir)
    if not lineage.passed:
        result.problems.append(f"{prefix}{JSON_NAME}: lineage hashes differ: {lineage.metadata['mismatched']}")
    spec_copy = PackLayout(pack_dir).spec_copy
    if not spec_copy.is_file() or sha256_file(spec_copy) != pack["spec_sha256"]:
        result.problems.append(f"{prefix}spec.yaml: sha256 differs from the pack's spec_sha256")
        return
    try:
        _recompute(pack, pack_dir, load_spec(spec_copy).spec, result)
    except Exception as error:  # a damaged file must be reported, not crash the verifier
        result.problems.append(f"re-computation from the raw timings failed: {type(error).__name__}: {error}")
    if prefix:  # a sub-pack's figure problems name the sub-pack
        named = [p if p.startswith(prefix) else f"{prefix.rstrip('/')}: {p}" for p in result.problems[problems:]]
        result.problems[problems:] = named


def _check_tree(pack: dict, pack_dir: Path, prefix: str, result: Verification) -> None:
    """The manifest's files, the sub-packs (each verified in turn), and every file below the
    folder that neither covers."""
    listed = {entry["path"]: entry["sha256"] for entry in pack["manifest"]}
    for path, digest in listed.items():
        file = pack_dir / path
        result.files_checked += 1
        if not file.is_file():
            result.problems.append(f"{prefix}{path}: listed in the manifest but missing")
        elif sha256_file(file) != digest:
            result.problems.append(f"{prefix}{path}: sha256 differs from the manifest")
            result.rewritten.append(f"{prefix}{path}")
    if SUBPACKS_KEY not in pack:
        _report_uncovered_before_trees(listed, pack_dir, prefix, result)
        return
    subpacks = {entry["path"]: entry for entry in pack[SUBPACKS_KEY]}
    for path, entry in subpacks.items():
        sub_document = pack_dir / path / JSON_NAME
        result.files_checked += 1
        if not sub_document.is_file():
            result.problems.append(f"{prefix}{path}/{JSON_NAME}: a sub-pack listed in the subpacks but missing")
            continue
        if sha256_file(sub_document) != entry["sha256"]:
            result.problems.append(
                f"{prefix}{path}/{JSON_NAME}: sha256 differs from the parent's subpacks (the sub-pack was edited "
                "or re-written after this pack)"
            )
        _verify(pack_dir / path, f"{prefix}{path}/", result)
    coverage = covered_by(pack_dir, exclude_instance=not prefix)  # a sub-pack's .dagster is no instance
    on_disk = set(coverage.files) | {f"{path}/{JSON_NAME}" for path in coverage.subpacks}
    covered = set(listed) | {f"{path}/{JSON_NAME}" for path in subpacks}
    for path in sorted(on_disk - covered):
        inside = next((sub for sub in subpacks if path.startswith(f"{sub}/")), None)
        if inside is None:  # a file inside a listed sub-pack is that sub-pack's to report
            result.problems.append(f"{prefix}{path}: in the pack folder but in no manifest")


def _report_uncovered_before_trees(listed: dict, pack_dir: Path, prefix: str, result: Verification) -> None:
    """A pack written before whole-folder manifests: one line naming what no manifest covers."""
    every = sorted(
        path.relative_to(pack_dir).as_posix()
        for path in pack_dir.rglob("*")
        if path.is_file() and path.relative_to(pack_dir).parts[0] != INSTANCE_DIR
    )
    uncovered = [path for path in every if path != JSON_NAME and path not in listed]
    if uncovered:
        examples = ", ".join(f"{prefix}{path}" for path in uncovered[:3])
        result.problems.append(
            f"{prefix}{JSON_NAME}: written before whole-folder manifests (no `{SUBPACKS_KEY}` key): "
            f"{len(uncovered)} file(s) below it are in no manifest (e.g. {examples}), so the folder cannot be "
            "verified whole; re-run its spec to write a pack that can be. Its own files and figures were checked."
        )


def _recompute(pack: dict, pack_dir: Path, spec, result: Verification) -> None:
    """Re-run the analysis from the raw timings with the pack's own queries, re-make every figure
    with the analysis's own code (`partition_figures`), and compare: `data/figures.parquet` row by
    row (a pack written before the table has none), then the pack's figures against the same rows."""
    data = PackLayout(pack_dir)
    if not any("interval_method" in figure for figure in pack["figures"]):
        # written before the dependence-aware intervals: re-computed as it was computed
        spec = spec.model_copy(update={"analysis": spec.analysis.model_copy(update={"intervals": "independent"})})
    if _before_tolerances(pack["figures"]):
        # written before tolerances: judged as it was judged (no tolerance, no figure for an unjudged claim)
        spec = spec.model_copy(update={"claim": spec.claim.model_copy(update={"tolerance": None})})
    queries = REPO_QUERIES.preferring(pack_dir / "sql")  # the pack's own copies of its queries first
    accuracy = None
    if data.path(ACCURACY_RESULTS).is_file():
        accuracy = analysis_tables.accuracy_summary(data.path(ACCURACY_RESULTS), spec, queries)
    # no histogram: re-built
    tables = analysis_tables.analyse_all(first_run(data.path(RAW_TIMINGS)), spec, accuracy, queries=queries)
    sweep_summary = _recompute_sweep(pack.get("sweep"), data, spec, accuracy, result, queries)
    capacity = _recompute_capacity(pack.get("capacity"), sweep_summary, data, spec, result)
    compared, problems, arm_rows = recompute_arms(pack, data, spec, queries)  # the vendor_conditions rows among them
    result.arm_rows_recomputed += compared
    result.problems += problems
    stored_histogram = data.path(ITL_HISTOGRAM)
    if stored_histogram.is_file() and not _same_histogram(pq.read_table(stored_histogram), tables["itl_histogram"]):
        result.problems.append(f"{ITL_HISTOGRAM.path}: differs from the histogram re-built from the raw timings")
    rows = figure_rows(tables)
    result.problems += recompute_views(pack, pack_dir, spec, rows["throughput"], queries)
    rows |= {"accuracy_summary": accuracy.to_pylist() if accuracy is not None else [], "sweep_summary": sweep_summary}
    with_bases = any("basis" in figure for figure in pack["figures"])  # before bases, throughput was judged
    # a pack written before the instrument error was carried is judged without it
    instrument = any("instrument_error_ms" in figure for figure in pack["figures"])
    summary = data.path(REPLAY_SUMMARY)
    replay_summary = (json.loads(summary.read_text()) if summary.is_file() else {}) if instrument else None
    recomputed = partition_figures(
        spec, rows, data.path(RAW_TIMINGS), capacity, arm_rows, queries, with_bases, replay_summary
    )
    if data.path(FIGURES).is_file():
        result.problems += table_differences(pq.read_table(data.path(FIGURES)), figures_table(recomputed))
    result.problems += recheck_bill_section(pack, rows["throughput"], recomputed)
    fresh = {figure_key(f): f for f in recomputed}
    resolution = any("to_resolve" in figure for figure in pack["figures"])  # absent in packs written before it
    how_far = HOW_FAR if any("times_claimed" in figure for figure in pack["figures"]) else ()
    for figure in pack["figures"]:
        key = figure_key(figure)
        again = fresh.get(key)
        if again is None:
            result.problems.append(f"{key[0]}/{key[1]} ({key[2]}): not re-computable from the raw timings")
            continue
        result.figures_recomputed += 1
        for name in COMPARED + (RESOLUTION if resolution else ()) + how_far:
            if not same_value(figure.get(name), again.get(name)):
                result.problems.append(
                    f"{key[0]}/{key[1]}: {name} in the pack {figure.get(name)!r}, re-computed {again.get(name)!r}"
                )
        _compare_runs(key, figure.get("repeats"), again.get("repeats"), result)
    _rederive_summary(pack, spec, result)


def _before_tolerances(figures: list[dict]) -> bool:
    """A pack written before tolerances: it has claimed figures and none states a tolerance (since
    then every verdict on a claim does, and every claim has a verdict)."""
    return any(f.get("claimed") is not None for f in figures) and not any("tolerance" in f for f in figures)


def _rederive_summary(pack: dict, spec, result: Verification) -> None:
    """The measured proxy verdict, the executive summary and the decision block follow from the
    figures checked above, the headline waterfall and the precision each fingerprint says its
    candidate serves: derived again, they must be what the pack says (the top pack's document is
    hashed by nothing above it, so an edited verdict is caught only here)."""
    waterfall = pack.get("headline_waterfall") or []
    proxy = pack.get("proxy_verdict") or {}
    if proxy.get("basis") == MEASURED:
        served = served_precision_rows(spec.claim.conditions.precision, pack.get("endpoint_fingerprints") or [])
        again = with_served_precision(
            measured_proxy_verdict(pack["figures"], waterfall, spec.workload.proxy_tolerance.capacity_ratio), served
        )
        if again != proxy:
            result.problems.append("proxy_verdict: differs from the verdict derived from the figures again")
    if "executive_summary" in pack and pack["executive_summary"] != executive_summary(pack["figures"], waterfall):
        result.problems.append("executive_summary: differs from the summary derived from the figures again")
    if "decision" in pack and pack["decision"] != decision_block(pack["figures"]):
        result.problems.append("decision: differs from the decision block derived from the figures again")


def _recompute_sweep(
    section: dict | None, data: PackLayout, spec, accuracy, result: Verification, queries: QueryCatalog
) -> list[dict]:
    """Re-compute the sweep's tables and compare them, row by row and value by value, with the
    pack's `sweep` section; returns the re-computed summary (for the sweep's cost figure)."""
    if not section:
        return []
    levels = sweep_analysis.sweep_levels(
        first_run(data.path(RAW_TIMINGS)), data.path(SWEEP_TIMINGS), spec, accuracy, queries
    )
    summary = sweep_analysis.sweep_summary(levels, spec, queries).to_pylist()
    for name, key, fresh in (
        ("levels", ("candidate", "load_level"), levels.to_pylist()),
        ("summary", ("candidate",), summary),
    ):
        again = {tuple(row[k] for k in key): row for row in fresh}
        packed = {tuple(row[k] for k in key): row for row in section[name]}
        if set(again) != set(packed):
            result.problems.append(f"sweep {name}: rows {sorted(packed)} in the pack, {sorted(again)} re-computed")
            continue
        for identity, row in packed.items():
            result.sweep_rows_recomputed += 1
            for column, value in row.items():
                if not same_value(value, again[identity].get(column)):
                    result.problems.append(
                        f"sweep {name} {'/'.join(map(str, identity))}: {column} in the pack {value!r}, "
                        f"re-computed {again[identity].get(column)!r}"
                    )
    return summary


def _recompute_capacity(packed: list[dict] | None, summary: list[dict], data: PackLayout, spec, result) -> list[dict]:
    """Every `capacity` row against the one re-derived from the re-computed sweep summary (a pack
    written before the capacity section has none to check); returns the re-derived rows (for the
    figures at the capacity at the SLA)."""
    if not packed:
        return []
    record = data.path(SWEEP_REPLAY)
    searches = json.loads(record.read_text()).get("search") if record.is_file() else None
    again = {row["candidate"]: row for row in capacity_rows(spec, summary, searches, peak_to_mean_of(data.root))}
    if data.path(CAPACITY).is_file():  # the table the pack read them from (packs before it have none)
        written = {r["candidate"]: r for r in pq.read_table(data.path(CAPACITY)).to_pylist()}
        result.problems += [
            f"{CAPACITY.path} {candidate}: {column} in the file {row.get(column)!r}, re-computed {value!r}"
            for candidate, row in written.items()
            for column, value in again.get(candidate, {}).items()
            if not same_value(row.get(column), value)
        ]
    for missing in sorted(set(again) - {row["candidate"] for row in packed}):
        result.problems.append(f"capacity {missing}: re-computed but not in the pack")
    for row in packed:
        fresh = again.get(row["candidate"])
        if fresh is None:
            result.problems.append(f"capacity {row['candidate']}: not re-computable from the sweep timings")
            continue
        result.sweep_rows_recomputed += 1
        for column, value in fresh.items():
            if not same_value(row.get(column), value):
                result.problems.append(
                    f"capacity {row['candidate']}: {column} in the pack {row.get(column)!r}, re-computed {value!r}"
                )
    return list(again.values())


def _compare_runs(key: tuple[str, str, str], packed: dict | None, fresh: dict | None, result: Verification) -> None:
    """A repeated replay's figure: each run's own figure, and the spread, must re-compute too."""
    if packed is None and fresh is None:
        return
    if packed is None or fresh is None or len(packed["runs"]) != len(fresh["runs"]):
        result.problems.append(f"{key[0]}/{key[1]}: the runs in the pack differ from the raw timings' runs")
        return
    for run, again in zip(packed["runs"], fresh["runs"]):
        for name in ("repeat", *COMPARED):
            if not same_value(run.get(name), again.get(name)):
                result.problems.append(
                    f"{key[0]}/{key[1]} run {run['repeat']}: {name} in the pack {run.get(name)!r}, re-computed "
                    f"{again.get(name)!r}"
                )
    if not same_value(packed["between_run_sd"], fresh["between_run_sd"]):
        result.problems.append(f"{key[0]}/{key[1]}: between_run_sd in the pack differs from the runs re-computed")


def _same_histogram(stored: pa.Table, rebuilt: pa.Table) -> bool:
    # the send-time batch is a key where the histogram has one (packs before it have none)
    key = [*ITL_HISTOGRAM_KEY, *(["batch"] if "batch" in rebuilt.schema.names else [])]
    columns = [*key, "prompt_bucket_upper", "gaps"]
    if any(name not in stored.schema.names for name in columns):
        return False
    order = [(name, "ascending") for name in key]
    return (
        stored.select(columns)
        .sort_by(order)
        .replace_schema_metadata(None)
        .equals(rebuilt.select(columns).sort_by(order).replace_schema_metadata(None))
    )
