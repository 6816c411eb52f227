"""`loadproof init LOG --target URL`: a first spec for a new user, from their own log and endpoint.

What it finds, each by the code a run itself uses, so the spec says what the run will do:
- the log's format: detected by the ingest (pipeline/workload/logs/detect.py), or as given;
- the sample window: the whole log ingested, then the busiest `window_s` drawn by
  `draw_sample` (pipeline/workload/sampling.py), as the run's `production_sample` draws it;
- SLA suggestions: the p95 of the log's own logged latency and TTFT (canonical
  `logged_latency_ms`, `logged_ttft_ms`) over every request that has one, rounded up;
- the candidate: GET {URL}/models (URL made to end in /v1), through the replay's own
  `list_models`; the key, when one is named, read from that environment variable only.

The log is ingested into a temporary folder, deleted before init returns: nothing of its text is
kept, and the spec names the log, never quotes it. The spec's text is rendered by
pipeline/spec/starter.py and checked with `load_spec` before it takes the place of OUT, so init
never leaves a spec that `loadproof run` refuses. Every failure is an `InitError` whose message
names the file, line or field at fault and ends with a hint.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import ValidationError

from pipeline.http_retry import CandidateFailing, retrying_client
from pipeline.replay.endpoint.fingerprint import list_models
from pipeline.replay.endpoint.reachability import CandidateUnreachable
from pipeline.replay.pacing.engine import Target
from pipeline.replay.production.auto_shards import STREAMS_PER_PROCESS, shards_for_streams
from pipeline.spec import SpecError, load_spec
from pipeline.spec.starter import CandidateFacts, LogFacts, LoggedLatency, StarterFacts, render_starter_spec
from pipeline.spec.workload import LogSource, Sample
from pipeline.workload.anonymize import log_source
from pipeline.workload.logs.detect import detect_format
from pipeline.workload.logs.ingest import IngestError, ingest
from pipeline.workload.sampling import draw_sample

MODELS_TIMEOUT_S = 10.0
# a log without an origin whose every time is before 1980 holds offsets from 0, not dates
RELATIVE_BEFORE_US = int(dt.datetime(1980, 1, 1, tzinfo=dt.UTC).timestamp() * 1e6)
SURVEYED_COLUMNS = ["arrival_at", "logged_latency_ms", "logged_ttft_ms", "session_id"]
P95 = 95


class InitError(ValueError):
    """A spec init cannot write; the message names what is at fault and ends with a hint."""


def write_starter_spec(
    log: str,
    target: str,
    out: Path,
    log_format: str | None = None,
    columns: tuple[str, ...] = (),
    window_s: float | None = None,
    max_requests: int | None = None,
    api_key_env: str | None = None,
    sizing: WindowSizing | None = None,
) -> StarterFacts:
    """Write the annotated spec for `log` and `target` to `out` (never over an existing file). A
    window or a request bound not given is sized by `sizing` (the requests a decidable claim
    needs) from the log's own arrivals."""
    if out.exists():
        raise InitError(f"{out}: already exists; hint: choose another --out (init never overwrites a spec)")
    _sample(window_s or WINDOW_LADDER_S[0], max_requests or DEFAULT_MAX_REQUESTS)  # a bad option fails first
    source, detection = _log_source(log, log_format, list(columns))  # reads the first lines only
    candidate = probe_candidate(target, api_key_env)  # before the whole log is read: a wrong URL fails at once
    facts = StarterFacts(
        log=survey_log(source, detection, out, window_s, max_requests, sizing or WindowSizing()),
        candidate=candidate,
        written_on=dt.datetime.now(dt.UTC).date().isoformat(),
        spec_file=out.name,
    )
    _write_checked(render_starter_spec(facts), out)
    return facts


DEFAULT_MAX_REQUESTS = 500  # a run's bound on time and cost, where the sizing asks for fewer
WINDOW_LADDER_S = (60.0, 90.0, 120.0, 180.0, 240.0, 300.0, 420.0, 600.0)  # the windows init sizes from


def openai_base_url(url: str) -> str:
    """The OpenAI base URL of `url`: as it is when it ends in /v1, else with /v1 added."""
    base = url.strip().rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise InitError(f"--target {url!r}: not an http(s) URL; hint: e.g. --target http://127.0.0.1:8000/v1")
    return base if base.endswith("/v1") else base + "/v1"


