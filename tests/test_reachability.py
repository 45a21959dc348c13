"""dpcheck.scan.reachability: release claims in code nothing in the scanned project reaches."""
from __future__ import annotations

import textwrap
from pathlib import Path

from dpcheck.scan import reachability


def _project(tmp_path: Path, files: dict[str, str]) -> list[str]:
    out = []
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
        out.append(str(p))
    reachability._CACHE.clear()
    return out


HELPERS = """
import numpy as np

def scale(x):
    return (x - x.min()) / (x.max() - x.min())

def old_scale(x):
    return (x - x.min()) / (x.max() - x.min())

def _private_helper(x):
    return x.max()
"""

SCRIPT = """
from helpers import scale
import numpy as np

if __name__ == "__main__":
    x = np.loadtxt("data.csv")
    print(scale(x) + np.random.laplace(0, 1.0))
"""


def test_helper_named_nowhere_is_unreachable(tmp_path: Path) -> None:
    files = _project(tmp_path, {"helpers.py": HELPERS, "main.py": SCRIPT})
    spans = reachability.unreachable_spans(files[0], files)
    starts = sorted(a for a, _ in spans)
    # old_scale and _private_helper are named nowhere; scale is imported and called by the script
    assert starts == [7, 10]


def test_mention_in_comment_or_string_keeps_it(tmp_path: Path) -> None:
    script = SCRIPT + "    # old_scale(x) was the first version\n"
    files = _project(tmp_path, {"helpers.py": HELPERS, "main.py": script})
    starts = sorted(a for a, _ in reachability.unreachable_spans(files[0], files))
    assert starts == [10]


def test_script_functions_stay(tmp_path: Path) -> None:
    # a never-called function of a script (not an imported helper module) may be a latent helper run from a
    # notebook: it stays
    script = SCRIPT + "\ndef unused(x):\n    return x.max()\n"
    files = _project(tmp_path, {"helpers.py": HELPERS, "main.py": script})
    assert reachability.unreachable_spans(files[1], files) == []


def test_installable_library_is_api(tmp_path: Path) -> None:
    files = _project(tmp_path, {"helpers.py": HELPERS, "main.py": SCRIPT, "setup.py": "from setuptools import setup\n"})
    starts = sorted(a for a, _ in reachability.unreachable_spans(files[0], files))
    assert starts == [10]  # only the private helper


def test_private_method_never_read(tmp_path: Path) -> None:
    model = """
    class Model:
        def fit(self, x):
            return self._bounds(x)

        def _bounds(self, x):
            return x.min(), x.max()

        def _unused(self, x):
            return x.max()
    """
    script = "from model import Model\nModel().fit([1, 2])\n"
    files = _project(tmp_path, {"model.py": model, "run.py": script})
    starts = sorted(a for a, _ in reachability.unreachable_spans(files[0], files))
    assert starts == [9]


def test_one_file_is_not_a_project(tmp_path: Path) -> None:
    files = _project(tmp_path, {"helpers.py": HELPERS})
    assert reachability.unreachable_spans(files[0], files) == []


def test_unparsable_file_words_are_uses(tmp_path: Path) -> None:
    # a Python 2 file ``ast`` cannot read: any word of it may be a call
    files = _project(tmp_path, {"helpers.py": HELPERS, "main.py": SCRIPT, "py2.py": "print old_scale(x)\n"})
    starts = sorted(a for a, _ in reachability.unreachable_spans(files[0], files))
    assert starts == [10]


MODEL = """
import numpy as np
from sklearn import naive_bayes as sk_nb


class GaussianNB(sk_nb.GaussianNB):
    def _partial_fit(self, X, y):
        classes = np.unique(y)
        return classes
"""

USER = """
from model import GaussianNB

if __name__ == "__main__":
    GaussianNB().fit([[0.0]], [1])
"""


def test_private_hook_of_a_dotted_external_base_stays(tmp_path: Path) -> None:
    # sklearn's fit calls _partial_fit: a base written `module.Class` is outside the project even when the
    # subclass carries the same name
    files = _project(tmp_path, {"model.py": MODEL, "main.py": USER})
    assert reachability.unreachable_spans(files[0], files) == []


def test_installed_package_public_helpers_stay(tmp_path: Path) -> None:
    # a package in site-packages: its *.dist-info sits beside the package folder, not inside it
    (tmp_path / "lib-1.0.dist-info").mkdir()
    files = _project(tmp_path, {"lib/helpers.py": HELPERS, "lib/main.py": SCRIPT.replace("from helpers", "from lib.helpers")})
    assert reachability.unreachable_spans(files[0], files) == []  # old_scale is public API of an installed package


def test_installed_package_public_methods_stay(tmp_path: Path) -> None:
    # an installable project: a public class's public method is API even when nothing in the tree calls it,
    # and so are the private helpers it reads
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'lib'\n")
    model = "class Model:\n    def fit(self, x):\n        return self._span(x)\n\n    def _span(self, x):\n        return x.max()\n"
    files = _project(tmp_path, {"lib/model.py": model, "lib/util.py": "def f():\n    return 1\n"})
    assert reachability.unreachable_spans(files[0], files) == []


