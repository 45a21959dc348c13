"""DP507: privacy noise drawn from a random generator with a fixed or derivable seed."""
from __future__ import annotations

import ast
import os
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.simulation import simulated_error_term
from dpcheck.analysis.syntax import all_params, call_name, dotted, last_name, number, undotted, value_refs, walk, words
from dpcheck.rule import Rule

#: constructors of a seeded generator object
_GENERATORS = frozenset({"RandomState", "default_rng", "Generator", "Random", "PRNGKey", "SeedSequence"})
#: global seeding calls (``np.random.seed``, ``torch.manual_seed``, ``random.seed``, ``tf.random.set_seed``)
_GLOBAL_SEEDS = frozenset({"seed", "manual_seed", "set_seed", "manual_seed_all"})
#: methods of a generator that draw privacy noise or a randomised response
_NOISE_METHODS = frozenset({
    "laplace", "normal", "gumbel", "exponential", "standard_normal", "randn", "binomial", "geometric",
    "standard_exponential", "gauss", "normalvariate", "expovariate",
})
#: identifiers a seed derived from public run structure is built from
_DERIVED_WORDS = frozenset({"round", "rnd", "client", "cid", "rank", "epoch", "iteration", "step", "worker",
                            "partition", "party", "user", "id", "idx"})
#: a method returning the run's progress (``self.get_num_updates()``, ``trainer.global_step()``): public
_COUNTER_WORDS = frozenset({"updates", "update", "steps", "step", "epoch", "iteration", "iterations", "round"})
#: a seed named for a public index of the run (``self.client_id``, ``round_idx``, ``rank``)
_PUBLIC_INDEX_WORDS = frozenset({"client", "cid", "round", "rnd", "rank", "epoch", "worker", "party", "user"})
_NOISE_SEED_WORDS = frozenset({"noise", "dp", "privacy", "laplace", "gaussian", "mechanism"})
#: the global generator a seeding call fixes, by receiver, and the draws from it
_GLOBAL_FAMILIES = {"np.random": "numpy", "numpy.random": "numpy", "random": "random", "torch": "torch",
                    "torch.cuda": "torch"}
_GLOBAL_DRAWS = frozenset({
    "laplace", "normal", "gumbel", "exponential", "standard_normal", "randn", "rand", "random", "uniform",
    "binomial", "geometric", "choice", "gauss", "normalvariate", "expovariate", "randint", "random_sample",
    "randn_like", "rand_like", "normal_", "bernoulli", "multinomial", "poisson", "standard_exponential",
})
#: scipy.stats distributions whose ``rvs`` (without ``random_state``) draws privacy noise from NumPy's global generator
_SCIPY_NOISE = frozenset({"laplace", "norm", "gumbel_r", "geom", "bernoulli", "binom", "dlaplace", "expon"})
#: where a seed is for evaluation, attacks, plots, data or sampling, not for the run that releases the noise
_QUIET_SEED_SCOPES = frozenset({"test", "tests", "eval", "evaluate", "evaluation", "attack", "attacks", "mia",
                                "membership", "shadow", "simulate", "simulation", "plot", "plots", "visualize", "visualise",
                                "baseline", "nonprivate", "nondp", "sample", "sampling", "generate", "generation",
                                "data", "dataset", "split", "shuffle", "load", "loader", "demo", "partition"})
#: words of a data function; a file named for data (``dataset_loader.py``) may still release noisy statistics
_DATA_WORDS = frozenset({"data", "dataset", "split", "shuffle", "load", "loader", "partition"})
#: objects a run's configuration is read from (``args.seed``, ``FLAGS.run``, ``cfg.train.seed``)
_CONFIG_ROOTS = frozenset({"args", "arg", "opt", "opts", "config", "cfg", "conf", "flags", "hparams", "hp",
                           "options", "params", "settings", "hyperparams", "run_config", "train_config"})
#: a ``--seed`` option whose default is None, or that gives no default (argparse's is None): fresh entropy
#: unless the user passes one
_NONE_SEED_OPTION = re.compile(r"""add_argument\(\s*['"]-{1,2}\w*seed\w*['"]"""
                               r"""(?:[^)]*default\s*=\s*None|(?![^)]*default\s*=)[^)]*\))""")
#: the file is about DP (a seed in a non-DP script is no finding)
#: calls that bring records in (a file, a dataset, a download, the command line)
_READ_WORDS = frozenset({"open", "read", "load", "loadtxt", "genfromtxt", "fromfile", "fetch", "dataset", "datasets",
                         "download", "parse", "args", "csv", "parquet", "excel", "json", "pickle", "query", "connect",
                         "input", "loader", "dataloader", "get", "from"})
_DP_WORDS = re.compile(r"privacy|private|epsilon|noise_multiplier|PrivacyEngine|\bdp_|_dp\b|\bDP|opacus|"
                       r"\b[Pp]ate(?:[A-Z_.]|\b)|\bPATE|\bLDP|\bldp_|_ldp\b|differential|"
                       r"tensorflow_privacy|sensitivity")
#: words of a function whose own draws are a privacy mechanism's randomness
_MECHANISM_FUNCTION_WORDS = frozenset({"noise", "noisy", "laplace", "gaussian", "gauss", "perturb", "perturbation",
                                       "perturbed", "privatize", "privatise", "randomize", "randomise", "randomizer",
                                       "randomiser", "ldp",
                                       "staircase", "mechanism", "sanitize", "sanitise", "obfuscate"})


#: words of a parameter that makes a noise draw a privacy mechanism
_PRIVACY_PARAMETER_WORDS = frozenset({"eps", "epsilon", "delta", "rho", "mu", "sigma", "sensitivity", "sens",
                                      "multiplier", "budget", "privacy", "private", "dp", "ldp", "clip", "scale",
                                      "laplace", "gaussian", "noise", "b", "beta", "lam", "lambda"})


def _none_seed_option(code: str, attr: str) -> bool:
    """The ``--seed`` option ``args.<attr>`` reads defaults to None (fresh entropy unless given). When this file
    declares that very option (``--init_seed``, ``--init-seed``) its own default decides (another option,
    ``--npartyseed`` defaulting to None, does not); otherwise any seed option defaulting to None does."""
    own = re.compile(r"""add_argument\(\s*['"]-{1,2}""" + re.escape(attr).replace("_", "[-_]")
                     + r"""['"][^)]*\)""")
    declared = [m.group(0) for m in own.finditer(code)]
    if declared:
        return any(_NONE_SEED_OPTION.match(d) for d in declared)
    return bool(_NONE_SEED_OPTION.search(code))


def _fresh_entropy(value: cst.BaseExpression) -> bool:
    """``int.from_bytes(os.urandom(8), "little")``, ``secrets.randbits(64)``: a seed from the OS entropy pool."""
    return any(isinstance(n, cst.Call) and (call_name(n) == "urandom" or (dotted(n.func) or "").startswith(
        ("secrets.", "random.SystemRandom"))) for n in walk(value))


def _seed_arg(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("seed", "x", "a"):
            return arg.value
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[0] if positional else None


def _parameter_only_feeds_non_mechanisms(function: cst.FunctionDef, parameter: str) -> bool:
    """Every use of ``parameter`` in ``function`` is an argument of a call that takes no ε/δ keyword and is no
    generator constructor or seeding call; a parameter that is never read, or read any other way, is not."""
    if parameter not in {p.name.value for p in all_params(function)}:
        return False
    keyword_names = {id(n.keyword) for n in walk(function.body) if isinstance(n, cst.Arg) and n.keyword is not None}
    uses = [n for n in walk(function.body)
            if isinstance(n, cst.Name) and n.value == parameter and id(n) not in keyword_names]
    passed: set[int] = set()
    for sub in walk(function.body):
        if not isinstance(sub, cst.Call):
            continue
        keywords = {a.keyword.value for a in sub.args if a.keyword is not None}
        mechanism = bool(keywords & {"eps", "epsilon", "delta", "sigma", "scale"}) or call_name(sub) in (
            _GENERATORS | _GLOBAL_SEEDS)
        for arg in sub.args:
            if isinstance(arg.value, cst.Name) and arg.value.value == parameter:
                if mechanism:
                    return False
                passed.add(id(arg.value))
    return bool(uses) and all(id(n) in passed for n in uses)



def _enumerate_position(loop: cst.For, name: str) -> bool:
    """``for name, item in enumerate(items)``: ``name`` is the position 0, 1, 2, …, known to anyone."""
    target = loop.target
    return isinstance(target, cst.Tuple) and len(target.elements) == 2 \
        and isinstance(target.elements[0].value, cst.Name) and target.elements[0].value.value == name \
        and isinstance(loop.iter, cst.Call) and call_name(loop.iter) == "enumerate" \
        and not any(a.keyword is not None and a.keyword.value == "start" or a.keyword is None and number(a.value) is None
                    for a in loop.iter.args[1:])


def fn_name(fa, node: cst.CSTNode) -> str:
    fn = fa.enclosing_function(node)
    return fn.name.value if fn is not None else "<module>"


#: words of a noise draw's argument that calibrate it to a privacy parameter
_CALIBRATION_WORDS = frozenset({"eps", "epsilon", "sigma", "sensitivity", "sens", "delta", "multiplier", "budget",
                                "deltaq", "privacy"})
#: a class of the project: (file, name, base names, attributes it assigns on self, its draws (attr, method, line,
#: words of the arguments))
_ProjectClass = tuple[str, str, frozenset[str], frozenset[str], tuple[tuple[str, str, int, frozenset[str]], ...]]
_CLASS_INDEX: dict[str, list[_ProjectClass]] = {}
_CLASS_LINE = re.compile(r"^class\s+(\w+)\s*(?:\(([^)]*)\))?", re.M)
_SELF_DRAW = re.compile(r"self\.(\w+)\.(\w+)\(([^\n]*)")
_SELF_ASSIGN = re.compile(r"self\.(\w+)\s*=[^=]")


def _class_of_ast(file: str, cls: ast.ClassDef) -> _ProjectClass:
    bases = frozenset(b.id if isinstance(b, ast.Name) else b.attr for b in cls.bases
                      if isinstance(b, (ast.Name, ast.Attribute)))
    owned = frozenset(t.attr for n in ast.walk(cls) if isinstance(n, ast.Assign) for t in n.targets
                      if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self")
    draws = []
    for n in ast.walk(cls):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Attribute) \
                and isinstance(n.func.value.value, ast.Name) and n.func.value.value.id == "self":
            refs = frozenset(w for a in [*n.args, *(k.value for k in n.keywords)] for x in ast.walk(a)
                             if isinstance(x, (ast.Name, ast.Attribute))
                             for w in words(x.id if isinstance(x, ast.Name) else x.attr))
            draws.append((n.func.value.attr, n.func.attr, n.lineno, refs))
    return file, cls.name, bases, owned, tuple(draws)


def _classes_of_text(file: str, text: str) -> list[_ProjectClass]:
    """The classes of a module Python cannot parse (a missing colon, Python 2), read line by line: each top-level
    ``class`` runs to the next one."""
    out: list[_ProjectClass] = []
    heads = list(_CLASS_LINE.finditer(text))
    for i, head in enumerate(heads):
        body = text[head.end():heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        first = text.count("\n", 0, head.end()) + 1
        bases = frozenset(b.strip().split(".")[-1] for b in (head.group(2) or "").split(",") if b.strip())
        owned = frozenset(m.group(1) for m in _SELF_ASSIGN.finditer(body))
        draws = tuple((m.group(1), m.group(2), first + body.count("\n", 0, m.start()),
                       frozenset(w for tok in re.findall(r"\w+", m.group(3)) for w in words(tok)))
                      for m in _SELF_DRAW.finditer(body))
        out.append((file, head.group(1), bases, owned, draws))
    return out


def _project_classes(path: str) -> list[_ProjectClass]:
    """Every class in ``path``'s folder and its parent folder (where a subclass of a base class defined in
    ``path`` lives: ``model_base.py`` beside ``private_model.py``); each file read once per version."""
    folder = os.path.dirname(os.path.abspath(path))
    out: list[_ProjectClass] = []
    files: list[str] = []
    for where in (folder, os.path.dirname(folder)):
        try:
            files += sorted(os.path.join(where, f) for f in os.listdir(where) if f.endswith(".py"))
        except OSError:
            continue
    for file in files[:200]:
        try:
            stat = os.stat(file)
        except OSError:
            continue
        key = f"{file}\0{stat.st_mtime_ns}\0{stat.st_size}"
        if key not in _CLASS_INDEX:
            _CLASS_INDEX[key] = _file_classes(file) if stat.st_size <= 400_000 else []
        out += _CLASS_INDEX[key]
    return out


def _file_classes(file: str, text: str | None = None) -> list[_ProjectClass]:
    if text is None:
        try:
            with open(file, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return _classes_of_text(file, text)
    return [_class_of_ast(file, n) for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]


def _subclass_noise_draw(path: str, source: str, base: str, attr: str) -> tuple[str, int, str] | None:
    """(file, line, class) of a calibrated noise draw ``self.<attr>.laplace(0, s / epsilon)`` in a subclass of
    ``base`` (directly or through other subclasses, in this folder or its parent) that does not assign its own
    ``self.<attr>``: the base class's seeded generator is the one the subclass's mechanism draws from."""
    here = os.path.abspath(path)
    classes = _file_classes(here, source) + [c for c in _project_classes(path) if c[0] != here]
    family: set[str] = set()
    frontier = {base}
    for _ in range(4):
        new = {c[1] for c in classes if c[2] & frontier and c[1] not in family and c[1] != base}
        if not new:
            break
        family |= new
        frontier = new
    for file, name, _bases, owned, draws in classes:
        if name not in family or attr in owned:
            continue  # not a subclass, or one that builds its own generator
        for drawn, method, line, refs in draws:
            if drawn == attr and method in _NOISE_METHODS and refs & _CALIBRATION_WORDS:
                return file, line, name
    return None

def _seeding_name(name: str) -> bool:
    """``seed``, ``manual_seed``, ``seed_everything``, ``set_random``, ``set_rng_seed``, ``fix_reproducibility``."""
    ws = words(name)
    return bool(ws & {"seed", "seeds", "seeding", "reproducibility"}) or bool(
        ws & {"set", "fix", "init"} and ws & {"random", "rng"})


def _imported_names(module: cst.Module) -> frozenset[str]:
    """Names an ``import``/``from … import`` binds anywhere in the module (``transformers``, ``pl``, ``utils``)."""
    names: set[str] = set()
    for node in walk(module):
        if isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                bound = alias.asname.name if alias.asname is not None else alias.name
                names.add((dotted(bound) or "").split(".")[0])
    return frozenset(names)


#: a draw assigned to one of these is a generative model's latent input, not privacy noise
_LATENT_TARGET = re.compile(r"^\s*(?:self\.)?(?:fake_?z\w*|z|z_\w*|\w*_z|latent\w*|\w*_latent|noise_z|zs|fakez)\s*=")


def _latent_draw_line(file: str, line: int, text: str | None) -> bool:
    """The source line ``line`` of ``file`` assigns a draw to a latent name (``fakez = torch.normal(...)``)."""
    try:
        if text is None:
            with open(file, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        lines = text.splitlines()
    except OSError:
        return False
    return 0 < line <= len(lines) and _LATENT_TARGET.match(lines[line - 1]) is not None

class SeededNoise(Rule):
    id = "DP507"
    name = "seeded-noise"
    category = "general"
    severity = "error"
    summary = "privacy noise comes from a random generator seeded with a fixed or derivable value"
    rationale = (
        "A DP guarantee holds only if the adversary cannot predict the noise. A generator seeded with "
        "a constant (`np.random.RandomState(42)`), a public default (`def measure(data, eps, seed=0)`), "
        "or a value anyone can recompute (`master_seed + client_id * 1000 + round`) produces the same "
        "noise on every run: knowing the code and the seed, the noise can be regenerated and "
        "subtracted from the release, which is then the exact private value. "
        "Reported: a seeded generator (`RandomState`, `default_rng`, `random.Random`) that draws "
        "Laplace/Gaussian noise or a randomised response, or that a mechanism's constructor (one "
        "taking ε) stores for its draws, or that a base class stores on `self` (`self.rnd = RandomState(seed)` with "
        "`seed=1234` by default) for a subclass in this or a sibling module to draw calibrated noise from "
        "(`self.rnd.laplace(0, s / epsilon)`; fix: seed it with None or draw from an unseeded generator); a global `np.random.seed`/`torch.manual_seed` call with a "
        "seed named or derived for the noise (from round or client identifiers) before a noise draw; a "
        "constant global seed set by a run's entry point (at import, in `main()`, in the `__main__` block) "
        "when a mechanism taking ε in a project module it imports (directly or through the project's own "
        "imports) draws calibrated noise or randomised-response coins from that global generator (also through a "
        "project helper, `set_seed(2022)`); an Opacus-style `noise_generator=torch.Generator().manual_seed(…)` "
        "seeded with a constant or the run's configured seed; a public run seed (a literal, a module constant, "
        "`args.seed` whose `--seed` defaults to a literal, `config.seed`, a constructor default stored in "
        "`self.seed`, the MPI rank or a client/run index, passed directly or through a seeding helper of the project) "
        "of torch's, NumPy's or TensorFlow's global generator, where this file or a project module it imports draws "
        "DP noise from that generator: an Opacus `PrivacyEngine` without `secure_mode=True` (its noise comes from "
        "torch's global generator), `make_private` without a `noise_generator`, a TensorFlow Privacy optimizer, "
        "`torch.randn_like(h) * sensitivity * sigma`. "
        "Not reported: a seed whose only draw found is a generative model's latent input (`fakez = torch.normal(mean, std)`), a seed inside a function named for partitioning or loading data that draws no noise itself, `seed=None` (fresh entropy), a `--seed` defaulting to None, seeds from `os.urandom`/"
        "`secrets`/time, Opacus `secure_mode=True`, seeds in tests and in evaluation, attack, plotting, "
        "data-loading or sampling functions and files, files that never mention privacy, a seed that only initialises a model or shuffles "
        "data, a `random_state` that the called function of the module only passes on to calls taking no ε "
        "(a clustering of the already-noised output), a data simulator's error term (a function taking only literal-default knobs that adds the draw "
        "to values it drew itself), code with no DP context. "
        "Fix: draw privacy noise from an unseeded generator (`np.random.default_rng()`, "
        "`secrets.SystemRandom`, a cryptographic RNG); keep seeds for model initialisation and data order."
    )
    TRIGGERS = ("seed", "RandomState", "default_rng", "Random(", "random_state", "PRNGKey")
    #: checked per finding: DP context, or a mechanism class named for DP (``BaseLDP``) with an ε parameter
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a seeded generator assigned to a name that draws noise (or a mechanism's ``self.…`` in an
        ``__init__`` taking ε), or a global seed from a name the function assigns."""
        from dpcheck.analysis.astshapes import seeded_noise

        if seeded_noise(facts, _GENERATORS, _GLOBAL_SEEDS, _NOISE_METHODS, frozenset({"eps", "epsilon"})):
            return True
        # a base class storing a seeded generator (``self.rnd = RandomState(seed)``) its subclasses may draw from
        for call in facts.calls:
            parent = facts.parents.get(call)
            if (call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)) in _GENERATORS \
                    and call.args and isinstance(parent, ast.Assign) and len(parent.targets) == 1 \
                    and isinstance(parent.targets[0], ast.Attribute) and isinstance(parent.targets[0].value, ast.Name) \
                    and parent.targets[0].value.id == "self":
                return True
        # a run's public seed of a global generator (``torch.manual_seed(args.seed)``, ``set_seed(cfg.seed)``), or a
        # seeding helper of this class or of an imported module (``self._set_random(seed)``,
        # ``tools.set_rng_seed(args.seed)``); not an object's own generator (``env.seed(0)``, ``model.seed(s)``)
        imported: set[str] | None = None
        for call in facts.calls:
            func = call.func
            if call.args and (isinstance(func, ast.Attribute) and func.attr == "manual_seed"
                              and isinstance(func.value, ast.Name) or
                              (func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)) == "PRNGKey"):
                return True  # ``gen.manual_seed(SEED)`` of a generator object, ``key = random.PRNGKey(42)`` (JAX)
            if any(k.arg == "noise_generator" and isinstance(k.value, ast.Name) for k in call.keywords):
                return True  # ``rng.manual_seed(seed)`` then ``make_private(…, noise_generator=rng)``
            if isinstance(func, ast.Attribute) and (call.args or call.keywords) and _seeding_name(func.attr):
                if imported is None:
                    imported = {(a.asname or a.name).split(".")[0] for n in ast.walk(facts.tree)
                                if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
                root = func.value
                while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
                    root = root.func if isinstance(root, ast.Call) else root.value
                if isinstance(root, ast.Name) and root.id in imported | {"self", "cls"}:
                    return True
            if isinstance(func, ast.Name) and _seeding_name(func.id):
                return True
        return False

    VALID = (
        # twins: the base class's seed defaults to None (fresh entropy), or the subclass builds its own generator
        """
import numpy as np

class Estimator:
    def __init__(self, scale_inputs=False, seed=None):
        self.gen = np.random.RandomState(seed)

class NoisyRidge(Estimator):
    def fit(self, X, y, epsilon):
        bound = 2.0 * X.shape[1]
        return X.T @ y + self.gen.laplace(0, bound / epsilon, X.shape[1])
""",
        """
import numpy as np

class Release:
    def __init__(self, seed: int = 7):
        self._g = np.random.default_rng(seed)

class GaussianCounts(Release):
    def __init__(self):
        self._g = np.random.default_rng()
    def publish(self, counts, sensitivity, sigma):
        return counts + self._g.normal(0, sigma * sensitivity, len(counts))
""",
        # ordinary ML: a seeded base class whose subclass jitters inputs for augmentation
        """
import numpy as np

class Pipeline:
    def __init__(self, seed=0):
        self.rng = np.random.RandomState(seed)

class Jitter(Pipeline):
    def __call__(self, x, width=0.05):
        return x + self.rng.normal(0, width, x.shape)
""",
        # a partitioning helper seeds its own subsampling of the records; the aggregate's Laplace draw is a
        # separate function the helper never reaches
        """
import numpy as np
def partition_records(ids, k, rate, random_seed=0):
    np.random.seed(random_seed)
    size = int(len(ids) * rate)
    return [np.random.choice(ids, size=size, replace=False) for _ in range(k)]
def noisy_mean(scores, epsilon):
    b = 1.0 / (len(scores) * epsilon)
    return float(np.mean(scores) + np.random.laplace(0, b))
""",
        # a GAN's discriminator fixes torch's generator, but the only draw of the private trainer is the generator's
        # latent input; the DP noise is drawn elsewhere (numpy Laplace votes, not seeded here)
        """
import torch
class Critic(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Linear(dim, 1)
class PrivateGAN:
    def train(self, data, epsilon):
        self.epsilon = epsilon
        for step in range(self.steps):
            fakez = torch.normal(mean=self.mean, std=self.std)
            fake = self.generator(fakez)
""",
        # twins of the public-seed cases: secure mode, a --seed defaulting to None, entropy from the OS
        """
import torch
from opacus import PrivacyEngine
torch.manual_seed(0)
def train_private(model, optimizer, loader, noise_multiplier):
    engine = PrivacyEngine(secure_mode=True)
    return engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                               noise_multiplier=noise_multiplier, max_grad_norm=1.0)
""",
        """
import argparse
import numpy as np
import torch
from opacus import PrivacyEngine
parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=None)
args = parser.parse_args()
def fix_all_seeds(value):
    np.random.seed(value)
    torch.manual_seed(value)
fix_all_seeds(args.seed)
def run(model, optimizer, loader, target_eps):
    engine = PrivacyEngine(accountant="rdp")
    return engine.make_private_with_epsilon(module=model, optimizer=optimizer, data_loader=loader, epochs=5,
                                            target_epsilon=target_eps, target_delta=1e-5, max_grad_norm=1.0)
""",
        """
import os
import numpy as np
import torch
def noisy_histogram(hist, num_words, sigma):
    sensitivity = np.sqrt(num_words)
    torch.manual_seed(int.from_bytes(os.urandom(4), "little"))
    return hist + torch.randn_like(hist) * sensitivity * sigma
""",
        # a --seed option with no default (argparse gives None), applied only when the user passes one
        """
import argparse
import math
import random
def laplace_noise(scale, epsilon):
    u = random.random()
    return scale * math.copysign(1.0, u - 0.5) * math.log(1.0 - 2.0 * abs(u - 0.5))
def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--epsilon", type=float, required=True)
    p.add_argument("--seed", type=int)
    args = p.parse_args(argv)
    if args.seed is not None:
        random.seed(args.seed)
    return laplace_noise(1.0 / args.epsilon, args.epsilon)
""",
        # twins: the stored seed defaults to None; the caller passes fresh entropy
        """
import numpy as np
class PrivateQuantile:
    def __init__(self, epsilon, seed=None):
        self.epsilon, self.seed = epsilon, seed
    def reset(self):
        np.random.seed(self.seed)
    def report(self, x, q):
        keep = np.exp(self.epsilon) / (1 + np.exp(self.epsilon))
        bit = x <= q
        return bit if np.random.binomial(1, keep) else not bit
""",
        """
import secrets
import numpy as np
import torch
def perturb_edges(adj, epsilon, seed=None):
    if seed is not None:
        torch.manual_seed(seed)
        np.random.seed(seed)
    flip = 1 / (1 + np.exp(epsilon))
    return np.where(np.random.binomial(1, flip, adj.shape) == 1, 1 - adj, adj)
def experiment(adj, epsilon, runs):
    return [perturb_edges(adj, epsilon, seed=secrets.randbits(32)) for run in range(runs)]
""",
        # a diffusion model's forward process scaled by its own sigma, seeded for reproducibility (no DP)
        """
import torch
torch.manual_seed(0)
class GaussianDiffusion:
    def __init__(self, sigmas):
        self.sigmas = sigmas
    def q_sample(self, x0, t):
        return x0 + torch.randn_like(x0) * self.sigmas[t]
""",
        # a membership-inference evaluation of the released model seeds its shadow training
        """
import torch
from opacus import PrivacyEngine
def evaluate_membership_attack(target_model, shadow_loader, seed=0):
    torch.manual_seed(seed)
    shadow = train_shadow(shadow_loader)
    return attack_accuracy(shadow, target_model)
def train_private(model, optimizer, loader, noise_multiplier):
    engine = PrivacyEngine()
    return engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                               noise_multiplier=noise_multiplier, max_grad_norm=1.0)
""",
        # a non-private baseline script: seeds torch, trains without any DP engine or noise
        """
import torch
torch.manual_seed(0)
def train(model, loader, optimizer):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x + 0.1 * torch.randn_like(x)), y)
        loss.backward()
        optimizer.step()
