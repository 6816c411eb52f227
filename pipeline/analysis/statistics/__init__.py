"""The arithmetic under intervals and verdicts: order statistics, Wilson, batch means, the steady state."""
