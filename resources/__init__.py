"""Thin ConfigurableResources wrapping I/O: the spec, the pack folder, the endpoints under test."""

from resources.endpoint import EndpointResource
from resources.spec import SpecResource
from resources.storage import PackStorage

__all__ = ["EndpointResource", "PackStorage", "SpecResource"]
