"""DP601: a DP federated client's ``fit`` returns its training metrics (loss, accuracy, gradient norms) computed on
its private data to the server beside the noised update, without noise."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, dotted, name_words, walk, words
from dpcheck.rule import Rule

#: a metric of the local training on the private records
_METRIC_WORDS = frozenset({"loss", "losses", "acc", "accuracy", "correct", "norm", "norms", "f1", "auc", "precision",
                           "recall", "mse", "mae", "rmse", "error", "perplexity", "metric", "metrics", "results",
                           "result", "leakage", "distortion", "score", "scores"})
#: what the client may report: its privacy accounting and configuration
_ACCOUNTING_WORDS = frozenset({"epsilon", "eps", "delta", "privacy", "budget", "sigma", "noise", "multiplier",
                               "spent", "rho", "round", "rounds", "cid", "id", "client", "lr", "epochs", "time",
                               "duration", "seconds"})


#: what a method that privatises its update reads: its noise, clip, sanitizer, engine or ε
_DP_UPDATE_WORDS = frozenset({"epsilon", "eps", "sigma", "noise", "noisy", "noised", "sanitize", "sanitized",
                              "sanitise", "sanitised", "laplace", "gaussian", "multiplier", "accountant", "engine",
                              "spent", "clip", "clipped", "clipping", "truncate", "ldp", "dp"})


#: names of a data loader or data set attribute
_DATA_WORDS = frozenset({"loader", "loaders", "dataloader", "data", "dataset", "ds", "batches", "iterator"})
#: names of a held-out split
_HELD_OUT_WORDS = frozenset({"test", "val", "valid", "validation", "eval", "holdout", "dev", "public"})


def _noised(expr: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Call) and (call_name(n) in PURE_DRAWS or words(call_name(n)) & {"noise", "noisy",
                                                                                                   "laplace", "gaussian",
                                                                                                   "privatize"})
               for n in walk(expr))


def _literal(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)) or \
        isinstance(expr, cst.Name) and expr.value in ("True", "False", "None")


def _raw_metric(key: cst.BaseExpression | None, value: cst.BaseExpression) -> bool:
    """A dict entry carrying a training metric without noise: its key or value speaks of a metric, it is
    not a literal, not privacy accounting, and no noise is drawn into it."""
    if _literal(value) or _noised(value):
        return False
    key_words = words(key.evaluated_value) if isinstance(key, cst.SimpleString) and isinstance(
        key.evaluated_value, str) else set()
    value_words = name_words(value)
    if (key_words | value_words) & _ACCOUNTING_WORDS and not key_words & _METRIC_WORDS:
        return False
    return bool((key_words | value_words) & _METRIC_WORDS)


class ClientFitMetricsRaw(Rule):
    id = "DP601"
    name = "client-fit-metrics-raw"
    category = "general"
    severity = "error"
    summary = ("a DP federated client's `fit` returns its training loss / accuracy / gradient norms to the server "
               "beside the noised update, without noise")
    rationale = (
        "In DP federated learning the update a client sends is clipped and noised so that the server learns "
        "little about any one of its records. A Flower-style `fit(self, parameters, config)` returns three things: "
        "the update, the example count and a metrics dict. Loss, accuracy, the number correct or the gradient "
        "norms measured on the client's private training data and put in that dict reach the server exactly: "
        "they are functions of the records that no mechanism covers (a loss or a norm can single out an outlier "
        "record) and that no accountant charges. Reported: the metrics element of `fit`'s returned triple when it "
        "holds such a value (a dict display, a dict the method builds, or the metrics of a wrapped client's "
        "`fit` passed on). Not reported: an empty dict, the client's ε or other accounting, literals and "
        "configuration, noised metrics, `evaluate` on a public or held-out split, a `fit` that neither noises, clips nor accounts for its "
        "update (no DP release to sit beside). Fix: return only the update "
        "(and public configuration), or noise the metrics and charge them to the budget."
    )
    TRIGGERS = ("def fit",)
    requires_dp_context = True

    VALID = (
        # twin of the training-loader evaluation: evaluate reads the held-out loader
        """
