"""The audit's own error, below every module that raises it (re-exported by :mod:`dpcheck.audit.runners.engine`)."""
from __future__ import annotations


class AuditRunError(RuntimeError):
    """A shadow run raised: the implementation cannot be audited with this spec."""
