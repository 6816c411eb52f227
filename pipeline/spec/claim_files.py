"""A vendor's benchmark result file as the claim: `claim: {from: FILE, format: …}`.

Three formats, each read for the figures it publishes (by the catalogue's names, through the
`vllm bench serve` spellings the catalogue already accepts as `claim_names`) and the conditions it
ran under (`ClaimConditions`' fields). Every field of the file that is neither is listed in
`unmapped`, never guessed at:

- `vllm_bench`: `vllm bench serve --save-result` (one JSON object; a `--append-result` file holds
  one per line: `record` picks one). Lengths are the run's means (`input_lens`/`output_lens` with
  `--save-detailed`, else the totals over `completed`); `max_concurrency` is a closed loop, else
  `request_rate` an open loop (`burstiness` 1 is Poisson, another value gamma), `inf` without a
  concurrency cap sends every prompt at once (a closed loop at `num_prompts`).
- `guidellm`: GuideLLM's `benchmarks.json` report (v0.x: `benchmarks[].args.strategy`, `metrics`,
  `request_loader.data`); `record` picks the benchmark when the report holds several.
- `aiperf`: AIPerf's `profile_export_aiperf.json` (`input_config` with `phases` or `loadgen`, the
  metrics as `{unit, avg, p50, …}` objects).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.analysis.declare import metrics

FORMATS = ("vllm_bench", "guidellm", "aiperf")
_PERCENTILES = {"p50": "p50", "median": "median", "p90": "p90", "p95": "p95", "p99": "p99", "p999": "p99.9"}


class ClaimFileError(ValueError):
    """A result file that cannot be read as the claimed format; the message names the file and field."""


@dataclass
class ClaimFile:
    figures: dict[str, float] = field(default_factory=dict)  # vllm-bench spellings; canonical via the catalogue
    conditions: dict[str, Any] = field(default_factory=dict)
    unmapped: list[str] = field(default_factory=list)


def read_claim_file(path: Path, fmt: str, record: int | None = None) -> ClaimFile:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ClaimFileError(f"{path}: cannot read the claim file: {exc.strerror}") from exc
    try:
        docs = [json.loads(text)]
    except json.JSONDecodeError:
        try:  # vllm bench serve --append-result: one JSON object per line
            docs = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise ClaimFileError(f"{path}: not JSON ({exc}); hint: give the tool's own result file") from None
    if fmt == "vllm_bench":
        return _vllm(path, _pick(path, docs, record, "record"))
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise ClaimFileError(f"{path}: a {fmt} result is one JSON object")
    if fmt == "guidellm":
        return _guidellm(path, docs[0], record)
    if fmt == "aiperf":
        return _aiperf(path, docs[0])
    raise ClaimFileError(f"{path}: unknown format {fmt!r}; known: {', '.join(FORMATS)}")


def _pick(path: Path, items: list, record: int | None, what: str) -> dict:
    if record is None and len(items) > 1:
        raise ClaimFileError(f"{path}: holds {len(items)} results; hint: say which with claim.record (0-based)")
    index = record or 0
    if not 0 <= index < len(items) or not isinstance(items[index], dict):
        raise ClaimFileError(f"{path}: claim.{what} {index} is not one of its {len(items)} result(s)")
    return items[index]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _mean_length(values: Any) -> int | None:
    lengths = [v for v in values if _number(v) is not None] if isinstance(values, list) else []
    return round(sum(lengths) / len(lengths)) if lengths else None


# vllm bench serve's backends: the endpoint each one calls
_VLLM_ENDPOINTS = {"vllm": "completions", "openai": "completions", "openai-chat": "chat", "openai-audio": None}


def _vllm(path: Path, doc: dict) -> ClaimFile:
    out, used = ClaimFile(), set()
    for key, value in doc.items():
        if metrics.canonical_name(key) is not None and _number(value) is not None:
            out.figures[key] = float(value)
            used.add(key)
    conditions = out.conditions
    completed = _number(doc.get("completed"))
    for name, lens, total in (("input_tokens", "input_lens", "total_input_tokens"),
                              ("output_tokens", "output_lens", "total_output_tokens")):  # fmt: skip
        mean = _mean_length(doc.get(lens))
        if mean is None and completed and _number(doc.get(total)) is not None:
            mean = round(float(doc[total]) / completed)
        if mean is not None:
            conditions[name] = mean
            used.update({lens, total, "completed"} & doc.keys())
    if isinstance(doc.get("num_prompts"), int):
        conditions["num_requests"] = doc["num_prompts"]
        used.add("num_prompts")
    rate, cap = doc.get("request_rate"), doc.get("max_concurrency")
    if isinstance(cap, int) and cap >= 1:
        conditions["concurrency"] = cap
        used.add("max_concurrency")
    elif cap is None and "max_concurrency" in doc:
        used.add("max_concurrency")
    finite_rate = _number(rate)
    if finite_rate is not None and finite_rate > 0:
        conditions["request_rate"] = finite_rate
        burstiness = _number(doc.get("burstiness"))
        if burstiness is not None and burstiness > 0:
            conditions["arrival_process"] = "poisson" if burstiness == 1 else "gamma"
            conditions["burstiness"] = burstiness
            used.add("burstiness")
        used.add("request_rate")
    elif rate in ("inf", math.inf):  # every prompt at once (burstiness has no effect)
        if "concurrency" not in conditions and "num_requests" in conditions:
            conditions["concurrency"] = conditions["num_requests"]
        used.update({"request_rate", "burstiness"} & doc.keys())
    backend = doc.get("endpoint_type") if doc.get("endpoint_type") in _VLLM_ENDPOINTS else doc.get("backend")
    if _VLLM_ENDPOINTS.get(str(backend)):
        conditions["endpoint"] = _VLLM_ENDPOINTS[str(backend)]
        used.update({"backend", "endpoint_type"} & doc.keys())
    out.unmapped = sorted(set(doc) - used)
    return out


# GuideLLM's metric -> the vllm-bench stem of the figure it is (and its scale to ms)
_GUIDELLM_LATENCY = {
    "time_to_first_token_ms": ("ttft", 1.0),
    "time_per_output_token_ms": ("tpot", 1.0),
    "inter_token_latency_ms": ("itl", 1.0),
    "request_latency": ("e2el", 1000.0),  # seconds
}
_GUIDELLM_RATES = {
    "requests_per_second": "request_throughput",
    "output_tokens_per_second": "output_throughput",
    "tokens_per_second": "total_token_throughput",
}


def _guidellm(path: Path, report: dict, record: int | None) -> ClaimFile:
    benchmarks = report.get("benchmarks")
    if not isinstance(benchmarks, list) or not benchmarks:
        raise ClaimFileError(f"{path}: benchmarks: missing or empty; hint: give GuideLLM's benchmarks.json")
    bench = _pick(path, benchmarks, record, "record")
    out, used_metrics = ClaimFile(), set()
    stats = bench.get("metrics") or {}
    for name, (stem, scale) in _GUIDELLM_LATENCY.items():
        successful = (stats.get(name) or {}).get("successful") or {}
        found = {**(successful.get("percentiles") or {}), "median": successful.get("median")}
        for stat, label in _PERCENTILES.items():
            value = _number(found.get(stat))
            claim_name = f"{label}_{stem}_ms"
            if value is not None and metrics.canonical_name(claim_name) is not None:
                out.figures.setdefault(claim_name, value * scale)
                used_metrics.add(name)
    for name, claim_name in _GUIDELLM_RATES.items():
        value = _number(((stats.get(name) or {}).get("successful") or {}).get("mean"))
        if value is not None:
            out.figures[claim_name] = value
            used_metrics.add(name)
    conditions = out.conditions
    for name, metric in (("input_tokens", "prompt_token_count"), ("output_tokens", "output_token_count")):
        mean = _number(((stats.get(metric) or {}).get("successful") or {}).get("mean"))
        if mean is not None:
            conditions[name] = round(mean)
            used_metrics.add(metric)
    args = bench.get("args") or {}
    strategy = args.get("strategy") or {}
    kind = strategy.get("type_")
    if kind == "synchronous":
        conditions["concurrency"] = 1
    elif kind == "concurrent" and isinstance(strategy.get("streams"), int):
        conditions["concurrency"] = strategy["streams"]
    elif kind in ("constant", "poisson") and _number(strategy.get("rate")):
        conditions["request_rate"] = float(strategy["rate"])
        conditions["arrival_process"] = kind
    if isinstance(args.get("max_number"), int):
        conditions["num_requests"] = args["max_number"]
    endpoint = _guidellm_endpoint(bench.get("requests"))
    if endpoint is not None:
        conditions["endpoint"] = endpoint
    data = (bench.get("request_loader") or {}).get("data")
    if isinstance(data, str) and "prompt_tokens=" in data:  # GuideLLM's synthetic data spec
        conditions["dataset"] = f"synthetic ({data})"
    elif isinstance(data, str):
        conditions["dataset"] = data
    loader = bench.get("request_loader") or {}
    unmapped = [f"benchmarks[].{key}" for key in bench if key not in {"metrics", "args", "request_loader"}]
    unmapped += [f"benchmarks[].args.{key}" for key, value in args.items() if value is not None and key != "strategy"]
    if "num_requests" in conditions:
        unmapped.remove("benchmarks[].args.max_number")
    if kind and not {"concurrency", "request_rate"} & conditions.keys():
        unmapped.append(f"benchmarks[].args.strategy ({kind})")
    unmapped += [f"benchmarks[].metrics.{key}" for key in stats if key not in used_metrics]
    unmapped += [f"benchmarks[].request_loader.{key}" for key in loader if key != "data"]
    out.unmapped = sorted(unmapped + [key for key in report if key != "benchmarks"])
    return out


# GuideLLM's request types (each request's `request_type`): the endpoint each one calls
_GUIDELLM_ENDPOINTS = {"text_completions": "completions", "chat_completions": "chat"}


def _guidellm_endpoint(requests: Any) -> str | None:
    """The endpoint the benchmark called: its requests' one `request_type` (successful, errored and
    incomplete alike); None where they name none, several, or one loadproof does not speak."""
    groups = requests.values() if isinstance(requests, dict) else []
    kinds = {
        str(r["request_type"])
        for group in groups
        if isinstance(group, list)
        for r in group
        if isinstance(r, dict) and r.get("request_type") is not None
    }
    return _GUIDELLM_ENDPOINTS.get(next(iter(kinds))) if len(kinds) == 1 else None


_AIPERF_LATENCY = {"time_to_first_token": "ttft", "inter_token_latency": "itl", "request_latency": "e2el"}
_AIPERF_RATES = {
    "request_throughput": "request_throughput",
    "output_token_throughput": "output_throughput",
    "total_token_throughput": "total_token_throughput",
}
_AIPERF_ENDPOINTS = {"chat": "chat", "completions": "completions"}


def _aiperf(path: Path, doc: dict) -> ClaimFile:
    out, used = ClaimFile(), {"input_config"}
    for name, stem in _AIPERF_LATENCY.items():
        metric = doc.get(name)
        if not isinstance(metric, dict):
            continue
        if metric.get("unit") not in (None, "ms"):
            raise ClaimFileError(f"{path}: {name}.unit {metric.get('unit')!r}: expected ms")
        for stat, label in _PERCENTILES.items():
            value = _number(metric.get(stat))
            if value is not None and metrics.canonical_name(f"{label}_{stem}_ms") is not None:
                out.figures[f"{label}_{stem}_ms"] = value
                used.add(name)
    for name, claim_name in _AIPERF_RATES.items():
        value = _number((doc.get(name) or {}).get("avg")) if isinstance(doc.get(name), dict) else None
        if value is not None:
            out.figures[claim_name] = value
            used.add(name)
    conditions = out.conditions
    for name, metric in (("input_tokens", "input_sequence_length"), ("output_tokens", "output_sequence_length")):
        value = _number((doc.get(metric) or {}).get("avg")) if isinstance(doc.get(metric), dict) else None
        if value is not None:
            conditions[name] = round(value)
            used.add(metric)
    config = doc.get("input_config") or {}
    config_used: set[str] = set()
    phases = [p for p in config.get("phases") or [] if isinstance(p, dict) and p.get("name") != "warmup"]
    loadgen = {**(config.get("loadgen") or {}), **(phases[0] if len(phases) == 1 else {})}
    if len(phases) == 1 or config.get("loadgen"):
        config_used.add("phases" if len(phases) == 1 else "loadgen")
    if isinstance(loadgen.get("concurrency"), int) and loadgen.get("type") != "request_rate":
        conditions["concurrency"] = loadgen["concurrency"]
    if _number(loadgen.get("request_rate")):
        conditions["request_rate"] = float(loadgen["request_rate"])
        conditions["arrival_process"] = "poisson"  # AIPerf's default request-rate mode
    count = loadgen.get("requests", loadgen.get("request_count"))
    if isinstance(count, int):
        conditions["num_requests"] = count
    endpoint = (config.get("endpoint") or {}).get("type")
    if endpoint in _AIPERF_ENDPOINTS:
        conditions["endpoint"] = _AIPERF_ENDPOINTS[endpoint]
        config_used.add("endpoint")
    datasets = config.get("datasets") or []
    if len(datasets) == 1 and isinstance(datasets[0], dict) and datasets[0].get("type"):
        conditions["dataset"] = str(datasets[0]["type"])
        config_used.add("datasets")
    out.unmapped = sorted(
        [key for key in doc if key not in used] + [f"input_config.{key}" for key in config if key not in config_used]
    )
    return out
