"""The bundled reference endpoint: an OpenAI-compatible server with a serving performance model."""

from pipeline.reference.launch import ReferenceServer, serve
from pipeline.reference.server import build_app
from pipeline.reference.serving_profile import ServingProfile, available_profiles, load_profile

__all__ = ["ReferenceServer", "ServingProfile", "available_profiles", "build_app", "load_profile", "serve"]
