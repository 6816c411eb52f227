"""Production-log ingest: each format parses into the canonical request log plus a quarantine."""

from pipeline.logs.canonical import IngestResult, ingest_log

__all__ = ["IngestResult", "ingest_log"]
