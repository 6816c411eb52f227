"""The metric catalogue: every figure declared once, and the questions the stages ask of it by name."""
