"""`loadproof export PACK --format br0.2`: llm-d's Benchmark Report v0.2 (revision 0.2.1), one document
per candidate pack and load stage: the production load, each further sweep level, each arm.

Read from the pack's files (`data/figures.parquet`, `data/sweep_levels.parquet`,
`data/arm_figures.parquet`, `data/throughput.parquet`, `data/prompt_profile.parquet`, the replay
summaries, the endpoint fingerprint, the pack's spec and `evidence_pack.json`): no figure is
re-analysed; the one value the pack does not hold, a latency mean, is `latency_stats`'. Each document is written
as inference-perf writes its per-stage partials, so that a composer can deep-merge another producer's
partial on top (`yq '. * load("other.yaml")'`): no key whose value is null, plain YAML, one file per
stage, `run.eid` shared by every document of one run and `run.uid` unique to one.

What BR0.2 gets and what it cannot (docs/export.md lists it field by field):
`results.request_performance.aggregate.requests` (total, failures); `.latency` (TTFT, TPOT, ITL,
E2E: the pack's p50, p90, p95, p99 and p99.9 where it read them, and the mean, min and max BR's
`Statistics` requires, from `latency_stats` over the figures' own requests); `.throughput`
(output/total token rate, request rate: each a measured rate, so its `mean`, as inference-perf
reports a rate); `scenario.load.standardized` (the stage, its rate or concurrency, the prompt
lengths replayed); `scenario.stack` (the candidate's model and endpoint, a `generic` component);
`run.time.duration` (the steady window the rates were measured over). BR's p0p1, p1, p5, p10, p25
and p75 stay empty: the pack never reads those percentiles, and they are not made up. The stage's
identity in loadproof's terms (basis, load level, arm) goes where BR takes a tool's own description
of its load, `scenario.load.native.config`; intervals, n and verdicts have no place in BR's
statistics (it drops keys it does not know) and stay in the pack.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import pyarrow.parquet as pq
import yaml

from pipeline.contracts import (
    ARM_FIGURES,
    ENDPOINT_FINGERPRINT,
    FIGURES,
    PROMPT_PROFILE,
    REPLAY_SUMMARY,
    SWEEP_LEVELS,
    SWEEP_REPLAY,
    THROUGHPUT,
)
from pipeline.pack.export import latency_stats
from pipeline.plan.arms import ARRIVAL_PROCESS
from pipeline.spec import Spec, load_spec

FORMAT = "br0.2"
BR_VERSION = "0.2.1"  # the revision of the 0.2 line these documents follow (llmd-benchmark-report 0.2.1)
PRODUCTION_LOAD, CAPACITY_AT_SLA, VENDOR_CONDITIONS = "production_load", "capacity_at_sla", "vendor_conditions"
# loadproof's figure → BR's throughput field and unit
RATES = {
    "output_tokens_per_s": ("output_token_rate", "tokens/s"),
    "total_tokens_per_s": ("total_token_rate", "tokens/s"),
    "requests_per_s": ("request_rate", "queries/s"),
}


@dataclass(frozen=True)
class Stage:
    """One load stage of one candidate, as the pack's files give it."""

    kind: str  # production_load | sweep_level | arm
    basis: str | None
    label: str
    total: int | None
    failures: int | None
    rates: dict[str, float]
    window_s: float | None = None
    load_level: float | None = None
    arm: str | None = None
    rate_qps: float | None = None
    concurrency: int | None = None
    extra: dict = field(default_factory=dict)
    # per latency metric: {percentile suffix: value}, with "n" when the pack gives the figures' n
    percentiles: dict[str, dict] = field(default_factory=dict)
    moments: dict[str, dict] = field(default_factory=dict)  # latency_stats: n, mean, min, max


def candidate_packs(pack: Path) -> list[Path]:
    """The candidate packs below `pack` (`candidates/<c>/<version>/`), or `pack` itself when it is one."""
    found = sorted(p.parent.parent for p in pack.glob(f"candidates/*/*/{FIGURES.path}"))
    if found:
        return found
    return [pack] if (pack / FIGURES.path).is_file() else []


def export(pack: Path, out: Path) -> list[Path]:
    """Write every document of the pack below `out` (`<candidate>/<version>/loadproof.stage_<n>.yaml`)."""
    written = []
    for folder in candidate_packs(pack):
        for name, document in documents(folder):
            path = out / folder.relative_to(pack) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), encoding="utf-8")
            written.append(path)
    return written


