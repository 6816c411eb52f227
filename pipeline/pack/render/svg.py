"""Plots for the HTML pack: matplotlib rendered to inline SVG (no network, print-friendly).

Each function takes plain columns and returns an SVG string, or None when there is nothing to
plot. Text is drawn as paths, so no string from a spec or a log can inject markup.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")  # headless; must precede pyplot
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update(
    {
        "svg.fonttype": "path",
        "svg.hashsalt": "loadproof",  # stable element ids: the same data gives the same file
        "figure.figsize": (7.0, 3.2),
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "font.size": 9,
    }
)


def _svg(figure) -> str:
    buffer = io.StringIO()
    figure.tight_layout()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and doctype: inline SVG


def cdf(
    series: Mapping[str, Sequence[float | None]], xlabel: str, bounds: dict[str, float] | None = None
) -> str | None:
    """Empirical CDF per series (e.g. per candidate), with optional vertical lines (claim, SLA)."""
    present = {name: sorted(v for v in values if v is not None) for name, values in series.items()}
    present = {name: values for name, values in present.items() if values}
    if not present:
        return None
    figure, axes = plt.subplots()
    for name, values in present.items():
        n = len(values)
        axes.step(values, [(i + 1) / n for i in range(n)], where="post", label=f"{name} (n={n})")
    for label, x in (bounds or {}).items():
        axes.axvline(x, linestyle="--", linewidth=1, color="grey")
        axes.annotate(label, (x, 0.02), rotation=90, fontsize=7, color="dimgrey", ha="right")
    axes.set_xlabel(xlabel)
    axes.set_ylabel("fraction of requests ≤ x")
    axes.set_ylim(0, 1.02)
    axes.legend(loc="lower right", fontsize=8)
    return _svg(figure)


def histogram(series: Mapping[str, Sequence[float | None]], xlabel: str, bins: int = 40) -> str | None:
    present = {name: [v for v in values if v is not None] for name, values in series.items()}
    present = {name: values for name, values in present.items() if values}
    if not present:
        return None
    figure, axes = plt.subplots()
    for name, values in present.items():
        axes.hist(values, bins=bins, alpha=0.6, label=f"{name} (n={len(values)})")
    axes.set_xlabel(xlabel)
    axes.set_ylabel("requests")
    axes.legend(fontsize=8)
    return _svg(figure)


def timeline(
    series: dict[str, tuple[Sequence[float], Sequence[float]]],
    xlabel: str,
    ylabel: str,
    level: dict[str, float] | None = None,
    spans: dict[str, tuple[float, float, bool]] | None = None,
) -> str | None:
    """Lines over time: {name: (x seconds, y)}; `level` draws labelled horizontal references, `spans`
    labelled shaded spans of x {label: (start, end, solid)} (a steady window; hatched when not solid)."""
    series = {name: xy for name, xy in series.items() if xy[0]}
    if not series:
        return None
    figure, axes = plt.subplots()
    for name, (xs, ys) in series.items():
        axes.plot(xs, ys, linewidth=1.2, label=name)
    for index, (label, (start, end, solid)) in enumerate((spans or {}).items()):
        axes.axvspan(start, end, alpha=0.12, color=f"C{index}", hatch=None if solid else "//", label=label)
    if spans:  # the windows' labels are long: the legend goes below the axes
        axes.set_xlabel(xlabel)
        axes.set_ylabel(ylabel)
        axes.set_ylim(bottom=0)
        axes.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2)
        return _svg(figure)
    for label, y in (level or {}).items():
        axes.axhline(y, linestyle="--", linewidth=1, color="grey")
        axes.annotate(label, (0, y), fontsize=7, color="dimgrey", va="bottom")
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_ylim(bottom=0)
    axes.legend(fontsize=8)
    return _svg(figure)


def intervals(
    rows: list[tuple[str, float | None, float | None, float | None]],
    xlabel: str,
    reference: dict[str, float] | None = None,
) -> str | None:
    """One point with its interval per row, (label, value, low, high), top to bottom; `reference`
    draws labelled vertical lines (a claim, say)."""
    rows = [row for row in rows if row[1] is not None]
    if not rows:
        return None
    figure, axes = plt.subplots(figsize=(7.0, 0.6 + 0.45 * len(rows)))
    for y, (_, value, low, high) in enumerate(reversed(rows)):
        assert value is not None  # rows without one were dropped above
        low = value if low is None else low
        high = value if high is None else high
        axes.errorbar([value], [y], xerr=[[value - low], [high - value]], fmt="o", capsize=4, color="C0")
    for label, x in (reference or {}).items():
        axes.axvline(x, linestyle="--", linewidth=1, color="grey")
        axes.annotate(label, (x, len(rows) - 0.6), fontsize=7, color="dimgrey", ha="left")
    axes.set_yticks(range(len(rows)), [row[0] for row in reversed(rows)])
    axes.set_ylim(-0.6, len(rows) - 0.4)
    axes.set_xlabel(xlabel)
    return _svg(figure)


def sweep(
    series: dict[str, dict[str, list]],
    marked: dict[str, float],
    labels: dict[float, str],
    xlabel: str,
    ttft_bound: dict[str, float] | None = None,
) -> str | None:
    """A load sweep, per candidate: requests/s (solid) and goodput (dashed) on the left, p99 TTFT
    on the right with the SLA's bound; a star marks each candidate's highest SLA-meeting level."""
    if not any(entry["x"] for entry in series.values()):
        return None
    figure, (rates, ttft) = plt.subplots(1, 2, figsize=(9.0, 3.4))
    for index, (name, entry) in enumerate(series.items()):
        colour = f"C{index}"
        rates.plot(entry["x"], entry["requests_per_s"], "o-", color=colour, linewidth=1.2, label=f"{name} requests/s")
        rates.plot(entry["x"], entry["goodput"], "s--", color=colour, linewidth=1.0, label=f"{name} goodput")
        ttft.plot(entry["x"], entry["ttft_p99"], "o-", color=colour, linewidth=1.2, label=name)
        if name in marked:
            at = entry["x"].index(marked[name])
            rates.plot([marked[name]], [entry["goodput"][at]], "*", color=colour, markersize=14)
            if entry["ttft_p99"][at] is not None:
                ttft.plot([marked[name]], [entry["ttft_p99"][at]], "*", color=colour, markersize=14)
    for label, y in (ttft_bound or {}).items():
        ttft.axhline(y, linestyle="--", linewidth=1, color="grey")
        ttft.annotate(label, (min(labels), y), fontsize=7, color="dimgrey", va="bottom")
    ticks = sorted(labels)
    for axes, ylabel in ((rates, "requests per second"), (ttft, "TTFT p99 (ms)")):
        axes.set_xticks(ticks, [labels[t] for t in ticks])
        axes.set_xlabel(xlabel)
        axes.set_ylabel(ylabel)
        axes.set_ylim(bottom=0)
        axes.legend(fontsize=7)
    rates.set_title("throughput and goodput (★ highest load meeting the SLA)", fontsize=8)
    ttft.set_title("p99 TTFT against the SLA bound", fontsize=8)
    return _svg(figure)


def server_view(candidates: dict[str, dict[str, list]]) -> str | None:
    """Per candidate (a column): the server's requests running and waiting with its KV-cache use
    (right axis, a share) per scrape on top, the client's TTFT of each request at its send time
    below, on one time axis (seconds since the candidate's first send). `candidates`: {name:
    {second, running, waiting, kv_cache_use, sent_s, ttft_ms}}."""
    candidates = {name: entry for name, entry in candidates.items() if entry["second"] or entry["sent_s"]}
    if not candidates:
        return None
    columns = len(candidates)
    figure, grid = plt.subplots(2, columns, figsize=(7.0 if columns < 3 else 3.2 * columns, 4.6), squeeze=False)
    for column, (name, entry) in enumerate(candidates.items()):
        queue, ttft = grid[0][column], grid[1][column]
        ttft.sharex(queue)
        queue.step(entry["second"], entry["running"], where="post", linewidth=1.2, color="C0", label="running")
        queue.step(entry["second"], entry["waiting"], where="post", linewidth=1.2, color="C3", label="waiting")
        if any(value for value in entry.get("preemptions", []) if value is not None):
            queue.step(
                entry["second"], entry["preemptions"], where="post", linewidth=0.8, color="C4", label="pre-empted"
            )
        queue.set_ylim(bottom=0)
        queue.set_ylabel("requests at the server")
        queue.set_title(name, fontsize=8)
        kv = queue.twinx()
        kv.plot(entry["second"], entry["kv_cache_use"], linewidth=1.0, linestyle="--", color="C2", label="KV-cache use")
        if any(value is not None for value in entry.get("prefix_cache_hit_rate", [])):
            hits = [float("nan") if value is None else value for value in entry["prefix_cache_hit_rate"]]
            kv.plot(entry["second"], hits, linewidth=0.8, linestyle=":", color="C5", label="prefix-cache hit rate")
        kv.set_ylim(0, 1.02)
        kv.set_ylabel("share (KV-cache use, prefix-cache hits)")
        kv.grid(False)
        lines = queue.get_legend_handles_labels()[0] + kv.get_legend_handles_labels()[0]
        queue.legend(lines, [line.get_label() for line in lines], fontsize=7, loc="upper left")
        ttft.scatter(
            entry["sent_s"], entry["ttft_ms"], s=4, color="C1", label=f"client TTFT (n={len(entry['sent_s'])})"
        )
        ttft.set_ylim(bottom=0)
        ttft.set_xlabel("seconds since the first send")
        ttft.set_ylabel("TTFT (ms)")
        ttft.legend(fontsize=7, loc="upper left")
    return _svg(figure)


def waterfall(panels: list[dict], columns: int) -> str | None:
    """The headline waterfall: one panel per candidate × figure (`title`, `claimed`, `unit`,
    `steps`: [(short label, value, low, high)]), the claimed value first (grey) and each step as a
    floating bar from the previous step's value to its own (green: towards the better side, red:
    away from it; `larger_is_better`), with its interval as an error bar."""
    panels = [panel for panel in panels if any(step[1] is not None for step in panel["steps"])]
    if not panels:
        return None
    rows = math.ceil(len(panels) / columns)
    figure, grid = plt.subplots(rows, columns, figsize=(4.2 * columns, 2.6 * rows), squeeze=False)
    for axes in grid.flat[len(panels) :]:
        axes.set_visible(False)
    for axes, panel in zip(grid.flat, panels):
        labels, previous = ["claimed"], panel["claimed"]
        if previous is not None:
            axes.bar(0, previous, color="lightgrey", width=0.6)
        for x, (label, value, low, high) in enumerate(panel["steps"], start=1):
            labels.append(label)
            if value is None:
                continue
            base = previous if previous is not None else 0.0
            better = (value >= base) == panel["larger_is_better"]
            axes.bar(x, value - base, bottom=base, color="tab:green" if better else "tab:red", width=0.6, alpha=0.8)
            if low is not None or high is not None:
                below, above = value - (value if low is None else low), (value if high is None else high) - value
                axes.errorbar(
                    [x], [value], yerr=[[max(below, 0)], [max(above, 0)]], fmt="none", color="black", capsize=3
                )
            previous = value
        axes.set_xticks(range(len(labels)), labels, rotation=35, ha="right", fontsize=7)
        axes.set_title(panel["title"], fontsize=8)
        axes.set_ylabel(panel["unit"], fontsize=7)
        axes.set_ylim(bottom=0)
    return _svg(figure)
