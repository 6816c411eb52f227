from dagster import ConfigurableResource

from pipeline import interrupts
from pipeline.spec import LoadedSpec, load_spec


class SpecResource(ConfigurableResource):
    """The re-validation spec (YAML) this run measures."""

    spec_path: str

    def load(self) -> LoadedSpec:
        # every step reads the spec first: a run asked to stop (pipeline/interrupts.py) starts no further step
        interrupts.raise_if_stopped("the next step")
        return load_spec(self.spec_path)
