"""The pack assembled from what the earlier stages wrote: its inputs read in one place (`inputs.py`),
the figures analysis made given their lineage, and the sections built around them (`model.py`
`build_pack`). It makes no number of its own."""
