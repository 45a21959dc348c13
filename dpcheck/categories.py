"""The violation-matrix categories (columns of Table 2 of the PATE-GAN audit)."""
from __future__ import annotations

from typing import Final

#: category id -> kind: "V" (privacy violation) or "B" (other bug)
CATEGORIES: Final[dict[str, str]] = {
    "pate": "V",
    "data_partition": "V",
    "moments_accountant": "V",
    "metadata": "V",
    "laplace_noise": "V",
    "delta_scale": "V",
    "labels_distribution": "V",
    "teachers": "B",
    "processing": "B",
}

#: findings outside Table 2 (Appendix A.2 defects, generic mistakes)
GENERAL: Final = "general"
#: engine diagnostics (unparsable file, crash of a rule, ...)
DIAGNOSTIC: Final = "diagnostic"
#: a non-private fallback the code itself flags (e.g. right after ``warnings.warn(...,
#: PrivacyLeakWarning)``): reported with severity ``note``, never a Table 2 cell or a violation;
#: the CI gate (``--category``, exit code) ignores it unless ``--strict`` is given
ACKNOWLEDGED: Final = "acknowledged"

ALL_CATEGORIES: Final[tuple[str, ...]] = (*CATEGORIES, GENERAL, DIAGNOSTIC, ACKNOWLEDGED)

#: ``error``: a privacy violation or a bug; ``warning``: likely wrong or the file could not be
#: fully analysed; ``note``: information that does not gate (acknowledged fallbacks)
SEVERITIES: Final[tuple[str, ...]] = ("error", "warning", "note")


def check_category(name: str) -> str:
    if name not in ALL_CATEGORIES:
        raise ValueError(f"unknown category {name!r}; known: {', '.join(ALL_CATEGORIES)}")
    return name
