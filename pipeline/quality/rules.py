"""Data-quality rules that are not great-expectations suites (those are pipeline.quality.expectations):
each returns (passed, metadata) for an asset check.

- the reject rate comes from two Parquet footers (accepted and quarantined rows), without
  reading a log that can be millions of rows into a frame;
- the profile's quantiles are fields of one JSON document, not a table;
- the lineage hashes are facts about files on disk (each path's sha256), not values in a table;
- a sweep's completeness runs the raw-timings completeness suite once per load level, each
  level against its own plan.

The Dagster checks in assets/ call these; tests feed them crafted bad data.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from pipeline.analysis.declare.catalogue import CAPACITY_AT_SLA, CATALOGUE, PRODUCTION_LOAD, names
from pipeline.analysis.endpoint_view.endpoint_views import KEYS
from pipeline.analysis.statistics.stats import VERDICTS as VERDICT_WORDS
from pipeline.files.hashing import sha256_file
from pipeline.files.partition_keys import partition_safe
from pipeline.quality.expectations import raw_timings_complete_suite, validate
from pipeline.quality.outcome import Outcome, explains
from pipeline.replay.conditions.sweep import level_for_value, level_plan
from pipeline.replay.endpoint.fingerprint import LEGACY_PREFIX, legacy_version_key

VERDICTS = (*VERDICT_WORDS, None)
CAPACITY_SOURCES = [
    entry.sources[CAPACITY_AT_SLA]
    for entry in CATALOGUE
    if CAPACITY_AT_SLA in entry.sources and entry.sources[CAPACITY_AT_SLA].table == "capacity"
]


@explains(
    "the log's rejected rows (quarantined: did not parse or lacked a field) against workload.max_reject_rate",
    "read data/quarantine.parquet (each rejected line with its reason) and fix the log or the spec's "
    "ingest format and field mapping (0 accepted rows: the format matched no line); raise "
    "workload.max_reject_rate only if those lines are expected",
)
def reject_rate_within_budget(accepted: int, rejected: int, budget: float) -> Outcome:
    total = accepted + rejected
    rate = rejected / total if total else 1.0
    return Outcome(
        accepted > 0 and rate <= budget,
        {"reject_rate": rate, "budget": budget, "rejected": rejected, "accepted": accepted},
    )


@explains(
    "the prompt profile's quantiles (p50 ≤ p90 ≤ p99 ≤ max per length) and its arrival rate (> 0 unless one request)",
    "the sample is too small or its timestamps all equal: widen workload.sample or check the log's arrival times",
)
def quantiles_ordered(profile: dict) -> Outcome:
    bad = [
        kind
        for kind in ("prompt_tokens", "output_tokens")
        if not profile[f"{kind}_p50"] <= profile[f"{kind}_p90"] <= profile[f"{kind}_p99"] <= profile[f"{kind}_max"]
    ]
    rate_ok = (profile.get("arrival_rate_per_s") or 0) > 0 or profile["requests"] == 1
    return Outcome(
        not bad and rate_ok,
        {"unordered": ", ".join(bad) or "none", "arrival_rate_per_s": profile.get("arrival_rate_per_s")},
    )


@explains(
    "every file a figure's lineage names against the sha256 it recorded",
    "a file of the pack changed or went missing after the figures were computed: run the spec again "
    "to write the pack anew; never edit a pack's files by hand",
)
def lineage_hashes_match(pack: dict, pack_dir: Path) -> Outcome:
    """Every file a figure names exists in the pack with the sha256 the figure recorded."""
    refs = {}
    for figure in pack["figures"]:
        lineage = figure["lineage"]
        refs[lineage["sql"]] = lineage["sql_sha256"]
        for ref in lineage["inputs"] + lineage["staged_sql"]:
            refs[ref["path"]] = ref["sha256"]
    mismatched = [
        path
        for path, digest in refs.items()
        if not (pack_dir / path).is_file() or sha256_file(pack_dir / path) != digest
    ]
    return Outcome(bool(refs) and not mismatched, {"files": len(refs), "mismatched": ", ".join(mismatched) or "none"})


@explains(
    "each candidate's chosen level (max_sla_load_level) against the SLA of every lighter level, and "
    "its first missing level against the chosen one",
    "the sweep summary disagrees with its own levels: run the partition again; if it repeats, report "
    "it with data/sweep_levels.parquet and data/sweep_summary.parquet",
)
def sweep_summary_consistent(levels: list[dict], summary: list[dict]) -> Outcome:
    """Per candidate: every level up to the highest SLA-meeting one met the SLA, and the first
    missing level (if any) lies above it and did not meet it."""
    problems = []
    for row in summary:
        mine = [level for level in levels if level["candidate"] == row["candidate"]]
        chosen, first_miss = row["max_sla_load_level"], row["first_missing_load_level"]
        if chosen is not None and not all(level["meets_sla"] for level in mine if level["load_level"] <= chosen):
            problems.append(f"{row['candidate']}: a level at or below {chosen} missed the SLA")
        if first_miss is not None:
            missed = [level for level in mine if level["load_level"] == first_miss]
            if not missed or missed[0]["meets_sla"] or (chosen is not None and first_miss <= chosen):
                problems.append(f"{row['candidate']}: first missing level {first_miss} inconsistent")
    return Outcome(not problems, {"candidates": len(summary), "problems": "; ".join(problems) or "none"})


@explains(
    "each replayed load level's rows against that level's plan (one row per planned request and candidate)",
    "a level's replay was cut short or recorded twice (a killed, retried or timed-out run): run the "
    "partition again; the journal keeps every completed request",
)
def sweep_timings_complete(timings: pa.Table, plan: list, replay) -> Outcome:
    """Per candidate and replayed level: exactly one row per request of the level's plan (`plan`:
    the planned requests); no rows without a sweep."""
    if replay.sweep is None:
        return Outcome(timings.num_rows == 0, {"rows": timings.num_rows})
    problems, levels = [], 0
    for value in sorted(set(timings.column("load_level").to_pylist())):  # the levels replayed (or searched)
        level = level_for_value(replay, value)
        mine = timings.filter(pc.equal(timings.column("load_level"), value))
        if level.production:
            continue  # raw_timings holds the production level
        levels += 1
        params = {
            "planned": [item.request_id for item in level_plan(plan, level, replay)],
            "candidates": sorted(set(mine.column("candidate").to_pylist())),
        }
        frame = mine.select(["candidate", "request_id"]).to_pandas()
        outcome = validate(raw_timings_complete_suite, frame, params, name=f"sweep_timings_{level.label}")
        if not outcome.passed:
            problems.append(f"{level.label}: {outcome.metadata}")
    return Outcome(not problems, {"levels": levels, "problems": "; ".join(problems) or "none"})


@explains(
    "each candidate's capacity search: bracket closed or a reason recorded, levels replayed = levels "
    "recorded, within workload.replay.sweep.search.max_levels",
    "run the partition again; if the bracket stays open without a reason, raise "
    "workload.replay.sweep.search.max_levels or its time bound",
)
def capacity_search_ended(summary: dict | None, replay) -> Outcome:
    """A capacity search: per candidate, the bracket closed or the reason it did not is recorded,
    within its level bound (sweep_replay.json `search`); no search: nothing to check."""
    if replay.sweep is None or replay.sweep.search is None:
        return Outcome(True, {"search": "none"})
    if summary is None:
        return Outcome(False, {"problems": "no sweep record (sweep_replay.json)"})
    problems, closed = [], 0
    for candidate, entries in summary.get("candidates", {}).items():
        record = summary.get("search", {}).get(candidate)
        if record is None:
            problems.append(f"{candidate}: no search record")
            continue
        closed += bool(record.get("bracket_closed"))
        if not record.get("bracket_closed") and not str(record.get("reason") or "").strip():
            problems.append(f"{candidate}: bracket not closed and no reason recorded")
        replayed = sum(entry.get("status") == "replayed" for entry in entries)
        if record.get("levels_run") != replayed or replayed > replay.sweep.search.max_levels:
            problems.append(f"{candidate}: {replayed} levels replayed, {record.get('levels_run')} recorded")
    reasons = {c: r.get("reason") for c, r in summary.get("search", {}).items()}
    return Outcome(
        not problems,
        {
            "closed": closed,
            "reasons": "; ".join(f"{c}: {r}" for c, r in reasons.items()),
            "problems": "; ".join(problems) or "none",
        },
    )


@explains(
    "data/sweep_levels.parquet: one row per candidate × measured level, a production level per "
    "candidate, SLA attainment and error rate within [0, 1]",
    "run the partition's analysis again; if it repeats, report it with data/sweep_levels.parquet and "
    "the spec's workload.replay.sweep",
)
def sweep_levels_complete(levels: list[dict], candidates: list[str], sweeping: bool) -> Outcome:
    """One row per candidate and measured level, the production level among them, proportions
    within [0, 1] (no rows at all when no sweep ran)."""
    if not sweeping:
        return Outcome(not levels, {"rows": len(levels)})
    keys = [(row["candidate"], row["load_level"]) for row in levels]
    problems = []
    if len(keys) != len(set(keys)):
        problems.append("a candidate × level appears twice")
    for candidate in candidates:
        if not any(row["candidate"] == candidate and row["production"] for row in levels):
            problems.append(f"{candidate}: no production level")
    for row in levels:
        for name in ("sla_attainment", "error_rate"):
            if row[name] is not None and not 0 <= row[name] <= 1:
                problems.append(f"{row['candidate']} at {row['load_level_label']}: {name} {row[name]}")
    return Outcome(not problems, {"rows": len(levels), "problems": "; ".join(problems) or "none"})


@explains(
    "the partition's figures against the metric catalogue (every production-load figure), the claim "
    "(a row per claimed figure), n ≥ 0, each value inside its interval and the four verdict words",
    "a claimed figure without a row names a metric the catalogue does not measure: fix its name in "
    "the spec's claim; anything else is the analysis's fault: run the partition again and report it "
    "with data/figures.parquet",
)
def figures_consistent(rows: list[dict], candidate: str, claimed: list[str], scored: bool) -> Outcome:
    """data/figures.parquet of one partition: every production-load figure of the catalogue is there
    (accuracy where the slice was scored), every claimed figure has a row at some basis, n is never
    negative, each measured value lies inside its interval (1e-9 relative slack for rounding), and a
    verdict is one of the four words."""
    mine = [row for row in rows if row["candidate"] == candidate]
    at_load = {row["metric"] for row in mine if row["basis"] == PRODUCTION_LOAD and row["repeat"] is None}
    expected = [name for name in names(basis=PRODUCTION_LOAD) if scored or name != "accuracy"]
    missing = [name for name in expected if name not in at_load]
    unaccounted = sorted(set(claimed) - {row["metric"] for row in mine})
    outside, negative, words = [], [], []
    for row in mine:
        label = f"{row['metric']} ({row['basis']}{'' if row['repeat'] is None else ', run ' + str(row['repeat'])})"
        if row["n"] is None or row["n"] < 0:
            negative.append(label)
        value, low, high = row["measured"], row["ci_low"], row["ci_high"]
        slack = 1e-9 * max(abs(value or 0.0), 1.0)
        below = low is not None and value is not None and low > value + slack
        if below or (high is not None and value is not None and high < value - slack):
            outside.append(f"{label}: {value!r} outside [{low!r}, {high!r}]")
        if row["verdict"] not in VERDICTS:
            words.append(f"{label}: {row['verdict']!r}")
    return Outcome(
        not (missing or unaccounted or outside or negative or words),
        {
            "figures": len(mine),
            "missing_at_production_load": missing,
            "claimed_without_a_row": unaccounted,
            "measured_outside_interval": outside[:10],
            "negative_n": negative[:10],
            "unknown_verdicts": words[:10],
        },
    )


# what each endpoint view's values must be (pipeline/analysis/endpoint_view/endpoint_views.py): column -> (min, max)
VIEW_BOUNDS: dict[str, dict[str, tuple[float | None, float | None]]] = {
    "token_agreement": {
        "output_disagreeing": (0, None),
        "prompt_disagreeing": (0, None),
        "requests_compared": (0, None),
    },
    "prefix_cache_hits": {"hit_rate": (0, 1)},
    # the server's prefill and decode clocks run inside the client's: a gap below 0 is a clock or
    # a parsing error (no bound on the gap's size: a queue before a slot makes it large honestly)
    "server_timings": {"ttft_gap_ms_p50": (0, None), "requests": (1, None)},
    "server_ttft": {
        "server_ttft_ms_p50": (0, None),
        "server_ttft_ms_p95": (0, None),
        "client_ttft_ms_p50": (0, None),
        "client_ttft_ms_p95": (0, None),
    },
    "server_levels": {"kv_cache_use_mean": (0, 1), "kv_cache_use_max": (0, 1), "running_mean": (0, None)},
    "gpu_energy": {"mean_power_w": (0, None), "joules_per_output_token": (0, None), "gpu_util_pct_mean": (0, 100)},
}


@explains(
    "the endpoint view's rows: one per candidate and level, each bounded value within its bounds",
    "the server's own counters are out of range (a reset, or another server's /metrics): check the "
    "candidate's metrics URL and run again",
)
def endpoint_view_in_bounds(name: str, rows: list[dict]) -> Outcome:
    """One endpoint view: one row per key (its `KEYS`: no candidate twice, or no candidate and load
    level, or request kind, twice), each bounded value within its bounds."""
    bounds = VIEW_BOUNDS[name]
    outside = []
    for row in rows:
        for column, (low, high) in bounds.items():
            value = row.get(column)
            if value is not None and ((low is not None and value < low) or (high is not None and value > high)):
                outside.append(f"{row.get('candidate')}: {column} {value!r} outside [{low}, {high}]")
    key_columns = KEYS[name]  # what tells the view's rows apart (endpoint_views.py)
    keys = [tuple(row.get(column) for column in key_columns) for row in rows]
    repeated = sorted({" ".join(map(str, k)) for k in keys if keys.count(k) > 1})
    return Outcome(
        not outside and not repeated, {"rows": len(rows), "out_of_bounds": outside[:10], "repeated": repeated}
    )


@explains(
    "data/capacity.parquet: the last level met below the first missed, the requests/s and output "
    "tokens/s served there inside their intervals",
    "run the partition's analysis again; if it repeats, report it with data/capacity.parquet and "
    "data/sweep_levels.parquet",
)
def capacity_rows_consistent(rows: list[dict]) -> Outcome:
    """data/capacity.parquet: the last level met lies below the first missed, and the requests/s and
    output tokens/s served there lie inside their intervals."""
    problems = []
    for row in rows:
        met, missed = row.get("max_sla_level"), row.get("first_missed_level")
        if met is not None and missed is not None and not met < missed:
            problems.append(f"{row['candidate']}: met at {met}, first missed at {missed}")
        for source in CAPACITY_SOURCES:  # the columns the catalogue reads the capacity figures from
            value = source.value
            v, lo, hi = row.get(value), row.get(source.ci_low or ""), row.get(source.ci_high or "")
            if v is not None and ((lo is not None and lo > v * (1 + 1e-9)) or (hi is not None and hi < v * (1 - 1e-9))):
                problems.append(f"{row['candidate']}: {value} {v!r} outside [{lo!r}, {hi!r}]")
    return Outcome(not problems, {"rows": len(rows), "problems": problems})


def fingerprint_matches_partition(document: dict, partition_version: str) -> Outcome:
    """The replay's probe of the endpoint found the version key the partition was registered
    under (or, for a partition from before issue 26, that key under the old rule); failing, the
    explanation names both keys, which part differs and what to do."""
    served, legacy = document["version_key"], legacy_version_key(document)
    metadata: dict = {"partition_model_version": partition_version, "served_version_key": served}
    if partition_safe(served) == partition_version:
        return Outcome(True, metadata)
    if legacy is not None and partition_safe(legacy) == partition_version:
        return Outcome(True, metadata | {"matched_by_legacy_key": legacy})
    metadata["explanation"] = (
        f"the partition was probed as {partition_version}, the replay's probe found {served}; fields that differ: "
        f"{_key_differences(partition_version, served, document)}; what to do: {_key_remedy(partition_version, served)}"
    )
    return Outcome(False, metadata)


def _key_parts(key: str) -> tuple[str, str]:
    version, _, replies = key.rpartition("+")
    return (version, replies) if version else (key, "")


def _key_differences(partition_version: str, served: str, document: dict) -> str:
    (old_version, old_replies), (new_version, new_replies) = _key_parts(partition_version), _key_parts(served)
    entry = next((e for e in document.get("models", []) if e.get("id") == document.get("model")), None)
    facts = ", ".join(f"{k}={v}" for k, v in (entry or {}).items() if k != "meta") or f"{document.get('model')} absent"
    differences = []
    if old_version.startswith(LEGACY_PREFIX):
        differences.append(
            f"the advertised version ({old_version} → {new_version}): the partition's key was made by the rule "
            "before issue 26, which hashed the models list's `created`, a time llama.cpp, vLLM and SGLang fill per "
            f"request; the models list now says {facts}"
        )
    elif old_version != partition_safe(new_version):
        differences.append(f"the advertised version ({old_version} → {new_version}; the models list now says {facts})")
    if old_replies != partition_safe(new_replies):
        differences.append(
            f"the replies to the fixed greedy probe prompts (hash {old_replies or 'none'} → {new_replies}): the "
            "model answers them differently"
        )
    return "; ".join(differences) or "none found in the key's parts"


def _key_remedy(partition_version: str, served: str) -> str:
    if _key_parts(partition_version)[0].startswith(LEGACY_PREFIX):
        return (
            "run again (`loadproof run`, or let the new-version sensor add it): the partition is registered under "
            "the key this version has now, and the packs under the old key stay readable beside it"
        )
    return (
        "if the endpoint's model or its serving settings changed since the partition was registered, run again so "
        f"the figures are filed under {served}; if nothing changed, the server answers greedy (temperature 0) "
        "prompts differently from call to call (batch-dependent kernels, a sampling override): fix that, or "
        "re-validate each run from a fresh probe"
    )
