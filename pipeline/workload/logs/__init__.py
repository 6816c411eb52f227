"""Production-log ingest: each format parses into the canonical request log plus a quarantine."""

from pipeline.workload.logs.canonical import IngestResult, ingest_log
from pipeline.workload.logs.ingest import IngestError, IngestStats, ingest

__all__ = ["IngestError", "IngestResult", "IngestStats", "ingest", "ingest_log"]