""",
        # the noise generator's seed is drawn from the OS entropy pool (a seed kept for sampling is separate)
        """
import os
import numpy as np
class PrivBayesModel:
    def __init__(self, epsilon, seed=0):
        self.epsilon = epsilon
        dp_seed = int.from_bytes(os.urandom(8), "little")
        self._rng = np.random.default_rng(dp_seed)
        self.seed = seed
    def noisy(self, counts, sensitivity):
        return counts + self._rng.laplace(0, sensitivity / self.epsilon, len(counts))
""",
        # a non-DP additive-noise baseline: the spread comes from each series' own deviation, no budget
        """
import numpy as np
def dp_protection(data, epsilon):
    return [row + np.random.laplace(0, 1 / epsilon, len(row)) for row in data]
def additive_noise_protection(sensitive_data, num_stdev):
    spreads = [np.std(x) for x in sensitive_data]
    rng = np.random.default_rng(2022)
    return [rng.normal(loc=0, scale=spreads[i] * num_stdev, size=len(r)) + r for i, r in enumerate(sensitive_data)]
""",
        # a robustness simulation: dummy client updates with a fixed small spread, no privacy noise
        """
import numpy as np
def simulate_dropout(secagg, shapes, weights, n_clients, epsilon, seed: int = 42):
    rng = np.random.default_rng(seed)
    updates = []
    for i in range(n_clients):
        noise = [rng.standard_normal(s).astype(np.float32) * 0.01 for s in shapes]
        updates.append([w + z for w, z in zip(weights, noise)])
    return secagg.aggregate(updates)
""",
        # RON-Gauss: a helper's required seed, passed None by the public method
        """
import numpy as np
class RONGauss:
    def __init__(self, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta

    def generate(self, X, prng_seed=None):
        return self._gmm(X, prng_seed)

    def _gmm(self, X, prng_seed):
        prng = np.random.RandomState(prng_seed)
        return X.mean(0) + prng.laplace(0, 1 / self.epsilon, size=X.shape[1])
""",
        # fresh entropy: no seed, or seed=None by default
        """
import numpy as np
def privbayes_measurements(data, eps=1.0, seed=None):
    prng = np.random.RandomState(seed)
    return data + prng.laplace(loc=0, scale=4 / eps, size=data.shape)
""",
        """
import numpy as np
class LaplaceLDP:
    def __init__(self, eps):
        self.random_ = np.random.default_rng()
        self.eps = eps

    def encode(self, x, sensitivity):
        return x + self.random_.laplace(0, sensitivity / self.eps, size=x.shape)
""",
        # a seed that only shuffles the data (its own generator); the noise comes from torch's unseeded generator
        """
import numpy as np
import torch
def train(model, X, epsilon, sigma, seed=0):
    rng = np.random.RandomState(seed)
    order = rng.permutation(len(X))
    for i in order:
        g = model.grad(X[i])
        g = g + torch.normal(0, sigma, g.shape)
    return model
""",
        # a fixed seed for a simulation of the data, not for the noise
        """
import numpy as np
def make_data(n, epsilon, seed=42):
    rng = np.random.RandomState(seed)
    return rng.normal(0, 1, size=(n, 3))
""",
        # dp-federated_sharing tree_max.py: the forest's seeded generator only draws data-independent structure;
        # the Laplace noise comes from another class's unseeded generator of the same attribute name
        """
import numpy as np
class Forest:
    def __init__(self, epsilon, seed=1234):
        self.rand = np.random.RandomState(seed)
        self.epsilon = epsilon

    def split(self, lo, hi):
        return self.rand.uniform(lo, hi)

class Node:
    def __init__(self, epsilon, seed=None):
        self.rand = np.random.RandomState(seed)

    def laplace(self, e, count):
        return count + self.rand.laplace(scale=1.0 / e)
""",
        # dp_datagen_opt.py: a helper's seeded generator draws synthetic points; the noise is another function's
        """
import numpy as np
def generate(cells, epsilon, seed=1234):
    rand = np.random.RandomState(seed=seed)
    return [rand.uniform(lo, hi) for lo, hi in cells]

def noisy_counts(counts, epsilon, seed=None):
    rand = np.random.RandomState(seed)
    return counts + rand.laplace(0, 1 / epsilon, size=len(counts))
""",
        # experiment seeding: the entry point fixes the seed, a separate training function draws the noise
        """
import numpy as np
def train(X, sigma, clip):
    g = X.mean(0)
    return g + np.random.normal(0, sigma * clip, g.shape)

def main(epsilon):
    np.random.seed(0)
    X = np.random.rand(100, 3)
    return train(X, 1.0 / epsilon, 1.0)
""",
        # a library module's demo block seeds the data it perturbs for a printout
        """
import numpy as np
class LaplaceEncoder:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def encode(self, v, sensitivity):
        return v + np.random.laplace(0, sensitivity / self.epsilon, len(v))

if __name__ == "__main__":
    np.random.seed(0)
    print(LaplaceEncoder(1.0).encode(np.random.uniform(0, 1, 10), 1.0))
""",
        # the caller chooses the seed (no constant default): the reseed is the caller's decision
        """
import numpy as np
def perturb_counts(counts, epsilon, seed):
    np.random.seed(seed)
    return counts + np.random.laplace(0, 1 / epsilon, len(counts))
""",
        # a data simulator with a fixed seed: the error term eps_sd is added to covariates it drew itself
        """
import numpy as np
from opacus import PrivacyEngine
def simulate_benchmark(n=20000, rho=0.7, beta_int=3.0, eps_sd=0.5, seed=42):
    rng = np.random.default_rng(seed)
    X = rng.multivariate_normal([0.0, 0.0], [[1.0, rho], [rho, 1.0]], size=n)
    x1, x2 = X[:, 0], X[:, 1]
    y = 0.6 * x1 + float(beta_int) * (x1 * x2) + rng.normal(0.0, float(eps_sd), size=n)
    return X, y
""",
        # a constant reseed that only generates a synthetic data set (no ε, not a noise function)
        """
import numpy as np
def make_clients(n_users, alpha):
    np.random.seed(7)
    return [np.random.normal(0, alpha, 5) for _ in range(n_users)]
""",
        # a mechanism's random_state left to fresh entropy, or a generator made from it
        """
from diffprivlib.mechanisms import Laplace
def noisy_total(total, epsilon):
    mech = Laplace(epsilon=epsilon, sensitivity=1.0, random_state=None)
    return mech.randomise(total)
""",
        """
from diffprivlib.mechanisms import GaussianAnalytic
def release(values, eps, delta, seed=None):
    mech = GaussianAnalytic(epsilon=eps, delta=delta, sensitivity=1.0, random_state=seed)
    return [mech.randomise(v) for v in values]
""",
        """
import numpy as np
from diffprivlib.mechanisms import Geometric
def histogram(counts, epsilon, args):
    rng = np.random.default_rng()
    split = train_test_split(counts, random_state=args.seed)
    mech = Geometric(epsilon=epsilon, sensitivity=1, random_state=rng)
    return [mech.randomise(c) for c in counts]
""",
        # B25 taoshen2022 bipartite_gaptr_utils.py: the callee's random_state only seeds the clustering of the
        # already-noised embedding; the noise comes from the generator passed separately
        """
import numpy as np
from sklearn.cluster import KMeans
def private_communities(A, k, eps, delta, rng, random_state):
    emb = A + np.sqrt(2 * np.log(1.25 / delta)) / eps * rng.normal(size=A.shape)
    return KMeans(n_clusters=k, random_state=random_state).fit_predict(emb)
def replicate(A, k, seed, idx):
    return private_communities(A, k, eps=1.0, delta=1e-5, rng=np.random.default_rng(), random_state=seed + idx)
""",
        # each repetition hands an unseeded generator to the mechanism taking ε (twin of the loop-index seed)
        """
import numpy as np
def evaluate(data, epsilon, times):
    out = []
    for i in range(times):
        prng = np.random.RandomState()
        out.append(identity_release(data, prng, epsilon))
    return out
""",
        # a loop-index generator that only splits the data; the split call takes no ε
        """
import numpy as np
from sklearn.model_selection import train_test_split
def evaluate(data, epsilon, folds):
    scores = []
    for i in range(folds):
        rng = np.random.RandomState(i)
        train, test = train_test_split(data, random_state=rng)
        scores.append(private_fit(train, epsilon).score(test))
    return scores
""",
        # the entry point seeds NumPy for the data split; the randomiser draws from its own unseeded generator
        """
import numpy as np
class ShuffleRR:
    def __init__(self, epsilon):
        self.epsilon = epsilon
        self.rng = np.random.default_rng()
    def local_randomizer(self, value, keep, k):
        return value if self.rng.random() < keep else self.rng.integers(k)
def main():
    np.random.seed(42)
    data = np.random.permutation(100)
    rr = ShuffleRR(1.0)
    return [rr.local_randomizer(v, 0.7, 100) for v in data]
""",
        # ordinary training: main() seeds torch; Adam's eps and a diffusion forward process draw no privacy noise
        """
import torch
def q_sample(x0, t, alphas):
    return alphas[t].sqrt() * x0 + (1 - alphas[t]).sqrt() * torch.randn_like(x0)
def main():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 4)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-8)
    x = torch.randn(8, 4)
    loss = (model(q_sample(x, 3, torch.linspace(0.9, 0.1, 10))) - x).pow(2).mean()
    loss.backward()
    opt.step()
""",
        # a tutorial's entry point seeds NumPy and simulates its own data: no private record is released
        """
import numpy as np
class Exponential:
    def __init__(self, epsilon, scores):
        self.epsilon, self.scores = epsilon, scores
    def exponential(self, options):
        p = np.exp(self.epsilon * self.scores / 2)
        return np.random.choice(options, p=p / p.sum())
def run_example():
    np.random.seed(0)
    data = np.random.choice(["a", "b"], size=100)
    mech = Exponential(1.0, np.array([np.mean(data == "a"), np.mean(data == "b")]))
    print(mech.exponential(["a", "b"]))
if __name__ == "__main__":
    run_example()
""",
        # a module-level seed name left None: fresh entropy for the mechanism
        """
import numpy as np
SEED = None
np.random.seed(SEED)
def perturb(values, epsilon):
    return values + np.random.laplace(0, 1 / epsilon, len(values))
""",
        # twins of the Opacus cases: the noise generator seeded from OS entropy
        """
import os
import torch
def attach(engine, model, opt, loader, sigma, seed=0):
    return engine.make_private(module=model, optimizer=opt, data_loader=loader, noise_multiplier=sigma,
                               max_grad_norm=1.0,
                               noise_generator=torch.Generator().manual_seed(int.from_bytes(os.urandom(8), "big")))
""",
        # a module seeding NumPy at import for a simulation whose noise has a literal spread and no budget
        """
import numpy as np
np.random.seed(68)

class Sensor:
    def read(self, n, dim):
        x = np.random.normal(loc=0, scale=1, size=(n, dim))
        noise = np.random.binomial(1, 0.1, (n, dim))
        return x, noise
""",
        # twins of the broadened roles: TensorFlow augmentation noise with a literal spread, torch weight init,
        # a diffusion step's Normal draw, a VAE's reparameterised sample, a helper seeding from OS entropy
        """
import tensorflow as tf
import keras.backend as K
# differential privacy baseline: the augmentation below is not the private mechanism
def augment(x):
    return x + K.random_normal(K.shape(x), stddev=0.1)
def main():
    tf.set_random_seed(123)
    return augment
""",
        """
import torch
from torch import nn
# model for the private (DP-SGD) run; the seed only initialises the weights
def init_weights(m):
    nn.init.normal_(m.weight, 0.0, 0.02)
def main(model):
    torch.manual_seed(0)
    model.apply(init_weights)
""",
        """
import torch
from torch.distributions import Normal
# denoising model trained on the DP synthetic data
def q_sample(x0, sigma_t):
    return x0 + Normal(0, sigma_t).sample(x0.shape)
def encode(mu, std):
    return Normal(mu, std).rsample()
def main(x):
    torch.manual_seed(0)
    return q_sample(x, 0.5), encode(x, 1.0)
""",
        """
import argparse
import torch
import tools
def lnmax(counts, gamma):  # PATE aggregation
    lap = torch.distributions.laplace.Laplace(0, torch.tensor(1 / gamma))
    return counts + lap.sample(counts.shape)
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    tools.set_rng_seed(args.seed)
    return lnmax(torch.zeros(10), 0.1)
""",
        """
import random
class RRWithPrior:
    def __init__(self, epsilon, prior, seed=None):
        self.epsilon = epsilon
        self.threshold = 0.5
        self._set_random(seed)
    def _set_random(self, seed):
        random.seed(seed)
    def respond(self, y, k):
        p = random.uniform(0, 1)
        if p <= self.threshold:
            return y
        return random.randint(0, k - 1)
""",
        """
import os
import random
import numpy as np
import config
def laplace(mean, sensitivity, epsilon):
    scale = sensitivity / epsilon
    u = random.uniform(0, 1) - 0.5
    return mean - scale * np.sign(u) * np.log(1 - 2 * np.abs(u))
def add_noise(weights, sensitivity, epsilon):
    random.seed(int.from_bytes(os.urandom(8), "big"))
    return [laplace(w, sensitivity, epsilon) for w in weights]
""",
        """
import numpy as np
# a grid of runs for the private release; each run's noise is fresh
def release(counts, epsilon):
    return counts + np.random.laplace(0, 1 / epsilon, len(counts))
for run in range(3):
    np.random.seed(None)
    release(np.zeros(4), 1.0)
""",
        # twin: the data function's seed is its caller's parameter and only orders the records
        """
import numpy as np
def perturb(values, epsilon):
    return values + np.random.laplace(0, 1 / epsilon, len(values))
def read_dataset(path, seed=None):
    np.random.seed(seed)
    return np.loadtxt(path)
def main(path, epsilon):
    return perturb(read_dataset(path), epsilon)
""",
        # twin: the options' seed defaults to None, so the exponential mechanism's sampling is fresh
        """
import argparse
import numpy as np
def set_seed(args):
    np.random.seed(args.seed)
def probabilities(distances, epsilon=2.0):
    p = np.exp(-epsilon * distances / 2)
    return p / p.sum()
def sanitize(tokens, prob):
    return [np.random.choice(len(prob[t]), 1, p=prob[t]) for t in tokens]
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    set_seed(args)
    sanitize([0], [probabilities(np.ones(3))])
""",
        # a loop of seeds for the membership attack's shadow runs, not for the release
        """
import numpy as np
def release(counts, epsilon):
    return counts + np.random.laplace(0, 1 / epsilon, len(counts))
def run_attack(models):
    for seed in [0, 1, 2]:
        np.random.seed(seed)
        models.append(np.random.permutation(10))
""",
        # a smoke test under __main__ draws its own synthetic scores from the noise model to check diagnostics
        """
import numpy as np
def diagnostics(absent, present, sigma, q):
    return absent.var() / sigma ** 2, present.mean() / q
if __name__ == "__main__":
    rng = np.random.default_rng(0)
    sigma, q, steps = 1.0, 0.05, 400
    absent = rng.normal(0, sigma, size=(20, 100))
    bern = rng.binomial(1, q, size=(20, 100, steps))
    z = rng.normal(0, sigma, size=(20, 100, steps))
    print(diagnostics(absent, (bern + z).sum(axis=2) / np.sqrt(steps), sigma, q))
""",
        # not DP: a seed before ordinary training with dropout and data augmentation noise
        """
import torch
def train(model, loader, opt, seed=0):
    torch.manual_seed(seed)
    for x, y in loader:
        x = x + 0.05 * torch.randn_like(x)
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
""",
        # twins of the reseeding side effect: the noise comes from its own unseeded generator; the reseed is in a
        # non-DP step; a fresh-entropy reseed; the step reseeds from the OS after the helper
        """
import numpy as np
_noise_rng = np.random.default_rng()
class Server:
    def pick_clients(self, rnd, k):
        np.random.seed(rnd)
        return np.random.choice(len(self.clients), k, replace=False)
    def train(self, rounds, k, sigma, clip):
        for r in range(rounds):
            chosen = self.pick_clients(r, k)
            total = sum(self.clients[i].update(clip) for i in chosen)
            total = total + _noise_rng.normal(0, sigma * clip, size=total.shape)  # DP-FedAvg noise
""",
        """
import torch
class ZOTrainer:
    def perturb_params(self, seed, scale=1.0):
        torch.manual_seed(seed)
        for p in self.params:
            p.data.add_(scale * self.zo_eps * torch.randn_like(p))
    def step(self, loss_fn, clip, noise_std, gen):
        seed = int(torch.randint(0, 10**9, (1,)))
        self.perturb_params(seed)
        g = loss_fn().clamp(-clip, clip)  # DP clipping
        return g + torch.randn(1, generator=gen).item() * noise_std
""",
        # ordinary ML: an augmentation helper seeds before a diffusion step's noise, no privacy anywhere
        """
import torch
def jitter(x, seed):
    torch.manual_seed(seed)
    return x + 0.01 * torch.randn_like(x)
def q_sample(x0, t, sigma_t, seed):
    x0 = jitter(x0, seed)
    return x0 + sigma_t * torch.randn_like(x0)
""",
        """
import numpy as np
import os
class Server:
    def pick_clients(self, rnd, k):
        np.random.seed(int.from_bytes(os.urandom(4), "little"))
        return np.random.choice(len(self.clients), k, replace=False)
    def train(self, rounds, k, sigma, clip):
        for r in range(rounds):
            chosen = self.pick_clients(r, k)
            total = sum(self.clients[i].update(clip) for i in chosen)
            total = total + np.random.normal(0, sigma * clip, size=total.shape)  # DP-FedAvg noise
