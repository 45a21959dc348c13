"""DP826: a library component seeds the global generator that the project's DP mechanism draws its noise from."""
from __future__ import annotations

import ast
import os
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, words
from dpcheck.rule import Rule

#: global seeding calls and the generator family they fix
_SEEDERS = {"np.random.seed": "numpy", "numpy.random.seed": "numpy", "random.seed": "random"}
#: names of a seed attribute or parameter
_SEED_WORDS = frozenset({"seed", "random_state", "random_seed", "rng_seed", "seed_value", "randomstate"})
_SKIP_DIRS = frozenset({".git", "venv", ".venv", "env", "site-packages", "node_modules", "build", "dist",
                        "__pycache__", "tests", "test", "docs", "examples", "notebooks"})
_MAX_FILES = 400
#: words of a component of a synthetic-data or privacy pipeline (whose seed reaches the mechanism's draws)
_COMPONENT_WORDS = frozenset({"generator", "generators", "synthesizer", "synthesiser", "synthetic", "synth",
                              "copula", "sampler", "forge", "privacy", "private", "dp", "differential", "mechanism",
                              "mechanisms", "anonymizer", "pipeline"})
#: words of an evaluation, attack or test component (its seed fixes no released noise)
_QUIET_WORDS = frozenset({"test", "tests", "eval", "evaluate", "evaluation", "evaluator", "attack", "attacks",
                          "mia", "membership", "shadow", "plot", "demo", "benchmark", "metric", "metrics", "audit",
                          "auditor", "baseline", "worker", "dataset", "loader", "dataloader", "loading"})
_DP_TEXT = re.compile(r"epsilon|differential|privacy|laplace", re.I)
_CACHE: dict[str, tuple | None] = {}


def _project_root(path: str) -> str | None:
    here = os.path.dirname(os.path.abspath(path))
    if not os.path.isfile(os.path.join(here, "__init__.py")):
        return os.path.dirname(here)
    while os.path.isfile(os.path.join(os.path.dirname(here), "__init__.py")):
        here = os.path.dirname(here)
    return os.path.dirname(here)


def _project_files(root: str) -> list[str] | None:
    out: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
        for f in files:
            if f.endswith(".py") and not f.startswith("test_"):
                out.append(os.path.join(folder, f))
                if len(out) > _MAX_FILES:
                    return None
    return out


def _scan_tree(tree: ast.AST, seed_attrs: set[str], classes: set[str]) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            classes.add(node.name)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute) \
                and ast.unparse(node.func) in _SEEDERS and isinstance(node.args[0], ast.Attribute):
            seed_attrs.add(f"{_SEEDERS[ast.unparse(node.func)]}:{node.args[0].attr}")


def _project(path: str) -> tuple[list[tuple[str, int, str]], set[str], set[str]] | None:
    """(global-generator DP noise draws (file, line, family), attributes a global seed is read from
    (``np.random.seed(cfg.random_seed)`` -> ``random_seed``), classes defined) of the project holding ``path``."""
    from dpcheck.analysis.global_rng import _summarize

    root = _project_root(path)
    if root is None:
        return None
    if root in _CACHE:
        return _CACHE[root]  # type: ignore[return-value]
    files = _project_files(root)
    if files is None:
        _CACHE[root] = None
        return None
    draws: list[tuple[str, int, str]] = []
    seed_attrs: set[str] = set()
    classes: set[str] = set()
    for f in files:
        try:
            with open(f, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            continue
        if "seed" in text or "class " in text:
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError):
                continue
            _scan_tree(tree, seed_attrs, classes)
        if _DP_TEXT.search(text):
            draws += [(f, line, family) for _, line, family in _summarize(f)[0] if family in ("numpy", "random")]
    found = (draws, seed_attrs, classes)
    _CACHE[root] = found
    return found


