"""The audit paper's settings (Section 6.2) for the built-in PATE-GANs, per dataset and implementation.

Every built-in implementation gets the paper's knobs (ε = 1, δ = 1e-5, λ = 1e-3; 2 teachers and
100 iterations on the worst case, 5 teachers and 1,000 iterations on cervical). A few also get the
way their own driver is run on such data:

* ``turing`` (and its twin): reprosyn describes small integer domains such as {0, 1} as *finite*
  columns in its metadata (one-hot encoded, categories from the metadata, decoded by argmax);
  described as INTEGER instead, every generated value in (0, 1) truncates to 0 and the output
  carries no information at all.
* ``borealis`` (and its twin): the ``evaluate.py`` driver always names a ``--target-variable`` and
  trains the conditional model on it; the label is the dataset's last column.

Adapters from outside (``module:Factory`` or reference mechanisms) get only what the user passes.
"""
from __future__ import annotations

from typing import Any

#: ε = 1, δ = 1e-5 are the AuditSpec defaults; these are the PATE-GAN knobs
DATASET_DEFAULTS: dict[str, dict[str, Any]] = {
    "worstcase": {"num_teachers": 2, "max_iterations": 100, "lamda": 0.001},
    "cervical": {"num_teachers": 5, "max_iterations": 1000, "lamda": 0.001},
}
WORST_CASE_HYPERPARAMS = DATASET_DEFAULTS["worstcase"]

_DRIVER: dict[str, dict[str, dict[str, Any]]] = {
    "turing": {"worstcase": {"categorical_columns": (0, 1, 2)}},
    "borealis": {"worstcase": {"conditional": True, "label_column": -1},
                 "cervical": {"conditional": True, "label_column": -1}},
}


def paper_hyperparams(impl: str, dataset: str) -> dict[str, Any]:
    """The hyperparameters the audit passes to built-in implementation ``impl`` on ``dataset``."""
    from dpcheck import impls

    if impl not in impls.NAMES:
        return {}
    family = impl.removesuffix("-fixed")
    # the worst-case variants (categorical, continuous, ... '@N') get the worst case's knobs
    kind = "worstcase" if dataset.startswith("worstcase") else dataset
    driver = _DRIVER.get(family, {}).get(kind, {})
    return {**DATASET_DEFAULTS.get(kind, {}), **driver}