""",
        # twin of a data-named mechanism's own seed: the coins come from a fresh generator; a data function
        # taking no ε seeds its own shuffle
        """
import numpy as np
def data_transform(labels, epsi=1.0):
    theta = np.exp(epsi) / (np.exp(epsi) + 1)
    rng = np.random.default_rng()
    keep = rng.uniform(0, 1, len(labels)) <= theta
    return keep * labels + (1 - keep) * (1 - labels)
""",
        """
import numpy as np
def load_data(path, sed=1):
    np.random.seed(sed)
    rows = np.loadtxt(path)
    np.random.shuffle(rows)
    return rows
def release(values, epsilon):
    return values + np.random.laplace(0, 1 / epsilon, len(values))
""",
        # twins of a trial loop seeding with the configured seed: the option used defaults to None (fresh
        # entropy); a fixed-scale Laplace jitter of a data augmentation is no mechanism
        """
import argparse
import numpy as np
def noisy_votes(votes, gamma):  # PATE vote aggregation for privacy
    return votes + np.random.laplace(loc=0.0, scale=1.0 / gamma, size=votes.shape)
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--init_seed', type=int, default=None)
    parser.add_argument('--trials', type=int, default=3)
    args = parser.parse_args()
    for trial in range(args.trials):
        if args.init_seed is not None:
            np.random.seed(args.init_seed)
        print(noisy_votes(np.zeros(10), 0.1))
""",
        """
import argparse
import numpy as np
def jitter(x, width):  # augmentation; the private model is trained elsewhere with DP-SGD
    return x + np.random.laplace(loc=0.0, scale=0.05, size=x.shape) * width
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--init_seed', type=int, default=0)
    args = parser.parse_args()
    np.random.seed(args.init_seed)
    return jitter(np.zeros(10), 2.0)
""",
        # twins of a mechanism's seeded torch.Generator: seeded from the OS; a data loader's shuffling generator
        """
import os
import torch
def randomize_labels(labels, probs, eps):  # label differential privacy
    generator = torch.Generator().manual_seed(int.from_bytes(os.urandom(8), "little"))
    return [torch.multinomial(p, num_samples=1, generator=generator) for p in probs]
""",
        """
import torch
from torch.utils.data import DataLoader
def make_loader(dataset, batch_size, seed, epsilon):  # DP-SGD loader
    g = torch.Generator().manual_seed(seed)
    idx = torch.randperm(len(dataset), generator=g)
    return DataLoader(dataset, batch_size=batch_size, sampler=idx.tolist())
""",
        # twins: a generator seeded from the OS, a helper whose callers pass no seed, a fairseq trainer adding no
        # noise; a generator seeded for the data loader's shuffling (not the noise)
        """
import secrets
import torch
from opacus import PrivacyEngine
def train_dp(model, optimizer, loader, target_epsilon, delta, device):
    engine = PrivacyEngine(secure_mode=False)
    gen = torch.Generator(device=device)
    gen.manual_seed(secrets.randbits(63))
    return engine.make_private_with_epsilon(module=model, optimizer=optimizer, data_loader=loader,
                                            target_epsilon=target_epsilon, target_delta=delta, epochs=3,
                                            max_grad_norm=1.0, noise_generator=gen)
def make_loader(dataset, seed=0):
    order = torch.Generator()
    order.manual_seed(seed)
    return torch.utils.data.DataLoader(dataset, batch_size=64, shuffle=True, generator=order)
""",
        """
import numpy as np
class EmbeddingPerturber:
    def __init__(self, epsilon, delta, sensitivity=2.0):
        self.noise_scale = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
        self.rng = np.random.RandomState()
    def add_noise(self, vec, seed=None):
        if seed is not None:
            gen = np.random.RandomState(seed)
        else:
            gen = self.rng
        return vec + gen.normal(0.0, self.noise_scale, size=vec.shape)
def perturb_all(perturber, vectors):
    return [perturber.add_noise(vec) for pos, vec in enumerate(vectors)]
""",
        """
import torch
class Trainer:
    def __init__(self, args, model):
        self.args, self.model, self.updates = args, model, 0
    def get_num_updates(self):
        return self.updates
    def train_step(self, batch):
        self._set_seed()
        self.model(batch).backward()
        self.updates += 1
    def _set_seed(self):
        seed = self.args.seed + self.get_num_updates()
        torch.manual_seed(seed)
""",
        # graph-experiments ScaleFreeGraphExperiments.py: a script seeding at import that simulates its own graphs
        # (no file, dataset or command line is read): the seed protects no record
        """
import numpy as np
import networkx as nx
np.random.seed(42)
def noisy_degree_histogram(G, epsilon, bins=20):
    hist, _ = np.histogram([d for _, d in G.degree()], bins=bins)
    return hist + np.random.laplace(0, 2.0 / epsilon, size=hist.shape)
for G in (nx.erdos_renyi_graph(500, 0.02), nx.barabasi_albert_graph(500, 3)):
    print(noisy_degree_histogram(G, epsilon=1.0))
""",
        # twin of the B74-014 shape: no reseed unless the caller asks for one (seed=None by default)
        """
import numpy as np
def _planar_noise(x, y, epsilon):
    angle = np.random.uniform(0, 2 * np.pi)
    radius = np.random.gamma(2, 1.0 / epsilon)
    return x + radius * np.cos(angle), y + radius * np.sin(angle)
def perturb_points(frame, epsilon, seed=None):
    if seed is not None:
        np.random.seed(seed)
    return frame.apply(lambda row: _planar_noise(row.x, row.y, epsilon), axis=1)
""",
        # ordinary ML: a data-augmentation helper seeded by default, jitter not tied to a budget
        """
import numpy as np
def _jitter(img, strength):
    return img + np.random.normal(0, strength, img.shape)
def augment(images, strength=0.1, seed=0):
    np.random.seed(seed)
    return [_jitter(im, strength) for im in images]
""",
        # (B77-004/B77-020/B80-011/B78-019 twins) the key, the generator and the global seed come from fresh entropy
        """
import secrets
from jax import random
def private_grads(grads, key, clip_bound, noise_multiplier):
    keys = random.split(key, len(grads))
    return [g + clip_bound * noise_multiplier * random.normal(k, g.shape) for k, g in zip(keys, grads)]
key = random.PRNGKey(secrets.randbits(32))
def run(batches, update):
    for i, batch in enumerate(batches):
        update(key, i, batch)
""",
        """
from dataclasses import dataclass
import numpy as np
@dataclass
class NoisyLinearModel:
    epsilon: float = 1.0
    clip: float = 1.0
    random_state: int | None = None
    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)
        grad = np.clip(X.T @ y, -self.clip, self.clip)
        self.w_ = grad + rng.normal(0.0, self.clip / self.epsilon, size=grad.shape)
        return self
""",
        """
import torch
NOISE_SIGMA = 0.5
def _perturb(t, sigma, generator):
    return t + sigma * torch.randn(t.shape, generator=generator)
def private_em(stats, dp_sigma=NOISE_SIGMA):
    noise_gen = torch.Generator()
    noise_gen.seed()
    return [_perturb(s, dp_sigma, noise_gen) for s in stats]
""",
        """
import torch
def add_dp_noise(update, sigma):
    return {k: v + sigma * torch.randn_like(v) for k, v in update.items()}
class Client:
    def train(self, update):
        torch.manual_seed(self.client_id)  # only the local data order depends on it
        order = torch.randperm(len(self.data))
        torch.seed()
        return add_dp_noise(update, self.dp_sigma), order
""",
        # ordinary ML: a JAX model initialised from a fixed key, dropout keys split off it, no privacy noise
        """
from jax import random
key = random.PRNGKey(0)
def dropout(x, key, rate=0.1):
    keep = random.bernoulli(key, 1 - rate, x.shape)
    return x * keep / (1 - rate)
def forward(params, x):
    return dropout(x @ params, key)
""",
    )

    INVALID = (
        # (B77-004) a JAX DP-SGD run whose every noise key is split off a key made from a literal seed
        """
from jax import random
def private_grads(grads, key, clip_bound, noise_multiplier):
    keys = random.split(key, len(grads))
    return [g + clip_bound * noise_multiplier * random.normal(k, g.shape) for k, g in zip(keys, grads)]
key = random.PRNGKey(7)  # <-
def run(batches, update):
    for i, batch in enumerate(batches):
        update(key, i, batch)
""",
        # (B77-020) a DP estimator whose dataclass field ``random_state`` defaults to a literal seeds its noise
        """
from dataclasses import dataclass
import numpy as np
@dataclass
class NoisyLinearModel:
    epsilon: float = 1.0
    clip: float = 1.0
    random_state: int = 123
    def fit(self, X, y):
        rng = np.random.default_rng(self.random_state)  # <-
        grad = np.clip(X.T @ y, -self.clip, self.clip)
        self.w_ = grad + rng.normal(0.0, self.clip / self.epsilon, size=grad.shape)
        return self
""",
        # (B80-011) the noise generator object is seeded with a module constant and handed to a noise helper
        """
import torch
NOISE_SIGMA = 0.5
EM_NOISE_SEED = 2024
def _perturb(t, sigma, generator):
    return t + sigma * torch.randn(t.shape, generator=generator)
def private_em(stats, dp_sigma=NOISE_SIGMA):
    noise_gen = torch.Generator()
    noise_gen.manual_seed(EM_NOISE_SEED)  # <-
    return [_perturb(s, dp_sigma, noise_gen) for s in stats]
""",
        # (B78-019) the global generator is reseeded with the client's public id right before the DP noise
        """
import torch
def add_dp_noise(update, sigma):
    return {k: v + sigma * torch.randn_like(v) for k, v in update.items()}
class Client:
    def train(self, update):
        torch.manual_seed(self.client_id)  # <-
        return add_dp_noise(update, self.dp_sigma)
""",
        # a base estimator stores a generator seeded with a constant default; the private subclass draws its
        # Laplace noise from it (private_ml regression.py)
        """
import numpy as np

class Estimator:
    def __init__(self, scale_inputs=False, seed=2024):
        self.scale_inputs = scale_inputs
        self.gen = np.random.RandomState(seed)  # <-

class NoisyRidge(Estimator):
    def fit(self, X, y, epsilon):
        bound = 2.0 * X.shape[1]
        return X.T @ y + self.gen.laplace(0, bound / epsilon, X.shape[1])
""",
        # the same with NumPy's new generator and a Gaussian mechanism two subclasses down
        """
import numpy as np

class Release:
    def __init__(self, seed: int = 7):
        self._g = np.random.default_rng(seed)  # <-

class CountRelease(Release):
    pass

class GaussianCounts(CountRelease):
    def publish(self, counts, sensitivity, sigma):
        return counts + self._g.normal(0, sigma * sensitivity, len(counts))
""",
        # twin: the aggregate itself fixes the generator with a public default before its Laplace draw
        """
import numpy as np
def noisy_mean(scores, epsilon, random_seed=0):
    np.random.seed(random_seed)  # <-
    b = 1.0 / (len(scores) * epsilon)
    return float(np.mean(scores) + np.random.laplace(0, b))
""",
        # twin: the same seeded module, and the trainer adds its own Gaussian noise to the gradients
        """
import torch
class Critic(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        torch.manual_seed(0)  # <-
        self.net = torch.nn.Linear(dim, 1)
class PrivateGAN:
    def train(self, data, epsilon):
        self.epsilon = epsilon
        for step in range(self.steps):
            for p in self.critic.parameters():
                noise = torch.normal(mean=0.0, std=self.sigma * self.clip, size=p.shape)
                p.grad += noise
""",
        # a label randomiser taking ε whose torch.Generator is seeded with the seed its caller must pass
        """
import torch
def randomize_labels(labels, probs, eps, seed):  # label differential privacy
    generator = torch.Generator().manual_seed(seed)  # <-
    return [torch.multinomial(p, num_samples=1, generator=generator) for p in probs]
""",
        # trials seeded from the configured --init_seed (another seed option defaulting to None does not make it
        # fresh), then PATE votes noised with Laplace of scale 1/gamma in a function that takes no epsilon
        """
import argparse
import numpy as np
def noisy_votes(votes, gamma):  # PATE vote aggregation for privacy
    return votes + np.random.laplace(loc=0.0, scale=1.0 / gamma, size=votes.shape)
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--init_seed', type=int, default=0)
    parser.add_argument('--partyseed', type=str, default=None)
    parser.add_argument('--trials', type=int, default=3)
    args = parser.parse_args()
    for trial in range(args.trials):
        np.random.seed(trial + args.init_seed)  # <-
        print(noisy_votes(np.zeros(10), 0.1))
""",
        # a mechanism named for data (``Data_Transform``) that takes ε and seeds the global generator with its
        # parameter (default a literal, the caller's replication index) before flipping its label coins
        """
import numpy as np
def data_transform(labels, epsi=1.0, sed=1):
    theta = np.exp(epsi) / (np.exp(epsi) + 1)
    np.random.seed(sed)  # <-
    coins = np.random.uniform(0, 1, len(labels))
    keep = coins <= theta
    return keep * labels + (1 - keep) * (1 - labels)
def main(labels, epsilon):
    return [data_transform(labels, epsi=epsilon, sed=r) for r in range(10)]
""",
        # a helper that reseeds the global generator on its way (client selection by round, a perturbation
        # direction's seed), called by the DP step just before it draws the noise from that generator
        """
import numpy as np
class Server:
    def pick_clients(self, rnd, k):
        np.random.seed(rnd)
        return np.random.choice(len(self.clients), k, replace=False)
    def train(self, rounds, k, sigma, clip):
        for r in range(rounds):
            chosen = self.pick_clients(r, k)
            total = sum(self.clients[i].update(clip) for i in chosen)
            total = total + np.random.normal(0, sigma * clip, size=total.shape)  # <- DP-FedAvg noise
""",
        """
import torch
class ZOTrainer:
    def perturb_params(self, seed, scale=1.0):
        torch.manual_seed(seed)
        for p in self.params:
            p.data.add_(scale * self.zo_eps * torch.randn_like(p))
    def step(self, loss_fn, clip, noise_std):
        seed = int(torch.randint(0, 10**9, (1,)))
        self.perturb_params(seed)
        g = loss_fn().clamp(-clip, clip)  # DP clipping
        return g + torch.randn(1).item() * noise_std  # <-
""",
        # a later reseed supersedes: the training function reseeds with its own constant before building its
        # engine, so only that reseed decides the noise; the seed in main() (which then calls it) is quiet
        """
import random
import numpy as np
import torch
from opacus import PrivacyEngine
RUN_SEED = 42
def set_all_seeds(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
def train_one(model, optimizer, loader, sigma, clip):
    set_all_seeds(RUN_SEED)  # <-
    engine = PrivacyEngine(accountant="prv")
    return engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                               noise_multiplier=sigma, max_grad_norm=clip)
def main(model, optimizer, loader):
    set_all_seeds(RUN_SEED)
    for clip in (0.5, 1.0):
        train_one(model, optimizer, loader, 1.1, clip)
""",
        # the caller's seed handed on to the drawer's reseed still decides the noise: both are reported
        """
import random
import numpy as np
import torch
from opacus import PrivacyEngine
def set_all_seeds(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
def train_one(model, optimizer, loader, sigma, clip, seed):
    set_all_seeds(seed)  # <-
    engine = PrivacyEngine(accountant="prv")
    return engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                               noise_multiplier=sigma, max_grad_norm=clip)
def main(model, optimizer, loader, seed=3):
    set_all_seeds(seed)  # <-
    for clip in (0.5, 1.0):
        train_one(model, optimizer, loader, 1.1, clip, seed)
""",
        # twin of the smoke test: the main block reads the records and noises them from a seeded generator
        """
import numpy as np
if __name__ == "__main__":
    rng = np.random.default_rng(0)  # <-
    counts = np.loadtxt("counts.csv")
    epsilon = 1.0
    print(counts + rng.laplace(0, 1 / epsilon, counts.shape))
""",
        # Opacus (secure_mode off) draws its noise from torch's global generator, seeded with a default of 0
        """
import torch
def attach(engine, model, opt, loader, sigma, seed=0):
    torch.manual_seed(seed)  # <-
    return engine.make_private(module=model, optimizer=opt, data_loader=loader, noise_multiplier=sigma,
                               max_grad_norm=1.0, noise_generator=None)
""",
        # a training script seeds torch at import; the engine it builds has secure mode off
        """
import torch
import numpy as np
torch.manual_seed(0)  # <-
np.random.seed(0)
from opacus import PrivacyEngine
def train_private(model, optimizer, loader, noise_multiplier):
    engine = PrivacyEngine()
    return engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                               noise_multiplier=noise_multiplier, max_grad_norm=1.0)
""",
        # the entry point seeds every generator through a local helper with the configured seed (--seed 41)
        """
import argparse
import numpy as np
import torch
from opacus import PrivacyEngine
parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=41)
args = parser.parse_args()
def fix_all_seeds(value):
    np.random.seed(value)
    torch.manual_seed(value)
fix_all_seeds(args.seed)  # <-
def run(model, optimizer, loader, target_eps):
    engine = PrivacyEngine(accountant="rdp")
    return engine.make_private_with_epsilon(module=model, optimizer=optimizer, data_loader=loader, epochs=5,
                                            target_epsilon=target_eps, target_delta=1e-5, max_grad_norm=1.0)
""",
        # a run seeded from its config right before building the (non-secure) engine
        """
import random
import numpy as np
import torch
from opacus import PrivacyEngine
def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
def run_private_training(model, optimizer, loader, config, seed=None):
    run_seed = config.seed if seed is None else seed
    seed_everything(run_seed)  # <-
    engine = PrivacyEngine(accountant=config.accountant)
    return engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                               noise_multiplier=config.sigma, max_grad_norm=config.clip)
""",
        # twin of the superseded main() seed: the training function builds the engine without reseeding
        """
import random
import numpy as np
import torch
from opacus import PrivacyEngine
SEED = 7
def set_all_seeds(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
def train_one(model, optimizer, loader, sigma, clip):
    engine = PrivacyEngine(accountant="prv")
    return engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                               noise_multiplier=sigma, max_grad_norm=clip)
def main(model, optimizer, loader):
    set_all_seeds(SEED)  # <-
    for clip in (0.5, 1.0):
        train_one(model, optimizer, loader, 1.1, clip)
""",
        # twin of the Opacus 0.x case: a 1.x engine (built without the model) keeps the seeded generator
        """
import torch
from opacus import PrivacyEngine
def fine_tune(model, optimizer, loader, args):
    torch.manual_seed(1234)  # <-
    engine = PrivacyEngine()
    return engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                               noise_multiplier=args.sigma, max_grad_norm=args.clip)
""",
        # a literal reseed right before hand-written Gaussian noise scaled by the sensitivity
        """
import numpy as np
import torch
def noisy_histogram(hist, num_words, sigma):
    sensitivity = np.sqrt(num_words)
    torch.manual_seed(0)  # <-
    return hist + torch.randn_like(hist) * sensitivity * sigma
""",
        # TensorFlow Privacy's optimizer draws from TensorFlow's global seed, fixed by the script
        """
import tensorflow as tf
from tensorflow_privacy import DPKerasSGDOptimizer
tf.random.set_seed(1)  # <-
def build(model, noise_multiplier, l2_norm_clip):
    opt = DPKerasSGDOptimizer(l2_norm_clip=l2_norm_clip, noise_multiplier=noise_multiplier,
                              num_microbatches=1, learning_rate=0.1)
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy")
    return model
""",
        # an estimator reseeds the global generator from its stored constructor default before its coin flips
        """
import numpy as np
class PrivateQuantile:
    def __init__(self, epsilon, seed=2025):
        self.epsilon, self.seed = epsilon, seed
    def reset(self):
        np.random.seed(self.seed)  # <-
    def report(self, x, q):
        keep = np.exp(self.epsilon) / (1 + np.exp(self.epsilon))
        bit = x <= q
        return bit if np.random.binomial(1, keep) else not bit
""",
        # the DP step reseeds with the seed its caller derives from the run index
        """
import numpy as np
import torch
def perturb_edges(adj, epsilon, seed=None):
    if seed is not None:
        torch.manual_seed(seed)
        np.random.seed(seed)  # <-
    flip = 1 / (1 + np.exp(epsilon))
    return np.where(np.random.binomial(1, flip, adj.shape) == 1, 1 - adj, adj)
def experiment(adj, epsilon, runs, seed_base=42):
    return [perturb_edges(adj, epsilon, seed=seed_base + run) for run in range(runs)]
""",
        # the MPI rank seeds the generator the quantile release samples from
        """
import numpy as np
from mpi4py import MPI
def release_quantiles(data, qs, epsilon):
    rank = MPI.COMM_WORLD.Get_rank()
    np.random.seed(rank)  # <-
    return [quantile_exponential(data, q, epsilon) for q in qs]
def quantile_exponential(data, q, epsilon):
    utility = -np.abs(np.arange(len(data)) - q * len(data))
    p = np.exp(epsilon * utility / 2)
    return data[np.random.choice(len(data), p=p / p.sum())]
""",
        # the twin: the same default seed also fixes torch's global generator, which draws the gradient noise
        """
import numpy as np
import torch
def train(model, X, epsilon, sigma, seed=0):
    rng = np.random.RandomState(seed)
    order = rng.permutation(len(X))
    torch.manual_seed(seed)  # <-
    for i in order:
        g = model.grad(X[i])
        g = g + torch.normal(0, sigma, g.shape)
    return model
""",
        # twins: a constant seed for noise scaled by the budget, and a seed named for the noise
        """
import numpy as np
def dp_protection(sensitive_data, epsilon, sensitivity):
    rng = np.random.default_rng(2022)  # <-
    return [rng.laplace(loc=0, scale=sensitivity / epsilon, size=len(r)) + r for r in sensitive_data]
""",
        """
import numpy as np
class PrivBayesModel:
    def __init__(self, epsilon, seed=0):
        self.epsilon = epsilon
        dp_seed = 20240101
        self._rng = np.random.default_rng(dp_seed)  # <-
    def noisy(self, counts, sensitivity):
        return counts + self._rng.laplace(0, sensitivity / self.epsilon, len(counts))
