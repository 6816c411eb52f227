"""bench/peers.py's report: the table of every run, and per endpoint each tool's highest sustained
rate, the ratios to loadproof, client CPU per request and the PASS/FAIL check (loadproof's highest
sustained rate >= 2x the best peer's)."""

from __future__ import annotations

SUSTAINED_LAG_MS = 5.0
RATIO_GOAL = 2.0  # loadproof's highest sustained rate vs the best peer's
CPU_GOAL_RATE, CPU_GOAL_MS = 400.0, 0.5  # client CPU per request at this rate (first send to last end)


def _fmt(value, width: int, digits: int = 2) -> str:
    """Right-aligned in `width`, always at least one space before it (large values lose decimals)."""
    if value is None:
        text = "—"
    elif isinstance(value, float):
        text = f"{value:.{digits if abs(value) < 100 else 0}f}"
    else:
        text = str(value)
    return " " + text.rjust(width - 1)


def print_table(rows: list[dict]) -> None:
    header = (
        f"{'endpoint':<14}{'tool':<16}{'rate':>6}{'sent':>6}{'err':>5}{'sent/s':>8}{'lag p99':>9}{'ok':>4}"
        f"{'cpu s':>7}{'start':>7}{'ms/req':>8}{'rss MB':>8}{'ep cpu':>7}{'ep gc2':>8}"
        f"{'ttft p50':>9}{'p95':>7}{'p99':>7}{'e2e p50':>9}{'p95':>7}{'p99':>7}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        gc2 = f"{row['endpoint_gen2']}/{row['endpoint_gen2_ms']:.0f}" if row["endpoint_gen2"] else "0"
        print(
            f"{row['endpoint']:<14}{row['tool']:<16}{_fmt(row['rate'], 6, 0)}{_fmt(row.get('requests'), 6)}"
            f"{_fmt(row.get('errors'), 5)}{_fmt(row.get('sends_per_s'), 8, 1)}{_fmt(row.get('lag_ms_p99'), 9)}"
            f"{'yes' if row['sustained'] else 'no':>4}{_fmt(row['client_cpu_s'], 7, 1)}"
            f"{_fmt(row.get('client_cpu_startup_s'), 7, 1)}{_fmt(row.get('cpu_ms_per_request'), 8)}"
            f"{_fmt(row['peak_rss_mb'], 8, 0)}{_fmt(row['endpoint_cpu_s'], 7, 1)}{gc2:>8}"
            f"{_fmt(row.get('ttft_ms_p50'), 9)}{_fmt(row.get('ttft_ms_p95'), 7)}"
            f"{_fmt(row.get('ttft_ms_p99'), 7)}{_fmt(row.get('e2e_ms_p50'), 9)}{_fmt(row.get('e2e_ms_p95'), 7)}"
            f"{_fmt(row.get('e2e_ms_p99'), 7)}{('  ' + row['failure']) if row['failure'] else ''}"
        )


def best_peer_check(endpoint: str, best: dict) -> tuple[bool, str]:
    """The bench's check: loadproof's highest sustained rate >= RATIO_GOAL x the best peer's (a peer
    that sustains none of the rates tried leaves the ratio unbounded; loadproof sustaining none fails)."""
    peers = {tool: rate for tool, rate in best.items() if tool != "loadproof"}
    top_peer = max(peers, key=lambda tool: peers[tool] or 0)
    lp, top = best["loadproof"], peers[top_peer]
    passed = lp is not None and (top is None or lp >= RATIO_GOAL * top)
    ratio = "no ratio" if lp is None else "unbounded" if top is None else f"{lp / top:.1f}x"
    shown = {tool: "none" if rate is None else f"{rate:g} req/s" for tool, rate in best.items()}
    return passed, (
        f"{'PASS' if passed else 'FAIL'} [{endpoint}] highest sustained rate: loadproof {shown['loadproof']}, "
        f"best peer {top_peer} {shown[top_peer]}: {ratio} (goal >= {RATIO_GOAL:g}x)"
    )


def print_cpu_per_request(rows: list[dict], tools: list[str]) -> None:
    """Client CPU per request, steady part (first send to last end) and with start-up, per rate."""
    rates = list(dict.fromkeys(row["rate"] for row in rows))
    print("  client CPU per request, ms (first send to last end; whole run with start-up in brackets):")
    for tool in tools:
        cells = []
        for rate in rates:
            row = next((r for r in rows if r["tool"] == tool and r["rate"] == rate), {})
            if row.get("cpu_ms_per_request") is not None:
                cells.append(f"{rate:g}: {row['cpu_ms_per_request']:.2f} ({row['cpu_ms_per_request_all']:.2f})")
        print(f"    {tool:<16}{'; '.join(cells)}")
    goal_row = next((r for r in rows if r["tool"] == "loadproof" and r["rate"] == CPU_GOAL_RATE), None)
    if goal_row and goal_row.get("cpu_ms_per_request") is not None:
        met = goal_row["cpu_ms_per_request"] <= CPU_GOAL_MS
        print(
            f"    loadproof at {CPU_GOAL_RATE:g} req/s: {goal_row['cpu_ms_per_request']:.2f} ms per request "
            f"(goal <= {CPU_GOAL_MS:g} ms: {'met' if met else 'NOT met'})"
        )


def print_summary(rows: list[dict], tools: list[str]) -> bool:
    """Per endpoint: highest sustained rates, ratios, CPU per request, percentiles; True if every check passed."""
    verdicts: list[tuple[bool, str]] = []
    print("\nschedule lag read as:")
    for tool in tools:
        kinds = {row.get("lag_kind") for row in rows if row["tool"] == tool and row.get("lag_kind")}
        notes = [row["note"] for row in rows if row["tool"] == tool and row.get("note")]
        print(f"  {tool:<16}{'; '.join(sorted(kinds))}{('  [' + notes[-1] + ']') if notes else ''}")
    for endpoint in dict.fromkeys(row["endpoint"] for row in rows):
        mine = [row for row in rows if row["endpoint"] == endpoint]
        best = {
            tool: max((row["rate"] for row in mine if row["tool"] == tool and row["sustained"]), default=None)
            for tool in tools
        }
        print(f"\n[{endpoint}] highest sustained rate (lag p99 <= {SUSTAINED_LAG_MS:g} ms, no errors), req/s:")
        for tool in tools:
            print(f"  {tool:<16}{_fmt(best[tool], 8, 0)}")
        lp = best.get("loadproof")
        for peer in tools:
            if peer != "loadproof" and lp:
                shown = f"{lp / best[peer]:.1f}x" if best[peer] else "unbounded (it sustained none of the rates tried)"
                print(f"  loadproof vs {peer}: {shown}; the highest rate tried bounds loadproof's own figure")
        if "loadproof" in tools and len(tools) > 1:
            verdicts.append(best_peer_check(endpoint, best))
            print(f"  {verdicts[-1][1]}")
        print_cpu_per_request(mine, tools)
        common = [
            rate
            for rate in dict.fromkeys(row["rate"] for row in mine)
            if all(any(r["rate"] == rate and r["tool"] == t and r["sustained"] for r in mine) for t in tools)
        ]
        if "loadproof" in tools and len(tools) > 1 and common:
            rate = max(common)
            at = {row["tool"]: row for row in mine if row["rate"] == rate}
            print(f"  percentiles at {rate:g} req/s (all sustain), peer vs loadproof:")
            for tool in tools:
                if tool == "loadproof":
                    continue
                diffs = []
                for metric in ("ttft_ms", "e2e_ms"):
                    for p in (50, 95, 99):
                        mine_v, theirs = at["loadproof"].get(f"{metric}_p{p}"), at[tool].get(f"{metric}_p{p}")
                        if mine_v and theirs is not None:
                            diffs.append(
                                f"{metric[:-3]} p{p} {theirs:.2f} vs {mine_v:.2f} ({(theirs - mine_v) / mine_v:+.0%})"
                            )
                print(f"    {tool}: " + "; ".join(diffs))
    print()
    for _, line in verdicts:
        print(line)
    return all(passed for passed, _ in verdicts)
