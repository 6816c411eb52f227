"""Render the pack model to evidence_pack.{md,html,json}, with a sha256 manifest of the pack."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import jinja2

from pipeline.files.hashing import sha256_file
from pipeline.pack.assemble.claim_words import not_estimable_words
from pipeline.pack.assemble.decision import percent_words, share_words, times_words
from pipeline.pack.assemble.summary import FIRST_REASONS
from pipeline.pack.audit.tree import JSON_NAME, covered_by, subpack_entry
from pipeline.pack.document import EvidencePack, EvidencePackDraft, ManifestEntry, SubPack

MARKDOWN_NAME = "evidence_pack.md"
HTML_NAME = "evidence_pack.html"


def num(value: object) -> str:
    """A figure for people: thousands separators, 3 significant digits below 1 (never an
    exponent: 0.0000980, not 9.8e-05), 'yes'/'no' for a flag, '—' for none."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return "—"
        magnitude = abs(value)
        if isinstance(value, int) or magnitude >= 1000:
            return f"{value:,.0f}"
        if magnitude >= 1:
            return f"{value:,.1f}"
        if magnitude == 0:
            return "0"
        decimals = 2 - math.floor(math.log10(magnitude))  # 3 significant digits
        return f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return str(value)


OPEN_END_NOTE = (
    "An interval written ≥ x (or ≤ x) has one open end: the run was too short to bound that side at this "
    "confidence (not estimable from the row's n requests); what would resolve a claimed figure is listed under "
    "the table of claims (How far the headline moved)."
)


def _bounded(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and not math.isfinite(value))


def interval(low: object, high: object) -> str:
    """An interval's two ends; never infinite: an open end (None: the run was too short to bound
    that side, `OPEN_END_NOTE`) leaves `≥ low` or `≤ high`, and an interval with neither end (none
    was computed) is '—'."""
    if _bounded(low) and _bounded(high):
        return f"{num(low)} – {num(high)}"
    if _bounded(low):
        return f"≥ {num(low)}"
    if _bounded(high):
        return f"≤ {num(high)}"
    return "—"


def open_end(figure: dict) -> str:
    """`its upper end not estimable from 187 requests (368 needed)` for a figure's interval with
    one open end (`claim_words`' words: the HTML cell's title), else ''."""
    low, high = figure.get("ci_low"), figure.get("ci_high")
    if _bounded(low) == _bounded(high):
        return ""
    return f"its {'upper' if _bounded(low) else 'lower'} end {not_estimable_words(figure)}"


