"""Data-quality rules and great-expectations suites behind the asset checks, with one result type."""
