import os

from dagster import ConfigurableResource

from pipeline.replay.pacing.engine import Target
from pipeline.spec.candidates import Candidate


class MissingApiKey(ValueError):
    """A candidate's spec names an API key variable that is not set where this process runs."""

    def __init__(self, candidate: str, variable: str):
        super().__init__(f"candidate {candidate!r}: environment variable {variable} (api_key_env) is not set")
        self.candidate, self.variable = candidate, variable


class EndpointResource(ConfigurableResource):
    """The endpoints under test. API keys are read from the environment variable the spec names,
    at launch (never at import), and never logged or written anywhere."""

    base_url_overrides: dict[str, str] = {}

    def target(self, candidate: Candidate) -> Target:
        api_key = None
        if candidate.api_key_env:
            api_key = os.environ.get(candidate.api_key_env)
            if not api_key:
                raise MissingApiKey(candidate.name, candidate.api_key_env)
        return Target(
            candidate=candidate.name,
            base_url=self.base_url_overrides.get(candidate.name, candidate.base_url),
            model=candidate.model,
            api_key=api_key,
            api_key_env=candidate.api_key_env,
            gpu_metrics_url=candidate.gpu_metrics_url,
            api=candidate.api,
            tokenizer=candidate.tokenizer,
        )
