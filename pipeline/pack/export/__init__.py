"""A pack's figures in other tools' formats (`loadproof export`): read from the pack's files only."""