def documents(folder: Path) -> list[tuple[str, dict]]:
    """(file name, BR0.2 document) for every load stage of the candidate pack `folder`."""
    summary = json.loads((folder / "evidence_pack.json").read_text(encoding="utf-8"))
    spec = yaml.safe_load((folder / "spec.yaml").read_text(encoding="utf-8")) or {}
    loaded = load_spec(folder / "spec.yaml").spec
    out = []
    for candidate in _candidates(folder):
        for number, stage in enumerate(stages(folder, candidate, loaded)):
            document = benchmark_report(summary, spec, folder, candidate, number, stage)
            out.append((f"loadproof.{_slug(candidate)}.stage_{number}.yaml", document))
    return out


def stages(folder: Path, candidate: str, spec: Spec) -> list[Stage]:
    """The production load, then each further sweep level by load, then each arm in ladder order."""
    mode = _json(folder / REPLAY_SUMMARY.path).get("mode")
    sweep_mode = _json(folder / SWEEP_REPLAY.path).get("mode", mode)
    arrival_rate = _first(_rows(folder / PROMPT_PROFILE.path)).get("arrival_rate_per_s")
    figures = [
        row
        for row in _rows(folder / FIGURES.path)
        if row["candidate"] == candidate and row["repeat"] is None and row["basis"] == PRODUCTION_LOAD
    ]
    throughput = _first([row for row in _rows(folder / THROUGHPUT.path) if row["candidate"] == candidate])
    levels = [row for row in _rows(folder / SWEEP_LEVELS.path) if row["candidate"] == candidate]
    production_level = next(
        (row["load_level"] for row in levels if row["production"]), 1.0 if mode == "trace" else None
    )
    out = [
        Stage(
            kind="production_load",
            basis=PRODUCTION_LOAD,
            label="production load",
            total=throughput.get("requests_planned"),
            failures=throughput.get("requests_failed"),
            rates={r["metric"]: r["measured"] for r in figures if r["metric"] in RATES and r["measured"] is not None},
            window_s=throughput.get("window_s"),
            load_level=production_level,
            percentiles=latency_stats.percentiles_of_figures(figures),
            moments=latency_stats.production_moments(folder, spec, candidate),
            **_load(mode, production_level, arrival_rate),
        )
    ]
    level_moments = latency_stats.level_moments(folder, spec, candidate) if levels else {}
    capacity = {row["load_level"] for row in _rows(folder / FIGURES.path) if row["basis"] == CAPACITY_AT_SLA}
    for row in sorted((r for r in levels if not r["production"]), key=lambda r: r["load_level"]):
        out.append(
            Stage(
                kind="sweep_level",
                basis=CAPACITY_AT_SLA if row["load_level"] in capacity else None,
                label=f"sweep level {row['load_level_label']}",
                total=row["requests_planned"],
                failures=row["requests_failed"],
                rates={name: row[name] for name in RATES if row.get(name) is not None},
                window_s=row["window_s"],
                load_level=row["load_level"],
                extra={"load_level_label": row["load_level_label"], "meets_sla": row["meets_sla"]},
                percentiles=latency_stats.percentiles_of_level(row),
                moments=level_moments.get(row["load_level"], {}),
                **_load(sweep_mode, row["load_level"], arrival_rate),
            )
        )
    return out + _arm_stages(folder, candidate, spec)


def _arm_stages(folder: Path, candidate: str, spec: Spec) -> list[Stage]:
    rows = [row for row in _rows(folder / ARM_FIGURES.path) if row["candidate"] == candidate]
    out = []
    for arm in dict.fromkeys(row["arm"] for row in rows):  # in the table's (ladder) order
        figures = {row["metric"]: row for row in rows if row["arm"] == arm}
        first = next(iter(figures.values()))
        errors = figures.get("error_rate")
        total = errors["n"] if errors and errors["n"] else None
        failures = round(errors["measured"] * total) if total and errors and errors["measured"] is not None else None
        out.append(
            Stage(
                kind="arm",
                basis=VENDOR_CONDITIONS,
                label=f"arm {first['label']}",
                total=total,
                failures=failures,
                rates={m: row["measured"] for m, row in figures.items() if m in RATES and row["measured"] is not None},
                arm=arm,
                # every arm but the arrival process's is a closed loop at the claim's concurrency
                concurrency=int(first["concurrency"]) if arm != ARRIVAL_PROCESS and first["concurrency"] else None,
                extra={"axis": first["axis"]},
                percentiles=latency_stats.percentiles_of_figures(list(figures.values())),
                moments=latency_stats.arm_moments(folder, spec, candidate, arm, _window(first)),
            )
        )
    return out


def _window(row: dict) -> tuple[float, float] | None:
    if row.get("warmup_s") is None or row.get("cooldown_s") is None:
        return None
    return row["warmup_s"], row["cooldown_s"]


