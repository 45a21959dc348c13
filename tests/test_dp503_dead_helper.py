"""DP503's dead-helper exception: a helper nothing names is dead in a research tree, never in an installed library."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HELPER = '''import numpy as np


def noise_scale(sensitivity, epsilon, delta):
    """Scale of the Gaussian mechanism for (epsilon, delta)-DP."""
    return sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon


def privatise(x, epsilon, delta):
    return x + np.random.normal(0.0, 1.0 * np.sqrt(2 * np.log(1.25 / delta)) / epsilon)
'''


def _dp503_lines(root: Path) -> set[int]:
    out = subprocess.run([sys.executable, "-m", "dpcheck", "scan", "--format", "json", "--no-cache", "--exit-zero",
                          "--select", "DP503", str(root)], capture_output=True, text=True, check=True).stdout
    return {f["span"]["start"]["line"] for f in json.loads(out)["findings"] if f["rule"] == "DP503"}


def _package(tmp_path: Path, *extra: str) -> Path:
    pkg = tmp_path / "mylib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "metrics.py").write_text(HELPER)
    (pkg / "main.py").write_text("from mylib.metrics import privatise\nprint(privatise(1.0, 2.0, 1e-5))\n")
    for name in extra:
        (tmp_path / name).mkdir()
    return tmp_path


def test_unreferenced_helper_in_a_research_tree_is_quiet(tmp_path: Path) -> None:
    lines = _dp503_lines(_package(tmp_path))
    assert 6 not in lines and 10 in lines


def test_unreferenced_public_helper_of_an_installed_wheel_is_reported(tmp_path: Path) -> None:
    lines = _dp503_lines(_package(tmp_path, "mylib-0.1.0.dist-info"))
    assert {6, 10} <= lines
