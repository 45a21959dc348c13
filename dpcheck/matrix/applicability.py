"""Which static rules apply to which rows: a rule that cannot apply is no evidence of a pass.

Every PATE-GAN rule "ran and found nothing" on a library without PATE code, which says nothing
about that library. The matrix therefore records such a run as *not applicable*: a row's cell is
``clean`` only when a check that applies to the row ran and passed.

Scopes (:data:`RULE_SCOPE` lists the rules that are not ``any``):

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

#: rules that look for PATE or generator code, by id; every other rule looks for DP code of any kind
RULE_SCOPE: Final[dict[str, Scope]] = {
    "DP103": "pate",         # moments accountant without its log
    "DP104": "pate",         # moment index mismatch
    "DP105": "pate",         # Laplace scale vs the accountant's inverse scale λ
    "DP106": "pate",         # Gaussian vote noise accounted as Laplace
    "DP201": "pate",         # teachers' disjoint partition
    "DP203": "synthesizer",  # training labels fed to the generator at sampling time
    "DP301": "pate",         # PATE claimed, no accounting
    "DP302": "pate",         # data-dependent moment bound's validity condition
    "DP304": "pate",         # non-neural teachers
    "DP401": "synthesizer",  # generator output not rescaled
    "DP402": "synthesizer",  # integer columns truncated
    "DP403": "synthesizer",  # latent distribution mismatch
}
#: categories only PATE code has: a rule in one of them must be scoped above (a test checks it)
PATE_CATEGORIES: Final[frozenset[str]] = frozenset({"pate", "data_partition", "moments_accountant", "teachers"})

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


def applies(rule_id: str, scopes: frozenset[str]) -> bool:
    return RULE_SCOPE.get(rule_id, "any") in scopes


def scope_text(rule_id: str) -> str:
    return {"pate": "PATE code (teachers, noisy votes, moments accountant)",
            "synthesizer": "a generator's training and sampling code",
            "any": "DP code"}[RULE_SCOPE.get(rule_id, "any")]