def probe_candidate(url: str, api_key_env: str | None) -> CandidateFacts:
    """The models the endpoint at `url` lists (GET {base}/models), with the key from `api_key_env`."""
    base_url = openai_base_url(url)
    api_key = None
    if api_key_env is not None:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise InitError(
                f"--api-key-env {api_key_env}: the variable is not set; hint: export {api_key_env}=<key> "
                "(init reads the key from the environment only and writes only its name)"
            )
    probe = Target(candidate="--target", base_url=base_url, model="", api_key=api_key, api_key_env=api_key_env)
    hint = "hint: is the server running, and is --target its OpenAI base URL (…/v1)?"
    try:
        with retrying_client(MODELS_TIMEOUT_S) as client:  # a 429, a 5xx or a reset is retried
            entries, _headers = list_models(client, probe)
    except CandidateUnreachable as exc:  # no answer, or a refused key (named by its variable, never shown)
        raise InitError(f"{str(exc).replace(f'candidate {probe.candidate!r} at ', '--target ', 1)}; {hint}") from None
    except CandidateFailing as exc:  # an error status (after the retries of a 429 or a 5xx)
        raise InitError(f"{str(exc).replace(f'candidate {probe.candidate!r} at ', '--target ', 1)}; {hint}") from None
    except (httpx.HTTPError, ValueError) as exc:  # ValueError: a body that is not JSON
        raise InitError(f"--target {url}: GET {probe.models_url} gave no models list ({exc}); {hint}") from None
    models = tuple(str(entry["id"]) for entry in entries if entry.get("id"))
    if not models:
        raise InitError(
            f"--target {url}: GET {probe.models_url} lists no model (its `data` holds no entry with an id); "
            "hint: load a model on the server first, or point --target at the server that serves it"
        )
    return CandidateFacts(target=url, base_url=base_url, models=models, api_key_env=api_key_env)


@dataclass(frozen=True)
class WindowSizing:
    """The requests a window should hold for a claim to be decidable, and why (the CLI computes
    it from the statistics: pipeline/preflight.py `window_requests_for`)."""

    wanted: int = DEFAULT_MAX_REQUESTS
    why: str = "the default"


def sized_window(arrivals_us: np.ndarray, wanted: int) -> tuple[float, int]:
    """The shortest window of `WINDOW_LADDER_S` whose busiest stretch holds `wanted` arrivals (the
    longest when none does), and how many its busiest stretch holds."""
    times = np.sort(arrivals_us)
    held = 0
    for window_s in WINDOW_LADDER_S:
        ends = np.searchsorted(times, times + int(window_s * 1e6), side="left")
        held = int((ends - np.arange(len(times))).max())
        if held >= wanted:
            return window_s, held
    return WINDOW_LADDER_S[-1], held


def sizing_note(sizing: WindowSizing, held: int) -> str:
    """Why the window is as long as it is, in the spec's comment and init's output."""
    if held >= sizing.wanted:
        return f"{sizing.why}; the shortest busiest window that holds them"
    return (
        f"{sizing.why}; even the longest window init sizes holds only {held}: such a claim will be "
        "open-ended at this load (a longer log, or time_scale below 1)"
    )


