"""DP721: the private training loader (shuffled fixed-size batches) and the Poisson-rate accountant live in
different modules of one project, so neither module alone shows the mismatch."""
from __future__ import annotations

import ast
import os
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: words of a private (training) loader, and of loaders that are not the private one
_PRIVATE_WORDS = frozenset({"private", "priv", "sensitive"})
_OTHER_WORDS = frozenset({"public", "pub", "test", "eval", "evaluation", "val", "valid", "validation", "calibration",
                          "calib", "holdout", "pretrain", "pretraining", "attack", "shadow", "mia"})
#: keywords that hand an accountant its Poisson sampling rate
_RATE_KEYWORDS = frozenset({"sample_rate", "sampling_rate", "sampling_probability", "q"})
#: words of a call that turns a sampling rate into ε or σ
_ACCOUNTING_WORDS = frozenset({"epsilon", "privacy", "rdp", "noise", "multiplier", "accountant", "sigma", "eps",
                               "dp"})
#: the project samples by Poisson somewhere (Opacus' loader or sampler, ``make_private``'s default)
_POISSON_CODE = re.compile(r"DPDataLoader|UniformWithReplacementSampler|poisson_sampling\s*=\s*True|make_private\s*\("
                           r"|PoissonSampler|\.binomial\(|torch\.rand\([^)]*\)\s*<")
_SKIP_DIRS = frozenset({".git", ".venv", "venv", "site-packages", "node_modules", "__pycache__", "build", "dist",
                        "tests", "test"})
_PROJECT: dict[str, list[tuple[str, str]]] = {}


def _project_texts(path: str, imported: set[str]) -> list[tuple[str, str]]:
    """(file, text) of the project's Python files: the folder above the file's package, or one level higher when
    a top-level module the file imports lives there (``training/main.py`` importing ``data``)."""
    folder = os.path.dirname(os.path.abspath(path))
    root = folder
    while os.path.isfile(os.path.join(root, "__init__.py")) and os.path.dirname(root) != root:
        root = os.path.dirname(root)
    for _ in range(2):
        if not imported or any(os.path.exists(os.path.join(root, m)) or os.path.exists(os.path.join(root, m + ".py"))
                               for m in imported):
            break
        parent = os.path.dirname(root)
        if parent == root or not any(os.path.exists(os.path.join(parent, m)) for m in imported):
            break
        root = parent
    if root in _PROJECT:
        return _PROJECT[root]
    out: list[tuple[str, str]] = []
    for here, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(names):
            if name.endswith(".py") and len(out) < 600:
                file = os.path.join(here, name)
                try:
                    with open(file, encoding="utf-8", errors="replace") as handle:
                        out.append((file, handle.read(400_000)))
                except OSError:
                    continue
    _PROJECT[root] = out
    return out


def _loader_is_private(name: str | None) -> bool:
    w = words(name or "")
    return bool(w & _PRIVATE_WORDS) and not w & _OTHER_WORDS


def _shuffled_fixed_loader(call: ast.Call) -> bool:
    """``DataLoader(ds, batch_size=b, shuffle=True)`` with no sampler of its own."""
    name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    shuffle = keywords.get("shuffle")
    return name == "DataLoader" and "batch_size" in keywords and "sampler" not in keywords \
        and "batch_sampler" not in keywords and isinstance(shuffle, ast.Constant) and shuffle.value is True


def _poisson_accountant_call(call: ast.Call) -> str | None:
    """The rate keyword of a call handing a sampling rate to an accountant (``get_privacy_params(…, sample_rate=q)``)."""
    name = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")
    if not words(name) & _ACCOUNTING_WORDS:
        return None
    for k in call.keywords:
        if k.arg in _RATE_KEYWORDS and not (isinstance(k.value, ast.Constant) and k.value.value is None):
            return k.arg
    return None


def _private_loaders(tree: ast.Module) -> list[ast.Call]:
    """Shuffled fixed-size loaders built in a function named for the private loader (``_build_private_loader``)
    or assigned to a private loader's name (``priv_loader = DataLoader(…)``)."""
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and _loader_is_private(fn.name) \
                and words(fn.name) & {"loader", "loaders", "dataloader", "batches"}:
            found += [c for c in ast.walk(fn) if isinstance(c, ast.Call) and _shuffled_fixed_loader(c)]
        elif isinstance(fn, ast.Assign) and len(fn.targets) == 1 and isinstance(fn.value, ast.Call) \
                and _shuffled_fixed_loader(fn.value):
            target = fn.targets[0]
            name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
            if _loader_is_private(name) and words(name or "") & {"loader", "dataloader"}:
                found.append(fn.value)
    return found