import torch
class DPClient:
    def fit(self, parameters, config):
        self.set(parameters)
        for x, y in self.train_loader:
            self.optimizer.step()
        return self.get(), len(self.train_loader.dataset), {"epsilon": self.engine.get_epsilon(1e-5)}
    def evaluate(self, parameters, config):
        self.set(parameters)
        correct = 0
        for x, y in self.val_loader:
            correct += (self.model(x).argmax(1) == y).sum().item()
        acc = correct / len(self.val_loader.dataset)
        return 1.0 - acc, len(self.val_loader.dataset), {"accuracy": acc}
""",
        # a learned obfuscation of the weights with no noise, clip or budget: no DP release to sit beside
        """
import torch
class ObfuscatingClient:
    def fit(self, parameters, config):
        loss, acc = self.train(parameters)
        encoded = self.encoder(torch.cat([p.flatten() for p in self.model.parameters()]))
        return [encoded.detach().numpy()], len(self.loader.dataset), {"loss": loss, "accuracy": acc}
""",
        # the client reports only its privacy accounting
        """
import numpy as np
class DPClient:
    def fit(self, parameters, config):
        update = self.train(parameters)
        noisy = [u + np.random.normal(0, self.sigma * self.clip, u.shape) for u in update]
        return noisy, self.num_examples, {"epsilon": self.accountant.get_epsilon(1e-5)}
""",
        # an empty metrics dict
        """
import numpy as np
class DPClient:
    def fit(self, parameters, config):
        loss = self.train(parameters)
        noisy = [p + np.random.normal(0, self.sigma, p.shape) for p in self.params()]
        return noisy, self.num_examples, {}
""",
        # the loss is noised before it is reported
        """
import numpy as np
class DPClient:
    def fit(self, parameters, config):
        loss = self.train(parameters)
        noisy = [p + np.random.normal(0, self.sigma, p.shape) for p in self.params()]
        return noisy, self.num_examples, {"loss": loss + np.random.laplace(0, 1 / self.eps_metrics)}
""",
        # a non-federated fit (an sklearn-style estimator) returning itself
        """
import numpy as np
class DPLogReg:
    def fit(self, X, y, epsilon=1.0):
        self.coef_ = self._solve(X, y) + np.random.laplace(0, 1 / epsilon, X.shape[1])
        return self
""",
        # ordinary ML: a Keras-style fit history from a non-DP module's client
        """
class Client:
    def fit(self, parameters, config):
        history = self.model.fit(self.x, self.y, epochs=1)
        return self.model.get_weights(), len(self.x), {"config_lr": 0.1, "round": config["round"]}
""",
    )
    INVALID = (
        # evaluate measures accuracy on the loader fit trains on and reports it to the server
        """
import torch
class DPClient:
    def fit(self, parameters, config):
        self.set(parameters)
        for x, y in self.loader:
            self.optimizer.step()
        return self.get(), len(self.loader.dataset), {"epsilon": self.engine.get_epsilon(1e-5)}
    def evaluate(self, parameters, config):
        self.set(parameters)
        correct = 0
        for x, y in self.loader:
            correct += (self.model(x).argmax(1) == y).sum().item()
        acc = correct / len(self.loader.dataset)
        return 1.0 - acc, len(self.loader.dataset), {"accuracy": acc}  # <-
""",
        # the training loss and accuracy returned beside the noised update
        """
import numpy as np
class DPClient:
    def fit(self, parameters, config):
        loss, correct, total = self.train(parameters)
        noisy = [p + np.random.normal(0, self.sigma * self.clip, p.shape) for p in self.params()]
        return noisy, total, {"loss": loss, "accuracy": correct / total}  # <-
""",
        # a metrics dict built in the method
        """
import numpy as np
class DPClient:
    def fit(self, parameters, config):
        loss, acc = self.train(parameters)
        noisy = [p + np.random.normal(0, self.sigma, p.shape) for p in self.params()]
        metrics = {"train_loss": float(loss), "train_acc": float(acc), "epsilon": self.eps}
        return noisy, self.num_examples, metrics  # <-
""",
        # the gradient norms of the private batches
        """
import torch
class DPClient:
    def fit(self, parameters, config):
        norms = [float(p.grad.norm()) for p in self.model.parameters()]
        sanitized = [p.detach() + torch.randn_like(p) * self.noise_multiplier for p in self.model.parameters()]
        return sanitized, len(self.loader.dataset), {"norms": norms}  # <-
""",
        # a wrapper that secures the update but passes the wrapped client's metrics on
        """