#: (dp202fp45) a script's plotting helper whose only call the author commented out
_SWITCHED_OFF = """
import numpy as np

def show_batch(images, nrow=8):
    images = (images - images.min()) / (images.max() - images.min())
    return images[:nrow]

x = np.loadtxt("data.csv")
print(x.sum() + np.random.laplace(0, 1.0))
{tail}
"""


def test_script_function_whose_only_call_is_commented_out(tmp_path: Path) -> None:
    script = _SWITCHED_OFF.format(tail="# show_batch(x)\n")
    files = _project(tmp_path, {"helpers.py": HELPERS, "main.py": script})
    assert reachability.unreachable_spans(files[1], files) == [(4, 6)]


def test_commented_out_method_call(tmp_path: Path) -> None:
    model = """
    import numpy as np
    class Model:
        def fit(self, x):
            # q = self.rescale_inverse(x)
            return x.sum()

        def rescale_inverse(self, q):
            return q - q.min()
    """
    script = "from model import Model\nModel().fit([1, 2])\n"
    files = _project(tmp_path, {"model.py": model, "run.py": script})
    assert sorted(a for a, _ in reachability.unreachable_spans(files[0], files)) == [8]


def test_switched_off_twins_stay(tmp_path: Path) -> None:
    # the INVALID twins: a live call, a mention in a string (a registry, getattr), and a comment that names
    # the helper without calling it keep it (a script's unused function may be run from a notebook)
    for tail in ("show_batch(x)\n", "STEPS = ['show_batch']\n# show_batch(x)\n", "# see show_batch for the plot\n"):
        files = _project(tmp_path, {"helpers.py": HELPERS, "main.py": _SWITCHED_OFF.format(tail=tail)})
        assert reachability.unreachable_spans(files[1], files) == [], tail


NOISE = """
import numpy as np

def classic_gaussian(x, sens, eps, delta):
    sigma = sens * np.sqrt(2 * np.log(1.25 / delta)) / eps
    return x + np.random.normal(0, sigma)

def fixed_gaussian(x, sigma):
    return x + np.random.normal(0, sigma)
"""

MOD = """
from noise import classic_gaussian, fixed_gaussian

def release(x):
    return fixed_gaussian(x, 1.0)
"""

RUN = """
from mod import release

if __name__ == "__main__":
    print(release(3.0))
"""


def test_function_imported_but_never_read_is_dead(tmp_path: Path) -> None:
    files = _project(tmp_path, {"noise.py": NOISE, "mod.py": MOD, "run.py": RUN})
    spans = reachability.unreachable_spans(files[0], files)
    assert any(a <= 5 <= b for a, b in spans)  # classic_gaussian: only an import line names it
    assert not any(a <= 9 <= b for a, b in spans)  # fixed_gaussian is called


def test_function_reexported_by_package_init_stays(tmp_path: Path) -> None:
    files = _project(tmp_path, {"pkg/noise.py": NOISE, "pkg/__init__.py": "from .noise import classic_gaussian\n",
                                "pkg/mod.py": MOD.replace("from noise", "from .noise"),
                                "run.py": "from pkg.mod import release\n\nif __name__ == '__main__':\n    release(1.0)\n"})
    spans = reachability.unreachable_spans(files[0], files)
    assert not any(a <= 5 <= b for a, b in spans)


ACC = """
import numpy as np

class Trainer:
    def training_step(self, batch):
        return batch

    @staticmethod
    def rdp_gaussian(q, sigma, steps, orders):
        return np.array([q * q * a / (2 * sigma ** 2) for a in orders]) * steps
"""


def test_static_method_named_nowhere_is_dead_but_hooks_stay(tmp_path: Path) -> None:
    files = _project(tmp_path, {"acc.py": ACC, "run.py": "from acc import Trainer\n\nif __name__ == '__main__':\n    Trainer()\n"})
    spans = reachability.unreachable_spans(files[0], files)
    assert any(a <= 10 <= b for a, b in spans)
    assert not any(a <= 6 <= b for a, b in spans)  # a framework may call an instance hook


#: (dead46) a homework script whose entry point runs some steps of the ``part_*`` family and not ``part_a``
_STEPS = """
import numpy as np

def part_a(x, epsilon):
    return np.percentile(x, 95) + np.random.laplace(0, 1 / epsilon)

def part_b(x, epsilon):
    return x.mean() + np.random.laplace(0, 1 / (epsilon * len(x)))

def part_c_report():
    print(part_b(np.loadtxt("x.csv"), 1.0))

def plot_curve(x):
    return x

def main():
    part_c_report()

if __name__ == "__main__":
    main()
"""


