"""The replay engine: send a replay plan to an OpenAI-compatible endpoint, record every timing."""
