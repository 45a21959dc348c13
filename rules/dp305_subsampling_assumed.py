"""DP305: the accountant assumes Poisson subsampling that the data pipeline does not do."""
from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, param_names, walk, words
from dpcheck.analysis.deadcode import commented_out_functions, outside_dead_functions
from dpcheck.rule import Rule
from dpcheck.analysis.clipping import ident
from dpcheck.analysis import nonrelease

#: accountant calls that take a sampling rate q (keyword or first positional argument)
_RATE_CALLS = re.compile(
    r"^(?:compute_rdp|compute_heterogeneous_rdp|_compute_rdp|compute_rdp_tf|PoissonSampledDpEvent|"
    r"get_noise_multiplier|compute_epsilon\w*|get_epsilon|step|accumulate_privacy_spending|compose|"
    r"compute_dp_sgd_privacy\w*|compute_dp_sgd_privacy_statement|apply_dp_sgd_analysis|get_privacy_spent|"
    r"PrivacyEngine|get_optimizer_hook_fn)$"
)
#: tf-privacy entry points that derive q = batch_size / n themselves (Poisson sampling)
_IMPLIED_RATE = re.compile(r"^(?:compute_dp_sgd_privacy\w*|apply_dp_sgd_analysis)$")
#: the TF moments accountant built with the number of examples: ``accumulate_privacy_spending(…, σ, batch)``
#: charges q = batch / total_examples
_BATCH_CHARGED = frozenset({"accumulate_privacy_spending"})
#: the same accountants' constructors: built with the number of training examples, they charge every later
#: ``accumulate_privacy_spending`` (often in a sanitizer or optimizer module) at q = batch / total_examples
_COUNT_BUILT = re.compile(r"^(?:Gaussian)?MomentsAccountant|AmortizedAccountant$")
_RATE_KEYWORDS = frozenset({
    "q", "sample_rate", "sampling_rate", "sampling_probability", "sampling_prob", "sample_prob",
    "sampling_ratio", "sample_ratio",
})
_POSITIONAL_RATE = frozenset({"compute_rdp", "compute_rdp_tf", "_compute_rdp", "PoissonSampledDpEvent"})
#: calls that read (or target) the ε an accountant computes: the module claims a guarantee
#: a cursor over the data's (shuffled) order: ``next_batch``, ``next_train_batch``
_NEXT_BATCH = re.compile(r"next_(?:[a-z0-9]+_)?batch")
_HELD_OUT_WORDS = frozenset({"test", "val", "valid", "validation", "eval", "evaluation", "holdout", "public"})
_EPSILON_READS = frozenset({
    "get_epsilon", "get_privacy_spent", "compute_epsilon", "make_private_with_epsilon", "get_privacy_spent_epsilon",
    "compute_dp_sgd_privacy", "get_noise_multiplier",
})
#: a file that may Poisson-sample its batches somewhere it can see
_POISSON_TEXT = re.compile(r"(?i)poisson|sampler|DPDataLoader|make_private|binomial|bernoulli|uniformwith")
#: command-line configuration objects: a switch on them is the user's to flip
_CLI_CONFIG = frozenset({"args", "opt", "opts", "flags", "FLAGS", "cfg", "config", "hparams", "options"})
_BATCH_WORDS = frozenset({"batch", "mb", "minibatch", "bs", "batchsize", "lot"})


_ONCE_PER_EPOCH = re.compile(r"once(?:\s|\\s[*+]?)+per(?:\s|\\s[*+]?)+epoch", re.I)
#: words of a name that belongs to private training (a baseline naming none of them is the non-private one)
_PRIVATE_WORDS = frozenset({"dp", "private", "privacy", "noise", "noisy", "epsilon", "eps", "accountant", "sigma",
                            "clip", "clipping", "privacyengine", "dpsgd", "dpkeras"})


#: (h42-1) the Hugging Face trainers whose default ``get_train_dataloader`` shuffles the records (``RandomSampler``)
#: into fixed-size batches
_HF_TRAINERS = frozenset({"Trainer", "Seq2SeqTrainer"})
#: methods that replace the HF trainer's default loader or sampler
_HF_LOADER_HOOKS = frozenset({"get_train_dataloader", "_get_train_sampler"})
_MAX_BASE_DEPTH = 3


#: (h45-QE) the file Poisson-samples (or defers to Opacus' Poisson loader) itself
_OWN_POISSON = re.compile(r"(?i)poisson|DPDataLoader|uniformwith|binomial|bernoulli|batch_sampler|\bsampler\b|"
                          r"\bmake_private(?:_with_epsilon)?\(")
#: DP-SGD steps whose noise multiplier is handed in
_DP_STEPS = re.compile(r"\bDPOptimizer\(|\bnoise_multiplier\s*=\s*(?![\d.]+\b)\w")
#: a Poisson rate from the batch size: ``q = min(1.0, bs / max(1, n_c))``, ``sample_rate = batch_size / len(X)``
_IMPORTER_RATE = re.compile(r"(?m)^\s*(?:q|sample_rate|sampling_rate|sampling_prob\w*|sample_prob)\s*=\s*"
                            r"(?:min\(\s*1(?:\.0)?\s*,\s*)?(?:float\()?[\w.]*\b(?:bs|batch_size|B)\b\)?\s*/")
_IMPORTER_ACCOUNTANT = re.compile(r"(?:\w*calibrate\w*|\w*accountant\w*|get_epsilon|compute_rdp|"
                                  r"get_noise_multiplier|compute_epsilon\w*)\(")
_MAX_SIBLINGS = 60
#: (h45-QE) the Lightning trainer's training loader, its batch size read, and a rate computed from it
_TRAINER_LOADER = re.compile(r"\btrainer\.(?:datamodule\.)?train_dataloader\b")
_LOADER_BATCH_SIZE = re.compile(r"getattr\(\s*\w+\s*,\s*['\"]batch_size['\"]|\b(?:dl|\w*loader)\.batch_size\b")
_LOADER_RATE = re.compile(r"(?m)^\s*((?:self\.)?(?:\w*sample_rate\w*|sampling_rate|sampling_prob\w*|q))\s*=[^\n]*/")


def _poisson_importer(path: str) -> tuple[str, int] | None:
    """A project file beside ``path`` (same folder or its parent) that imports ``path``'s module and computes a
    batch-size Poisson rate that it hands an accountant or calibrator: (its relative name, the rate's line)."""
    if not path or not os.path.isfile(path):
        return None
    folder = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem == "__init__":
        return None
    pkg = os.path.basename(folder)
    imports = re.compile(rf"(?m)^\s*(?:from\s+(?:[\w.]*\.)?{re.escape(stem)}\s+import\b|"
                         rf"from\s+(?:\.+|[\w.]*\b{re.escape(pkg)})\s+import\s+[^\n]*\b{re.escape(stem)}\b|"
                         rf"import\s+(?:[\w.]*\.)?{re.escape(stem)}\b)")
    candidates: list[str] = []
    for base in (folder, os.path.dirname(folder)):
        try:
            names = sorted(os.listdir(base))
        except OSError:
            continue
        candidates += [os.path.join(base, n) for n in names if n.endswith(".py")]
    for other in candidates[:_MAX_SIBLINGS]:
        if os.path.abspath(other) == os.path.abspath(path):
            continue
        try:
            with open(other, encoding="utf-8", errors="replace") as handle:
                text = handle.read(400_000)
        except OSError:
            continue
        if not imports.search(text) or _OWN_POISSON.search(text):
            continue
        rate = _IMPORTER_RATE.search(text)
        if rate is None:
            continue
        name = rate.group(0).split("=")[0].strip()
        after = text[rate.end():]
        if not re.search(rf"{_IMPORTER_ACCOUNTANT.pattern}[^\n]*\b{re.escape(name)}\b", after):
            continue
        line = text.count("\n", 0, rate.start() + len(rate.group(0)) - len(rate.group(0).lstrip())) + 1
        return os.path.relpath(other, os.path.dirname(folder)), line
    return None


def _module_file(path: str, module: str, level: int) -> str | None:
    """The project file an import names: ``from .model_base import X`` (relative to ``path``'s folder) or
    ``from model_base import X`` / ``from src.model_base import X`` (a module in the folder or a parent folder)."""
    folder = os.path.dirname(os.path.abspath(path))
    parts = module.split(".") if module else []
    if level:
        for _ in range(level - 1):
            folder = os.path.dirname(folder)
        bases = [folder]
    else:
        bases = [folder, os.path.dirname(folder), os.path.dirname(os.path.dirname(folder))]
    for base in bases:
        stem = os.path.join(base, *parts) if parts else base
        for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
            if parts and os.path.isfile(candidate):
                return candidate
    return None


def _parsed(path: str) -> ast.Module | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            source = handle.read()
        if len(source) > 400_000:
            return None
        return ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return None


#: (b85) calls that may show a batch size without using it as a rate
_SHOW_CALLS = frozenset({"print", "format", "warn", "info", "debug", "warning", "error", "int", "float", "str",
                         "isinstance", "ValueError", "TypeError", "RuntimeError", "AssertionError"})


def _resolve_def(path: str, tree: ast.Module | None, name: str, hops: int = 2) -> ast.FunctionDef | None:
    """The module-level ``def name`` a call reaches: in this file, or in the project file a ``from … import name``
    names (following one re-export through a package ``__init__``)."""
    if tree is None:
        return None
    local = next((s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == name), None)
    if local is not None or hops <= 0 or not path or not os.path.isfile(path):
        return local
    origin = _import_of(tree, name)
    if origin is None:
        return None
    other = _module_file(path, origin[0], origin[1])
    if other is None or os.path.abspath(other) == os.path.abspath(path):
        return None
    return _resolve_def(other, _parsed(other), name, hops - 1)


def _credits_no_rate(fn: ast.FunctionDef) -> bool:
    """(b85) A σ/ε helper handed the batch size that never turns it into a sampling rate: every use of the batch
    parameter counts steps (``n // batch_size``), is shown (``print``, an f-string) or checked (a comparison that
    raises), so the helper composes full (unsubsampled) steps and credits no Poisson amplification. A true
    division, a product or a call handing the batch on (``compute_rdp(batch / n, …)``) is a rate."""
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
    batch = {p for p in params if words(p) & _BATCH_WORDS}
    if not batch:
        return False
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(fn):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    uses = 0
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in _RATE_KEYWORDS and isinstance(node.ctx, ast.Store):
            return False  # a rate-named variable is worked out
        if isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if _RATE_CALLS.match(called) or called in _EPSILON_READS:
                return False  # an accountant is run inside
        if not (isinstance(node, ast.Name) and node.id in batch and isinstance(node.ctx, ast.Load)):
            continue
        uses += 1
        parent = parents.get(node)
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.FloorDiv) and parent.right is node:
            continue
        if isinstance(parent, (ast.Compare, ast.FormattedValue)):
            continue
        if isinstance(parent, ast.Call) and node in parent.args:
            func = parent.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in _SHOW_CALLS:
                continue
        return False
    return uses > 0


def _import_of(tree: ast.Module, name: str) -> tuple[str, int] | None:
    """(module, level) a module-level ``from … import name`` binds ``name`` from."""
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom):
            for alias in stmt.names:
                if (alias.asname or alias.name) == name:
                    return stmt.module or "", stmt.level
    return None


def _class_chain(path: str, tree: ast.Module, cls: ast.ClassDef, depth: int = 0
                 ) -> list[tuple[str, ast.Module | None, ast.ClassDef | None, str]]:
    """The classes ``cls`` inherits from, followed through this file and project files it imports
    (``(file, tree, class, qualified name)``; a library base has no tree or class)."""
    out: list[tuple[str, ast.Module | None, ast.ClassDef | None, str]] = []
    if depth >= _MAX_BASE_DEPTH:
        return out
    for base in cls.bases:
        if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) \
                and base.value.id in ("transformers", "trl"):
            out.append(("", None, None, f"{base.value.id}.{base.attr}"))  # ``class T(transformers.Trainer)``
            continue
        name = base.id if isinstance(base, ast.Name) else None
        if name is None:
            continue
        local = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == name), None)
        if local is not None:
            out.append((path, tree, local, name))
            out += _class_chain(path, tree, local, depth + 1)
            continue
        origin = _import_of(tree, name)
        if origin is None:
            continue
        module, level = origin
        if not level and module.split(".")[0] in ("transformers", "trl"):
            out.append(("", None, None, f"{module}.{name}"))
            continue
        other = _module_file(path, module, level) if path and os.path.isfile(path) else None
        other_tree = _parsed(other) if other else None
        if other_tree is None:
            continue
        found = next((s for s in other_tree.body if isinstance(s, ast.ClassDef) and s.name == name), None)
        if found is not None:
            out.append((other, other_tree, found, name))
            out += _class_chain(other, other_tree, found, depth + 1)
    return out


def _defines(cls: ast.ClassDef, names: frozenset[str]) -> bool:
    return any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name in names for s in cls.body)


def _hf_default_loader(path: str, tree: ast.Module, cls: ast.ClassDef) -> bool:
    """The class inherits ``get_train_dataloader`` from a Hugging Face trainer and no class on the way overrides
    the loader or its sampler."""
    if _defines(cls, _HF_LOADER_HOOKS):
        return False
    for _file, _tree, base, qual in _class_chain(path, tree, cls):
        if base is None:
            return qual.split(".")[0] == "transformers" and qual.rsplit(".", 1)[-1] in _HF_TRAINERS
        if _defines(base, _HF_LOADER_HOOKS):
            return False
    return False


def _shuffled_loader_in(cls: ast.ClassDef, attribute: str) -> bool:
    """``self.<attribute> = DataLoader(…, shuffle=True)`` in a method of ``cls``, with no sampler."""
    for node in ast.walk(cls):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        if not any(isinstance(t, ast.Attribute) and t.attr == attribute and isinstance(t.value, ast.Name)
                   and t.value.id == "self" for t in node.targets):
            continue
        call = node.value
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name != "DataLoader":
            continue
        keywords = {k.arg: k.value for k in call.keywords if k.arg}
        shuffle = keywords.get("shuffle")
        if isinstance(shuffle, ast.Constant) and shuffle.value is True and "sampler" not in keywords \
                and "batch_sampler" not in keywords:
            return True
    return False


def _inherited_shuffled_loader(path: str, tree: ast.Module, cls: ast.ClassDef, attribute: str) -> str | None:
    """The file of the project base class that builds ``self.<attribute>`` as a shuffled fixed-size loader,
    when ``cls`` itself (in this file) never assigns it."""
    if _assigns_attribute(cls, attribute):
        return None
    for file, base_tree, base, _qual in _class_chain(path, tree, cls):
        if base is None or base_tree is None:
            continue
        if _assigns_attribute(base, attribute):
            if file == path or _POISSON_TEXT.search(ast.unparse(base)):
                return None
            return file if _shuffled_loader_in(base, attribute) else None
    return None


def _assigns_attribute(cls: ast.ClassDef, attribute: str) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.ctx, ast.Store)
               and isinstance(node.value, ast.Name) and node.value.id == "self" for node in ast.walk(cls))


def fa_code(rule: Rule, node: cst.CSTNode) -> str:
    return " ".join(rule.ctx.analysis.code(node).split())


def _count_built(call: cst.Call, name: str) -> bool:
    """``GaussianMomentsAccountant(len(X_train))``, ``AmortizedAccountant(total_examples)``: a TF moments or
    amortized accountant given the training-set size (its charges then assume q = batch / n)."""
    if not _COUNT_BUILT.match(name):
        return False
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    sized = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "total_examples"]
    return any(number(v) is None for v in positional[:1] + sized)


#: autodp's mechanisms that amplify by Poisson subsampling (``AmplificationBySampling(PoissonSampling=True)``)
_AUTODP_SUBSAMPLED = frozenset({"SubsampleGaussianMechanism", "SubsampleLaplaceMechanism", "SubsampledGaussian",
                                "SubsampledGaussianMechanism"})


def _autodp_subsampled(call: cst.Call, name: str) -> bool:
    """``SubsampleGaussianMechanism(params)`` or a calibrator given it (``calibrate(SubsampleGaussianMechanism, ε, δ,
    …, params=p)``, autodp's ``generalized_eps_delta_calibrator``): a mechanism accounted with Poisson subsampling at
    the rate ``params['prob']``. Written by r4 as a recall helper (precision of DP305 is owned elsewhere)."""
    if name.split(".")[-1] in _AUTODP_SUBSAMPLED:
        return True
    if words(name) >= {"poisson", "subsampled"} and len(call.args) >= 2:
        return True  # autodp's ``compose_poisson_subsampled_mechanisms(mech, prob, coeff)``: Poisson at rate prob
    return any(a.keyword is None and isinstance(a.value, (cst.Name, cst.Attribute))
               and (ident(a.value) or "").split(".")[-1] in _AUTODP_SUBSAMPLED for a in call.args[:1])


def _row_slice(node: cst.Subscript) -> bool:
    """(r4 recall helper) ``x[a:b]`` or ``x[a:b, :]`` (rows a..b, every column): a slice of the records."""
    if not node.slice or not isinstance(node.slice[0].slice, cst.Slice):
        return False
    return all(isinstance(e.slice, cst.Slice) and e.slice.lower is None and e.slice.upper is None
               and e.slice.step is None or nonrelease.column_pick(e) for e in node.slice[1:])


def _accountant_named(name: str) -> bool:
    """``MomentsAccountant``, ``RDPAccountant``, ``PrivacyAccountant``: an accountant built with a rate."""
    return name.endswith("Accountant") or name.endswith("_accountant")


#: a project's own accountant helper (``comp_eps(lmbda, q, sigma, T, delta)``, ``compute_sigma(q, steps, …)``)
#: a Poisson rate a project's accountant factory sets from the batch size (``sampling_probability=cfg.batch_size / n``)
_PROJECT_POISSON_RATE = re.compile(r"(?:sampling_probability|sample_rate|sampling_rate|sample_prob|sampling_prob|\bq)"
                                   r"\s*=\s*[\w.]*batch_size\s*/")
_ACCOUNTANT_HELPER_WORDS = frozenset({"eps", "epsilon", "privacy", "rdp", "renyi", "moments", "sigma"})


def _accountant_helper(name: str) -> bool:
    return bool(words(name) & _ACCOUNTANT_HELPER_WORDS) and not words(name) & {"without", "replacement", "replace"}


def _held_value(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``self.epsilon_level[0]`` -> ``self.epsilon_level``; ``float(eps)`` -> ``eps``."""
    expr = _unwrap(expr)
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr


def _rate_argument(call: cst.Call, *, helpers: bool = True) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in _RATE_KEYWORDS:
            return arg.value
    if call_name(call) in _POSITIONAL_RATE:
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        return positional[0] if positional else None
    if helpers and _accountant_helper(call_name(call)):
        if not words(call_name(call)) & {"sigma", "noise"} and any(
                words(dotted(_held_value(a.value)) or "") & {"epsilon", "eps"} for a in call.args):
            return None  # handed ε, it spends a budget given to it (one ε per record), it does not account a rate
        return next((a.value for a in call.args if a.keyword is None and not a.star
                     and isinstance(_unwrap(a.value), (cst.Name, cst.Attribute)) and _rate_named(_unwrap(a.value))),
                    None)
    return None


_UNIFORM = frozenset({"uniform", "rand", "random", "random_sample", "rand_like", "uniform_"})


def _rate_named(expr: cst.BaseExpression) -> bool:
    name = ident(expr)
    return name is not None and (name in _RATE_KEYWORDS or name.split(".")[-1] == "q" or bool(
        words(name) & {"sampling", "prob", "probability", "rate"}
        and not words(name) & {"lr", "learning", "dropout", "drop", "decay", "keep", "mask", "error"}))


def _batch_named(expr: cst.BaseExpression | None) -> bool:
    if expr is None:
        return False
    name = ident(expr)
    if name is None and isinstance(expr, cst.Tuple) and expr.elements:
        name = ident(expr.elements[0].value)
    if name is None or words(name) & {"micro", "microbatch", "micro_batch"} or name.lower().startswith("micro"):
        return False  # micro-batches split one batch for clipping; they are not how the batch is drawn
    return bool(words(name) & _BATCH_WORDS or name.lower().endswith("batch_size"))


#: the participants of a federated round: a fixed-size draw of them is a fixed-size cohort
_COHORT_WORDS = frozenset({"client", "clients", "cohort", "participants", "participant", "users", "workers",
                           "devices", "parties", "selected", "participating", "nodes"})


def _cohort_named(expr: cst.BaseExpression | None) -> bool:
    """``num_clients``, ``range(NUM_CLIENTS)``, ``clients_per_round``, ``len(self.users)``."""
    if expr is None:
        return False
    if isinstance(expr, cst.Call) and call_name(expr) in ("range", "len", "list", "arange") and expr.args:
        expr = expr.args[-1].value if call_name(expr) in ("range", "arange") else expr.args[0].value
    name = ident(expr)
    return name is not None and bool(words(name) & _COHORT_WORDS) and not words(name) & {"test", "eval", "val"}


_NOT_RECORDS = frozenset({"dim", "classes", "class", "labels", "label", "categories", "cats", "k", "vocab", "z",
                          "latent", "actions", "arms", "options", "choices", "colors", "ydim", "columns", "column",
                          "cols", "features", "attributes", "attrs"})


def _records(expr: cst.BaseExpression | None) -> bool:
    """Could ``expr`` be the number (or the array) of training records a batch is drawn from?
    Not a class count or a dimension (``self.y_dim``, ``num_classes``), not a small literal."""
    if expr is None:
        return False
    value = number(expr)
    if value is not None:
        return value >= 1000
    name = ident(expr)
    if name is not None:
        return not words(name) & _NOT_RECORDS
    return True


def _unwrap(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``float(FLAGS.batch_size)`` -> ``FLAGS.batch_size``."""
    while isinstance(expr, cst.Call) and call_name(expr) in ("float", "int") and len(expr.args) == 1:
        expr = expr.args[0].value
    return expr


#: a call splitting the units (records, clients) into disjoint groups: ``divide_into_subgroups``, ``split_into_chunks``
_PARTITION_VERBS = frozenset({"divide", "split", "partition", "chunk"})
_PARTITION_NOUNS = frozenset({"subgroups", "groups", "chunks", "partitions", "subsets", "shards", "parts", "cohorts"})


def _partition_named(name: str) -> bool:
    pieces = words(name)
    return name == "array_split" or bool(pieces & _PARTITION_VERBS) and bool(pieces & _PARTITION_NOUNS)


def _ast_batch_source(facts: AstFacts, call: ast.Call) -> bool:
    """``_batch_source`` on CPython's ``ast``, loosened (a superset)."""
    names = facts.call_lasts(call)
    if any(_partition_named(n) for n in names) or any(
            words(n) & {"shuffle", "shuffled", "shuffling"} and words(n) & {"sampler", "loader", "dataloader"}
            for n in names):
        return True
    keywords = {k.arg: k.value for k in call.keywords}
    if names & {"choice", "randint", "randrange", "integers", "RandomSampler", "next_batch"} \
            or any(words(n) >= {"without", "replace"} for n in names):
        return True
    if "batch_size" in keywords and any(n.endswith("inputs") or n in ("shuffle_batch", "batch") for n in names):
        return True
    if any(isinstance(a, (ast.Name, ast.Attribute)) and "batch" in ast.unparse(a).lower() for a in call.args) \
            or "batch_size" in keywords:
        return True  # a loader factory given the batch size
    if names & {"sample", "permutation", "randperm"} and call.args:  # a cohort drawn without replacement
        return True
    if "DataLoader" in names:
        shuffle = keywords.get("shuffle")
        if "batch_size" in keywords and "sampler" not in keywords and "batch_sampler" not in keywords:
            return True  # shuffled or not: fixed-size batches either way
        return shuffle is not None and not (isinstance(shuffle, ast.Constant) and shuffle.value is not True)
    if "fit" in names:
        return "batch_size" in keywords and "epochs" in keywords
    if "batch" in names and isinstance(call.func, ast.Attribute):
        return isinstance(call.func.value, (ast.Call, ast.Name))
    return False


def _ast_rate_call(facts: AstFacts, call: ast.Call) -> bool:
    """``visit_Call``'s accountant test on CPython's ``ast`` (a superset: every called name)."""
    for name in facts.call_lasts(call):
        if _accountant_helper(name) and any(isinstance(a, (ast.Name, ast.Attribute)) for a in call.args):
            return True
        if not (_RATE_CALLS.match(name) or _accountant_named(name)):
            continue
        keywords = {k.arg for k in call.keywords}
        if _IMPLIED_RATE.match(name) or keywords & _RATE_KEYWORDS:
            return True
        if name in _POSITIONAL_RATE and call.args:
            return True
        if name == "PrivacyEngine" and "batch_size" in keywords:
            return True
        if _COUNT_BUILT.match(name) and (call.args or "total_examples" in keywords):
            return True
    return _ast_helper_rate(facts, call)


_HELPER_WORDS = frozenset({"privacy", "epsilon", "renyi", "rdp", "accountant"})
_SIZE_WORDS = frozenset({"n", "num", "examples", "samples", "size", "total", "ntrain", "dataset", "len", "length"})


def _helper_name(name: str) -> bool:
    """``compute_renyi_privacy``, ``get_rdp_epsilon``, ``compute_noise`` (tf-privacy's σ search): a project's
    own accountant helper, or a σ calibration from the record count and the batch size."""
    pieces = words(name)
    if pieces & {"without", "replacement", "replace", "uniform", "shuffle", "shuffling", "shuffled"}:
        return False
    if pieces & {"mu", "eps"} and pieces & {"compute", "calc", "calculate", "get"}:
        return True  # GDP's CLT accountant ``compute_mu_poisson`` / ``compute_muP(epoch, sigma, n, batch)``
    return bool(pieces & _HELPER_WORDS) or bool(
        pieces & {"noise", "sigma"} and pieces & {"compute", "calc", "calculate", "get", "calibrate", "find"})


def _size_like(expr: cst.BaseExpression) -> bool:
    """``len(dset)``, ``n_train``, ``num_examples``: the number of records a rate is taken over."""
    if isinstance(expr, cst.Call) and call_name(expr) == "len":
        return True
    name = ident(expr)
    return name is not None and not _batch_named(expr) and bool(words(name.split(".")[-1]) & _SIZE_WORDS)


def _counted(expr: cst.CSTNode | None) -> bool:
    """``len(ds)`` or ``X.shape[0]``: a value counted from the data."""
    if isinstance(expr, cst.Call):
        return call_name(expr) == "len"
    return isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) \
        and expr.value.attr.value == "shape" and len(expr.slice) == 1 \
        and isinstance(expr.slice[0].slice, cst.Index) and number(expr.slice[0].slice.value) == 0


def _helper_rate(call: cst.Call, name: str, value_of: Callable[[cst.CSTNode], cst.CSTNode | None] | None = None) -> bool:
    """An accountant helper handed the record count and the batch size (``compute_renyi_privacy(len(ds),
    batch_size, steps, sigma, delta)``): like tf-privacy's ``compute_dp_sgd_privacy`` it derives q = batch / n
    and analyses Poisson sampling. The count is known by where it comes from as well as by its name
    (``totalsamples = len(dataset)`` handed to ``analysis.epsilon(totalsamples, batch_size, ...)``)."""
    if not _helper_name(name):
        return False
    values = [a.value for a in call.args if not a.star]
    resolved = [value_of(v) if value_of is not None and isinstance(v, cst.Name) else None for v in values]
    return (any(_size_like(v) or _counted(r) and not _batch_named(v) for v, r in zip(values, resolved)) or any(
        a.keyword is None and _dataset_literal(a.value) for a in call.args)) and (
        any(_batch_named(v) for v in values) or _keyword(call, "batch_size") is not None)


_PREPROCESSING_CALLS = frozenset({"partial_fit", "transform", "fit_transform", "inverse_transform"})
_TRAINING_STEP_CALLS = frozenset({"step", "backward", "train_on_batch", "apply_gradients", "minimize", "train_step",
                                  "fit", "update", "train"})


def _dataset_literal(expr: cst.BaseExpression) -> bool:
    """``compute_epsP(epoch, sigma, 60000, batch_size, delta)``: a training-set size written as a number."""
    value = number(expr)
    return isinstance(expr, cst.Integer) and value is not None and value >= 1000 and value % 100 == 0


def _ast_helper_rate(facts: AstFacts, call: ast.Call) -> bool:
    """``_helper_rate`` on CPython's ``ast`` (a superset: any length or name argument beside a batch name)."""
    if not any(_helper_name(n) for n in facts.call_lasts(call)):
        return False
    values = [*call.args, *(k.value for k in call.keywords)]
    return any(isinstance(v, ast.Call) or isinstance(v, (ast.Name, ast.Attribute)) for v in values) and (any(
        isinstance(v, (ast.Name, ast.Attribute)) and "batch" in ast.unparse(v).lower() for v in values)
        or any(k.arg == "batch_size" for k in call.keywords))


def _ast_coin_per_batch(loop: ast.AST) -> bool:
    """``for b in loader: if rand() > p: continue`` on CPython's ``ast``."""
    body = getattr(loop, "body", [])
    first = body[0] if body else None
    return isinstance(first, ast.If) and len(first.body) == 1 and isinstance(first.body[0], ast.Continue) and any(
        isinstance(n, ast.Call) and isinstance(n.func, (ast.Attribute, ast.Name))
        and (n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id) in _UNIFORM for n in ast.walk(first.test))


