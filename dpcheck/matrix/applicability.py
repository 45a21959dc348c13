"""Which static rules apply to which rows: a rule that cannot apply is no evidence of a pass.

Every PATE-GAN rule "ran and found nothing" on a library without PATE code, which says nothing
about that library. The matrix therefore records such a run as *not applicable*: a row's cell is
``clean`` only when a check that applies to the row ran and passed.

Scopes (by category, :data:`CATEGORY_SCOPE`, narrowed for a few rules by :data:`RULE_SCOPE`):

* ``any`` — DP code of every kind (noise calibration, bounds from the data, unaccounted releases);
* ``synthesizer`` — generators: their output processing, latent noise, sampling-time labels;
* ``pate`` — the PATE framework: teachers, their partition, the noisy vote and its moments accountant.

The built-in rows and ``package.module:Factory`` rows are PATE-GAN adapters: every rule applies.
A real-library target applies ``any``, plus ``synthesizer`` rules for synthesizers, plus ``pate``
rules when the target is a PATE synthesizer (its name says ``pate``).
"""
from __future__ import annotations

from typing import Final, Literal

Scope = Literal["any", "synthesizer", "pate"]

#: a rule's scope follows its category: the categories only PATE code has, and those of a generator's
#: own code (its sampling-time labels, its output processing); every other category is DP code of any kind
CATEGORY_SCOPE: Final[dict[str, Scope]] = {
    "pate": "pate", "data_partition": "pate", "moments_accountant": "pate", "teachers": "pate",
    "labels_distribution": "synthesizer", "processing": "synthesizer",
}
#: rules whose scope is narrower than their category's
RULE_SCOPE: Final[dict[str, Scope]] = {
    "DP105": "pate",         # Laplace scale vs the PATE accountant's inverse scale λ
    "DP106": "pate",         # Gaussian vote noise accounted as Laplace
    "DP302": "pate",         # the data-dependent moment bound's validity condition
    "DP403": "synthesizer",  # latent distribution mismatch between training and generation
}
#: categories only PATE code has (a test checks that their rules are scoped "pate")
PATE_CATEGORIES: Final[frozenset[str]] = frozenset(c for c, v in CATEGORY_SCOPE.items() if v == "pate")

ALL_SCOPES: Final[frozenset[str]] = frozenset({"any", "synthesizer", "pate"})


def row_scopes(target_kind: str | None, name: str) -> frozenset[str]:
    """The scopes that apply to a row: ``target_kind`` is None for built-in and user rows."""
    if target_kind is None:
        return ALL_SCOPES
    if target_kind != "synthesizer":
        return frozenset({"any"})
    if "pate" in name.split(":", 1)[-1].lower():
        return ALL_SCOPES
    return frozenset({"any", "synthesizer"})


def scope_of(rule_id: str, category: str) -> Scope:
    return RULE_SCOPE.get(rule_id) or CATEGORY_SCOPE.get(category, "any")


def applies(rule_id: str, category: str, scopes: frozenset[str]) -> bool:
    return scope_of(rule_id, category) in scopes


def scope_text(rule_id: str, category: str) -> str:
    return {"pate": "PATE code (teachers, noisy votes, moments accountant)",
            "synthesizer": "a generator's training and sampling code",
            "any": "DP code"}[scope_of(rule_id, category)]