def readable(value: object) -> object:
    """What the HTML prints for any value: no Python spelling (None, True, a dict's repr) ever
    reaches the page, whichever field a template prints without a filter."""
    if value is None or isinstance(value, bool):
        return num(value)
    if isinstance(value, dict):
        return "; ".join(f"{key}: {readable(item)}" for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(str(readable(item)) for item in value)
    return value


def columns(rows: list) -> list[str]:
    """The keys of a list of records, in first-seen order: the header of its sub-table."""
    return list(dict.fromkeys(key for row in rows if isinstance(row, dict) for key in row))


def delta(figure: dict) -> str:
    """measured − claimed, with the relative change."""
    claimed, measured = figure.get("claimed"), figure.get("measured")
    if claimed is None or measured is None:
        return "—"
    change = measured - claimed
    relative = f" ({change / claimed:+.0%})" if claimed else ""
    return f"{'+' if change >= 0 else '−'}{num(abs(change))}{relative}"


# an `&` that a Markdown renderer would read as the start of an entity (`&amp;`, `&#62;`): only it
# is escaped, so a plain `&` in a URL or a sentence reads as written
ENTITY_LIKE = re.compile(r"&(?=#?[0-9A-Za-z]+;)")


def markdown_safe(value: object) -> str:
    """Any value printed into the Markdown: cannot end a table cell, a line, or open a tag. Only
    `<` (which opens a tag) and an entity-like `&` are escaped; a `>` inline is plain text, so
    "24 ms > 10 ms" stays readable in the file as well as rendered."""
    text = (
        value
        if isinstance(value, str)
        else num(value)
        if isinstance(value, (int, float)) or value is None
        else str(value)
    )
    text = ENTITY_LIKE.sub("&amp;", text).replace("<", "&lt;")
    return text.replace("|", "\\|").replace("\n", " ")


BASIS_LABELS = {
    "production_load": "production load",
    "capacity_at_sla": "capacity at the SLA",
    "vendor_conditions": "vendor's conditions",
}


def basis_label(item) -> str:
    """What a figure is measured against, in words (a pack before bases: the production load);
    accuracy is measured on the buyer's labelled slice."""
    if item.get("metric") == "accuracy":
        return "the labelled slice"
    return BASIS_LABELS[item.get("basis") or "production_load"]


def verdict_label(item) -> str:
    """The verdict, or why a claimed figure gets none here (served demand)."""
    if item.get("verdict"):
        return item["verdict"]
    return "served demand (not judged)" if item.get("not_judged") else "—"


def tolerance_percent(item) -> str:
    """The tolerance a verdict used, as a percentage (`10 %`; the HTML tables' cell, its source in
    the cell's title and the list below); '—' where there is none (no verdict, or a pack written
    before tolerances)."""
    return "—" if item.get("tolerance") is None else f"{item['tolerance'] * 100:g} %"


def tolerance_label(item) -> str:
    """The tolerance a verdict used with the setting it came from (`10 % (claim.tolerance.throughput,
    default)`); '—' where there is none. The whole source is the figure's `tolerance_source`
    (`tolerances`)."""
    if item.get("tolerance") is None:
        return "—"
    setting = (item.get("tolerance_source") or "").split(":", 1)[0]  # `claim.tolerance.<key>, default`
    return tolerance_percent(item) + (f" ({setting})" if setting else "")


def resolve_short(item) -> str:
    """What would resolve an inconclusive figure, short (the HTML verdict cell; the whole words are
    its title and the list below the table): `needs +12,400 req · 41 min`, `needs a steady window` or
    `not by length`: kept
    about as wide as "holds within tolerance", so the summary table does not widen."""
    if item.get("no_steady_window"):
        return "needs a steady window"
    if item.get("requests_to_resolve") is None:
        return "not by length"
    words = f"needs +{num(item['requests_to_resolve'])} req"
    return words + (f" · {num(item['minutes_to_resolve'])} min" if item.get("minutes_to_resolve") is not None else "")


def tolerances(items) -> list[dict]:
    """Each tolerance the verdicts used, once (the glossary's entries; a verdict's cell gives only
    the percentage): `{label, setting, why, source, metrics}` in first-seen order: the value, the
    setting it came from (`claim.tolerance.latency, default`), the reason its source gives, and the
    figures judged with it."""
    seen: dict[str, dict] = {}
    for item in items:
        if item.get("tolerance") is not None and item.get("tolerance_source"):
            source = item["tolerance_source"]
            setting, _, why = source.partition(": ")
            entry = seen.setdefault(
                f"{item['tolerance']}|{source}",
                {"label": tolerance_percent(item), "setting": setting, "why": why, "source": source, "metrics": []},
            )
            if item["metric"] not in entry["metrics"]:
                entry["metrics"].append(item["metric"])
    return list(seen.values())


def ui_links(figures: list) -> list[dict]:
    """Each partition's link into the Dagster UI, once, in the figures' order (the figures'
    `lineage.dagster`, `pipeline/pack/assemble/ui_links.py`); none in packs written before them."""
    seen: dict[str, dict] = {}
    for figure in figures:
        link = figure["lineage"].get("dagster")
        if link and link["partition"] not in seen:
            seen[link["partition"]] = link
    return list(seen.values())


def interval_level(confidence: float) -> str:
    """The interval level a header names, from the spec's `analysis.confidence`: 0.9 → "90 %"."""
    return f"{round(confidence * 100, 3):g} %"


def _environment(**options) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pipeline.pack.render", "templates"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        **options,
    )
    env.filters["num"] = num
    env.filters["delta"] = delta
    env.filters["interval"] = interval
    env.filters["columns"] = columns
    env.filters["basis"] = basis_label
    env.filters["verdict"] = verdict_label
    env.filters["tolerance_percent"] = tolerance_percent
    env.filters["tolerances"] = tolerances
    env.filters["resolve_short"] = resolve_short
    env.filters["ui_links"] = ui_links
    env.filters["open_end"] = open_end
    env.filters["times"] = times_words  # the decision block's how far: 1.6×, +60 %, a decided share 62 %
    env.filters["percent"] = percent_words
    env.filters["share"] = share_words
    env.globals["open_end_note"] = OPEN_END_NOTE
    env.globals["first_reasons"] = FIRST_REASONS  # the proxy verdict's reasons per candidate on the first screen
    return env


_MARKDOWN = _environment(autoescape=False, finalize=markdown_safe)  # every printed value escaped
_HTML = _environment(autoescape=True, finalize=readable)  # every string HTML-escaped by Jinja


def render_markdown(pack: dict, *, confidence: float) -> str:
    """`confidence` is the spec's `analysis.confidence`: every interval header names it."""
    text = _MARKDOWN.get_template("evidence_pack.md.j2").render(pack=pack, level=interval_level(confidence))
    # the template's conditional sections leave blank lines behind: one empty line between blocks
    text = re.sub(r"\n[ \t]+(?=\n)", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).lstrip("\n")


def render_html(pack: dict, charts: dict[str, str | None], *, confidence: float) -> str:
    """Self-contained HTML: inline styles and inline SVG plots, no script, no network."""
    return _HTML.get_template("evidence_pack.html.j2").render(
        pack=pack, charts=charts, level=interval_level(confidence)
    )


def write_pack(
    pack_dir: Path, pack: EvidencePackDraft, charts: dict[str, str | None], *, confidence: float
) -> dict[str, Path]:
    """Write Markdown and HTML, then the JSON whose manifest hashes every other file below the
    pack folder and whose `subpacks` hash each sub-pack's document (a hash tree, `pack/audit/tree.py`),
    as the folder is now: the side-by-side pack is written last, over the partition packs and
    `latest.json` files the runs before it left.

    The whole document is validated as an `EvidencePack` before any file is written: a pack
    without its checks or lineage, or with a malformed part, leaves nothing behind."""
    document = pack.document()
    written = EvidencePack.model_validate({**document, "manifest": []})
    markdown = pack_dir / MARKDOWN_NAME
    markdown.write_text(render_markdown(document, confidence=confidence), encoding="utf-8")
    html = pack_dir / HTML_NAME
    html.write_text(render_html(document, charts, confidence=confidence), encoding="utf-8")
    coverage = covered_by(pack_dir)
    written.manifest = [ManifestEntry(path=path, sha256=sha256_file(pack_dir / path)) for path in coverage.files]
    written.subpacks = [SubPack.model_validate(subpack_entry(pack_dir, path)) for path in coverage.subpacks]
    path = pack_dir / JSON_NAME
    path.write_text(json.dumps(written.document(), indent=2, default=str) + "\n", encoding="utf-8")
    return {"json": path, "markdown": markdown, "html": html}