def _ast_rate_named(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name is not None and (name in _RATE_KEYWORDS or bool(
        words(name) & {"sampling", "prob", "probability", "rate"} and not words(name) & {"lr", "learning"}))


def _ast_self_claimed(facts: AstFacts) -> bool:
    """The code's own spelling claims a sampling rate next to a batch source: ``binomial`` and ``choice``;
    a ``DataLoader(batch_size=name)`` in a file computing ``len(…) * q``; ``self.x = choice(…)`` in
    ``__init__`` in a file passing ``q=``/``sample_rate=`` to a call."""
    called = facts.called
    if "DataLoader" in called and "len" in called and any(
            _ast_rate_named(b.left) or _ast_rate_named(b.right) for b in facts.binops(ast.Mult)):
        return True
    if called & {"choice", "sample"} and "len" in called and any(
            _ast_rate_named(b.left) or _ast_rate_named(b.right) for b in facts.binops(ast.Mult)) and any(
            words(fn.name) & {"noise", "sigma", "multiplier", "epsilon", "eps", "privacy", "rdp", "accountant",
                              "accounting", "budget"} for fn in facts.functions):
        return True  # (h44-2) a draw sized ``len(units) * rate`` beside a function computing σ or ε from the rate
    if not called & {"choice", "permutation", "sample"} or not any(
            k.arg in _RATE_KEYWORDS for call in facts.calls for k in call.keywords):
        return False
    return any(fn.name == "__init__" and any(
        isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Attribute) and isinstance(n.value, ast.Call)
        and facts.call_lasts(n.value) & {"choice", "permutation", "sample"} for n in ast.walk(fn))
        for fn in facts.functions)


def _engine_rate(call: cst.Call, name: str) -> bool:
    """A privacy engine told the batch and the dataset size (private-transformers, Opacus 0.x):
    it accounts q = batch_size / sample_size as Poisson subsampling."""
    return name == "PrivacyEngine" and _keyword(call, "batch_size") is not None and (
        _keyword(call, "sample_size") is not None or _keyword(call, "sample_rate") is not None)


def _noiseless(call: cst.Call) -> bool:
    """An engine built with ``noise_multiplier=0.0`` only clips: its accountant credits nothing."""
    arg = _keyword(call, "noise_multiplier") or _keyword(call, "sigma")
    return arg is not None and number(arg.value) == 0


def _whole_dataset(call: cst.Call) -> bool:
    """``DataLoader(ds, batch_size=73257)`` or ``batch_size=len(ds)``: one batch that loads the whole set into
    memory, not the training batches."""
    size = _keyword(call, "batch_size")
    if size is None:
        return False
    value = number(size.value)
    if value is not None:
        return value >= 10_000
    return isinstance(size.value, cst.Call) and call_name(size.value) == "len"


def _keyword(call: cst.Call, name: str) -> cst.Arg | None:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"



_BATCH_KEYS = frozenset({"batch_size", "batch", "lot_size", "expected_batch_size"})
_COUNT_KEYS = frozenset({"n", "N", "num_examples", "n_samples", "num_samples", "dataset_size", "sample_size",
                         "n_train", "num_train", "population_size", "data_size"})


def _whole_batch_call(call: cst.Call, code) -> bool:  # noqa: ANN001 - FileAnalysis.code
    """``compute_noise(n=n, batch_size=n, …)`` or ``compute_dp_sgd_privacy(n, n, sigma, 1, delta)``: the batch
    argument is the record count itself, so q = 1 and nothing is amplified."""
    batch = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in _BATCH_KEYS), None)
    count = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in _COUNT_KEYS), None)
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if batch is None and count is None and len(positional) >= 2 and call_name(call) in (
            "compute_dp_sgd_privacy", "compute_noise", "compute_dp_sgd_privacy_statement"):
        count, batch = positional[0], positional[1]
    if batch is None or count is None:
        return False
    return code(batch).strip() == code(count).strip()


def _uncalled_functions(module: cst.Module) -> set[int]:
    """Module-level functions whose name no other code of the module reads (not called, not passed on)."""
    defs = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
    if not defs:
        return set()
    used: set[str] = set()
    for n in walk(module):
        if isinstance(n, cst.Name) and n.value in defs and not any(n is d.name for d in defs.values()):
            used.add(n.value)
    return {id(d) for name, d in defs.items() if name not in used}

#: calls that only write a value out (a logger's methods, ``print``, formatting and plain conversions)
_LOG_CALLS = frozenset({"info", "warn", "warning", "debug", "error", "highlight", "log", "print", "format", "write",
                        "getattr", "len", "str", "float", "int", "round", "max", "min", "join", "append", "isoformat",
                        "success", "critical", "exception", "echo", "secho", "add_scalar", "get"})


def _logging_only_functions(module: cst.Module) -> frozenset[str]:
    """Top-level functions whose every call writes to a log, prints or formats (no accountant, no training)."""
    out = set()
    for statement in module.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        calls = [c for c in walk(statement.body) if isinstance(c, cst.Call)]
        if calls and all(call_name(c) in _LOG_CALLS for c in calls) \
                and any(call_name(c) in ("info", "log", "print", "highlight", "write", "echo") for c in calls):
            out.add(statement.name.value)
    return frozenset(out)


class SubsamplingAssumed(Rule):
    id = "DP305"
    name = "subsampling-assumed"
    category = "general"
    severity = "error"
    summary = "sampling rate q given to the accountant while batches are drawn with replacement, shuffled into fixed batches, or Opacus runs without Poisson sampling"
    rationale = (
        "Privacy amplification by subsampling — the q = batch/n that RDP/moments accountants "
        "(`compute_rdp(q, σ, steps, orders)`, `RDPAccountant.step(sample_rate=q)`, "
        "`compute_dp_sgd_privacy(n, batch_size, …)`, `get_noise_multiplier(sample_rate=q)`) "
        "take — holds only when every record joins each batch independently with probability q "
        "(Poisson sampling). A pipeline that draws the batch with replacement "
        "(`np.random.choice(n, batch_size)`, `randint(0, n, batch_size)`), shuffles the data into "
        "fixed-size batches (`DataLoader(shuffle=True)`, `tf.data…shuffle().batch()`, Keras "
        "`fit(batch_size=…)`), or turns Opacus' Poisson sampling off (`poisson_sampling=False`) "
        "is not what the accountant analysed: the reported ε is not a bound for the training that "
        "ran (shuffled batches can cost several times more). The same holds for an accountant helper "
        "given n and the batch size (`compute_renyi_privacy(len(ds), batch_size, …)` derives q), for "
        "fixed-size draws without replacement against a Poisson accountant, and for one coin per "
        "loader batch (`if rand() > p: continue` keeps or drops whole batches). Some code claims the "
        "rate in its own spelling, with the accountant elsewhere: a binomial (Poisson) batch size "
        "then filled with replacement, fixed batches of size `len(data) * q`, a subsample drawn once "
        "in `__init__` with the rate a call receives as `q=` — each is reported without an "
        "accountant in the file. "
        "The batch source and the sampling rate handed to the accountant are both reported. "
        "Not reported: an accountant call whose batch is the record count itself (`compute_noise(n=n, batch_size=n, epochs=1)`: q = 1, nothing amplified), a `q = batch / n` in a module-level function the file never calls beside one it does, Poisson samplers (`UniformWithReplacementSampler`, Opacus' `DPDataLoader`, "
        "`make_private` with its default Poisson sampling), sampling without replacement, a file "
        "with no accountant taking a sampling rate, `poisson_sampling=False` in a file that never "
        "reads ε (tests of the optimizer's mechanics), a shuffled loader the same function hands to a "
        "Poisson sampler (`DPDataLoader.from_data_loader(loader)`), a loader of held-out records "
        "(`DataLoader(ValidDataset(…))`, `DataLoader(test_set)`), a draw over columns or features "
        "(a conditioning column per row), a helper handed ε values (a per-record local budget, not a rate). "
        "Fix: draw each batch by Poisson sampling (keep every record with probability q), or "
        "account the sampling actually used (e.g. `SampledWithReplacementDpEvent`, shuffling "
        "analyses)."
        " Also reported: a cursor over a shuffled order (`next_batch`, `next_train_batch`) against an Opacus "
        "optimizer-hook accountant (only in functions that step the hooked optimizer), and a rate computed in"
        " the branch that turns Poisson sampling off but handed to the accountant after it. Not reported: "
        "`poisson_sampling=False` whose ε is only asserted (a unit test)."
        " A TF moments or amortized accountant built with the training-set size "
        "(`GaussianMomentsAccountant(len(X))`, `AmortizedAccountant(n)`) charges q = batch / n wherever "
        "`accumulate_privacy_spending` runs (often a sanitizer module): built in a file that draws "
        "fixed or with-replacement batches, it is the accountant side. Not reported either: an Opacus "
        "engine with `noise_multiplier=0.0` (clip only, no ε claimed)."
        " (h38-2) Also reported: `df.sample(batch)` on a data frame, the first batch-size indices of a fresh "
        "permutation each step (`X[perm[:b]]`), `choice(n, int(q * n))` (exactly q·n records, with or without "
        "replacement), and `make_private(poisson_sampling=args.flag)` (a command-line switch turns Poisson off) in "
        "a file that reads ε; autodp's `compose_poisson_subsampled_mechanisms(mech, prob, …)` is an accountant, and "
        "it speaks for draws in the helpers its function calls. Not reported: `sample(batch)` on a distribution or "
        "a conditional-vector sampler, labels compared block by block for an accuracy figure."
        " A rate `q = batch / n` inside a function named for computing ε (`calculate_eps`, `compute_epsilon`) "
        "that the module calls is the module's own accountant (an ε formula worked out by hand): it speaks for "
        "the batches drawn wherever the module trains. Contiguous blocks of a (shuffled) list, "
        "`order[start:start + lot]` with `start` stepping through `range(0, n, lot)`, are fixed-size batches "
        "like `data[i*b:(i+1)*b]`."
        " "
        "(h44-2) Also reported: a fixed-size draw without replacement whose size is the rate times the number of units (`choice(users, max(1, int(len(users) * rate)), replace=False)`) when the same rate feeds an accountant call or a hand-written calibration (`q * sqrt(2T log(1/δ)) / ε` in a function named for σ/noise/ε); and `make_private(data_loader=None)` (the engine never builds its Poisson loader). When a helper's accountant gets the rate through a name (`q = batch / N; helper(sample_rate=q)`), the `batch / N` line is reported as well."
        " (h44b-2) Also reported: the `sample_size=` of an Opacus 0.x / private-transformers "
        "`PrivacyEngine(batch_size=…, sample_size=…)` (the claim side, beside the loader), torch's "
        "`randint(n, (batch_size,))` (indices with replacement), CTGAN's `DataSampler.sample_data(batch_size, …)` "
        "(fixed-size rows conditioned on a category), and a project module's accountant factory handed the record "
        "count whose body sets `sampling_probability=config.batch_size / n`. Bad: `idx = torch.randint(n, (bs,))` "
        "with `compute_rdp(q=bs / n, …)`. Good: `idx = torch.nonzero(torch.rand(n) < q)` (Poisson sampling). A launcher that hands training to "
        "fairseq (`[\"python\", \"train.py\", data, \"--max-sentences\", …]`, `fairseq-train`) while accounting "
        "q = batch / n is the same: fairseq's epoch iterator shuffles every record into one fixed-size batch per "
        "epoch."
    )
    TRIGGERS = ("poisson_sampling", "compute_rdp", "sample_size", "sample_rate", "sampling_rate", "sampling_probability", "sampling_prob", "sample_prob", "sampling_ratio", "sample_ratio", "q =", "q=",
                "compute_dp_sgd_privacy", "PoissonSampledDpEvent", "get_noise_multiplier", "apply_dp_sgd_analysis",
                "binomial(", "without_replace", "*q", "* q", "_privacy(", "_epsilon(", "compute_noise", "Accountant",
                "eps(", "sigma(", "sigma_", ".epsilon(", "Subsample", "poisson_subsampled", "multiplier(", "compute_mu",
                "compute_eps", "get_eps", "calc_eps", "data_loader=None", "_accountant(", "--max-sentences",
                "fairseq-train", "DPOptimizer(", "noise_multiplier=")
    #: checked in ``leave_Module``: a binomial batch size filled with replacement is Poisson sampling gone
    #: wrong wherever it is (a sampler module need not mention noise)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is ``poisson_sampling=``, or a batch source (``choice``, ``randint``,
        ``DataLoader``, ``RandomSampler``, ``batch``, ``fit``, a slice) in a file that calls an
        accountant taking a rate or assigns a rate-named variable."""
        if "binomial" in facts.called and "choice" in facts.called:
            return True
        if not facts.may_have_dp_context:
            return False
        if facts.called & {"make_private", "make_private_with_epsilon"}:
            return True
        if "poisson_sampling" in facts.source or _ast_self_claimed(facts):
            return True
        claims = any(_ast_rate_call(facts, call) for call in facts.calls) or any(
            isinstance(t, ast.Name) and t.id in _RATE_KEYWORDS
            and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Div)  # type: ignore[attr-defined]
            for node in facts.nodes(ast.Assign) for t in node.targets)  # type: ignore[attr-defined]
        claims = claims or any(m in facts.source for m in _AUTODP_SUBSAMPLED) \
            or "poisson_subsampled" in facts.source  # (r4) autodp mechanisms
        # (h45-QE) DP-SGD steps handed their σ, which an importing module may have calibrated with a Poisson rate
        claims = claims or bool(_DP_STEPS.search(facts.source)) and not _OWN_POISSON.search(facts.source)
        if not claims:
            return False
        return any(_ast_batch_source(facts, call) for call in facts.calls) or any(
            isinstance(n.lower, (ast.BinOp, ast.Name, ast.Attribute))  # type: ignore[attr-defined]
            and isinstance(n.upper, ast.BinOp) for n in facts.nodes(ast.Slice)) or any(_ast_coin_per_batch(loop) for loop in facts.nodes(ast.For)) \
            or bool(facts.binops(ast.Mod)) or any(
                any(_ast_rate_named(t) for t in n.targets) and isinstance(n.value, ast.BinOp)  # type: ignore[attr-defined]
                and isinstance(n.value.op, ast.Div) for n in facts.nodes(ast.Assign))  # type: ignore[attr-defined]

    VALID = (
        # (b85) twin of the helper-rate case: the σ helper takes the batch size only to count steps
        # (n // batch) and composes full, unsubsampled Gaussian steps, so drawing with replacement breaks no
        # amplification it credits
        """
import numpy as np
def calibrate_sigma(epsilon, delta, n_rows, batch_size, epochs):
    if batch_size > n_rows:
        print(f"batch {batch_size} exceeds the data")
    steps = (n_rows // batch_size) * epochs
    return np.sqrt(2 * np.log(1.25 / delta)) / epsilon * np.sqrt(steps)

def train(model, data, cfg):
    sigma = calibrate_sigma(cfg.eps, cfg.delta, len(data), cfg.batch_size, cfg.epochs)
    for _ in range(cfg.epochs):
        idx = np.random.choice(len(data), cfg.batch_size)
        model.noisy_step(data[idx], sigma)
""",
        # (b85) ordinary ML: a batch drawn with replacement beside a learning-rate helper that reads the batch size
        """
import numpy as np
def compute_warmup_steps(n_rows, batch_size, epochs):
    return (n_rows // batch_size) * epochs // 10

def fit(model, data, batch_size, epochs):
    warm = compute_warmup_steps(len(data), batch_size, epochs)
    for step in range(epochs * 10):
        idx = np.random.choice(len(data), batch_size)
        model.step(data[idx], warmup=step < warm)
""",
        # (h45-QE) twin of the Lightning module below: its loader is replaced by Opacus' Poisson loader, whose
        # batch size is drawn (the rate read beforehand is the expected one)
        """
import pytorch_lightning as pl
from opacus.accountants import RDPAccountant
from opacus.data_loader import DPDataLoader
class NoisyRecModel(pl.LightningModule):
    def train_dataloader(self):
        return DPDataLoader.from_data_loader(self.trainer.datamodule.train_dataloader())
    def on_train_start(self):
        dl = self.trainer.datamodule.train_dataloader()
        self.sample_rate = dl.batch_size / len(dl.dataset)
        self.accountant = RDPAccountant()
    def training_step(self, batch, batch_idx):
        loss = self.noisy_update(batch)
        self.accountant.step(noise_multiplier=self.sigma, sample_rate=self.sample_rate)
        return loss
""",
        # (h45-QE) ordinary Lightning training: the fraction of the data a batch covers, logged, no accountant
        """
import pytorch_lightning as pl
class RecModel(pl.LightningModule):
    def on_train_start(self):
        dl = self.trainer.train_dataloader
        self.batch_fraction = dl.batch_size / len(dl.dataset)
    def training_step(self, batch, batch_idx):
        self.log("fraction", self.batch_fraction)
        return self.loss(batch)
""",
        # (h45-QE) accounting helpers handed their rate by the caller, beside a private-step builder that never
        # runs them: the caller picks q (1.0 for client-level DP), these batches feed no ε computed here
        """
import numpy as np
from opacus.accountants import RDPAccountant
def make_noisy_epoch(net, opt):
    def run_epoch(X, y, bs, seed=0):
        perm = np.random.default_rng(seed).permutation(len(X))
        for s in range(0, len(perm), bs):
            rows = perm[s:s + bs]
            opt.zero_grad()
            net(X[rows]).sum().backward()
            opt.step()
    return run_epoch
def spent_epsilon(sigma, sample_rate, steps, delta=1e-5):
    acct = RDPAccountant()
    for _ in range(steps):
        acct.step(noise_multiplier=sigma, sample_rate=sample_rate)
    return acct.get_epsilon(delta=delta)
def sigma_for(target, sample_rate, steps):
    lo, hi = 0.3, 30.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if spent_epsilon(mid, sample_rate, steps) > target:
            lo = mid
        else:
            hi = mid
    return hi
""",
        # (h45-QE) ordinary training in fixed-size slices, a standard (non-private) loop with no accountant
        """
import numpy as np
def _standard_train(net, opt, X, y, bs, epochs):
    for _ in range(epochs):
        perm = np.random.permutation(len(X))
        for s in range(0, len(perm), bs):
            rows = perm[s:s + bs]
            opt.zero_grad()
            net.loss(X[rows], y[rows]).backward()
            opt.step()
""",
        # (h44b-2) ordinary fine-tuning launched through fairseq, no accountant
        """
import subprocess
def launch(data_dir, lr, max_sentences=32):
    cmd = ["fairseq-train", data_dir, "--max-sentences", str(max_sentences), "--lr", str(lr), "--task",
           "sentence_prediction"]
    return subprocess.call(cmd)
""",
        # (h44b-2) twin: the launcher's σ is calibrated for full passes (each record once per step: q = 1)
        """
import subprocess
from privacy_tools import get_sigma
def launch(data_dir, epochs, target_epsilon):
    sigma = get_sigma(1.0, epochs, target_epsilon, 1e-5)
    cmd = ["python", "train.py", data_dir, "--max-sentences", "32", "--sigma", str(sigma)]
    return subprocess.call(cmd)
""",
        # (h44b-2) twins: Poisson-sampled node indices (each node kept with probability q), and a discriminator
        # whose real rows come from a Poisson sampler while CTGAN's sampler only draws the conditions
        """
import torch
from tensorflow_privacy import compute_rdp, get_privacy_spent
def train(model, feats, labels, n_nodes, cfg, orders):
    q = cfg.batch_size / n_nodes
    for step in range(cfg.steps):
        idx = torch.nonzero(torch.rand(n_nodes) < q).flatten()
        model.dp_step(feats[idx], labels[idx])
    rdp = compute_rdp(q=q, noise_multiplier=cfg.sigma, steps=cfg.steps, orders=orders)
    return get_privacy_spent(orders, rdp, target_delta=1e-5)
""",
        """
from opacus import PrivacyEngine
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
from torch.utils.data import DataLoader
def fit(self, dataset, n):
    sampler = UniformWithReplacementSampler(num_samples=n, sample_rate=self.bs / n)
    loader = DataLoader(dataset, batch_sampler=sampler)
    engine = PrivacyEngine(self.critic, sample_rate=self.bs / n, noise_multiplier=self.sigma, max_grad_norm=1.0)
    engine.attach(self.critic_opt)
    for (real,) in loader:
        cond, mask, col, opt = self._sampler.sample_condvec(len(real))
        self.critic_step(real, cond)
    return engine.get_privacy_spent(self.delta)
""",
        # ordinary ML: random crop offsets drawn with torch.randint in a non-private training script
        """
import torch
def crop(images, size, batch_size):
    offs = torch.randint(0, images.shape[-1] - size, (batch_size,))
    return torch.stack([im[..., o:o + size] for im, o in zip(images, offs)])
""",
        # one-shot input perturbation calibrated as a single full-data step (batch = n, one epoch): q = 1,
        # nothing amplified, even though the model is then fitted on shuffled Keras batches
        """
from tensorflow_privacy import compute_noise
def perturb_inputs(x, target_eps, delta):
    n = x.shape[0]
    mult = compute_noise(n=n, batch_size=n, target_epsilon=target_eps, epochs=1, delta=delta)
    return x + np.random.normal(scale=mult, size=x.shape)
def train(model, x, y, eps, delta):
    x = perturb_inputs(x, eps, delta)
    model.fit(x, y, batch_size=64, epochs=5)
""",
        # (h46-2 twin) the shuffled tf.data pipeline accounted with a bound for shuffled fixed-size batches
        """
import tensorflow as tf
def run(train_x, train_y, params, delta):
    train_ds = tf.data.Dataset.from_tensor_slices((train_x, train_y))
    train_ds = train_ds.shuffle(len(train_x))
    for epoch in range(params["epochs"]):
        for xb, yb in train_ds.batch(params["batch_size"], drop_remainder=True):
            step(xb, yb)
        eps = shuffled_batches_epsilon(params["sigma"], epoch + 1, delta)
""",
        # (h46-2 twin) the project's Poisson sampler feeds the trainer accounted as Poisson
        """
from dp_accounting import PoissonSampledDpEvent, GaussianDpEvent
from mysampling import PoissonUserSampler
class UserTrainer:
    def train_sampler(self):
        return PoissonUserSampler(self.user_index, sample_rate=self.batch_size / self.num_users)
    def spent(self, sigma, steps):
        event = PoissonSampledDpEvent(sampling_probability=self.batch_size / self.num_users, event=GaussianDpEvent(sigma))
        return self.accountant.compose(event, steps).get_epsilon(self.delta)
""",
        # ordinary ML code: a shuffled tf.data pipeline and a shuffled sampler with no accountant
        """
import tensorflow as tf
def fit(model, x, y, batch_size, epochs):
    ds = tf.data.Dataset.from_tensor_slices((x, y))
    ds = ds.shuffle(len(x))
    sampler = ShuffledBucketSampler(x, batch_size=batch_size)
    for _ in range(epochs):
        for xb, yb in ds.batch(batch_size):
            model.train_on_batch(xb, yb)
""",
        # twin of the GDP helper: the shuffled loader is accounted with the uniform (shuffling) CLT bound
        # (h44-2 twin) the engine rebuilds the training loader (Poisson sampling)
        """
from opacus import PrivacyEngine
def attach(model, optimizer, loader, cfg):
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=cfg.sigma, max_grad_norm=cfg.clip)
    return engine, optimizer, loader
""",
        """
import torch
from gdp_accountant import compute_mu_uniform
def report(args, epoch, train_set, engine):
    loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    for x, y in loader:
        engine.step()
    return compute_mu_uniform(epoch, args.sigma, 60000, args.batch_size)
""",
        # twin: Keras fit, with chunks for an incremental PCA before it; the σ helper is told the sampling is Poisson
        # and the data is fed by a Poisson sampler
        """
from dp_utils import get_epsilon_noise_multiplier, poisson_batches
def run(model, pca, X, y, FLAGS, target_epsilon, steps):
    for i in range(0, len(X), pca.batch_size):
        pca.partial_fit(X[i:i + pca.batch_size])
    sigma = get_epsilon_noise_multiplier(target_epsilon, steps, FLAGS.batch_size, len(X), FLAGS.delta)
    for xb, yb in poisson_batches(X, y, FLAGS.batch_size / len(X)):
        model.train_on_batch(xb, yb)
""",
        # (h38-2) twins: Poisson sampling kept on whatever the command line says; a wrapper library passing its
        # caller's choice through
        """
from opacus import PrivacyEngine
def main(args, model, optimizer, loader):
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=args.sigma, max_grad_norm=1.0)
    train(model, optimizer, loader, args.epochs)
    return engine.get_epsilon(args.delta)
class Wrapper:
    def attach(self, model, optimizer, loader, poisson_sampling=True):
        return self.engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                        noise_multiplier=self.sigma, max_grad_norm=1.0,
                                        poisson_sampling=self.dp_config.poisson_sampling)
""",
        # (h38-2) ``sample(batch)`` on a conditional-vector sampler or a distribution draws no records; accuracy
        # counted block by block over the labels; a student loader's batch fraction no accountant reads
        """
import torch
from opacus import PrivacyEngine
def train(self, data, batch_size, epsilon, delta, epochs):
    engine = PrivacyEngine(self.disc, batch_size=batch_size, sample_size=len(data), noise_multiplier=1.0)
    for _ in range(epochs):
        condvec = self.cond_generator.sample(batch_size)
        z = self.bernoulli.sample((batch_size, self.z_dim))
        step(self.disc, data, condvec, z)
    return engine.get_privacy_spent(delta)
def agreement_acc(loader, labels, batch):
    cnt = 0
    for idx, (_, label) in enumerate(loader):
        cnt += (label == labels[idx * batch:(idx + 1) * batch]).sum().item()
    return cnt / len(labels)
""",
        # (h38-2) twins: Poisson rows of a frame (frac of a coin per row), a permutation cut into an epoch's blocks
        # accounted without replacement, a q * n subset drawn once for a public evaluation, a one-positional
        # ``random.sample``-like helper on a list of clients (not rows), ordinary ML sampling
        """
import numpy as np
import pandas as pd
from tensorflow_privacy.privacy.analysis import rdp_accountant
rows = pd.read_csv("train.csv")
N = rows.shape[0]
def epsilon_after(steps):
    rdp = rdp_accountant.compute_rdp(q=lot / N, noise_multiplier=1.1, steps=steps, orders=[2, 4, 8])
    return rdp_accountant.get_privacy_spent([2, 4, 8], rdp, target_delta=1e-5)[0]
for it in range(iters):
    keep = np.random.rand(N) < lot / N
    train_step(rows[keep])
print(epsilon_after(iters))
""",
        """
import numpy as np
def fit(X, lot_size, sigma, steps, orders):
    for _ in range(steps):
        keep = np.random.rand(len(X)) < lot_size / len(X)
        noisy_step(X[keep], sigma)
    return compute_rdp(q=lot_size / len(X), noise_multiplier=sigma, steps=steps, orders=orders)
""",
        """
import numpy as np
from autodp import rdp_acct
def label_queries(queries, feats, prob, k, epsilon):
    out = []
    for q_x in queries:
        keep = np.random.rand(feats.shape[0]) < prob
        out.append(np.argmax(votes(feats[keep], q_x, k) + np.random.laplace(0, 1 / epsilon, 10)))
    return out
def main(args, acct, mech):
    labels = label_queries(args.queries, args.feats, args.prob, args.k, args.epsilon)
    acct.compose_poisson_subsampled_mechanisms(mech, args.prob, coeff=len(labels))
    return labels
""",
        """
import numpy as np
import torch
def augment(images, drop_prob, eps=1e-8):
    idx = np.random.choice(len(images), 16, replace=False)
    noise = torch.randn_like(images[idx]) * 0.1
    return images[idx] + noise / (images[idx].std() + eps)
def train(model, df, batch_size, epochs):
    for _ in range(epochs):
        batch = df.sample(batch_size)
        model.partial_fit(batch)
""",
        # (g37-4) an inference / generation pass cut into chunks, next to a training loop that Poisson-samples;
        # a full-batch trainer (batch_size = the record count the accountant is given: q = 1)
        """
import math
import numpy as np
from privacy.analysis import compute_dp_sgd_privacy
class Synth:
    def predict_from(self, rows):
        out = []
        for i in range(int(math.ceil(len(rows) / self.batch_size))):
            chunk = rows[i * self.batch_size:(i + 1) * self.batch_size]
            out.append(self.sess.run(self.score_op, feed_dict={self.x: chunk}))
        return np.concatenate(out)
    def train(self, data, sigma, delta):
        compute_dp_sgd_privacy(len(data), self.batch_size, sigma, self.epochs, delta)
        for _ in range(self.steps):
            keep = np.random.rand(len(data)) < self.batch_size / len(data)
            self.sess.run(self.train_op, feed_dict={self.x: data[keep]})
""",
        """
from dpsgd import accountant
N_RECORDS = 560
def read_input(example, batch_size, randomize):
    if randomize:
        features, labels = tf.train.shuffle_batch([example["x"], example["y"]], batch_size=batch_size,
                                                  capacity=batch_size * 100, min_after_dequeue=batch_size * 10)
    else:
        features, labels = tf.train.batch([example["x"], example["y"]], batch_size=batch_size)
    return features, labels
def train(example, sigma):
    batch_size = N_RECORDS
    features, labels = read_input(example, batch_size, False)
    priv_accountant = accountant.GaussianMomentsAccountant(N_RECORDS)
    return features, labels, priv_accountant
""",
        # twins of the contiguous blocks: Poisson lots, a slice whose start is not stepped by the batch, a slice of
        # one record's features
        """
