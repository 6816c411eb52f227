"""What `loadproof run` and the demos print: the spec loaded or a clear exit, the Dagster runs
executed, the failed checks in their own words, the claim beside the measured figures, and where
the pack and the customer text are."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pipeline import interrupts
from pipeline.pack.assemble.decision import times_words
from pipeline.pack.assemble.ui_links import DEFAULT_UI_URL
from pipeline.pack.render.pages import (
    HTML_NAME,
    JSON_NAME,
    MARKDOWN_NAME,
    basis_label,
    interval,
    interval_level,
    num,
    verdict_label,
)
from pipeline.spec import SpecError, load_spec

console = Console(width=120)


def load_or_exit(spec: Path):
    try:
        return load_spec(spec)
    except SpecError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None


def execute_spec(
    spec: Path, out: Path, overrides: dict[str, str], confidence: float, ui_url: str = DEFAULT_UI_URL
) -> None:
    """Preflight (`pipeline/preflight.py`: bad input exits 2 in one line, before any folder is
    made), then the Dagster runs (a run that fails exits 1)."""
    import httpx

    from assets.runner import execute
    from pipeline.http_retry import CandidateFailing
    from pipeline.preflight import PreflightError, preflight

    try:
        warnings = preflight(load_or_exit(spec), overrides)
    except PreflightError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    for warning in warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}", soft_wrap=True)
    started = time.perf_counter()
    try:
        results = execute(spec, out, overrides, ui_url)
    except CandidateFailing as exc:  # a candidate that kept failing its fingerprint after the retries
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    except (httpx.HTTPError, ValueError) as exc:  # fingerprinting a candidate before its run
        typer.echo(f"error: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(1) from None
    elapsed = time.perf_counter() - started
    evaluations = [e for result in results for e in result.get_asset_check_evaluations() if not e.passed]
    failed_checks = [e.check_name for e in evaluations if e.blocking or e.severity.value == "ERROR"]
    warnings = [e.check_name for e in evaluations if e.check_name not in failed_checks]
    run_ids = ", ".join(result.run_id for result in results)
    if interrupts.stop_requested():  # a signal: INTERRUPTED.json says where (pipeline/interrupts.py)
        name = interrupts.signal_name(interrupts.stop_signal()) or "a stop request"
        flushed = sum(note["rows"] for note in interrupts.flushed())
        note = escape(str(out / interrupts.INTERRUPTED_NAME))
        console.print(
            f"[yellow]run {run_ids} stopped by {name} after {elapsed:.0f} s[/yellow]: no pack; {flushed} raw-timing "
            f"records flushed to Parquet; where it stopped: {note}; run it again for a pack",
            soft_wrap=True,
        )
        raise typer.Exit(1)
    if not all(result.success for result in results) or not (out / JSON_NAME).is_file():
        failed = (
            next(result for result in results if not result.success)
            if not all(r.success for r in results)
            else results[-1]
        )
        console.print(
            f"[red]run {failed.run_id} failed after {elapsed:.0f} s[/red]; failed checks: {failed_checks or 'none'}"
        )
        print_check_explanations(evaluations)
        for event in failed.all_events:
            if event.is_step_failure:
                error = event.step_failure_data.error
                assert error is not None  # a failed step carries its error
                root = error.cause or error
                console.print(f"  {event.step_key}: {root.message.strip()}", markup=False)
        raise typer.Exit(1)
    pack = json.loads((out / JSON_NAME).read_text())
    print_headline(pack, confidence)
    console.print(f"checks failed: {failed_checks or 'none'}; warnings: {warnings or 'none'}")
    print_check_explanations(evaluations)
    for partition in pack.get("partitions", []):
        console.print(
            (
                f"{partition['candidate']} at {partition['model_version']}: {out / 'candidates'} (run "
                f"{partition['run_id']})"
            ),
            markup=False,
        )
    print_decision(pack)
    console.print(
        f"evidence pack: {(out / HTML_NAME).resolve()} (+ {MARKDOWN_NAME}, {JSON_NAME}); runs {run_ids}, "
        f"{elapsed:.0f} s; re-check it with: loadproof verify {out}"
    )
    print_privacy(spec, out)


def print_privacy(spec: Path, out: Path) -> None:
    """Where the customer text is (docs/privacy.md): never in the pack unless the spec keeps it."""
    from pipeline.privacy import private_root

    policy = load_spec(spec).spec.privacy.text
    if policy != "keep":
        console.print(
            f"customer text (privacy.text {policy}): none in the pack; the copy the replay sent is in "
            f"{private_root(out)} (owner-only: delete it once the pack is final)",
            markup=False,
            soft_wrap=True,
        )


def print_check_explanations(evaluations) -> None:
    """Each failed check's own words (its `explanation` metadata, pipeline.quality.expectations.
    explain): which expectation, how many rows, example ids, what to do; not dug out of the UI."""
    for evaluation in evaluations:
        explanation = evaluation.metadata.get("explanation")
        if explanation is None:
            continue
        console.print(f"  {evaluation.asset_key.to_user_string()}: {evaluation.check_name}", markup=False)
        for line in str(explanation.value).splitlines():
            console.print(f"    - {line}", markup=False, soft_wrap=True)


def print_headline(pack: dict, confidence: float) -> None:
    """The claimed figures beside the measured ones; the interval column names the spec's level."""
    table = Table(title=f"Claim vs measured — {pack['spec_name']}")
    columns = ("candidate", "figure", "measured at", "claimed", "measured", f"{interval_level(confidence)} CI", "n")
    for column in (*columns, "verdict", "tolerance"):
        table.add_column(column, justify="right" if column in {"claimed", "measured", "n"} else "left")
    for figure in pack["figures"]:
        if figure["claimed"] is None:
            continue
        table.add_row(
            figure["candidate"],
            f"{figure['metric']} ({figure['unit']})",
            basis_label(figure),
            num(figure["claimed"]),
            num(figure["measured"]),
            interval(figure["ci_low"], figure["ci_high"]),  # an open end: ≥ low, never "– —" or ∞
            str(figure["n"]),
            verdict_label(figure),
            "—" if figure.get("tolerance") is None else f"{figure['tolerance'] * 100:g} %",
        )
    console.print(table)
    for figure in pack["figures"]:
        if figure["claimed"] is not None and figure.get("timed_from"):
            console.print(f"  {figure['candidate']} {figure['metric']}: measured {figure['timed_from']}", markup=False)
    validity = pack["client_validity"]
    console.print(
        f"schedule lag p99 {num(validity['schedule_lag_ms_p99'])} ms; client limited: {num(validity['client_limited'])}"
    )


def print_decision(pack: dict) -> None:
    """The pack's decision block (pipeline/pack/assemble/decision.py), last before where the pack is:
    per candidate its bottom line and each judged claim (claimed, measured, verdict, how far ×), then
    the recommendation; nothing for a pack without one."""
    decision = pack.get("decision")
    if not decision:
        return
    table = Table(title="Decision")
    for column in ("candidate", "claim", "measured at", "claimed", "measured", "verdict", "×"):
        table.add_column(column, justify="right" if column in {"claimed", "measured", "×"} else "left")
    for candidate in decision["candidates"]:
        for claim in candidate["claims"]:
            unit = "" if claim["unit"] == "fraction" else f" {claim['unit']}"
            table.add_row(
                candidate["candidate"],
                claim["display"],
                basis_label(claim),
                num(claim["claimed"]) + unit,
                num(claim["measured"]),
                claim["verdict"],
                times_words(claim["times_claimed"]),
            )
    console.print(table)
    for candidate in decision["candidates"]:
        console.print(candidate["bottom_line"], markup=False, soft_wrap=True)
    console.print(decision["recommendation"]["line"], markup=False, soft_wrap=True)
