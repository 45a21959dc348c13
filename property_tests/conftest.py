"""Property suites run over all twelve built-in implementations (six + corrected twins).

Each test module names its category (``CATEGORY``); a pair whose check has nothing to observe
(``_verdict.NOT_APPLICABLE``) gets the id ``IMPL-not_applicable``, so a run lists it as such and not
as a check that passed.
"""
from __future__ import annotations

import pytest

from dpcheck.impls import NAMES

from ._verdict import expected_status


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "impl" in metafunc.fixturenames:
        category = getattr(metafunc.module, "CATEGORY", None)
        ids = [f"{impl}-not_applicable" if category and expected_status(impl, category) == "not_applicable"
               else impl for impl in NAMES]
        metafunc.parametrize("impl", NAMES, ids=ids)
