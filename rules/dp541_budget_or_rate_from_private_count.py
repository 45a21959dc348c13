"""DP541: a privacy budget ε set to c/n, or a sampling rate set from one party's exact record count."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astfacts import last_name as ast_last_name
from dpcheck.analysis.clipping import ident
from dpcheck.analysis.recordcount import RecordCounts
from dpcheck.analysis.syntax import call_name, number, words
from dpcheck.rule import Rule

#: words of a name that hold an ε which is not a privacy budget (optimiser and numerical epsilons)
_NOT_BUDGET = frozenset({"tol", "tolerance", "adam", "bn", "ln", "norm", "layer", "smoothing", "label", "stability",
                         "numerical", "ratio", "scale", "intercept", "greedy", "explore", "exploration", "decay",
                         "clip", "margin", "huber", "kernel", "ball", "radius", "step", "lr"})
_RATE_KEYWORDS = frozenset({"sample_rate", "sampling_rate", "sampling_prob", "sampling_probability",
                            "sample_prob", "sample_probability", "sample_rates", "sampling_rates", "q"})


#: a class that is one party of a federation: its data's size is that party's private count
_PARTY_WORDS = frozenset({"client", "worker", "party", "silo", "participant", "learner"})
_EVAL_WORDS = frozenset({"test", "val", "valid", "validation", "eval", "evaluation", "public", "holdout", "dev"})


def _budget_target(name: str | None) -> bool:
    """``epsilon``, ``min_eps``, ``eps_0`` (not ``adam_eps``, ``eps_tol``, ``label_smoothing_eps``)."""
    if name is None:
        return False
    pieces = words(name)
    return bool(pieces & {"eps", "epsilon"}) and not pieces & _NOT_BUDGET


def _rate_target(name: str | None) -> bool:
    """``sample_rate``, ``self.sampling_rates``, ``client_sample_prob`` (a record or client sampling rate)."""
    if name is None:
        return False
    pieces = words(name)
    return bool(pieces & {"sample", "sampling"}) and bool(pieces & {"rate", "rates", "prob", "probability"})


def _constant(expr: cst.BaseExpression) -> bool:
    if number(expr) is not None:
        return True
    return isinstance(expr, cst.BinaryOperation) and _constant(expr.left) and _constant(expr.right)


def _reciprocal(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """``1.0 / n``, ``2 / (n - 1)``: the D a constant is divided by."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide) and _constant(value.left):
        return value.right
    return None


