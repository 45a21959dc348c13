"""Property suites run over all twelve built-in implementations (six + corrected twins)."""
from __future__ import annotations

import pytest

from dpcheck.impls import NAMES


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "impl" in metafunc.fixturenames:
        metafunc.parametrize("impl", NAMES)
