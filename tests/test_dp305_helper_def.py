"""DP305 reads an imported σ helper's own ``def``: a helper that only counts steps with the batch size credits no
subsampling (quiet); one that works out q = batch / n does (b85)."""
from __future__ import annotations

from pathlib import Path

from dpcheck.rule import run_rules
from dpcheck.rules.dp305_subsampling_assumed import SubsamplingAssumed

TRAIN = '''
import numpy as np
from synthpkg.calib import calibrate_sigma
def train(model, data, cfg):
    sigma = calibrate_sigma(cfg.eps, cfg.delta, len(data), cfg.batch_size, cfg.epochs)
    for _ in range(cfg.epochs):
        idx = np.random.choice(len(data), cfg.batch_size)
        model.noisy_step(data[idx], sigma)
'''

STEPS_ONLY = '''
import numpy as np
def calibrate_sigma(epsilon, delta, n_rows, batch_size, epochs):
    steps = (n_rows // batch_size) * epochs
    return np.sqrt(2 * np.log(1.25 / delta)) / epsilon * np.sqrt(steps)
'''

WITH_RATE = '''
def calibrate_sigma(epsilon, delta, n_rows, batch_size, epochs):
    q = batch_size / n_rows
    return search_subsampled_sigma(q, (n_rows // batch_size) * epochs, epsilon, delta)
'''


def _scan(tmp_path: Path, calib: str) -> list:
    pkg = tmp_path / "synthpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "calib.py").write_text(calib)
    (pkg / "train.py").write_text(TRAIN)
    return [f for f in run_rules(TRAIN, [SubsamplingAssumed], path=str(pkg / "train.py")) if f.rule == "DP305"]


def test_helper_counting_steps_is_quiet(tmp_path: Path) -> None:
    assert not _scan(tmp_path, STEPS_ONLY)


def test_helper_with_rate_fires(tmp_path: Path) -> None:
    assert _scan(tmp_path, WITH_RATE)
