"""The pack's audit: `loadproof verify` (the hash tree, the lineage, every figure and table re-made
from the raw timings by the analysis's own code), `sign` and `keygen`. The one part of the pack that
runs queries (through the analysis), an import contract says so."""
