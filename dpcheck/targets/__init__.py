"""Real, installed DP libraries as audit targets (see docs/targets.md)."""
