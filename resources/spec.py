from dagster import ConfigurableResource

from pipeline.spec import LoadedSpec, load_spec


class SpecResource(ConfigurableResource):
    """The re-validation spec (YAML) this run measures."""

    spec_path: str

    def load(self) -> LoadedSpec:
        return load_spec(self.spec_path)