import numpy as np
def fit(users, lot_size, sigma, accountant, step, epochs):
    q = lot_size / len(users)
    order = np.array(list(users))
    for _ in range(epochs):
        for _ in range(len(order) // lot_size):
            step(order[np.random.rand(len(order)) < q], sigma)
            accountant.compute_rdp(q, sigma, 1)
def train(X, y, bs, sigma, update, steps, window):
    q = bs / X.shape[0]
    for t in range(steps):
        keep = np.random.rand(X.shape[0]) < q
        update(X[keep][:, t:t + window], y[keep], sigma)
    return compute_rdp(q, sigma, steps, [2, 4, 8])
""",
        # twins of the hand-written ε formula: batches by Poisson sampling, a helper nobody calls, a rate that
        # stays a bare number in the helper while training happens in another module
        """
import numpy as np
import torch
from opacus.data_loader import DPDataLoader
def privacy_spent(args, loader):
    q = args.batch_size / len(loader.dataset)
    steps = args.epochs / q
    return 2 * q * np.sqrt(steps * np.log(1 / args.delta)) / args.sigma
def main(args, trainset, model, opt):
    loader = DPDataLoader(trainset, sample_rate=args.batch_size / len(trainset))
    for _ in range(args.epochs):
        for x, y in loader:
            model(x, y).backward()
            opt.step()
    print(privacy_spent(args, loader))
""",
        """
import numpy as np
def compute_epsilon(batch_size, n_train, sigma, epochs, delta):
    sampling_rate = batch_size / n_train
    return epochs / sampling_rate * sampling_rate ** 2 / sigma ** 2 + np.log(1 / delta)
def train(X, y, step, batch_size, sigma, epochs):
    for _ in range(epochs * len(X) // batch_size):
        keep = np.random.rand(len(X)) < batch_size / len(X)
        step(X[keep], y[keep], sigma)
""",
        """
import numpy as np
import tensorflow as tf
def get_rdp_epsilon(num_examples, batch_size, sigma, epochs):
    q = batch_size / num_examples
    return epochs / q * q ** 2 / sigma ** 2
def evaluate(model, x_test, y_test, batch_size):
    ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).shuffle(len(x_test)).batch(batch_size)
    return model.evaluate(ds)
""",
        # a TF-Privacy statement whose 'once per epoch' ε (the bound shuffled fixed-size batches meet) is the one
        # kept; a non-private baseline fit; a weighted draw of categories for a conditional vector
        """
import re
from collections.abc import Callable
import numpy as np
import tensorflow as tf
from tensorflow_privacy import compute_dp_sgd_privacy_statement
def get_epsilon(num_examples, batch_size, epochs, noise_multiplier, delta):
    text = str(compute_dp_sgd_privacy_statement(number_of_examples=num_examples, batch_size=batch_size,
                                                num_epochs=epochs, noise_multiplier=noise_multiplier, delta=delta))
    return float(re.search(r"Epsilon with each example occurring once per epoch: ([0-9.]+)", text).group(1))
def train_dp(model, x, y, args):
    model.fit(x, y, epochs=args.epochs, batch_size=args.batch_size)
    return get_epsilon(len(x), args.batch_size, args.epochs, args.sigma, args.delta)
def train_baseline(x, y, args):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse")
    model.fit(x, y, epochs=args.epochs, batch_size=args.batch_size)
    return model
def cond_vector(self, batch_size, col_idx):
    return np.random.choice(self.columns[col_idx]["size"], size=batch_size, p=self.probs[col_idx])
""",
        # twins: without Poisson sampling the engine refuses, or accounts inside the Poisson branch only,
        # or uses a separate accountant for the fixed-size branch
        """
from opacus.accountants import RDPAccountant
def make_private(optimizer, loader, sigma, poisson_sampling=True):
    if poisson_sampling:
        loader = to_poisson(loader)
        sample_rate = 1 / len(loader)
    else:
        raise ValueError("fixed-size batches are not supported by the accountant")
    accountant = RDPAccountant()
    optimizer.attach_step_hook(accountant.get_optimizer_hook_fn(sample_rate=sample_rate))
    return optimizer, loader, accountant
""",
        """
def account(self, steps, sigma, delta):
    if not self.use_poisson:
        q = self.batch_size / self.num_examples
        return shuffled_batches_epsilon(q, sigma, steps, delta)
    q = 1 / len(self.loader)
    return compute_epsilon_rdp(q=q, sigma=sigma, steps=steps, delta=delta)
""",
        """
from tensorflow_privacy import compute_rdp, get_privacy_spent
def privacy(mode, batch, n, sigma, steps, orders):
    if mode != "poisson":
        sampling_rate = batch / n
        return without_replacement_epsilon(sampling_rate, sigma, steps)
    rdp = compute_rdp(batch / n, sigma, steps, orders)
    return get_privacy_spent(orders, rdp, target_delta=1e-5)[0]
""",
        # twins: the pretraining pass that never steps the hooked DP optimizer; a held-out cursor; the
        # training batches drawn by Poisson sampling
        """
from opacus.accountants import RDPAccountant
from opacus.optimizers import DPOptimizer
class Solver:
    def build(self, optimizer):
        self.accountant = RDPAccountant()
        self.dp_opt = DPOptimizer(optimizer=optimizer, noise_multiplier=1.1, max_grad_norm=1.0,
                                  expected_batch_size=self.batch_size)
        rate = self.batch_size / self.data.train_count
        self.dp_opt.attach_step_hook(self.accountant.get_optimizer_hook_fn(sample_rate=rate))
    def pretrain_public(self, optimizer):
        graphs, labels = self.data.next_train_batch(self.batch_size)
        self.loss(graphs, labels).backward()
        optimizer.step()
""",
        """
from tensorflow_privacy import compute_rdp, get_privacy_spent
def evaluate(sess, acc_op, data, batch_size, sigma, steps, orders):
    xs, ys = data.next_validation_batch(batch_size)
    accuracy = sess.run(acc_op, {"x": xs, "y": ys})
    rdp = compute_rdp(q=batch_size / 60000, noise_multiplier=sigma, steps=steps, orders=orders)
    return accuracy, get_privacy_spent(orders, rdp, target_delta=1e-5)[0]
""",
        """
import torch
from opacus.accountants import RDPAccountant
from opacus.data_loader import DPDataLoader
def train(model, dataset, optimizer, dp_optimizer, batch_size):
    accountant = RDPAccountant()
    dp_optimizer.attach_step_hook(accountant.get_optimizer_hook_fn(sample_rate=batch_size / len(dataset)))
    loader = DPDataLoader(dataset, sample_rate=batch_size / len(dataset))
    for x, y in loader:
        dp_optimizer.zero_grad()
        model(x, y).backward()
        dp_optimizer.step()
    return accountant.get_epsilon(delta=1e-5)
""",
        # the federated client keeps its engine for a later ε read and keeps Poisson sampling on
        """
from opacus import PrivacyEngine
class Participant:
    def __init__(self, loader, sigma, clip):
        self.loader, self.sigma, self.clip = loader, sigma, clip
        self.engine = PrivacyEngine(accountant="rdp")
    def local_round(self, net, opt):
        net, opt, dl = self.engine.make_private(module=net, optimizer=opt, data_loader=self.loader,
                                                noise_multiplier=self.sigma, max_grad_norm=self.clip)
        for xb, yb in dl:
            opt.zero_grad()
            net.loss(xb, yb).backward()
            opt.step()
""",
        # a mechanics test: a local engine with no accountant chosen, fixed batches, no ε read
        """
from opacus import PrivacyEngine
def test_grads_are_clipped(net, opt, loader):
    engine = PrivacyEngine()
    net, opt, dl = engine.make_private(module=net, optimizer=opt, data_loader=loader,
                                       noise_multiplier=0.5, max_grad_norm=1.0, poisson_sampling=False)
    for xb, yb in dl:
        net.loss(xb, yb).backward()
        opt.step()
""",
        # a unit test fixes the batches for repeatability and only checks that ε is positive; the
        # ε-targeted engine beside it keeps Poisson sampling
        """
import torch
from opacus import PrivacyEngine
def test_one_step(model, loader):
    engine = PrivacyEngine()
    model, opt, dl = engine.make_private(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                                         data_loader=loader, noise_multiplier=1.0, max_grad_norm=1.0,
                                         poisson_sampling=False)
    assert engine.get_epsilon(delta=1e-5) > 0
def test_target(model, loader):
    engine = PrivacyEngine()
    model, opt, dl = engine.make_private_with_epsilon(module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
                                                      data_loader=loader, target_epsilon=8.0, target_delta=1e-5,
                                                      epochs=1, max_grad_norm=1.0)
    assert opt.noise_multiplier > 0
""",
        # a σ calibration wrapper handed the caller's rate (cur_sigma, _ = loop_for_sigma(q, …)): the caller decides q
        """
from rdp import compute_rdp, get_privacy_spent
def loop_for_sigma(q, T, eps, delta, cur_sigma, interval):
    while True:
        rdp = compute_rdp(q, cur_sigma, T, [2, 4, 8, 16])
        if get_privacy_spent(rdp, delta) <= eps:
            return cur_sigma, eps
        cur_sigma += interval
def get_sigma(q, T, eps, delta, init_sigma=10, interval=1.0):
    cur_sigma, _ = loop_for_sigma(q, T, eps, delta, init_sigma, interval)
    cur_sigma, previous_eps = loop_for_sigma(q, T, eps, delta, cur_sigma, interval / 10)
    return cur_sigma, previous_eps
""",
        # twin: the rate fixed in advance, every update summed
        """
import numpy as np
def aggregate(updates, num_total_clients, noise_multiplier, clip_norm, accountant, delta, q):
    clipped = [u / max(1.0, np.linalg.norm(u) / clip_norm) for u in updates]
    noised = np.sum(clipped, axis=0) + np.random.normal(0, noise_multiplier * clip_norm)
    accountant.step(noise_multiplier=noise_multiplier, sample_rate=q)
    return noised, accountant.get_epsilon(delta=delta)
""",
        # the realised coverage is only reported, not accounted
        """
import numpy as np
def round_(clients, q, sigma, accountant):
    chosen = [c for c in clients if np.random.rand() < q]
    accountant.step(noise_multiplier=sigma, sample_rate=q)
    coverage = len(chosen) / len(clients)
    return chosen, coverage
""",
        # a loader factory told whether to sample privately (it builds the Poisson loader when dp is on)
        """
from opacus import PrivacyEngine
from utils.model_utils import make_data_loader
def setup(model, dataset, batch_size, diff_privacy, sample_rate, sigma):
    train_loader = make_data_loader(dataset, batch_size=batch_size, dp=diff_privacy)
    engine = PrivacyEngine(model, sample_rate=sample_rate, noise_multiplier=sigma, max_grad_norm=1.0)
    return train_loader, engine
""",
        # a client-level rate K / N from config keys: the local shuffled loader is not what is accounted
        """
from torch.utils.data import DataLoader
from utils.rdp import rdp_per_round
def local_train(model, dataset, config):
    loader = DataLoader(dataset, batch_size=config["batch_size"], shuffle=True)
    for x, y in loader:
        model.step(x, y)
def run(config, sigma):
    K = config["clients_per_round"]
    N = config["num_clients"]
    q = K / N
    return rdp_per_round(32, sigma, q)
""",
        # twin: Bernoulli sampling charged to the TF moments accountant
        """
import numpy as np
from accountant import GaussianMomentsAccountant
def train(data, sigma, batch_size, steps, step):
    acc = GaussianMomentsAccountant(len(data))
    q = batch_size / len(data)
    for _ in range(steps):
        idx = np.nonzero(np.random.rand(len(data)) < q)[0]
        step(data[idx])
        acc.accumulate_privacy_spending(None, sigma, batch_size)
""",
        # a wrapping cursor with no accountant in the file
        """
from tensorflow_privacy import compute_rdp
class Reader:
    def next_eval(self, batch_size, epsilon):
        out = self.rows[self.pos:self.pos + batch_size]
        self.pos = (self.pos + batch_size) % len(self.rows)
        return out, epsilon
""",
        # twin: each record joins the batch with probability q (Poisson sampling) before a list comprehension
        """
import random
from accounting import compute_epsilon
def train(data, step, sigma, delta, steps, batch_size):
    q = batch_size / len(data)
    for _ in range(steps):
        batch = [x for x in data if random.random() < q]
        step(batch, sigma)
    return compute_epsilon(q, sigma, steps, delta)
""",
        # twin: a Bernoulli mask with the rate the helper accountant is given
        """
import numpy as np
from accountant import comp_eps
def main(mnist, sigma, delta, batch_size, noisy_step, steps):
    sample_rate = batch_size / 60000
    for i in range(steps):
        mask = np.random.rand(60000) < sample_rate
        noisy_step(mnist.train.images[mask], sigma)
    return comp_eps(32, sample_rate, sigma, steps, delta)
""",
        # twin: each client joins the round with probability q
        """
import numpy as np
from opacus.accountants.utils import get_noise_multiplier
def federate(users, rounds, sample_rate, target_epsilon, target_delta):
    sigma = get_noise_multiplier(target_epsilon=target_epsilon, target_delta=target_delta,
                                 sample_rate=sample_rate, steps=rounds)
    for _ in range(rounds):
        chosen = [u for u in users if np.random.rand() < sample_rate]
        aggregate(chosen, sigma)
""",
        # a fixed-size draw not sized by the accounted rate (clients shown for evaluation)
        """
import numpy as np
from opacus.accountants.utils import get_noise_multiplier
def federate(users, rounds, sample_rate, target_epsilon, target_delta, n_eval):
    sigma = get_noise_multiplier(target_epsilon=target_epsilon, target_delta=target_delta,
                                 sample_rate=sample_rate, steps=rounds)
    shown = np.random.choice(len(users), n_eval, replace=False)
    for _ in range(rounds):
        chosen = [u for u in users if np.random.rand() < sample_rate]
        aggregate(chosen, sigma)
    return [users[i] for i in shown]
""",
        # twin: the unshuffled engine's loader takes a Poisson batch sampler
        """
import torch
from opacus import PrivacyEngine
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
from torch.utils.data import DataLoader
def fit(disc, disc_opt, dataset, batch_size):
    sampler = UniformWithReplacementSampler(num_samples=len(dataset), sample_rate=batch_size / len(dataset))
    loader = DataLoader(dataset, batch_sampler=sampler)
    engine = PrivacyEngine(disc, batch_size=batch_size, sample_size=len(dataset), noise_multiplier=1.0,  # <-
                           max_grad_norm=1.0)
    engine.attach(disc_opt)
    return loader
""",
        # twin: the imported loader is rewrapped as a Poisson DPDataLoader
        """
from tensorflow_privacy import compute_rdp, get_privacy_spent
from data import get_loaders
from opacus.data_loader import DPDataLoader
def main(args, orders):
    train_loader, test_loader = get_loaders(args.batch_size)
    train_loader = DPDataLoader.from_data_loader(train_loader)
    sampling_prob = args.batch_size / len(train_loader.dataset)
    rdp = compute_rdp(sampling_prob, args.sigma, args.steps, orders)
    return get_privacy_spent(orders, rdp, target_delta=args.delta)
""",
        # a draw without replacement in a method that never reaches the accountant
        """
import random
from tensorflow_privacy import compute_noise
class DPLogReg:
    def evaluate_subset(self, X, k):
        return random.sample(range(0, X.shape[0]), k)
    def noise_for(self, n):
        self.sigma = compute_noise(n=n, batch_size=self.L, target_epsilon=self.epsilon, epochs=self.epochs,
                                   delta=self.delta, noise_lbd=1e-6)
""",
        # the shuffled loader is the non-DP baseline's; the DP branch samples by Poisson
        """
from torch.utils.data import DataLoader
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
def make_loader(dataset, batch_size, dp):
    if not dp:
        return DataLoader(dataset, batch_size=batch_size, shuffle=True)
    sample_rate = batch_size / len(dataset)
    return DataLoader(dataset, batch_sampler=UniformWithReplacementSampler(num_samples=len(dataset), sample_rate=sample_rate))
def train_without_dp(model, train_set, q):
    train_loader = DataLoader(train_set, batch_size=int(len(train_set) * q), shuffle=False)
    return model.fit(train_loader)
""",
        # twins: the tf.data training set shuffled in an earlier statement is the shuffled shape, accounted
        # without replacement; an unshuffled loader of the test set
        """
import tensorflow as tf
from tensorflow_privacy import compute_rdp
def fit(model, x_train, x_test, batch_size, sigma, epochs, orders):
    test_loader_ds = tf.data.Dataset.from_tensor_slices(x_test)
    test_batches = test_loader_ds.batch(batch_size)
    model.evaluate(test_batches)
    return compute_rdp(batch_size / len(x_train), sigma, epochs, orders)
""",
        """
from torch.utils.data import DataLoader
from opacus import PrivacyEngine
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
def main(model, optimizer, train_set, test_set, bs, sigma):
    sampler = UniformWithReplacementSampler(num_samples=len(train_set), sample_rate=bs / len(train_set))
    train_loader = DataLoader(train_set, batch_sampler=sampler)
    test_loader = DataLoader(test_set, batch_size=bs)
    engine = PrivacyEngine(model, sample_rate=bs / len(train_set), noise_multiplier=sigma, max_grad_norm=1.0)
    return train_loader, test_loader, engine
""",
        # twins of the cohort draws: Poisson client selection, and a fixed-size cohort accounted without replacement
        """
import numpy as np
def run_rounds(server, num_users, users_per_round, z, rounds, accountant):
    rng = np.random.default_rng()
    q = users_per_round / num_users
    for t in range(rounds):
        chosen = np.flatnonzero(rng.random(num_users) < q)
        server.aggregate(chosen, z)
        accountant.step(noise_multiplier=z, sample_rate=q)
""",
        """
import random
from accounting import compute_rdp_sample_without_replacement
def federate(clients, n_clients, k, sigma, rounds, orders):
    for t in range(rounds):
        cohort = random.sample(range(n_clients), k)
        clients.train(cohort, sigma)
    return compute_rdp_sample_without_replacement(k / n_clients, sigma, rounds, orders)
""",
        # a fixed subset of clients for evaluation, in a function with no accountant
        """
import numpy as np
def evaluate(model, num_clients, eval_clients, accountant, sigma, q):
    accountant.step(noise_multiplier=sigma, sample_rate=q)
def pick_eval(num_clients, eval_clients):
    return np.random.choice(num_clients, eval_clients, replace=False)
""",
        # a coin per record inside the loader's batch: Poisson sampling of records
        """
import torch
def fit(self, q, sigma):
    for (x, y) in self.train_loader:
        keep = torch.rand(len(x)) < q
        self.step(x[keep], y[keep], sigma)
        self.accountant.step(noise_multiplier=sigma, sample_rate=q)
""",
        # Poisson sampling: every record kept with probability q
        """
import numpy as np
from tensorflow_privacy import compute_rdp, get_privacy_spent
def train(X, batch_size, noise_multiplier, steps, orders):
    q = batch_size / len(X)
    for _ in range(steps):
        mask = np.random.random(len(X)) < q
        step(X[mask])
    return get_privacy_spent(orders, compute_rdp(q, noise_multiplier, steps, orders), target_delta=1e-5)
""",
        # Opacus replaces the shuffled loader by its Poisson DPDataLoader
        """
from torch.utils.data import DataLoader
from opacus import PrivacyEngine
def train(model, optimizer, dataset, epochs):
    loader = DataLoader(dataset, batch_size=256, shuffle=True)
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=1.1, max_grad_norm=1.0)
    return model
""",
        # batches drawn without replacement, accounted with the without-replacement analysis
        """
import numpy as np
from autodp import rdp_acct
def train(X, batch_size, sigma, steps):
    for _ in range(steps):
        idx = np.random.choice(len(X), batch_size, replace=False)
        step(X[idx])
    return compute_rdp_sample_without_replacement(batch_size / len(X), sigma, steps)
""",
        # random class labels for a sample grid, not a batch of records
        """
import numpy as np
from tensorflow_privacy import compute_rdp
def sample_grid(self, noise_multiplier, steps, orders):
    labels = np.random.choice(self.y_dim, self.batch_size)
    rdp = compute_rdp(q=self.sample_rate, noise_multiplier=noise_multiplier, steps=steps, orders=orders)
    return self.generate(labels), rdp
""",
        # consecutive slices of a sequence of known length accounted without any sampling rate
        """
import numpy as np
def chunks(tokens, batch_size, epsilon):
    for i in range(len(tokens) // batch_size):
        yield tokens[i * batch_size:(i + 1) * batch_size] + np.random.laplace(0, 1 / epsilon)
""",
        # Poisson sampling off in a test of the optimizer's mechanics: no ε is read or claimed
        """
from opacus import PrivacyEngine
def test_memory_manager(model, optimizer, loader):
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=0.0, max_grad_norm=1.0, poisson_sampling=False)
    assert len(loader) == 8
""",
        # micro-batches cut from a Poisson-sampled batch for per-micro-batch clipping
        """
import numpy as np
def dp_step(batch, micro_batch_size, sigma, q, accountant):
    for k in range(len(batch) // micro_batch_size):
        micro = batch[k * micro_batch_size: (k + 1) * micro_batch_size]
        clip_and_accumulate(micro)
    accountant.step(noise_multiplier=sigma, sample_rate=q)
""",
        # a test of batch splitting next to a test of Poisson sampling (jax-privacy)
        """
import numpy as np
def test_poisson(expected_batch_size, num_examples, noise_multiplier):
    sampling_prob = expected_batch_size / num_examples
    return CyclicPoissonSampling(sampling_prob=sampling_prob)
def test_split_and_pad(global_batch_size, minibatch_size):
    num_examples = 1000
    indices = np.random.randint(0, num_examples, size=global_batch_size)
    return split_and_pad_global_batch(indices, minibatch_size)
""",
        # a shuffled test loader next to a Poisson training loader
        """
from torch.utils.data import DataLoader
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
def loaders(train_set, test_set, batch_size, sample_rate, accountant, sigma):
    train_loader = DataLoader(train_set, batch_sampler=UniformWithReplacementSampler(
        num_samples=len(train_set), sample_rate=sample_rate))
    test_loader = DataLoader(test_set, batch_size=batch_size, shuffle=True)
    accountant.step(noise_multiplier=sigma, sample_rate=sample_rate)
    return train_loader, test_loader
""",
        # DC-DPSGD-N: a σ search given q by its caller, next to a whole-dataset loader that fills memory
        """
import numpy as np
import torch
def get_data_loader(trainset):
    return torch.utils.data.DataLoader(trainset, batch_size=73257, shuffle=True, num_workers=0)
def loop_for_sigma(q, T, eps, delta, cur_sigma, interval):
    while True:
        rdp = compute_rdp(q, cur_sigma, T, orders)
        cur_eps, _, _ = get_privacy_spent(orders, rdp, target_delta=delta)
        if cur_eps < eps:
            cur_sigma -= interval
        else:
            break
    return cur_sigma
""",
        # AdamWei: an Opacus 0.x engine with noise 0, used only to clip per-sample gradients
        """
from torch.utils.data import DataLoader
from opacus import PrivacyEngine
def update_weights(self, net, dataset):
    train = DataLoader(dataset, batch_size=self.args.local_bs, shuffle=True)
    privacy_engine = PrivacyEngine(net, sample_rate=0.01, noise_multiplier=0.0, max_grad_norm=self.args.clipthr,
                                   target_epsilon=2, target_delta=1e-5, epochs=1)
    privacy_engine.attach(optimizer)
""",
        # a sampler built for Poisson subsampling
        """
from torch.utils.data import DataLoader
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
def loader(dataset, batch_size, accountant, sigma):
    sampler = UniformWithReplacementSampler(num_samples=len(dataset), sample_rate=batch_size / len(dataset))
    accountant.step(noise_multiplier=sigma, sample_rate=batch_size / len(dataset))
    return DataLoader(dataset, batch_sampler=sampler)
""",
        # TFF DP-FedAvg tutorial: clients are Poisson-sampled each round (uniform draw < sampling_prob), as the
        # accountant's q = clients_per_round / total_clients assumes; shuffle().batch() is each client's local loop
        """
import numpy as np
import tensorflow_privacy as tfp
def preprocess_train_dataset(dataset):
    return dataset.map(element_fn).shuffle(buffer_size=418).repeat(1).batch(32)

def train(rounds, noise_multiplier, clients_per_round, total_clients, train_data, process, state):
    sampling_prob = clients_per_round / total_clients
    for round in range(rounds):
        x = np.random.uniform(size=total_clients)
        sampled = [train_data.client_ids[i] for i in range(total_clients) if x[i] < sampling_prob]
        state = process.next(state, [train_data.create_tf_dataset_for_client(c) for c in sampled])
    return state

def get_epsilon(clients_per_round, total_clients, noise_multiplier, rounds, orders):
    q = clients_per_round / total_clients
    rdp = tfp.compute_rdp(q, noise_multiplier=noise_multiplier, steps=rounds, orders=orders)
    eps, _, _ = tfp.get_privacy_spent(orders, rdp, target_delta=1e-5)
    return eps
""",
        # a binomial batch size filled without replacement: a uniform subset of binomial size is a Poisson sample
        """
import numpy as np
class PoissonBatchSampler:
    def __iter__(self):
        for _ in range(self.iterations):
            size = np.random.binomial(self.length, self.batch_size / self.length)
            yield np.random.choice(self.length, size, replace=False)
""",
        # twins of the counts known by their origin: the helper's batches are Poisson-sampled, or the count
        # handed to it is a test set's, or it is handed no batch size
        """
from torch.utils.data import DataLoader
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
import analysis
def train(dataset_train, opt, iterations):
    totalsamples = len(dataset_train)
    loader = DataLoader(dataset_train, batch_sampler=UniformWithReplacementSampler(
        num_samples=totalsamples, sample_rate=opt.batch_size / totalsamples))
    for imgs in loader:
        step(imgs)
    return analysis.epsilon(totalsamples, opt.batch_size, opt.noise_multiplier, iterations, opt.delta)
""",
        """
from torch.utils.data import DataLoader
from accounting import compute_epsilon
def train(X, batch_size, sigma, steps):
    loader = DataLoader(X, batch_size=batch_size, shuffle=True)
    for xb in loader:
        step(xb)
    m = X.shape[0]
    return compute_epsilon(m, sigma, steps)
""",
        # an accountant helper given n and the batch size, fed by a Poisson sampler
        """
from torch.utils.data import DataLoader
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
def train(dset, batch_size, sigma, delta, steps):
    loader = DataLoader(dset, batch_sampler=UniformWithReplacementSampler(
        num_samples=len(dset), sample_rate=batch_size / len(dset)))
    for step, imgs in enumerate(loader):
        critic_step(imgs, sigma)
    return compute_renyi_privacy(len(dset), batch_size, steps, sigma, delta)
""",
        # a batch size from q, but the batches are Poisson-sampled by the batch sampler
        """
import math
from torch.utils.data import DataLoader
def local_train(client_data, q, sigma):
    batch_size = math.floor(len(client_data) * q)
    sampler = UniformWithReplacementSampler(num_samples=len(client_data), sample_rate=q)
    return DataLoader(client_data, batch_sampler=sampler), batch_size
""",
        # a validation split drawn once in __init__; the accountant's rate is another value, drawn per step
        """
import numpy as np
class Client:
    def __init__(self, args, idxs):
        self.args = args
        self.val_idxs = np.random.choice(idxs, int(self.args.val_frac * len(idxs)), replace=False)
    def account(self, accountant):
        accountant.step(noise_multiplier=self.args.sigma, sample_rate=self.args.q)
""",
        # the DP loader make_private returned is the one iterated
        """
from opacus import PrivacyEngine
def train(model, optimizer, train_loader, sigma, max_norm, epochs):
    engine = PrivacyEngine()
    model, optimizer, dp_loader = engine.make_private(module=model, optimizer=optimizer, data_loader=train_loader,
                                                      noise_multiplier=sigma, max_grad_norm=max_norm)
    for epoch in range(epochs):
        for x, y in dp_loader:
            loss_fn(model(x), y).backward()
            optimizer.step()
    return engine.get_epsilon(1e-5)
""",
        # one shuffled evaluation loader per client next to the Poisson training loaders
        """
import torch
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
def loaders(trainsets, testsets, n_clients, batch_size, sample_rate, accountant, sigma):
    train = [torch.utils.data.DataLoader(trainsets[i], batch_sampler=UniformWithReplacementSampler(
        num_samples=len(trainsets[i]), sample_rate=sample_rate)) for i in range(n_clients)]
    test_dataloaders = [torch.utils.data.DataLoader(testsets[i], batch_size=batch_size, shuffle=True)
                        for i in range(n_clients)]
    accountant.step(noise_multiplier=sigma, sample_rate=sample_rate)
    return train, test_dataloaders
""",
        # a contract test of a clip-only engine (no noise, so no ε is claimed) with fixed batches
        """
from opacus import PrivacyEngine
def test_engine_contract(model, optimizer, loader, Q):
    engine = PrivacyEngine(accountant="prv")
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=0.0, max_grad_norm=1.0,
                                                   poisson_sampling=False)
    optimizer.attach_step_hook(engine.accountant.get_optimizer_hook_fn(sample_rate=Q))
    return model
""",
        # twin: the amortized accountant built with n while each record joins the batch with probability q
        """
import numpy as np
from dpsgd.accountant import AmortizedAccountant
from dpsgd.sanitizer import AmortizedGaussianSanitizer
def poisson_batch(X, y, q):
    keep = np.random.rand(len(X)) < q
    return X[keep], y[keep]
def train(X_train, y_train, q, steps, sigma, step, target_eps):
    accountant = AmortizedAccountant(len(X_train))
    sanitizer = AmortizedGaussianSanitizer(accountant, [4.0, True])
    for _ in range(steps):
        xb, yb = poisson_batch(X_train, y_train, q)
        step(sanitizer, xb, yb, sigma)
    return accountant.get_privacy_spent(target_eps=target_eps)
