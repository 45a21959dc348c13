"""Sub-commands of the dpcheck CLI (see dpcheck.cli)."""
