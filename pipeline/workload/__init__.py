"""The buyer's traffic: log ingest, the production sample, its profile and the claim's divergence from it."""
