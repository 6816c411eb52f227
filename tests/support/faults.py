"""What the replay records for each fault the reference endpoint injects: (status, error_type, warning)."""

EXPECTED = {
    "5xx": ("error", "http_5xx", None),
    "429": ("error", "http_429", None),
    "reset": ("error", "connection_reset", None),
    "stall": ("error", "total_timeout", None),
    "cut": ("error", "stream_cut", None),
    "malformed": ("error", "malformed_sse", None),
    "wrong_usage": ("ok", None, "usage_mismatch"),
    "no_usage": ("ok", None, "usage_missing"),
    "model_not_found": ("error", "model_not_found", None),
    "overbill": ("ok", None, None),  # usage.prompt_tokens inflated: only the bill check sees it
}
