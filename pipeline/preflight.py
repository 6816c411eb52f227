"""One check of a whole spec and its surroundings before Dagster starts (`loadproof run`, `demo`):
what cannot work is refused in one line naming the spec's file, line and field, with a hint, and
nothing is written (no pack folder, no `.private/` copy, no Dagster instance).

Checked, cheapest first:
- the files it names exist and are readable: the log (its path or glob), the labelled slice, a
  local tokenizer (`hf:PATH`, `gguf:PATH`); a database log's DSN variable and each candidate's
  API-key variable are set (the claim's figure names and a claim's result file are checked when
  the spec loads);
- an SLA is set wherever a figure needs one: a load sweep (the capacity search reads every level
  against the SLA's bounds) or a claimed goodput, SLA attainment or at-the-SLA figure without
  `sla.ttft_ms`, `sla.tpot_ms` or `sla.e2e_ms` would be computed against no bound at all (every
  level "meets" it: a capacity of the largest load tried);
- every candidate answers its models list with its key (`pipeline/replay/endpoint/reachability.py`; a 429,
  a 5xx and a reset are retried first).

Warned, not refused: a claimed percentile that the sample's budget (`max_requests`, less the
warm-up and cool-down) cannot bound at the spec's confidence, with the number of requests needed
(the window's own count is the ingest's, in the run: a budget is an upper bound of it).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist

from pipeline.analysis.declare.metrics import percentile_of
from pipeline.analysis.statistics.dependence import t_quantile
from pipeline.analysis.statistics.stats import order_statistic_ranks
from pipeline.replay.endpoint.reachability import CandidateUnreachable, check_reachable
from pipeline.replay.pacing.engine import Target
from pipeline.spec import LoadedSpec, field_line
from pipeline.tokens.tokenizers import TokenizerError, resolve_setting
from pipeline.workload.logs.ingest import LogNotFound, expand_paths

SLA_BOUNDS = ("ttft_ms", "tpot_ms", "e2e_ms")
# claimed figures read against the SLA's bounds (the catalogue's goodput, attainment and capacity ones)
SLA_FIGURE_WORDS = ("goodput", "sla")


class PreflightError(ValueError):
    """What cannot work, in one line: `FILE:LINE: FIELD: problem; hint: ...`."""


@dataclass
class Preflight:
    loaded: LoadedSpec
    overrides: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def refuse(self, loc: tuple[str | int, ...], problem: str, hint: str) -> PreflightError:
        line = field_line(self.loaded.path, loc)
        where = f"{self.loaded.path}:{line}" if line else str(self.loaded.path)
        name = ".".join(str(part) if isinstance(part, str) else f"[{part}]" for part in loc).replace(".[", "[")
        return PreflightError(f"{where}: {name}: {problem}; hint: {hint}")


def preflight(loaded: LoadedSpec, overrides: dict[str, str] | None = None) -> list[str]:
    """Raise `PreflightError` for the first thing in `loaded` that cannot work; return the warnings.
    `overrides`: candidate name → the base URL it is served at instead (the demo's endpoints)."""
    check = Preflight(loaded, dict(overrides or {}))
    check_files(check)
    check_environment(check)
    check_sla(check)
    warn_percentiles(check)
    check_candidates(check)
    return check.warnings


def check_files(check: Preflight) -> None:
    spec, loaded = check.loaded.spec, check.loaded
    log = spec.workload.log
    if log.path is not None:
        loc: tuple[str | int, ...] = ("workload", "log", "path")
        try:
            files = expand_paths(log.path, loaded.path.parent)
        except LogNotFound:
            where = log.path if os.path.isabs(log.path) else f"{log.path} (from {loaded.path.parent})"
            raise check.refuse(
                loc, f"no file matches {where}", "check the path or glob; a relative one is from the spec's folder"
            ) from None
        unreadable = next((name for name in files if not os.access(name, os.R_OK)), None)
        if unreadable is not None:
            raise check.refuse(loc, f"{unreadable} is not readable", "give this user read permission on it")
    if spec.accuracy is not None:
        readable(check, ("accuracy", "path"), loaded.resolve(spec.accuracy.path), "the labelled slice")
    settings: list[tuple[tuple[str | int, ...], str]] = [
        (("workload", "prompts", "tokenizer"), spec.workload.prompts.tokenizer)
    ]
    settings += [(("candidates", i, "tokenizer"), c.tokenizer) for i, c in enumerate(spec.candidates) if c.tokenizer]
    for loc, setting in settings:
        if setting.startswith(("hf:", "gguf:")):
            try:
                resolve_setting(setting, lambda path: str(loaded.resolve(path)))
            except TokenizerError:
                raise check.refuse(
                    loc,
                    f"{setting}: {loaded.resolve(setting.partition(':')[2])} does not exist",
                    "a relative PATH is from the spec's folder; or use loadproof-approx or server",
                ) from None


def readable(check: Preflight, loc: tuple[str | int, ...], path: Path, what: str) -> None:
    if not path.is_file():
        raise check.refuse(loc, f"{what} {path} does not exist", "a relative path is from the spec's folder")
    if not os.access(path, os.R_OK):
        raise check.refuse(loc, f"{what} {path} is not readable", "give this user read permission on it")


def check_environment(check: Preflight) -> None:
    spec = check.loaded.spec
    if spec.workload.log.dsn_env and not os.environ.get(spec.workload.log.dsn_env):
        variable = spec.workload.log.dsn_env
        raise check.refuse(
            ("workload", "log", "dsn_env"),
            f"the variable {variable} is not set",
            f"export {variable}=postgresql://... (the DSN is read from the environment only)",
        )
    for index, candidate in enumerate(spec.candidates):
        if candidate.api_key_env and not os.environ.get(candidate.api_key_env):
            raise check.refuse(
                ("candidates", index, "api_key_env"),
                f"candidate {candidate.name!r}: the variable {candidate.api_key_env} is not set",
                f"export {candidate.api_key_env}=<key> (keys are read from the environment only)",
            )


def check_sla(check: Preflight) -> None:
    spec = check.loaded.spec
    if any(getattr(spec.sla, bound) is not None for bound in SLA_BOUNDS):
        return
    hint = "set sla.ttft_ms, sla.tpot_ms or sla.e2e_ms (the latency production must keep)"
    if spec.workload.replay.sweep is not None:
        raise check.refuse(
            ("workload", "replay", "sweep"),
            "a load sweep (the capacity at the SLA) needs an SLA bound, and sla sets none",
            f"{hint}, or remove the sweep",
        )
    needing = sorted(name for name in spec.claim.figures if any(word in name for word in SLA_FIGURE_WORDS))
    if needing:
        raise check.refuse(
            ("claim", "figures", needing[0]),
            f"{needing[0]} is read against the SLA's bounds, and sla sets none",
            f"{hint}, or remove the figure from the claim",
        )


def requests_needed(quantile: float, confidence: float) -> int:
    """The fewest requests whose exact order-statistic interval bounds the quantile on both sides."""
    tail = (1.0 - confidence) / 2.0
    n = max(1, math.ceil(math.log(tail) / math.log(max(quantile, 1.0 - quantile))))
    while order_statistic_ranks(n, quantile, confidence).high is None:  # the closed form, checked
        n += 1
    return n


SIZED_QUANTILE = 0.99  # `init` sizes a window for the tightest percentile a claim commonly names


def window_requests_for(quantile: float, confidence: float, batches: int, edge_share: float) -> tuple[int, str]:
    """The requests a sample window should hold for a claim on `quantile` to be decidable both
    ways, and why: the exact interval's count (`requests_needed`), times the batch-means
    allowance (Woodruff's interval over `batches` send-time batches uses Student's t on
    batches − 1 degrees of freedom where the exact one uses the normal z: (t / z)² as many
    requests, for requests as independent as the log's), over the share left after warm-up and
    cool-down (`edge_share` each)."""
    exact = requests_needed(quantile, confidence)
    t = t_quantile(batches, confidence)
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    allowance = (t / z) ** 2 if t is not None else 1.0
    wanted = math.ceil(exact * allowance / (1.0 - 2 * edge_share))
    why = (
        f"sized for a p{quantile * 100:g} claim: {wanted} requests ({exact} for a {confidence:.0%} interval, "
        f"x{allowance:.1f} for {batches} send-time batches, + warm-up and cool-down)"
    )
    return wanted, why


def warn_percentiles(check: Preflight) -> None:
    spec = check.loaded.spec
    sample, replay = spec.workload.sample, spec.workload.replay
    steady_share = max(0.0, 1.0 - (replay.warmup_s + replay.cooldown_s) / sample.window_s)
    budget = math.floor(sample.max_requests * steady_share)
    confidence = spec.analysis.confidence
    for name in sorted(spec.claim.figures):
        quantile = percentile_of(name)
        if quantile is None:
            continue
        needed = requests_needed(quantile, confidence)
        if budget < needed:
            check.warnings.append(
                f"{check.loaded.path}: claim.figures.{name}: a {confidence:.0%} interval of the p{quantile * 100:g} "
                f"needs at least {needed} requests in the steady window; the sample sends at most "
                f"{sample.max_requests} (about {budget} after warm-up and cool-down), so its interval will be "
                "open-ended and the claim cannot be shown to hold; hint: raise workload.sample.max_requests and "
                "window_s, or use workload.replay.repeats"
            )


def check_candidates(check: Preflight) -> None:
    for index, candidate in enumerate(check.loaded.spec.candidates):
        overridden = candidate.name in check.overrides
        target = Target(
            candidate=candidate.name,
            base_url=check.overrides.get(candidate.name, candidate.base_url),
            model=candidate.model,
            api_key=os.environ.get(candidate.api_key_env) if candidate.api_key_env else None,
            api_key_env=candidate.api_key_env,
            api=candidate.api,
        )
        try:
            check_reachable(target)
        except CandidateUnreachable as exc:
            hint = "is the server running, and is base_url its OpenAI base URL (…/v1)?"
            if overridden:  # the demo's own endpoint: no line of the spec to point at
                raise PreflightError(f"{exc}; hint: {hint}") from None
            raise check.refuse(("candidates", index, "base_url"), str(exc), hint) from None