def survey_log(
    source: LogSource,
    detection: str,
    spec_path: Path,
    window_s: float | None,
    max_requests: int | None,
    sizing: WindowSizing,
) -> LogFacts:
    """What the spec says about the log at `source` (paths relative to the working folder), with
    its path written relative to the spec's folder; `detection`: how its format was chosen. A
    window not given is the shortest that holds `sizing.wanted` requests, all of them sent."""
    assert source.path is not None
    with tempfile.TemporaryDirectory(prefix="loadproof-init-") as folder:
        rows_path, quarantine_path = Path(folder) / "rows.parquet", Path(folder) / "quarantine.parquet"
        try:
            stats = ingest(source, Path.cwd(), rows_path, quarantine_path)
        except IngestError as exc:  # no file, or a header without a mapped column: names the file
            raise InitError(f"{exc}; hint: check LOG, --format and --column") from None
        if stats.accepted == 0:
            raise InitError(_nothing_accepted(source, quarantine_path))
        rows = pq.read_table(rows_path, columns=SURVEYED_COLUMNS)  # not the text: a large log stays on disk
        without_text = _null_count(rows_path, "messages_json")
        arrivals = _epoch_us(rows.column("arrival_at"))
        window_note = None
        if window_s is None:
            window_s, held = sized_window(arrivals, sizing.wanted)
            window_note = sizing_note(sizing, held)
            max_requests = max_requests or max(DEFAULT_MAX_REQUESTS, held)  # the sized window, all of it
        sample = _sample(window_s, max_requests or DEFAULT_MAX_REQUESTS)
        _sampled, window = draw_sample(rows_path, sample)
    assert window.start_us is not None and window.end_us is not None  # a busiest window has bounds
    # a trace of relative times (Mooncake's, BurstGPT's, seconds in a column) without an origin:
    # its times are offsets from 0, shown so (as dates they would read 1970-01-01); an epoch
    # number (openai_jsonl's `created`) is a date
    relative = source.origin is None and int(arrivals.max()) < RELATIVE_BEFORE_US
    when = _offset if relative else _iso
    in_window = int(np.count_nonzero((arrivals >= window.start_us) & (arrivals < window.end_us)))
    return LogFacts(
        path=_path_from_spec(source.path, spec_path),
        format=source.format,
        detection=detection,
        columns=source.columns.model_dump(exclude_none=True) if source.columns else None,
        accepted=stats.accepted,
        rejected=stats.rejected,
        first_arrival=when(int(arrivals.min())),
        last_arrival=when(int(arrivals.max())),
        window_s=sample.window_s,
        window_note=window_note,
        window_start=when(window.start_us),
        window_end=when(window.end_us),
        window_requests=in_window,
        max_requests=sample.max_requests,
        has_text=without_text < rows.num_rows,
        session_requests=rows.num_rows - rows.column("session_id").null_count,
        e2e=_logged_latency(rows.column("logged_latency_ms")),
        ttft=_logged_latency(rows.column("logged_ttft_ms")),
        **window_shards(arrivals, rows.column("logged_latency_ms"), window.start_us, window.end_us),
    )


def peak_in_flight(arrivals_us: np.ndarray, latency_ms: np.ndarray) -> int:
    """The most requests in flight at once, each from its arrival for its logged latency (an end
    before a start at the same instant, as sql/logged_concurrency.sql counts them)."""
    starts, ends = (
        arrivals_us.astype(np.int64),
        arrivals_us.astype(np.int64) + np.round(latency_ms * 1e3).astype(np.int64),
    )
    times = np.concatenate([ends, starts])
    steps = np.concatenate([-np.ones(len(ends), np.int64), np.ones(len(starts), np.int64)])
    order = np.lexsort((steps, times))  # by time, then ends (−1) first
    return int(np.cumsum(steps[order]).max(initial=0))


def window_shards(arrivals_us: np.ndarray, latency: pa.ChunkedArray, start_us: int, end_us: int) -> dict:
    """`shards` and its note for the spec: one client process per STREAMS_PER_PROCESS requests in
    flight at the window's peak, at its logged latencies (`auto_shards`); nothing where the log
    records no latency (the spec keeps 1 and says auto sizes it at run time)."""
    latency_ms = latency.to_numpy(zero_copy_only=False).astype(float)
    chosen = (arrivals_us >= start_us) & (arrivals_us < end_us) & ~np.isnan(latency_ms)
    if not chosen.any():
        return {}
    peak = peak_in_flight(arrivals_us[chosen], latency_ms[chosen])
    count = shards_for_streams(peak)
    return {
        "shards": count,
        "shards_note": (
            f"the window's peak: {peak} requests in flight at their logged latencies; one process stamps "
            f"{STREAMS_PER_PROCESS} in time (shards: auto sizes it at run time)"
        ),
    }


def _path_from_spec(log: str, spec_path: Path) -> str:
    """LOG as the spec writes it: relative to the spec's folder when inside it (the two move
    together), else absolute."""
    log_path, spec_dir = Path(os.path.abspath(log)), Path(os.path.abspath(spec_path)).parent
    return log_path.relative_to(spec_dir).as_posix() if log_path.is_relative_to(spec_dir) else log_path.as_posix()