class LibrarySeedFixesDPNoise(Rule):
    id = "DP826"
    name = "library-seed-fixes-dp-noise"
    category = "general"
    severity = "error"
    summary = ("a component of the library seeds NumPy's (or Python's) global generator with the user's or a "
               "hard-coded seed, and the project's DP mechanism draws its noise from that same global generator")
    rationale = (
        "Synthetic-data and analytics libraries often take a `random_state`/`random_seed` for reproducible "
        "sampling and apply it with `np.random.seed(self.random_state)` inside the generator's fit or sample "
        "step, or hard-code `random_seed=42` in a pipeline's config. When the privacy mechanism of the same "
        "project draws its Laplace/Gaussian noise from the global generator (`np.random.laplace`), that seed "
        "fixes the DP noise too: anyone who knows the seed (it is documented, a default, or a literal in the "
        "code) regenerates the noise and subtracts it. Reported: (1) `np.random.seed(x)`/`random.seed(x)` in "
        "a method of a class, with `x` a seed attribute or parameter (not fresh entropy), in a project whose "
        "DP code draws noise from that global generator; (2) a literal seed keyword (`random_seed=42`) passed "
        "to a project class whose seed field the project feeds to `np.random.seed`. Fix: draw privacy noise "
        "from its own unseeded generator (`np.random.default_rng()` or `secrets`-seeded), independent of the "
        "sampling seed."
    )
    TRIGGERS = ("seed",)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a global ``seed`` call or a literal seed keyword."""
        if "seed" in facts.called:
            return True
        for node in facts.nodes(ast.Call):
            for kw in node.keywords:  # type: ignore[attr-defined]
                if kw.arg in _SEED_WORDS and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, int):
                    return True
        return False

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return cls.may_report(facts)

    def _facts(self) -> tuple[list[tuple[str, int, str]], set[str], set[str]] | None:
        """The project's facts (files on disk), or this module's own when it stands alone."""
        key = "_dp826_facts"
        if key in self.__dict__:
            return self.__dict__[key]
        from dpcheck.analysis.global_rng import _summarize_tree

        found = _project(self.ctx.path) if os.path.isfile(self.ctx.path or "") else None
        if found is None:
            try:
                tree = ast.parse(self.ctx.source)
            except (SyntaxError, ValueError):
                tree = None
            if tree is not None:
                seed_attrs: set[str] = set()
                classes: set[str] = set()
                _scan_tree(tree, seed_attrs, classes)
                draws = [(self.ctx.path or "<module>", line, fam) for _, line, fam in _summarize_tree(tree)[0]
                         if fam in ("numpy", "random")] if _DP_TEXT.search(self.ctx.source) else []
                found = (draws, seed_attrs, classes)
        self.__dict__[key] = found
        return found

    def _quiet_file(self) -> bool:
        path = (self.ctx.path or "").replace("\\", "/").lower()
        stem = path.rsplit("/", 1)[-1]
        parts = set(path.split("/"))
        return stem.startswith(("test_", "conftest")) \
            or stem.endswith("_test.py") or bool(parts & {"tests", "test", "examples", "example", "scripts",
                                                          "notebooks", "benchmarks", "demo", "docs"})

    def visit_Call(self, node: cst.Call) -> None:
        func = dotted(node.func) or ""
        if func in _SEEDERS:
            self._global_seed(node, _SEEDERS[func])
            return
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in _SEED_WORDS and number(arg.value) is not None:
                self._literal_seed(node, arg)
                return

    def _global_seed(self, node: cst.Call, family: str) -> None:
        fa = self.ctx.analysis
        if not node.args or self._quiet_file():
            return
        seed = node.args[0].value
        fn = fa.enclosing_function(node)
        cls = fa.enclosing_class(node)
        if fn is None or cls is None:
            return
        if isinstance(seed, cst.Attribute):
            name = seed.attr.value
        elif isinstance(seed, cst.Name):
            name = seed.value
        else:
            return
        if not (words(name) & {"seed", "state"} or name.lower() in _SEED_WORDS):
            return
        stem = os.path.basename(self.ctx.path or "").rsplit(".", 1)[0]
        if (words(fn.name.value) | words(cls.name.value) | words(stem)) & _QUIET_WORDS:
            return
        if not (words(cls.name.value) | words(stem)) & _COMPONENT_WORDS:
            return  # a model or data module of a large library: its seed is not shown to reach the DP noise
        if os.path.isfile(self.ctx.path or "") and not os.path.isfile(
                os.path.join(os.path.dirname(os.path.abspath(self.ctx.path)), "__init__.py")):
            return  # a script's seed is DP507's: only a library package's component is reported here
        project = self._facts()
        if project is None:
            return
        draws = [d for d in project[0] if d[2] == family]
        if not draws:
            return
        file, line, _ = draws[0]
        self.report(node, f"`{fa.code(node)[:50]}` seeds the global {family} generator with the sampling seed, and "
                          f"the project's DP noise is drawn from that same generator "
                          f"({os.path.basename(file)}:{line}): with a known or documented seed the privacy noise "
                          f"is reproducible and can be subtracted; draw the noise from its own unseeded generator")

    def _literal_seed(self, node: cst.Call, arg: cst.Arg) -> None:
        if self._quiet_file() or not _DP_TEXT.search(self.ctx.source):
            return
        callee = call_name(node) or ""
        project = self._facts()
        if project is None or callee not in project[2]:
            return
        families = {f for f in ("numpy", "random") if f"{f}:{arg.keyword.value}" in project[1]}  # type: ignore[union-attr]
        draws = [d for d in project[0] if d[2] in families]
        if not draws:
            return
        file, line, family = draws[0]
        fa = self.ctx.analysis
        self.report(node, f"`{callee}` gets the literal seed `{fa.code(arg)}`, which the project feeds to the "
                          f"global {family} generator (`np.random.seed(….{arg.keyword.value})`), and the DP noise is "  # type: ignore[union-attr]
                          f"drawn from that generator ({os.path.basename(file)}:{line}): the privacy noise is "
                          f"reproducible from a public seed; draw it from its own unseeded generator")

    # The cases are checked on single files with no project around them; the project analysis needs files on disk.
    VALID = (
        # twin: the sampler uses its own generator object, the global one stays unseeded
        """
