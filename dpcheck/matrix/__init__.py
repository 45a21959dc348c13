"""The violation matrix: static findings, property checks and audits joined per implementation."""
from dpcheck.matrix.model import Cell, Evidence, Matrix, Row

__all__ = ["Cell", "Evidence", "Matrix", "Row"]
