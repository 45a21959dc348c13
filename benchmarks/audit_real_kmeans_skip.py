"""Check of the audit_real KMeans explanation: the replace-one worst-case game on diffprivlib 0.6.6 KMeans
as installed, and with its empty-cluster skip removed (a patched _update_centers in this script only).

    python benchmarks/audit_real_kmeans_skip.py   # prints the attack AUC and test counts of both and
                                                  # writes reports/audit_real/records/kmeans_skip.json,
                                                  # which benchmarks/audit_real.py report cites
"""
from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import numpy as np
from diffprivlib.models import KMeans
from diffprivlib.mechanisms import GeometricFolded, LaplaceBoundedDomain
from dpcheck.audit.attacks import attacks
from dpcheck.audit.core.spec import WORLD_IN, WORLD_OUT
from dpcheck.audit.worlds import datasets
from dpcheck.targets.base import seed_everything
from dpcheck.targets.diffprivlib_targets import _sorted_rows

original = KMeans._update_centers


def no_skip(self, X, centers, labels, dims, total_iters, random_state):  # noqa: N803 - diffprivlib's signature
    """diffprivlib's update with the `if cluster not in labels: continue` removed (public mechanisms only)."""
    eps0, epsi = self._split_epsilon(dims, total_iters)
    geo = GeometricFolded(epsilon=eps0, sensitivity=1, lower=0.5, upper=float("inf"), random_state=random_state)
    for c in range(self.n_clusters):
        count = geo.randomise(int(np.sum(labels == c)))
        s = np.sum(X[labels == c], axis=0)
        out = np.zeros_like(s, dtype=float)
        for i in range(dims):
            m = LaplaceBoundedDomain(epsilon=epsi, sensitivity=self.bounds[1][i] - self.bounds[0][i],
                                     lower=count * self.bounds[0][i], upper=count * self.bounds[1][i], random_state=random_state)
            out[i] = m.randomise(s[i])
        centers[c, :] = out / count
    return centers


data = datasets.load("worstcase-continuous+replace")


def feats(patched: bool, runs: int = 300) -> dict[int, np.ndarray]:
    KMeans._update_centers = no_skip if patched else original
    f = {}
    for w in (WORLD_OUT, WORLD_IN):
        rows = []
        for i in range(runs):
            seed = 1000 * w + i + 7
            seed_everything(seed)
            m = KMeans(2, epsilon=1.0, bounds=(np.zeros(3), np.ones(3)), random_state=seed).fit(data.world(w))
            rows.append(_sorted_rows(m.cluster_centers_).ravel())
        f[w] = np.array(rows)
    return f


RUNS = 300
RECORD = Path(__file__).resolve().parents[1] / "reports" / "audit_real" / "records" / "kmeans_skip.json"

warnings.simplefilter("ignore")
record = {"dataset": "worstcase-continuous+replace", "runs_per_world": RUNS, "epsilon": 1.0, "delta": 1e-5,
          "split": [0.4, 0.2, 0.4], "attack_seed": 0, "command": "python benchmarks/audit_real_kmeans_skip.py"}
for patched in (False, True):
    out = attacks.run_attack(feats(patched, RUNS), split=(0.4, 0.2, 0.4), seed=0, delta=1e-5, confidence=0.95)
    print("skip removed" if patched else "as installed", "AUC", round(out.auc, 3), out.counts)
    key = "skip_removed" if patched else "installed"
    record[f"auc_{key}"] = round(float(out.auc), 4)
    record[f"counts_{key}"] = {k: int(v) for k, v in dataclasses.asdict(out.counts).items()}
RECORD.parent.mkdir(parents=True, exist_ok=True)
RECORD.write_text(json.dumps(record, indent=2) + "\n")
print(f"wrote {RECORD}")