def _divisor(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """``B / D`` (any numerator), also inside ``min(1.0, B / D)``: the D."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide):
        return value.right
    if isinstance(value, cst.Call) and ident(value.func) in ("min", "float"):
        for arg in value.args:
            found = _divisor(arg.value)
            if found is not None:
                return found
    return None


def _ast_names(node: ast.AST) -> str | None:
    return ast_last_name(node)


class BudgetOrRateFromPrivateCount(Rule):
    id = "DP541"
    name = "budget-or-rate-from-private-count"
    category = "general"
    severity = "error"
    summary = ("a privacy budget ε = c/n, or a sampling rate from one party's exact record count "
               "(`sample_rate = B / min(len(d) for d in client_sets)`)")
    rationale = (
        "Under add/remove neighbouring the number of records n is private. Two parameters of a mechanism "
        "are read from it without being charged: (1) an ε (or the smallest ε of a grid of budgets, a "
        "per-round budget) set to `c / n` with n = `len(X)` of the data the mechanism then runs on — the "
        "noise scale, calibrated with that ε, changes when one person joins and so publishes n; (2) a "
        "record sampling rate computed from the exact record count of one party among several — the "
        "smallest client's dataset (`B / min(len(dl.dataset) for dl in loaders)`) or one silo's entry of a "
        "vector of per-silo sizes (`sizes[k]` of `sizes = np.asarray([len(x) for x in silos])`): the "
        "accountant's (and the calibrated σ's) input then depends on a party's private data size, which "
        "the federation never released. The count is followed through locals, comprehensions, `min`/`max` "
        "and attributes the class binds once (see `dpcheck.analysis.recordcount`). Not reported: a "
        "sampling rate from the size of the (single, central) training set (its n is conventionally "
        "treated as public), counts of held-out, public or synthetic sets, counts of loaders, configured "
        "sizes (`args.n`), and the optimiser/numerical epsilons (`adam_eps`, `eps_tol`, batch-norm eps). "
        "Fix: fix ε in advance; take the sampling rate from a public lower bound on the parties' sizes, or "
        "release the sizes with DP first."
    )
    TRIGGERS = ("eps", "EPS", "ampl", "sample_rate", "sampling_rate", "sample_prob", "sampling_prob")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A division assigned to an ε- or sampling-rate-named target or keyword."""
        for node in facts.nodes(ast.keyword):
            if node.arg in _RATE_KEYWORDS or _rate_target(node.arg) or _budget_target(node.arg):  # type: ignore[attr-defined]
                if any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.Div)
                       for b in ast.walk(node.value)):  # type: ignore[attr-defined]
                    return True
        for node in facts.nodes(ast.Assign):
            if any(_budget_target(_ast_names(t)) or _rate_target(_ast_names(t))
                   or isinstance(t, ast.Name) and t.id == "q" for t in node.targets) \
                    and any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.Div)  # type: ignore[attr-defined]
                            for b in ast.walk(node.value)):  # type: ignore[attr-defined]
                return True
        return False

    VALID = (
        # (h38-2) twin: the class's rate from a public lower bound on the class sizes; a batch cut from one row
        """
import numpy as np
def main(args, images_all, labels_all, num_classes, epsilon, min_class_size=4000):
    indices_class = [[] for c in range(num_classes)]
    for i, lab in enumerate(labels_all):
        indices_class[lab].append(i)
    def get_images(c, n):
        sample_rate = float(n) / float(min_class_size)
        keep = np.random.rand(len(indices_class[c])) < sample_rate
        return images_all[np.array(indices_class[c])[keep]]
    sigma = get_noise_multiplier(target_epsilon=epsilon, target_delta=1e-5, sample_rate=0.01)
    return get_images(0, args.group_size) + np.random.normal(0, sigma)
""",
        # ε fixed in advance, a grid from a configured bound on n, Adam's and batch norm's eps
        """
import numpy as np
import torch
def run(X, y, args, n_max=10 ** 6):
    n = len(X)
    min_eps = 1.0 / n_max
    epsilon = args.epsilon
    grid = np.linspace(min_eps, epsilon, 10)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-8)
    bn = torch.nn.BatchNorm1d(8, eps=1.0 / 1000)
    adam_eps = 1.0 / n
    label_smoothing_eps = 1.0 / len(classes)
    return laplace_mechanism(X.sum(), sensitivity=1.0, epsilon=epsilon), grid
""",
        # twins of the per-client rate: a public lower bound on the clients' sizes, a configured rate,
        # and the central training set's size (conventionally public)
        """
def setup(engine, loaders, BATCH_SIZE, MIN_CLIENT_SIZE, args, train_dataset):
    engine.prepare_feddp(sample_rate=BATCH_SIZE / MIN_CLIENT_SIZE, target_epsilon=args.epsilon)
    engine.prepare(sample_rate=args.sample_rate, target_epsilon=args.epsilon)
    sample_rate = BATCH_SIZE / len(train_dataset)
    return get_noise_multiplier(target_epsilon=args.epsilon, target_delta=1e-5, sample_rate=sample_rate)
""",
        # ordinary ML: the exploration epsilon of a bandit decays with the step, a Huber delta,
        # a kernel sigma, a loss margin epsilon
        """
import numpy as np
def policy(t, counts, rewards, sigma=1.0, huber_delta=1.0):
    explore_eps = 1.0 / (t + 1)
    eps_margin = 0.1
    kernel = np.exp(-np.sum(counts ** 2) / (2 * sigma ** 2))
    return explore_eps, eps_margin, kernel
""",
        # a sampling rate over the number of clients (a public set-up constant) and a per-class share
        """
def sample_clients(clients, num_sampled, epsilon, labels):
    client_sample_rate = num_sampled / len(clients)
    shares = [sum(labels == k) / len(labels) for k in range(10)]
    return get_noise_multiplier(target_epsilon=epsilon, target_delta=1e-5, sample_rate=client_sample_rate)
""",
        # a private estimate of the smallest client size (released with its own noise)
        """
import numpy as np
def rate(train_sets, batch_size, epsilon):
    noisy_min = min(len(d) for d in train_sets) + np.random.laplace(0, 1 / epsilon)
    bound = max(1.0, noisy_min)
    return get_noise_multiplier(target_epsilon=epsilon, target_delta=1e-5, sample_rate=batch_size / bound)
""",
        # (u39-2 twin: a public per-part bound)
        """
import numpy as np
def per_class_sigma(labels, batch_per_class, epsilon, delta, steps, c, min_class_size=500):
    n_c = np.sum(labels == c)
    q = batch_per_class / min_class_size
    keep = np.random.rand(n_c) < q
    return keep, get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=q, steps=steps)
""",
        # (u39-2 twin: a public per-part bound)
        """
import torch
def class_rates(targets: torch.Tensor, num_classes, batch_size, epsilon, public_class_size=5000):
    sigmas = []
    for k in range(num_classes):
        sample_rate = batch_size / public_class_size
        share = (targets == k).sum().item() / len(targets)
        sigmas.append((share, get_noise_multiplier(target_epsilon=epsilon, target_delta=1e-5, sample_rate=sample_rate, epochs=5)))
    return sigmas
""",
        # (u39-2 twin: a public per-part bound)
        """
def group_sampling_rates(groups, batch_size, sigma, steps, orders, delta, group_floor=1000):
    spent = {}
    for g, idx in groups.items():
        sampling_rate = batch_size / group_floor
        spent[g] = (len(idx), get_privacy_spent(orders, compute_rdp(sampling_rate, sigma, steps, orders), target_delta=delta))
    return spent
""",
        # (u39-2 twin: a public bound; the server's client rate)
        """
class Client:
    def __init__(self, idx, args, train_dataloader, test_dataloader, model):
        self.idx, self.args, self.model = idx, args, model
        self.eval_rate = 1. / len(test_dataloader)
        self.noise_multiplier = get_noise_multiplier(
            target_epsilon=args.epsilon, target_delta=args.delta,
            sample_rate=args.local_bs / args.min_client_size, epochs=args.local_ep)
""",
        # (u39-2 twin: a public bound; the server's client rate)
        """
class Server:
    def __init__(self, args, clients, train_set):
        self.clients = clients
        self.client_sample_rate = args.clients_per_round / len(self.clients)
        self.sample_rate = args.batch_size / len(train_set)
""",
    )
    INVALID = (
        # (h38-2) one class's exact record count sets that class's Poisson rate
        """
import numpy as np
def main(args, images_all, labels_all, num_classes, epsilon):
    indices_class = [[] for c in range(num_classes)]
    for i, lab in enumerate(labels_all):
        indices_class[lab].append(i)
    def get_images(c, n):
        num_samples = len(indices_class[c])
        sample_rate = float(n) / float(num_samples)  # <-
        keep = np.random.rand(num_samples) < sample_rate
        return images_all[np.array(indices_class[c])[keep]]
    sigma = get_noise_multiplier(target_epsilon=epsilon, target_delta=1e-5, sample_rate=0.01)
    return get_images(0, args.group_size) + np.random.normal(0, sigma)
""",
        # the smallest ε of a noise-reduction grid set from the exact record count
        """
import numpy as np
def run_ridge(X, Y, alpha, lamb):
    n = len(X)
    min_eps = 1.0 / n  # <-
    grid = np.geomspace(min_eps, 10.0, 20)
    return [output_perturbation(X, Y, lamb, epsilon=e) for e in grid]
""",
        # ε per record read off the data object's rows
        """
def release(table, sensitivity):
    epsilon = 2.0 / table.shape[0]  # <-
    return table.sum() + np.random.laplace(0, sensitivity / epsilon)
""",
        # the per-record sampling rate from the smallest client's exact dataset size (a keyword)
        """
def setup(engine, training_dls, BATCH_SIZE, CLIENT_RATE, TARGET_EPSILON):
    engine.prepare_feddp(
        num_steps=100,
        sample_rate=BATCH_SIZE / min([len(dl.dataset) for dl in training_dls]),  # <-
        client_rate=CLIENT_RATE,
        target_epsilon=TARGET_EPSILON,
    )
""",
        # the same through a local and a generator, with ``min`` spelled as a comprehension over silos
        """
def calibrate(silo_data, batch_size, epsilon, delta):
    smallest = min(x.shape[0] for x in silo_data)
    q = batch_size / smallest  # <-
    sample_rate = batch_size / smallest  # <-
    return get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=sample_rate)
""",
        # one silo's rate from the vector of per-silo sizes the trainer keeps
        """
import numpy as np
class Trainer:
    def __init__(self, x_train, batch_size, epsilon):
        self.train_samples = np.asarray([len(x) for x in x_train])
        self.batch_size = batch_size
        self.epsilon = epsilon
    def noise_for(self, t):
        sampling_rate = self.batch_size / self.train_samples[t]  # <-
        return get_noise_multiplier(target_epsilon=self.epsilon, target_delta=1e-5, sample_rate=sampling_rate)
""",
        # (u39-2 role: one class's or group's exact count sets its sampling rate)
        """
import numpy as np
def per_class_sigma(labels, batch_per_class, epsilon, delta, steps, c):
    n_c = np.sum(labels == c)
    q = batch_per_class / n_c  # <-
    return get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=q, steps=steps)
""",
        # (u39-2 role: one class's or group's exact count sets its sampling rate)
        """
import torch
def class_rates(targets: torch.Tensor, num_classes, batch_size, epsilon):
    sigmas = []
    for k in range(num_classes):
        count_k = (targets == k).sum().item()
        sample_rate = batch_size / count_k  # <-
        sigmas.append(get_noise_multiplier(target_epsilon=epsilon, target_delta=1e-5, sample_rate=sample_rate, epochs=5))
    return sigmas
""",
        # (u39-2 role: one class's or group's exact count sets its sampling rate)
        """
def group_sampling_rates(groups, batch_size, sigma, steps, orders, delta):
    spent = {}
    for g, idx in groups.items():
        sampling_rate = batch_size / len(idx)  # <-
        spent[g] = get_privacy_spent(orders, compute_rdp(sampling_rate, sigma, steps, orders), target_delta=delta)
    return spent
""",
        # (u39-2 from the misses: a federation party's own data size sets its rate)
        """
class Client:
    def __init__(self, idx, args, train_dataloader, test_dataloader, model):
        self.idx, self.args, self.model = idx, args, model
        self.noise_multiplier = get_noise_multiplier(
            target_epsilon=args.epsilon, target_delta=args.delta,
            sample_rate=1. / len(train_dataloader),  # <-
            epochs=args.local_ep)
""",
        # (u39-2 from the misses: a federation party's own data size sets its rate)
        """
import torch
class LocalUpdate:
    def __init__(self, args, dataset, idxs):
        self.args = args
        self.train_set = torch.utils.data.Subset(dataset, idxs)
    def calibrate(self):
        sample_rate = self.args.local_bs / len(self.train_set)  # <-
        return get_noise_multiplier(target_epsilon=self.args.epsilon, target_delta=1e-5, sample_rate=sample_rate,
                                    epochs=self.args.local_ep)
""",
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            name = ident(target.target)
            if _budget_target(name):
                self._budget(node.value)
                return
            if _rate_target(name) or isinstance(target.target, cst.Name) and target.target.value == "q":
                self._rate(node.value)
                return

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is None:
            return
        key = node.keyword.value
        if key in _RATE_KEYWORDS or _rate_target(key):
            self._rate(node.value)
        elif _budget_target(key):
            self._budget(node.value)

    def _budget(self, value: cst.BaseExpression) -> None:
        denominator = _reciprocal(value)
        if denominator is None:
            return
        size = RecordCounts(self.ctx.analysis).count(denominator)
        if size is None:
            return
        code = " ".join(self.ctx.analysis.code(value).split())[:80]
        self.report(value, f"the privacy budget `{code}` is computed from the private dataset's size ({size}): "
                           "under add/remove neighbouring n is private, so every noise scale calibrated with "
                           "this ε depends on (and reveals) whether one person is in the data; fix ε (and the "
                           "grid of budgets) in advance or from a public bound on n")

    def _party_count(self, denominator: cst.BaseExpression) -> str | None:
        """In a class that is one party of a federation (``class Client``, ``LocalUpdate``), the count of
        the training data the object holds: ``len(train_dataloader)`` (its batches: the rate 1/len is
        B/n), ``len(self.train_set)``, ``len(loader.dataset)`` — the party's own record count."""
        fa = self.ctx.analysis
        cls = fa.enclosing_class(denominator)
        if cls is None:
            return None
        pieces = {w.lower() for w in words(cls.name.value)}
        if not (pieces & _PARTY_WORDS or {"local", "update"} <= pieces):
            return None
        found = RecordCounts(fa).count(denominator)
        if found is not None:
            return f"{found}, the record count of the party `{cls.name.value}` holds"
        inner = denominator
        while isinstance(inner, cst.Call) and call_name(inner) in ("float", "int") and inner.args:
            inner = inner.args[0].value
        if not (isinstance(inner, cst.Call) and call_name(inner) == "len" and len(inner.args) == 1):
            return None
        name = ident(inner.args[0].value)
        if name is None:
            return None
        parts = {w.lower() for w in words(name)}
        if parts & _EVAL_WORDS or not parts & {"loader", "dataloader", "dataset", "data", "train", "trainset",
                                                "samples", "examples", "records", "idxs", "indices"}:
            return None
        return f"`{fa.code(inner).strip()}`, the size of the training data the party `{cls.name.value}` holds"

    def _rate(self, value: cst.BaseExpression) -> None:
        denominator = _divisor(value)
        if denominator is None:
            return
        size = RecordCounts(self.ctx.analysis).of_part(denominator) or self._party_count(denominator)
        if size is None:
            return
        code = " ".join(self.ctx.analysis.code(value).split())[:80]
        self.report(value, f"the sampling rate `{code}` is computed from one party's exact record count "
                           f"({size}): the accountant and the σ it calibrates then depend on a client's private "
                           "data size, which is released nowhere with noise; use a public lower bound on the "
                           "parties' sizes (or a DP estimate of it)")
