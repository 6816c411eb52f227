"""A streamed reply read into its record, whatever the API: SSE, Responses events, error types, validity."""
