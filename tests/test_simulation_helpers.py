"""``simulation.simulator``: which helpers make their data up (only scalar knobs, random draws, no file)."""
from __future__ import annotations

import libcst as cst
import pytest

from dpcheck.analysis.simulation import simulator


def _function(source: str) -> cst.FunctionDef:
    fn = cst.parse_module(source).body[0]
    assert isinstance(fn, cst.FunctionDef)
    return fn


@pytest.mark.parametrize("source", [
    "def make(n: int, seed: int = 0):\n    rng = np.random.default_rng(seed)\n    return rng.normal(size=n)\n",
    "def make(n=100, p=0.2):\n    return np.random.binomial(1, p, n)\n",
    "def make(n: int, scenario: str, seed: Optional[int] = None):\n    return rng.uniform(size=(n, n))\n",
])
def test_helpers_with_only_knobs_that_draw_are_simulators(source: str) -> None:
    assert simulator(_function(source))


@pytest.mark.parametrize("source", [
    # records come in as a parameter
    "def make(data, seed: int = 0):\n    return data + np.random.normal(size=len(data))\n",
    # records come from a file
    "def make(path: str, n: int = 5):\n    rows = np.loadtxt(path)\n    return rows[np.random.permutation(n)]\n",
    # nothing is drawn
    "def make(n: int):\n    return np.arange(n)\n",
    # no parameters at all: nothing says what it makes
    "def make():\n    return np.random.normal(size=3)\n",
])
def test_helpers_given_or_reading_data_or_drawing_nothing_are_not(source: str) -> None:
    assert not simulator(_function(source))


def test_unknown_callee_is_no_simulator() -> None:
    assert not simulator(None)
