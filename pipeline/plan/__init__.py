"""The replay plan: what to send and when, computed up front from the production sample."""
