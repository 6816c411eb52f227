from pathlib import Path

from dagster import ConfigurableResource

from pipeline.layout import PackLayout


class PackStorage(ConfigurableResource):
    """The pack folder: every Parquet table, the copied SQL and the evidence pack live under it."""

    out_dir: str

    def layout(self) -> PackLayout:
        root = Path(self.out_dir).resolve()
        root.mkdir(parents=True, exist_ok=True)
        return PackLayout(root)
