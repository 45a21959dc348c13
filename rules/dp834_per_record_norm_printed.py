"""DP834: inside a DP training loop, the exact norm of one record's gradient (the value the clip compares)
is printed or logged."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, loop_targets, refs, target_names, walk, words
from dpcheck.rule import Rule

_DRAWS = frozenset({"normal", "normal_", "randn", "randn_like", "gauss", "standard_normal", "laplace", "Normal",
                    "Laplace", "gaussian", "normalvariate", "random_normal"})
#: calls that compute a norm (``np.linalg.norm``, ``g.norm()``, ``torch.sqrt(sum(g ** 2))``)
_NORM_CALLS = frozenset({"norm", "sqrt", "vector_norm", "global_norm", "l2_norm", "norm2"})
#: calls that report a value to a console, a log or a tracker
_REPORT = frozenset({"print", "info", "debug", "warning", "warn", "log", "add_scalar", "log_metrics", "write",
                     "set_postfix", "pprint", "echo"})
#: words of a loop over batches, epochs or clients (a norm there is not one record's)
_NOT_RECORD_ITER = frozenset({"loader", "dataloader", "batches", "epochs", "epoch", "rounds", "clients", "steps",
                              "iterations", "iters", "layers", "parameters", "params", "named"})
_NOT_RECORD_TARGET = frozenset({"epoch", "ep", "round", "rnd", "step", "batch", "it", "iter", "iteration", "layer",
                                "param", "p", "name", "client", "k", "t"})
#: words of a clip threshold the norm is compared with
_CLIP = frozenset({"c", "clip", "clipping", "bound", "threshold", "max", "cap", "thresh"})


def _norm_name(name: str) -> bool:
    return "norm" in name.lower().split(".")[-1]


def _norm_value(expr: cst.BaseExpression) -> bool:
    return any(isinstance(n, cst.Call) and call_name(n) in _NORM_CALLS for n in walk(expr))


def _record_loop(loop: cst.For) -> bool:
    targets = set()
    for t in loop_targets(loop):
        targets |= words(t)
    if targets & _NOT_RECORD_TARGET and not targets & {"i", "j", "x", "xi", "sample", "example", "record", "row"}:
        return False
    for n in walk(loop.iter):
        name = dotted(n) if isinstance(n, (cst.Name, cst.Attribute)) else None
        if name and words(name) & _NOT_RECORD_ITER:
            return False
        if isinstance(n, cst.Call) and call_name(n) in {"parameters", "named_parameters", "items", "keys"}:
            return False
    return True


def _clips_with(body: list[cst.CSTNode], name: str) -> bool:
    """``name`` is compared with a bound (``if norm > c``) or divides / is divided by one (``c / norm``,
    ``max(1, norm / C)``)."""
    for n in body:
        if isinstance(n, cst.Comparison):
            sides = [n.left, *(c.comparator for c in n.comparisons)]
            names = [refs(s) for s in sides]
            if any(name in r for r in names) and any(
                    name not in r and any(words(x) & _CLIP for x in r) or isinstance(s, (cst.Integer, cst.Float))
                    for r, s in zip(names, sides)):
                return True
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide):
            left, right = refs(n.left), refs(n.right)
            if name in right and any(words(x) & _CLIP for x in left if x != name):
                return True
            if name in left and any(words(x) & _CLIP for x in right if x != name):
                return True
    return False


class PerRecordNormPrinted(Rule):
    id = "DP834"
    name = "per-record-norm-printed"
    category = "general"
    severity = "error"
    summary = "the exact gradient norm of each record is printed or logged inside the DP training loop"
    rationale = (
        "DP-SGD protects each record by clipping its gradient and adding noise to the clipped sum; only the "
        "noisy sum may leave the loop. A `print(norm)` or `logger.info(norm)` of the per-record gradient "
        "norm that the clip compares (`norm = sqrt(gx**2 + gb**2); print(norm); if norm > c: ...`) writes an "
        "exact function of every single record to the console or the log at every step, outside the "
        "mechanism and outside the accountant: with the model published, the log reveals the records' "
        "residuals. Reported: in a loop over records (not over batches, epochs, clients or parameters), a "
        "name bound from a norm computation, used by the clipping (compared with or divided by a bound), "
        "and handed to a print or log call in the same loop, in a file that draws noise. Not reported: "
        "norms of the noisy sum, averages printed after the loop, debugging outside a noise-adding file. "
        "Fix: drop the print, or log only privatised statistics (a noisy clipped fraction)."
    )
    TRIGGERS = ("norm",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a noise draw, a norm computation, a print/log call and a loop."""
        return (facts.calls_any(_DRAWS) and facts.calls_any(_NORM_CALLS) and facts.calls_any(_REPORT)
                and bool(facts.nodes(ast.For)))

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._seen: set[int] = set()

    def visit_For(self, node: cst.For) -> None:
        if not _record_loop(node):
            return
        body = list(walk(node.body, into_scopes=False))
        norms: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Assign) and _norm_value(sub.value):
                for t in sub.targets:
                    norms |= {n for n in target_names(t.target) if _norm_name(n)}
        norms = {n for n in norms if _clips_with(body, n)}
        if not norms:
            return
        for sub in body:
            if not (isinstance(sub, cst.Call) and call_name(sub) in _REPORT):
                continue
            if call_name(sub) in {"write", "log"} and not (dotted(sub.func) or "").split(".")[0] in {
                    "logger", "logging", "log", "writer", "wandb", "mlflow", "self", "sys", "f", "fout", "file"}:
                continue
            read: set[str] = set()
            for a in sub.args:
                read |= refs(a.value)
            hit = read & norms
            if hit and id(sub) not in self._seen:
                self._seen.add(id(sub))
                self.report(sub, f"`{sorted(hit)[0]}` is the exact gradient norm of one record, the value the "
                                 "clip compares; printing or logging it inside the training loop releases a "
                                 "function of each record outside the noise and the accountant")

    VALID = (
        # twin: only the clipped gradient enters the noisy sum; nothing per-record is printed
        """
import random, math
def dp_step(data, m, b, c, sigma):
    gm, gb = 0.0, 0.0
    for i in range(len(data)):
        x, y = data[i]
        dm, db = -2 * x * (y - m * x - b), -2 * (y - m * x - b)
        g_norm = math.sqrt(dm ** 2 + db ** 2)
        factor = min(1.0, c / g_norm)
        gm += dm * factor
        gb += db * factor
    return gm + random.gauss(0, sigma * c), gb + random.gauss(0, sigma * c)
""",
        # twin: the norm of the noisy batch gradient is logged once per batch
        """
import torch, logging
def dp_step(model, batch, clip, sigma):
    summed = [torch.zeros_like(p) for p in model.parameters()]
    for x, y in zip(*batch):
        grads = per_sample_grad(model, x, y)
        total_norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
        scale = min(1.0, clip / (total_norm + 1e-6))
        for s, g in zip(summed, grads):
            s.add_(g * scale)
    noisy = [s + torch.normal(0, sigma * clip, s.shape) for s in summed]
    logging.info("noisy norm %f", torch.sqrt(sum((n ** 2).sum() for n in noisy)))
    return noisy
""",
        # ordinary ML: gradient-norm logging per batch with plain clipping, no noise
        """
import torch
def train(model, loader, opt):
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        print("grad norm", grad_norm)
        opt.step()
""",
        # ordinary ML: per-example norms printed in a loop that draws augmentation noise, no clipping
        """
import numpy as np
def augment(rows):
    out = []
    for row in rows:
        n = np.linalg.norm(row)
        print("row norm", n)
        out.append(row / n + np.random.normal(0, 0.01, row.shape))
    return out
""",
        # twin of the tracker case: the fraction of clipped records, computed after the loop, is not logged exact
        """
import numpy as np
def dp_epoch(X, w, C, sigma, tracker):
    total = np.zeros_like(w)
    for idx in range(X.shape[0]):
        g = X[idx] * (X[idx] @ w)
        gnorm = np.linalg.norm(g)
        total += g * min(1.0, C / gnorm)
    noisy = total + np.random.normal(0, sigma * C, w.shape)
    tracker.log({"noisy_norm": float(np.linalg.norm(noisy))})
    return noisy
""",
        # (T4 h48) per-client norms over the norm of the mean: a weighting statistic, no clip bound in sight
        """
import numpy as np
def client_dissimilarity(client_grads, n, sigma):
    mean = sum(client_grads) / n + np.random.normal(0, sigma, client_grads[0].shape)
    mean_norm = np.linalg.norm(mean)
    total = 0.0
    for i, g in enumerate(client_grads):
        g_norm = np.linalg.norm(g)
        print("client", i, g_norm)
        total += g_norm / mean_norm
    return total
""",
    )
    INVALID = (
        """
import random, math
def dp_step(data, m, b, c, sigma):
    gm, gb = 0.0, 0.0
    for i in range(len(data)):
        x, y = data[i]
        dm, db = -2 * x * (y - m * x - b), -2 * (y - m * x - b)
        g_norm = math.sqrt(dm ** 2 + db ** 2)
        print("norm of record", i, g_norm)  # <-
        factor = min(1.0, c / g_norm)
        gm += dm * factor
        gb += db * factor
    return gm + random.gauss(0, sigma * c), gb + random.gauss(0, sigma * c)
""",
        """
import torch, logging
logger = logging.getLogger(__name__)
def dp_step(model, batch, clip, sigma):
    summed = [torch.zeros_like(p) for p in model.parameters()]
    for x, y in zip(*batch):
        grads = per_sample_grad(model, x, y)
        total_norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
        logger.debug(f"sample grad norm {total_norm:.4f}")  # <-
        if total_norm > clip:
            grads = [g * clip / total_norm for g in grads]
        for s, g in zip(summed, grads):
            s.add_(g)
    return [s + torch.normal(0, sigma * clip, s.shape) for s in summed]
""",
        """
import numpy as np
def private_gradient(X, y, w, C, noise_multiplier):
    total = np.zeros_like(w)
    for xi, yi in zip(X, y):
        g = (xi @ w - yi) * xi
        norm = np.linalg.norm(g)
        print(norm)  # <-
        total += g / max(1.0, norm / C)
    return total + np.random.normal(0, noise_multiplier * C, w.shape)
""",
        """
import numpy as np
import wandb
def dp_epoch(X, w, C, sigma):
    total = np.zeros_like(w)
    for idx in range(X.shape[0]):
        g = X[idx] * (X[idx] @ w)
        gnorm = np.linalg.norm(g)
        wandb.log({"per_sample_norm": gnorm})  # <-
        total += g * min(1.0, C / gnorm)
    return total + np.random.normal(0, sigma * C, w.shape)
""",
    )