def test_skipped_step_of_a_script_is_dead(tmp_path: Path) -> None:
    files = _project(tmp_path, {"helpers.py": HELPERS, "problem.py": _STEPS})
    # part_a is named nowhere while its siblings run; plot_curve (no family) stays a latent helper
    assert reachability.unreachable_spans(files[1], files) == [(4, 5)]


def test_step_named_in_a_string_or_without_main_stays(tmp_path: Path) -> None:
    files = _project(tmp_path, {"helpers.py": HELPERS, "problem.py": _STEPS + 'STEPS = ["part_a"]\n'})
    assert reachability.unreachable_spans(files[1], files) == []
    no_main = _STEPS.replace('if __name__ == "__main__":\n    main()\n', "main()\n")
    files = _project(tmp_path, {"helpers.py": HELPERS, "problem.py": no_main})
    assert reachability.unreachable_spans(files[1], files) == []


def test_imported_module_with_a_self_test_is_a_helper_module(tmp_path: Path) -> None:
    # (fp47) a module the script imports, whose only work on its own is a ``__main__`` self-test: its function
    # named nowhere is called by neither
    helpers = HELPERS + "\nif __name__ == '__main__':\n    print(scale(np.arange(3.0)))\n"
    files = _project(tmp_path, {"helpers.py": helpers, "main.py": SCRIPT})
    assert sorted(a for a, _ in reachability.unreachable_spans(files[0], files)) == [7, 10]


MECH = """
import math
import numpy as np

class Laplace:
    def noise(self, eps):
        return np.random.laplace(0, 1 / eps)

class Gaussian:
    def sigma(self, eps, delta):
        return math.sqrt(2 * math.log(1.25 / delta)) / eps

    def noise(self, eps, delta):
        return np.random.normal(0, self.sigma(eps, delta))
"""

MECH_MAIN = """
from mech import Laplace

if __name__ == "__main__":
    print(Laplace().noise(1.0))
"""


def test_strict_rules_drop_a_class_nothing_names(tmp_path: Path) -> None:
    # (fp47) DP503 on a Gaussian class no code instantiates: dropped; a rule outside STRICT_RULES keeps it
    files = _project(tmp_path, {"mech.py": MECH, "main.py": MECH_MAIN})

    class F:
        def __init__(self, rule: str, line: int) -> None:
            self.rule, self.line, self.path = rule, line, files[0]

    kept = reachability.drop_unreachable([F("DP503", 11), F("DP202", 11)], files)
    assert [f.rule for f in kept] == ["DP202"]


#: (T2 h48) the scanned folder is itself the package the API imports from (``app``)
SERVICE = """
import numpy as np

class Privacy:
    def __init__(self, epsilon):
        self.epsilon = epsilon

    def noisy_column(self, values):
        lo, hi = values.min(), values.max()
        return values + np.random.laplace(0, (hi - lo) / self.epsilon, len(values))

    def statistics_nobody_calls(self, values):
        lo, hi = values.min(), values.max()
        return values.mean() + np.random.laplace(0, (hi - lo) / self.epsilon)
"""

API = """
from app.services.privacy import Privacy

def handle(values, epsilon):
    return Privacy(epsilon).noisy_column(values)
"""


def test_unnamed_method_of_helper_module_in_scanned_package(tmp_path: Path) -> None:
    # a public method named nowhere in the project: DP115/DP204 findings in it go, those of the called one stay;
    # rules outside UNNAMED_METHOD_RULES keep both
    files = _project(tmp_path, {"app/services/privacy.py": SERVICE, "app/api/routes.py": API})

    class F:
        def __init__(self, rule: str, line: int) -> None:
            self.rule, self.line, self.path = rule, line, files[0]

    kept = reachability.drop_unreachable([F("DP204", 9), F("DP204", 13), F("DP115", 13), F("DP680", 13)], files)
    assert [(f.rule, f.line) for f in kept] == [("DP204", 9), ("DP680", 13)]


def test_unnamed_method_of_reexported_or_unused_class_stays(tmp_path: Path) -> None:
    # a class a package __init__ re-exports is API; a class no scanned module uses may have its callers outside
    # the tree (a partial checkout): DP204 findings in its methods named nowhere stay
    files = _project(tmp_path, {"app/services/privacy.py": SERVICE, "app/api/routes.py": API,
                                "app/services/__init__.py": "from .privacy import Privacy\n"})

    class F:
        def __init__(self, rule: str, line: int) -> None:
            self.rule, self.line, self.path = rule, line, files[0]

    assert [f.line for f in reachability.drop_unreachable([F("DP204", 13)], files)] == [13]
    alone = _project(tmp_path / "alone", {"app/services/privacy.py": SERVICE, "app/api/routes.py": "x = 1\n"})

    class G(F):
        def __init__(self, rule: str, line: int) -> None:
            self.rule, self.line, self.path = rule, line, alone[0]

    assert [f.line for f in reachability.drop_unreachable([G("DP204", 13)], alone)] == [13]
