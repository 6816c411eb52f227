"""The evidence pack: one document (the fixed keys of ARCHITECTURE.md) rendered to JSON, Markdown and HTML."""