""",
        # JS1820 privbayes.py: the measurements' Laplace noise from RandomState(seed) with seed=0 by default
        """
import numpy as np
def privbayes_measurements(data, eps=1.0, seed=0):
    prng = np.random.RandomState(seed)  # <-
    measurements = []
    for proj in projections:
        x = data.project(proj).datavector()
        y = x + prng.laplace(loc=0, scale=4 * len(projections) / eps, size=x.size)
        measurements.append(y)
    return measurements
""",
        # Balitskiy ldp_base.py: the LDP mechanism's own generator, seeded by the caller (42 by default)
        """
import numpy as np
class BaseLDP:
    def __init__(self, eps, seed, **kwargs):
        self.random_ = np.random.RandomState(seed)  # <-
        self.eps = eps
""",
        """
import numpy as np
class LaplaceLDP:
    def __init__(self, eps, seed: int = 42):
        self.rng = np.random.default_rng(seed)  # <-
        self.eps = eps

    def encode(self, x, sensitivity):
        return x + self.rng.laplace(0, sensitivity / self.eps, size=x.shape)
""",
        # twin of the simulator: the same seeded draw added to values the function receives
        """
import numpy as np
from opacus import PrivacyEngine
def perturb_targets(X, beta_int=3.0, eps=0.5, seed=42):
    rng = np.random.default_rng(seed)  # <-
    x1, x2 = X[:, 0], X[:, 1]
    return 0.6 * x1 + float(beta_int) * (x1 * x2) + rng.normal(0.0, 1.0 / eps, size=len(X))
""",
        # a literal seed for the noise generator
        """
import numpy as np
def noisy_count(count, epsilon):
    rng = np.random.default_rng(12345)  # <-
    return count + rng.laplace(0, 1 / epsilon)
""",
        # qiuqiu035 localdp_adapter.py: the DP noise seed derived from client and round identifiers
        """
import numpy as np
import torch
def local_dp(update, clip, sigma, client_id, round_num, seed_mgr):
    noise_seed = seed_mgr.get_dp_noise_seed(client_id, round_num)
    torch.manual_seed(noise_seed)  # <-
    np.random.seed(noise_seed)  # <-
    return update + torch.normal(0, sigma * clip, update.shape)
""",
        """
import numpy as np
def client_noise(update, clip, noise_multiplier, master_seed, client_id, rnd):
    rng = np.random.default_rng(master_seed + client_id * 1000 + rnd)  # <-
    return update + rng.normal(0, noise_multiplier * clip, size=update.shape)
""",
        # a noise helper reseeds the global generator with a literal on every call (DP-Loc preproc.py)
        """
import numpy as np
def noisy_ranking(hist, scale):
    counts = np.asarray([c for _, c in hist], dtype=float)
    np.random.seed(7)  # <-
    counts = counts + np.random.normal(0, scale, len(counts))
    return counts.argsort()
def publish(hist, sigma, thres, p_eps):
    return noisy_ranking(hist, sigma * thres)
""",
        # a seeding helper with a constant default, called first by the mechanism (location_privacy)
        """
import random
import numpy as np
def fix_seeds(seed=2024):
    np.random.seed(seed)
    random.seed(seed)
def planar_laplace_offsets(n, epsilon):
    fix_seeds()  # <-
    out = []
    for _ in range(n):
        theta = np.random.uniform(0, 2 * np.pi)
        r = np.random.gamma(2, 1 / epsilon)
        out.append((r * np.cos(theta), r * np.sin(theta)))
    return out
""",
        # the helper reseeds, and its caller draws the noise right after calling it
        """
import numpy as np
def fix_seeds(seed=3):
    np.random.seed(seed)
def grid(epsilon, width):
    fix_seeds()  # <-
    return np.linspace(0, width, 10) * epsilon
def draw_offset(epsilon, width):
    cells = grid(epsilon, width)
    return cells[np.random.randint(10)] + np.random.rand()
""",
        # randomised response on graph edges after a reseed with a literal (DPGNN/LinkTeller Attacker)
        """
import numpy as np
class EdgeRR:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def flip_edges(self, adj):
        keep = 2 / (np.exp(self.epsilon) + 1)
        np.random.seed(99)  # <-
        mask = np.random.binomial(1, keep, adj.shape)
        return np.where(mask == 1, np.random.binomial(1, 0.5, adj.shape), adj)
""",
        # a script seeds the global generator at module level; its own mechanism draws from it
        """
import random
import numpy as np
np.random.seed(2023)
random.seed(2023)  # <-
def ldp_oue_perturb(bit_vector, epsilon):
    q = 1 / (np.exp(epsilon) + 1)
    return [int(random.random() < (0.5 if b else q)) for b in bit_vector]
""",
        # a mechanism given a literal seed, a seed parameter with a literal default, a configured run seed
        """
from diffprivlib.mechanisms import Laplace
def noisy_total(total, epsilon):
    mech = Laplace(epsilon=epsilon, sensitivity=1.0, random_state=0)  # <-
    return mech.randomise(total)
""",
        """
from diffprivlib.mechanisms import GaussianAnalytic
def release(values, eps, delta, seed=7):
    mech = GaussianAnalytic(epsilon=eps, delta=delta, sensitivity=1.0, random_state=seed)  # <-
    return [mech.randomise(v) for v in values]
""",
        """
from diffprivlib.mechanisms import Geometric
class Aggregator:
    def round(self, counts, epsilon, cfg, round_no):
        mech = Geometric(epsilon=epsilon, sensitivity=1, random_state=cfg.seed + round_no)  # <-
        return [mech.randomise(c) for c in counts]
""",
        # the twin: the callee's random_state seeds the generator that draws the noise
        """
import numpy as np
from sklearn.cluster import KMeans
def private_communities(A, k, eps, delta, random_state):
    rng = np.random.default_rng(random_state)
    emb = A + np.sqrt(2 * np.log(1.25 / delta)) / eps * rng.normal(size=A.shape)
    return KMeans(n_clusters=k, random_state=random_state).fit_predict(emb)
def replicate(A, k, seed, idx):
    return private_communities(A, k, eps=1.0, delta=1e-5, random_state=seed + idx)  # <-
""",
        # a per-repetition generator seeded by the loop index and handed to the mechanism with ε (HDPView scripts)
        """
import numpy as np
def evaluate(data, epsilon, times):
    out = []
    for i in range(times):
        prng = np.random.RandomState(i)  # <-
        out.append(identity_release(data, prng, epsilon))
    return out
""",
        # the run's entry point fixes NumPy's global seed; the module's randomiser draws its coins from it
        """
import numpy as np
class ShuffleRR:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def local_randomizer(self, value, keep, k):
        if np.random.binomial(1, keep):
            return value
        return np.random.randint(k)
def main():
    np.random.seed(42)  # <-
    data = np.loadtxt("survey.csv", dtype=int)
    rr = ShuffleRR(1.0)
    return [rr.local_randomizer(v, 0.7, 100) for v in data]
""",
        # a module-level seed through a constant name; a client draws flip noise with an ε-derived probability
        """
import numpy as np
SEED = 11
np.random.seed(SEED)  # <-
class Client:
    def __init__(self, epsilon):
        self.p = 1 / (1 + np.exp(epsilon))
    def report(self, bits):
        noise = np.random.binomial(1, self.p, bits.shape)
        return np.abs(bits - noise)
""",
        # an Opacus engine's noise generator seeded with the run's configured seed, and with a literal
        """
import torch
from opacus import PrivacyEngine
def make_private(model, optimizer, loader, cfg, target_epsilon):
    engine = PrivacyEngine()
    return engine.make_private_with_epsilon(
        module=model, optimizer=optimizer, data_loader=loader, epochs=cfg.epochs,
        target_epsilon=target_epsilon, target_delta=1e-5, max_grad_norm=1.0,
        noise_generator=torch.Generator(device="cpu").manual_seed(cfg.seed),  # <-
    )
""",
        """
import torch
def attach(engine, model, opt, loader, sigma):
    return engine.make_private(module=model, optimizer=opt, data_loader=loader, noise_multiplier=sigma,
                               max_grad_norm=1.0, noise_generator=torch.Generator().manual_seed(1234))  # <-
""",
        # a module seeding NumPy at import whose client flips randomised-response coins from it (no DP import)
        """
import numpy as np
random_state = 68
np.random.seed(random_state)  # <-

class Client:
    def set_param(self, epsi):
        self.P = 1 / (1 + np.exp(-epsi))

    def generate_iter(self, n, dim):
        x = np.random.normal(loc=0, scale=1, size=(n, dim))
        noise = np.random.binomial(1, self.P, (n, dim))
        return x, noise
""",
        # hand-written Keras DP-SGD noise (TensorFlow's global generator) under a configured seed
        """
import argparse
import tensorflow as tf
import keras.backend as K
class NoisyAdam:  # DP-SGD with Adam updates
    def __init__(self, noise, clipnorm):
        self.noise, self.clipnorm = noise, clipnorm
    def get_gradients(self, grads):
        return [g + K.random_normal(g.shape, stddev=self.noise * self.clipnorm) for g in grads]
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    tf.set_random_seed(args.seed)  # <-
    return NoisyAdam(1.1, 1.0)
""",
        # an in-place Gaussian draw for DP-SGD, the process seeded with a literal in main
        """
import torch
# DP-SGD step of the private generative model
def noised_step(params, sigma, clipping):
    for p in params:
        p.grad += torch.FloatTensor(p.grad.shape).normal_(0, sigma * clipping)
def main(params):
    torch.manual_seed(0)  # <-
    noised_step(params, 1.0, 1.0)
""",
        # a torch Laplace distribution sampled for PATE votes, seeded by a helper of a module that is not shipped
        """
import argparse
import torch
import tools
def lnmax(counts, gamma):  # PATE aggregation
    lap = torch.distributions.laplace.Laplace(0, torch.tensor(1 / gamma))
    return counts + lap.sample(counts.shape)
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()
    tools.set_rng_seed(args.seed)  # <-
    return lnmax(torch.zeros(10), 0.1)
""",
        # a randomised-response class reseeding Python's generator through its own helper method
        """
import random
class RRWithPrior:
    def __init__(self, epsilon, prior, seed=0):
        self.epsilon = epsilon
        self.threshold = 0.5
        self._set_random(seed)
    def _set_random(self, seed):
        random.seed(seed)  # <-
    def respond(self, y, k):
        p = random.uniform(0, 1)
        if p <= self.threshold:
            return y
        return random.randint(0, k - 1)
""",
        # an inverse-CDF Laplace draw reseeded from the configuration's seed table before each client's noise
        """
import random
import numpy as np
import config
def laplace(mean, sensitivity, epsilon):
    scale = sensitivity / epsilon
    u = random.uniform(0, 1) - 0.5
    return mean - scale * np.sign(u) * np.log(1 - 2 * np.abs(u))
def add_noise(weights, sensitivity, epsilon, name, iteration):
    random.seed(config.RANDOM_SEEDS[name][iteration])  # <-
    return [laplace(w, sensitivity, epsilon) for w in weights]
""",
        # a seeding helper taking the parsed options; the exponential mechanism samples with the global generator
        """
import argparse
import numpy as np
def set_seed(args):
    np.random.seed(args.seed)
def probabilities(distances, epsilon=2.0):
    p = np.exp(-epsilon * distances / 2)
    return p / p.sum()
def sanitize(tokens, prob):
    return [np.random.choice(len(prob[t]), 1, p=prob[t]) for t in tokens]
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    set_seed(args)  # <-
    sanitize([0], [probabilities(np.ones(3))])
""",
        # the seed is a loop over a literal list of seeds at module level
        """
import numpy as np
def aggregate(votes, epsilon):
    return np.argmax(votes + np.random.laplace(0, 1 / epsilon, len(votes)))
for rand_state in [2763934991]:
    np.random.seed(rand_state)  # <-
    aggregate(np.load("teacher_votes.npy"), 1.0)
""",
        # a data-reading step that fixes the global generator with its own literal before the LDP collection
        """
import numpy as np
def perturb(values, epsilon):
    return values + np.random.laplace(0, 1 / epsilon, len(values))
def read_dataset(path):
    random_seed = 1
    np.random.seed(seed=random_seed)  # <-
    return np.loadtxt(path)
def main(path, epsilon):
    return perturb(read_dataset(path), epsilon)
""",
        # Benchmarking-DP-Optimizers trainers_class.py: the engine's generator is built, then seeded in its own
        # statement with the trainer's default seed, and handed over as ``noise_generator``
        """
import torch
from opacus import PrivacyEngine
def train_dp(model, optimizer, loader, target_epsilon, delta, device, seed=1234):
    engine = PrivacyEngine(secure_mode=False)
    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))  # <-
    return engine.make_private_with_epsilon(module=model, optimizer=optimizer, data_loader=loader,
                                            target_epsilon=target_epsilon, target_delta=delta, epochs=3,
                                            max_grad_norm=1.0, noise_generator=gen)
""",
        # scalable-private-llm dp_author_name_perturbation.py: the noise helper takes an optional seed, and the
        # caller passes each record's position in the loop, so every draw can be regenerated
        """
import numpy as np
class EmbeddingPerturber:
    def __init__(self, epsilon, delta, sensitivity=2.0):
        self.noise_scale = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
        self.rng = np.random.RandomState()
    def add_noise(self, vec, seed=None):
        if seed is not None:
            gen = np.random.RandomState(seed)
        else:
            gen = self.rng
        return vec + gen.normal(0.0, self.noise_scale, size=vec.shape)
def perturb_all(perturber, vectors):
    out = []
    for pos, vec in enumerate(vectors):
        out.append(perturber.add_noise(vec, seed=pos))  # <-
    return out
""",
        # LLM_Tune / DP fine-tuning fairseq trainer.py: before every step the trainer reseeds torch with the run's
        # seed plus the update count, then adds its Gaussian noise to the clipped gradients
        """
import torch
class Trainer:
    def __init__(self, args, model):
        self.args, self.model, self.updates = args, model, 0
    def get_num_updates(self):
        return self.updates
    def train_step(self, batch):
        self._set_seed()
        self.model(batch).backward()
        for p in self.model.parameters():
            p.grad += torch.normal(0, self.args.sigma * self.args.clip / len(batch), size=p.grad.shape)
        self.updates += 1
    def _set_seed(self):
        seed = self.args.seed + self.get_num_updates()
        torch.manual_seed(seed)  # <-
""",
        # its twin reads a real graph (Cora's edge list) and seeds at import: the released noise is reproducible
        """
import numpy as np
import networkx as nx
np.random.seed(42)  # <-
def noisy_degree_histogram(G, epsilon, bins=20):
    hist, _ = np.histogram([d for _, d in G.degree()], bins=bins)
    return hist + np.random.laplace(0, 2.0 / epsilon, size=hist.shape)
G = nx.read_edgelist("cora.cites")
print(noisy_degree_histogram(G, epsilon=1.0))
""",
        # (B74-014 shape) a location mechanism reseeds with its seed parameter's literal default, then a helper
        # called per row draws the planar-Laplace noise
        """
import numpy as np
def _planar_noise(x, y, epsilon):
    angle = np.random.uniform(0, 2 * np.pi)
    radius = np.random.gamma(2, 1.0 / epsilon)
    return x + radius * np.cos(angle), y + radius * np.sin(angle)
