"""DP690: Opacus' ``make_private*`` returns a Poisson-sampling loader, and the code throws it away
(``model, opt, _ = engine.make_private(...)``, ``engine.make_private(...)[1]``)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk
from dpcheck.rule import Rule

_MAKE_PRIVATE = frozenset({"make_private", "make_private_with_epsilon"})
#: the code builds its own Poisson (or uniform-with-replacement) loader elsewhere in the function
_OWN_SAMPLER = frozenset({"DPDataLoader", "from_data_loader", "UniformWithReplacementSampler",
                          "DistributedUniformWithReplacementSampler", "switch_to_poisson"})


def _poisson_off(call: cst.Call) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "poisson_sampling":
            return isinstance(arg.value, cst.Name) and arg.value.value == "False"
    return False


def _has_loader(call: cst.Call) -> bool:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return len(positional) >= 3 or any(a.keyword is not None and a.keyword.value == "data_loader" for a in call.args)


def _discarded(name: cst.BaseExpression) -> bool:
    return isinstance(name, cst.Name) and name.value.startswith("_")


class PrivateLoaderDiscarded(Rule):
    id = "DP690"
    name = "private-loader-discarded"
    category = "general"
    severity = "error"
    summary = ("the data loader returned by Opacus' `make_private*` is discarded (`model, opt, _ = …`): training "
               "keeps the original shuffled fixed-size loader while σ and ε assume Poisson sampling")
    rationale = (
        "`PrivacyEngine.make_private` / `make_private_with_epsilon` return the private module, the DP optimizer "
        "and a new data loader that draws every batch by Poisson sampling at rate q = batch/n; the noise "
        "multiplier chosen for a target ε and the accountant's ε both rest on that sampling. The loader passed "
        "in is not changed. When the returned loader is thrown away (unpacked into `_`, or only `[0]`/`[1]` of "
        "the result kept) training goes on over the original loader, which shuffles the data into fixed-size "
        "batches: every record is used exactly once per epoch, the amplification by subsampling the accountant "
        "charges does not hold, and the reported ε understates the loss. Reported: a `make_private*` call given "
        "a `data_loader` whose third result is bound to `_`/`_name` or which is indexed for the model or "
        "optimizer only. Not reported: tests (`test_*` functions, `Test*` classes, files under `tests/`), "
        "`poisson_sampling=False` (the loader is not changed then), a function "
        "that builds its own `DPDataLoader` / `UniformWithReplacementSampler`. "
        "Fix: train on the loader `make_private*` returns (with Lightning, return it from `train_dataloader`)."
    )
    TRIGGERS = ("make_private",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``make_private*`` call whose result is unpacked or indexed."""
        if not facts.calls_any(_MAKE_PRIVATE):
            return False
        for node in facts.nodes(ast.Assign):
            value = node.value  # type: ignore[attr-defined]
            if isinstance(value, ast.Subscript):
                value = value.value
            if isinstance(value, ast.Call) and facts.call_lasts(value) & _MAKE_PRIVATE:
                return True
        return False

    def _in_tests(self) -> bool:
        path = self.ctx.path.replace("\\", "/")
        base = path.rsplit("/", 1)[-1]
        return "/tests/" in f"/{path}" or "/test/" in f"/{path}" or base.startswith("test_") \
            or base.endswith("_test.py")

    def visit_Module(self, node: cst.Module) -> None:
        self._names: list[str] = []
        if not self._in_tests():
            self._scope(list(walk(node, into_scopes=False)))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._names.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._names.pop()

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._names.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._names.append(node.name.value)
        # a test asserts on the engine's behaviour; it trains nothing it releases
        if self._in_tests() or any(n.lower().startswith("test") or n.endswith("Test") for n in self._names):
            return
        self._scope(list(walk(node.body, into_scopes=False)))

    def _scope(self, body: list[cst.CSTNode]) -> None:
        if any(isinstance(c, cst.Call) and call_name(c) in _OWN_SAMPLER for c in body):
            return
        for stmt in body:
            if not isinstance(stmt, cst.Assign):
                continue
            value = stmt.value
            index: cst.BaseExpression | None = None
            if isinstance(value, cst.Subscript) and len(value.slice) == 1 \
                    and isinstance(value.slice[0].slice, cst.Index):
                index = value.slice[0].slice.value
                value = value.value
            if not (isinstance(value, cst.Call) and call_name(value) in _MAKE_PRIVATE) \
                    or _poisson_off(value) or not _has_loader(value):
                continue
            dropped = False
            if index is not None:
                dropped = isinstance(index, cst.Integer) and index.value in ("0", "1")
            else:
                for target in stmt.targets:
                    t = target.target
                    if isinstance(t, (cst.Tuple, cst.List)) and len(t.elements) == 3 \
                            and not any(isinstance(e, cst.StarredElement) for e in t.elements):
                        dropped = dropped or _discarded(t.elements[2].value)
            if dropped:
                self.report(
                    stmt,
                    "the Poisson-sampling loader `make_private*` returns is thrown away: training keeps the "
                    "original shuffled fixed-size loader while the noise and ε assume Poisson sampling; train "
                    "on the returned loader",
                )

    VALID = (
        # twin: the returned loader is kept and handed to the trainer
        """
from opacus import PrivacyEngine
class DPRecommender:
    def configure_dp(self, loader):
        opt = self.optimizers()[0]
        self.model, dp_opt, self.private_loader = self.engine.make_private_with_epsilon(
            module=self.model, optimizer=opt, data_loader=loader, epochs=self.epochs,
            target_epsilon=self.eps, target_delta=self.delta, max_grad_norm=self.clip)
        return dp_opt
""",
        # poisson sampling switched off: the returned loader is the same fixed-batch loader
        """
from opacus import PrivacyEngine
def attach(engine, model, opt, loader, sigma):
    model, opt, _ = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                        noise_multiplier=sigma, max_grad_norm=1.0, poisson_sampling=False)
    return model, opt
""",
        # the function builds its own Poisson loader
        """
from opacus import PrivacyEngine
from opacus.data_loader import DPDataLoader
def attach(engine, model, opt, loader, sigma):
    model, opt, _ = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                        noise_multiplier=sigma, max_grad_norm=1.0)
    return model, opt, DPDataLoader.from_data_loader(loader)
""",
        # a unit test of the engine: it checks the call, trains nothing it releases
        """
from opacus import PrivacyEngine
class PrivacyEngineValidationTest:
    def test_rejects_custom_module(self):
        with self.assertRaises(NotImplementedError):
            _, _, _ = self.engine.make_private(module=self.module, optimizer=self.opt, data_loader=self.dl,
                                               noise_multiplier=1.0, max_grad_norm=1.0)
""",
        # ordinary ML: a tuple with a discarded third value
        """
def split(data):
    train, test, _ = make_splits(data, 0.8, 0.1)
    return train, test
""",
    )

    INVALID = (
        """
from opacus import PrivacyEngine
class DPRecommender:
    def configure_dp(self, loader):
        opt = self.optimizers()[0]
        _, dp_opt, _ = self.engine.make_private_with_epsilon(  # <-
            module=self.model, optimizer=opt, data_loader=loader, epochs=self.epochs,
            target_epsilon=self.eps, target_delta=self.delta, max_grad_norm=self.clip)
        return dp_opt
""",
        """
from opacus import PrivacyEngine
def private_optimizer(engine, model, opt, loader, sigma):
    dp_opt = engine.make_private(module=model, optimizer=opt, data_loader=loader, noise_multiplier=sigma, max_grad_norm=1.0)[1]  # <-
    return dp_opt
""",
        """
from opacus import PrivacyEngine
def setup(model, opt, train_loader, sigma):
    engine = PrivacyEngine()
    model, opt, _unused = engine.make_private(module=model, optimizer=opt, data_loader=train_loader,  # <-
                                              noise_multiplier=sigma, max_grad_norm=1.0)
    for x, y in train_loader:
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
""",
            # a script: the loader is unpacked into `_` at the top level
        """
import torch
from opacus import PrivacyEngine
engine = PrivacyEngine()
net, sgd, _ = engine.make_private_with_epsilon(module=net, optimizer=sgd, data_loader=train_dl,  # <-
                                               target_epsilon=3.0, target_delta=1e-5, epochs=10, max_grad_norm=1.0)
for epoch in range(10):
    for xb, yb in train_dl:
        sgd.zero_grad()
        torch.nn.functional.cross_entropy(net(xb), yb).backward()
        sgd.step()
""",
)
