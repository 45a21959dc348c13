"""dpcheck: find privacy bugs in differentially private code."""

__version__ = "0.1.0"
