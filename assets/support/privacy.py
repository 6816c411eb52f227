"""Where the tables with customer text go under the spec's `privacy.text` (pipeline/privacy.py).

keep: the pack folder, as always. hash, drop: the whole table into the private folder beside the
pack (owner-only), the table with its text withheld into the pack; the steps that need the text
(sample, plan, replay, accuracy) read the private copy through `text_layout`. The Dagster
metadata is always built from the pack's copy, so no preview carries text either.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from assets.support.metadata import with_run_id, write_table
from pipeline import privacy
from pipeline.contracts import REPLAY_PLAN, PackFile
from pipeline.files.layout import PackLayout, write_parquet
from pipeline.plan.replay_plan import planned_requests
from pipeline.replay.recording.records import PlannedRequest
from pipeline.spec import Spec
from resources import PackStorage


def text_layout(storage: PackStorage, spec: Spec, pack: PackLayout | None = None) -> PackLayout:
    """The folder whose tables hold the text: the pack (keep) or the private folder beside it.
    `pack`: a partition's layout, for its own private sub-folder (candidates/<c>/<v>)."""
    top = storage.layout()
    if spec.privacy.text == privacy.KEEP:
        return pack or top
    private = PackLayout(privacy.make_private(privacy.private_root(top.root)))
    if pack is None or pack.root == top.root:
        return private
    return PackLayout(private.root / pack.root.relative_to(top.root))


def write_with_text(
    context, storage: PackStorage, spec: Spec, file: PackFile, table: pa.Table, layout=None, inputs=()
) -> dict:
    """Write `file` whole where the text lives and, unless that is the pack, withheld into the pack
    (`layout`: the pack folder to write, default the top one); the metadata is the pack copy's, its
    `inputs` (`PackFile`s) the pack's copies of what it was made from."""
    pack = layout or storage.layout()
    policy = spec.privacy.text
    if policy != privacy.KEEP:
        private = text_layout(storage, spec, pack)
        privacy.owner_only(write_parquet(with_run_id(table, context.run_id), private.path(file)))
    # a measurement or a sample: it carries the run that made it, not its inputs' run
    return write_table(context, pack, file, privacy.withhold_text(table, policy), inputs=inputs, run_id=context.run_id)


def journal_layout(storage: PackStorage, spec: Spec, pack: PackLayout) -> PackLayout:
    """Where a replay's journals go: with accuracy mixed into the load, a journal holds the
    labelled items' reply text (the scoring reads it), so under hash and drop it is private;
    otherwise the pack's journal/ (it holds no text: messages are never journaled)."""
    mixed = spec.accuracy is not None and spec.accuracy.mode == "mixed"
    return text_layout(storage, spec, pack) if mixed else pack


def planned_requests_with_text(storage: PackStorage, spec: Spec) -> list[PlannedRequest]:
    """The requests a replay sends, from the plan with its text: the private copy under hash and
    drop (the pack's has none; `planned_requests` refuses withheld messages)."""
    return planned_requests(pq.read_table(text_layout(storage, spec).path(REPLAY_PLAN)))


def write_raw_timings(storage: PackStorage, spec: Spec, pack: PackLayout, file: PackFile, timings: pa.Table):
    """Raw timings (the production replay's or the sweep's) into the pack, the labelled items'
    reply text withheld; with accuracy mixed into the load under hash or drop, also whole into the
    private folder, where accuracy_results reads the replies. Returns the pack's path."""
    policy = spec.privacy.text
    if policy != privacy.KEEP and journal_layout(storage, spec, pack) is not pack:
        privacy.owner_only(write_parquet(timings, text_layout(storage, spec, pack).path(file)))
    return write_parquet(privacy.withhold_text(timings, policy), pack.path(file))
