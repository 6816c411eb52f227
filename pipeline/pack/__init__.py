"""The evidence pack: one model (a dict with DESIGN.md's fixed keys) rendered to JSON and Markdown."""
