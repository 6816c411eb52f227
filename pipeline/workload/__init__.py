"""The workload stage: the buyer's production traffic, before anything is sent.

`logs/` ingests a log (six formats) into the canonical request table and quarantines bad lines;
`sampling` draws the replayed window (or a stratified sample) and tests its representativeness;
`profile` describes it (lengths, structure, burstiness, concurrency, sessions); `divergence`
compares it with the conditions of the vendor's claim (the proxy verdict); `init_spec` writes a
new user's first spec from their log and endpoint (`loadproof init`).
"""
