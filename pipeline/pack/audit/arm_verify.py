"""`loadproof verify`'s part for the arms: `vendor_conditions` and `headline_waterfall` re-computed
from `data/arm_timings.parquet` (each arm's window and figures by the pack's own copies of the
queries) and from the pack's own sweep section and headline figures (which verify re-computes
from their raw timings in turn), then compared value by value with what the pack says."""

from __future__ import annotations

from pipeline.analysis.judge.arms import arm_figures
from pipeline.analysis.judge.figures_table import same_value
from pipeline.contracts import ARM_TIMINGS
from pipeline.duck.catalog import QueryCatalog
from pipeline.files.layout import PackLayout
from pipeline.pack.assemble import arms as pack_arms

COMPARED = ("measured", "ci_low", "ci_high", "n")
STEP_COMPARED = (*COMPARED, "change", "change_ci_low", "change_ci_high")
JUDGED = ("verdict", "tolerance", "tolerance_source")


def recompute_arms(pack: dict, data: PackLayout, spec, queries: QueryCatalog) -> tuple[int, list[str], list[dict]]:
    """(rows compared, problems, the arm figures re-computed). A pack without the sections (or
    without arms) has nothing to check."""
    vendor, waterfall = pack.get("vendor_conditions") or [], pack.get("headline_waterfall") or []
    if not vendor and not waterfall:
        return 0, [], []
    if not data.path(ARM_TIMINGS).is_file():
        return 0, [f"{ARM_TIMINGS.path}: not found, but the pack has arm figures"], []
    rows = arm_figures(data.path(ARM_TIMINGS), spec, queries).to_pylist()
    sweep = pack.get("sweep") or {}
    no_lineage = {"sql": "-", "inputs": [{"path": "-", "sha256": "0" * 64}]}
    fresh_vendor = {
        (row.candidate, row.metric): row.model_dump()
        for row in pack_arms.vendor_conditions_section(spec, rows, pack["figures"], no_lineage)
    }
    fresh_waterfall = {
        (row.candidate, row.metric): row.model_dump()
        for row in pack_arms.headline_waterfall(
            spec, rows, pack["figures"], sweep.get("levels") or [], sweep.get("summary") or [], None, None
        )
    }
    compared, problems = 0, []
    for row in vendor:
        key = (row["candidate"], row["metric"])
        again = fresh_vendor.get(key)
        if again is None:
            problems.append(f"vendor_conditions {'/'.join(key)}: not re-computable from {ARM_TIMINGS.path}")
            continue
        compared += 1
        problems += _differences(f"vendor_conditions {'/'.join(key)}", row, again, (*COMPARED, *JUDGED))
    for row in waterfall:
        key = (row["candidate"], row["metric"])
        again = fresh_waterfall.get(key)
        if again is None or len(again["steps"]) != len(row["steps"]):
            problems.append(f"headline_waterfall {'/'.join(key)}: its steps do not re-compute")
            continue
        for step, fresh in zip(row["steps"], again["steps"]):
            compared += 1
            problems += _differences(f"headline_waterfall {'/'.join(key)} {step['axis']}", step, fresh, STEP_COMPARED)
    return compared, problems, rows


def _differences(where: str, packed: dict, fresh: dict, names: tuple[str, ...]) -> list[str]:
    return [
        f"{where}: {name} in the pack {packed.get(name)!r}, re-computed {fresh.get(name)!r}"
        for name in names
        if not same_value(packed.get(name), fresh.get(name))
    ]