class PrivateLoaderShuffledPoissonAccountedElsewhere(Rule):
    id = "DP721"
    name = "private-loader-shuffled-poisson-accounted-elsewhere"
    category = "general"
    severity = "error"
    summary = ("the private training loader shuffles the data into fixed-size batches, while another module of "
               "the project hands the accountant q = batch / n as a Poisson sampling rate")
    rationale = (
        "Poisson subsampling amplifies privacy only when every record joins every batch independently with "
        "probability q. A private loader that shuffles the data and cuts it into fixed-size batches "
        "(`DataLoader(private_subset, batch_size=b, shuffle=True)`) visits every record exactly once per epoch: "
        "the RDP accountant given `sample_rate = batch_size / len(private)` credits an amplification that did "
        "not happen, and the σ it calibrates (or the ε it reports) does not bound the training. When the loader "
        "is built in a data module (`data/vision.py: _build_private_loader`) and the rate in the training script "
        "(`training/main.py`), each file looks fine alone. Reported: in the loader's module, the shuffled "
        "fixed-size `DataLoader` of a function or name for the private loader, when a project module hands an "
        "accountant a `sample_rate=`/`q=` and the project never samples by Poisson (no `DPDataLoader`, "
        "`UniformWithReplacementSampler`, `make_private`, `poisson_sampling=True`); in the accounting module, "
        "the `q = batch / len(private)` rate handed to the accountant, when this file builds no loader and the "
        "project's private loader is such a shuffled fixed-size one. Not reported: public, calibration, "
        "evaluation and attack loaders, a project that samples by Poisson somewhere, modules with both the "
        "loader and the accountant (DP305 reads those). Fix: sample the private batches by Poisson "
        "(`DPDataLoader`, `UniformWithReplacementSampler`) or account sampling without replacement / "
        "one pass per epoch."
    )
    TRIGGERS = ("DataLoader", "sample_rate", "sampling_rate", "sampling_probability", "q=")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a shuffled fixed-size ``DataLoader``, or a call given a ``sample_rate=``/``q=``."""
        return any(_shuffled_fixed_loader(c) or _poisson_accountant_call(c) for c in facts.calls)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return cls.may_report(facts)

    VALID = (
        # twin of the loader case: the project's private loader samples by Poisson (Opacus' DPDataLoader)
        """
from opacus.data_loader import DPDataLoader
from torch.utils.data import DataLoader
def build_private_loader(private_set, batch_size):
    return DPDataLoader.from_data_loader(DataLoader(private_set, batch_size=batch_size, shuffle=True))
def calibrate(private_set, batch_size, epochs, get_noise_multiplier):
    return get_noise_multiplier(target_epsilon=2.0, target_delta=1e-5,
                                sample_rate=batch_size / len(private_set), epochs=epochs)
""",
        # a public (pre-training) loader may shuffle: the accountant never counts it
        """
from torch.utils.data import DataLoader
def build_public_loader(public_set, batch_size):
    return DataLoader(public_set, batch_size=batch_size, shuffle=True)
""",
        # twin of the rate case: the rate is for Poisson batches the same file samples
        """
from opacus.data_loader import DPDataLoader
def run(priv_base, args, get_privacy_params):
    sample_rate = float(args.batch_size) / float(len(priv_base))
    loader = DPDataLoader(priv_base, sample_rate=sample_rate)
    return loader, get_privacy_params(target_epsilon=args.eps, target_delta=args.delta, sample_rate=sample_rate)
""",
        # ordinary ML: a shuffled training loader in a project with no accountant
        """
from torch.utils.data import DataLoader
def build_private_loader(train_set, batch_size):
    return DataLoader(train_set, batch_size=batch_size, shuffle=True)
def train(model, loader, opt):
    for x, y in loader:
        opt.zero_grad(); model.loss(x, y).backward(); opt.step()
""",
    )
    INVALID = (
        # the private loader shuffles into fixed-size batches; the project's accountant (same file here, as a
        # stand-in for a sibling module) is handed q = batch / n
        """
from torch.utils.data import DataLoader
def _build_private_loader(private_subset, cfg):
    return DataLoader(private_subset, batch_size=cfg.batch_size, shuffle=True)  # <-
def calibrate(cfg, n, get_privacy_params):
    sample_rate = cfg.batch_size / n
    return get_privacy_params(target_epsilon=cfg.eps, target_delta=1e-5, sample_rate=sample_rate)
""",
        # a private loader kept under a private name
        """
from torch.utils.data import DataLoader
def setup(priv_set, bs, compute_epsilon, steps):
    priv_loader = DataLoader(priv_set, batch_size=bs, shuffle=True)  # <-
    return priv_loader, compute_epsilon(noise_multiplier=1.1, steps=steps, sample_rate=bs / len(priv_set))
""",
        # the accounting script: q = batch / |private| with the loader built by the project's data module (the
        # shuffled private loader below stands in for it)
        """
from torch.utils.data import DataLoader
def make_private_loader(private_set, batch_size):
    return DataLoader(private_set, batch_size=batch_size, shuffle=True)  # <-
