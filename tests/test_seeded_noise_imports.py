"""DP507 across modules: a run's entry point seeds a global generator with a constant, and a mechanism of a
project module it imports (directly or through the project's own imports) draws its noise from that generator."""
from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.rule import run_rules
from dpcheck.rules import all_rules

_OUE = """
import numpy as np

class OUE:
    def __init__(self, epsilon, d):
        self.d = d
        self.p = 0.5
        self.q = 1 / (np.exp(epsilon) + 1)

    def aggregate(self, ones, zeros):
        est = np.random.binomial(ones, self.p)
        est += np.random.binomial(zeros, self.q)
        return est
"""
_COIN = """
import random

class Client:
    def __init__(self, epsilon, d):
        self.p = 1 / (1 + 2.718 ** -epsilon)

    def perturb(self, bit):
        return bit if random.random() < self.p else 1 - bit
"""
_LAPLACE = """
import numpy as np

def laplace_mechanism(value, sensitivity, eps):
    return value + np.random.laplace(0, sensitivity / eps)
"""
#: correct twins of the mechanism modules: their own fresh generator, or a plain ML augmentation (no ε)
_OUE_OWN_RNG = _OUE.replace("np.random.binomial", "self.rng.binomial").replace(
    "self.d = d", "self.d = d\n        self.rng = np.random.default_rng()")
_AUGMENT = """
import numpy as np

def add_noise(images, sigma):
    return images + np.random.normal(0, sigma, images.shape)
"""

#: a mechanism that draws its noise only when the constructor's DP switch (default off) is on
_SWITCHED = """
import numpy as np

class Release:
    def __init__(self, epsilon, private=False):
        self.private = private
        self.scale = 1.0 / epsilon

    def publish(self, values):
        out = np.asarray(values, dtype=float)
        if self.private:
            out = out + np.random.laplace(0, self.scale, out.shape)
        return out
"""

