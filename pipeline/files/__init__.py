"""A leaf every stage may use to put a file in a pack folder: where each file lives (`layout.py`,
`PackLayout`, the atomic writers), file hashes (`hashing.py`) and partition keys as folder names
(`partition_keys.py`). It imports only `pipeline.contracts` and `pipeline.duck`, so no stage has to
import the pack to write or hash a file (an import-linter contract in pyproject.toml keeps it so)."""