def main(args, priv_base, get_privacy_params_for_target_epsilon):
    sample_rate = float(args.batch_size) / float(len(priv_base))
    return get_privacy_params_for_target_epsilon(target_epsilon=args.eps, target_delta=args.delta,
                                                 sample_rate=sample_rate, epochs=args.epochs)
""",
        # user-level accounting with q = users / samples, loader shuffled in fixed batches
        """
from torch.utils.data import DataLoader
def build_priv_loader(private_users, bs):
    return DataLoader(private_users, batch_size=bs, shuffle=True)  # <-
def account(priv_loader, priv_base, rdp_epsilon, steps):
    sample_rate = len(priv_loader) / len(priv_base)
    return rdp_epsilon(q=sample_rate, noise_multiplier=1.0, steps=steps)
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        tree = self.ctx.python_tree()
        if tree is None:
            return
        own_loaders = _private_loaders(tree)
        own_rates = [c for c in ast.walk(tree) if isinstance(c, ast.Call) and _poisson_accountant_call(c)]
        if _POISSON_CODE.search(self.ctx.source):
            return
        on_disk = bool(self.ctx.path) and os.path.isfile(self.ctx.path)
        if own_loaders and own_rates:
            self._report_loaders(own_loaders, "this module")
            return
        if not on_disk or not (own_loaders or own_rates):
            return
        imported = {(a.name.split(".")[0]) for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
                     and not n.level}
        texts = _project_texts(self.ctx.path, imported)
        here = os.path.abspath(self.ctx.path)
        if any(_POISSON_CODE.search(text) for _, text in texts):
            return
        if own_loaders and not own_rates:
            for file, text in texts:
                if os.path.abspath(file) == here or "sample_rate" not in text and "q=" not in text \
                        and "sampling_" not in text:
                    continue
                try:
                    other = ast.parse(text)
                except (SyntaxError, ValueError):
                    continue
                calls = [c for c in ast.walk(other) if isinstance(c, ast.Call) and _poisson_accountant_call(c)]
                if calls:
                    self._report_loaders(own_loaders, f"{os.path.relpath(file, os.path.dirname(here))}:{calls[0].lineno}")
                    return
        if own_rates and not own_loaders and not any(isinstance(c, ast.Call) and (
                getattr(c.func, "attr", None) or getattr(c.func, "id", None)) == "DataLoader" for c in ast.walk(tree)):
            for file, text in texts:
                if os.path.abspath(file) == here or "DataLoader" not in text:
                    continue
                try:
                    other = ast.parse(text)
                except (SyntaxError, ValueError):
                    continue
                loaders = _private_loaders(other)
                if loaders:
                    self._report_rates(tree, f"{os.path.relpath(file, os.path.dirname(here))}:{loaders[0].lineno}")
                    return

    def _report_loaders(self, loaders: list[ast.Call], where: str) -> None:
        fa = self.ctx.analysis
        lines = {c.lineno for c in loaders}
        for call in fa.nodes(cst.Call):
            if call_name(call) == "DataLoader" and fa.line_of(call) in lines:
                lines.discard(fa.line_of(call))
                self.report(call, f"the private loader shuffles the data into fixed-size batches, but the accountant "
                                  f"({where}) is handed q = batch / n as a Poisson sampling rate: every record is "
                                  f"used once per epoch, so the amplification credited did not happen and the "
                                  f"σ/ε it computes does not bound this training; sample by Poisson "
                                  f"(`DPDataLoader`) or account the sampling actually used")

    def _report_rates(self, tree: ast.Module, where: str) -> None:
        """``sample_rate = batch / len(priv_base)`` (a division by the size of a private-named set) handed to the
        accountant, and the accountant's rate keyword when it is that division itself."""
        fa = self.ctx.analysis
        handed = {k.value.id for c in ast.walk(tree) if isinstance(c, ast.Call) and _poisson_accountant_call(c)
                  for k in c.keywords if k.arg in _RATE_KEYWORDS and isinstance(k.value, ast.Name)}
        for assign in fa.nodes(cst.Assign):
            if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) \
                    or assign.targets[0].target.value not in handed:
                continue
            value = assign.value
            if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide)):
                continue
            sizes = [c for c in walk(value.right) if isinstance(c, cst.Call) and call_name(c) == "len" and c.args
                     and _loader_is_private(dotted(c.args[0].value))]
            if not sizes:
                continue
            self.report(assign, f"this sampling rate `{fa.code(value).strip()}` goes to the accountant as a Poisson "
                                f"rate, but the project's private loader ({where}) shuffles the data into fixed-size "
                                f"batches, so every record is used once per epoch: the amplification credited did "
                                f"not happen and the σ/ε computed from it does not bound the training; sample by "
                                f"Poisson (`DPDataLoader`) or account the sampling actually used")
