"""One raw-timing record per request, and the crash-safe journal it lands in."""
