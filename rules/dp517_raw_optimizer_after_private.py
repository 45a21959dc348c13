"""DP517: a DP wrapper is built around an optimizer, then the raw optimizer takes the steps."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk
from dpcheck.rule import Rule

#: calls that return a private copy of the optimizer they are given (Opacus ``make_private*``,
#: ``DPOptimizer(opt, …)``, ``DPSGD(optimizer=…)``, a project's ``make_dp_optimizer``)
_WRAPPER = re.compile(r"^make_private|^(?:DP|Dp|dp_?)[A-Za-z_]*(?:Optimizer|optimizer|SGD|Adam)$|^make_dp_optimizer$|^privatize_optimizer$")
_OPT_KEYWORDS = ("optimizer", "optim", "opt", "base_optimizer", "original_optimizer")
_STEP_CALLS = frozenset({"step", "apply_gradients", "minimize"})
#: Opacus' wrappers: they return the private model, optimizer and loader and change none of their arguments
_RETURNS_PRIVATE = frozenset({"make_private", "make_private_with_epsilon"})


def _wrapped_optimizer(call: cst.Call) -> str | None:
    """The plain name of the optimizer the wrapper receives."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in _OPT_KEYWORDS and isinstance(arg.value, cst.Name):
            return arg.value.value
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    for value in positional:
        if isinstance(value, cst.Name) and "opt" in value.value.lower():
            return value.value
    return None


def _bound_names(stmt: cst.CSTNode) -> set[str]:
    out: set[str] = set()
    targets: list[cst.BaseExpression] = []
    if isinstance(stmt, cst.Assign):
        targets = [t.target for t in stmt.targets]
    elif isinstance(stmt, (cst.AnnAssign, cst.AugAssign)):
        targets = [stmt.target]
    for target in targets:
        out |= {n.value for n in walk(target) if isinstance(n, cst.Name)}
    return out


def _plain_names(expr: cst.CSTNode) -> set[str]:
    """Names read in ``expr``, not attribute names (``setup.data_loader`` reads ``setup`` only)."""
    attrs = {id(n.attr) for n in walk(expr) if isinstance(n, cst.Attribute)}
    return {n.value for n in walk(expr) if isinstance(n, cst.Name) and id(n) not in attrs}


