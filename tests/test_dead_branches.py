"""dpcheck.dead_branches through the project's reachability: branches no call or flag selects."""
from __future__ import annotations

import textwrap
from pathlib import Path

from dpcheck.scan import reachability

NOISE = """
import numpy as np

def get_noise(noise_type, size, eps=10, delta=1e-5, sensitivity=2):
    if noise_type == "laplace":
        noise = np.random.laplace(0, sensitivity / eps, size)
    elif noise_type == "gaussian":
        c = np.sqrt(2 * np.log(1.25 / delta))
        noise = np.random.normal(0, c * sensitivity / eps, size)
    else:
        raise NotImplementedError(noise_type)
    return noise

def scale(x, center=False):
    if center:
        x = x - x.mean()
    return x
"""

MAIN = """
from noise import get_noise, scale

if __name__ == "__main__":
    print(scale([1.0]) + get_noise(noise_type="laplace", size=3, eps=1.0))
"""


def _project(tmp_path: Path, files: dict[str, str]) -> list[str]:
    out = []
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
        out.append(str(p))
    reachability._CACHE.clear()
    return out


def _spans(files: list[str]) -> list[tuple[int, int]]:
    proj = reachability.project(files)
    assert proj is not None
    return proj.branch_spans(files[0])


def test_every_call_passes_the_same_literal(tmp_path: Path) -> None:
    # the elif/else after the always-true test (and the elif's own body), and the body of the default-False
    # flag, never run
    assert _spans(_project(tmp_path, {"noise.py": NOISE, "main.py": MAIN})) == [(7, 11), (8, 9), (16, 16)]


def test_a_call_with_a_variable_keeps_the_branch(tmp_path: Path) -> None:
    main = MAIN + "    print(get_noise(noise_type=args.noise, size=3))\n    scale([1.0], center=args.center)\n"
    assert _spans(_project(tmp_path, {"noise.py": NOISE, "main.py": main})) == []


def test_name_used_as_a_value_keeps_the_branch(tmp_path: Path) -> None:
    # handed to someone else (a registry, a callback): that caller may pass anything
    main = MAIN + "    MECHANISMS = {'noise': get_noise, 'scale': scale}\n"
    assert _spans(_project(tmp_path, {"noise.py": NOISE, "main.py": main})) == []


def test_installable_project_is_api(tmp_path: Path) -> None:
    files = _project(tmp_path, {"noise.py": NOISE, "main.py": MAIN, "setup.py": "from setuptools import setup\n"})
    assert _spans(files) == []


def test_vendored_package_build_file_covers_only_its_folder(tmp_path: Path) -> None:
    # DD-SSP: ``private_pgm/setup.py`` makes private_pgm an API, not the experiment scripts beside it
    files = _project(tmp_path, {"noise.py": NOISE, "main.py": MAIN, "vendored/setup.py": "x = 1\n",
                                "vendored/lib.py": "def f(a=None):\n    if a is None:\n        return 1\n"})
    assert _spans(files) == [(7, 11), (8, 9), (16, 16)]


def test_module_flag_set_once(tmp_path: Path) -> None:
    config = "use_lap_noise = True\n"
    code = """
    import numpy as np
    import config

    def release(x, eps, delta):
        if config.use_lap_noise:
            return x + np.random.laplace(0, 1 / eps)
        else:
            return x + np.random.normal(0, np.sqrt(2 * np.log(1.25 / delta)) / eps)
    """
    main = "import config\nfrom code import release\nprint(release(1.0, 1.0, 1e-5))\n"
    files = _project(tmp_path, {"code.py": code, "config.py": config, "main.py": main})
    assert _spans(files) == [(9, 9)]
    # the command line may set it: both branches live
    main2 = main + "config.use_lap_noise = args.laplace\n"
    files = _project(tmp_path, {"code.py": code, "config.py": config, "main.py": main2})
    assert _spans(files) == []


def test_method_of_a_framework_class_stays(tmp_path: Path) -> None:
    # torch calls forward itself: the project's own calls do not fix its arguments
    model = """
    import torch

    class Net(torch.nn.Module):
        def forward(self, x, noisy=False):
            if noisy:
                x = x + torch.randn_like(x) * x.std()
            return x
    """
    main = "from model import Net\nNet().forward(1.0, noisy=False)\n"
    files = _project(tmp_path, {"model.py": model, "main.py": main})
    assert _spans(files) == []


def test_findings_in_dead_branches_are_dropped(tmp_path: Path) -> None:
    from types import SimpleNamespace

    files = _project(tmp_path, {"noise.py": NOISE, "main.py": MAIN})
    findings = [SimpleNamespace(rule="DP503", path=files[0], line=8), SimpleNamespace(rule="DP503", path=files[0], line=6),
                SimpleNamespace(rule="DP005", path=files[0], line=8)]
    kept = reachability.drop_unreachable(findings, files)
    assert [(f.rule, f.line) for f in kept] == [("DP503", 6), ("DP005", 8)]


def test_flag_owner_updated_wholesale_stays(tmp_path: Path) -> None:
    # an easydict config overwritten from the command line: any of its flags may change
    config = "from easydict import EasyDict as edict\nconfig = edict()\nconfig.use_lap_noise = True\n"
    code = "from config import config\ndef f(x):\n    if config.use_lap_noise:\n        return 1\n    else:\n        return 2\n"
    main = "from config import config\nfrom code import f\nconfig.update(vars(args))\nf(1)\n"
    files = _project(tmp_path, {"code.py": code, "config.py": config, "main.py": main})
    assert _spans(files) == []
    files = _project(tmp_path, {"code.py": code, "config.py": config, "main.py": "from code import f\nf(1)\n"})
    assert _spans(files) == [(6, 6)]  # set once, never changed: the else never runs
    main = "from config import config\nfrom code import f\nconfig['use_lap_noise'] = False\nf(1)\n"
    files = _project(tmp_path, {"code.py": code, "config.py": config, "main.py": main})
    assert _spans(files) == []


RR = """
import numpy as np

class RR:
    def _respond(self, data, categories=None):
        if categories is None:
            categories = np.unique(data)
        return np.random.choice(categories, size=len(data))

    def perturb(self, ratings, lo, hi):
        categories = np.arange(lo, hi + 1, 0.5)
        return self._respond(ratings, categories)
"""

RR_MAIN = """
from rr import RR

if __name__ == "__main__":
    print(RR().perturb([1.0, 2.0], 1, 5))
"""


def test_fill_in_default_never_runs_when_every_caller_passes_a_grid(tmp_path: Path) -> None:
    # (fp47) ``if categories is None: categories = np.unique(data)``: the store inside the branch comes after the
    # test, and the caller's ``categories`` is a grid it built (never None), so the fallback never runs
    assert _spans(_project(tmp_path, {"rr.py": RR, "main.py": RR_MAIN})) == [(7, 7)]


def test_fill_in_default_runs_when_a_caller_may_pass_none(tmp_path: Path) -> None:
    rr = RR.replace("categories = np.arange(lo, hi + 1, 0.5)", "categories = self.grid if lo else None")
    assert _spans(_project(tmp_path, {"rr.py": rr, "main.py": RR_MAIN})) == []