""",
        # twin: a moments accountant built with n and no batch drawing in this module
        """
from privacy_accountant import GaussianMomentsAccountant
def build_privacy(num_examples, sanitizer_cls, bound):
    accountant = GaussianMomentsAccountant(num_examples)
    return sanitizer_cls(accountant, [bound, True])
""",
        # the shuffled loader is handed to Opacus' Poisson DPDataLoader, which draws the batches accounted
        """
import torch
from opacus.data_loader import DPDataLoader
from opacus.accountants.utils import get_noise_multiplier
def fit(self, rows, epochs, eps, delta):
    dl = torch.utils.data.DataLoader(rows, batch_size=self.batch_size, shuffle=True)
    dl = DPDataLoader.from_data_loader(dl)
    sigma = get_noise_multiplier(target_epsilon=eps, target_delta=delta, sample_rate=1 / len(dl), epochs=epochs)
    return dl, sigma
""",
        # the shuffled loaders batch held-out records (a validation dataset class, a test split)
        """
from torch.utils.data import DataLoader
from opacus.accountants.utils import get_noise_multiplier
def loaders(parts, test_part, bs, eps, delta, epochs):
    sigma = get_noise_multiplier(target_epsilon=eps, target_delta=delta, sample_rate=bs / len(parts["train"]),
                                 epochs=epochs)
    per_type = {}
    for kind, part in parts.items():
        it = DataLoader(ValidQueries(part), batch_size=bs, shuffle=True)
        per_type[kind] = it
    scored = DataLoader(dataset=test_part, batch_size=bs, shuffle=True)
    return per_type, scored
""",
        # a conditioning column is drawn per row of a batch already sampled: columns, not records
        """
import numpy as np
from opacus.accountants.utils import get_noise_multiplier
def cond(self, real, eps, delta, epochs, q):
    batch = len(real)
    picked = np.random.choice(self.n_categorical_columns, batch)
    sigma = get_noise_multiplier(target_epsilon=eps, target_delta=delta, sample_rate=q, epochs=epochs)
    return picked, sigma
""",
        # a helper handed ε values maps each record's selection flag to its local budget: no rate is accounted
        """
def step(model, xs, ys, pick_prob, eps_hi, eps_lo, batch_size):
    budgets = per_record_epsilon(pick_prob, eps_hi, eps_lo)
    model.fit(perturb(xs, budgets), ys, batch_size=batch_size, epochs=1)
""",
        # (r4) twins: the autodp calibration with batches drawn by Poisson sampling; one given batch cut into
        # chunks for memory (the caller draws the batch)
        """
