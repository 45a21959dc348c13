"""DP518's dead-method exemption reads the project on disk, so the rule's case tuples cannot reach it:
a batch-clipping method of a class whose method name nothing in the project uses is quiet; the same
method called from another module is reported."""
from __future__ import annotations

from pathlib import Path

from dpcheck.rule import run_rules
from dpcheck.rules import all_rules

_UTILS = '''import torch


class Utils:
    def clip_and_noise(self, model, loader, clip, sigma):
        xb, yb = next(iter(loader))
        model.zero_grad()
        torch.nn.functional.cross_entropy(model(xb), yb).backward()
        grads = [p.grad.clone() for p in model.parameters()]
        clipped = [g * min(1.0, clip / (g.norm() + 1e-6)) for g in grads]
        return [g + torch.normal(0, sigma * clip, g.shape) for g in clipped]
'''

_MAIN_UNUSED = '''from utils import Utils

def train(model, loader, epsilon):
    helper = Utils()
    return helper, epsilon
'''

_MAIN_CALLS = '''from utils import Utils

def train(model, loader, epsilon, clip=1.0, sigma=1.1):
    helper = Utils()
    return helper.clip_and_noise(model, loader, clip, sigma), epsilon
'''


def _dp518(tmp_path: Path, main: str) -> list[int]:
    (tmp_path / "utils.py").write_text(_UTILS)
    (tmp_path / "main.py").write_text(main)
    path = tmp_path / "utils.py"
    rules = [r for r in all_rules() if r.id == "DP518"]
    return [f.line for f in run_rules(path.read_text(), rules, str(path)) if f.rule == "DP518"]


def test_uncalled_method_is_quiet(tmp_path: Path) -> None:
    assert _dp518(tmp_path, _MAIN_UNUSED) == []


def test_called_method_is_reported(tmp_path: Path) -> None:
    assert _dp518(tmp_path, _MAIN_CALLS) != []
