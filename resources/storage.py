from pathlib import Path

from dagster import ConfigurableResource

from pipeline.files.layout import PackLayout
from pipeline.pack.assemble.ui_links import DEFAULT_UI_URL


class PackStorage(ConfigurableResource):
    """The pack folder: every Parquet table, the copied SQL and the evidence pack live under it.
    A candidate × model-version partition writes under candidates/<candidate>/<version>/."""

    out_dir: str
    # the Dagster UI each figure's lineage row links to (pipeline/pack/assemble/ui_links.py)
    ui_url: str = DEFAULT_UI_URL

    def layout(self) -> PackLayout:
        root = Path(self.out_dir).resolve()
        root.mkdir(parents=True, exist_ok=True)
        return PackLayout(root)

    def partition_layout(self, candidate: str, version: str) -> PackLayout:
        """One candidate × model-version partition's folder, with the shared inputs it reads
        copied into it."""
        shared = self.layout()
        partition = shared.partition(candidate, version)
        shared.sync_inputs_into(partition)
        return partition
