"""dpcheck.analysis.exactgate: exact private values deciding a noisy release, found by role."""
from __future__ import annotations

import ast

from dpcheck.analysis.exactgate import exact_gates


def _gates(source: str) -> list[tuple[int, bool, bool]]:
    return [(g.line, g.partition, g.step) for g in exact_gates(ast.parse(source))]


def test_group_skipped_on_exact_membership_before_its_noisy_count() -> None:
    source = (
        "import numpy as np\n"
        "def centres(points, owner, k, eps):\n"
        "    out = []\n"
        "    for c in range(k):\n"
        "        if c not in owner:\n"
        "            continue\n"
        "        out.append(np.sum(owner == c) + np.random.laplace(0, 1 / eps))\n"
        "    return out\n"
    )
    assert _gates(source) == [(5, False, False)]


def test_counter_only_test_is_no_data_test() -> None:
    source = (
        "import numpy as np\n"
        "def centres(points, owner, k, eps):\n"
        "    out = []\n"
        "    for c in range(k):\n"
        "        if c == 0:\n"
        "            continue\n"
        "        out.append(np.sum(owner == c) + np.random.laplace(0, 1 / eps))\n"
        "    return out\n"
    )
    assert _gates(source) == []


def test_noise_helper_of_the_module_is_a_draw() -> None:
    source = (
        "import numpy as np\n"
        "def lap(b):\n"
        "    return np.random.laplace(0, b)\n"
        "def release(cells, eps):\n"
        "    for key, cell in cells.items():\n"
        "        if cell[1] > 0:\n"
        "            cells[key] = cell[0] + lap(1 / eps)\n"
    )
    assert _gates(source) == [(6, False, False)]


def test_recursive_partition_stop_needs_a_data_chosen_part() -> None:
    stop = (
        "import numpy as np\n"
        "def grow(X, y, eps):\n"
        "    if len(X) < 5:\n"
        "        return np.bincount(y) + np.random.laplace(0, 1 / eps, 2)\n"
        "    m = X[:, 0] > 0\n"
        "    return grow(X[m], y[m], eps), grow(X[~m], y[~m], eps)\n"
    )
    copy = stop.replace("grow(X[m], y[m], eps), grow(X[~m], y[~m], eps)", "grow(X[:], y, eps)")
    assert _gates(stop) == [(3, True, False)]
    assert _gates(copy) == []