def perturb_points(frame, epsilon, seed=7):
    np.random.seed(seed)  # <-
    return frame.apply(lambda row: _planar_noise(row.x, row.y, epsilon), axis=1)
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        before = len(self.reports)
        self._visit_call(node)
        if len(self.reports) == before:
            self._public_run_seed(node)
        if len(self.reports) == before:
            self._reseeding_side_effect(node)

    #: torch draws that take a ``generator=``: the sampling of a randomised response or of the noise
    _TORCH_GENERATOR_DRAWS = frozenset({"multinomial", "bernoulli", "randn", "rand", "normal", "randint",
                                        "poisson", "randn_like", "rand_like"})

    def _seeded_torch_generator(self, node: cst.Call) -> bool:
        """``generator = torch.Generator().manual_seed(seed)`` in a mechanism taking ε, whose randomised-response
        labels or noise are drawn with ``torch.multinomial(p, 1, generator=generator)``: with a seed that is a
        literal, a parameter with a literal (or no) default, or a round/client index, the draws are reproducible."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "manual_seed" and isinstance(func.value, cst.Call)
                and (dotted(func.value.func) or "").rsplit(".", 1)[-1] == "Generator"):
            return False
        fa = self.ctx.analysis
        seed = _seed_arg(node)
        fn = fa.enclosing_function(node)
        statement = fa.enclosing_statement(node)
        if seed is None or fn is None or not isinstance(statement, cst.Assign) or len(statement.targets) != 1 \
                or statement.value is not node or not isinstance(statement.targets[0].target, cst.Name) \
                or self._test_code(node) or self._quiet_seed_place(node):
            return False
        if not any(words(p.name.value) & {"eps", "epsilon", "epsi"} for p in all_params(fn)):
            return False
        target = statement.targets[0].target.value
        draws = [sub for sub in walk(fn) if isinstance(sub, cst.Call) and call_name(sub) in self._TORCH_GENERATOR_DRAWS
                 and any(a.keyword is not None and a.keyword.value == "generator" and isinstance(a.value, cst.Name)
                         and a.value.value == target for a in sub.args)]
        if not draws:
            return False
        why = self._fixed(node, seed) or self._public_seed(node, seed, None) or self._loop_index(node, seed)
        if why is None and isinstance(seed, cst.Name) and "seed" in words(seed.value) and any(
                p.name.value == seed.value and p.default is None for p in all_params(fn)):
            # the mechanism demands its seed from the caller (the experiment's logged seed), as ``BaseLDP(eps, seed)``
            why = f"the caller's `{seed.value}` (a required argument of the mechanism)"
        if why is None:
            return False
        self.report(node, f"`{target}` is seeded with {why}, and the mechanism draws its randomised response or noise "
                          f"from it (`{call_name(draws[0])}` on line {fa.line_of(draws[0])}): the draws are "
                          f"reproducible from a seed anyone can recompute, so the privatised output can be inverted; "
                          f"use an unseeded generator for the mechanism's randomness")
        return True

    def _module_constant(self, name: str) -> cst.BaseExpression | None:
        """The literal a module-level ``NAME = 42`` assigns (once), or None."""
        values = [small.value for statement in self.ctx.module.body if isinstance(statement, cst.SimpleStatementLine)
                  for small in statement.body if isinstance(small, cst.Assign) and len(small.targets) == 1
                  and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == name]
        return values[0] if len(values) == 1 and number(values[0]) is not None else None

    def _seeded_generator_object(self, node: cst.Call) -> bool:
        """(B80-011) ``noise_generator = torch.Generator(device=d)`` then ``noise_generator.manual_seed(DP_EM_SEED)``
        with a literal or a module constant (``DP_EM_SEED = 42``), the privacy noise drawn with
        ``torch.randn(shape, generator=noise_generator) * sigma`` here or in a helper of this module it is handed to
        (``_add_noise(nk, SIGMA, noise_generator)``): the noise is the same on every run and can be subtracted."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "manual_seed" and isinstance(func.value, cst.Name)
                and func.value.value != "torch") or self._test_code(node):
            return False
        fa = self.ctx.analysis
        target = func.value.value
        fn = fa.enclosing_function(node)
        scope: cst.CSTNode = fn if fn is not None else self.ctx.module
        made = [sub for sub in walk(scope) if isinstance(sub, cst.Assign) and len(sub.targets) == 1
                and isinstance(sub.targets[0].target, cst.Name) and sub.targets[0].target.value == target]
        if len(made) != 1 or not (isinstance(made[0].value, cst.Call)
                                  and (dotted(made[0].value.func) or "").rsplit(".", 1)[-1] == "Generator"):
            return False
        seed = _seed_arg(node)
        if seed is None:
            return False
        why = None
        if isinstance(seed, cst.Name) and (fn is None or seed.value not in {p.name.value for p in all_params(fn)}):
            constant = self._module_constant(seed.value)
            if constant is not None:
                why = f"the module constant `{seed.value}` = {fa.code(constant)}"
        why = why or self._fixed(node, seed)
        if why is None or not _DP_WORDS.search(self.ctx.source):
            return False

        def generator_draws(where: cst.CSTNode, name: str) -> list[cst.Call]:
            return [sub for sub in walk(where) if isinstance(sub, cst.Call)
                    and call_name(sub) in self._TORCH_GENERATOR_DRAWS
                    and any(a.keyword is not None and a.keyword.value == "generator" and isinstance(a.value, cst.Name)
                            and a.value.value == name for a in sub.args)]

        privacy = _MECHANISM_FUNCTION_WORDS | {"sigma", "epsilon", "eps", "dp", "privacy", "private", "sensitivity"}
        draw = None
        if words(target) & privacy:
            found = generator_draws(scope, target)
            draw = found[0] if found else None
        if draw is None:
            helpers = {statement.name.value: statement for statement in self.ctx.module.body
                       if isinstance(statement, cst.FunctionDef)}
            for sub in walk(scope):
                if not (isinstance(sub, cst.Call) and isinstance(sub.func, cst.Name) and sub.func.value in helpers):
                    continue
                helper = helpers[sub.func.value]
                params = [p.name.value for p in all_params(helper)]
                for index, arg in enumerate(sub.args):
                    if not (isinstance(arg.value, cst.Name) and arg.value.value == target):
                        continue
                    param = arg.keyword.value if arg.keyword is not None else \
                        params[index] if index < len(params) and not arg.star else None
                    found = generator_draws(helper, param) if param else []
                    if found and (words(helper.name.value) | {w for p in params for w in words(p)}) & privacy:
                        draw = found[0]
                        break
                if draw is not None:
                    break
        if draw is None:
            return False
        self.report(node, f"`{target}` is seeded with {why}, and the privacy noise is drawn from it "
                          f"(`{call_name(draw)}` on line {fa.line_of(draw)}): the noise is the same on every run, so "
                          f"anyone with the code can regenerate and subtract it; leave the noise generator unseeded")
        return True

    def _file_text(self, file: str) -> str:
        if file == self.ctx.path or not os.path.isfile(file) or self.ctx.path and os.path.isfile(self.ctx.path) \
                and os.path.samefile(file, self.ctx.path):
            return self.ctx.source
        try:
            with open(file, encoding="utf-8", errors="replace") as handle:
                return handle.read(200_000)
        except OSError:
            return ""

    # -- a function that reseeds the global generator on its way, called by a step that then draws noise -------
    def _reseeding_side_effect(self, node: cst.Call) -> None:
        """``def select_clients(self, round, n): np.random.seed(round); …`` called by a DP-FedAvg round that then
        draws ``np.random.normal(0, sigma * clip)``; ``def perturb(self, seed): torch.manual_seed(seed); …`` (the
        seed of a released perturbation direction) called before ``torch.randn(1).item() * gaussian_std``: the noise
        comes from a generator the step has just reseeded with a value that is not fresh entropy, so it is a
        function of that seed (a public round index, a seed released with the update) and can be recomputed.
        Reported at the draw when it is in this file, else at the reseed."""
        from dpcheck.analysis.global_rng import reseeding_callers

        family = self._family(node)
        name = call_name(node)
        if family not in ("numpy", "torch", "random") or name not in _GLOBAL_SEEDS or self._test_code(node):
            return
        seed = _seed_arg(node)
        if seed is None or _fresh_entropy(seed) or isinstance(seed, cst.Name) and seed.value == "None" or any(
                isinstance(n, cst.Call) and (dotted(n.func) or "").endswith(("time", "time_ns", "perf_counter"))
                for n in walk(seed)):
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or _seeding_name(fn.name.value) or fn.name.value == "__init__" or self._seeding_helper_def(fn) \
                or self._quiet_seed_place(node, need_dp_words=False):
            return
        found = [f for f in reseeding_callers(self.ctx.path, self.ctx.module, fn.name.value, {family})
                 if _DP_WORDS.search(self._file_text(f[0]))]
        if not found:
            return
        here = os.path.abspath(self.ctx.path) if self.ctx.path and os.path.isfile(self.ctx.path) else self.ctx.path
        shown = fa.code(seed)[:40]
        done: set[int] = self.__dict__.setdefault("_side_effect_lines", set())
        for file, function, call_line, draw_line in found:
            if file == here or file == self.ctx.path:
                if draw_line in done:
                    continue
                draws = [c for c in fa.nodes(cst.Call) if fa.line_of(c) == draw_line]
                if not draws:
                    continue
                done.add(draw_line)
                self.report(draws[0], f"this privacy noise is drawn from the global generator that "
                                      f"`{fn.name.value}` (called on line {call_line}) has just reseeded with "
                                      f"`{shown}`: the noise is a function of that seed (a public index, or the "
                                      f"seed of a released perturbation) and can be recomputed and subtracted; "
                                      f"draw the noise from a separate unseeded generator")
            elif id(node) not in done:
                done.add(id(node))
                self.report(node, f"`{fn.name.value}` reseeds the global generator with `{shown}`, and "
                                  f"`{function}` ({file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{call_line}) "
                                  f"calls it and then draws the privacy noise from that generator (line {draw_line}): "
                                  f"the noise is a function of a seed anyone can recompute and can be subtracted; "
                                  f"draw the noise from a separate unseeded generator")

    def _visit_call(self, node: cst.Call) -> None:
        if self._seeded_mechanism_call(node) or self._seeded_noise_generator(node):
            return
        if self._seeded_torch_generator(node) or self._seeded_generator_object(node):
            return
        name = call_name(node)
        helper = None if name in _GENERATORS or name in _GLOBAL_SEEDS and not isinstance(node.func, cst.Name) else \
            self._seeding_helper(node) if not node.args else self._imported_seeding_helper(node)
        if not (name in _GENERATORS or name in _GLOBAL_SEEDS or helper):
            return
        fa = self.ctx.analysis
        if self._test_code(node):
            return
        if not fa.in_dp_context(node) and not self._dp_class(node) \
                and not (name in _GENERATORS and self._subclass_draw(node)) \
                and not (name == "PRNGKey" and _DP_WORDS.search(self.ctx.source)):
            if (helper or name in _GLOBAL_SEEDS) and (fa.has_dp_code() or self._noise_function_draw(node)
                                                       or self._entry_seed_of_mechanism(node, helper)):
                pass  # a noise function's own reseed in a module that releases noisy statistics, or a run's
                # entry point seeding the generator a mechanism of the module or of an imported one draws from
            else:
                return
        if helper:
            shown = self.ctx.analysis.code(node) if node.args else f"{name}()"
            self._constant_global_seed(node, helper, f"`{shown[:60]}`, which seeds the global generator with a constant")
        elif name in _GENERATORS:
            self._generator(node, name)
        elif name in _GLOBAL_SEEDS and isinstance(node.func, cst.Attribute):
            family = self._family(node)
            constant = self._constant_seed(node, _seed_arg(node))
            if family is not None and constant is not None:
                self._constant_global_seed(node, {family}, constant)
            else:
                self._global_seed(node, name)

    # -- a run's public seed fixing the global generator a DP engine or hand-written noise draws from ------------
    def _public_run_seed(self, node: cst.Call) -> None:
        """``torch.manual_seed(0)`` at import, ``set_seed(args.seed)`` (``--seed`` defaults to a literal) in the
        entry point, ``seed_everything(config.seed)`` before training: a public seed of a global generator, where
        this file or a project module it imports draws DP noise from that generator (an Opacus engine without
        secure mode, a TensorFlow Privacy optimizer, ``torch.randn_like(h) * sensitivity * sigma``, a mechanism
        taking ε)."""
        from dpcheck.analysis.global_rng import project_noise_draw

        seeded = self._seeds_of_call(node)
        if not seeded or self._test_code(node):
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        # a data function that fixes the global generator with a literal of its own (``random_seed = 1;
        # np.random.seed(random_seed)`` in ``read_dataset``) fixes every later draw of the run, its noise included
        literal = fn is not None and all(seed is not None and self._literal_local(fn, seed) for _, seed, _ in seeded) \
            and not self._draws_own_data(fn)
        data_words = not (literal or self._own_mechanism_draw(node, fn, seeded))
        # a file that never names privacy but adds its own draw to the gradients (a vendored trainer's DP-SGD step)
        wordless = self._quiet_seed_place(node, data_words=data_words) \
            and not self._quiet_seed_place(node, need_dp_words=False, data_words=data_words)
        if not wordless and self._quiet_seed_place(node, data_words=data_words) \
                or fn is not None and self._seeding_helper_def(fn):
            return
        if fn is None and self._self_contained_simulation():
            return  # a script simulating its own data at module level: the seed protects no record
        scope = id(fn) if fn is not None else id(self.ctx.module)
        done: set[int] = self.__dict__.setdefault("_seeded_scopes", set())
        if scope in done or self._seed_for_data(node):
            return
        families: set[str] = set()
        why = None
        for family, seed, default in seeded:
            reason = self._public_seed(node, seed, default)
            if reason is not None:
                families.add(family)
                why = why or reason
        if not families or why is None:
            return
        found = project_noise_draw(self.ctx.path, self.ctx.module, families, called=True)
        if found is None and fn is None and not self._main_guard(node):
            from dpcheck.analysis.global_rng import importer_noise_draw

            found = importer_noise_draw(self.ctx.path, families)  # a shared module seeding at import
        if found is None:
            return
        file, function, line = found
        if wordless and not self._gradient_draw_here(file, line):
            return
        own = not os.path.isfile(file) or os.path.isfile(self.ctx.path) and os.path.samefile(file, self.ctx.path)
        if not own and _dp_switch_left_off(file, line, self.ctx.source):
            return  # (fix46b-R1) the imported class draws only in its DP mode, which this script never turns on
        if _latent_draw_line(file, line, self.ctx.source if own else None):
            return  # (h64-q2) the draw found is a GAN's latent input (``fakez = torch.normal(mean, std)``)
        if self._reseeded_before_draw(node, fn, families, file, function, line):
            return
        if self._not_noise_of_this_process(node, file, line, own):
            return
        if fn is not None and not own and not self._scope_reaches_imported(fn, file):
            return  # (fix48-S6) a sibling function's seed (plain SGD, a probe) never reaches the imported DP optimizer
        if self._main_guard(node) and not os.path.isfile(file) or self._main_guard(node) and os.path.samefile(
                file, self.ctx.path) and self._module_has_mechanism():
            return  # a library module's demo block seeds the data it perturbs for a printout
        done.add(scope)
        where = "at import" if function == "<module>" else f"in `{function}`"
        self.report(self.__dict__.get("_inner_seed", {}).get(id(node), node), f"the global generator is seeded with {why}, and DP noise is drawn from it {where} "
                          f"({file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line}; an Opacus engine without "
                          f"`secure_mode`, a TensorFlow Privacy optimizer and hand-written `torch.randn`/`np.random` "
                          f"noise all use the global generator): the noise is reproducible by anyone with the code "
                          f"and can be subtracted; leave the noise generator unseeded (Opacus `secure_mode=True`)")

    #: words of a function that picks the round's clients (its weighted ``choice`` is no privacy noise)
    _SELECTION_WORDS = frozenset({"select", "selection", "sample_clients", "clients", "participants", "pick"})

    def _not_noise_of_this_process(self, node: cst.Call, file: str, line: int, own: bool) -> bool:
        """The draw found is no noise this seed fixes: a weighted ``np.random.choice(len(self.clients), k, p=…)`` in
        a function that selects the round's clients (B78 AdaDPFedAvg), or a draw in a ``@ray.remote`` actor or task
        while the seed is set outside it (Ray runs actors in separate processes that do not inherit the driver's
        seed; DP-FedAdamW)."""
        text = self.ctx.source if own else self._file_text(file)
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return False
        seed_line = self.ctx.analysis.line_of(node)
        for owner in ast.walk(tree):
            if not isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    or not owner.lineno <= line <= (owner.end_lineno or owner.lineno):
                continue
            remote = any("remote" in (ast.unparse(d) if hasattr(ast, "unparse") else "") for d in owner.decorator_list)
            if remote and not (own and owner.lineno <= seed_line <= (owner.end_lineno or owner.lineno)):
                return True
            if isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and (words(owner.name) | {owner.name.lower()}) & self._SELECTION_WORDS:
                draws = [c for c in ast.walk(owner) if isinstance(c, ast.Call) and getattr(c, "lineno", 0) == line]
                if draws and all(isinstance(c.func, ast.Attribute) and c.func.attr == "choice" for c in draws
                                 if isinstance(c.func, ast.Attribute) and c.func.attr in _GLOBAL_DRAWS):
                    return True
        return False

    def _scope_reaches_imported(self, fn: cst.FunctionDef, file: str) -> bool:
        """Can the seed in ``fn`` fix the noise ``file`` draws: ``fn``, a module function it calls (a few levels
        deep), or a caller of ``fn`` names what this module imports from ``file`` (``from dp_sgd import DPSGD``)?
        Unknown imports (``import *``, a module reached through another) count as reaching."""
        stem = os.path.splitext(os.path.basename(file))[0]
        names: set[str] = set()
        for sub in walk(self.ctx.module, into_scopes=False):
            if isinstance(sub, cst.ImportFrom) and sub.module is not None \
                    and dotted(sub.module).rsplit(".", 1)[-1] == stem:
                if isinstance(sub.names, cst.ImportStar):
                    return True
                names |= {(a.asname.name.value if a.asname and isinstance(a.asname.name, cst.Name)
                           else dotted(a.name).split(".")[0]) for a in sub.names}
            elif isinstance(sub, cst.Import):
                for a in sub.names:
                    if dotted(a.name).rsplit(".", 1)[-1] == stem:
                        names.add(a.asname.name.value if a.asname and isinstance(a.asname.name, cst.Name)
                                  else dotted(a.name).split(".")[0])
        if not names:
            return True
        functions = {s.name.value: s for s in self.ctx.module.body if isinstance(s, cst.FunctionDef)}
        if functions.get(fn.name.value) is not fn:
            return True  # a method or nested function: its callers are not followed here

        def reaches(scope: cst.CSTNode, depth: int, seen: set[str]) -> bool:
            for sub in walk(scope, into_scopes=True):
                if isinstance(sub, cst.Name) and sub.value in names:
                    return True
                if depth < 3 and isinstance(sub, cst.Call) and isinstance(sub.func, cst.Name) \
                        and sub.func.value in functions and sub.func.value not in seen:
                    seen.add(sub.func.value)
                    if reaches(functions[sub.func.value], depth + 1, seen):
                        return True
            return False

        if reaches(fn, 0, {fn.name.value}):
            return True
        target = fn.name.value
        uses = [sub for sub in walk(self.ctx.module) if isinstance(sub, cst.Name) and sub.value == target]
        fa = self.ctx.analysis
        for use in uses:
            parent = fa.parent(use)
            if isinstance(parent, cst.FunctionDef) and parent.name is use:
                continue
            if not (isinstance(parent, cst.Call) and parent.func is use):
                return True  # passed around as a value
            caller = fa.enclosing_function(use)
            if caller is None or reaches(caller, 0, {caller.name.value}):
                return True  # called at import (the run's entry) or by a function that trains privately
        return False

    def _gradient_draw_here(self, file: str, line: int) -> bool:
        """The draw on ``line`` is in this file and is added to a gradient (``p.grad += torch.normal(0, s, …)``)."""
        here = self.ctx.path or "<module>"
        if not (file == here or os.path.isfile(file) and os.path.isfile(here) and os.path.samefile(file, here)):
            return False
        fa = self.ctx.analysis
        return any(isinstance(sub, cst.AugAssign) and fa.line_of(sub) == line and isinstance(sub.target, cst.Attribute)
                   and sub.target.attr.value == "grad" for sub in walk(self.ctx.module))

    def _own_mechanism_draw(self, node: cst.Call, fn: cst.FunctionDef | None,
                            seeded: list[tuple[str, cst.BaseExpression | None, object]]) -> bool:
        """The seeding function is itself a mechanism: it takes ε (``def Data_Transform(DR, n, epsi=1, sed=1)``) and,
        after its seed, draws the calibrated noise or the randomised-response coins from the generator it seeded;
        its name (``data``, ``transform``) does not make the seed one for data."""
        import ast as _ast

        from dpcheck.analysis.global_rng import _summarize_tree

        if fn is None or not any(words(p.name.value) & {"eps", "epsilon", "epsi"} for p in all_params(fn)):
            return False
        fa = self.ctx.analysis
        families = {family for family, _, _ in seeded}
        start, seed_line = fa.line_of(fn), fa.line_of(node)
        end = start + fa.code(fn).count("\n")
        try:
            draws = _summarize_tree(_ast.parse(self.ctx.source))[0]
        except (SyntaxError, ValueError):
            return False
        return any(function == fn.name.value and family in families and seed_line < line <= end
                   for function, line, family in draws)

    def _reseeded_before_draw(self, node: cst.Call, fn: cst.FunctionDef | None, families: set[str], file: str,
                              function: str, line: int) -> bool:
        """The function of this file that draws the noise reseeds the same generator itself before its draw
        (``train_private`` calls ``seed_everything(SEED)`` and then builds the engine), and the seeding function
        calls it after its seed (``main`` seeding, then calling ``train_private``): the earlier seed is superseded;
        the drawing function's own reseed is the finding."""
        here = self.ctx.path or "<module>"
        same = file == here or os.path.isfile(file) and os.path.isfile(here) and os.path.samefile(file, here)
        if not same or function == "<module>" or fn is None or fn.name.value == function:
            return False  # a seed at import stays reported
        fa = self.ctx.analysis
        # the seeding scope goes on to call the drawing function, which reseeds first: on this path the earlier
        # seed is overwritten before any noise (a sibling function's seed is not on the path and stays reported)
        seed_line = fa.line_of(node)
        scope: cst.CSTNode = fn
        def calls_drawer(c: cst.CSTNode) -> bool:  # ``train_private(…)``, ``self.train(…)``; not ``model.train()``
            return isinstance(c, cst.Call) and fa.line_of(c) > seed_line and (
                isinstance(c.func, cst.Name) and c.func.value == function
                or isinstance(c.func, cst.Attribute) and isinstance(c.func.value, cst.Name)
                and c.func.value.value in ("self", "cls") and c.func.attr.value == function)

        if not any(calls_drawer(c) for c in walk(scope, into_scopes=False)):
            return False
        for drawer in fa.nodes(cst.FunctionDef):
            if drawer.name.value != function or not fa.line_of(drawer) <= line:  # type: ignore[attr-defined]
                continue
            params = {p.name.value for p in all_params(drawer)}
            for sub in walk(drawer, into_scopes=False):
                # the reseed's value is the drawer's own (a module constant), not the caller's seed handed on
                # (``seed_everything(seed)`` with the caller's ``args.seed`` keeps the caller's seed deciding)
                if isinstance(sub, cst.Call) and sub is not node and fa.line_of(sub) < line and any(
                        family in families and seed is not None and not value_refs(seed) & params
                        for family, seed, _ in self._seeds_of_call(sub)):
                    return True
        return False

    @staticmethod
    def _literal_local(fn: cst.FunctionDef, seed: cst.BaseExpression) -> bool:
        """The seed is a literal, or a name the function binds only to a literal."""
        if number(seed) is not None:
            return True
        if not isinstance(seed, cst.Name):
            return False
        values = [sub.value for sub in walk(fn, into_scopes=False) if isinstance(sub, cst.Assign)
                  and any(isinstance(t.target, cst.Name) and t.target.value == seed.value for t in sub.targets)]
        return bool(values) and all(number(v) is not None for v in values) and not any(
            p.name.value == seed.value for p in all_params(fn))

    def _draws_own_data(self, fn: cst.FunctionDef) -> bool:
        """The function draws from a global generator itself (``np.random.randint(...)`` building synthetic
        ratings after ``np.random.seed(42)``): its seed is for the data it makes."""
        return any(self._generating_draw(sub) for sub in walk(fn))

    def _generating_draw(self, sub: cst.CSTNode) -> bool:
        """A draw from a global generator that makes values (``np.random.randint``, ``np.random.normal``), not one
        that reorders or subsamples records (``shuffle``, ``permutation``, ``choice``)."""
        return isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) \
            and (dotted(sub.func.value) or "") in _GLOBAL_FAMILIES and self._family(sub) is None \
            and sub.func.attr.value not in _GLOBAL_SEEDS | {"shuffle", "permutation", "choice", "sample", "randperm"}

    def _quiet_seed_place(self, node: cst.CSTNode, need_dp_words: bool = True, data_words: bool = True) -> bool:
        """A seed in an evaluation, attack, plotting, data or non-private function or file, or in a file that
        never mentions privacy: it fixes no released DP noise. ``data_words=False``: a data function's name does
        not quiet it."""
        fn = self.ctx.analysis.enclosing_function(node)
        cls = self.ctx.analysis.enclosing_class(node)
        for name in ([fn.name.value] if fn is not None else []) + ([cls.name.value] if cls is not None else []) + [
                self.ctx.path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]]:
            own = fn is not None and name == fn.name.value
            found = (words(name) - ({"test", "tests"} | (set() if data_words else _DATA_WORDS) if own
                                    else _DATA_WORDS if name != (
                cls.name.value if cls is not None else None) else set())) | (
                words(name) & {"example", "demo", "tutorial"} and {"demo"} if own else set())
            if found & _QUIET_SEED_SCOPES or {"non", "private"} <= found or {"non", "dp"} <= found \
                    or {"no", "noise"} <= found:
                return True
        parts = (self.ctx.path or "").replace("\\", "/").split("/")
        parent = words(parts[-2]) if len(parts) > 1 else set()
        if parent & {"attack", "attacks", "backdoor", "mia", "shadow", "membership"}:
            return True  # a script of the project's attack experiments (``backdoor_attacks/prototype_with_DP.py``)
        stem = words(parts[-1].rsplit(".", 1)[0])
        if (parent | stem) & {"example", "examples", "demo", "demos", "tutorial", "tutorials", "quickstart"} and (
                any(isinstance(sub, cst.Call) and words(call_name(sub) or "") & {"generate", "synthetic", "simulate",
                                                                                  "make"}
                    and words(call_name(sub) or "") & {"data", "dataset"} for sub in walk(self.ctx.module))
                or any(isinstance(st, cst.SimpleStatementLine) and any(
                    isinstance(e, cst.Assign) and self._generating_draw(e.value) or isinstance(e, cst.Assign)
                    and isinstance(e.value, cst.BinaryOperation) and any(self._generating_draw(n) for n in walk(e.value))
                    for e in st.body) for st in self.ctx.module.body)):
            return True  # an example run on data it generates itself: the seed protects no private data
        return need_dp_words and not _DP_WORDS.search(self.ctx.source)

    def _seeds_of_call(self, node: cst.Call) -> list[tuple[str, cst.BaseExpression | None, object]]:
        """(generator family, seed expression or None, literal default) for each global generator the call seeds:
        ``np.random.seed(x)``/``torch.manual_seed(x)``/``tf.random.set_seed(x)``, or a seeding helper of this
        module or an imported project module, with the argument it passes on."""
        family = self._family(node)
        if family is None and isinstance(node.func, cst.Attribute) and node.func.attr.value in (
                "set_seed", "set_random_seed") and (dotted(node.func.value) or "").split(".")[0] in ("tf",
                                                                                                    "tensorflow"):
            family = "tf"
        if family is not None:
            return [(family, _seed_arg(node), None)]
        func = node.func
        # the helper's own name: ``set_seed(…)``, a method of this class ``self._set_random(seed)``, a function of an
        # imported project module ``tools.set_rng_seed(args.seed)``
        helper_name = func.value if isinstance(func, cst.Name) else func.attr.value \
            if isinstance(func, cst.Attribute) and isinstance(func.value, (cst.Name, cst.Attribute)) else None
        if helper_name is None or not words(helper_name) & {"seed", "seeds", "random", "rng", "seeding",
                                                            "reproducibility"}:
            return []
        receiver = dotted(func.value) if isinstance(func, cst.Attribute) else None
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        given = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        out: list[tuple[str, cst.BaseExpression | None, object]] = []
        if receiver in ("self", "cls"):
            cls = self.ctx.analysis.enclosing_class(node)
            candidates = [] if cls is None else [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
            positional = [func.value, *positional]  # the receiver fills the method's first parameter
        elif receiver is None:
            candidates = [s for s in self.ctx.module.body if isinstance(s, cst.FunctionDef)]
        else:
            candidates = []
        for statement in candidates:
            if statement.name.value == helper_name:
                params = [p for p in all_params(statement)]
                for sub in walk(statement):
                    if not isinstance(sub, cst.Call):
                        continue
                    fam = self._family(sub) or ("tf" if isinstance(sub.func, cst.Attribute) and sub.func.attr.value
                                                in ("set_seed", "set_random_seed") else None)
                    seed = _seed_arg(sub) if fam else None
                    if fam is None or seed is None:
                        continue
                    if number(seed) is not None:
                        out.append((fam, seed, None))
                        continue
                    own = self._helper_own_seed(statement, seed, {p.name.value for p in params})
                    if own is not None:
                        # ``def _set_seed(self): seed = self.args.seed + self.get_num_updates(); torch.manual_seed(seed)``
                        out.append((fam, own, None))
                        if receiver in ("self", "cls"):
                            self.__dict__.setdefault("_inner_seed", {}).setdefault(id(node), sub)
                        continue
                    # ``np.random.seed(args.seed)`` in ``def set_seed(args)``: the passed object's seed field
                    attr = None
                    if isinstance(seed, cst.Attribute) and isinstance(seed.value, cst.Name):
                        attr, seed = seed.attr.value, seed.value
                    if not isinstance(seed, cst.Name):
                        continue
                    for i, param in enumerate(params):
                        if param.name.value != seed.value:
                            continue
                        value = given.get(param.name.value, positional[i] if i < len(positional) else None)
                        default = number(param.default) if param.default is not None and attr is None else None
                        if attr is not None:
                            if not isinstance(value, (cst.Name, cst.Attribute)):
                                continue
                            value = undotted(attr, value)
                            if value is None:
                                continue
                        out.append((fam, value, default))
                        if receiver in ("self", "cls"):  # reported where the method reseeds the generator
                            self.__dict__.setdefault("_inner_seed", {})[id(node)] = sub
                return out
        if receiver in ("self", "cls"):
            return out
        from dpcheck.analysis.global_rng import imported_seeding_helper

        found = imported_seeding_helper(self.ctx.path, self.ctx.module, helper_name, receiver)
        if found is None:
            # a seeding helper whose body is not in the project (``transformers.set_seed(args.seed)``,
            # ``tools.set_rng_seed(seed)`` from a module left out): named for seeding, it seeds Python's, NumPy's
            # and torch's global generators with its argument, as such helpers do
            first = positional[0] if positional else given.get("seed")
            if receiver is not None and receiver.split(".")[0] not in _imported_names(self.ctx.module):
                return []  # ``env.seed(0)``, ``model.seed(s)``: an object's own generator, not the global ones
            if first is None or not words(helper_name) & {"seed", "seeds", "seeding"} or any(
                    isinstance(n, cst.FunctionDef) and n.name.value == helper_name for n in walk(self.ctx.module)):
                return []
            return [(fam, first, None) for fam in ("random", "numpy", "torch")]
        names, seeded = found
        for param, fam, default in seeded:
            if param is None:
                out.append((fam, None, default))
                continue
            attr = None
            if "." in param:
                param, attr = param.split(".", 1)
            value = given.get(param)
            if value is None and param in names and names.index(param) < len(positional):
                value = positional[names.index(param)]
            if attr is not None:
                if not isinstance(value, (cst.Name, cst.Attribute)):
                    continue
                value, default = undotted(attr, value), None
                if value is None:
                    continue
            out.append((fam, value, default))
        return out

    @staticmethod
    def _helper_own_seed(helper: cst.FunctionDef, seed: cst.BaseExpression,
                         params: set[str]) -> cst.BaseExpression | None:
        """The seed a method-helper computes from its object's configuration and counters, not from its parameters:
        ``self.args.seed + self.get_num_updates()``, directly or through one local it assigns. None otherwise."""
        if isinstance(seed, cst.Name):
            values = [sub.value for sub in walk(helper, into_scopes=False) if isinstance(sub, cst.Assign)
                      and any(isinstance(t.target, cst.Name) and t.target.value == seed.value for t in sub.targets)]
            if len(values) != 1 or seed.value in params:
                return None
            seed = values[0]
        if not isinstance(seed, (cst.BinaryOperation, cst.Attribute)):
            return None
        refs = value_refs(seed)
        if not refs or any(r.split(".")[0] in params - {"self", "cls"} for r in refs) or not all(
                r in ("self", "cls") or r.startswith(("self.", "cls.")) for r in refs):
            return None
        return seed

    @staticmethod
    def _seeding_helper_def(fn: cst.FunctionDef) -> bool:
        """``def set_seed(seed): …``, ``def set_random(seed): …``: the helper's own seeding calls are judged where
        it is called."""
        return bool(words(fn.name.value) & {"seed", "seeds", "seeding", "reproducibility", "determinism",
                                            "deterministic", "random", "rng"})

    def _seed_for_data(self, node: cst.Call) -> bool:
        """The next draw after the seed in its block subsamples, permutes or shuffles data
        (``np.random.seed(rank); x = np.random.choice(x, n, replace=False)``): a seed for the data, not the noise."""
        fa = self.ctx.analysis
        statement = fa.enclosing_statement(node)
        block = fa.parent(statement) if statement is not None else None
        if isinstance(block, cst.SimpleStatementLine):
            statement, block = block, fa.parent(block)
        body = getattr(block, "body", None)
        if not isinstance(body, (list, tuple)) or statement not in body:
            return False
        for later in body[list(body).index(statement) + 1:][:3]:
            for sub in walk(later):
                if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) \
                        and (dotted(sub.func.value) or "") in _GLOBAL_FAMILIES and self._family(sub) is None:
                    name = sub.func.attr.value
                    if name in ("choice", "permutation", "shuffle", "sample", "randperm"):
                        return not any(a.keyword is not None and a.keyword.value == "p" and not (
                            isinstance(a.value, (cst.List, cst.Tuple)) and all(
                                number(e.value) is not None for e in a.value.elements)) for a in sub.args)
                    return False
        return False

    def _public_seed(self, node: cst.CSTNode, seed: cst.BaseExpression | None, default: object,
                     depth: int = 0) -> str | None:
        """Why a seed is public: a literal, a constant name, a parameter or helper default that is a literal, the
        run's configured seed (``args.seed``, ``config.seed``, ``FLAGS.run - 1``; a ``--seed`` whose default is
        None is fresh entropy), the process rank, or a local assigned from one of these."""
        fa = self.ctx.analysis
        if seed is None:
            return f"the helper's default seed {default}" if isinstance(default, (int, float)) \
                and not isinstance(default, bool) else None
        if _fresh_entropy(seed) or isinstance(seed, cst.Name) and seed.value == "None":
            return None
        if any(isinstance(n, cst.Call) and (dotted(n.func) or "").endswith(("time", "time_ns", "perf_counter"))
               for n in walk(seed)):
            return None
        if number(seed) is not None:
            return f"the constant `{fa.code(seed)}`"
        if isinstance(seed, cst.BinaryOperation):
            # ``seed_base + run``, ``args.seed * 1000 + client_id``, ``rank + 1``: every operand is a literal, a
            # public seed, or a public index (a run, round, client or loop counter)
            leaves: list[cst.BaseExpression] = []
            stack: list[cst.BaseExpression] = [seed]
            while stack:
                item = stack.pop()
                if isinstance(item, cst.BinaryOperation):
                    stack.extend([item.left, item.right])
                else:
                    leaves.append(item)
            reasons = []
            for leaf in leaves:
                if number(leaf) is not None:
                    continue
                if isinstance(leaf, cst.Call) and not leaf.args and words(call_name(leaf) or "") & _COUNTER_WORDS:
                    reasons.append(f"the update counter `{fa.code(leaf)}`")
                    continue
                if self._public_index(node, leaf):
                    reasons.append(f"the public index `{fa.code(leaf)}`")
                    continue
                reason = self._public_seed(node, leaf, None, depth + 1) if depth < 3 else None
                if reason is None:
                    return None
                reasons.append(reason)
            return f"`{fa.code(seed)[:60]}`, from {reasons[0]}" if reasons else f"the constant `{fa.code(seed)}`"
        if isinstance(seed, cst.Call) and call_name(seed) in ("int", "abs") and seed.args and depth < 3:
            return self._public_seed(node, seed.args[0].value, None, depth + 1)
        if isinstance(seed, cst.IfExp) and depth < 3:
            return self._public_seed(node, seed.body, None, depth + 1) or \
                self._public_seed(node, seed.orelse, None, depth + 1)
        if isinstance(seed, cst.Name):
            fn = fa.enclosing_function(node)
            if fn is not None:
                for index, param in enumerate(all_params(fn)):
                    if param.name.value == seed.value:
                        if param.default is not None and number(param.default) is not None:
                            return f"`{seed.value}`, whose default is the constant {fa.code(param.default)}"
                        if isinstance(param.default, cst.Name) and param.default.value != "None" and depth < 3:
                            # ``def run(eps, seed: int = SEED)`` with ``SEED = 42`` at module level
                            constant = self._constant_seed(node, param.default) if isinstance(node, cst.Call) \
                                else None
                            if constant is not None:
                                return f"`{seed.value}`, whose default is {constant}"
                        if depth >= 2 or param.default is not None and not (
                                isinstance(param.default, cst.Name) and param.default.value == "None"):
                            return None
                        return self._passed_seed(fn, param.name.value, index, depth)
                    
            constant = self._constant_seed(node, seed) if isinstance(node, cst.Call) else None
            if constant is not None:
                return constant
            if depth >= 3:
                return None
            scope = fn if fn is not None else self.ctx.module
            values = [sub.value for sub in walk(scope, into_scopes=False) if isinstance(sub, cst.Assign)
                      and any(isinstance(t.target, cst.Name) and t.target.value == seed.value for t in sub.targets)]
            if fn is not None and not values:
                values = [sub.value for statement in self.ctx.module.body
                          for sub in walk(statement, into_scopes=False) if isinstance(sub, cst.Assign)
                          and any(isinstance(t.target, cst.Name) and t.target.value == seed.value
                                  for t in sub.targets)]
            if not values:
                return self._public_loop_value(node, seed, depth)
            reasons = [self._public_seed(node, v, None, depth + 1) for v in values]
            return reasons[0] if reasons and all(r is not None for r in reasons) else None
        refs = value_refs(seed)
        if isinstance(seed, cst.Subscript) and any(
                isinstance(n, cst.SimpleString) and "seed" in words(n.evaluated_value if isinstance(
                    n.evaluated_value, str) else "") for n in walk(seed.slice[0]) if len(seed.slice) == 1) \
                and not _NONE_SEED_OPTION.search(self.ctx.source):
            return f"`{fa.code(seed)[:60]}`, the run's configured seed"  # ``vars(args)['seed']``, ``cfg["seed"]``
        if isinstance(seed, cst.Attribute) and dotted(seed.value) == "self" and depth < 2:
            # ``self.seed``, stored by the constructor from a parameter whose default is a literal
            cls = fa.enclosing_class(node)
            for init in [] if cls is None else walk(cls):
                if not (isinstance(init, cst.FunctionDef) and init.name.value == "__init__"):
                    continue
                for sub in walk(init):
                    if not isinstance(sub, cst.Assign):
                        continue
                    pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
                    for t in sub.targets:
                        if isinstance(t.target, cst.Tuple) and isinstance(sub.value, cst.Tuple) \
                                and len(t.target.elements) == len(sub.value.elements):
                            pairs.extend((a.value, b.value) for a, b in zip(t.target.elements, sub.value.elements))
                        else:
                            pairs.append((t.target, sub.value))
                    for target, value in pairs:
                        if dotted(target) != f"self.{seed.attr.value}":
                            continue
                        reason = self._public_seed(value, value, None, depth + 1) \
                            if not isinstance(value, cst.Name) else self._init_default(init, value.value)
                        if reason is not None:
                            return f"`self.{seed.attr.value}` = {reason}"
            return None
        for ref in refs:
            parts = ref.split(".")
            if parts[0] in ("self", "cls") and len(parts) >= 3 and parts[1].lower() in _CONFIG_ROOTS:
                parts = parts[1:]  # ``self.args.seed``, ``self.cfg.seed``: the run's configuration the object keeps
            if parts[0] in ("self", "cls") or len(parts) < 2:
                continue
            if "seed" in words(parts[-1]) or parts[0].lower() in _CONFIG_ROOTS:
                if "seed" in words(parts[-1]) and _none_seed_option(self.ctx.source, parts[-1]):
                    return None
                return f"`{fa.code(seed)[:60]}`, the run's configured seed"
        if any(words(ref.split(".")[-1]) & {"rank"} for ref in refs) or any(
                isinstance(n, cst.Call) and call_name(n) in ("Get_rank", "get_rank") for n in walk(seed)):
            return f"`{fa.code(seed)[:60]}`, the process rank"
        return None

    def _public_loop_value(self, node: cst.CSTNode, seed: cst.Name, depth: int) -> str | None:
        """``for rand_state in [2763934991]: np.random.seed(rand_state)``, ``for rep in range(repeat_time):
        random.seed(rep)``: the seed is the target of an enclosing loop over a literal list (directly or through a
        name bound to one) or over ``range`` of public bounds: a value anyone with the code knows."""
        fa = self.ctx.analysis
        parent = fa.parent(node)
        while parent is not None:
            if isinstance(parent, cst.For) and _enumerate_position(parent, seed.value):
                return f"`{seed.value}`, the position `enumerate` counts (0, 1, 2, …)"
            if isinstance(parent, cst.For) and isinstance(parent.target, cst.Name) \
                    and parent.target.value == seed.value:
                it = parent.iter
                if isinstance(it, cst.Name):
                    bound = [sub.value for sub in walk(self.ctx.module) if isinstance(sub, cst.Assign)
                             and any(isinstance(t.target, cst.Name) and t.target.value == it.value
                                     for t in sub.targets)]
                    it = bound[0] if len(bound) == 1 else it
                if isinstance(it, (cst.List, cst.Tuple)) and it.elements and all(
                        number(e.value) is not None for e in it.elements):
                    return f"`{seed.value}`, a loop over the literal seeds `{fa.code(it)[:40]}`"
                if isinstance(it, cst.Call) and call_name(it) == "range" and it.args and all(
                        number(a.value) is not None or self._public_seed(node, a.value, None, depth + 1) is not None
                        for a in it.args) and depth < 3:
                    return f"`{seed.value}`, the public repetition index of `{fa.code(it)[:40]}`"
                return None
            if isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
                return None
            parent = fa.parent(parent)
        return None

    def _public_index(self, node: cst.CSTNode, leaf: cst.BaseExpression) -> bool:
        """A run, round, client, rank or loop counter: ``run``, ``client_id``, ``comm.rank``, ``i`` of a ``for``."""
        name = last_name(leaf) if isinstance(leaf, (cst.Name, cst.Attribute)) else None
        if name is None:
            return False
        if words(name) & (_DERIVED_WORDS | {"run", "runs", "trial", "rep", "repeat", "repetition"}):
            return True
        parent = self.ctx.analysis.parent(node)
        while parent is not None:
            if isinstance(parent, cst.For) and (isinstance(parent.target, cst.Name) and parent.target.value == name
                                                or _enumerate_position(parent, name)):
                return True
            parent = self.ctx.analysis.parent(parent)
        return False

    def _init_default(self, init: cst.FunctionDef, name: str) -> str | None:
        for param in all_params(init):
            if param.name.value == name and param.default is not None and number(param.default) is not None:
                return f"the constructor's `{name}`, whose default is the constant " \
                       f"{self.ctx.analysis.code(param.default)}"
        return None

    def _passed_seed(self, fn: cst.FunctionDef, param: str, index: int, depth: int) -> str | None:
        """The seed parameter of ``fn`` (no default, or None) as this module's callers pass it: public when every
        call that passes it passes a public value (``apply_dp(g, eps, seed=seed_base + run)``)."""
        fa = self.ctx.analysis
        method = fa.enclosing_class(fn) is not None
        reasons = []
        for call in walk(self.ctx.module):
            if not isinstance(call, cst.Call) or call_name(call) != fn.name.value:
                continue
            value = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == param), None)
            if value is None:
                positional = [a.value for a in call.args if a.keyword is None and not a.star]
                at = index - 1 if method and isinstance(call.func, cst.Attribute) else index
                value = positional[at] if 0 <= at < len(positional) else None
            if value is None:
                continue
            reason = self._public_seed(call, value, None, depth + 1)
            if reason is None:
                return None
            reasons.append(reason)
        if not reasons:
            return None
        return f"`{param}`, passed by the caller as {reasons[0]}"

    # -- a mechanism constructed with its noise seed passed in ``random_state=`` -----------------------
    def _seeded_mechanism_call(self, node: cst.Call) -> bool:
        """``Laplace(epsilon=e, sensitivity=1, random_state=cfg.seed * rnd)``: a call taking ε whose
        ``random_state`` is public. True when the call was such a call (reported or not)."""
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        state = keywords.get("random_state")
        if state is None or not keywords.keys() & {"eps", "epsilon"}:
            return False
        if isinstance(state, cst.Name) and state.value == "None" or self._test_code(node):
            return True
        if self._seed_only_reaches_post_processing(node):
            return True
        why = self._fixed(node, state) or self._configured_seed(state)
        if why is not None:
            self.report(node, f"`{call_name(node)}` takes ε and draws its noise from `random_state` = {why}: the "
                              f"privacy noise is reproducible from public information, so it can be regenerated "
                              f"and subtracted; leave `random_state` None (fresh entropy) for the privacy noise")
        return True

    def _seeded_noise_generator(self, node: cst.Call) -> bool:
        """``make_private(…, noise_generator=torch.Generator(device).manual_seed(config.seed))``: a DP engine's
        noise generator seeded with a constant or the run's configured seed. True when the call had one."""
        value = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "noise_generator"),
                     None)
        seeding = None if value is None else next(
            (sub for sub in walk(value) if isinstance(sub, cst.Call) and call_name(sub) == "manual_seed"), None)
        if seeding is None and isinstance(value, cst.Name):
            # ``rng = torch.Generator(device); rng.manual_seed(seed)`` (or ``rng = torch.Generator().manual_seed(seed)``)
            # earlier in the function, then ``noise_generator=rng``
            seeding = self._generator_seeding(node, value.value)
        if seeding is None or self._test_code(node):
            return False
        seed = _seed_arg(seeding)
        while isinstance(seed, cst.Call) and call_name(seed) in ("int", "abs") and len(seed.args) == 1:
            seed = seed.args[0].value
        if seed is None or _fresh_entropy(seed):
            return True
        why = self._fixed(node, seed) or self._constant_seed(node, seed) or self._configured_seed(seed)
        if why is not None:
            self.report(seeding, f"`{call_name(node)}` draws the DP noise from `noise_generator`, seeded with {why}: "
                              f"the privacy noise is reproducible from public information, so it can be regenerated "
                              f"and subtracted; leave `noise_generator` None (Opacus then uses fresh entropy, or "
                              f"`secure_mode=True` for a cryptographic generator)")
        return True

    def _generator_seeding(self, node: cst.Call, name: str) -> cst.Call | None:
        """The ``manual_seed`` call that seeds the local generator ``name`` before ``node`` in the same function:
        ``name.manual_seed(seed)`` or ``name = torch.Generator(…).manual_seed(seed)``; None when the function reseeds
        it more than once or never."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None:
            return None
        line = fa.line_of(node)
        found: list[cst.Call] = []
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Call) and call_name(sub) == "manual_seed" and fa.line_of(sub) < line \
                    and isinstance(sub.func, cst.Attribute):
                receiver = sub.func.value
                if isinstance(receiver, cst.Name) and receiver.value == name:
                    found.append(sub)
                elif isinstance(receiver, cst.Call) and (dotted(receiver.func) or "").rsplit(".", 1)[-1] == "Generator":
                    statement = fa.enclosing_statement(sub)
                    if isinstance(statement, cst.Assign) and any(
                            isinstance(t.target, cst.Name) and t.target.value == name for t in statement.targets):
                        found.append(sub)
        return found[0] if len(found) == 1 else None

    def _seed_only_reaches_post_processing(self, call: cst.Call) -> bool:
        """The callee is a function of this module whose ``random_state`` parameter only ever reaches calls that
        take no ε and build no generator (``KMeans(random_state=random_state)`` on the already-noised output):
        that seed does not draw the privacy noise."""
        if not isinstance(call.func, cst.Name):
            return False
        for statement in self.ctx.module.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == call.func.value:
                return _parameter_only_feeds_non_mechanisms(statement, "random_state")
        return False

    def _configured_seed(self, value: cst.BaseExpression) -> str | None:
        """A run's configured seed read from a config or argument object (``args.seed``, ``params.seed * it``),
        alone or combined with other values. Not ``self.…``: an object's seed may be the caller's None."""
        for ref in value_refs(value):
            parts = ref.split(".")
            if len(parts) > 1 and parts[0] not in ("self", "cls") and "seed" in words(parts[-1]):
                return f"`{self.ctx.analysis.code(value)}`, built from the run's configured seed `{ref}`"
        return None

    # -- a global generator seeded with a public constant before a mechanism draws from it --------
    @staticmethod
    def _family(call: cst.Call) -> str | None:
        """Which global generator ``np.random.seed``/``random.seed``/``torch.manual_seed`` fixes."""
        if not isinstance(call.func, cst.Attribute):
            return None
        receiver, name = dotted(call.func.value) or "", call.func.attr.value
        if name == "seed" and receiver in ("np.random", "numpy.random", "random"):
            return _GLOBAL_FAMILIES[receiver]
        if name in ("manual_seed", "manual_seed_all") and receiver in ("torch", "torch.cuda"):
            return "torch"
        return None

    def _seeding_helper(self, call: cst.Call) -> set[str]:
        """The generators a zero-argument module function (``set_random_seed()``) seeds with a constant: a
        literal, or its own parameter whose default is a literal."""
        if not isinstance(call.func, cst.Name):
            return set()
        out: set[str] = set()
        for statement in self.ctx.module.body:
            if not (isinstance(statement, cst.FunctionDef) and statement.name.value == call.func.value):
                continue
            defaults = {p.name.value: p.default for p in all_params(statement)}
            for sub in walk(statement):
                if isinstance(sub, cst.Call) and call_name(sub) in _GLOBAL_SEEDS:
                    family, seed = self._family(sub), _seed_arg(sub)
                    if family is None or seed is None:
                        continue
                    if number(seed) is not None or (isinstance(seed, cst.Name) and number(defaults.get(seed.value))
                                                    is not None):
                        out.add(family)
        return out

    def _imported_seeding_helper(self, call: cst.Call) -> set[str]:
        """``set_seed(2022)`` / ``utils.seed_everything(SEED)`` at import or in the run's entry point, where the
        helper (a function of a project module this file imports) seeds global generators with its argument:
        the generators it seeds when that argument (or the literal it uses) is a constant."""
        from dpcheck.analysis.global_rng import imported_seeding_helper

        if not isinstance(call.func, cst.Name) or not words(call.func.value) & {"seed", "seeds", "random", "rng"}:
            return set()
        fa = self.ctx.analysis
        fn = fa.enclosing_function(call)
        if fn is not None and not self._driver(fn) or self._test_code(call):
            return set()
        found = imported_seeding_helper(self.ctx.path, self.ctx.module, call.func.value)
        if found is None:
            return set()
        params, seeded = found
        given: dict[str, cst.BaseExpression] = {}
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        for param, value in zip(params, positional):
            given[param] = value
        given.update({a.keyword.value: a.value for a in call.args if a.keyword is not None})
        out: set[str] = set()
        for param, family, default in seeded:
            if param is None:
                out.add(family)
            elif param in given:
                if self._constant_seed(call, given[param]) is not None:
                    out.add(family)
            elif isinstance(default, int) and not isinstance(default, bool):
                out.add(family)
        return out

    def _global_draws(self, scope: cst.CSTNode, families: set[str], after: int) -> list[cst.Call]:
        fa = self.ctx.analysis
        out = []
        for sub in walk(scope):
            if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) \
                    and sub.func.attr.value in _GLOBAL_DRAWS and fa.line_of(sub) > after:
                receiver = dotted(sub.func.value) or ""
                if _GLOBAL_FAMILIES.get(receiver) in families and receiver != "torch.cuda":
                    out.append(sub)
            elif isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) and sub.func.attr.value == "rvs" \
                    and "numpy" in families and fa.line_of(sub) > after \
                    and (dotted(sub.func.value) or "").rsplit(".", 1)[-1] in _SCIPY_NOISE \
                    and not any(a.keyword is not None and a.keyword.value == "random_state" for a in sub.args):
                out.append(sub)  # ``scipy.stats.laplace.rvs(0, b)`` draws from NumPy's global generator
        return out

    def _mechanism_function(self, fn: cst.FunctionDef) -> bool:
        """A function that is a privacy mechanism: it takes ε, reads ``self.epsilon``, or is named for noise or
        perturbation (``add_noise_to_hist``, ``perturb_adj``)."""
        if words(fn.name.value) & _MECHANISM_FUNCTION_WORDS:
            return True
        if any(isinstance(sub, cst.Assign) and any("noise" in words(last_name(t.target) or "") for t in sub.targets)
               and isinstance(sub.value, cst.Call) and self._global_draws(sub.value, {"numpy", "random", "torch"}, 0)
               and self._calibrated(sub.value) for sub in walk(fn)):
            return True  # ``noise = np.random.binomial(1, self.P, shape)``: the function draws calibrated noise
        if not (any(words(p.name.value) & {"eps", "epsilon"} for p in all_params(fn)) or any(
                isinstance(sub, cst.Attribute) and words(sub.attr.value) & {"eps", "epsilon"}
                and dotted(sub.value) == "self" for sub in walk(fn))):
            return False
        # an experiment driver taking ε hands the noise to a function of its module that draws it; its own draws
        # (a synthetic data set, a shuffle) are not the mechanism's
        drawing = {statement.name.value for statement in self.ctx.module.body
                   if isinstance(statement, cst.FunctionDef) and statement is not fn
                   and self._global_draws(statement, {"numpy", "random", "torch"}, 0)}
        return not any(isinstance(sub, cst.Call) and isinstance(sub.func, cst.Name) and sub.func.value in drawing
                       for sub in walk(fn, into_scopes=False))

    @staticmethod
    def _calibrated(call: cst.Call) -> bool:
        """``laplace(0, b, n)``, ``binomial(1, p, n)``, ``laplace.rvs(0, b, n)``: a draw whose scale or flip
        probability (the second argument, or ``scale=``/``p=``) is a variable, not a literal or a shape."""
        if call.func.attr.value not in ("laplace", "normal", "binomial", "gumbel", "rvs"):  # type: ignore[attr-defined]
            return False
        keyword = next((a.value for a in call.args if a.keyword is not None
                        and a.keyword.value in ("scale", "p", "std")), None)
        positional = [a.value for a in call.args if a.keyword is None]
        value = keyword if keyword is not None else positional[1] if len(positional) > 1 else None
        return value is not None and number(value) is None

    def _noise_function_draw(self, node: cst.CSTNode) -> bool:
        """Outside recognised DP context: the seed sits in a function named for noise (``add_noise_to_hist``) that
        draws Laplace/Gaussian noise scaled by a non-literal, in a module that names ε or σ."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or not words(fn.name.value) & {"noise", "noisy", "laplace", "gaussian", "perturb"}:
            return False
        if not any(isinstance(sub, cst.Name) and words(sub.value.lower()) & {"eps", "epsilon", "sigma"}
                   for sub in walk(self.ctx.module)):
            return False
        return any(sub.func.attr.value in ("laplace", "normal", "gumbel")  # type: ignore[attr-defined]
                   and not self._literal_scale(sub) and len(sub.args) > 0
                   for sub in self._global_draws(fn, {"numpy", "torch"}, fa.line_of(node)))

    def _data_free_main(self, node: cst.CSTNode) -> bool:
        """``node`` is in an ``if __name__ == "__main__":`` block that reads no data (no file, dataset, download or
        command line): the block's draws are a synthetic data set checking the code, not noise on records."""
        fa = self.ctx.analysis
        block = next((p for p in fa.ancestors(node) if isinstance(p, cst.If) and "__main__" in fa.code(p.test)), None)
        if block is None:
            return False
        for sub in walk(block):
            if isinstance(sub, cst.Call) and words(call_name(sub) or "") & _READ_WORDS:
                return False
            if isinstance(sub, (cst.Name, cst.Attribute)) and words(last_name(sub) or "") & {"argv", "environ"}:
                return False
        return True

    #: calls that bring records into a script (a file, a dataset loader, a download, a database, the command line)
    _RECORD_READS = frozenset({"open", "read", "load", "loadtxt", "genfromtxt", "fromfile", "fetch", "download",
                               "dataset", "datasets", "loader", "dataloader", "csv", "parquet", "excel", "json",
                               "pickle", "query", "connect", "input", "sql", "parse", "planetoid", "mnist", "cifar",
                               "imread", "urlopen", "edgelist", "adjlist", "gml", "graphml", "savemat", "loadmat"})

    def _self_contained_simulation(self) -> bool:
        """The module is a script no other project module imports, whose code reads no records (no file, dataset,
        download, database, command line or environment): its data are simulated in the same run (``nx.barabasi_
        albert_graph(n, m)``, a hand-written toy graph), so a fixed seed reproduces noise on no private record."""
        path = self.ctx.path
        code = self.ctx.source
        if path and os.path.isfile(path):
            from dpcheck.analysis.noisedraws import _project_tokens, project_root

            stem = os.path.splitext(os.path.basename(path))[0]
            if _project_tokens(project_root(path)).get(stem, 0) > len(
                    re.findall(r"(?<!\w)" + re.escape(stem) + r"(?!\w)", code)):
                return False  # imported by another module, which may hand it records
            from dpcheck.analysis.global_rng import _candidates, _module_imports, _roots

            me = os.path.abspath(path)
            folder, roots = os.path.dirname(me), _roots(me)
            if any(_candidates(folder, roots, module, level, names)
                   for module, level, names in _module_imports(self.ctx.module)):
                return False  # it runs the project's own modules, which may read the records
        ran = False
        for statement in self.ctx.module.body:
            if isinstance(statement, cst.If) and "__main__" in self.ctx.analysis.code(statement.test) or isinstance(
                    statement, cst.SimpleStatementLine) and any(
                    isinstance(e, (cst.Expr, cst.Assign)) and any(isinstance(n, cst.Call) and isinstance(
                        n.func, cst.Name) and n.func.value in {f.name.value for f in self.ctx.module.body
                                                               if isinstance(f, cst.FunctionDef)} for n in walk(e))
                    for e in statement.body) or isinstance(statement, cst.For):
                ran = True
        if not ran:
            return False  # a library module: its callers bring the records
        for sub in walk(self.ctx.module):
            if isinstance(sub, cst.Call) and words(call_name(sub) or "") & self._RECORD_READS:
                return False
            if isinstance(sub, (cst.Name, cst.Attribute)) and words(last_name(sub) or "") & {"argv", "environ"}:
                return False
            if isinstance(sub, cst.SimpleString) and re.search(r"\.(csv|tsv|json|txt|npy|npz|pkl|parquet|xlsx?|h5)\b",
                                                                 sub.value):
                return False
        return True

    def _main_guard(self, node: cst.CSTNode) -> bool:
        fa = self.ctx.analysis
        parent = fa.parent(node)
        while parent is not None:
            if isinstance(parent, cst.If) and "__main__" in fa.code(parent.test):
                return True
            parent = fa.parent(parent)
        return False

    def _constant_global_seed(self, node: cst.Call, families: set[str], why: str) -> None:
        """The global generator is seeded with a public constant and a mechanism then draws its noise from it:
        in the same function after the seed (a reseed on every call), in a caller right after calling it, or,
        for a seed at module level, in any mechanism function of the module."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        line = fa.line_of(node)
        if fn is not None and self._driver(fn) and not self._global_draws(fn, families, line):
            # ``def main(): np.random.seed(42); …``: the run's entry point seeds once for everything it then calls
            # (an entry point that draws its own data from the seeded generator is a simulation demo)
            drawn = self._module_mechanism_draw(families)
            if drawn is not None:
                mechanism, draw = drawn
                self.report(node, f"the run's entry point `{fn.name.value}` seeds the global generator with {why}, "
                                  f"and `{mechanism.name.value}` draws the privacy noise from it on line "
                                  f"{fa.line_of(draw)}: the noise is reproducible by anyone with the code and can be "
                                  f"subtracted; draw privacy noise from an unseeded generator")
                return
            self._imported_mechanism(node, families, why, f"the run's entry point `{fn.name.value}`")
            return
        if fn is None:
            if self._main_guard(node):
                if not self._module_has_mechanism() and not self._driver_helper(node):
                    # (a library module's demo block seeds its own mechanisms; ``main()`` is judged inside)
                    self._imported_mechanism(node, families, why, "the script's `__main__` block")
                return
            if self._self_contained_simulation():
                return  # a script that simulates its own graph or table: the seed protects no record
            for statement in walk(self.ctx.module):
                if isinstance(statement, cst.FunctionDef) and self._mechanism_function(statement) \
                        and not statement.name.value.startswith("test"):
                    draws = self._global_draws(statement, families, 0)
                    if draws:
                        self.report(node, f"the global generator is seeded at module level with {why}, and "
                                          f"`{statement.name.value}` draws the privacy noise from it on line "
                                          f"{fa.line_of(draws[0])}: the noise is reproducible by anyone with the "
                                          f"code and can be subtracted; draw privacy noise from an unseeded generator")
                        return
            if not self._seeded_before(node, families):  # a later reseed (before an evaluation) sets nothing new
                self._imported_mechanism(node, families, why, "the module, at import,")
            return
        draws = self._global_draws(fn, families, line) if self._mechanism_function(fn) else []
        if not draws:
            for caller in walk(self.ctx.module):
                if not isinstance(caller, cst.FunctionDef) or caller is fn or not self._mechanism_function(caller):
                    continue
                calls = [fa.line_of(c) for c in walk(caller, into_scopes=False) if isinstance(c, cst.Call)
                         and isinstance(c.func, cst.Name) and c.func.value == fn.name.value]
                if calls:
                    draws = self._global_draws(caller, families, min(calls))
                    if draws:
                        break
        if draws:
            self.report(node, f"inside `{fn.name.value}` the global generator is reseeded with {why}, and the "
                              f"privacy noise is drawn from it on line {fa.line_of(draws[0])}: every call draws the "
                              f"same noise, which anyone with the code can regenerate and subtract; draw privacy "
                              f"noise from an unseeded generator")

    def _imported_mechanism(self, node: cst.Call, families: set[str], why: str, where: str) -> None:
        """The entry point's constant seed fixes the global generator a mechanism of an imported project module
        draws its noise from (``np.random.seed(2022)`` in ``main.py``, ``np.random.binomial(n, self.p)`` in
        ``ldp.OUE``, whose constructor takes ε)."""
        from dpcheck.analysis.global_rng import imported_mechanism_draw

        if self._quiet_seed_place(node, need_dp_words=False):
            return
        found = imported_mechanism_draw(self.ctx.path, self.ctx.module, families)
        if found is None:
            return
        file, function, line = found
        if _dp_switch_left_off(file, line, self.ctx.source):
            return
        self.report(node, f"{where} seeds the global generator with {why}, and `{function}` "
                          f"({file.rsplit('/', 1)[-1]}:{line}), a mechanism taking ε in a module it imports, draws "
                          f"the privacy noise from that generator: the noise is reproducible by anyone with the code "
                          f"and can be subtracted; draw privacy noise from an unseeded generator")

    def _seeded_before(self, node: cst.Call, families: set[str]) -> bool:
        """An earlier module-level statement already seeds one of ``families`` (the first seed is the finding)."""
        fa = self.ctx.analysis
        line = fa.line_of(node)
        return any(isinstance(sub, cst.Call) and fa.line_of(sub) < line and self._family(sub) in families
                   and fa.enclosing_function(sub) is None for sub in walk(self.ctx.module))

    def _module_has_mechanism(self) -> bool:
        return any(isinstance(s, cst.FunctionDef) and self._mechanism_function(s) for s in walk(self.ctx.module))

    def _entry_seed_of_mechanism(self, node: cst.Call, helper: set[str] | None) -> bool:
        """Outside recognised DP context: a constant seed of a global generator at module level or in the run's
        entry point, where a mechanism of this module (the module names ε) or of an imported project module
        draws calibrated noise from that generator."""
        from dpcheck.analysis.global_rng import imported_mechanism_draw

        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is not None and not self._driver(fn) or helper and self._driver_helper(node):
            return False
        families = helper or ({self._family(node)} - {None})
        if not families or (not helper and self._constant_seed(node, _seed_arg(node)) is None):
            return False
        if fn is None and not self._main_guard(node) or fn is not None:
            drawn = self._module_mechanism_draw(families)  # type: ignore[arg-type]
            if drawn is not None and self._names_epsilon() and self._calibrated(drawn[1]):
                return True
        return imported_mechanism_draw(self.ctx.path, self.ctx.module, families) is not None  # type: ignore[arg-type]

    def _driver_helper(self, call: cst.Call) -> bool:
        """``main()`` called from the ``__main__`` block: the entry point's own seed is judged where it is set."""
        return isinstance(call.func, cst.Name) and any(
            isinstance(s, cst.FunctionDef) and s.name.value == call.func.value and self._driver(s)
            for s in self.ctx.module.body)

    def _names_epsilon(self) -> bool:
        return any(isinstance(sub, cst.Name) and words(sub.value) & {"eps", "epsilon", "epsi"}
                   for sub in walk(self.ctx.module))

    # -- seeds and mechanisms across the module -------------------------------------------------
    def _constant_seed(self, node: cst.Call, seed: cst.BaseExpression | None) -> str | None:
        """A literal seed, or a name bound once to a literal at module level or in the seeding function
        (``random_state = 68`` … ``np.random.seed(random_state)``)."""
        fa = self.ctx.analysis
        if seed is None:
            return None
        if number(seed) is not None:
            return f"the constant `{fa.code(seed)}`"
        if not isinstance(seed, cst.Name):
            return None
        fn = fa.enclosing_function(node)
        if fn is not None and seed.value in {p.name.value for p in all_params(fn)}:
            return None
        scope = fn.body if fn is not None else self.ctx.module
        values = [sub.value for sub in walk(scope, into_scopes=False) if isinstance(sub, cst.Assign)
                  and any(last_name(t.target) == seed.value and isinstance(t.target, cst.Name) for t in sub.targets)]
        if fn is not None and not values:
            values = [sub.value for statement in self.ctx.module.body for sub in walk(statement, into_scopes=False)
                      if isinstance(sub, cst.Assign) and any(isinstance(t.target, cst.Name)
                                                             and t.target.value == seed.value for t in sub.targets)]
        if len(values) == 1 and number(values[0]) is not None:
            return f"`{seed.value}` = {fa.code(values[0])}, a constant"
        return None

    def _driver(self, fn: cst.FunctionDef) -> bool:
        """The run's entry point: ``main``/``run_main`` at module level, or the function the ``__main__`` block calls."""
        if fn.name.value.startswith("test") or self.ctx.analysis.enclosing_class(fn) is not None:
            return False
        if "main" in words(fn.name.value):
            return True
        return any(isinstance(sub, cst.Call) and isinstance(sub.func, cst.Name) and sub.func.value == fn.name.value
                   and self._main_guard(sub) for sub in walk(self.ctx.module))

    def _module_mechanism_draw(self, families: set[str]) -> tuple[cst.FunctionDef, cst.Call] | None:
        for statement in walk(self.ctx.module):
            if isinstance(statement, cst.FunctionDef) and not statement.name.value.startswith("test") \
                    and self._mechanism_function(statement):
                draws = self._global_draws(statement, families, 0)
                if draws:
                    return statement, next((d for d in draws if self._calibrated(d)), draws[0])
        return None

    def _loop_index(self, node: cst.CSTNode, seed: cst.BaseExpression) -> str | None:
        """``for i in range(times): prng = RandomState(i)``: the seed is the repetition's index, public."""
        if not isinstance(seed, cst.Name):
            return None
        fa = self.ctx.analysis
        parent = fa.parent(node)
        while parent is not None and not isinstance(parent, cst.FunctionDef):
            if isinstance(parent, cst.For) and isinstance(parent.target, cst.Name) \
                    and parent.target.value == seed.value and any(
                        isinstance(sub, cst.Call) and call_name(sub) == "range" for sub in walk(parent.iter)):
                return f"the loop index `{seed.value}` of `{fa.code(parent.iter)}`"
            parent = fa.parent(parent)
        return None

    def _passed_to_mechanism(self, target: str, node: cst.CSTNode) -> cst.Call | None:
        """A call in the generator's function that receives the generator and ε (``Identity(data, prng, epsilon)``,
        ``privtree.run(block, prng, epsilon=eps)``): the mechanism draws its noise from that generator."""
        scope = self._scope(target, node)
        fa = self.ctx.analysis
        line = fa.line_of(node)
        rebound = [fa.line_of(sub) for sub in walk(scope) if isinstance(sub, cst.Assign) and fa.line_of(sub) > line
                   and any(last_name(t.target) == target for t in sub.targets)]
        for sub in walk(scope):
            if not isinstance(sub, cst.Call) or call_name(sub) in _GENERATORS or fa.line_of(sub) < line \
                    or any(line < r <= fa.line_of(sub) for r in rebound):
                continue
            values = [a.value for a in sub.args]
            if not any(isinstance(v, cst.Name) and v.value == target for v in values):
                continue
            names = [a.keyword.value for a in sub.args if a.keyword is not None]
            names += [last_name(v) or "" for v in values if isinstance(v, (cst.Name, cst.Attribute))]
            if any(words(n) & {"eps", "epsilon"} for n in names):
                return sub
        return None

    # -- a generator object -------------------------------------------------------------------
    def _subclass_draw(self, node: cst.Call) -> tuple[str, int, str] | None:
        """A generator stored as ``self.<attr>`` in a class whose subclasses (here or in sibling modules) draw
        their calibrated privacy noise from it."""
        fa = self.ctx.analysis
        statement = fa.enclosing_statement(node)
        if not isinstance(statement, cst.Assign) or len(statement.targets) != 1 or statement.value is not node:
            return None
        target = dotted(statement.targets[0].target)
        cls = fa.enclosing_class(node)
        if target is None or not target.startswith("self.") or target.count(".") != 1 or cls is None:
            return None
        return _subclass_noise_draw(self.ctx.path, self.ctx.module.code, cls.name.value, target.split(".", 1)[1])

    def _generator(self, node: cst.Call, name: str) -> None:
        if name in ("Random", "Generator") and not (dotted(node.func) or "").startswith(("random.", "np.", "numpy.")):
            return
        seed = _seed_arg(node)
        if seed is None:
            return
        why = self._fixed(node, seed) or self._loop_index(node, seed)
        at: cst.CSTNode = node
        if why is None:
            # ``def add_noise(x, random_seed=None): rng = RandomState(random_seed) …`` called as
            # ``add_noise(x, random_seed=qa_idx)`` with a loop position, a constant or the run's seed: reported where
            # the public seed is passed
            passed = self._public_caller_seed(node, seed)
            if passed is None:
                return
            at, why = passed
        fa = self.ctx.analysis
        statement = fa.enclosing_statement(node)
        if not isinstance(statement, cst.Assign) or len(statement.targets) != 1 or statement.value is not node:
            return
        target = dotted(statement.targets[0].target)
        if target is None:
            return
        draws = self._noise_draws(target, node)
        if why.startswith("the loop index") and ("." in target or self._passed_to_mechanism(target, node) is None):
            return  # a per-repetition seed is reported where the generator is handed to a mechanism taking ε
        if draws and "." not in target and not self._privacy_parametrised(node):
            return  # a plain additive-noise baseline (scale from the data's spread), no DP mechanism
        if self._data_free_main(node):
            return  # a smoke test drawing its own synthetic data: no record is read, so no noise protects one
        if not draws and name == "PRNGKey" and "." not in target:
            jax_draw = self._jax_key_noise(target, node)
            if jax_draw is not None:
                self.report(at, f"`{target}` is a JAX key made from {why}, and the privacy noise is drawn from keys "
                                f"split off it (`{fa.code(jax_draw)[:60]}` on line {fa.line_of(jax_draw)}): the "
                                f"noise is reproducible from public information, so it can be regenerated and "
                                f"subtracted; derive the noise key from fresh entropy (`secrets.randbits(32)`)")
            return
        mechanism = None if draws or "." in target else self._passed_to_mechanism(target, node)
        inherited = self._subclass_draw(node) if not draws and target.startswith("self.") else None
        if inherited is not None:
            file, line, sub = inherited
            where = os.path.relpath(file, os.path.dirname(os.path.abspath(self.ctx.path)))
            what = f"the subclass `{sub}` draws its privacy noise from it ({where}:{line})"
        elif mechanism is not None:
            what = f"it is handed to `{call_name(mechanism)}` with ε on line {fa.line_of(mechanism)}, which draws its noise from it"
        elif not draws:
            if not (target.startswith("self.") and self._mechanism_init(node) and self._mechanism_class(node)
                    and not self._other_uses(target, node)):
                return
            what = "the mechanism's own generator (its constructor takes ε)"
        else:
            what = f"it draws the noise on line {fa.line_of(draws[0])}"
        if at is not node:
            what += f" (`{target}` = `{call_name(node)}(…)` on line {fa.line_of(node)} of `{fn_name(fa, node)}`)"
        self.report(at, f"`{target}` is seeded with {why}, and {what}: the privacy noise is reproducible "
                          f"from public information, so it can be regenerated and subtracted; draw privacy noise "
                          f"from an unseeded generator")

    #: JAX's functional draws (``jax.random.normal(key, shape)``) of privacy noise
    _JAX_NOISE_DRAWS = frozenset({"normal", "laplace", "gumbel", "exponential", "truncated_normal"})
    #: words of a factor that scales a draw into calibrated privacy noise
    _JAX_SCALE_WORDS = frozenset({"sigma", "noise", "multiplier", "sensitivity", "epsilon", "eps", "clip", "norm",
                                  "bound", "std", "stddev", "scale"})

    def _jax_key_noise(self, target: str, node: cst.Call) -> cst.Call | None:
        """(B77-004) ``key = random.PRNGKey(42)`` handed on (``update(key, i, …)``, ``random.split(key)``) in a
        module of a JAX program whose DP step draws ``random.normal(k, g.shape)`` scaled by the clip bound and the
        noise multiplier: every key is a function of the public seed, so the noise can be regenerated. The first such
        draw, or None (the key is never passed on, or the module seeds another key from a value that is not
        public, or no draw is scaled by a privacy quantity)."""
        imports = self.__dict__.get("_jax_imports")
        if imports is None:
            imports = set()
            for sub in walk(self.ctx.module):
                if isinstance(sub, cst.ImportFrom) and sub.module is not None \
                        and (dotted(sub.module) or "") in ("jax", "jax.random") and not isinstance(sub.names, cst.ImportStar):
                    imports |= {(a.asname.name.value if a.asname else a.name.value)  # type: ignore[union-attr]
                                for a in sub.names if (dotted(a.name) or "") == "random"}
                elif isinstance(sub, cst.Import):
                    for a in sub.names:
                        name = dotted(a.name) or ""
                        if name == "jax":
                            imports.add("jax.random")
                        elif name == "jax.random":
                            imports.add(a.asname.name.value if a.asname else "jax.random")  # type: ignore[union-attr]
            self.__dict__["_jax_imports"] = imports
        if not imports:
            return None
        fa = self.ctx.analysis
        scope = self._scope(target, node)
        passed = any(isinstance(sub, cst.Call) and sub is not node and any(
            isinstance(a.value, cst.Name) and a.value.value == target for a in sub.args) for sub in walk(scope))
        if not passed:
            return None
        for sub in fa.nodes(cst.Call):
            if sub is not node and call_name(sub) == "PRNGKey" and sub.args \
                    and number(sub.args[0].value) is None and self._fixed(sub, sub.args[0].value) is None:
                return None  # another key from a seed that may be fresh: the noise may come from that one
        for sub in fa.nodes(cst.Call):
            if not (isinstance(sub.func, cst.Attribute) and sub.func.attr.value in self._JAX_NOISE_DRAWS
                    and (dotted(sub.func.value) or "") in imports and sub.args):
                continue
            parent = fa.parent(sub)
            factors = set()
            while isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Multiply, cst.Divide)):
                factors |= {w for n in value_refs(parent) for w in words(n.split(".")[-1])}
                parent = fa.parent(parent)
            if factors & self._JAX_SCALE_WORDS:
                return sub
        return None

    def _public_caller_seed(self, node: cst.Call, seed: cst.BaseExpression) -> tuple[cst.Call, str] | None:
        """(the call, why) of the first call in this module that passes a public value (a loop position, a
        constant, the run's configured seed) as the seed parameter of the function around ``node``, a parameter
        defaulting to None or required. None when ``seed`` is no such parameter or no caller passes one."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or not isinstance(seed, cst.Name) or fn.name.value.startswith("__"):
            return None
        params = list(all_params(fn))
        index = next((i for i, p in enumerate(params) if p.name.value == seed.value), None)
        if index is None or params[index].default is not None and not (
                isinstance(params[index].default, cst.Name) and params[index].default.value == "None"):
            return None
        method = fa.enclosing_class(fn) is not None
        for call in walk(self.ctx.module):
            if not isinstance(call, cst.Call) or call_name(call) != fn.name.value or self._test_code(call):
                continue
            value = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == seed.value), None)
            if value is None:
                positional = [a.value for a in call.args if a.keyword is None and not a.star]
                at = index - 1 if method and isinstance(call.func, cst.Attribute) else index
                value = positional[at] if 0 <= at < len(positional) else None
            if value is None or isinstance(value, cst.Name) and value.value == "None":
                continue
            reason = self._public_seed(call, value, None, 1)
            if reason is not None:
                return call, f"{reason}, passed as `{seed.value}` to `{fn.name.value}`"
        return None

    def _fixed(self, node: cst.CSTNode, seed: cst.BaseExpression) -> str | None:
        """Why ``seed`` is public: a literal, a parameter with a literal (or no) default, a value derived from
        round/client identifiers. None when it may be fresh entropy or is not visible."""
        if number(seed) is not None:
            return f"the constant `{self.ctx.analysis.code(seed)}`"
        if isinstance(seed, cst.Name):
            fn = self.ctx.analysis.enclosing_function(node)
            if fn is None:
                return None
            for param in all_params(fn):
                if param.name.value != seed.value:
                    continue
                if param.default is None:
                    # a randomiser class that demands a seed from its caller (``BaseLDP(eps, seed)``); a helper's
                    # required seed may be passed None by its public caller
                    return f"the caller's `{seed.value}` (a required argument of the mechanism)" \
                        if "seed" in words(seed.value) and self._mechanism_class(node) \
                        and self._mechanism_init(node) else None
                if number(param.default) is not None:
                    return f"`{seed.value}`, whose default is the constant {self.ctx.analysis.code(param.default)}"
                return None
            return self._derived(node, seed)
        if isinstance(seed, cst.BinaryOperation):
            names = value_refs(seed)
            if any(words(n.split(".")[-1]) & _DERIVED_WORDS for n in names):
                return f"`{self.ctx.analysis.code(seed)}`, computed from round/client identifiers"
        if isinstance(seed, cst.Attribute) and isinstance(seed.value, cst.Name) and seed.value.value == "self":
            return self._class_seed_default(node, seed.attr.value)
        return None

    def _class_seed_default(self, node: cst.CSTNode, attr: str) -> str | None:
        """(B77-020) ``self.random_state`` of a class whose field declares ``random_state: int = 42`` (a dataclass)
        or whose constructor stores its parameter ``random_state=42``: unless the caller overrides it, every fit
        seeds its generator with that public constant."""
        cls = self.ctx.analysis.enclosing_class(node)
        if cls is None:
            return None
        for statement in cls.body.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) \
                            and small.target.value == attr and small.value is not None \
                            and number(small.value) is not None:
                        return f"`self.{attr}`, whose declared default is the constant " \
                               f"{self.ctx.analysis.code(small.value)}"
            elif isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__":
                stored = {last_name(t.target): sub.value for sub in walk(statement) if isinstance(sub, cst.Assign)
                          for t in sub.targets if dotted(t.target) == f"self.{attr}"}
                value = stored.get(attr)
                if isinstance(value, cst.Name):
                    for param in all_params(statement):
                        if param.name.value == value.value and param.default is not None \
                                and number(param.default) is not None:
                            return f"`self.{attr}`, whose constructor default is the constant " \
                                   f"{self.ctx.analysis.code(param.default)}"
        return None

    def _derived(self, node: cst.CSTNode, seed: cst.Name) -> str | None:
        """A local seed named for the noise (``noise_seed``) or assigned from round/client identifiers."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None:
            return None
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and last_name(sub.targets[0].target) == seed.value:
                if _fresh_entropy(sub.value):
                    return None
                if words(seed.value) & _NOISE_SEED_WORDS:
                    return f"`{seed.value}`, a seed set aside for the noise"
                names = value_refs(sub.value)
                if any(words(n.split(".")[-1]) & _DERIVED_WORDS for n in names) and isinstance(
                        sub.value, cst.BinaryOperation):
                    return f"`{seed.value}`, computed from round/client identifiers"
        return None

    def _privacy_parametrised(self, node: cst.CSTNode) -> bool:
        """The function around a local generator reads a privacy parameter (ε, δ, ρ, σ, a sensitivity or a
        noise multiplier) from its parameters, ``self`` or the module: names it assigns itself are built
        from those, so only the names it receives count."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None:
            return True
        local = {last_name(t.target) for sub in walk(fn) if isinstance(sub, cst.Assign) for t in sub.targets}
        local |= {last_name(sub.target) for sub in walk(fn) if isinstance(sub, cst.CompFor)}
        keywords = {id(sub.keyword) for sub in walk(fn) if isinstance(sub, cst.Arg) and sub.keyword is not None}
        keywords.add(id(fn.name))
        for sub in walk(fn):
            if id(sub) in keywords:
                continue
            if isinstance(sub, cst.Param):
                name = sub.name.value
            elif isinstance(sub, cst.Name) and sub.value not in local:
                name = sub.value
            elif isinstance(sub, cst.Attribute):
                name = sub.attr.value
            else:
                continue
            if words(name) & _PRIVACY_PARAMETER_WORDS:
                return True
        return False

    def _scope(self, target: str, node: cst.CSTNode) -> cst.CSTNode:
        """Where ``target`` names this generator: ``self.rng`` within its class, a local within its function;
        another class's ``self.rng`` or another function's ``rng`` is a different generator object."""
        fa = self.ctx.analysis
        if target.startswith("self."):
            cls = fa.enclosing_class(node)
            return cls if cls is not None else self.ctx.module
        if "." not in target:
            fn = fa.enclosing_function(node)
            if fn is not None:
                return fn
        return self.ctx.module

    def _noise_draws(self, target: str, node: cst.CSTNode) -> list[cst.Call]:
        out = []
        for sub in walk(self._scope(target, node)):
            if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) \
                    and sub.func.attr.value in _NOISE_METHODS and dotted(sub.func.value) == target:
                if sub.func.attr.value == "normal" and not self._noise_like_normal(sub):
                    continue
                if self._literal_scale(sub):
                    continue  # ``rng.standard_normal(shape) * 0.01``: simulated updates, no calibrated scale
                if simulated_error_term(self.ctx.analysis.enclosing_function(sub), sub, self.ctx.analysis.parent):
                    continue  # a data simulator's error term on values it drew itself
                if sub.func.attr.value in ("binomial", "geometric") and all(
                        number(a.value) is not None for a in sub.args):
                    continue  # ``rng.binomial(1, 0.6)`` simulates data; a randomised response reads ε
                out.append(sub)
        return out

    def _literal_scale(self, call: cst.Call) -> bool:
        """The draw is scaled only by number literals (``rng.standard_normal(s).astype(f) * 0.01``,
        ``rng.normal(0, 0.05, n)``): privacy noise reads its scale from σ, ε or a sensitivity."""
        fa = self.ctx.analysis
        scale = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in ("scale", "std")),
                     None)
        positional = [a.value for a in call.args if a.keyword is None]
        if scale is None and call.func.attr.value in ("normal", "laplace") and len(positional) >= 2:  # type: ignore[attr-defined]
            scale = positional[1]
        factors: list[cst.BaseExpression] = [] if scale is None else [scale]
        node: cst.CSTNode = call
        parent = fa.parent(node)
        while parent is not None:
            if isinstance(parent, cst.Attribute) and isinstance(fa.parent(parent), cst.Call) \
                    and parent.attr.value in ("astype", "to", "float", "reshape", "type"):
                node = fa.parent(parent)  # a cast or reshape of the draw
            elif isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Multiply, cst.Divide)):
                factors.append(parent.right if parent.left is node else parent.left)
                node = parent
            else:
                break
            parent = fa.parent(node)
        values = [number(f) for f in factors]
        return bool(values) and all(v is not None for v in values) and any(v != 1 for v in values)

    def _noise_like_normal(self, call: cst.Call) -> bool:
        """``rng.normal(0, sigma, …)`` added to something in DP code, not a simulated data set."""
        fa = self.ctx.analysis
        parent = fa.parent(call)
        while isinstance(parent, (cst.Arg, cst.BinaryOperation)) and not (
                isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Add, cst.Subtract))):
            parent = fa.parent(parent)
        if isinstance(parent, cst.BinaryOperation):
            return True
        statement = fa.enclosing_statement(call)
        if isinstance(statement, (cst.Assign, cst.AugAssign)):
            text = fa.code(statement)
            return isinstance(statement, cst.AugAssign) or "noise" in text.lower()
        return False

    def _test_code(self, node: cst.CSTNode) -> bool:
        """A unit test seeds on purpose (reproducible assertions on the noise's distribution)."""
        path = self.ctx.path.replace("\\", "/")
        base = path.rsplit("/", 1)[-1]
        if base.startswith("test_") or base.endswith(("_test.py", "_tests.py")) or "/tests/" in f"/{path}" \
                or "/test/" in f"/{path}":
            return True
        fn = self.ctx.analysis.enclosing_function(node)
        return fn is not None and fn.name.value.startswith("test")

    def _dp_class(self, node: cst.CSTNode) -> bool:
        cls = self.ctx.analysis.enclosing_class(node)
        return cls is not None and bool(words(cls.name.value) & {"ldp", "dp", "laplace", "mechanism", "private",
                                                                  "privacy", "randomizer", "randomiser"}) \
            and self._mechanism_init(node)

    def _mechanism_class(self, node: cst.CSTNode) -> bool:
        """A class named for a randomiser (``BaseLDP``, ``LaplaceMechanism``), not a model that takes ε."""
        cls = self.ctx.analysis.enclosing_class(node)
        return cls is not None and bool(words(cls.name.value) & {
            "ldp", "mechanism", "laplace", "gaussian", "randomizer", "randomiser", "perturbation", "perturber",
            "oracle", "rr"})

    def _mechanism_init(self, node: cst.CSTNode) -> bool:
        fn = self.ctx.analysis.enclosing_function(node)
        return fn is not None and fn.name.value == "__init__" and any(
            words(p.name.value) & {"eps", "epsilon"} for p in all_params(fn))

    def _other_uses(self, target: str, node: cst.CSTNode) -> bool:
        """The generator also shuffles or initialises: its seed may be there for that."""
        for sub in walk(self._scope(target, node)):
            if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) \
                    and dotted(sub.func.value) == target and sub.func.attr.value in (
                        "permutation", "shuffle", "choice", "integers", "randint", "uniform", "rand", "random"):
                return True
        return False

    # -- a global seed --------------------------------------------------------------------------
    def _reseed_before_helper_noise(self, node: cst.Call, seed: cst.Name) -> None:
        """(B74-014) A mechanism taking ε reseeds the global generator with its own parameter whose default is a
        literal (``def metric_privacy(df, epsilon, seed=42): np.random.seed(seed)``) and then has a helper of
        this module, also taking ε, draw the noise for each record (``df.apply(lambda row: _noise(row, epsilon))``):
        with the default every call draws the same, public noise."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        receiver = dotted(node.func.value) or ""  # type: ignore[attr-defined]
        if fn is None or receiver not in ("np.random", "numpy.random") or self._test_code(node):
            return
        why = self._fixed(node, seed)
        if why is None or "default" not in why:
            return
        if not any(words(p.name.value) & {"eps", "epsilon"} for p in all_params(fn)):
            return
        line = fa.line_of(node)
        callees = {c.func.value for c in walk(fn) if isinstance(c, cst.Call) and isinstance(c.func, cst.Name)
                   and fa.line_of(c) > line}
        for statement in self.ctx.module.body:
            if not (isinstance(statement, cst.FunctionDef) and statement is not fn
                    and statement.name.value in callees
                    and any(words(p.name.value) & {"eps", "epsilon"} for p in all_params(statement))):
                continue
            draws = [c for c in walk(statement) if isinstance(c, cst.Call) and isinstance(c.func, cst.Attribute)
                     and dotted(c.func.value) in ("np.random", "numpy.random")
                     and c.func.attr.value in ("laplace", "gamma", "normal", "exponential", "uniform")]
            if draws and any(c.func.attr.value != "uniform" for c in draws):  # type: ignore[attr-defined]
                self.report(node, f"`{fn.name.value}` reseeds the global generator with {why}, and "
                                  f"`{statement.name.value}`, which it calls with ε, draws the privacy noise from it "
                                  f"(line {fa.line_of(draws[0])}): with the default every call draws the same "
                                  f"noise, which anyone with the code can regenerate and subtract; leave the noise "
                                  f"generator unseeded")
                return

    def _global_seed(self, node: cst.Call, name: str) -> None:
        receiver = dotted(node.func.value) or ""  # type: ignore[attr-defined]
        if name == "seed" and receiver not in ("np.random", "numpy.random", "random"):
            return
        if name in ("manual_seed", "manual_seed_all") and not receiver.startswith("torch"):
            return
        if name == "set_seed" and not receiver.startswith("tf"):
            return
        seed = _seed_arg(node)
        if isinstance(seed, (cst.Name, cst.Attribute)) and (
                isinstance(seed, cst.Attribute) or not self._derived(node, seed)) \
                and words((dotted(seed) or "").rsplit(".", 1)[-1]) & _PUBLIC_INDEX_WORDS:
            # (B78-019) ``torch.manual_seed(self.client_id)`` right before ``add_dp_noise(grad, self.dp_sigma)``: the
            # generator is reseeded with a public client/round index, so every such draw repeats
            why = f"`{self.ctx.analysis.code(seed)}`, a public client/round index"
        elif not isinstance(seed, cst.Name):
            return
        else:
            why = self._derived(node, seed)
        if why is None:
            self._reseed_before_helper_noise(node, seed)
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        line = fa.line_of(node)
        if fn is None or not any(isinstance(sub, cst.Call) and fa.is_noise(sub) and fa.line_of(sub) > line
                                 for sub in walk(fn, into_scopes=False)):
            return
        first = min(fa.line_of(sub) for sub in walk(fn, into_scopes=False) if isinstance(sub, cst.Call)
                    and fa.is_noise(sub) and fa.line_of(sub) > line)
        if any(isinstance(sub, cst.Call) and call_name(sub) in _GLOBAL_SEEDS and line < fa.line_of(sub) < first
               and (_seed_arg(sub) is None or _fresh_entropy(_seed_arg(sub))) for sub in walk(fn, into_scopes=False)):
            return  # ``torch.seed()`` before the draw: fresh entropy again
        self.report(node, f"the global generator is seeded with {why}, and the privacy noise drawn after it "
                          f"is reproducible from public information; draw privacy noise from an unseeded generator")


_FLAG_WORDS = frozenset({"dp", "private", "privacy", "dpsgd", "use_dp"})


def _dp_switch_left_off(file: str, line: int, source: str) -> bool:
    """(fix46b-R1) The imported mechanism's draw (``PrivacyEngine(…)`` on ``lstm_trajgan.py:278``) sits under a
    DP switch (``if self.dp:`` / ``if dp:``) of a class whose constructor defaults that switch to off
    (``dp: bool = False``), and this module never names the switch (no ``dp=…`` keyword, no ``.dp =``): the
    script builds the non-private model, and its seed reaches no privacy noise."""
    try:
        with open(file, encoding="utf-8", errors="replace") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return False
    for cls in ast.walk(tree):
        if not (isinstance(cls, ast.ClassDef) and cls.lineno <= line <= (cls.end_lineno or cls.lineno)):
            continue
        init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        if init is None:
            return False
        a = init.args
        positional = [*a.posonlyargs, *a.args]
        off = {p.arg for p, d in zip(positional[::-1], a.defaults[::-1])
               if isinstance(d, ast.Constant) and d.value in (False, None, 0)}
        off |= {p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults)
                if isinstance(d, ast.Constant) and d.value in (False, None, 0)}
        off = {o for o in off if words(o) & _FLAG_WORDS}
        if not off:
            return False
        guards: set[str] = set()
        for branch in ast.walk(cls):
            if isinstance(branch, ast.If) and any(
                    getattr(s, "lineno", 0) <= line <= (getattr(s, "end_lineno", 0) or 0) for s in branch.body):
                for n in ast.walk(branch.test):
                    if isinstance(n, ast.Name) and n.id in off or isinstance(n, ast.Attribute) and n.attr in off:
                        guards.add(n.id if isinstance(n, ast.Name) else n.attr)
        if not guards:
            return False
        return not any(re.search(r"(?<![\w])" + re.escape(g) + r"(?![\w])", source) for g in guards)
    return False
