"""Claim divergence: the claim's measurement conditions beside the production profile, axis by
axis, and the verdict — is the published figure a good-enough proxy, or must it be re-measured?

Decisive axes (input and output lengths, concurrency, precision when both sides name one, the
latency budget when the SLA bounds a claimed latency figure) decide the verdict: one that
diverges, or that the claim or the logs leave open, means "must be re-measured". The other axes
(dataset, hardware, arrival burstiness, request structure) are reported as reasons but do not
decide alone.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pipeline.spec import Spec

GOOD_ENOUGH = "good-enough proxy"
RE_MEASURE = "must be re-measured"
BURSTY_INDEX_OF_DISPERSION = 2.0  # counts per second vary twice as much as a Poisson process's
BURSTY_PEAK_TO_MEAN = 3.0
NOTABLE_SHARE = 0.05


@dataclass
class Axis:
    axis: str
    claimed: object
    production: object
    status: str  # matches | diverges | unstated (claim silent) | unknown (production side unknown)
    decisive: bool
    reason: str


def claim_divergence(spec: Spec, profile: dict) -> dict:
    """{'axes': [...], 'proxy_verdict': {'verdict', 'reasons'}} for this spec and profile."""
    conditions, tolerance = spec.claim.conditions, spec.workload.proxy_tolerance
    axes = [
        _length_axis("input tokens", conditions.input_tokens, profile, "prompt_tokens", tolerance),
        _length_axis("output tokens", conditions.output_tokens, profile, "output_tokens", tolerance),
        _concurrency_axis(conditions.concurrency, profile, tolerance.concurrency_ratio),
        _named_axis("precision", conditions.precision, spec.workload.production.precision, decisive=True),
        _latency_axis(spec),
        _named_axis("hardware", conditions.hardware, spec.workload.production.hardware, decisive=False),
        _dataset_axis(conditions.dataset, profile),
        _arrival_axis(profile),
        _structure_axis(profile),
    ]
    open_decisive = [a for a in axes if a.decisive and a.status != "matches"]
    verdict = RE_MEASURE if open_decisive else GOOD_ENOUGH
    informational = [a for a in axes if not a.decisive and a.status != "matches"]
    if open_decisive:
        reasons = [a.reason for a in open_decisive + informational]
    else:
        reasons = [a.reason for a in axes if a.decisive] + [a.reason for a in informational]
    return {"axes": [asdict(a) for a in axes], "proxy_verdict": {"verdict": verdict, "reasons": reasons}}


def _ratio(a: float, b: float) -> float:
    return max(a / b, b / a) if a > 0 and b > 0 else float("inf")


def _length_axis(name: str, claimed: int | None, profile: dict, kind: str, tolerance) -> Axis:
    p50, p99 = profile.get(f"{kind}_p50"), profile.get(f"{kind}_p99")
    status, note = _length_judged(name, claimed, p50, p99, tolerance)
    return Axis(name, claimed, {"p50": p50, "p99": p99}, status, True, note)


def _length_judged(name: str, claimed: int | None, p50, p99, tolerance) -> tuple[str, str]:
    """(status, sentence) of a length axis: the claimed length against production's p50, then its p99 tail."""
    if claimed is None:
        return "unstated", (
            f"{name}: the claim does not say at which length it was measured (production p50 {_n(p50)}, p99 {_n(p99)})"
        )
    if p50 is None:
        return "unknown", f"{name}: the production sample has no lengths"
    assert p99 is not None  # the profile's p50 and p99 come from one quantile query
    if _ratio(claimed, p50) > tolerance.length_ratio:
        direction = "longer" if p50 > claimed else "shorter"
        return "diverges", (
            f"{name}: claimed {_n(claimed)}, production p50 {_n(p50)} ({_ratio(claimed, p50):.1f}× {direction}; "
            f"tolerance {tolerance.length_ratio}×)"
        )
    if p99 / claimed > tolerance.tail_ratio:
        return "diverges", (
            f"{name}: production p99 {_n(p99)} is {p99 / claimed:.1f}× the claimed {_n(claimed)}: the long tail "
            f"was not measured (tolerance {tolerance.tail_ratio}×)"
        )
    return "matches", f"{name}: claimed {_n(claimed)}, production p50 {_n(p50)}, p99 {_n(p99)}: within tolerance"


def _concurrency_axis(claimed: int | None, profile: dict, tolerance: float) -> Axis:
    littles, peak = profile.get("concurrency_littles_law"), profile.get("concurrency_peak_logged")
    production = {"littles_law": littles, "peak_logged": peak, "arrival_rate_per_s": profile.get("arrival_rate_per_s")}
    name = "concurrency / batch size"
    status, note = _concurrency_judged(name, claimed, littles, peak, tolerance)
    return Axis(name, claimed, production, status, True, note)


