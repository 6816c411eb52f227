"""A stall probe loaded into any Python process by putting this folder on PYTHONPATH (Python imports
`sitecustomize` at start-up, in a virtualenv too) and setting LOADPROOF_STALL_PROBE to a folder.
Used by bench/peer_stall.py to ask, of a pause seen in a client's timings, which process paused.

It writes `<name>-<pid>.jsonl` there, one line per event, times on CLOCK_MONOTONIC (the clock of
time.perf_counter_ns() in every process on Linux, so client and endpoint lines share a timeline):
- `gc`: every collection of generation 2, and any of 1 ms or longer (start, duration, objects
  collected), timed by gc.callbacks;
- `gap`: a watcher thread that wakes every 2 ms and was not run for 20 ms or more: it records the
  gap and the CPU the whole process used meanwhile. CPU close to the gap means the process ran but
  held the GIL (a collection, a long C call); CPU near zero means it was off the CPU (the OS ran
  something else, or it was blocked).
Nothing here changes what the process does beyond these callbacks and one sleeping thread
(LOADPROOF_STALL_PROBE_WATCH=0 leaves the thread out: bench/peers.py logs only the collections).
"""

import os

_FOLDER = os.environ.get("LOADPROOF_STALL_PROBE")

if _FOLDER:
    import gc
    import json
    import sys
    import threading
    import time

    _NAME = os.environ.get("LOADPROOF_STALL_PROBE_NAME") or os.path.basename(sys.argv[0] or "python")
    _OUT = open(os.path.join(_FOLDER, f"{_NAME}-{os.getpid()}.jsonl"), "a", buffering=1)  # noqa: SIM115
    _OUT.write(json.dumps({"event": "start", "t_ns": time.monotonic_ns(), "argv": sys.argv[:3]}) + "\n")
    _gc_started = [0]

    def _on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            _gc_started[0] = time.monotonic_ns()
            return
        ended = time.monotonic_ns()
        duration_ms = (ended - _gc_started[0]) / 1e6
        if info.get("generation") == 2 or duration_ms >= 1.0:
            line = {"event": "gc", "t_ns": _gc_started[0], "ms": round(duration_ms, 3)}
            line.update(generation=info.get("generation"), collected=info.get("collected"))
            _OUT.write(json.dumps(line) + "\n")

    gc.callbacks.append(_on_gc)

    def _watch() -> None:
        last, last_cpu = time.monotonic_ns(), time.process_time()
        while True:
            time.sleep(0.002)
            now, cpu = time.monotonic_ns(), time.process_time()
            if now - last >= 20_000_000:
                line = {"event": "gap", "t_ns": last, "ms": round((now - last) / 1e6, 1)}
                line["cpu_ms"] = round((cpu - last_cpu) * 1e3, 1)
                _OUT.write(json.dumps(line) + "\n")
            last, last_cpu = now, cpu

    if os.environ.get("LOADPROOF_STALL_PROBE_WATCH", "1") != "0":  # peers.py keeps only the collections
        threading.Thread(target=_watch, name="stall-probe", daemon=True).start()
