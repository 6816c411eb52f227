"""The endpoint's own view as tables: token agreement, prefix-cache hits, the server's /metrics, GPU energy."""
