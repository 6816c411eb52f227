"""The quality stage: what the asset checks test, as plain functions returning one `Outcome`.

`rules` the checks that are not table expectations (reject rate, profile quantiles, lineage
hashes, sweep consistency); `expectations/` the great-expectations suites, one module per stage
they guard.
"""