import numpy as np
from autodp.calibrator_zoo import generalized_eps_delta_calibrator
from autodp.mechanism_zoo import SubsampleGaussianMechanism
def train(X, epochs, batch_size, epsilon, delta, step):
    n = X.shape[0]
    calibrate = generalized_eps_delta_calibrator()
    params = {"sigma": None, "prob": batch_size / n, "coeff": epochs * n / batch_size}
    calibrate(SubsampleGaussianMechanism, epsilon, delta, [0, 1000], params=params, para_name="sigma")
    for _ in range(epochs * n // batch_size):
        step(X[np.random.rand(n) < params["prob"]], params["sigma"])
def generate(generator, n, batch_size, dim, epsilon, delta, sigma):
    q = batch_size / n
    out = np.zeros((n, dim))
    for i in range(n // batch_size):
        out[i * batch_size:(i + 1) * batch_size, :] = generator(batch_size)
    return out, compute_rdp(q, sigma, n // batch_size, [2, 4, 8])
def private_grad(params, batch, chunk, clipped_sum):
    inputs, targets = batch
    total = 0.0
    for k in range(inputs.shape[0] // chunk):
        total = total + clipped_sum(params, inputs[k * chunk:(k + 1) * chunk], targets[k * chunk:(k + 1) * chunk])
    return total
def calibrate_sigma(epsilon, delta, batch_size, n, steps):
    params = {"sigma": None, "prob": batch_size / n, "coeff": steps}
    generalized_eps_delta_calibrator()(SubsampleGaussianMechanism, epsilon, delta, [0, 100], params=params,
                                       para_name="sigma")
    return params["sigma"]
""",
        # (g3) twin: the estimator reads each batch through a Poisson mask (the input_fn only evaluates, unshuffled),
        # and an unshuffled evaluation input_fn beside the project accountant
        """
import numpy as np
import tensorflow as tf
from core.privacy_accountant import accountant
def model_fn(features, labels, mode, params):
    n, batch_size, epochs, epsilon = params
    ac = accountant(data_size=n, batch_size=batch_size, epochs=epochs, target_delta=1e-5)
    return build_dp_optimizer(ac.get_noise_multiplier(target_epsilon=epsilon))
def train(train_x, train_y, test_x, test_y, batch_size, epochs, epsilon, est):
    q = batch_size / len(train_x)
    for _ in range(epochs * len(train_x) // batch_size):
        mask = np.random.rand(len(train_x)) < q
        est.train(input_fn=lambda: (train_x[mask], train_y[mask]), steps=1)
    eval_input_fn = tf.estimator.inputs.numpy_input_fn(x={"x": test_x}, y=test_y, batch_size=batch_size,
                                                       num_epochs=1, shuffle=False)
    return est.evaluate(input_fn=eval_input_fn)
""",
        # (g3) twins: the epoch's order drawn without replacement (a permutation cut into blocks is the shuffled
        # shape, accounted here without replacement), and a with-replacement draw of generator inputs never sliced
        # by the batch size
        """
import numpy as np
from accounting import compute_rdp_sample_without_replacement
def fit(self, sigma, orders):
    n = self.features.shape[0]
    for epoch in range(self.epochs):
        order = np.random.choice(n, size=n, replace=False)
        for b in range(n // self.batch_size):
            ids = order[b * self.batch_size:(b + 1) * self.batch_size]
            self.step(self.features[ids], sigma)
    return compute_rdp_sample_without_replacement(self.batch_size / n, sigma, self.epochs * n // self.batch_size, orders)
def sample_conditions(num_rows, n_conditions):
    return np.random.choice(n_conditions, size=(num_rows, 2))
""",
        # (g3) twins of the client partition: each client joins the round with probability frac (Poisson), and a
        # partition iterated for evaluation with no accountant in its loop
        """
import numpy as np
class Server:
    def run_epoch(self, rounds):
        for _ in range(rounds):
            clients = [c for c in self.clients if np.random.rand() < self.frac]
            self.aggregate([c.local_update() for c in clients])
            self.accountant.step(noise_multiplier=self.sigma, sample_rate=self.frac)
    def evaluate(self, k):
        for part in np.array_split(np.arange(len(self.test_clients)), k):
            self.report([self.test_clients[i].evaluate() for i in part])
""",
        # (g39-2) twin of the with-replacement cohort: each client joins the round independently with probability
        # m / N (Poisson), which is what the rate handed to compute_rdp describes
        """
import numpy as np
from privacy import compute_rdp, get_privacy_spent
class Server:
    def run(self, m, rounds):
        for t in range(1, rounds):
            rdp = compute_rdp(m / len(self.clients), self.sigma, t, self.orders)
            eps = get_privacy_spent(self.orders, rdp, target_delta=1e-5)[0]
            picked = [c for c in self.clients if np.random.rand() < m / len(self.clients)]
            self.aggregate([c.update(self.model) for c in picked])
""",
        # (g39-2) ordinary ML: a with-replacement bootstrap draw of rows, no accountant at all
        """
import numpy as np
def bootstrap_means(X, n_boot, batch_size):
    out = []
    for _ in range(n_boot):
        idx = np.random.choice(len(X), batch_size)
        out.append(X[idx].mean(axis=0))
    return np.array(out)
""",
        # (g39-2) the ε helper is called only in a comment (a timing benchmark): no ε is claimed for the shuffled
        # batches
        """
import tensorflow as tf
from tensorflow_privacy import compute_rdp, get_privacy_spent
def compute_epsilon(epoch, n, args):
    q = args.batch_size / n
    rdp = compute_rdp(q=q, noise_multiplier=args.sigma, steps=epoch * n // args.batch_size, orders=[2, 4, 8])
    return get_privacy_spent([2, 4, 8], rdp, target_delta=1e-5)[0]

def main(args, x, model):
    fn = tf.compat.v1.estimator.inputs.numpy_input_fn(x={"x": x}, batch_size=args.batch_size, shuffle=True)
    for epoch in range(args.epochs):
        model.train(input_fn=fn)
        # eps = compute_epsilon(epoch, len(x), args)

if __name__ == "__main__":
    main(None, None, None)
""",
        # (g39-2) twin of the DistributedSampler loader: Opacus' Poisson sampler draws the batches
        """
from torch.utils.data import DataLoader
from opacus import PrivacyEngine
from opacus.utils.uniform_sampler import UniformWithReplacementSampler
def main(args, train_data, model):
    sample_rate = args.batch_size / len(train_data)
    loader = DataLoader(train_data, batch_sampler=UniformWithReplacementSampler(
        num_samples=len(train_data), sample_rate=sample_rate))
    engine = PrivacyEngine(model, sample_rate=sample_rate, noise_multiplier=args.sigma, max_grad_norm=1.0)
    return loader, engine
""",
        # (g39-2) ordinary ML: a DistributedSampler loader, no accountant
        """
import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
def make_loader(dataset, batch_size):
    return DataLoader(dataset, batch_size=batch_size, sampler=DistributedSampler(dataset), drop_last=True)
""",
        # (h42-1) the HF trainer subclass replaces the default loader with a Poisson one (VALID twin)
        """
from transformers import Trainer
from opacus.data_loader import DPDataLoader
from opacus.accountants.utils import get_noise_multiplier
class ZerothOrderTrainer(Trainer):
    def get_train_dataloader(self):
        return DPDataLoader.from_data_loader(super().get_train_dataloader())
    def train_loop(self, args, n):
        loader = self.get_train_dataloader()
        sigma = get_noise_multiplier(target_epsilon=args.eps, target_delta=1e-5, steps=args.max_steps,
                                     sample_rate=args.train_batch_size / n)
        for inputs in loader:
            self.noisy_step(inputs, sigma)
""",
        # an ordinary fine-tuning trainer: the default loader, no accountant
        """
from transformers import Trainer
class LossLoggingTrainer(Trainer):
    def train_loop(self, args):
        loader = self.get_train_dataloader()
        for step, inputs in enumerate(loader):
            loss = self.training_step(self.model, inputs)
            self.log({"loss": loss.item(), "lr": args.learning_rate})
""",
        # a project base class named like HF's, with its own Poisson loader hook
        """
from opacus.accountants.utils import get_noise_multiplier
class Trainer:
    def get_train_dataloader(self):
        return self.poisson_loader
class DPTrainer(Trainer):
    def train_loop(self, args, n):
        loader = self.get_train_dataloader()
        sigma = get_noise_multiplier(target_epsilon=args.eps, target_delta=1e-5, steps=args.max_steps,
                                     sample_rate=args.batch_size / n)
        for inputs in loader:
            self.noisy_step(inputs, sigma)
""",
        # (h44-2 twin) users kept each with probability q (Poisson), q also in the hand-written calibration
        """
import math
import numpy as np
class UserLevelTrainer:
    def __init__(self, users, rate, epochs, delta, epsilon):
        self.users, self.rate, self.epochs = users, rate, epochs
        self.delta, self.epsilon = delta, epsilon
    def _noise_multiplier(self):
        q = self.rate
        steps = math.ceil(1 / q) * self.epochs
        return q * math.sqrt(2 * steps * math.log(1 / self.delta)) / self.epsilon
    def training_step(self):
        keep = np.random.rand(len(self.users)) < self.rate
        return [u for u, k in zip(self.users, keep) if k]
""",
        # (h44-2) ordinary ML: a validation split sized by a fraction, and a noise-augmentation helper with its own
        # rate; nothing calibrates privacy from the split fraction
        """
import math
import random
import numpy as np
def split(rows, val_rate=0.1):
    held = set(random.sample(range(len(rows)), int(len(rows) * val_rate)))
    return [r for i, r in enumerate(rows) if i not in held], [r for i, r in enumerate(rows) if i in held]
def add_noise(x, noise_rate=0.05):
    return x + np.random.normal(0, noise_rate * math.sqrt(x.var()), x.shape)
""",
    )

    INVALID = (
        # (b85) twin of the step-counting σ helper: this one works out q = batch / n and credits Poisson
        # amplification, while the batches are drawn with replacement
        """
import numpy as np
def calibrate_sigma(epsilon, delta, n_rows, batch_size, epochs):
    q = batch_size / n_rows  # <-
    steps = (n_rows // batch_size) * epochs
    return search_subsampled_sigma(q, steps, epsilon, delta)  # <-

def train(model, data, cfg):
    sigma = calibrate_sigma(cfg.eps, cfg.delta, len(data), cfg.batch_size, cfg.epochs)  # <-
    for _ in range(cfg.epochs):
        idx = np.random.choice(len(data), cfg.batch_size)  # <-
        model.noisy_step(data[idx], sigma)
""",
        # (h45-QE) a Lightning module reads the fixed batch size of the trainer's own loader and steps the RDP
        # accountant with q = batch_size / n as if each batch were Poisson-sampled
        """
import pytorch_lightning as pl
from opacus.accountants import RDPAccountant
class NoisyRecModel(pl.LightningModule):
    def on_train_start(self):
        dl = self.trainer.datamodule.train_dataloader()
        bs = getattr(dl, "batch_size", None)
        self.sample_rate = bs / len(dl.dataset)
        self.accountant = RDPAccountant()
    def training_step(self, batch, batch_idx):
        loss = self.noisy_update(batch)
        self.accountant.step(noise_multiplier=self.sigma, sample_rate=self.sample_rate)  # <-
        return loss
""",
        # (h45-QE) twin: the same pass-through helper, now run by the training function that walks the batches
        # and hands it q = bs / n
        """
import numpy as np
from opacus.accountants import RDPAccountant
def spent_epsilon(sigma, sample_rate, steps, delta=1e-5):
    acct = RDPAccountant()
    for _ in range(steps):
        acct.step(noise_multiplier=sigma, sample_rate=sample_rate)  # <-
    return acct.get_epsilon(delta=delta)
def fit(net, X, y, bs, sigma, epochs):
    perm = np.random.default_rng(0).permutation(len(X))  # <-
    for _ in range(epochs):
        for s in range(0, len(perm), bs):
            rows = perm[s:s + bs]  # <-
            net.noisy_step(X[rows], y[rows], sigma)
    steps = epochs * (len(X) // bs)
    return spent_epsilon(sigma, bs / len(X), steps)  # <-
""",
        # (h44b-2) a launcher accounts q = batch / n and hands training to fairseq's shuffled epoch iterator
        """
import argparse
import subprocess
from privacy_tools import get_sigma
parser = argparse.ArgumentParser()
parser.add_argument('--batch_size', type=int, default=1024)
parser.add_argument('--epsilon', type=float, default=3.0)
args = parser.parse_args()
n_train = 67000
q = args.batch_size / n_train  # <-
sigma = get_sigma(q, args.epochs * (n_train // args.batch_size), args.epsilon, 1e-5)  # <-
cmd = ["python", "fairseq_cli/train.py", "data-bin/sst2", "--max-sentences", "32",  # <-
       "--update-freq", str(args.batch_size // 32), "--sigma", str(sigma)]
subprocess.call(cmd)
""",
        # (h44b-2) torch's ``randint(high, (batch,))`` draws node indices with replacement, accounted as Poisson
        """
import torch
from tensorflow_privacy import compute_rdp, get_privacy_spent
def train(model, feats, labels, n_nodes, cfg, orders):
    for step in range(cfg.steps):
        idx = torch.randint(n_nodes, (cfg.batch_size,))  # <-
        model.dp_step(feats[idx], labels[idx])
    rdp = compute_rdp(q=cfg.batch_size / n_nodes, noise_multiplier=cfg.sigma, steps=cfg.steps, orders=orders)  # <-
    return get_privacy_spent(orders, rdp, target_delta=1e-5)
""",
        # (h44b-2) CTGAN's conditional data sampler feeds fixed-size real batches to an Opacus 0.x discriminator
        """
import opacus
def fit(self, train_data, transformer):
    self._sampler = DataSampler(train_data, transformer.output_info_list, True)
    engine = opacus.PrivacyEngine(self.critic, batch_size=self.bs, sample_size=train_data.shape[0],  # <-
                                  noise_multiplier=self.sigma, max_grad_norm=1.0)
    engine.attach(self.critic_opt)
    for _ in range(max(len(train_data) // self.bs, 1)):
        cond, mask, col, opt = self._sampler.sample_condvec(self.bs)
        real = self._sampler.sample_data(self.bs, col, opt)  # <-
        self.critic_step(real, cond)
    return engine.get_privacy_spent(self.delta)
""",
        # twin: the same call given the training batch, q = batch / n credited for the shuffled Keras batches
        """
from tensorflow_privacy import compute_noise
def train(model, x, y, eps, delta, batch_size=64):
    n = x.shape[0]
    mult = compute_noise(n=n, batch_size=batch_size, target_epsilon=eps, epochs=5, delta=delta)  # <-
    model.fit(x, y, batch_size=batch_size, epochs=5)  # <-
    return mult
""",
        # an uncalled sibling's rate reports nothing; the live one (called below) is what is flagged
        """
import torch
def exact_eps(args, n):
    q = args.batch_size / n
    return args.epochs / q
def approx_eps(args, n):
    q = args.batch_size / n  # <-
    return rdp_epsilon(q, args.sigma, args.epochs / q, args.delta)  # <-
def main(args, data):
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch_size, shuffle=True)  # <-
    for x, y in loader:
        dp_step(x, y)
    print(approx_eps(args, len(data)))
""",
        # (h46-2) the training set shuffled in its own statement, then cut into fixed batches; accounted as Poisson
        """
import tensorflow as tf
from tensorflow_privacy import compute_rdp, get_privacy_spent
def run(train_x, train_y, params, orders, delta):
    train_ds = tf.data.Dataset.from_tensor_slices((train_x, train_y))
    train_ds = train_ds.shuffle(len(train_x))  # <-
    for epoch in range(params["epochs"]):
        for xb, yb in train_ds.batch(params["batch_size"], drop_remainder=True):
            step(xb, yb)
        q = params["batch_size"] / len(train_x)  # <-
        rdp = compute_rdp(q=q, noise_multiplier=params["sigma"], steps=(epoch + 1) * len(train_x) // params["batch_size"], orders=orders)  # <-
        eps = get_privacy_spent(orders, rdp, target_delta=delta)[0]
""",
        # (h46-2) a project sampler named for shuffling feeds the trainer whose accountant is given a Poisson rate
        """
from dp_accounting import PoissonSampledDpEvent, GaussianDpEvent
from mysampling import ShuffledUserSampler
class UserTrainer:
    def train_sampler(self):
        return ShuffledUserSampler(self.user_index, batch_size=self.batch_size)  # <-
    def spent(self, sigma, steps):
        event = PoissonSampledDpEvent(sampling_probability=self.batch_size / self.num_users, event=GaussianDpEvent(sigma))  # <-
        return self.accountant.compose(event, steps).get_epsilon(self.delta)
""",
        # the GDP CLT accountant for Poisson sampling, handed a hard-coded training-set size, for a shuffled loader
        # (h44-2) users drawn as a fixed-size sample without replacement (k = rate * #users), while the
        # hand-written calibration takes the rate as a Poisson sampling probability
        # (h44-2) the engine gets no loader: the caller's own loaders run, the accountant charges a Poisson rate
        """
from opacus import PrivacyEngine
def attach(model, optimizer, cfg):
    engine = PrivacyEngine()
    model, optimizer, _ = engine.make_private(module=model, optimizer=optimizer,
                                              data_loader=None,  # <-
                                              noise_multiplier=cfg.sigma, max_grad_norm=cfg.clip)
    return engine, optimizer
""",
        """
import math
import numpy as np
class UserLevelTrainer:
    def __init__(self, users, rate, epochs, delta, epsilon):
        self.users, self.rate, self.epochs = users, rate, epochs
        self.delta, self.epsilon = delta, epsilon
    def _noise_multiplier(self):
        q = self.rate
        steps = math.ceil(1 / q) * self.epochs
        return q * math.sqrt(2 * steps * math.log(1 / self.delta)) / self.epsilon
    def training_step(self):
        k = max(1, int(len(self.users) * self.rate))
        return np.random.choice(self.users, size=k, replace=False)  # <-
""",
        # (h44-2) the RDP accountant is stepped in a helper with the rate passed under another name
        """
from opacus.accountants import RDPAccountant
from torch.utils.data import DataLoader
def solve_sigma(target, delta, sample_rate, steps):
    acct = RDPAccountant()
    for _ in range(steps):
        acct.step(noise_multiplier=1.0, sample_rate=sample_rate)  # <-
    return acct.get_epsilon(delta)
def main(args, train_set):
    loader = DataLoader(train_set, batch_size=args.bs, shuffle=True, drop_last=True)  # <-
    n = len(train_set)
    q = args.bs / n  # <-
    return solve_sigma(args.eps, args.delta, sample_rate=q, steps=len(loader) * args.epochs), loader  # <-
""",
        """
import torch
from gdp_accountant import compute_muP, compute_epsP
def report(args, epoch, train_set, engine):
    loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True)  # <-
    for x, y in loader:
        engine.step()
    mu = compute_muP(epoch, args.sigma, 60000, args.batch_size)  # <-
    return compute_epsP(epoch, args.sigma, 60000, args.batch_size, args.delta), mu  # <-
""",
        # a σ search from (n, batch) in another module, then Keras fit on shuffled fixed-size batches
        """
from dp_utils import get_epsilon_noise_multiplier
def run(model, pca, X, y, FLAGS, target_epsilon, steps):
    for i in range(0, len(X), pca.batch_size):
        pca.partial_fit(X[i:i + pca.batch_size])
    sigma = get_epsilon_noise_multiplier(target_epsilon, steps, FLAGS.batch_size, len(X), FLAGS.delta)  # <-
    model.fit(X, y, epochs=FLAGS.epochs, batch_size=FLAGS.batch_size)  # <-
""",
        # (h38-2) a command-line switch that turns Opacus' Poisson sampling off, the ε still read from its accountant
        """
from opacus import PrivacyEngine
def main(args, model, optimizer, loader):
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=args.sigma, max_grad_norm=1.0,
                                                   poisson_sampling=args.poisson_sampling)  # <-
    train(model, optimizer, loader, args.epochs)
    return engine.get_epsilon(args.delta)
""",
        # (h38-2) a pandas frame's rows drawn k at a time, in a script whose ε helper the top level calls
        """
import pandas as pd
from tensorflow_privacy.privacy.analysis import rdp_accountant
rows = pd.read_csv("train.csv")
N = rows.shape[0]
def epsilon_after(steps):
    rdp = rdp_accountant.compute_rdp(q=lot / N, noise_multiplier=1.1, steps=steps, orders=[2, 4, 8])  # <-
    return rdp_accountant.get_privacy_spent([2, 4, 8], rdp, target_delta=1e-5)[0]
for it in range(iters):
    xb = rows.sample(lot)  # <-
    train_step(xb)
print(epsilon_after(iters))
""",
        # (h38-2) the first lot indices of a fresh permutation each step
        """
import numpy as np
def fit(X, lot_size, sigma, steps, orders):
    for _ in range(steps):
        order = np.random.permutation(len(X))
        xb = X[order[:lot_size], :]  # <-
        noisy_step(xb, sigma)
    return compute_rdp(q=lot_size / len(X), noise_multiplier=sigma, steps=steps, orders=orders)  # <-
""",
        # (h38-2) a teacher subset of exactly q * n records per query, composed as a Poisson-subsampled mechanism
        """
import numpy as np
from autodp import rdp_acct
def label_queries(queries, feats, prob, k, epsilon):
    out = []
    for q_x in queries:
        picked = np.random.choice(feats.shape[0], int(prob * feats.shape[0]), replace=False)  # <-
        out.append(np.argmax(votes(feats[picked], q_x, k) + np.random.laplace(0, 1 / epsilon, 10)))
    return out
def main(args, acct, mech):
    labels = label_queries(args.queries, args.feats, args.prob, args.k, args.epsilon)
    acct.compose_poisson_subsampled_mechanisms(mech, args.prob, coeff=len(labels))
    return labels
""",
        # (h38-2) the same with replacement (choice's default), the accountant run before the labelling helper
        """
import numpy as np
def prepare(pub, pri, sample_prob, sigma):
    n_pri = pri.shape[0]
    votes = []
    for x in pub:
        idx = np.random.choice(n_pri, size=int(sample_prob * n_pri))  # <-
        votes.append(noisy_knn(pri[idx], x, sigma))
    return votes
def main(args, pub, pri):
    eps = get_epsilon(args.sigma, args.delta, args.sample_prob, len(pub))  # <-
    return prepare(pub, pri, args.sample_prob, args.sigma), eps
""",
        # (g37-4) twins: the same chunked pass when the function trains (named for prediction but running the
        # train op), a batch size that is not the accounted record count, and batches cut from one column of a
        # with-replacement index table
        """
import math
from privacy.analysis import compute_dp_sgd_privacy
class Synth:
    def predict_from(self, rows, sigma, delta):
        compute_dp_sgd_privacy(len(rows), self.batch_size, sigma, self.epochs, delta)  # <-
        for i in range(int(math.ceil(len(rows) / self.batch_size))):
            chunk = rows[i * self.batch_size:(i + 1) * self.batch_size]  # <-
            self.sess.run(self.train_op, feed_dict={self.x: chunk})
""",
        """
from dpsgd import accountant
N_RECORDS = 560
def read_input(example, batch_size, randomize):
    if randomize:
        features, labels = tf.train.shuffle_batch([example["x"], example["y"]], batch_size=batch_size,  # <-
                                                  capacity=batch_size * 100, min_after_dequeue=batch_size * 10)
    else:
        features, labels = tf.train.batch([example["x"], example["y"]], batch_size=batch_size)
    return features, labels
def train(example, sigma):
    batch_size = FLAGS.batch_size
    features, labels = read_input(example, batch_size, True)
    priv_accountant = accountant.GaussianMomentsAccountant(N_RECORDS)  # <-
    return features, labels, priv_accountant
""",
        """
import numpy as np
from privacy.analysis import compute_dp_sgd_privacy
def train(self, sigma, delta):
    compute_dp_sgd_privacy(self.n, self.batch_size * self.k, sigma, self.epochs, delta)  # <-
    for epoch in range(self.epochs):
        ids = np.random.choice(self.n, size=(self.n, self.k))  # <-
        for b in range(self.n // self.batch_size):
            for j in range(self.k):
                rows = ids[b * self.batch_size:(b + 1) * self.batch_size, j]  # <-
                self.sess.run(self.train_op, feed_dict={self.x: self.data[rows]})
""",
        # twins of the quiet Poisson rewrap, held-out loaders, column draw and ε-list helper: a shuffled loader
        # that no Poisson sampler replaces (another one is rewrapped), a training dataset class, rows drawn
        # by a batch-sized choice, a helper handed the rate but no ε
        """
import torch
from opacus.data_loader import DPDataLoader
from opacus.accountants.utils import get_noise_multiplier
def fit(self, rows, aux, epochs, eps, delta):
    dl = torch.utils.data.DataLoader(rows, batch_size=self.batch_size, shuffle=True)  # <-
    side = DPDataLoader.from_data_loader(torch.utils.data.DataLoader(aux, batch_size=8))
    sigma = get_noise_multiplier(target_epsilon=eps, target_delta=delta, sample_rate=1 / len(dl), epochs=epochs)  # <-
    return dl, side, sigma
""",
        """
from torch.utils.data import DataLoader
from opacus.accountants.utils import get_noise_multiplier
def loaders(parts, bs, eps, delta, epochs):
    sigma = get_noise_multiplier(target_epsilon=eps, target_delta=delta, sample_rate=bs / len(parts["train"]),  # <-
                                 epochs=epochs)
    it = DataLoader(TrainQueries(parts["train"]), batch_size=bs, shuffle=True)  # <-
    return it, sigma
""",
        """
import numpy as np
from opacus.accountants.utils import get_noise_multiplier
def draw(self, eps, delta, epochs, q):
    batch = self.batch_size
    picked = np.random.choice(self.n_rows, batch)  # <-
    sigma = get_noise_multiplier(target_epsilon=eps, target_delta=delta, sample_rate=q, epochs=epochs)  # <-
    return picked, sigma
""",
        """
def step(model, xs, ys, pick_prob, sigma, batch_size):
    spent = rdp_epsilon(pick_prob, sigma)  # <-
    model.fit(xs, ys, batch_size=batch_size, epochs=1)  # <-
    return spent
""",
        # contiguous blocks of a shuffled list (``items[s:s + lot]`` over ``range(0, n, lot)``) charged with q = lot / n
        """
import numpy as np
def fit(users, lot_size, sigma, accountant, step, epochs):
    q = lot_size / len(users)  # <-
    order = list(users)
    for _ in range(epochs):
        np.random.shuffle(order)  # <-
        for start in range(0, len(order), lot_size):
            step(order[start:start + lot_size], sigma)  # <-
            accountant.compute_rdp(q, sigma, 1)  # <-
def train(X, y, bs, sigma, update, steps_per_epoch, epochs):
    q = bs / X.shape[0]  # <-
    for _ in range(epochs):
        perm = np.random.permutation(X.shape[0])  # <-
        for i in range(0, X.shape[0], bs):
            idx = perm[i:i + bs]  # <-
            update(X[idx], y[idx], sigma)
    return compute_rdp(q, sigma, steps_per_epoch * epochs, [2, 4, 8])  # <-
""",
        # the module's own ε formula (a hand-written subsampled-Gaussian bound) takes q = batch / n, while training
        # walks shuffled fixed-size batches, draws batches with replacement, or shuffles a tf.data pipeline
        """
import numpy as np
import torch
def privacy_spent(args, loader):
    q = args.batch_size / len(loader.dataset)  # <-
    steps = args.epochs / q
    return 2 * q * np.sqrt(steps * np.log(1 / args.delta)) / args.sigma
def main(args, trainset, model, opt):
    loader = torch.utils.data.DataLoader(trainset, batch_size=args.batch_size, shuffle=True)  # <-
    for _ in range(args.epochs):
        for x, y in loader:
            model(x, y).backward()
            opt.step()
    print(privacy_spent(args, loader))
""",
        """
import numpy as np
def compute_epsilon(cfg):
    sampling_rate = cfg.batch_size / cfg.n_train  # <-
    mix = lambda x: (1 - sampling_rate) * np.exp(-x ** 2 / 2) + sampling_rate * np.exp(-(x - 1 / cfg.sigma) ** 2 / 2)
    return cfg.epochs / sampling_rate * np.log(np.mean(mix(np.random.randn(1000)))) + np.log(1 / cfg.delta)
def train(X, y, step, cfg):
    for _ in range(cfg.epochs * len(X) // cfg.batch_size):
        idx = np.random.choice(len(X), cfg.batch_size)  # <-
        step(X[idx], y[idx], cfg.sigma)
    return compute_epsilon(cfg)
""",
        """
import numpy as np
import tensorflow as tf
def get_rdp_epsilon(hp):
    q = hp.batch_size / hp.num_examples  # <-
    return hp.epochs / q * q ** 2 / hp.sigma ** 2
def fit(model, x, y, hp):
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(len(x)).batch(hp.batch_size)  # <-
    model.fit(ds, epochs=hp.epochs)
    return get_rdp_epsilon(hp)
""",
        # the same statement with its Poisson ε kept, a baseline that is the DP model, a uniform draw of records
        """
import re
from collections.abc import Callable
import numpy as np
import tensorflow as tf
from tensorflow_privacy import compute_dp_sgd_privacy_statement
def get_epsilon(num_examples, batch_size, epochs, noise_multiplier, delta):
    text = str(compute_dp_sgd_privacy_statement(number_of_examples=num_examples, batch_size=batch_size,  # <-
                                                num_epochs=epochs, noise_multiplier=noise_multiplier, delta=delta))
    return float(re.search(r"Poisson sampling.*?: ([0-9.]+)", text).group(1))
def train_baseline(x, y, args):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.compile(optimizer=DPKerasSGDOptimizer(noise_multiplier=args.sigma), loss="mse")
    model.fit(x, y, epochs=args.epochs, batch_size=args.batch_size)  # <-
    return get_epsilon(len(x), args.batch_size, args.epochs, args.sigma, args.delta)  # <-
""",
        """
import numpy as np
from opacus.accountants.utils import get_noise_multiplier
def train(self, data, batch_size, epochs, eps, delta):
    sigma = get_noise_multiplier(target_epsilon=eps, target_delta=delta, sample_rate=batch_size / len(data),  # <-
                                 epochs=epochs)
    for _ in range(epochs):
        idx = np.random.choice(len(data), batch_size)  # <-
        self.step(data[idx], sigma)
""",
        # a helper drawing indices with replacement; the amortized accountant built with n charges elsewhere
        """
import numpy as np
from dpsgd.accountant import AmortizedAccountant
from dpsgd.sanitizer import AmortizedGaussianSanitizer
def draw(X, y, batch_size=64):
    picks = np.random.randint(len(X), size=batch_size)  # <-
    return X[picks], y[picks]
def train(X_train, y_train, steps, sigma, step, target_eps):
    accountant = AmortizedAccountant(len(X_train))  # <-
    sanitizer = AmortizedGaussianSanitizer(accountant, [4.0, True])
    for _ in range(steps):
        xb, yb = draw(X_train, y_train)
        step(sanitizer, xb, yb, sigma)
    return accountant.get_privacy_spent(target_eps=target_eps)
""",
        # one shuffle per epoch and consecutive slices, a moments accountant built with the example count
        """
import numpy as np
from privacy_accountant import accountant
def train(data, epochs, batch_size, sanitizer_cls, bound, step):
    acc = accountant.GaussianMomentsAccountant(data.shape[0])  # <-
    sanitizer = sanitizer_cls(acc, [bound, True])
    order = np.arange(data.shape[0])
    for _ in range(epochs):
        np.random.shuffle(order)  # <-
        for i in range(len(order) // batch_size):
            step(sanitizer, data[order[i * batch_size:(i + 1) * batch_size]])  # <-
""",
        # the MNIST reader's next_batch (a shuffled pass) with the moments accountant built on the train size
        """
from differential_privacy.privacy_accountant.tf import accountant
def train(mnist, steps, batch_size, run_step):
    priv_accountant = accountant.GaussianMomentsAccountant(mnist.train.num_examples)  # <-
    for _ in range(steps):
        images, labels = mnist.train.next_batch(batch_size)  # <-
        run_step(priv_accountant, images, labels)
""",
        # an engine keeps the caller's shuffled loader when Poisson sampling is off, yet hands the same
        # rate to its (Poisson) accountant
        """
from opacus.accountants import RDPAccountant
def make_private(optimizer, loader, sigma, poisson_sampling=True):
    if poisson_sampling:
        loader = to_poisson(loader)
        sample_rate = 1 / len(loader)
    else:
        sample_rate = loader.batch_size / len(loader.dataset)  # <-
    accountant = RDPAccountant()
    optimizer.attach_step_hook(accountant.get_optimizer_hook_fn(sample_rate=sample_rate))
    return optimizer, loader, accountant
""",
        # the negated spelling on an attribute flag, a project accountant taking q
        """
def account(self, steps, sigma, delta):
    q = 1 / len(self.loader)
    if not self.use_poisson:
        q = self.batch_size / self.num_examples  # <-
    return compute_epsilon_rdp(q=q, sigma=sigma, steps=steps, delta=delta)
""",
        # a sampling mode given by name
        """
from tensorflow_privacy import compute_rdp, get_privacy_spent
def privacy(mode, batch, n, sigma, steps, orders):
    if mode != "poisson":
        sampling_rate = batch / n  # <-
    else:
        sampling_rate = batch / n
    rdp = compute_rdp(sampling_rate, sigma, steps, orders)
    return get_privacy_spent(orders, rdp, target_delta=1e-5)[0]
""",
        # a dataset cursor hands out consecutive slices of a shuffled index, accounted by an Opacus hook
        """
from opacus.accountants import RDPAccountant
from opacus.optimizers import DPOptimizer
class Solver:
    def build(self, optimizer):
        self.accountant = RDPAccountant()
        self.dp_opt = DPOptimizer(optimizer=optimizer, noise_multiplier=1.1, max_grad_norm=1.0,
                                  expected_batch_size=self.batch_size)
        rate = self.batch_size / self.data.train_count  # <-
        self.dp_opt.attach_step_hook(self.accountant.get_optimizer_hook_fn(sample_rate=rate))  # <-
    def train_step(self):
        graphs, labels = self.data.next_train_batch(self.batch_size)  # <-
        self.dp_opt.zero_grad()
        self.loss(graphs, labels).backward()
        self.dp_opt.step()
""",
        # a shuffled DataLoader stepping the hooked optimizer
        """
import torch
from opacus.accountants import RDPAccountant
def train(model, dataset, optimizer, dp_optimizer, batch_size):
    accountant = RDPAccountant()
    dp_optimizer.attach_step_hook(accountant.get_optimizer_hook_fn(sample_rate=batch_size / len(dataset)))  # <-
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True)  # <-
    for x, y in loader:
        dp_optimizer.zero_grad()
        model(x, y).backward()
        dp_optimizer.step()
    return accountant.get_epsilon(delta=1e-5)
""",
        # the classic cursor spelled ``next_batch`` of a training split, RDP at q = batch / n
        """
from tensorflow_privacy import compute_rdp, get_privacy_spent
def train(sess, step_op, data, batch_size, sigma, steps, orders):
    for _ in range(steps):
        xs, ys = data.train.next_batch(batch_size)  # <-
        sess.run(step_op, {"x": xs, "y": ys})
    rdp = compute_rdp(q=batch_size / 60000, noise_multiplier=sigma, steps=steps, orders=orders)  # <-
    return get_privacy_spent(orders, rdp, target_delta=1e-5)[0]
""",
        # the rate is the number of updates that arrived over the client count (fixed-size cohort)
        """
import numpy as np
def aggregate(updates, num_total_clients, noise_multiplier, clip_norm, accountant, delta):
    clipped = [u / max(1.0, np.linalg.norm(u) / clip_norm) for u in updates]
    cohort_size = len(updates)
    sample_rate = cohort_size / num_total_clients  # <-
    noised = np.mean(clipped, axis=0) + np.random.normal(0, noise_multiplier * clip_norm / cohort_size)
    accountant.step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)  # <-
    return noised, accountant.get_epsilon(delta=delta)
""",
        # q = len(selected_clients) / num_clients handed to the RDP accountant
        """
from opacus.accountants import RDPAccountant
class Server:
    def round(self, selected_clients, sigma):
        q = len(selected_clients) / self.num_clients  # <-
        self.accountant.step(noise_multiplier=sigma, sample_rate=q)  # <-
        return self.accountant.get_epsilon(delta=1e-5)
""",
        # a global cursor wrapping modulo len(data) against the TF moments accountant (q = batch / total)
        """
from accountant import GaussianMomentsAccountant
data_index = 0
def next_batch(data, batch_size):
    global data_index
    batch = []
    for _ in range(batch_size):
        batch.append(data[data_index])
        data_index = (data_index + 1) % len(data)  # <-
    return batch
def train(data, sigma, batch_size, steps, step):
    acc = GaussianMomentsAccountant(len(data))
    for _ in range(steps):
        step(next_batch(data, batch_size))
        acc.accumulate_privacy_spending(None, sigma, batch_size)  # <-
""",
        # a cursor attribute wrapping modulo the record count against compute_rdp
        """
from tensorflow_privacy import compute_rdp
class Reader:
    def next_batch(self, batch_size):
        out = self.rows[self.pos:self.pos + batch_size]
        self.pos = (self.pos + batch_size) % self.n_samples  # <-
        return out
    def epsilon(self, batch_size, sigma, steps, orders):
        return compute_rdp(q=batch_size / self.n_samples, noise_multiplier=sigma, steps=steps, orders=orders)  # <-
""",
        # each batch slot an independent randint (with replacement) against a MomentsAccountant's sampling_prob
        """
import numpy as np
from privacy import MomentsAccountant
def batches(data, batch_size, steps):
    for _ in range(steps):
        idx = [np.random.randint(len(data)) for _ in range(batch_size)]  # <-
        yield data[idx]
def train(data, batch_size, steps, sigma, step):
    q = batch_size / len(data)  # <-
    acc = MomentsAccountant(delta=1e-5, sigma=sigma, sampling_prob=q)  # <-
    for batch in batches(data, batch_size, steps):
        step(batch)
        acc.accumulate()
""",
        # TF-MNIST next_batch (a shuffled partition) against a helper accountant given the rate positionally
        """
from accountant import comp_eps
def main(mnist, sigma, delta, batch_size, noisy_step, steps):
    sample_rate = batch_size / 60000  # <-
    for i in range(steps):
        batch = mnist.train.next_batch(batch_size)  # <-
        noisy_step(batch, sigma)
    return comp_eps(32, sample_rate, sigma, steps, delta)  # <-
""",
        # a cohort of exactly q * N clients drawn without replacement against Opacus' Poisson accountant
        """
import numpy as np
from opacus.accountants.utils import get_noise_multiplier
def federate(users, rounds, sample_rate, target_epsilon, target_delta):
    sigma = get_noise_multiplier(target_epsilon=target_epsilon, target_delta=target_delta,
                                 sample_rate=sample_rate, steps=rounds)  # <-
    for _ in range(rounds):
        chosen = np.random.choice(len(users), int(sample_rate * len(users)), replace=False)  # <-
        aggregate([users[i] for i in chosen], sigma)
""",
        # Opacus 0.x engine told batch_size and sample_size while the loader walks fixed consecutive batches
        """
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader
def fit(disc, disc_opt, dataset, batch_size):
    loader = DataLoader(dataset, batch_size=batch_size)  # <-
    engine = PrivacyEngine(disc, batch_size=batch_size, sample_size=len(dataset), noise_multiplier=1.0,  # <-
                           max_grad_norm=1.0)
    engine.attach(disc_opt)
    return loader
""",
        # the training loader comes from another module's factory given the batch size; compute_rdp credits Poisson
        """
from tensorflow_privacy import compute_rdp, get_privacy_spent
from data import get_loaders
def main(args, orders):
    train_loader, test_loader = get_loaders(args.batch_size)  # <-
    sampling_prob = args.batch_size / len(train_loader.dataset)  # <-
    rdp = compute_rdp(sampling_prob, args.sigma, args.steps, orders)  # <-
    return get_privacy_spent(orders, rdp, target_delta=args.delta)
""",
        # a lot of L records drawn without replacement against tf-privacy's compute_noise (Poisson, q = L / n)
        """
import random
from tensorflow_privacy import compute_noise
class DPLogReg:
    def fit(self, X, y):
        self.noise_for(X.shape[0])
        for _ in range(self.iters):
            lot = random.sample(range(0, X.shape[0]), self.L)  # <-
            self.step(X[lot], y[lot])
    def noise_for(self, n):
        self.sigma = compute_noise(n=n, batch_size=self.L, target_epsilon=self.epsilon, epochs=self.epochs,  # <-
                                   delta=self.delta, noise_lbd=1e-6)
""",
        # the same per-client list of shuffled loaders, for training
        """
import torch
def loaders(trainsets, n_clients, batch_size, sample_rate, accountant, sigma):
    train_dataloaders = [torch.utils.data.DataLoader(trainsets[i], batch_size=batch_size, shuffle=True)  # <-
                         for i in range(n_clients)]
    accountant.step(noise_multiplier=sigma, sample_rate=sample_rate)  # <-
    return train_dataloaders
""",
        # an unshuffled training DataLoader accounted by an Opacus 0.x engine told batch and sample size
        """
from torch.utils.data import DataLoader
from opacus import PrivacyEngine
def main(model, optimizer, train_set, bs, sigma):
    train_loader = DataLoader(train_set, batch_size=bs, drop_last=True)  # <-
    engine = PrivacyEngine(model, batch_size=bs, sample_size=len(train_set), noise_multiplier=sigma, max_grad_norm=1.0)  # <-
    engine.attach(optimizer)
    return train_loader, engine.get_privacy_spent(1e-5)
""",
        # tf.data: consecutive batches of the training set, charged by compute_rdp with q = batch / n
        """
import tensorflow as tf
from tensorflow_privacy import compute_rdp
def fit(model, x_train, batch_size, sigma, epochs, orders):
    train_ds = tf.data.Dataset.from_tensor_slices(x_train)
    train_ds = train_ds.batch(batch_size)  # <-
    steps = epochs * len(x_train) // batch_size
    model.fit(train_ds, epochs=epochs)
    return compute_rdp(batch_size / len(x_train), sigma, steps, orders)  # <-
""",
        # a fixed-size cohort of clients drawn with a numpy Generator, accounted as Poisson with q = k / N
        """
import numpy as np
def run_rounds(server, num_users, users_per_round, z, rounds, accountant):
    rng = np.random.default_rng()
    for t in range(rounds):
        chosen = rng.choice(num_users, size=users_per_round, replace=False)  # <-
        server.aggregate(chosen, z)
        accountant.step(noise_multiplier=z, sample_rate=users_per_round / num_users)  # <-
""",
        # random.sample of client ids, charged by compute_rdp with the cohort fraction
        """
import random
from tensorflow_privacy import compute_rdp
def federate(clients, n_clients, k, sigma, rounds, orders):
    for t in range(rounds):
        cohort = random.sample(range(n_clients), k)  # <-
        clients.train(cohort, sigma)
    return compute_rdp(k / n_clients, sigma, rounds, orders)  # <-
""",
        # torch: the first clients of a random permutation, accounted with a sampling rate
        """
import torch
def fl_train(model, clients, num_clients, per_round, sigma, rounds, accountant):
    for r in range(rounds):
        picked = torch.randperm(num_clients)[:per_round]  # <-
        model.update([clients[i] for i in picked.tolist()], sigma)
        accountant.step(noise_multiplier=sigma, sample_rate=per_round / num_clients)  # <-
""",
        # NigeloYang DP-SGD main.py: the script's q = batchsize / n calibrates sigma, but train() takes consecutive
        # slices of one shuffled index array (fixed-size disjoint batches)
        """
import numpy as np
sampling_prob = args.batchsize / n_training  # <-
steps = int(args.n_epoch / sampling_prob)
sigma, eps = get_sigma(sampling_prob, steps, args.eps, args.delta)  # <-

def train(epoch):
    sample_idxes = np.arange(n_training)
    np.random.shuffle(sample_idxes)  # <-
    for batch_idx in range(n_training // args.batchsize):
        idx = sample_idxes[batch_idx * args.batchsize:(batch_idx + 1) * args.batchsize]  # <-
        step(train_samples[idx], sigma)
""",
        # batches with replacement (choice's default) accounted as Poisson by the RDP accountant
        """
import numpy as np
from tensorflow_privacy.privacy.analysis.rdp_accountant import compute_rdp, get_privacy_spent
def train(X, batch_size, noise_multiplier, steps, orders):
    for _ in range(steps):
        idx = np.random.choice(len(X), batch_size)  # <-
        step(X[idx])
    rdp = compute_rdp(q=batch_size / len(X), noise_multiplier=noise_multiplier, steps=steps, orders=orders)  # <-
    return get_privacy_spent(orders, rdp, target_delta=1e-5)
""",
        # fixed shuffled batches from a DataLoader, accounted with a sample rate
        """
from torch.utils.data import DataLoader
from opacus.accountants import RDPAccountant
def train(model, dataset, batch_size, sigma, epochs):
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True)  # <-
    accountant = RDPAccountant()
    for _ in range(epochs):
        for x, y in loader:
            dp_step(model, x, y, sigma)
            accountant.step(noise_multiplier=sigma, sample_rate=batch_size / len(dataset))  # <-
    return accountant.get_epsilon(delta=1e-5)
""",
        # a target ε calibrated with Poisson sampling off
        """
from opacus import PrivacyEngine
def private_model(model, optimizer, loader, epsilon):
    engine = PrivacyEngine()
    return engine.make_private_with_epsilon(module=model, optimizer=optimizer, data_loader=loader,
                                            target_epsilon=epsilon, target_delta=1e-5, epochs=3,
                                            max_grad_norm=1.0, poisson_sampling=False)  # <-
""",
        # a federated client keeps its engine (a named accountant) for the server to read ε later, yet
        # turns Poisson sampling off
        """
from opacus import PrivacyEngine
class Participant:
    def __init__(self, loader, sigma, clip):
        self.loader, self.sigma, self.clip = loader, sigma, clip
        self.engine = PrivacyEngine(accountant="rdp")
    def local_round(self, net, opt):
        net, opt, dl = self.engine.make_private(module=net, optimizer=opt, data_loader=self.loader,
                                                noise_multiplier=self.sigma, max_grad_norm=self.clip,
                                                poisson_sampling=False)  # <-
        for xb, yb in dl:
            opt.zero_grad()
            net.loss(xb, yb).backward()
            opt.step()
""",
        # Opacus told not to sample, and its ε reported
        """
from opacus import PrivacyEngine
def make(model, optimizer, loader, delta):
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                               noise_multiplier=1.0, max_grad_norm=1.0, poisson_sampling=False)  # <-
    train(model, optimizer, loader)
    return engine.accountant.get_epsilon(delta=delta)
""",
        # tf.data shuffled into fixed batches, tf-privacy's statement assumes Poisson
        """
import tensorflow as tf
from tensorflow_privacy import compute_dp_sgd_privacy
def train(x, y, batch_size, epochs, noise_multiplier):
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(10000).batch(batch_size)  # <-
    for _ in range(epochs):
        for xb, yb in ds:
            step(xb, yb)
    return compute_dp_sgd_privacy(n=len(x), batch_size=batch_size, noise_multiplier=noise_multiplier,  # <-
                                  epochs=epochs, delta=1e-5)
""",
        # shuffled once per epoch, then consecutive slices; q = batch / n for the moments accountant
        """
import numpy as np
def train(input_data, batch_size, epochs, accountant):
    num_examples = input_data.shape[0]
    q = float(batch_size) / num_examples  # <-
    for epoch in range(epochs):
        rand_idxs = np.arange(num_examples)
        np.random.shuffle(rand_idxs)  # <-
        for idx in range(num_examples // batch_size):
            batch_idxs = rand_idxs[idx * batch_size: (idx + 1) * batch_size]  # <-
            accountant.accumulate_privacy_spending(q, sigma=1.1)  # <-
            step(input_data[batch_idxs])
""",
        # private-transformers: a RandomSampler feeds fixed batches, the engine accounts batch / sample_size
        """
from torch.utils.data import DataLoader, RandomSampler
from private_transformers import PrivacyEngine
def train(model, optimizer, dataset, batch_size, epochs, target_epsilon):
    sampler = RandomSampler(dataset)  # <-
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    engine = PrivacyEngine(model, batch_size=batch_size, sample_size=len(dataset), epochs=epochs,  # <-
                           target_epsilon=target_epsilon)
    engine.attach(optimizer)
""",
        # the same Opacus 0.x engine with real noise: its sample_rate credits Poisson sampling
        """
from torch.utils.data import DataLoader
from opacus import PrivacyEngine
def update_weights(self, net, dataset):
    train = DataLoader(dataset, batch_size=self.args.local_bs, shuffle=True)  # <-
    privacy_engine = PrivacyEngine(net, sample_rate=0.01, noise_multiplier=1.1, max_grad_norm=1.0,  # <-
                                   target_epsilon=2, target_delta=1e-5, epochs=1)
    privacy_engine.attach(optimizer)
""",
        # indices drawn with randint, accounted with a sampling probability
        """
import torch
def dp_train(data, batch_size, sigma, steps, accountant):
    for _ in range(steps):
        idx = torch.randint(0, len(data), (batch_size,))  # <-
        step(data[idx])
        accountant.step(noise_multiplier=sigma, sample_rate=batch_size / len(data))  # <-
""",
        # LDPFL-Attack DP-SGD: one coin per batch of a fixed loader; the realised fraction is given as q
        """
import torch
def fit(self, global_model, rn):
    sample_count = 0
    for (x, y) in self.train_loader:
        if torch.rand(1).item() > param.P:  # <-
            continue
        sample_count += len(x)
        self.step(x, y)
    self.accountant.step(noise_multiplier=param.SIGMA, sample_rate=(sample_count / self.train_data_size))  # <-
""",
        # DPautoGAN: a binomial (Poisson) batch size, then indices drawn with replacement (no accountant here)
        """
import numpy as np
class IIDBatchSampler:
    def __iter__(self):
        for _ in range(self.iterations):
            selections = np.random.binomial(self.length, self.minibatch_size / self.length)
            indices = np.random.choice(self.length, selections)  # <-
            if indices.size > 0:
                yield indices
""",
        # the same with keyword arguments
        """
import numpy as np
def poisson_batch(rng, n, q):
    k = rng.binomial(n=n, p=q)
    return rng.choice(n, size=k)  # <-
""",
        # the same helper given a count known by where it comes from (``len`` or ``shape[0]`` of the data)
        """
from torch.utils.data import DataLoader
import analysis
def train(dataset_train, opt, iterations):
    totalsamples = len(dataset_train)
    loader = DataLoader(dataset_train, batch_size=opt.batch_size, shuffle=True, drop_last=True)  # <-
    for imgs in loader:
        step(imgs)
    return analysis.epsilon(totalsamples, opt.batch_size, opt.noise_multiplier, iterations, opt.delta)
""",
        """
from torch.utils.data import DataLoader
from accounting import compute_epsilon
def train(X, batch_size, sigma, steps):
    loader = DataLoader(X, batch_size=batch_size, shuffle=True)  # <-
    for xb in loader:
        step(xb)
    m = X.shape[0]
    return compute_epsilon(m, batch_size, sigma, steps)
""",
        """
import torch
from torch.utils.data import DataLoader
from privacy import rdp_epsilon
def fit(train_set, test_set, bs, z, epochs):
    count = len(train_set)
    train_loader = DataLoader(train_set, batch_size=bs, shuffle=True)  # <-
    sampler = torch.utils.data.RandomSampler(data_source=test_set, replacement=True)
    unused = torch.utils.data.RandomSampler(data_source=train_set, replacement=True)
    for xb in train_loader:
        step(xb)
    return rdp_epsilon(count, z, epochs, batch_size=bs)
""",
        # an accountant helper given n and the batch size (q = batch / n, Poisson) for a shuffled DataLoader
        """
from torch.utils.data import DataLoader
def train(dset, batch_size, sigma, delta, epochs):
    dataloader = DataLoader(dset, batch_size=batch_size, shuffle=True, num_workers=4)  # <-
    step = 0
    for epoch in range(epochs):
        for imgs in dataloader:
            critic_step(imgs, sigma)
            step += 1
            spent = compute_renyi_privacy(len(dset), batch_size, step, sigma, delta)  # <-
""",
        # the same helper shape with keywords, fed by tf.data's shuffled fixed batches
        """
import tensorflow as tf
from tensorflow_privacy import DPKerasSGDOptimizer
def train(model, x, batch_size, epochs, sigma):
    ds = tf.data.Dataset.from_tensor_slices(x).shuffle(len(x)).batch(batch_size)  # <-
    opt = DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=sigma, num_microbatches=batch_size)
    for _ in range(epochs):
        for xb in ds:
            step(model, opt, xb)
    return get_rdp_epsilon(num_examples=len(x), batch_size=batch_size, noise_multiplier=sigma, epochs=epochs)  # <-
""",
        # fixed-size batches drawn without replacement, accounted as Poisson subsampling
        """
def train(train_data, model, optimizer, batch_size, iters, sigma, orders):
    minibatch_loader, microbatch_loader = get_data_loaders_uniform_without_replace(batch_size, 1, 1)  # <-
    for it in range(iters):
        train_dynamic_add_noise(model, minibatch_loader(train_data), optimizer)
    return apply_dp_sgd_analysis(batch_size / len(train_data), sigma, iters, orders, 1e-5)  # <-
""",
        # the same with numpy, accounted by compute_rdp
        """
import numpy as np
def train(X, batch_size, sigma, steps, orders):
    for _ in range(steps):
        batch_idx = np.random.choice(len(X), batch_size, replace=False)  # <-
        step(X[batch_idx], sigma)
    return compute_rdp(q=batch_size / len(X), noise_multiplier=sigma, steps=steps, orders=orders)  # <-
""",
        # a client walks fixed unshuffled batches of size q * n; the caller accounts q as a Poisson rate
        """
import math
import torch
def local_train_with_dp(clients_data, models, q, epochs):
    for i in range(len(clients_data)):
        batch_size = math.floor(len(clients_data[i]) * q)
        train_dl = torch.utils.data.DataLoader(clients_data[i], batch_size=batch_size, shuffle=False)  # <-
        for epoch in range(epochs):
            train_dynamic_add_noise(models[i], train_dl)
""",
        # the same with a sample_rate and a shuffled loader
        """
from torch.utils.data import DataLoader
def client_loader(dataset, sample_rate, noise_multiplier):
    bs = int(sample_rate * len(dataset))
    return DataLoader(dataset, batch_size=bs, shuffle=True, drop_last=True)  # <-
""",
        # a client's dp_sample subset drawn once in __init__; Gaussian_MA credits a fresh sample of rate q per step
        """
import numpy as np
class LocalUpdateDP:
    def __init__(self, args, dataset, idxs):
        self.args = args
        self.idxs_sample = np.random.choice(list(idxs), int(self.args.dp_sample * len(idxs)), replace=False)  # <-
        self.noise = Gaussian_MA(epsilon=args.dp_epsilon, delta=args.dp_delta, q=self.args.dp_sample, epoch=10)
""",
        # the same with an Opacus accountant and a sample_rate attribute
        """
import numpy as np
class Client:
    def __init__(self, data, sample_rate, sigma):
        self.sample_rate = sample_rate
        self.subset = np.random.choice(len(data), int(self.sample_rate * len(data)), replace=False)  # <-
    def account(self, accountant, sigma):
        accountant.step(noise_multiplier=sigma, sample_rate=self.sample_rate)
""",
        # Opacus 0.x engine told sample_rate in one function; make_private in another covers only its own loader
        """
import torch
from opacus import PrivacyEngine
def train_v0(model, train_data, batch_size, sigma, max_norm, optimizer):
    train_dl = torch.utils.data.DataLoader(train_data, batch_size=256, shuffle=True)  # <-
    engine = PrivacyEngine(model, sample_rate=batch_size / len(train_data), noise_multiplier=sigma,  # <-
                           max_grad_norm=max_norm)
    engine.attach(optimizer)
    return engine.accountant.get_epsilon(delta=1e-5)
def train_v1(model, train_data, batch_size, sigma, max_norm, optimizer):
    train_dl = torch.utils.data.DataLoader(train_data, batch_size=batch_size, shuffle=True)
    engine = PrivacyEngine()
    return engine.make_private(module=model, optimizer=optimizer, data_loader=train_dl, noise_multiplier=sigma,
                               max_grad_norm=max_norm)
""",
        # (r4) autodp's Poisson-subsampled Gaussian mechanism calibrated at prob = batch / n, while the batches are
        # consecutive rows (all columns) of the same order every epoch
        """
from autodp.calibrator_zoo import generalized_eps_delta_calibrator
from autodp.mechanism_zoo import SubsampleGaussianMechanism
def train(X, Y, epochs, batch_size, epsilon, delta, step):
    n = X.shape[0]
    calibrate = generalized_eps_delta_calibrator()
    params = {"sigma": None, "prob": batch_size / n, "coeff": epochs * n / batch_size}
    calibrate(SubsampleGaussianMechanism, epsilon, delta, [0, 1000], params=params, para_name="sigma")
    for _ in range(epochs):
        for it in range(n // batch_size):
            xb = X[it * batch_size:(it + 1) * batch_size, :]  # <-
            step(xb, params["sigma"])
""",
        # (g3) tf.estimator's shuffled numpy_input_fn cuts fixed-size batches; the project's own accountant class,
        # given the record count and the batch size, calibrates sigma for Poisson sampling at batch / n
        """
import tensorflow as tf
from core.privacy_accountant import accountant
def model_fn(features, labels, mode, params):
    n, batch_size, epochs, epsilon = params
    ac = accountant(data_size=n, batch_size=batch_size, epochs=epochs, target_delta=1e-5)  # <-
    sigma = ac.get_noise_multiplier(target_epsilon=epsilon)
    return build_dp_optimizer(sigma)
def train(train_x, train_y, batch_size, epochs, epsilon):
    train_input_fn = tf.estimator.inputs.numpy_input_fn(x={"x": train_x}, y=train_y,  # <-
                                                        batch_size=batch_size, num_epochs=epochs, shuffle=True)
    est = tf.estimator.Estimator(model_fn=model_fn, params=[train_x.shape[0], batch_size, epochs, epsilon])
    est.train(input_fn=train_input_fn)
""",
        # (g3) an epoch of indices drawn with replacement, then cut into consecutive batch-size blocks, against
        # tf-privacy's Poisson statement
        """
import numpy as np
from tensorflow_privacy import compute_dp_sgd_privacy
def fit(self, sigma, delta):
    n = self.features.shape[0]
    compute_dp_sgd_privacy(n, self.batch_size, sigma, self.epochs, delta)  # <-
    for epoch in range(self.epochs):
        order = np.random.choice(n, size=(n, self.packing))  # <-
        for b in range(n // self.batch_size):
            ids = order[b * self.batch_size:(b + 1) * self.batch_size]  # <-
            self.step(self.features[ids], sigma)
""",
        # (g3) the clients shuffled and split into disjoint subgroups, one subgroup per accounted round, while the
        # RDP accountant is stepped as Poisson client sampling at the participation fraction
        """
import random
class Server:
    def divide_into_subgroups(self):
        random.shuffle(self.clients)
        k = int(1 / self.frac)
        return [self.clients[i::k] for i in range(k)]
    def run_epoch(self):
        groups = self.divide_into_subgroups()  # <-
        for clients in groups:
            self.aggregate([c.local_update() for c in clients])
            self.accountant.step(noise_multiplier=self.sigma, sample_rate=self.frac)  # <-
""",
        # (g39-2) clients drawn as a fixed-size sample *with* replacement (``choice`` replaces by default), while the
        # RDP accountant is given the Poisson rate m / N
        """
import numpy as np
from privacy import compute_rdp, get_privacy_spent
class Server:
    def run(self, m, rounds):
        for t in range(1, rounds):
            rdp = compute_rdp(m / len(self.clients), self.sigma, t, self.orders)  # <-
            eps = get_privacy_spent(self.orders, rdp, target_delta=1e-5)[0]
            picked = np.random.choice(self.clients, m)  # <-
            self.aggregate([c.update(self.model) for c in picked])
""",
        # (g39-2) fixed-size batches with replacement of the records, accounted as Poisson sampling
        """
import numpy as np
from tensorflow_privacy import compute_rdp, get_privacy_spent
def train(X, step, batch_size, sigma, steps, orders):
    for _ in range(steps):
        idx = np.random.choice(len(X), batch_size)  # <-
        step(X[idx], sigma)
    rdp = compute_rdp(q=batch_size / len(X), noise_multiplier=sigma, steps=steps, orders=orders)  # <-
    return get_privacy_spent(orders, rdp, target_delta=1e-5)[0]
""",
        # (g39-2) the same ε helper, called: its Poisson rate meets the shuffled fixed-size batches; the helper's
        # call passes the rate batch / n, reported where it is worked out
        """
import tensorflow as tf
from tensorflow_privacy import compute_rdp, get_privacy_spent
def compute_epsilon(steps, q, sigma):
    rdp = compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=[2, 4, 8])  # <-
    return get_privacy_spent([2, 4, 8], rdp, target_delta=1e-5)[0]

def main(args, x, model):
    fn = tf.compat.v1.estimator.inputs.numpy_input_fn(x={"x": x}, batch_size=args.batch_size, shuffle=True)  # <-
    for epoch in range(args.epochs):
        model.train(input_fn=fn)
    print(compute_epsilon(args.epochs * len(x) // args.batch_size,
                          args.batch_size / len(x), args.sigma))  # <-

if __name__ == "__main__":
    main(None, None, None)
""",
        # (g39-2) a DistributedSampler only permutes the records; the loader cuts fixed-size batches from that
        # order, while the engine is handed a Poisson rate worked out two statements earlier
        """
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from opacus import PrivacyEngine
def main(args, train_data, model):
    loader = DataLoader(train_data, batch_size=args.batch_size, drop_last=True,  # <-
                        sampler=DistributedSampler(train_data))
    sample_rate = args.batch_size / len(train_data)  # <-
    engine = PrivacyEngine(model, sample_rate=sample_rate, noise_multiplier=args.sigma, max_grad_norm=1.0)  # <-
    return loader, engine
""",
        # (h42-1) a Hugging Face trainer subclass keeps the default loader (a RandomSampler cut into fixed-size
        # batches) and sizes its noise with Opacus' Poisson accountant at rate batch / n
        """
from transformers import Trainer
from opacus.accountants.utils import get_noise_multiplier
class ZerothOrderTrainer(Trainer):
    def train_loop(self, args):
        loader = self.get_train_dataloader()  # <-
        n = self.num_examples(loader)
        rate = args.train_batch_size / n  # <-
        sigma = get_noise_multiplier(target_epsilon=args.eps, target_delta=args.delta, steps=args.max_steps,
                                     sample_rate=rate)  # <-
        for inputs in loader:
            self.noisy_step(inputs, sigma)
""",
        # the same through ``transformers.Trainer`` spelled as an attribute
        """
import transformers
from opacus.accountants.utils import get_noise_multiplier
class HeadTrainer(transformers.Trainer):
    def train_loop(self, args, n):
        batches = self.get_train_dataloader()  # <-
        rate = args.train_batch_size / n  # <-
        sigma = get_noise_multiplier(target_epsilon=args.eps, target_delta=1e-5, steps=args.max_steps,
                                     sample_rate=rate)  # <-
        for inputs in batches:
            self.noisy_step(inputs, sigma)
""",
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._sources: list[tuple[cst.CSTNode, str]] = []
        self._accounted: list[cst.Call] = []
        self._rates: list[cst.Assign] = []
        self._poisson_loader = False
        self._poisson_scopes: set[cst.CSTNode | None] = set()
        #: reported whatever the accountant: the code itself shows it meant Poisson sampling
        self._self_claimed: list[tuple[cst.CSTNode, str]] = []
        #: fixed-size draws without replacement (wrong only against a Poisson accountant)
        self._without_replacement: list[tuple[cst.CSTNode, str]] = []
        self._poisson_optional: list[cst.Arg] = []
        #: fixed-size cohorts of clients (wrong only against an accountant given a client-level rate)
        self._cohort_draws: list[tuple[cst.CSTNode, str]] = []
        #: ``self.x = choice(...)`` in ``__init__``: a subsample drawn once per object
        self._init_draws: list[cst.Call] = []
        self._poisson_off: list[cst.Arg] = []
        #: a rate computed in the branch that turns Poisson sampling off (fixed-size batches kept)
        self._fixed_branch_rates: list[tuple[cst.Assign, cst.If]] = []
        self._epsilon_read = False
        #: ``self.engine = PrivacyEngine(...)`` / ``PrivacyEngine(accountant="prv")``: an engine kept (or given an
        #: accountant) for ε to be read later, often by another module (``clients[i].privacy_engine.get_epsilon``)
        self._engine_kept = False
        self._poisson_selection: cst.Comparison | None = None
        #: (h44-2) fixed-size draws sized by a rate (``k = max(1, int(len(users) * self.rate))``) and that rate
        self._rate_sized: list[tuple[cst.Call, str]] = []

    @property
    def _per_epoch_bound(self) -> bool:
        """The code reads the bound for 'each example occurring once per epoch' (TF-Privacy's statement gives it
        beside the Poisson one): the ε it keeps is the one that fixed-size shuffled batches satisfy."""
        if not _ONCE_PER_EPOCH.search(self.ctx.source):
            return False
        return any(isinstance(n, cst.SimpleString) and _ONCE_PER_EPOCH.search(n.value) for n in walk(self.ctx.module))

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if _autodp_subsampled(node, name) and not self._sigma_search(node):
            self._accounted.append(node)  # (r4 recall helper) autodp's Poisson-subsampled Gaussian mechanism
            return
        if ((_RATE_CALLS.match(name) or _accountant_named(name) or _accountant_helper(name))
                and (_IMPLIED_RATE.match(name) or _rate_argument(node) is not None
                     or _engine_rate(node, name)) or _helper_rate(node, name, self.ctx.analysis.value_of)
                and not self._helper_without_rate(node)
                or name in _BATCH_CHARGED and any(_batch_named(a.value) for a in node.args)
                or _count_built(node, name) or self._project_accountant_rate(node, name)) \
                and not _noiseless(node) and not self._sigma_search(node):
            self._accounted.append(node)
        if name in _EPSILON_READS and not self._asserted(node) and not (
                name == "make_private_with_epsilon" and not self._poisson_off_in(node)):
            self._epsilon_read = True
        if name == "PrivacyEngine" and self._kept_engine(node):
            self._engine_kept = True
        if name in ("make_private", "make_private_with_epsilon"):
            loader = _keyword(node, "data_loader")
            if loader is not None and isinstance(loader.value, cst.Name) and loader.value.value == "None":
                # (h44-2) no loader for the engine to rebuild: the caller's ordinary loaders run, while the
                # engine's accountant charges a Poisson sample rate
                self._self_claimed.append((loader, "hands the engine no data loader (`data_loader=None`), so "
                                                   "Opacus never replaces the caller's loader by its Poisson "
                                                   "sampler: training runs the caller's ordinary (shuffled, "
                                                   "fixed-size) batches"))
            off = _keyword(node, "poisson_sampling")
            if _noiseless(node):
                return  # a clip-only engine (noise_multiplier=0.0) claims no ε to be amplified
            if off is not None and isinstance(off.value, cst.Name) and off.value.value == "False":
                self._poisson_off.append(off)
            elif off is not None and isinstance(off.value, cst.Attribute) and isinstance(off.value.value, cst.Name) \
                    and off.value.value.value in _CLI_CONFIG:
                # (h38-2) ``poisson_sampling=args.poisson_sampling``: a command-line switch turns it off, and the
                # engine's accountant keeps assuming Poisson sampling either way
                self._poisson_optional.append(off)
                self._poisson_loader = True
                self._poisson_scopes.add(self.ctx.analysis.enclosing_function(node))
            else:
                self._poisson_loader = True
                self._poisson_scopes.add(self.ctx.analysis.enclosing_function(node))
            return
        self._note_sampling(node, name)
        kind = self._batch_source(node, name)
        if kind is not None:
            site: cst.CSTNode = node
            if name == "batch" and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) \
                    and "ds.shuffle" in kind:
                # (h46-2) the shuffle of an earlier statement is where the fixed-size order is drawn
                site = self._shuffled_before(node.func.value) or node
            self._sources.append((site, kind))

    def _helper_without_rate(self, node: cst.Call) -> bool:
        """(b85) The helper's own ``def`` (this file or a project module it imports) credits no sampling rate."""
        if not isinstance(node.func, cst.Name):
            return False
        tree = self.ctx.python_tree()
        fn = _resolve_def(self.ctx.path, tree, node.func.value)
        return fn is not None and _credits_no_rate(fn)

    def _project_accountant_rate(self, node: cst.Call, name: str) -> bool:
        """(h44b-2) A project module's accountant factory handed the record count
        (``privacy_accountants.get_training_privacy_accountant(config, num_nodes, …)``) whose own body sets a
        Poisson rate from the batch size (``sampling_probability=config.batch_size / num_nodes``)."""
        if not (_helper_name(name) or _accountant_named(name)) \
                or not any(_size_like(a.value) for a in node.args if not a.star):
            return False
        tree = self.ctx.python_tree()
        if tree is None:
            return False
        func = node.func
        found = None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            imported = _import_of(tree, func.value.value)
            if imported is not None:
                module, level = imported
                found = _module_file(self.ctx.path, f"{module}.{func.value.value}" if module else func.value.value,
                                     level)
        elif isinstance(func, cst.Name):
            imported = _import_of(tree, func.value)
            if imported is not None:
                found = _module_file(self.ctx.path, imported[0], imported[1])
        if found is None:
            return False
        try:
            with open(found, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            return False
        start = re.search(rf"^def {re.escape(name)}\(", text, re.M)
        if start is None:
            return False
        rest = text[start.end():]
        end = re.search(r"\n(?=\S)", rest)
        body = rest[:end.start()] if end else rest
        return _PROJECT_POISSON_RATE.search(body) is not None

    def _kept_engine(self, node: cst.Call) -> bool:
        """An Opacus engine built with a chosen accountant (``PrivacyEngine(accountant="prv")``) or stored on an
        object (``self.privacy_engine = PrivacyEngine()``): its ε is meant to be read, if not in this file."""
        acc = _keyword(node, "accountant")
        if acc is not None and isinstance(acc.value, cst.SimpleString):
            return True
        parent = self.ctx.analysis.parent(node)
        return isinstance(parent, cst.Assign) and any(
            isinstance(t.target, cst.Attribute) for t in parent.targets)

    def _asserted(self, node: cst.Call) -> bool:
        """``assert engine.get_epsilon() > 0``: a test's sanity check on ε releases nothing."""
        return any(isinstance(a, cst.Assert) for a in self.ctx.analysis.ancestors(node))

    @staticmethod
    def _poisson_off_in(node: cst.Call) -> bool:
        """``make_private_with_epsilon(..., poisson_sampling=False)``: the ε it calibrates to is one the
        fixed batches do not meet (with Poisson on, it is another engine's ε)."""
        off = _keyword(node, "poisson_sampling")
        return off is not None and isinstance(off.value, cst.Name) and off.value.value == "False"

    def visit_List(self, node: cst.List) -> None:
        """(h44b-2) A command that launches fairseq training (``["python", "train.py", data, "--max-sentences",
        …]``, ``fairseq-train``): fairseq's epoch iterator shuffles the records into fixed-size batches, each record
        once per epoch, whatever rate the launcher hands its accountant."""
        strings = [e.value.evaluated_value for e in node.elements
                   if isinstance(e.value, cst.SimpleString) and isinstance(e.value.evaluated_value, str)]
        if any(t == "fairseq-train" or t.endswith(("train.py", "fairseq_cli/train.py")) for t in strings) \
                and any(t in ("--max-sentences", "--max-tokens", "--batch-size") for t in strings) \
                and any(t in ("--max-sentences", "--update-freq", "--task", "--arch") for t in strings):
            self._sources.append((node, "launches fairseq training (`train.py --max-sentences …`), whose epoch "
                                        "iterator shuffles the data into fixed-size batches, every record once per "
                                        "epoch"))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        """``x[i] < sampling_prob`` with ``x = np.random.uniform(size=n)``: the code Poisson-samples its units
        (records or clients) itself, each with probability q, as the accountant assumes."""
        if self._poisson_selection is not None or len(node.comparisons) != 1:
            return
        target = node.comparisons[0]
        if not isinstance(target.operator, (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)):
            return
        sides = (node.left, target.comparator)
        for draw, rate in (sides, sides[::-1]):
            if _rate_named(rate) and self._uniform_draw(draw):
                self._poisson_selection = node
                return

    def _uniform_draw(self, expr: cst.BaseExpression) -> bool:
        if any(isinstance(n, cst.Call) and call_name(n) in _UNIFORM for n in walk(expr)):
            return True
        base = expr.value if isinstance(expr, cst.Subscript) else expr
        if not isinstance(base, cst.Name):
            return False
        scope = self.ctx.analysis.enclosing_function(expr) or self.ctx.module
        for sub in walk(scope, into_scopes=False):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and ident(sub.targets[0].target) == base.value \
                    and isinstance(sub.value, cst.Call) and call_name(sub.value) in _UNIFORM:
                return True
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        """``q = batch_size / n``: a sampling rate computed for the accountant."""
        if len(node.targets) != 1:
            return
        self._imported_loader(node)
        self._cursor(node.targets[0].target, node.value)
        self._realized_rate(node)
        target = ident(node.targets[0].target)
        value = node.value
        if target in _RATE_KEYWORDS and isinstance(value, cst.BinaryOperation) \
                and isinstance(value.operator, cst.Divide) and _batch_named(_unwrap(value.left)):
            self._rates.append(node)
        if _rate_named(node.targets[0].target) and isinstance(value, cst.BinaryOperation) \
                and isinstance(value.operator, cst.Divide):
            branch = self._non_poisson_branch(node)
            if branch is not None:
                self._fixed_branch_rates.append((node, branch))

    def _non_poisson_branch(self, node: cst.CSTNode) -> cst.If | None:
        """The ``if`` whose branch for *no* Poisson sampling holds ``node``: the ``else`` of ``if poisson…:``,
        or the body of ``if not poisson…:`` / ``if sampling != "poisson":``."""
        fa = self.ctx.analysis
        for anc in fa.ancestors(node):
            if isinstance(anc, cst.FunctionDef):
                return None
            if not isinstance(anc, cst.If):
                continue
            test = anc.test
            negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) or \
                isinstance(test, cst.Comparison) and any(
                    isinstance(c.operator, (cst.NotEqual, cst.IsNot)) or isinstance(c.comparator, cst.Name)
                    and c.comparator.value == "False" for c in test.comparisons)
            mentions = any(isinstance(n, cst.Name) and "poisson" in words(n.value) or isinstance(n, cst.Attribute)
                           and "poisson" in words(n.attr.value) or isinstance(n, cst.SimpleString)
                           and "poisson" in n.value.lower() for n in walk(test))
            if not mentions:
                continue
            if negated and fa.inside(node, anc.body) or not negated and anc.orelse is not None \
                    and fa.inside(node, anc.orelse):
                return anc
            return None
        return None

    def _realized_rate(self, node: cst.Assign) -> None:
        """``sample_rate = len(updates) / num_clients`` (directly or through ``cohort_size = len(updates)``): the
        rate is the number of participants that actually arrived, a fixed-size cohort's size — a Poisson cohort's
        size is random and its q is fixed in advance."""
        target = ident(node.targets[0].target)
        value = node.value
        if target is None or not _rate_named(node.targets[0].target) \
                or not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide)):
            return
        count = value.left
        if isinstance(count, cst.Name) and (assigned := self.ctx.analysis.value_of(count)) is not None:
            count = assigned
        if not (isinstance(count, cst.Call) and call_name(count) == "len" and count.args):
            return
        name = ident(count.args[0].value) or ""
        if not words(name) & (_COHORT_WORDS | {"updates", "update", "received", "responses", "results", "uploads"}) \
                or words(name) & {"test", "eval", "val"}:
            return
        self._cohort_draws.append((node.value, f"takes the rate from the number of participants that arrived "
                                               f"(`{fa_code(self, count)}`): a fixed-size cohort, not a Poisson one"))

    def _cursor(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """``data_index = (data_index + 1) % len(data)``, ``self.pos = (self.pos + batch_size) % self.n``: a cursor
        walking the records in order, wrapping at the end: consecutive batches, not samples."""
        name = ident(target)
        if name is None or not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Modulo)):
            return
        left, right = value.left, value.right
        if not any(isinstance(n, (cst.Name, cst.Attribute)) and ident(n) == name for n in walk(left)):
            return
        if not (isinstance(right, cst.Call) and call_name(right) == "len" or _size_like(right)):
            return
        if not words(name) & {"index", "idx", "pos", "position", "cursor", "ptr", "pointer", "offset", "start"}:
            return
        self._sources.append((value, f"walks the records with a wrapping cursor (`{name} = (…) % …`): each batch is "
                                     "the next consecutive slice of the data, not a sample"))

    def _imported_loader(self, node: cst.Assign) -> None:
        """``train_loader, … = get_loaders(batch_size)``: the training loader built in another module from a
        fixed batch size, in a file that never mentions Poisson sampling (a sampler, ``DPDataLoader``,
        ``make_private``): fixed-size batches, whatever shuffling the factory does."""
        call = node.value
        if not isinstance(call, cst.Call) or call_name(call) in ("DataLoader", "len", "int", "float") \
                or self.ctx.analysis.callee(call) is not None:
            return
        if any(a.keyword is not None and (words(a.keyword.value) & {"dp", "private", "privacy", "poisson", "sampler"}
                                          or a.keyword.value in _RATE_KEYWORDS)
               or words(ident(a.value) or "") & {"dp", "private", "privacy", "poisson"} for a in call.args):
            return  # the factory is told whether to sample privately: it may build the Poisson loader itself
        target = node.targets[0].target
        names = [ident(e.value) or "" for e in target.elements] if isinstance(target, cst.Tuple) \
            else [ident(target) or ""]
        if not any(words(n) & {"train", "training"} and words(n) & {"loader", "dl", "generator", "iterator", "batches"}
                   for n in names):
            return
        if not any(a.keyword is None and _batch_named(a.value) or a.keyword is not None
                   and a.keyword.value == "batch_size" for a in call.args):
            return
        if _POISSON_TEXT.search(self.ctx.source):
            return
        self._sources.append((call, f"builds the training loader from a fixed batch size (`{call_name(call)}`, "
                                    "defined in another module): fixed-size batches"))

    def _enclosing_class_tree(self, node: cst.CSTNode) -> ast.ClassDef | None:
        """CPython's ``ast`` of the top-level class holding ``node`` (its bases are followed into the project
        modules it imports when the file is on disk)."""
        cls = next((a for a in self.ctx.analysis.ancestors(node) if isinstance(a, cst.ClassDef)), None)
        tree = self.ctx.python_tree() if cls is not None else None
        if tree is None:
            return None
        return next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == cls.name.value), None)

    def _inherited_loader_iterated(self, node: cst.For) -> None:
        """(h42-1) ``for x, y in self.train_loader`` in a class whose project base class (another module) builds
        ``self.train_loader = DataLoader(…, shuffle=True)``: the batches are shuffled fixed-size ones although the
        loader is not built in this file."""
        loop_iter = node.iter
        if isinstance(loop_iter, cst.Call) and call_name(loop_iter) in ("enumerate", "tqdm") and loop_iter.args:
            loop_iter = loop_iter.args[0].value
        if not (isinstance(loop_iter, cst.Attribute) and isinstance(loop_iter.value, cst.Name)
                and loop_iter.value.value == "self"):
            return
        attribute = loop_iter.attr.value
        if not (words(attribute) & {"train", "training"} and words(attribute) & {"loader", "dl", "dataloader"}):
            return
        cls = self._enclosing_class_tree(node)
        if cls is None:
            return
        file = _inherited_shuffled_loader(self.ctx.path, self.ctx.python_tree(), cls, attribute)
        if file is not None:
            self._sources.append((node.iter, f"iterates `self.{attribute}`, which the base class in "
                                             f"`{os.path.basename(file)}` builds as `DataLoader(shuffle=True)`: it "
                                             "shuffles the data into fixed-size batches"))

    def visit_For(self, node: cst.For) -> None:
        """``for x, y in loader: if torch.rand(1) > p: continue``: one coin per batch keeps or drops the whole
        batch, so its records are sampled together, not each with probability q."""
        self._inherited_loader_iterated(node)
        name = ident(node.iter) or ""
        if not words(name) & {"loader", "dl", "dataloader", "batches", "iterator"}:
            return
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        first = body[0] if body else None
        if not isinstance(first, cst.If) or not isinstance(first.test, cst.Comparison):
            return
        drops = isinstance(first.body, cst.IndentedBlock) and len(first.body.body) == 1 and isinstance(
            first.body.body[0], cst.SimpleStatementLine) and isinstance(first.body.body[0].body[0], cst.Continue)
        if drops and any(isinstance(n, cst.Call) and call_name(n) in _UNIFORM for n in walk(first.test)):
            self._sources.append((first.test, "keeps or drops each whole batch of the loader with one coin, so its "
                                              "records are sampled together, not each independently"))

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._per_element_draws(node)

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._per_element_draws(node)

    def _per_element_draws(self, node: cst.ListComp | cst.GeneratorExp) -> None:
        """``[random.choice(idx) for _ in range(batch_size)]``, ``(randint(0, n) for _ in range(bs))``: each of
        the batch's slots drawn independently from all records, so a record can fill several slots (sampling
        with replacement, a fixed batch size)."""
        loop = node.for_in
        if loop.inner_for_in is not None or not isinstance(loop.iter, cst.Call) or call_name(loop.iter) != "range":
            return
        if not loop.iter.args or not _batch_named(loop.iter.args[-1].value):
            return
        draws = [n for n in walk(node.elt) if isinstance(n, cst.Call)
                 and call_name(n) in ("choice", "randint", "randrange", "integers")
                 and _keyword(n, "size") is None and len([a for a in n.args if a.keyword is None]) <= 2]
        if draws and not any(call_name(d) == "choice" and self._replace_false(d) for d in draws):
            self._sources.append((node, "fills each batch slot with an independent random draw "
                                        f"(`{call_name(draws[0])}` per slot, `range(batch)`), i.e. sampling with "
                                        "replacement: a record can appear several times in one batch"))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """``data[i * b:(i + 1) * b]``: consecutive fixed-size batches."""
        if not _row_slice(node) or self._split_of_given_batch(node):
            return
        if nonrelease.evaluation_pass(self.ctx.analysis, node):
            return  # (g37-4) chunks of an inference / generation pass (``sample_from``, ``evaluate``)
        fn = self.ctx.analysis.enclosing_function(node)
        if isinstance(fn, cst.FunctionDef) and words(fn.name.value) & {"acc", "accuracy"} \
                and not nonrelease.takes_training_step(fn):
            return  # (h38-2) labels compared block by block for an accuracy figure: no batch is drawn
        if len(node.slice) > 1 and isinstance(self.ctx.analysis.parent(node), cst.AssignTarget):
            return  # (r4) ``out[i*b:(i+1)*b, :] = generated``: a write into an output, not a batch drawn
        if self._preprocessing_chunks(node):
            return
        part = node.slice[0].slice
        lower, upper = part.lower, part.upper
        if (lower is None or number(lower) == 0) and _batch_named(upper) and self._shuffle_of(node.value) is not None \
                and self.ctx.analysis.enclosing_function(node) is self.ctx.analysis.enclosing_function(
                    self._shuffle_of(node.value)) and any(isinstance(a, (cst.For, cst.While))
                                                          for a in self.ctx.analysis.ancestors(node)):
            # the first b indices of an order drawn afresh each step: b records without replacement
            self._without_replacement.append((node, "takes the first batch-size indices of a fresh random "
                                                    "permutation (`idx[:b]`): a fixed-size batch without replacement"))
            return
        if self._start_plus_batch(lower, upper):
            self._sources.append((node, "takes consecutive fixed-size batches (`data[s:s + b]`)"))
            shuffle = self._shuffle_of(node.value)
            if shuffle is not None:
                self._sources.append((shuffle, f"shuffles the data once and then (line {self.ctx.analysis.line_of(node)}) "
                                               "cuts it into consecutive fixed-size batches"))
            return
        if not (isinstance(lower, cst.BinaryOperation) and isinstance(upper, cst.BinaryOperation)):
            return
        if not (isinstance(lower.operator, cst.Multiply) and isinstance(upper.operator, cst.Multiply)):
            return
        if any(_batch_named(side) for side in (lower.left, lower.right)) and \
                any(_batch_named(side) for side in (upper.left, upper.right)):
            self._sources.append((node, "takes consecutive fixed-size batches (`data[i*b:(i+1)*b]`)"))
            shuffle = self._shuffle_of(node.value)
            if shuffle is not None:
                self._sources.append((shuffle, f"shuffles the data once and then (line {self.ctx.analysis.line_of(node)}) "
                                               "cuts it into consecutive fixed-size batches"))

    def _preprocessing_chunks(self, node: cst.Subscript) -> bool:
        """``for i in range(0, n, pca.batch_size): pca.partial_fit(X[i:i + b])``: the data is cut into chunks for
        an incremental preprocessing fit (PCA, scaler) or a transform; the loop takes no training step."""
        loops = [a for a in self.ctx.analysis.ancestors(node) if isinstance(a, (cst.For, cst.While))]
        if not loops:
            return False
        names = {call_name(n) for n in walk(loops[0]) if isinstance(n, cst.Call)}
        return bool(names & _PREPROCESSING_CALLS) and not names & _TRAINING_STEP_CALLS

    def _split_of_given_batch(self, node: cst.Subscript) -> bool:
        """(r4 recall helper) ``inputs[k * small:(k + 1) * small]`` where ``inputs, targets = batch`` and ``batch`` is
        the function's parameter: one batch, already drawn by the caller, cut into chunks for memory (micro-batches
        for ``vmap``); how the batch was drawn is decided elsewhere."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or not isinstance(node.value, cst.Name):
            return False
        params = {p for p in param_names(fn) if words(p) & _BATCH_WORDS}
        if not params:
            return False
        name = node.value.value
        if name in params:
            return True
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.value, cst.Name) \
                    and sub.value.value in params and any(isinstance(n, cst.Name) and n.value == name
                                                           for n in walk(sub.targets[0].target)):
                return True
        return False

    def _start_plus_batch(self, lower: cst.BaseExpression | None, upper: cst.BaseExpression | None) -> bool:
        """``users[start:start + self.lot_size]`` with ``start`` stepping through ``range(0, n, lot_size)``: each
        batch the next contiguous block of the data, every record once per pass."""
        if not (isinstance(lower, (cst.Name, cst.Attribute)) and isinstance(upper, cst.BinaryOperation)
                and isinstance(upper.operator, cst.Add)):
            return False
        start = ident(lower)
        sides = (upper.left, upper.right)
        if start is None or not any(ident(side) == start for side in sides) \
                or not any(_batch_named(_unwrap(side)) for side in sides):
            return False
        loop = next((a for a in self.ctx.analysis.ancestors(lower) if isinstance(a, cst.For)
                     and isinstance(a.target, cst.Name) and a.target.value == start), None)
        if loop is None or not (isinstance(loop.iter, cst.Call) and call_name(loop.iter) == "range"):
            return False
        steps = [a.value for a in loop.iter.args if a.keyword is None]
        return len(steps) == 3 and _batch_named(_unwrap(steps[2]))

    def _shuffle_of(self, sliced: cst.BaseExpression) -> cst.Call | None:
        """``np.random.shuffle(idx)`` or ``idx = np.random.permutation(n)`` for the array sliced into batches."""
        name = ident(sliced)
        if name is None:
            return None
        scope = self.ctx.analysis.enclosing_function(sliced) or self.ctx.module
        for sub in walk(scope, into_scopes=False):
            if isinstance(sub, cst.Call) and call_name(sub) == "shuffle" and sub.args \
                    and ident(sub.args[0].value) == name:
                return sub
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and ident(sub.targets[0].target) == name \
                    and isinstance(sub.value, cst.Call) and call_name(sub.value) == "permutation":
                return sub.value
        return None

    def _note_sampling(self, node: cst.Call, name: str) -> None:
        """Sampling whose own spelling claims a rate: a binomial batch size filled with replacement, fixed
        batches of size q * n, a fixed-size draw without replacement, a subsample drawn once in ``__init__``."""
        fa = self.ctx.analysis
        if name == "choice" and self._rate_times_count(self._choice_size(node)) \
                and not _cohort_named(self._population(node)):
            # ``choice(n, int(q * n))``: exactly q * n records each time, the rate spent as a fraction
            self._without_replacement.append((node, "draws exactly q * n records (`choice` with size "
                                                    f"`{fa.code(self._choice_size(node)).strip()}`"
                                                    + (", without replacement)" if self._replace_false(node)
                                                       else ", with replacement)")))
        elif name == "choice" and not self._replace_false(node) and self._choice_size(node) is not None \
                and self._assigned_from(self._choice_size(node), {"binomial"}):
            self._self_claimed.append((node, "draws a binomial batch size (Poisson's) and then fills it with "
                                             "replacement (`choice` replaces by default), so records repeat "
                                             "and the batch is not a Poisson sample"))
        elif name == "choice" and _batch_named(self._choice_size(node)) \
                and (self._replace_false(node) or _records(self._population(node))):
            # (g39-2) with replacement too (``choice`` replaces by default): a fixed-size batch is no Poisson sample
            self._without_replacement.append((node, "draws fixed-size batches " + (
                "without replacement" if self._replace_false(node) else "with replacement (records can repeat)")))
        elif name == "choice" and self._choice_size(node) is not None \
                and (_cohort_named(self._choice_size(node)) or _cohort_named(self._population(node))):
            # (g39-2) ``choice(self.clients, m)`` replaces by default: still a fixed-size cohort, not Poisson
            self._cohort_draws.append((node, "draws a fixed-size cohort of clients " + (
                "without replacement" if self._replace_false(node) else "with replacement (`choice` replaces by "
                                                                         "default, so clients can repeat)")))
        elif name == "sample" and len(node.args) >= 2 and not _keyword(node, "frac") \
                and (_cohort_named(node.args[0].value) or _cohort_named(node.args[1].value)):
            self._cohort_draws.append((node, "draws a fixed-size cohort of clients (`sample`, without "
                                            "replacement)"))
        elif name in ("permutation", "randperm") and node.args and _cohort_named(node.args[0].value) \
                and isinstance(self.ctx.analysis.parent(node), cst.Subscript):
            self._cohort_draws.append((node, f"takes the first clients of a random permutation (`{name}`): "
                                            "a fixed-size cohort without replacement"))
        elif name in ("sample", "choice") and self._record_population(node) \
                and (name == "sample" or self._replace_false(node)):
            self._without_replacement.append((node, f"draws a fixed number of records without replacement "
                                                    f"(`{name}`)"))
        elif name == "sample" and isinstance(node.func, cst.Attribute) and not _keyword(node, "frac") \
                and _batch_named(self._frame_sample_size(node)) and self._frame(node.func.value):
            # ``df.sample(mb_size)``: pandas draws exactly that many rows, without replacement
            self._without_replacement.append((node, "draws a fixed number of rows without replacement "
                                                    "(`sample(n)`)"))
        elif words(name) >= {"without", "replace"} and words(name) & {"loader", "loaders", "sampler", "batch"}:
            self._without_replacement.append((node, f"draws fixed-size batches without replacement (`{name}`)"))
        if name in ("choice", "sample") and (name == "sample" or self._replace_false(node)):
            size = self._choice_size(node) if name == "choice" else (
                _keyword(node, "k").value if _keyword(node, "k") is not None else
                ([a.value for a in node.args if a.keyword is None] + [None, None])[1])
            rate = self._sizing_rate(size) if size is not None else None
            if rate is not None:
                self._rate_sized.append((node, rate))
        if name in ("choice", "permutation", "sample") and self._in_init_attribute(node):
            self._init_draws.append(node)
        if name == "DataLoader" and _keyword(node, "sampler") is None and _keyword(node, "batch_sampler") is None:
            size = _keyword(node, "batch_size")
            if size is not None and self._assigned_from(size.value, set(), rate_times_size=True):
                self._self_claimed.append((node, f"walks fixed batches of size `{fa.code(size.value).strip()}` = "
                                                 "q * n: q is used as a sampling rate, but no record is sampled "
                                                 "with probability q (every record is in the same batch each epoch)"))

    def _sizing_rate(self, size: cst.BaseExpression) -> str | None:
        """(h44-2) The rate a draw's size is worked out from: ``int(len(pool) * q)``, or a name assigned that
        (``k = max(1, int(len(self.users) * self.sampling_rate))``, later capped by ``min``/a plain count):
        the rate's dotted name."""
        fa = self.ctx.analysis
        candidates: list[cst.BaseExpression] = [size]
        if isinstance(size, cst.Name):
            scope = fa.enclosing_function(size) or self.ctx.module
            candidates = [sub.value for sub in walk(scope, into_scopes=False) if isinstance(sub, cst.Assign)
                          and len(sub.targets) == 1 and ident(sub.targets[0].target) == size.value]
        for value in candidates:
            for n in walk(value):
                if not (isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply)):
                    continue
                for rate, count in ((n.left, n.right), (n.right, n.left)):
                    if _rate_named(rate) and isinstance(rate, (cst.Name, cst.Attribute)) and (
                            isinstance(count, cst.Call) and call_name(count) == "len" or _records(count)
                            and number(count) is None):
                        return ident(rate)
        return None

    def _rate_calibrated(self, draw: cst.Call, rate: str) -> cst.CSTNode | None:
        """(h44-2) Where the rate sizing a fixed draw is also handed to the privacy calculation: an accountant
        call given it (or a local alias of it), or arithmetic on it in a function named for the noise or ε
        (``def _calculate_noise_multiplier(self): q = self.rate; sigma = q * sqrt(2 * T * log(1 / delta)) / eps``)."""
        fa = self.ctx.analysis
        draw_fn = fa.enclosing_function(draw)

        def names_in(fn_scope: cst.CSTNode) -> set[str]:
            out = {rate}
            for sub in walk(fn_scope, into_scopes=False):
                if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and ident(sub.value) == rate \
                        and isinstance(sub.targets[0].target, cst.Name):
                    out.add(sub.targets[0].target.value)
            return out

        for call in self._accounted:
            scope = fa.enclosing_function(call) or self.ctx.module
            held = names_in(scope)
            if any(ident(n) in held for a in call.args for n in walk(a.value) if isinstance(n, (cst.Name, cst.Attribute))):
                return call
        for fn in walk(self.ctx.module):
            if not isinstance(fn, cst.FunctionDef) or fn is draw_fn:
                continue
            if not words(fn.name.value) & {"noise", "sigma", "multiplier", "epsilon", "eps", "privacy", "rdp",
                                           "accountant", "accounting", "budget"}:
                continue
            held = names_in(fn.body)
            for sub in walk(fn.body, into_scopes=False):
                if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, (cst.Multiply, cst.Divide, cst.Power)) \
                        and any(ident(side) in held for side in (sub.left, sub.right)) \
                        and not any(isinstance(a, cst.FormattedString) for a in fa.ancestors(sub)) \
                        and any(isinstance(c, cst.Call) and call_name(c) in ("sqrt", "log", "exp")
                                for c in walk(fa.parent(sub) or sub)):
                    return sub
        return None

    def _report_rate_sized(self, fa) -> None:  # noqa: ANN001 - FileAnalysis
        if self._poisson_selection is not None or self._poisson_loader:
            return
        reported = {id(r.node) for r in self.reports}
        for draw, rate in self._rate_sized:
            if id(draw) in reported or self._non_private_path(draw):
                continue
            site = self._rate_calibrated(draw, rate)
            if site is None:
                continue
            self.report(draw, f"this draws a fixed number of units, `{rate}` times their count, without "
                              f"replacement at every step, while the privacy calculation on line {fa.line_of(site)} "
                              f"takes `{rate}` as the sampling probability of Poisson subsampling: a fixed-size "
                              "sample is not that, so the amplification credited did not happen; sample each unit "
                              "independently with that probability, or account sampling without replacement")

    def _frame(self, owner: cst.BaseExpression) -> bool:
        """A table of records: named for a data set (``data``, ``df``, ``train_df``), or bound to a frame read or
        built (``pd.read_csv(...)``, ``pd.DataFrame(...)``); not a distribution or a conditional-vector sampler."""
        from dpcheck.analysis.vocabulary import is_dataset_name
        name = ident(owner)
        if name is None:
            return False
        last = name.split(".")[-1]
        if words(last) & (_HELD_OUT_WORDS | {"generator", "gen", "sampler", "cond", "dist", "distribution", "prior",
                                            "posterior", "noise", "latent", "model", "buffer", "memory", "replay"}):
            return False
        if is_dataset_name(last):
            return True
        value = self.ctx.analysis.value_of(owner) if isinstance(owner, cst.Name) else None
        return isinstance(value, cst.Call) and (call_name(value) or "").startswith(("read_", "DataFrame"))

    @staticmethod
    def _frame_sample_size(node: cst.Call) -> cst.BaseExpression | None:
        """The row count of ``df.sample(n)`` / ``df.sample(n=n)`` (one positional: not ``random.sample(pop, k)``)."""
        size = _keyword(node, "n")
        positional = [a.value for a in node.args if a.keyword is None]
        if size is not None:
            return size.value
        return positional[0] if len(positional) == 1 else None

    @staticmethod
    def _rate_times_count(size: cst.BaseExpression | None) -> bool:
        """``int(prob * n)``, ``round(n * sample_rate)``: a sampling rate scaled to a number of records."""
        if isinstance(size, cst.Call) and call_name(size) in ("int", "round", "floor", "ceil") and size.args:
            size = size.args[0].value
        return isinstance(size, cst.BinaryOperation) and isinstance(size.operator, cst.Multiply) and (
            _rate_named(size.left) and _records(size.right) or _rate_named(size.right) and _records(size.left))

    @staticmethod
    def _record_population(node: cst.Call) -> bool:
        """``sample(range(0, X.shape[0]), L)``, ``choice(len(X), L, replace=False)``: k of the n records."""
        positional = [a.value for a in node.args if a.keyword is None]
        if len(positional) < 2:
            return False
        population = positional[0]
        if isinstance(population, cst.Call) and call_name(population) in ("range", "arange") and population.args:
            population = population.args[-1].value
        return isinstance(population, cst.Call) and call_name(population) == "len" or isinstance(
            population, cst.Subscript) and isinstance(population.value, cst.Attribute) \
            and population.value.attr.value == "shape"

    @staticmethod
    def _replace_false(node: cst.Call) -> bool:
        replace = _keyword(node, "replace")
        return replace is not None and not _true(replace.value)

    @staticmethod
    def _population(node: cst.Call) -> cst.BaseExpression | None:
        population = _keyword(node, "a")
        positional = [a.value for a in node.args if a.keyword is None]
        return population.value if population is not None else (positional[0] if positional else None)

    @staticmethod
    def _choice_size(node: cst.Call) -> cst.BaseExpression | None:
        size = _keyword(node, "size")
        positional = [a.value for a in node.args if a.keyword is None]
        return size.value if size is not None else (positional[1] if len(positional) > 1 else None)

    def _assigned_from(self, expr: cst.BaseExpression, calls: set[str], *, rate_times_size: bool = False) -> bool:
        """Is the name ``expr`` assigned, in its function, from one of ``calls`` (or, with ``rate_times_size``,
        from a sampling rate times a length: ``floor(len(data) * q)``)?"""
        name = ident(expr)
        if name is None:
            return False
        scope = self.ctx.analysis.enclosing_function(expr) or self.ctx.module
        found = False
        for sub in walk(scope, into_scopes=False):
            if not (isinstance(sub, cst.Assign) and len(sub.targets) == 1 and ident(sub.targets[0].target) == name):
                continue
            inner = list(walk(sub.value))
            if any(isinstance(n, cst.Call) and call_name(n) in calls for n in inner):
                return True
            if not rate_times_size:
                continue
            if not (any(isinstance(n, cst.Call) and call_name(n) == "len" for n in inner) and any(
                    isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply)
                    and (_rate_named(n.left) or _rate_named(n.right)) for n in inner)):
                return False  # also assigned something else (``batch_size = 256``)
            found = True
        return found

    def _in_init_attribute(self, node: cst.Call) -> bool:
        """``self.idxs = np.random.choice(...)`` directly in ``__init__``."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        parent = fa.parent(node)
        return isinstance(fn, cst.FunctionDef) and fn.name.value == "__init__" and isinstance(parent, cst.Assign) \
            and isinstance(parent.targets[0].target, cst.Attribute) and fn.body is not None

    def _batch_source(self, node: cst.Call, name: str) -> str | None:
        if name == "choice":
            replace = _keyword(node, "replace")
            if replace is not None and not _true(replace.value):
                return None
            if _keyword(node, "p") is not None or len([a for a in node.args if a.keyword is None]) > 3:
                return None  # a weighted draw (``p=probs``) picks outcomes or categories, not a uniform batch
            size = _keyword(node, "size")
            positional = [a.value for a in node.args if a.keyword is None]
            size_expr = size.value if size is not None else (positional[1] if len(positional) > 1 else None)
            population = _keyword(node, "a")
            population_expr = population.value if population is not None else (positional[0] if positional else None)
            if not _records(population_expr):
                return None
            if _batch_named(size_expr) or self._batch_target(node):
                return "draws the batch with replacement (`choice` replaces by default)"
            if self._cut_into_batches(node):
                return ("draws an epoch of indices with replacement (`choice` replaces by default) and cuts it "
                        "into fixed-size batches")
        elif name == "randint":
            args = [a.value for a in node.args]
            positional = [a.value for a in node.args if a.keyword is None]
            if len(positional) == 2 and isinstance(positional[1], (cst.Tuple, cst.List)):
                # torch's ``randint(high, (batch_size,))``: the population first, then the batch's shape
                if not _records(positional[0]):
                    return None
            elif len(args) > 1 and not _records(args[1]):
                return None
            if any(_batch_named(a) for a in args[1:]) or self._batch_target(node):
                return "draws batch indices with replacement (`randint`)"
        elif name == "sample_data" and isinstance(node.func, cst.Attribute) \
                and words(ident(node.func.value) or "") & {"sampler", "datasampler"} and node.args \
                and _batch_named(node.args[0].value):
            # (h44b-2) CTGAN's ``DataSampler.sample_data(batch_size, col, opt)``: a fixed number of rows, drawn with
            # replacement or among the rows of a sampled category
            return ("draws fixed-size batches of rows with replacement, conditioned on a sampled category (CTGAN's "
                    "`DataSampler.sample_data`)")
        elif name == "RandomSampler":
            source = _keyword(node, "data_source") or next((a for a in node.args if a.keyword is None), None)
            if source is not None and words(ident(source.value) or "") & _HELD_OUT_WORDS:
                return None  # the order of a test set's batches spends no privacy
            parent = self.ctx.analysis.parent(node)
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
                    and isinstance(parent.targets[0].target, cst.Name) and not re.search(
                        rf"\b{parent.targets[0].target.value}\b(?!\s*=[^=])", self.ctx.source):
                return None  # a sampler bound to a name nothing reads draws no batch
            return "shuffles the data into fixed-size batches (`RandomSampler`)"
        elif _NEXT_BATCH.fullmatch(name) and not words(name) & _HELD_OUT_WORDS and node.args \
                and _batch_named(node.args[0].value) \
                and self._training_named_target(node) and not self._held_out_call(node):
            return f"takes the next fixed-size batch of a shuffled pass over the data (`{name}`)"
        elif (name.endswith("inputs") or name == "shuffle_batch") and _keyword(node, "batch_size") is not None \
                and self._training_named_target(node) and not self._held_out_call(node):
            return f"reads fixed-size batches from an input queue (`{name}(batch_size=…)`)"
        elif _partition_named(name) and self._iterated_with_accountant(node):
            return (f"splits the units into disjoint fixed groups (`{name}`), each taking part exactly once per "
                    "pass (a shuffled partition, not independent sampling)")
        elif name in ("numpy_input_fn", "pandas_input_fn") and _keyword(node, "batch_size") is not None \
                and _keyword(node, "shuffle") is not None and _true(_keyword(node, "shuffle").value) \
                and not self._evaluation_target(node) and not self._held_out_call(node):
            # tf.estimator's input functions: a shuffled pass cut into fixed-size batches
            return f"shuffles the data into fixed-size batches (`{name}(shuffle=True, batch_size=…)`)"
        elif name == "get_train_dataloader" and isinstance(node.func, cst.Attribute) \
                and isinstance(node.func.value, cst.Name) and node.func.value.value == "self":
            # (h42-1) a Hugging Face trainer subclass keeping the default loader: ``RandomSampler`` cut into
            # ``per_device_train_batch_size`` batches
            cls = self._enclosing_class_tree(node)
            if cls is not None and _hf_default_loader(self.ctx.path, self.ctx.python_tree(), cls):
                return ("takes the Hugging Face trainer's default training loader (`self.get_train_dataloader()`, "
                        "a `RandomSampler` cut into fixed-size batches)")
        elif name == "DataLoader":
            if self._evaluation_target(node) or _whole_dataset(node):
                return None
            shuffle = _keyword(node, "shuffle")
            if shuffle is not None and _true(shuffle.value) and _keyword(node, "sampler") is None \
                    and _keyword(node, "batch_sampler") is None:
                return "shuffles the data into fixed-size batches (`DataLoader(shuffle=True)`)"
            order = self._ordering_sampler(_keyword(node, "sampler"))
            if order is not None and _keyword(node, "batch_size") is not None \
                    and number(_keyword(node, "batch_size").value) is None:
                # (g39-2) ``sampler=DistributedSampler(ds)`` / ``RandomSampler(ds)``: the sampler only orders the
                # records (a permutation, or the given order); the loader cuts that order into fixed-size batches
                return f"cuts the order of `{order}` into fixed-size batches (`DataLoader(sampler={order}(…), " \
                       "batch_size=…)`)"
            size = _keyword(node, "batch_size")
            # a literal batch size is a feature-extraction / pre-computation pass, not the training batch
            if (shuffle is None or not _true(shuffle.value)) and _keyword(node, "sampler") is None \
                    and _keyword(node, "batch_sampler") is None and size is not None and number(size.value) is None \
                    and not self._sampler_in_scope(node) \
                    and (self._training_named(node, node.args[0].value if node.args else None)
                         or self._counted_by_accountant(node.args[0].value if node.args else None)):
                return "walks the same consecutive fixed-size batches every epoch (an unshuffled `DataLoader`)"
        elif name == "batch" and isinstance(node.func, cst.Attribute):
            inner = node.func.value
            while isinstance(inner, cst.Call) and call_name(inner) in ("repeat", "prefetch", "cache"):
                inner = inner.func.value if isinstance(inner.func, cst.Attribute) else inner
            if isinstance(inner, cst.Call) and call_name(inner) == "shuffle":
                return "shuffles the data into fixed-size batches (`shuffle(...).batch(...)`)"
            if isinstance(inner, cst.Name) and self._training_named(node, inner):
                if self._shuffled_before(inner):
                    # (h46-2) ``ds = ds.shuffle(n)`` in an earlier statement, then ``ds.batch(b)``: the same
                    # shuffled fixed-size batches as the chained spelling
                    return "shuffles the data into fixed-size batches (`ds.shuffle(...)`, then `ds.batch(...)`)"
                return "iterates consecutive fixed-size batches (`.batch(...)` of an unshuffled training dataset)"
        elif words(name) & {"shuffle", "shuffled", "shuffling"} and words(name) & {"sampler", "loader", "dataloader"} \
                and not words(name) & _HELD_OUT_WORDS and not self._evaluation_target(node):
            # (h46-2) a project's sampler named for shuffling (``ShuffledAuthorSampler(…, batch_size=…)``): a
            # shuffled pass cut into fixed-size batches, not a Poisson sample
            return f"shuffles the units into fixed-size batches (`{name}`)"
        elif name == "fit" and _keyword(node, "batch_size") is not None and _keyword(node, "epochs") is not None:
            shuffle = _keyword(node, "shuffle")
            if shuffle is None or _true(shuffle.value):
                return "trains on fixed-size shuffled batches (Keras `fit(batch_size=…)`)"
        return None

    def _report_rates(self, fa, first: tuple[cst.CSTNode, str] | None = None) -> None:  # noqa: ANN001 - FileAnalysis
        """The claim's side: the sampling rate handed to the accountant (or ``q = batch / n``)."""
        source, kind = first or self._sources[0]
        sites = [r for call in self._accounted if (r := _rate_argument(call)) is not None]
        sites += [call for call in self._accounted if _rate_argument(call) is None
                  and (_IMPLIED_RATE.match(call_name(call)) or _helper_rate(call, call_name(call))
                       or call_name(call) in _BATCH_CHARGED)
                  and not _engine_rate(call, call_name(call))]
        # an accountant built with n is the site only when its charges happen in another module
        built = [call for call in self._accounted if _count_built(call, call_name(call))]
        if len(built) == len(self._accounted):
            sites += built
        # a project helper's or a constructed accountant's rate argument comes on top of ``q = batch / n``
        classic = [call for call in self._accounted if _rate_argument(call, helpers=False) is not None
                   or _IMPLIED_RATE.match(call_name(call)) or _helper_rate(call, call_name(call))]
        rates = self._rates
        if self._accounted and all(_rate_argument(call) is not None for call in self._accounted):
            # (h38-2) the accountants read their rate from elsewhere: a ``q = batch / n`` none of them is handed
            # (a student loader's batch fraction) is not the rate accounted
            read = {ident(n) for call in self._accounted for a in call.args for n in walk(a.value)
                    if isinstance(n, (cst.Name, cst.Attribute))}
            rates = [rate for rate in rates if ident(rate.targets[0].target) in read]
        sites += [rate.value for rate in rates] if not classic else []
        done: set[int] = set()
        # (h44b-2) an Opacus 0.x / private-transformers engine told the batch and the record count: its
        # ``sample_size=`` is where q = batch_size / sample_size is claimed
        for call in self._accounted:
            size = _keyword(call, "sample_size") or _keyword(call, "sample_rate")
            if not _engine_rate(call, call_name(call)) or size is None or id(size) in done:
                continue
            done.add(id(size))
            self.report(size, f"`PrivacyEngine(batch_size=…, {size.keyword.value}=…)` accounts every step as Poisson "
                              f"subsampling at q = batch_size / sample_size, but the batches come from line "
                              f"{fa.line_of(source)}, which {kind}: the ε it reports does not bound the training that "
                              "ran; use Poisson sampling (a `UniformWithReplacementSampler`/`DPDataLoader`) or "
                              "account the sampling actually used")
        for site in sites:
            what = f"this sampling rate `{fa.code(site).strip()}`" if not any(site is c for c in self._accounted) else \
                f"`{call_name(site)}` derives q = batch / n from its arguments and"
            done.add(id(site))
            self.report(
                site,
                f"{what} credits Poisson subsampling, but the batches "
                f"come from line {fa.line_of(source)}, which {kind}: the accountant's ε does not bound the "
                "training that ran",
            )
        for site in sites:
            for origin, how in self._rate_origins(site):
                if id(origin) in done:
                    continue
                done.add(id(origin))
                self.report(
                    origin,
                    f"this rate `{fa.code(origin).strip()}` {how} as the Poisson sampling probability, but the "
                    f"batches come from line {fa.line_of(source)}, which {kind}: the ε computed from it does not "
                    "bound the training that ran",
                )

    def _rate_origins(self, site: cst.CSTNode) -> list[tuple[cst.CSTNode, str]]:
        """(g39-2) Where the rate handed to the accountant is worked out: ``q = batch / n`` assigned once to the
        name passed (``sample_rate=sample_rate``), or, when the accountant sits in a helper and the rate is the
        helper's parameter (``def compute_epsilon(steps, q)``), the argument each call in this module passes
        (``compute_epsilon(steps, batch_size / n)``). The place a reader fixes is the rate, not only its use."""
        fa = self.ctx.analysis
        if not isinstance(site, cst.Name):
            return []
        fn = fa.enclosing_function(site)
        if fn is not None and site.value in param_names(fn):
            params = param_names(fn)
            out: list[tuple[cst.CSTNode, str]] = []
            for call in walk(self.ctx.module):
                if not isinstance(call, cst.Call) or fa.callee(call) is not fn:
                    continue
                positional = [a for a in call.args if a.keyword is None]
                if any(a.star for a in call.args):
                    continue
                index = params.index(site.value) - (1 if params and params[0] in ("self", "cls") and
                                                    isinstance(call.func, cst.Attribute) else 0)
                arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == site.value), None)
                if arg is None and 0 <= index < len(positional):
                    arg = positional[index]
                if arg is not None and self._divided(arg.value):
                    out.append((arg.value, f"is what `{fn.name.value}` hands its accountant (line "
                                           f"{fa.line_of(site)})"))
                elif arg is not None and isinstance(arg.value, cst.Name):
                    # (h44-2) ``q = batch / N`` named first, then passed: ``helper(sample_rate=q)``
                    value = fa.value_of(arg.value)
                    if value is not None and self._divided(value):
                        out.append((value, f"is what `{fn.name.value}` hands its accountant (line "
                                           f"{fa.line_of(site)}), through `{arg.value.value}`"))
            return out
        value = fa.value_of(site)
        if value is not None and self._divided(value):
            return [(value, f"is handed to the accountant on line {fa.line_of(site)}")]
        return []

    @staticmethod
    def _divided(expr: cst.BaseExpression) -> bool:
        """``batch / n``, ``float(b) / len(X)``: a ratio worked out in code (not a literal, not a bare name)."""
        expr = _unwrap(expr)
        return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide) \
            and number(expr) is None

    #: torch samplers that yield every index once per pass, in a (shuffled) order: batches cut from them are fixed
    _ORDERING_SAMPLERS = frozenset({"DistributedSampler", "SequentialSampler", "SubsetRandomSampler"})

    def _ordering_sampler(self, arg: cst.Arg | None) -> str | None:
        """(g39-2) ``sampler=DistributedSampler(train_data)`` (or a name assigned one in the same scope): the name of
        a sampler that permutes (or keeps) the records' order, never a Poisson draw."""
        if arg is None:
            return None
        value = arg.value
        if isinstance(value, cst.Name):
            value = self.ctx.analysis.value_of(value) or value
        if isinstance(value, cst.Call) and call_name(value).split(".")[-1] in self._ORDERING_SAMPLERS:
            return call_name(value).split(".")[-1]
        return None

    def _sigma_search(self, node: cst.Call) -> bool:
        """An accountant call inside a σ-calibration helper: the rate is the helper's own parameter (the caller
        decides it) and a loop searches σ (``cur_sigma -= interval``); nothing here draws batches."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        rate = _rate_argument(node)
        if fn is None or not isinstance(rate, cst.Name) or rate.value not in param_names(fn):
            return False
        if any(isinstance(n, cst.Call) and self._batch_source(n, call_name(n)) for n in walk(fn, into_scopes=False)):
            return False
        statement = fa.enclosing_statement(node)
        trains = any(isinstance(n, (cst.For, cst.While)) or isinstance(n, cst.Call) and call_name(n) in
                     ("choice", "sample", "permutation", "randperm", "shuffle", "randint", "DataLoader", "fit")
                     for n in walk(fn, into_scopes=False))
        if not trains and isinstance(statement, cst.Assign) and any(
                words(ident(e.value) or "") & {"sigma", "noise", "multiplier", "std"}
                for t in statement.targets
                for e in (t.target.elements if isinstance(t.target, cst.Tuple) else [cst.Element(t.target)])):
            return True  # ``cur_sigma, _ = loop_for_sigma(q, …)``: a σ calibration handed the caller's rate (no loop,
            # no draw here: the caller samples)
        for loop in walk(fn, into_scopes=False):
            if isinstance(loop, (cst.For, cst.While)) and fa.inside(node, loop):
                for sub in walk(loop, into_scopes=False):
                    if isinstance(sub, (cst.AugAssign, cst.Assign)):
                        targets = [sub.target] if isinstance(sub, cst.AugAssign) else [t.target for t in sub.targets]
                        if any(words(ident(t) or "") & {"sigma", "noise", "multiplier", "std"} for t in targets):
                            return True
        return False

    def _training_named(self, node: cst.Call, data: cst.BaseExpression | None) -> bool:
        """The call's target or its data argument is named for training data (``train_loader``, ``train_ds``)."""
        names = [ident(data) or ""] if data is not None else []
        parent = self.ctx.analysis.parent(node)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            names.append(ident(parent.targets[0].target) or "")
        held_out = {"test", "val", "valid", "validation", "eval", "evaluation", "holdout", "public"}
        return any(words(n) & {"train", "training"} for n in names) and not any(words(n) & held_out for n in names)

    @staticmethod
    def _held_out_call(node: cst.Call) -> bool:
        """``mnist_public.train.next_batch(b)``, ``inputs(eval_data=True, …)``, ``inputs(train=False)``: public or
        evaluation data, not the private training batches."""
        held_out = {"test", "val", "valid", "validation", "eval", "evaluation", "holdout", "public", "pub"}
        if isinstance(node.func, cst.Attribute) and words(dotted(node.func.value) or "") & held_out:
            return True
        for arg in node.args:
            if arg.keyword is None:
                continue
            if words(arg.keyword.value) & held_out and not (isinstance(arg.value, cst.Name)
                                                            and arg.value.value == "False"):
                return True
            if words(arg.keyword.value) & {"train", "training"} and isinstance(arg.value, cst.Name) \
                    and arg.value.value == "False":
                return True
        return False

    def _counted_by_accountant(self, data: cst.BaseExpression | None) -> bool:
        """``PrivacyEngine(…, sample_size=len(dataset))`` while the loader walks ``dataset``: the data the
        accountant's rate is taken over is this loader's."""
        name = ident(data) if data is not None else None
        if name is None:
            return False
        for call in walk(self.ctx.module):
            if not isinstance(call, cst.Call):
                continue
            callee = call_name(call)
            if not (_RATE_CALLS.match(callee) or _accountant_named(callee) or _accountant_helper(callee)):
                continue
            if any(isinstance(n, cst.Call) and call_name(n) == "len" and n.args and ident(n.args[0].value) == name
                   for a in call.args for n in walk(a.value)):
                return True
        return False

    def _training_named_target(self, node: cst.Call) -> bool:
        """``images_train, labels_train = distorted_inputs(…)``: assigned to names not held out."""
        parent = self.ctx.analysis.parent(node)
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1):
            return False
        target = parent.targets[0].target
        names = [ident(e.value) or "" for e in target.elements] if isinstance(target, cst.Tuple) else [ident(target) or ""]
        held_out = {"test", "val", "valid", "validation", "eval", "evaluation", "holdout", "public"}
        return not any(words(n) & held_out for n in names)

    def _sampler_in_scope(self, node: cst.Call) -> bool:
        """Another loader of the same function takes a ``sampler=``/``batch_sampler=``: that one trains."""
        scope = self.ctx.analysis.enclosing_function(node) or self.ctx.module
        return any(isinstance(sub, cst.Call) and sub is not node and call_name(sub) == "DataLoader"
                   and (_keyword(sub, "sampler") is not None or _keyword(sub, "batch_sampler") is not None)
                   for sub in walk(scope, into_scopes=False))

    def _shuffled_before(self, name: cst.Name) -> cst.Call | None:
        """``ds = ds.shuffle(…)`` (or any ``shuffle`` call on the name) in the same function: that call."""
        scope = self.ctx.analysis.enclosing_function(name) or self.ctx.module
        for sub in walk(scope, into_scopes=False):
            if isinstance(sub, cst.Call) and call_name(sub) in ("shuffle", "permutation") and (
                    isinstance(sub.func, cst.Attribute) and ident(sub.func.value) == name.value
                    or any(ident(a.value) == name.value for a in sub.args)):
                return sub
        return None

    def _evaluation_target(self, node: cst.Call) -> bool:
        """Assigned to a test/validation loader (``test_loader = DataLoader(...)``, also one loader per client in
        ``test_loaders = [DataLoader(...) for ...]``): not training."""
        parent = self.ctx.analysis.parent(node)
        while isinstance(parent, (cst.ListComp, cst.GeneratorExp, cst.List, cst.Tuple, cst.Element)):
            parent = self.ctx.analysis.parent(parent)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            name = ident(parent.targets[0].target) or ""
            if words(name) & {"test", "val", "valid", "validation", "eval", "evaluation", "holdout"}:
                return True
        # the records it batches are held out (``DataLoader(ValidDataset(…))``, ``DataLoader(test_set)``)
        source = _keyword(node, "dataset") or next((a for a in node.args if a.keyword is None), None)
        if source is None:
            return False
        held = ident(source.value) or (call_name(source.value) if isinstance(source.value, cst.Call) else "") or ""
        return bool(words(held) & {"test", "val", "valid", "validation", "eval", "evaluation", "holdout"})

    def _iterated_with_accountant(self, node: cst.Call) -> bool:
        """``for group in parts`` (``parts = node`` or the call itself), with a call handing a sampling rate to an
        accountant in the loop's body: each group of the partition is one accounted step."""
        fa = self.ctx.analysis
        parent = fa.parent(node)
        key = parent.targets[0].target.value if isinstance(parent, cst.Assign) and len(parent.targets) == 1 \
            and isinstance(parent.targets[0].target, cst.Name) else None
        scope = fa.enclosing_function(node) or self.ctx.module
        for loop in walk(scope):
            if not isinstance(loop, cst.For):
                continue
            if not (loop.iter is node or key is not None and isinstance(loop.iter, cst.Name) and loop.iter.value == key):
                continue
            if any(isinstance(c, cst.Call) and _rate_argument(c, helpers=False) is not None
                   and (_RATE_CALLS.match(call_name(c)) or _accountant_named(call_name(c)))
                   for c in walk(loop.body)):
                return True
        return False

    def _cut_into_batches(self, node: cst.Call) -> bool:
        """``ids = choice(n, size=(n, k))`` later read as ``ids[b * batch_size:(b + 1) * batch_size]`` in the same
        function: the with-replacement draw is cut into consecutive fixed-size batches."""
        fa = self.ctx.analysis
        parent = fa.parent(node)
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1
                and isinstance(parent.targets[0].target, cst.Name)):
            return False
        key = parent.targets[0].target.value
        scope = fa.enclosing_function(node) or self.ctx.module
        for sub in walk(scope):
            if isinstance(sub, cst.Subscript) and isinstance(sub.value, cst.Name) and sub.value.value == key \
                    and sub.slice and isinstance(sub.slice[0].slice, cst.Slice):
                bounds = [b for b in (sub.slice[0].slice.lower, sub.slice[0].slice.upper) if b is not None]
                if any(isinstance(n, (cst.Name, cst.Attribute)) and _batch_named(n) for b in bounds for n in walk(b)):
                    return True
        return False

    def _batch_target(self, node: cst.Call) -> bool:
        parent = self.ctx.analysis.parent(node)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            return _batch_named(parent.targets[0].target)
        return False

    def leave_Module(self, original_node: cst.Module) -> None:
        # (g39-2) an accountant (or a ``q = batch / n``) inside a function the script only calls in a comment claims
        # no ε: the batches drawn elsewhere are not measured against it
        dead = commented_out_functions(original_node, self.ctx.source)
        if dead:
            top = {id(s) for s in original_node.body if isinstance(s, cst.FunctionDef) and s.name.value in dead}
            fa = self.ctx.analysis
            self._accounted = [c for c in self._accounted if not any(id(a) in top for a in fa.ancestors(c))]
            self._rates = [r for r in self._rates if not any(id(a) in top for a in fa.ancestors(r))]
        # (h64-q2) ``compute_noise(n=n, batch_size=n, epochs=1)``: the batch is the whole data set, q = 1, so this
        # call credits no subsampling (another call in the file may still do)
        self._accounted = [c for c in self._accounted if not _whole_batch_call(c, self.ctx.analysis.code)]
        # (B77 IF_DP) ``log_privacy_guarantee_summary(args, sample_rate=q, …)``: a function of this module that only
        # writes q and the other ingredients to the log calls no accountant; the accounting is elsewhere
        logging_only = _logging_only_functions(original_node)
        if logging_only:
            self._accounted = [c for c in self._accounted if call_name(c) not in logging_only]
        # (h66-q2) a ``q = batch / n`` inside a module-level function the file never calls, beside a sibling
        # rate that is used: that one computes the ε reported, the uncalled one reports nothing
        fa = self.ctx.analysis
        uncalled = _uncalled_functions(original_node)
        live = [r for r in self._rates if not any(id(a) in uncalled for a in fa.ancestors(r))]
        if live and len(live) < len(self._rates):
            self._rates = live
        if self._epsilon_read or self._engine_kept:
            for off in self._poisson_off:
                self.report(off, "`poisson_sampling=False`: Opacus then iterates fixed shuffled batches, but its "
                                 "accountant still assumes each record is sampled with probability q (Poisson), so "
                                 "the ε read from it here does not bound this training; keep Poisson sampling on")
            for off in self._poisson_optional:
                self.report(off, f"`poisson_sampling={self.ctx.analysis.code(off.value).strip()}`: a command-line "
                                 "switch turns Poisson sampling off (Opacus then iterates fixed shuffled batches), "
                                 "but the ε read here is still the Poisson-subsampled one; refuse to run without "
                                 "Poisson sampling or account the fixed-size batches")
        fa = self.ctx.analysis
        for node, kind in self._self_claimed:
            if self._non_private_path(node):
                continue
            self.report(node, f"this {kind}; an accountant's subsampled ε (rate q) does not bound this training; "
                              "keep each record independently with probability q (Poisson sampling)")
        self._report_init_draws(fa)
        self._report_batches(fa)
        self._report_importer_rate(fa)
        self._report_trainer_loader_rate(fa)
        self._report_rate_sized(fa)
        for rate, branch in self._fixed_branch_rates:
            part = branch.body if fa.inside(rate, branch.body) else branch.orelse
            if any(isinstance(n, (cst.Return, cst.Raise)) for n in walk(part, into_scopes=False)):
                continue  # the branch leaves before the accountant outside it
            name = ident(rate.targets[0].target)
            accounted = [c for c in self._accounted if not fa.inside(c, branch) and any(
                isinstance(n, (cst.Name, cst.Attribute)) and ident(n) == name for a in c.args for n in walk(a.value))]
            if not accounted:
                continue
            self.report(rate, f"with Poisson sampling off, this rate still goes to `{call_name(accounted[0])}` "
                              f"(line {fa.line_of(accounted[0])}), outside the `if`, which accounts it as Poisson "
                              "subsampling: the caller's fixed-size batches are not sampled that way, so the ε "
                              "reported does not bound the training; account sampling without replacement or "
                              "refuse to run without Poisson sampling")
        binomial = {id(node) for node, kind in self._self_claimed if "binomial" in kind}
        self.reports[:] = [r for r in self.reports if id(r.node) in binomial or fa.in_dp_context(r.node)]
        self.reports[:] = outside_dead_functions(self.reports, original_node, self.ctx.source, fa.ancestors)

    def _report_batches(self, fa) -> None:  # noqa: ANN001 - FileAnalysis
        if self._poisson_selection is not None:
            return  # the units are Poisson-sampled here; shuffled batches are each unit's local loop
        scopes = {fa.enclosing_function(call) for call in self._accounted}
        self._sources += [(n, k) for n, k in self._without_replacement
                          if fa.enclosing_function(n) in scopes or None in scopes or self._calls_into(n, scopes)
                          or self._called_from(n, scopes)]
        cohort_scopes = {fa.enclosing_function(call) for call in self._accounted if self._cohort_rate(call)}
        sized = [(n, k) for n, k in self._cohort_draws if self._sized_by_rate(n)]
        if sized or self._accounted and all(self._cohort_rate(call) for call in self._accounted):
            # the accounted rate sizes this draw (``choice(N, int(q * N), replace=False)``): the accountant speaks
            # for the draw of units, not for each unit's local loader
            # (likewise when every accounted rate is a fraction of clients, ``K / N``)
            self._sources = [(n, k) for n, k in self._sources if "DataLoader" not in k and "fit(" not in k
                             and "loader" not in k]
        self._sources += [(n, k) for n, k in self._cohort_draws
                          if fa.enclosing_function(n) in cohort_scopes or None in cohort_scopes
                          or any(n is m for m, _ in sized)]
        if self._accounted and not self._rates and all(self._passthrough_rate(c) for c in self._accounted):
            # (h45-QE) every accountant here is a helper handed its rate by the caller (``def eps(sigma,
            # sample_rate, steps): acct.step(sample_rate=sample_rate)``): the caller picks q (1.0 for client-level
            # DP, or its own batches' fraction), so only batches drawn on a path that runs the helper are its own
            scopes = {fa.enclosing_function(call) for call in self._accounted}
            self._sources = [(n, k) for n, k in self._sources
                             if self._runs_helpers(n, scopes)]
        if not (self._accounted or self._rates) or not self._sources:
            return
        if nonrelease.full_batch(self.ctx.module, self._accounted):
            return  # (g37-4) ``batch_size = N`` with N the accountant's record count: q = 1, nothing amplified
        if self._accounted:
            accountant = self._accounted[0]
            where = f"`{call_name(accountant)}` on line {fa.line_of(accountant)} is given a sampling rate that"
        else:
            where = f"the sampling rate on line {fa.line_of(self._rates[0])} (batch / n)"
        reported = False
        rate_scopes = {fa.enclosing_function(rate) for rate in self._rates}
        hooked = self._hooked_optimizers()
        first: tuple[cst.CSTNode, str] | None = None
        for node, kind in self._sources:
            if hooked and not self._steps_one_of(node, hooked):
                continue  # the accountant counts the steps of one optimizer; this function never steps it
            if self._poisson_loader and "DataLoader" in kind and not self._own_engine(node):
                continue
            if "DataLoader" in kind and self._poisson_rewrapped(node):
                continue
            if self._non_private_path(node):
                continue
            if self._per_epoch_bound and "shuffle" in kind:
                continue  # the ε claimed is the bound for each record once per epoch, which shuffled batches meet
            if not self._accounted and fa.enclosing_function(node) not in rate_scopes and None not in rate_scopes \
                    and not self._called_accounting_helper(rate_scopes):
                continue  # a bare ``q = batch / n`` speaks only for the code around it (a script's top level: all of it)
            fn = fa.enclosing_function(node)
            if fn is not None and words(fn.name.value) & {"calibration", "calib", "public", "pretrain", "pretraining"}:
                # (B77 IF_DP) a loader a function builds for calibration or public data (``build_calibration_loader``)
                # is not the private training loader: the rates are still reported (the private loader is built the
                # same way elsewhere), this loader is not
                reported = True
                first = first or (node, kind)
                continue
            self.report(
                node,
                f"this {kind}, but {where} assumes Poisson subsampling (each "
                "record in each batch independently with probability q): the amplification it credits did not "
                "happen and the ε reported does not bound this training; sample batches by Poisson sampling or "
                "account the sampling actually used",
            )
            reported = True
            first = first or (node, kind)
        if reported:
            self._report_rates(fa, first)

    def _report_importer_rate(self, fa) -> None:  # noqa: ANN001 - FileAnalysis
        """(h45-QE) A module of DP-SGD steps (``DPOptimizer(noise_multiplier=σ)``) with no accountant of its own,
        walking fixed-size batches, while the project module that imports it calibrates σ (or reports ε) with an
        accountant given the Poisson rate ``q = batch_size / n``: the amplification credited there never happens here."""
        if self._accounted or self._rates or not self._sources or self._poisson_loader:
            return
        if _OWN_POISSON.search(self.ctx.source) or not _DP_STEPS.search(self.ctx.source):
            return
        importer = _poisson_importer(self.ctx.path)
        if importer is None:
            return
        where, line = importer
        for node, kind in self._sources:
            if self._non_private_path(node) or not fa.in_dp_context(node):
                continue
            self.report(node, f"this {kind}, but `{where}` (line {line}), which imports this module, gives its "
                              "accountant the Poisson sampling rate q = batch_size / n (each record in each batch "
                              "independently with probability q): the amplification it credits did not happen here "
                              "and its σ / ε does not bound this training; sample batches by Poisson sampling or "
                              "account the sampling actually used")

    def _report_trainer_loader_rate(self, fa) -> None:  # noqa: ANN001 - FileAnalysis
        """(h45-QE) ``dl = self.trainer.datamodule.train_dataloader(); bs = getattr(dl, "batch_size", None);
        self.sample_rate = bs / len(dl.dataset)`` handed to ``accountant.step(sample_rate=…)``: the Lightning
        trainer's loader has a fixed ``batch_size`` (Opacus' Poisson loader has none, its batches come from a
        batch sampler), so the batches accounted as Poisson-sampled are fixed-size ones."""
        if _OWN_POISSON.search(self.ctx.source) or self._poisson_loader:
            return
        names: set[str] = set()
        for fn in walk(self.ctx.module):
            if not isinstance(fn, cst.FunctionDef):
                continue
            code = fa.code(fn)
            if not _TRAINER_LOADER.search(code) or not _LOADER_BATCH_SIZE.search(code):
                continue
            names |= {m.group(1) for m in _LOADER_RATE.finditer(code)}
        if not names:
            return
        for call in self._accounted:
            rate = _rate_argument(call, helpers=False)
            if rate is None or fa.code(_unwrap(rate)).strip() not in names:
                continue
            self.report(call, f"`{call_name(call)}` is given `{fa.code(_unwrap(rate)).strip()}` = batch_size / len(dataset) of "
                              "the trainer's own training loader as a Poisson sampling rate, but that loader has a "
                              "fixed `batch_size` (it is not Opacus' Poisson loader, whose batches come from a batch "
                              "sampler): the batches are shuffled fixed-size ones, the amplification credited did not "
                              "happen and the ε reported does not bound this training; sample batches by Poisson "
                              "sampling or account the sampling actually used")

    def _passthrough_rate(self, call: cst.Call) -> bool:
        """The rate ``call`` is given is a bare parameter of the function around it (``float(sample_rate)``)."""
        rate = _rate_argument(call)
        if rate is None:
            return False
        rate = _unwrap(rate)
        fn = self.ctx.analysis.enclosing_function(call)
        return isinstance(rate, cst.Name) and isinstance(fn, cst.FunctionDef) and rate.value in param_names(fn)

    def _runs_helpers(self, node: cst.CSTNode, scopes: set) -> bool:  # noqa: ANN001
        """The function around ``node`` (or one enclosing it) is an accounting helper or calls one by name."""
        fa = self.ctx.analysis
        names = {s.name.value for s in scopes if isinstance(s, cst.FunctionDef)}
        fns = [a for a in fa.ancestors(node) if isinstance(a, cst.FunctionDef)]
        if not fns:
            return True  # a script's top level: it runs whatever it calls
        for fn in fns:
            if fn in scopes or any(isinstance(n, cst.Call) and call_name(n) in names for n in walk(fn)):
                return True
        return False

    def _called_accounting_helper(self, scopes: set[cst.CSTNode | None]) -> bool:
        """A rate ``q = batch / len(loader.dataset)`` inside a function named for computing ε (``calculate_eps``,
        ``compute_privacy``) that this module calls: the function is the module's own accountant, so it speaks
        for the batches drawn wherever training runs here (its ε formula is worked out by hand)."""
        names = {fn.name.value for fn in scopes if isinstance(fn, cst.FunctionDef)
                 and _accountant_helper(fn.name.value) and not words(fn.name.value) & {"sigma", "noise"}}
        return bool(names) and any(isinstance(n, cst.Call) and call_name(n) in names for n in walk(self.ctx.module))

    def _hooked_optimizers(self) -> set[str]:
        """``self.dp_optimizer.attach_step_hook(accountant.get_optimizer_hook_fn(sample_rate=q))``: when every
        accounted call is such a hook, the optimizers it is attached to (only their steps are accounted)."""
        fa = self.ctx.analysis
        owners: set[str] = set()
        for call in self._accounted:
            owner = None
            for anc in fa.ancestors(call):
                if isinstance(anc, cst.Call) and call_name(anc) == "attach_step_hook" \
                        and isinstance(anc.func, cst.Attribute):
                    owner = dotted(anc.func.value)
                    break
                if isinstance(anc, cst.BaseSmallStatement):
                    break
            if owner is None:
                return set()
            owners.add(owner)
        return owners

    def _steps_one_of(self, node: cst.CSTNode, optimizers: set[str]) -> bool:
        """The function around ``node`` reads one of ``optimizers`` (``optim = self.dp_optimizer``)."""
        fn = self.ctx.analysis.enclosing_function(node)
        if fn is None:
            return True
        return any(isinstance(n, (cst.Attribute, cst.Name)) and dotted(n) in optimizers for n in walk(fn))

    def _called_from(self, node: cst.CSTNode, scopes: set) -> bool:  # noqa: ANN001
        """The function around ``node`` is called by one of ``scopes`` (``main`` runs the accountant and then
        ``prepare(...)``, which draws): the accountant speaks for the draws of the helper it runs."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if not isinstance(fn, cst.FunctionDef) or fa.enclosing_class(fn) is not None:
            return False
        name = fn.name.value
        return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value == name
                   for s in scopes if isinstance(s, cst.FunctionDef) for n in walk(s, into_scopes=False))

    def _calls_into(self, node: cst.CSTNode, scopes: set) -> bool:  # noqa: ANN001
        """The function around ``node`` calls one of ``scopes`` (``self.noise_from_epsilon(n)`` where that
        method runs the accountant): the draw and the accounting belong to one training procedure."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        names = {s.name.value for s in scopes if isinstance(s, cst.FunctionDef)}
        # a script's top level calling the ε helper is the training procedure too
        return bool(names) and any(isinstance(n, cst.Call) and call_name(n) in names
                                   for n in walk(fn if fn is not None else self.ctx.module, into_scopes=False))

    def _sized_by_rate(self, draw: cst.Call) -> bool:
        """The size of a fixed-size draw reads the rate an accountant is given (``int(sample_rate * N)``)."""
        fa = self.ctx.analysis
        if not isinstance(draw, cst.Call):
            return False
        size = self._choice_size(draw) if call_name(draw) == "choice" else (
            draw.args[1].value if len(draw.args) > 1 else None)
        if size is None:
            return False
        used = {fa.code(n).strip() for n in walk(size) if isinstance(n, (cst.Name, cst.Attribute))}
        for call in self._accounted:
            rate = _rate_argument(call)
            if rate is None:
                continue
            names = {fa.code(n).strip() for n in walk(rate) if isinstance(n, (cst.Name, cst.Attribute))}
            if any(words(n) - {"self", "args", "cfg", "config", "flags"} for n in names & used):
                return True
        return False

    def _cohort_rate(self, call: cst.Call) -> bool:
        """The rate given to ``call`` is a fraction of clients (``CLIENT_FRACTION``, ``k / num_users``)."""
        rate = _rate_argument(call)
        if rate is None:
            return False
        return self._cohort_valued(rate, hops=2)

    def _cohort_valued(self, expr: cst.BaseExpression, hops: int) -> bool:
        """``expr`` reads a client count: a cohort-named name, a name assigned one (``q = K / N`` with
        ``K = cfg['clients_per_round']``, followed ``hops`` assignments back), or a cohort-named config key."""
        fa = self.ctx.analysis
        for node in walk(expr):
            if isinstance(node, (cst.Name, cst.Attribute)) and _cohort_named(node):
                return True
            if isinstance(node, cst.SimpleString) and words(node.value.strip("'\"")) & _COHORT_WORDS \
                    and not words(node.value.strip("'\"")) & {"test", "eval", "val"}:
                return True
            if hops > 0 and isinstance(node, cst.Name) and (value := fa.value_of(node)) is not None \
                    and self._cohort_valued(value, hops - 1):
                return True
        return False

    def _non_private_path(self, node: cst.CSTNode) -> bool:
        """The batch source serves the non-DP baseline: it lies under ``if not dp:`` (``if not args.use_dp``,
        ``if dp is False``), in the ``else`` of ``if dp:``, or in a function named ``…_without_dp…``/``no_dp``."""
        fa = self.ctx.analysis
        stem = words(re.sub(r"\W+", "_", self.ctx.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]))
        if stem & {"without", "no", "non"} and stem & {"noise", "dp", "privacy", "private"}:
            return True  # a script named as the non-private baseline (``…_without_noise.py``)
        fn = fa.enclosing_function(node)
        if fn is not None:
            name = words(fn.name.value)
            if "dp" in name and name & {"without", "no", "non", "nodp", "baseline", "plain"} \
                    or name & {"nodp", "nondp", "nonprivate", "nonprivate"}:
                return True
            # ``train_baseline``, ``_standard_train``: a baseline that names no privacy, noise or accountant anywhere
            # in its body
            if name & {"baseline", "vanilla", "standard"} and not any(
                    isinstance(n, cst.Name) and words(n.value) & _PRIVATE_WORDS for n in walk(fn)):
                return True
        child: cst.CSTNode = node
        for anc in fa.ancestors(node):
            if isinstance(anc, cst.If):
                dp_test = [n for n in walk(anc.test) if isinstance(n, (cst.Name, cst.Attribute))
                           and words(ident(n) or "") & {"dp", "private", "privacy", "differential"}]
                negated = isinstance(anc.test, cst.UnaryOperation) and isinstance(anc.test.operator, cst.Not) or \
                    isinstance(anc.test, cst.Comparison) and any(
                        isinstance(c.comparator, cst.Name) and c.comparator.value == "False" for c in anc.test.comparisons)
                if dp_test and (negated and fa.inside(node, anc.body) or not negated and anc.orelse is not None
                                and fa.inside(node, anc.orelse)):
                    return True
            if isinstance(anc, cst.FunctionDef):
                break
            child = anc
        return False

    def _poisson_rewrapped(self, loader: cst.CSTNode) -> bool:
        """``loader = DataLoader(…, shuffle=True)`` then ``DPDataLoader.from_data_loader(loader)`` (or a
        ``to_poisson(loader)`` helper) in the same function: the shuffled loader only hands its dataset and batch
        size to a Poisson sampler, which draws the batches the accountant speaks for."""
        fa = self.ctx.analysis
        parent = fa.parent(loader)
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1
                and isinstance(parent.targets[0].target, cst.Name)):
            return False
        name = parent.targets[0].target.value
        scope = fa.enclosing_function(loader) or self.ctx.module
        for call in walk(scope):
            if not isinstance(call, cst.Call) or fa.line_of(call) < fa.line_of(loader):
                continue
            callee = call_name(call) or ""
            if callee not in ("from_data_loader", "DPDataLoader") and "poisson" not in words(callee):
                continue
            if any(isinstance(a.value, cst.Name) and a.value.value == name for a in call.args):
                return True
        return False

    def _own_engine(self, loader: cst.CSTNode) -> bool:
        """A loader in a function that accounts its own engine (``PrivacyEngine(sample_rate=…)``) and does
        not hand it to ``make_private``: another function's Poisson ``make_private`` does not cover it."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(loader)
        return fn is not None and fn not in self._poisson_scopes and any(
            fa.enclosing_function(call) is fn for call in self._accounted)

    def _report_init_draws(self, fa) -> None:  # noqa: ANN001 - FileAnalysis
        """A subsample drawn once in ``__init__`` and sized by the rate the module gives an accountant
        (``q=self.args.dp_sample``): the same records every round, where the accountant credits a fresh draw."""
        rates = {fa.code(a.value).strip(): call for call in walk(self.ctx.module) if isinstance(call, cst.Call)
                 for a in call.args if a.keyword is not None and a.keyword.value in _RATE_KEYWORDS
                 and isinstance(a.value, (cst.Name, cst.Attribute))}
        for draw in self._init_draws:
            used = {fa.code(n).strip() for n in walk(draw) if isinstance(n, (cst.Name, cst.Attribute))}
            account = next((rates[r] for r in rates if r in used and words(r) - {"self", "args"}), None)
            if account is None:
                continue
            self.report(draw, f"this subsample is drawn once, when the object is built, and reused every round, but "
                              f"`{call_name(account)}` on line {fa.line_of(account)} is given the same rate as a "
                              "per-step sampling probability: the accountant credits a fresh random sample each step "
                              "that never happens; draw the sample (Poisson, rate q) inside the training step")