#: name -> ({file: source}, the entry file, the lines DP507 must report there)
CASES = {
    # a script seeding NumPy at import, the randomiser in a sibling module
    "module-level-seed-sibling-mechanism": ({"ldp.py": _OUE, "main.py": """
import numpy as np
from ldp import OUE
np.random.seed(2023)

def run(data, epsilon):
    return OUE(epsilon, 10).aggregate(data.sum(0), (1 - data).sum(0))
"""}, "main.py", (4,)),
    # only the first module-level seed is the finding (a reseed before the evaluation sets nothing new)
    "reseed-before-evaluation": ({"ldp.py": _OUE, "main.py": """
import numpy as np
import ldp
np.random.seed(7)
out = ldp.OUE(1.0, 4).aggregate(3, 5)
np.random.seed(7)
score = np.random.rand()
"""}, "main.py", (4,)),
    # the driver function seeds with a name bound to a constant; the mechanism is two imports away
    "driver-seed-mechanism-two-levels": ({"oracle.py": _OUE, "grid.py": """
import oracle as FO

class Grid:
    def __init__(self, args):
        self.fo = FO.OUE(args.epsilon, 16)
""", "example.py": """
import random
import numpy as np
import grid

def sys_run():
    seed = 1
    random.seed(seed)
    np.random.seed(seed=seed)
    return grid.Grid(None)

if __name__ == '__main__':
    sys_run()
"""}, "example.py", (9,)),
    # Python's `random` seeded at import; the client flips coins with random.random() < p
    "random-module-coin-flip": ({"client.py": _COIN, "run.py": """
import random
from client import Client
random.seed(2022)
reports = [Client(1.0, 2).perturb(b) for b in [0, 1, 1]]
"""}, "run.py", (4,)),
    # a package: relative import of the mechanism, seed in main()
    "package-relative-import-main": ({"pkg/__init__.py": "", "pkg/mech.py": _LAPLACE, "pkg/experiment.py": """
import numpy as np
from .mech import laplace_mechanism

def main():
    np.random.seed(0)
    return laplace_mechanism(10.0, 1.0, 0.5)
"""}, "pkg/experiment.py", (6,)),
    # torch seeded with a literal in main(); the project's DP-SGD step scales a standard draw by σ·C
    "torch-seed-scaled-standard-draw": ({"dpsgd.py": """
import torch

class DPSGD:
    def __init__(self, params, epsilon, sigma, clip):
        self.params, self.sigma, self.clip = params, sigma, clip

    def step(self, grads):
        for p, g in zip(self.params, grads):
            p.data -= 0.1 * (g + torch.randn_like(g) * self.sigma * self.clip)
""", "train.py": """
import torch
from dpsgd import DPSGD

def main():
    torch.manual_seed(1)
    opt = DPSGD([], 1.0, 1.1, 1.0)
    opt.step([])

if __name__ == "__main__":
    main()
"""}, "train.py", (6,)),
    # (fix48-S6) a seeding probe function with plain SGD, called by the DP training function: its seed reaches
    # the imported DPSGD's draw
    "sibling-seed-reaches-dpsgd": ({"dpsgd.py": """
import torch

class DPSGD:
    def __init__(self, params, epsilon, sigma, clip):
        self.params, self.sigma, self.clip = params, sigma, clip

    def step(self, grads):
        for p, g in zip(self.params, grads):
            p.data -= 0.1 * (g + torch.randn_like(g) * self.sigma * self.clip)
""", "exp.py": """
import torch
from dpsgd import DPSGD

def fit_probe():
    torch.manual_seed(7)
    return torch.optim.SGD([], lr=0.1)

def train_private():
    fit_probe()
    opt = DPSGD([], 1.0, 1.1, 1.0)
    opt.step([])

train_private()
"""}, "exp.py", (6,)),
    # -- valid twins ----------------------------------------------------------------------------------
    # (fix48-S6) twin: the probe is a sibling of the DP run (neither calls the other): its seed fixes no DP noise
    "sibling-seed-not-dpsgd": ({"dpsgd.py": """
import torch

class DPSGD:
    def __init__(self, params, epsilon, sigma, clip):
        self.params, self.sigma, self.clip = params, sigma, clip

    def step(self, grads):
        for p, g in zip(self.params, grads):
            p.data -= 0.1 * (g + torch.randn_like(g) * self.sigma * self.clip)
""", "exp.py": """
import torch
from dpsgd import DPSGD

def fit_probe():
    torch.manual_seed(7)
    return torch.optim.SGD([], lr=0.1)

def train_private():
    opt = DPSGD([], 1.0, 1.1, 1.0)
    opt.step([])

train_private()
"""}, "exp.py", ()),
    # a VAE's sampling scales a standard draw by the decoder's learned std, not a privacy scale
    "vae-sampling-not-mechanism": ({"vae.py": """
import torch

class VAE:
    def __init__(self, decoder, noiser):
        self.decoder, self.noiser = decoder, noiser

    def generate(self, z):
        x = self.decoder(z)
        return x + torch.exp(self.noiser(x)) * torch.randn_like(x)

    def train(self, data, target_eps, delta):
        return self
""", "run.py": """
import torch
from vae import VAE
torch.manual_seed(0)
samples = VAE(None, None).generate(torch.zeros(3))
"""}, "run.py", ()),
    # the seed comes from the OS entropy pool
    "entropy-seed": ({"ldp.py": _OUE, "main.py": """
import os
import numpy as np
from ldp import OUE
np.random.seed(int.from_bytes(os.urandom(4), "little"))
est = OUE(1.0, 10).aggregate(3, 4)
"""}, "main.py", ()),
    # the mechanism draws from its own unseeded generator, not the global one
    "mechanism-owns-generator": ({"ldp.py": _OUE_OWN_RNG, "main.py": """
import numpy as np
from ldp import OUE
np.random.seed(2023)
est = OUE(1.0, 10).aggregate(3, 4)
"""}, "main.py", ()),
    # an ML training script: the imported noise is a data augmentation with no privacy parameter
    "augmentation-not-mechanism": ({"augment.py": _AUGMENT, "train.py": """
import numpy as np
import torch
from augment import add_noise

def main():
    np.random.seed(0)
    torch.manual_seed(0)
    return add_noise(np.zeros((2, 2)), 0.1)
"""}, "train.py", ()),
    # the seed only fixes torch, the imported mechanism draws from NumPy
    "other-family": ({"mech.py": _LAPLACE, "main.py": """
import torch
from mech import laplace_mechanism

def main():
    torch.manual_seed(0)
    return laplace_mechanism(1.0, 1.0, 1.0)
"""}, "main.py", ()),
    # (fix46b-R1) the imported mechanism draws only under the class's DP switch, which the script turns on
    "dp-switch-turned-on": ({"perturb.py": _SWITCHED, "run_dp.py": """
import numpy as np
from perturb import Release
np.random.seed(42)
rel = Release(epsilon=1.0, private=True)
print(rel.publish([1, 2, 3]))
"""}, "run_dp.py", (4,)),
    # its twin: the script builds the class with the switch at its default (off): no privacy noise is drawn
    "dp-switch-left-off": ({"perturb.py": _SWITCHED, "run_plain.py": """
import numpy as np
from perturb import Release
np.random.seed(42)
rel = Release(epsilon=1.0)
print(rel.publish([1, 2, 3]))
"""}, "run_plain.py", ()),
    # a seed inside a helper that is no entry point (a data simulator)
    "helper-not-entry-point": ({"mech.py": _LAPLACE, "sim.py": """
import numpy as np
from mech import laplace_mechanism

def make_data(n):
    np.random.seed(3)
    return np.random.rand(n)
"""}, "sim.py", ()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_imported_mechanism_case(tmp_path: Path, name: str) -> None:
    files, entry, lines = CASES[name]
    for rel, text in files.items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    path = tmp_path / entry
    rules = [r for r in all_rules() if r.id == "DP507"]
    found = sorted({f.line for f in run_rules(path.read_text(), rules, str(path)) if f.rule == "DP507"})
    assert found == sorted(lines)


def test_imported_seeding_helper(tmp_path: Path) -> None:
    """``set_seed(2022)`` from the project's utils at import, the LDP client in another module: reported; the
    same helper given fresh entropy is not."""
    (tmp_path / "utils.py").write_text("import random\nimport numpy as np\n\ndef set_seed(seed):\n"
                                       "    random.seed(seed)\n    np.random.seed(seed)\n")
    (tmp_path / "client.py").write_text(_COIN)
    rules = [r for r in all_rules() if r.id == "DP507"]
    for body, want in (("set_seed(2022)\n", [4]), ("set_seed(int.from_bytes(os.urandom(4), 'big'))\n", [])):
        run = tmp_path / "run.py"
        run.write_text("import os\nfrom utils import set_seed\nfrom client import Client\n" + body
                       + "reports = [Client(1.0, 2).perturb(b) for b in [0, 1]]\n")
        assert sorted({f.line for f in run_rules(run.read_text(), rules, str(run)) if f.rule == "DP507"}) == want