def _log_source(log: str, log_format: str | None, columns: list[str]) -> tuple[LogSource, str]:
    """The LogSource of LOG (its format detected unless given) and how the format was chosen."""
    if log_format is None and columns:
        raise InitError("--column: a column mapping is for --format csv or parquet; hint: add --format csv")
    detected, detection = _detect(log) if log_format is None else (log_format, f"given with --format {log_format}")
    try:
        return log_source(log, detected, columns), detection
    except ValidationError as exc:
        problems = "; ".join(_problem(error) for error in exc.errors())
        raise InitError(f"--format {log_format}: {problems}; hint: {MAPPING_HINT}") from None
    except ValueError as exc:  # a --column that is not NAME=COLUMN
        raise InitError(f"{exc}; hint: {MAPPING_HINT}") from None


MAPPING_HINT = (
    "csv and parquet logs need --column arrival=COL --column prompt_tokens=COL --column output_tokens=COL "
    "(NAME a workload.log.columns field: docs/reference/log-formats.md)"
)


def _problem(error) -> str:
    """One pydantic error as `field: message` (the `--column` names are the mapping's fields)."""
    field = ".".join(str(part) for part in error["loc"])
    message = str(error["msg"]).removeprefix("Value error, ")
    return f"{field}: {message}" if field else message


def _detect(pattern: str) -> tuple[str, str]:
    try:
        detection = detect_format(pattern, Path.cwd())
    except IngestError as exc:  # not found, unreadable, or no format reads it: names the file
        raise InitError(str(exc) if "hint:" in str(exc) else f"{exc}; hint: check the LOG path") from None
    best = next(t for t in detection.trials if t.format == detection.format)
    others = [t.format for t in detection.trials if t.accepted and t.format != detection.format]
    words = f"detected: it reads {best.accepted} of the first {detection.lines_tried} lines"
    words += f" ({', '.join(others)} read fewer or as many)" if others else "; no other format reads any"
    return detection.format, words


def _nothing_accepted(source: LogSource, quarantine_path: Path) -> str:
    first = pq.read_table(quarantine_path, columns=["source_file", "source_line", "reason"]).slice(0, 1).to_pylist()
    where = f"{first[0]['source_file']}:{first[0]['source_line']}: {first[0]['reason']}" if first else str(source.path)
    return f"{where}: no line of the log is a request as {source.format} reads it; hint: check --format"


def _sample(window_s: float, max_requests: int) -> Sample:
    try:
        return Sample(mode="busiest_window", window_s=window_s, max_requests=max_requests)
    except ValidationError as exc:
        field = ", ".join(f"--{str(e['loc'][0]).replace('_', '-')}: {e['msg']}" for e in exc.errors())
        raise InitError(f"{field}; hint: a window of seconds > 0 and at least one request") from None


def _null_count(path: Path, column: str) -> int:
    """NULLs in one column of a Parquet file, from its row groups' statistics (the values are not
    read) where every row group has them."""
    metadata = pq.ParquetFile(path).metadata
    index = next(j for j in range(metadata.num_columns) if metadata.schema.column(j).name == column)
    stats = [metadata.row_group(i).column(index).statistics for i in range(metadata.num_row_groups)]
    if all(stat is not None and stat.has_null_count for stat in stats):
        return sum(stat.null_count for stat in stats)
    return pq.read_table(path, columns=[column]).column(column).null_count


def _logged_latency(values: pa.ChunkedArray) -> LoggedLatency | None:
    """The p95 (nearest rank) of the values the log recorded, None when it recorded none."""
    present = values.drop_null().to_numpy()
    if len(present) == 0:
        return None
    return LoggedLatency(n=len(present), p95_ms=float(np.percentile(present, P95, method="inverted_cdf")))


def _epoch_us(arrivals: pa.ChunkedArray) -> np.ndarray:
    return pc.cast(pc.cast(arrivals, pa.timestamp("us", tz="UTC")), pa.int64()).to_numpy()


def _offset(epoch_us: int) -> str:
    """A relative trace's time: seconds after its offset 0."""
    return f"offset {epoch_us / 1e6:,.3f} s"


def _iso(epoch_us: int) -> str:
    moment = dt.datetime.fromtimestamp(epoch_us / 1e6, tz=dt.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _write_checked(text: str, out: Path) -> None:
    """Write `text` beside `out`, load it as `loadproof run` would, then move it into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial.yaml")
    partial.write_text(text, encoding="utf-8")
    try:
        load_spec(partial)
    except SpecError as exc:  # a bug of init's, not the user's: say so, keep nothing half-written
        partial.unlink()
        raise InitError(f"{out}: the spec init wrote does not load ({exc}); hint: please report this") from None
    os.replace(partial, out)