import numpy as np
class SecureDPClient:
    def fit(self, parameters, config):
        params, n, metrics = self.client.fit(parameters, config)
        self.submit(np.clip(params, -1, 1) + np.random.normal(0, self.sigma, np.shape(params)))
        return [], n, metrics  # <-
""",
    )

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        """``evaluate`` measuring the model on the very loader ``fit`` trains on (the private training split) and
        returning the loss / accuracy to the server: an exact statistic of the private records beside the DP update."""
        methods = {m.name.value: m for m in node.body.body if isinstance(m, cst.FunctionDef)}
        fit, evaluate = methods.get("fit"), methods.get("evaluate")
        if fit is None or evaluate is None or not self._private_update(fit):
            return
        shared = (self._loaders(fit) & self._loaders(evaluate))
        if not shared or any(words(a.split(".")[-1]) & _HELD_OUT_WORDS for a in shared):
            return
        body = list(walk(evaluate.body, into_scopes=False))
        for ret in (n for n in body if isinstance(n, cst.Return)):
            value = ret.value
            if isinstance(value, cst.Tuple) and len(value.elements) == 3 and self._leak(value.elements[2].value, body):
                self.report(ret, f"`evaluate` measures the model on `{sorted(shared)[0]}`, the loader `fit` trains "
                                 "on, and returns the loss and accuracy of the client's private training records to "
                                 "the server without noise; evaluate on a held-out split, or noise the metrics")
                return

    @staticmethod
    def _loaders(fn: cst.FunctionDef) -> set[str]:
        """``self.x`` attributes the method iterates over or hands to a call (a data loader, a data set)."""
        out: set[str] = set()
        for n in walk(fn.body, into_scopes=False):
            exprs = [n.iter] if isinstance(n, cst.For) else [a.value for a in n.args] if isinstance(n, cst.Call) else []
            for e in exprs:
                name = dotted(e) if isinstance(e, cst.Attribute) else None
                if name and name.startswith("self.") and words(name.split(".")[-1]) & _DATA_WORDS:
                    out.add(name)
        return out

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node.name.value != "fit":
            return
        params = [p.name.value for p in node.params.params]
        if len(params) < 3 or params[0] != "self" or not (
                params[1] == "ins" or any(w.startswith(("param", "weight")) for w in words(params[1]))):
            return
        body = list(walk(node.body, into_scopes=False))
        for ret in (n for n in body if isinstance(n, cst.Return)):
            value = ret.value
            if not (isinstance(value, cst.Tuple) and len(value.elements) == 3):
                continue
            metrics = value.elements[2].value
            what = self._leak(metrics, body)
            if not self._private_update(node):
                return
            if what:
                self.report(ret, f"`fit` returns {what} to the server beside the noised update, without noise: the "
                                 "loss, accuracy or norms of the client's private training data are released "
                                 "outside the mechanism and the accountant; return only the update, or noise the "
                                 "metrics and charge them")

    @staticmethod
    def _private_update(fn: cst.FunctionDef) -> bool:
        """The method noises, clips or accounts for its update (a draw, a DP engine, a sanitizer, ε spent): the
        metrics it returns sit beside a DP release. A learned obfuscation with no noise, clip or ε is not."""
        if _noised(fn.body):
            return True
        return bool(name_words(fn.body) & _DP_UPDATE_WORDS)

    @staticmethod
    def _leak(metrics: cst.BaseExpression, body: list[cst.CSTNode]) -> str | None:
        if isinstance(metrics, cst.Dict):
            for el in metrics.elements:
                if isinstance(el, cst.DictElement) and _raw_metric(el.key, el.value):
                    return "the training metrics of this dict"
            return None
        if not isinstance(metrics, cst.Name):
            return None
        name = metrics.value
        for stmt in body:
            if not isinstance(stmt, cst.Assign):
                continue
            for t in stmt.targets:
                if isinstance(t.target, cst.Name) and t.target.value == name and isinstance(stmt.value, cst.Dict):
                    if any(isinstance(el, cst.DictElement) and _raw_metric(el.key, el.value)
                           for el in stmt.value.elements):
                        return f"`{name}`, the training metrics"
                elif isinstance(t.target, cst.Tuple) and len(t.target.elements) == 3 \
                        and isinstance(t.target.elements[2].value, cst.Name) and t.target.elements[2].value.value == name \
                        and isinstance(stmt.value, cst.Call) and call_name(stmt.value) == "fit":
                    return f"`{name}`, the metrics of the wrapped client's `fit`"
        return None
