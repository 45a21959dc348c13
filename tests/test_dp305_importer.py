"""DP305 across modules: DP-SGD steps in one module, σ calibrated with a Poisson rate by the module importing it."""
from __future__ import annotations

from pathlib import Path

from dpcheck.rule import run_rules
from dpcheck.rules.dp305_subsampling_assumed import SubsamplingAssumed

LOCAL = '''
import torch
from opacus.optimizers import DPOptimizer
def private_local_epochs(net, X, y, cfg, bs):
    opt = DPOptimizer(torch.optim.SGD(net.parameters(), lr=cfg["lr"]), noise_multiplier=cfg["sigma"],
                      max_grad_norm=cfg["clip"], expected_batch_size=bs)
    for e in range(cfg["epochs"]):
        order = torch.randperm(len(X)).numpy()
        for i in range(0, len(order), bs):
            idx = order[i:i + bs]
            opt.zero_grad()
            net.loss(X[idx], y[idx]).backward()
            opt.step()
'''

DRIVER = '''
from pkg.local_dp import private_local_epochs
from pkg.accounting import calibrate_sigma
def run(clients, net, cfg, target):
    bs = cfg["batch_size"]
    for X, y in clients:
        q = min(1.0, bs / max(1, len(X)))
        cfg["sigma"] = calibrate_sigma(target, q, cfg["steps"])
        private_local_epochs(net, X, y, cfg, bs)
'''


def _scan(tmp_path: Path, driver: str) -> list:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "local_dp.py").write_text(LOCAL)
    (pkg / "federated.py").write_text(driver)
    return run_rules(LOCAL, [SubsamplingAssumed], path=str(pkg / "local_dp.py"))


def test_importer_poisson_rate_against_fixed_batches(tmp_path: Path) -> None:
    found = _scan(tmp_path, DRIVER)
    assert [f.line for f in found] == [10]


def test_importer_full_batch_rate_is_quiet(tmp_path: Path) -> None:
    assert not _scan(tmp_path, DRIVER.replace("min(1.0, bs / max(1, len(X)))", "1.0"))


def test_importer_with_poisson_loader_is_quiet(tmp_path: Path) -> None:
    assert not _scan(tmp_path, DRIVER + "\nfrom opacus.data_loader import DPDataLoader\n")


def test_no_importer_is_quiet(tmp_path: Path) -> None:
    assert not _scan(tmp_path, DRIVER.replace("from pkg.local_dp import private_local_epochs\n", ""))