class RawOptimizerAfterPrivate(Rule):
    id = "DP517"
    name = "raw-optimizer-after-private"
    category = "general"
    severity = "error"
    summary = "the optimizer (or loader) handed to a DP wrapper (make_private, DPOptimizer) is the one used: no clipping, no noise, no Poisson sampling"
    rationale = (
        "Opacus' `make_private` / `make_private_with_epsilon` and `DPOptimizer(optimizer, …)` return "
        "a new optimizer that clips per-example gradients and adds the noise in its `step()`; the "
        "optimizer passed in is left as it was. Calling `optimizer.step()` on the original (the "
        "result unpacked into other names, kept in a setup object, or dropped) applies the plain "
        "summed gradient, while the engine's accountant still reports the target ε. A `make_private*` "
        "call whose result is discarded (an expression statement) is reported wherever the training "
        "happens: nothing the engine returns is used. Not reported: "
        "the result rebinds the same name (`model, optimizer, loader = engine.make_private(…, "
        "optimizer=optimizer, …)`), a wrapper that modifies the optimizer in place "
        "(`engine.attach(optimizer)`), steps taken before the wrapper is built, code with no DP "
        "context. The same for the data loader: iterating the loader given to `make_private` (not "
        "the Poisson-sampling one it returns) breaks the sampling the accountant charges. "
        "Fix: step the optimizer (and iterate the loader) the wrapper returns."
    )
    TRIGGERS = ("rivate", "DP", "dp")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return facts.calls_any(_STEP_CALLS) or facts.calls_any(_RETURNS_PRIVATE)

    VALID = (
        # a project's own make_private method that updates its object in place (no engine arguments)
        """
from opacus import PrivacyEngine
class DPVAE:
    def make_private(self, num_epochs):
        self.engine = PrivacyEngine()
        self.model, self.optim, self.loader = self.engine.make_private_with_epsilon(
            module=self.model, optimizer=self.optim, data_loader=self.loader, epochs=num_epochs,
            target_epsilon=self.eps, target_delta=self.delta, max_grad_norm=self.clip)
    def train(self, num_epochs):
        self.make_private(num_epochs)
""",
        # tests: the engine rejects mismatched arguments; a side effect of the call is checked
        """
from opacus import PrivacyEngine
def check_rejects_foreign_optimizer(self):
    with self.assertRaises(ValueError):
        PrivacyEngine().make_private(module=m1, optimizer=opt, data_loader=dl, noise_multiplier=1.1,
                                     max_grad_norm=1.0)
""",
        """
import torch
class TestMakePrivate:
    def check_freezes(self, engine, peft_model, train_loader):
        engine.make_private(model=peft_model, optimizer=torch.optim.Adam(peft_model.parameters()),
                            data_loader=train_loader, noise_multiplier=1.0, max_grad_norm=1.0, method="ffa")
        assert not any(p.requires_grad for n, p in peft_model.named_parameters() if "lora_A" in n)
""",
        # twins of the discarded results: the engine's private objects are kept and returned
        """
from opacus import PrivacyEngine
class PrivacyManager:
    def setup(self, model, optimizer, loader, target_epsilon, delta, max_grad_norm, epochs):
        self.engine = PrivacyEngine()
        self.model, self.optimizer, self.loader = self.engine.make_private_with_epsilon(
            module=model, optimizer=optimizer, data_loader=loader, epochs=epochs,
            target_epsilon=target_epsilon, target_delta=delta, max_grad_norm=max_grad_norm)
""",
        """
from opacus import PrivacyEngine
def privatize(model, opt, loader, sigma, clip):
    engine = PrivacyEngine()
    return engine.make_private(module=model, optimizer=opt, data_loader=loader, noise_multiplier=sigma,
                               max_grad_norm=clip)
""",
        """
from opacus import PrivacyEngine
private = PrivacyEngine().make_private(module=net, optimizer=sgd, data_loader=train_dl, noise_multiplier=1.0,
                                       max_grad_norm=1.0)
net, sgd, train_dl = private
""",
        # twin at a script's top level: the names are rebound to what make_private returns
        """
import torch
from opacus import PrivacyEngine
model = build_model()
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
engine = PrivacyEngine()
model, optimizer, train_loader = engine.make_private(module=model, optimizer=optimizer, data_loader=train_loader,
                                                     noise_multiplier=1.1, max_grad_norm=1.0)
for batch in train_loader:
    optimizer.zero_grad()
    model(batch).loss.backward()
    optimizer.step()
""",
        # twin: the DPOptimizer is the one stepped
        """
import torch
from opacus.optimizers import DPOptimizer
base_opt = torch.optim.SGD(model.parameters(), lr=0.1)
dp_sgd = DPOptimizer(base_opt, noise_multiplier=1.0, max_grad_norm=1.0, expected_batch_size=64)
for x, y in loader:
    dp_sgd.zero_grad()
    loss_fn(model(x), y).backward()
    dp_sgd.step()
""",
        # the tuple is unpacked into the same names before training
        """
import torch
from opacus import PrivacyEngine
opt = torch.optim.Adam(net.parameters())
engine = PrivacyEngine()
private = engine.make_private(module=net, optimizer=opt, data_loader=dl, noise_multiplier=1.0, max_grad_norm=1.0)
net, opt, dl = private
for x in dl:
    opt.step()
""",
        # the names are rebound to what make_private returns
        """
from opacus import PrivacyEngine
def train(model, optimizer, loader, loss_fn, epochs):
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=1.0, max_grad_norm=1.0)
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
""",
        # the wrapper's optimizer steps
        """
from opacus.optimizers import DPOptimizer
def train(model, base_opt, batches, loss_fn, sigma, clip):
    dp_opt = DPOptimizer(base_opt, noise_multiplier=sigma, max_grad_norm=clip, expected_batch_size=64)
    for x, y in batches:
        dp_opt.zero_grad()
        loss_fn(model(x), y).backward()
        dp_opt.step()
""",
        # the old Opacus API attaches the engine in place
        """
from opacus import PrivacyEngine
def train(model, optimizer, loader, loss_fn, sigma, clip):
    engine = PrivacyEngine(model, batch_size=64, sample_size=60000, noise_multiplier=sigma, max_grad_norm=clip)
    engine.attach(optimizer)
    for x, y in loader:
        loss_fn(model(x), y).backward()
        optimizer.step()
""",
        # the setup object's optimizer steps
        """
def train_dp(model, optimizer, loader, loss_fn, epochs, target_epsilon, delta, clip):
    setup = make_private_with_epsilon(model=model, optimizer=optimizer, data_loader=loader, epochs=epochs,
                                      target_epsilon=target_epsilon, target_delta=delta, max_grad_norm=clip)
    for x, y in setup.data_loader:
        setup.optimizer.zero_grad()
        loss_fn(setup.model(x), y).backward()
        setup.optimizer.step()
""",
    )

    INVALID = (
        # the engine's results are dropped (B21-037 privacy_utils.py): training goes on with the plain objects
        """
from opacus import PrivacyEngine
class PrivacyManager:
    def setup(self, model, loader, target_epsilon, delta, max_grad_norm, epochs):
        try:
            self.engine = PrivacyEngine()
            self.engine.make_private_with_epsilon(  # <-
                module=model, optimizer=None, data_loader=loader, epochs=epochs,
                target_epsilon=target_epsilon, target_delta=delta, max_grad_norm=max_grad_norm)
        except Exception:
            self.engine = None
""",
        """
from opacus import PrivacyEngine
def privatize(model, opt, loader, sigma, clip):
    engine = PrivacyEngine()
    engine.make_private(module=model, optimizer=opt, data_loader=loader, noise_multiplier=sigma,  # <-
                        max_grad_norm=clip)
    return model, opt, loader
""",
        """
from opacus import PrivacyEngine
PrivacyEngine().make_private(module=net, optimizer=sgd, data_loader=train_dl, noise_multiplier=1.0,  # <-
                             max_grad_norm=1.0)
""",
        # a script's top level: make_private's tuple assigned to the engine, the original loader and optimizer used
        """
import torch
from opacus import PrivacyEngine
model = build_model()
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
engine = PrivacyEngine()
engine = engine.make_private(module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=1.1,
                             max_grad_norm=1.0)
for batch in loader:  # <-
    optimizer.zero_grad()
    model(batch).loss.backward()
    optimizer.step()  # <-
""",
        # a script's top level: the base optimizer stepped beside its DPOptimizer
        """
import torch
from opacus.optimizers import DPOptimizer
base_opt = torch.optim.SGD(model.parameters(), lr=0.1)
dp_sgd = DPOptimizer(base_opt, noise_multiplier=1.0, max_grad_norm=1.0, expected_batch_size=64)
for x, y in loader:
    base_opt.zero_grad()
    loss_fn(model(x), y).backward()
    base_opt.step()  # <-
""",
        # a script's top level: the private triple unpacked into new names, the original optimizer stepped
        """
import torch
from opacus import PrivacyEngine
opt = torch.optim.Adam(net.parameters())
engine = PrivacyEngine()
net_p, opt_p, dl_p = engine.make_private(module=net, optimizer=opt, data_loader=dl, noise_multiplier=1.0,
                                         max_grad_norm=1.0)
for x in dl_p:
    opt.step()  # <-
""",
        # the private optimizer is unpacked into another name; the original steps
        """
from opacus import PrivacyEngine
def train(model, optimizer, loader, loss_fn, epsilon, delta):
    engine = PrivacyEngine()
    priv_model, priv_opt, priv_loader = engine.make_private_with_epsilon(
        module=model, optimizer=optimizer, data_loader=loader, target_epsilon=epsilon,
        target_delta=delta, epochs=5, max_grad_norm=1.0)
    for x, y in priv_loader:
        optimizer.zero_grad()
        loss_fn(priv_model(x), y).backward()
        optimizer.step()  # <-
""",
        # a setup object holds the private optimizer; the argument steps
        """
def train_dp_sgd(model, optimizer, loader, loss_fn, epochs, target_epsilon, delta, clip):
    setup = make_private_with_epsilon(model=model, optimizer=optimizer, data_loader=loader, epochs=epochs,
                                      target_epsilon=target_epsilon, target_delta=delta, max_grad_norm=clip)
    for x, y in setup.data_loader:
        loss_fn(setup.model(x), y).backward()
        optimizer.step()  # <-
    return setup
""",
        # DPOptimizer built around an attribute-free name, result dropped
        """
import torch
from opacus.optimizers import DPOptimizer
def fit(net, data, sigma, clip):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    DPOptimizer(opt, noise_multiplier=sigma, max_grad_norm=clip, expected_batch_size=32)
    for x, y in data:
        net.loss(x, y).backward()
        opt.step()  # <-
""",
        # a project's own wrapper; Keras-style apply_gradients on the raw optimizer
        """
def make_dp_optimizer(optimizer, l2_norm_clip, noise_multiplier):
    return DPWrapper(optimizer, l2_norm_clip, noise_multiplier)
def train(tape, loss, variables, optimizer, l2_norm_clip, noise_multiplier):
    private = make_dp_optimizer(optimizer=optimizer, l2_norm_clip=l2_norm_clip, noise_multiplier=noise_multiplier)
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))  # <-
    return private
""",
        # make_private_with_epsilon's loader unpacked into another name; the original iterated through tqdm
        """
from opacus import PrivacyEngine
def fit(net, opt, dl, epsilon, delta, epochs):
    pe = PrivacyEngine()
    net, opt, private_dl = pe.make_private_with_epsilon(module=net, optimizer=opt, data_loader=dl, epochs=epochs,
                                                        target_epsilon=epsilon, target_delta=delta, max_grad_norm=1.0)
    for epoch in range(epochs):
        for i, (x, y) in enumerate(tqdm(dl)):  # <-
            loss_fn(net(x), y).backward()
            opt.step()
""",
        # make_private's loader unpacked into another name; the original loader iterated
        """
from opacus import PrivacyEngine
def train(model, optimizer, train_loader, loss_fn, sigma, clip):
    engine = PrivacyEngine()
    model, optimizer, private_loader = engine.make_private(module=model, optimizer=optimizer,
                                                           data_loader=train_loader, noise_multiplier=sigma,
                                                           max_grad_norm=clip)
    for x, y in train_loader:  # <-
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not _WRAPPER.search(call_name(node)):
            return
        opt = _wrapped_optimizer(node)
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node) or self.ctx.module  # a script's top level is one scope too
        stmt = fa.enclosing_statement(node)
        start = fa.line_of(node)
        if isinstance(stmt, cst.Expr) and stmt.value is node and call_name(node) in _RETURNS_PRIVATE \
                and self._engine_call(node) and not self._test_code(node):
            self.report(node, f"the result of `{call_name(node)}` is discarded: it returns the private model, "
                              "optimizer and data loader and leaves its arguments as they were, so training "
                              "continues without per-example clipping, noise or Poisson sampling while the "
                              "engine's ε is reported; use the model, optimizer and loader it returns")
            return
        self._raw_loader(node, fn, stmt, start)
        if opt is None or opt in _bound_names(stmt):
            return
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, (cst.Assign, cst.AnnAssign)) and opt in _bound_names(sub) and fa.line_of(sub) > start:
                return  # rebound later: the step may use the wrapper
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Call) and call_name(sub) in _STEP_CALLS and isinstance(sub.func, cst.Attribute) \
                    and isinstance(sub.func.value, cst.Name) and sub.func.value.value == opt and fa.line_of(sub) > start:
                self.report(
                    sub,
                    f"`{opt}` was handed to `{call_name(node)}` (line {start}), which returns the "
                    f"private optimizer; `{opt}.{call_name(sub)}()` is the original, so the update has no "
                    "per-example clipping and no noise while ε is reported; step the optimizer the "
                    "wrapper returned",
                )
                return

    @staticmethod
    def _engine_call(call: cst.Call) -> bool:
        """The engine's signature: what it wraps is passed as ``module=``/``optimizer=``/``data_loader=`` (a
        project's own ``self.make_private(num_epochs)`` that updates its object in place is another method)."""
        return any(a.keyword is not None and a.keyword.value in ("module", "optimizer", "data_loader")
                   for a in call.args)

    def _test_code(self, call: cst.Call) -> bool:
        """A unit test (``def test_…``, ``class Test…``; it checks the call's side effects or that it fails)."""
        for up in self.ctx.analysis.ancestors(call):
            if isinstance(up, (cst.FunctionDef, cst.ClassDef)) and up.name.value.lower().startswith("test"):
                return True
            if isinstance(up, cst.With) and any(
                    isinstance(item.item, cst.Call) and "raises" in call_name(item.item).lower() for item in up.items):
                return True
        return False

    def _raw_loader(self, call: cst.Call, fn: cst.FunctionDef | cst.Module, stmt: cst.CSTNode, start: int) -> None:
        """``make_private(…, data_loader=loader)`` and then ``for x, y in loader``: the original loader's
        shuffled fixed-size batches, not the Poisson-sampled ones the accountant charges."""
        if not call_name(call).startswith("make_private"):
            return
        loader = next((a.value.value for a in call.args if a.keyword is not None and a.keyword.value == "data_loader"
                       and isinstance(a.value, cst.Name)), None)
        if loader is None or loader in _bound_names(stmt) or any(
                a.keyword is not None and a.keyword.value == "poisson_sampling" for a in call.args):
            return
        fa = self.ctx.analysis
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, (cst.Assign, cst.AnnAssign)) and loader in _bound_names(sub) and fa.line_of(sub) > start:
                return
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.For) and fa.line_of(sub) > start and loader in _plain_names(sub.iter):
                self.report(
                    sub,
                    f"`{loader}` was handed to `{call_name(call)}` (line {start}), which returns a Poisson-"
                    f"sampling loader; iterating the original `{loader}` trains on its shuffled fixed-size "
                    "batches, while the accountant charges Poisson subsampling; iterate the loader the "
                    "wrapper returned",
                )
                return
