"""Data shipped with dpcheck (see README.md in this folder for sources and licences)."""