def benchmark_report(summary: dict, spec: dict, folder: Path, candidate: str, number: int, stage: Stage) -> dict:
    """One stage's document, null-free."""
    run_id = summary.get("run_id") or "unknown"
    document = {
        "version": BR_VERSION,
        "run": {
            "uid": f"loadproof-{run_id}-{_slug(candidate)}-stage-{number}",
            "eid": run_id,
            "description": f"{candidate}: {stage.label} (loadproof run {run_id})",
            "time": {"duration": _duration(stage.window_s)},
        },
        "scenario": {
            "stack": [_endpoint(spec, folder, candidate)],
            "load": _load_block(summary, folder, number, stage),
        },
        "results": {"request_performance": {"aggregate": _aggregate(stage)}},
    }
    return _without_nulls(document)


def _endpoint(spec: dict, folder: Path, candidate: str) -> dict:
    """The endpoint under test as BR's `generic` component: the model asked for, the URL, and the model
    version the endpoint reported (`data/endpoint_fingerprint.json`: what the pack's version key holds)."""
    entry: dict = next((c for c in spec.get("candidates", []) if c.get("name") == candidate), {})
    prints = _json_list(folder / ENDPOINT_FINGERPRINT.path)
    fingerprint: dict = next((p for p in prints if p.get("candidate") == candidate), {})
    described = {"model": entry.get("model"), "base_url": entry.get("base_url")}
    return {
        "metadata": {
            "label": candidate,
            "cfg_id": fingerprint.get("fingerprint_sha256")
            or hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest(),
            "description": "the OpenAI-compatible endpoint under test",
        },
        "standardized": {
            "kind": "generic",
            "tool": "openai-compatible-endpoint",
            "tool_version": str(fingerprint.get("model_version") or "unknown"),
            "model": {"name": fingerprint.get("model") or entry.get("model")},
            "base_url": entry.get("base_url"),
            "version_key": fingerprint.get("version_key"),
        },
        "native": {},
    }


def _load_block(summary: dict, folder: Path, number: int, stage: Stage) -> dict:
    profile = _first(_rows(folder / PROMPT_PROFILE.path))
    return {
        "metadata": {"cfg_id": summary.get("spec_sha256"), "description": stage.label},
        "standardized": {
            "tool": "loadproof",
            "tool_version": _version(),
            # the buyer's own requests (sampled from the production log) are what is replayed
            "source": "sampled",
            "stage": number,
            "input_seq_len": {
                "distribution": "other",
                "value": max(1.0, float(profile.get("prompt_tokens_mean") or 1.0)),
                "std_dev": profile.get("prompt_tokens_stddev"),
                "min": profile.get("prompt_tokens_min"),
                "max": profile.get("prompt_tokens_max"),
            },
            "rate_qps": stage.rate_qps,
            "concurrency": stage.concurrency,
        },
        "native": {
            "config": {
                "loadproof": {
                    "stage": stage.kind,
                    "basis": stage.basis,
                    "load_level": stage.load_level,
                    "arm": stage.arm,
                    **stage.extra,
                }
            }
        },
    }


def _aggregate(stage: Stage) -> dict:
    requests = {"total": stage.total, "failures": stage.failures} if stage.total is not None else None
    throughput = {
        RATES[metric][0]: {"units": RATES[metric][1], "mean": float(value)}
        for metric, value in stage.rates.items()
        if math.isfinite(value)
    }
    return {
        "requests": requests,
        "latency": latency_stats.latency_block(stage.percentiles, stage.moments) or None,
        "throughput": throughput or None,
    }


def _load(mode: str | None, level: float | None, arrival_rate: float | None) -> dict:
    """BR's rate or concurrency of a level: × logged traffic is that many times the sample's rate."""
    if level is None or math.isnan(level):
        return {}
    if mode == "trace":
        return {"rate_qps": level * arrival_rate} if arrival_rate else {}
    if mode == "rate":
        return {"rate_qps": float(level)}
    if mode == "concurrency":
        return {"concurrency": int(level)}
    return {}


def _duration(seconds: float | None) -> str | None:
    return f"PT{seconds:.3f}S" if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def _without_nulls(value):
    """Drop every null (and every map left empty by it): a deep merge never overwrites with null."""
    if isinstance(value, dict):
        kept = {key: _without_nulls(item) for key, item in value.items() if item is not None}
        return {key: item for key, item in kept.items() if item != {} or key == "native"}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _candidates(folder: Path) -> list[str]:
    return sorted({row["candidate"] for row in _rows(folder / FIGURES.path)})


def _rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist() if path.is_file() else []


def _first(rows: list[dict]) -> dict:
    return rows[0] if rows else {}


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _json_list(path: Path) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    return data if isinstance(data, list) else [data]


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in text)


def _version() -> str:
    try:
        return metadata.version("loadproof")
    except metadata.PackageNotFoundError:
        return "unknown"
