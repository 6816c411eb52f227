"""Seconds from a signal to the CLI's exit, sent once a run's production replay has begun
(`pipeline/interrupts.py`): `loadproof run` (one candidate on a zero-delay reference endpoint)
sent SIGTERM and SIGINT, and `loadproof demo` (two candidates side by side, each a process of its
own) sent SIGINT.

    .venv/bin/python bench/signal_grace.py [--no-demo]

For each: the exit status (143 / 130 expected), the seconds from the signal to the exit (the grace,
`$LOADPROOF_STOP_GRACE_S`, is 10 s by default: past it the exit is forced), whether the exit was
forced, and the records the stopped replays flushed. The replay is found begun by polling its
journal. On a machine shared with busy processes the figures show the scheduler too.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml  # noqa: E402

from pipeline import REPO_ROOT, interrupts  # noqa: E402
from pipeline.reference import ReferenceServer  # noqa: E402
from tests.support.specs import small_spec  # noqa: E402

LOADPROOF = Path(sys.executable).with_name("loadproof")
POLL_S = 0.05
MAX_WAIT_S = 600


def journal_lines(out: Path) -> int:
    journals = [p for p in out.glob("candidates/*/*/journal/*.jsonl") if not p.name.endswith("-calibration.jsonl")]
    return max((path.read_bytes().count(b"\n") for path in journals), default=0)


def interrupt(command: list[str], out: Path, sig: signal.Signals) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    env.setdefault("LOADPROOF_DEMO_API_KEY", "sk-loadproof-bench")
    env.pop("DAGSTER_HOME", None)
    process = subprocess.Popen(
        command, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + MAX_WAIT_S
        while journal_lines(out) < 3:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{command[1]}: the replay never began (status {process.poll()})")
            time.sleep(POLL_S)
        signalled = time.monotonic()
        process.send_signal(sig)
        status = process.wait()
        seconds = time.monotonic() - signalled
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    note_path = out / interrupts.INTERRUPTED_NAME
    note = json.loads(note_path.read_text()) if note_path.exists() else {}
    return {
        "command": command[1],
        "signal": sig.name,
        "status": status,
        "seconds": round(seconds, 2),
        "forced": note.get("forced"),
        "flushed_rows": sum(entry["rows"] for entry in note.get("flushed", [])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-demo", action="store_true", help="skip the demo (a minute to reach its replay)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder, ReferenceServer("zero") as server:
        root = Path(folder)

        def write_spec(data: dict) -> Path:
            path = root / "spec.yaml"
            path.write_text(yaml.safe_dump(data, sort_keys=False))
            return path

        spec = small_spec(write_spec, server.base_url)
        for sig in (signal.SIGTERM, signal.SIGINT):
            out = root / f"run-{sig.name}"
            rows.append(interrupt([str(LOADPROOF), "run", str(spec), "--out", str(out)], out, sig))
        if not args.no_demo:
            out = root / "demo-SIGINT"
            rows.append(interrupt([str(LOADPROOF), "demo", "--out", str(out)], out, signal.SIGINT))
    print(f"{'command':8} {'signal':8} {'status':>6} {'s to exit':>9} {'forced':>6} {'rows flushed':>12}")
    for row in rows:
        print(
            f"{row['command']:8} {row['signal']:8} {row['status']:>6} {row['seconds']:>9.2f} "
            f"{row['forced']!s:>6} {row['flushed_rows']:>12}"
        )


if __name__ == "__main__":
    main()