import numpy as np
class CopulaSampler:
    def __init__(self, random_state=None):
        self.random_state = random_state
    def sample(self, n):
        rng = np.random.default_rng(self.random_state)
        return rng.multivariate_normal(self.mean, self.cov, size=n)
""",
        # twin: a literal seed for a scikit-learn split
        """
from sklearn.model_selection import train_test_split
def split(df):
    return train_test_split(df, test_size=0.2, random_state=42)
""",
        # a module-level script seed (DP507's domain)
        """
import numpy as np
np.random.seed(0)
""",
        # ordinary ML: a trainer seeds for reproducibility, no DP noise in the project
        """
import numpy as np
class Trainer:
    def __init__(self, seed=0):
        self.seed = seed
    def fit(self, X):
        np.random.seed(self.seed)
        return X.mean()
""",
    )

    INVALID = (
        """
import numpy as np
class CopulaSampler:
    def __init__(self, random_state=None):
        self.random_state = random_state
    def sample(self, n):
        if self.random_state is not None:
            np.random.seed(self.random_state)  # <-
        return np.random.multivariate_normal(self.mean, self.cov, size=n)
class LaplaceMechanism:
    def __init__(self, epsilon, sensitivity=1.0):
        self.epsilon = epsilon
        self.sensitivity = sensitivity
    def add_noise(self, values):
        return values + np.random.laplace(0, self.sensitivity / self.epsilon, values.shape)
""",
        """
import numpy as np
from dataclasses import dataclass
@dataclass
class GenerationConfig:
    total: int
    random_seed: int = None
class Pipeline:
    def base(self, n):
        config = GenerationConfig(total=n, random_seed=42)  # <-
        return self.sampler.draw(config)
    def draw(self, config):
        if config.random_seed is not None:
            np.random.seed(config.random_seed)  # <-
        return np.random.rand(config.total)
def laplace_noise(value, sensitivity, epsilon):
    return value + np.random.laplace(0, sensitivity / epsilon, np.shape(value))
""",
        """
import random
class Synthesizer:
    def fit(self, rows, seed):
        random.seed(seed)  # <-
        self.rows = rows
    def private_count(self, epsilon):
        return len(self.rows) + random.expovariate(epsilon) - random.expovariate(epsilon)
""",
        """
import numpy as np
class Forge:
    def __init__(self, epsilon, random_state=7):
        self.epsilon = epsilon
        np.random.seed(random_state)  # <-
    def release(self, stats, sensitivity):
        return stats + np.random.laplace(0.0, sensitivity / self.epsilon, len(stats))
""",
    )