def _concurrency_judged(name: str, claimed: int | None, littles, peak, tolerance: float) -> tuple[str, str]:
    """(status, sentence) of the concurrency axis: the claimed concurrency against Little's law's mean."""
    if claimed is None:
        return "unstated", f"{name}: the claim does not say at which concurrency or batch size it was measured"
    if littles is None:
        return "unknown", (
            f"{name}: the logs carry no latencies, so production concurrency is unknown until the replay measures "
            f"it (claimed {claimed})"
        )
    if _ratio(claimed, littles) > tolerance:
        return "diverges", (
            f"{name}: claimed {claimed}, production {littles:.1f} on average (Little's law), peak {_n(peak)} "
            f"({_ratio(claimed, littles):.1f}× apart; tolerance {tolerance}×)"
        )
    return (
        "matches",
        f"{name}: claimed {claimed}, production {littles:.1f} on average, peak {_n(peak)}: within tolerance",
    )


def _named_axis(name: str, claimed: str | None, production: str | None, decisive: bool) -> Axis:
    if claimed is None:
        return Axis(name, None, production, "unstated", False, f"{name}: the claim does not name it")
    if production is None:
        note = (
            f"{name}: the claim's is {claimed}; the spec does not say what production runs (workload.production.{name})"
        )
        return Axis(name, claimed, None, "unknown", False, note)
    if claimed.strip().lower() != production.strip().lower():
        return Axis(
            name, claimed, production, "diverges", decisive, f"{name}: claimed {claimed}, production {production}"
        )
    return Axis(name, claimed, production, "matches", decisive, f"{name}: {claimed} on both sides")


def _latency_axis(spec: Spec) -> Axis:
    bounds = {"ttft_ms": spec.sla.ttft_ms, "tpot_ms": spec.sla.tpot_ms, "e2e_ms": spec.sla.e2e_ms}
    claimed = {
        name: value for name, value in spec.claim.figures.items() if name.split("_p")[0] in bounds and "_p" in name
    }
    compared = {
        name: (value, bound) for name, value in claimed.items() if (bound := bounds[name.split("_p")[0]]) is not None
    }
    production = {k: v for k, v in bounds.items() if v is not None}
    name = "latency budget"
    if not compared:
        status = "unstated" if not claimed else "unknown"
        note = f"{name}: no claimed latency figure has an SLA bound to compare with"
        return Axis(name, claimed or None, production or None, status, False, note)
    over = [f"{metric} {value:g} ms > SLA {bound:g} ms" for metric, (value, bound) in compared.items() if value > bound]
    if over:
        note = f"{name}: the claim's own latencies miss the SLA: {', '.join(over)}"
        return Axis(name, claimed, production, "diverges", True, note)
    within = ", ".join(f"{metric} {value:g} ≤ {bound:g} ms" for metric, (value, bound) in compared.items())
    return Axis(name, claimed, production, "matches", True, f"{name}: claimed latencies within the SLA ({within})")


def _dataset_axis(claimed: str | None, profile: dict) -> Axis:
    production = f"production sample ({profile.get('requests')} requests)"
    if claimed is None:
        return Axis("dataset", None, production, "unstated", False, "dataset: the claim does not name its prompt set")
    note = (
        f"dataset: the claim's prompts are {claimed!r}, not this traffic; its length and structure are compared "
        "on the other axes"
    )
    return Axis("dataset", claimed, production, "diverges", False, note)


def _arrival_axis(profile: dict) -> Axis:
    dispersion: dict = next(iter(profile.get("dispersion") or []), {})
    index, peak = dispersion.get("index_of_dispersion"), profile.get("peak_to_mean_ratio")
    production = {
        "interarrival_cv": profile.get("interarrival_cv"),
        "index_of_dispersion": index,
        "bin_s": dispersion.get("bin_s"),
        "peak_to_mean_ratio": peak,
    }
    if index is None and peak is None:
        note = "arrival process: too few requests to judge burstiness"
        return Axis("arrival process", None, production, "unknown", False, note)
    bursty = (index or 0) > BURSTY_INDEX_OF_DISPERSION or (peak or 0) > BURSTY_PEAK_TO_MEAN
    if bursty:
        note = (
            f"arrival process: bursty (index of dispersion {_n(index)} at {_n(dispersion.get('bin_s'))} s, "
            f"peak-to-mean {_n(peak)}); a fixed-concurrency benchmark does not see the bursts"
        )
        return Axis("arrival process", None, production, "diverges", False, note)
    note = f"arrival process: near-Poisson (index of dispersion {_n(index)}, peak-to-mean {_n(peak)})"
    return Axis("arrival process", None, production, "matches", False, note)


def _structure_axis(profile: dict) -> Axis:
    shares = {
        key: profile.get(f"share_{key}")
        for key in ("multi_turn", "system_prompted", "structured_output", "long_context")
    }
    shares["prefix_reuse"] = profile.get("prefix_block_reuse_share")
    notable = [
        f"{key.replace('_', ' ')} {value:.0%}"
        for key, value in shares.items()
        if value is not None and value >= NOTABLE_SHARE
    ]
    if not notable:
        return Axis("request structure", None, shares, "matches", False, "request structure: plain single-turn prompts")
    note = (
        f"request structure: {', '.join(notable)} of production requests (prefix caching and long prefill change "
        "the speed a plain benchmark shows)"
    )
    return Axis("request structure", None, shares, "diverges", False, note)


def _n(value) -> str:
    if value is None:
        return "unknown"
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:.2g}"
