"""DP662: the step counter adds one pass over the loader for a local training call that runs several epochs."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astnames import dotted as ast_dotted, walk as ast_walk
from dpcheck.analysis.syntax import call_name, dotted, param_names, refs, walk, words
from dpcheck.rule import Rule

_EPOCH_WORDS = frozenset({"epoch", "epochs", "passes", "iters", "iterations", "E"})
_COUNTER_WORDS = frozenset({"step", "steps", "iteration", "iterations", "iters", "updates", "count", "t",
                            "compositions", "releases"})


def _last(call: cst.Call) -> str:
    return (call_name(call) or "").split(".")[-1]


def _counter(target: str) -> bool:
    last = target.split(".")[-1]
    return bool((words(last) | {last}) & _COUNTER_WORDS)


def _epochs(name: str) -> bool:
    return bool((words(name) | {name}) & _EPOCH_WORDS)


def _ast_trainers(facts: AstFacts) -> set[str]:
    """Names of the functions that loop ``for _ in range(<epochs param>)`` around a loop over a parameter."""
    out: set[str] = set()
    loops = (ast.For, ast.AsyncFor)
    for fn in facts.functions:
        params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
        if not any(_epochs(p) for p in params):
            continue
        for loop in ast_walk(fn):
            if not (isinstance(loop, loops) and isinstance(loop.iter, ast.Call)
                    and len(loop.iter.args) + len(loop.iter.keywords) == 1 and "range" in facts.call_lasts(loop.iter)):
                continue
            arg = loop.iter.args[0] if loop.iter.args else loop.iter.keywords[0].value
            if isinstance(arg, ast.Starred):
                arg = arg.value
            if not (isinstance(arg, ast.Name) and arg.id in params and _epochs(arg.id)):
                continue
            if any(isinstance(inner, loops) and isinstance(inner.iter, ast.Name) and inner.iter.id in params
                   for stmt in loop.body for inner in ast_walk(stmt)):
                out.add(fn.name)
                break
    return out


class StepsOnePassForLocalEpochs(Rule):
    id = "DP662"
    name = "steps-one-pass-for-local-epochs"
    category = "general"
    severity = "warning"
    summary = ("after a local DP training call that loops over `epochs` passes of a loader, the step counter the "
               "accountant reads adds only one pass (`for _ in loader: steps += 1`, `steps += len(loader)`)")
    rationale = (
        "In federated DP training each client runs `local_epochs` passes over its loader, one noisy update per "
        "batch. The accountant must compose all of them: `local_epochs * len(loader)` steps per client per "
        "round. A counter that adds `len(loader)` (or counts one loop over the loader) after calling "
        "`train_local_dp(model, loader, local_epochs, ..)` undercounts the steps by the factor `local_epochs`, "
        "so the reported ε is too small. Reported: such an increment next to a call of a function defined in the "
        "module that runs `for _ in range(<epochs param>)` around a loop over its loader parameter, when the "
        "increment does not read the epochs argument. Bad: `train_local_dp(m, loader, E, ..)` then "
        "`for _ in loader: steps += 1`. Good: `steps += E * len(loader)`, or let the training function return "
        "the number of updates it made. Fix: count every noisy update (multiply by the local epochs)."
    )
    TRIGGERS = ("poch",)

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a counter's ``+=`` beside a call of a function that loops over epochs around a loop over
        its loader parameter."""
        if not any(_counter(ast_dotted(aug.target) or "") for aug in facts.augassigns(ast.Add)):
            return False
        trainers = _ast_trainers(facts)
        return bool(trainers) and facts.calls_any(trainers)

    INVALID = (
        # one loop over the loader counted for E passes
        """
def local_dp_train(model, loader, n_epochs, clip, sigma):
    for _ in range(n_epochs):
        for xb, yb in loader:
            noisy_step(model, xb, yb, clip, sigma)
    return model
steps = 0
for rnd in range(rounds):
    for cid in chosen:
        local_dp_train(model, loaders[cid], cfg["local_epochs"], 1.0, 1.1)
        for _ in loaders[cid]:
            steps += 1  # <-
    eps = accountant_eps(q, sigma, steps)
""",
        # steps += len(loader) with keyword epochs
        """
def client_update(net, data_loader, lr, local_epochs=5):
    for ep in range(local_epochs):
        for batch in data_loader:
            dp_sgd_step(net, batch, lr)
total_steps = 0
for r in range(R):
    for k in clients:
        client_update(net, train_loaders[k], 0.1, local_epochs=args.local_epochs)
        total_steps += len(train_loaders[k])  # <-
""",
        # a method of a client class, counter on an attribute
        """
class Client:
    def train(self, loader, epochs):
        for e in range(epochs):
            for x, y in loader:
                self.private_step(x, y)
    def run(self, loader, epochs):
        self.train(loader, epochs)
        self.n_steps += len(loader)  # <-
""",
        # iterations counted with a generator over the loader
        """
def fit_private(m, dl, epochs):
    for _ in range(epochs):
        for xb in dl:
            m = dp_update(m, xb)
    return m
iterations = 0
m = fit_private(m, client_dl, E)
iterations += len(client_dl)  # <-
""",
    )
    VALID = (
        # twin: every epoch's pass is counted
        """
def local_dp_train(model, loader, n_epochs, clip, sigma):
    for _ in range(n_epochs):
        for xb, yb in loader:
            noisy_step(model, xb, yb, clip, sigma)
    return model
steps = 0
for rnd in range(rounds):
    for cid in chosen:
        local_dp_train(model, loaders[cid], cfg["local_epochs"], 1.0, 1.1)
        for _ in range(cfg["local_epochs"]):
            for _ in loaders[cid]:
                steps += 1
    eps = accountant_eps(q, sigma, steps)
""",
        # twin: the increment multiplies by the local epochs
        """
def client_update(net, data_loader, lr, local_epochs=5):
    for ep in range(local_epochs):
        for batch in data_loader:
            dp_sgd_step(net, batch, lr)
total_steps = 0
for r in range(R):
    for k in clients:
        client_update(net, train_loaders[k], 0.1, local_epochs=args.local_epochs)
        total_steps += args.local_epochs * len(train_loaders[k])
""",
        # one pass really is one pass: the function runs a single epoch
        """
def train_one_epoch(model, loader, sigma):
    for xb in loader:
        dp_update(model, xb, sigma)
steps = 0
for epoch in range(epochs):
    train_one_epoch(model, train_loader, 1.0)
    steps += len(train_loader)
""",
        # ordinary ML: counting batches for a learning-rate schedule after evaluation
        """
def evaluate(model, loader, epochs):
    for _ in range(epochs):
        for xb in loader:
            model(xb)
seen = 0
evaluate(model, val_loader, 1)
scheduler_total = len(train_loader)
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        trainers: dict[str, tuple[int, str, int, str]] = {}
        for fn in walk(node):
            if not isinstance(fn, cst.FunctionDef):
                continue
            params = param_names(fn)
            shift = 1 if params and params[0] in ("self", "cls") else 0
            for loop in walk(fn, into_scopes=False):
                if not (isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) and _last(loop.iter) == "range"
                        and len(loop.iter.args) == 1 and isinstance(loop.iter.args[0].value, cst.Name)):
                    continue
                ep = loop.iter.args[0].value.value
                if ep not in params or not _epochs(ep):
                    continue
                for inner in walk(loop.body, into_scopes=False):
                    if isinstance(inner, cst.For) and isinstance(inner.iter, cst.Name) and inner.iter.value in params:
                        ld = inner.iter.value
                        trainers[fn.name.value] = (params.index(ep) - shift, ep, params.index(ld) - shift, ld)
                        break
                if fn.name.value in trainers:
                    break
        if not trainers:
            return
        fa = self.ctx.analysis
        for call in walk(node):
            if not isinstance(call, cst.Call) or _last(call) not in trainers:
                continue
            ei, ep, li, ld = trainers[_last(call)]
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
            epochs = keywords.get(ep, positional[ei] if 0 <= ei < len(positional) else None)
            loader = keywords.get(ld, positional[li] if 0 <= li < len(positional) else None)
            if epochs is None or loader is None or isinstance(epochs, (cst.Integer,)) and epochs.value == "1":
                continue
            loader_text = fa.code(loader).strip()
            epochs_text = fa.code(epochs).strip()
            stmt = fa.enclosing_statement(call)
            if isinstance(stmt, cst.BaseSmallStatement):
                stmt = fa.parent(stmt) or stmt
            block = fa.parent(stmt)
            body = getattr(block, "body", None)
            if not isinstance(body, (list, tuple)):
                continue
            at = next((i for i, b in enumerate(body) if b is stmt), None)
            after = list(body)[at + 1:] if at is not None else []
            for later in after:
                site = self._increment(later, loader_text, epochs_text)
                if site is not None:
                    self.report(site, f"`{_last(call)}` runs `{epochs_text}` passes over `{loader_text}` (a noisy "
                                      "update per batch), but this counter adds one pass, so the accountant "
                                      "composes too few steps and ε is under-reported; multiply by "
                                      f"`{epochs_text}` (or count the updates inside the training function)")
                    break

    def _increment(self, stmt: cst.CSTNode, loader: str, epochs: str) -> cst.CSTNode | None:
        fa = self.ctx.analysis
        for sub in walk(stmt):
            if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.AddAssign):
                if not _counter(dotted(sub.target) or ""):
                    continue
                value = fa.code(sub.value)
                if epochs in value:
                    continue
                if isinstance(sub.value, cst.Call) and _last(sub.value) == "len" and sub.value.args \
                        and fa.code(sub.value.args[0].value).strip() == loader:
                    return sub
                loops = [a for a in fa.ancestors(sub) if isinstance(a, cst.For)]
                if loops and fa.inside(loops[0], stmt) and fa.code(loops[0].iter).strip() == loader \
                        and not any(epochs in fa.code(l.iter) for l in loops[1:] if fa.inside(l, stmt)):
                    return sub
        return None
