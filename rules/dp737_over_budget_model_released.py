"""DP737: a training loop stops when the accountant's ε passes the target, after the step that passed it, and the
code after the loop still saves or samples the over-budget model."""
from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, func_name
from dpcheck.analysis.plain_training import LineHits, _words
from dpcheck.rule import Rule

_EPS_WORDS = frozenset({"eps", "epsilon", "epsilons", "spent", "privacy"})
_TARGET_WORDS = frozenset({"target", "budget", "max", "limit", "total", "allowed", "goal"})
#: calls that read the privacy loss spent so far
_SPENT = frozenset({"get_epsilon", "get_privacy_spent", "compute_epsilon", "compute_eps", "get_current_epsilon",
                    "epsilon_spent", "get_eps", "current_epsilon", "privacy_spent", "compute_dp_sgd_privacy", "get_privacy_budget"})
#: calls that take a training step
_STEPS = frozenset({"step", "backward", "minimize", "apply_gradients", "fit", "train_on_batch", "train_step",
                    "train_epoch", "train_one_epoch", "update"})
#: word pieces of calls that release the model after the loop
_RELEASE_WORDS = frozenset({"save", "checkpoint", "sample", "samples", "generate", "export", "dump", "publish",
                            "release", "synthesize", "synthesise", "upload", "push"})
#: word pieces of calls that roll back to an earlier, within-budget state
_ROLLBACK_WORDS = frozenset({"load", "restore", "rollback", "revert", "best", "previous", "prev", "last_good"})


@dataclass(frozen=True)
class OverBudgetStop:
    line: int
    eps: str
    release: str
    release_line: int


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _name(node.value)
    return ""


def _eps_compare(test: ast.AST) -> str | None:
    """``eps > target_epsilon`` / ``epsilon >= self.cfg.max_eps`` / ``target < eps``: the ε name."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right, op = test.left, test.comparators[0], test.ops[0]
    if isinstance(op, (ast.Lt, ast.LtE)):
        left, right = right, left
    elif not isinstance(op, (ast.Gt, ast.GtE)):
        return None
    lw, rw = _words(_name(left)), _words(_name(right))
    if lw & _EPS_WORDS and not lw & _TARGET_WORDS and rw & _TARGET_WORDS:
        return _name(left)
    return None


def _calls(node: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Call)]


def _breaks_only(branch: ast.If) -> bool:
    """The branch stops the loop (``break``) and only reports it: no rollback."""
    has_break = any(isinstance(s, ast.Break) for s in branch.body)
    rollback = any(_words(func_name(c.func)) & _ROLLBACK_WORDS for c in _calls(ast.Module(body=branch.body,
                                                                                     type_ignores=[])))
    return has_break and not rollback


def _check_loop(loop: ast.For | ast.While, following: list[ast.stmt]) -> list[OverBudgetStop]:
    out: list[OverBudgetStop] = []
    body = loop.body
    for i, stmt in enumerate(body):
        if not (isinstance(stmt, ast.If) and _breaks_only(stmt)):
            continue
        eps = _eps_compare(stmt.test)
        if eps is None:
            continue
        before = ast.Module(body=body[:i], type_ignores=[])
        # ε read from the accountant in this iteration, after a training step of the same iteration
        spent = [c for c in _calls(before) if func_name(c.func) in _SPENT]
        steps = [c for c in _calls(before) if func_name(c.func) in _STEPS
                 or _words(func_name(c.func)) & {"step", "train", "fit"} and func_name(c.func) != "train"]
        if not spent or not steps or min(s.lineno for s in steps) > max(c.lineno for c in spent):
            continue
        # after the loop: a save or a sample of the model, not guarded by the budget, with no rollback first
        for after in following:
            calls = _calls(after)
            if any(_words(func_name(c.func)) & _ROLLBACK_WORDS for c in calls):
                break
            if isinstance(after, ast.If) and any(_words(_name(x)) & _EPS_WORDS for x in ast.walk(after.test)):
                continue
            hit = next((c for c in calls if _words(func_name(c.func)) & _RELEASE_WORDS
                        and not _words(func_name(c.func)) & {"curve", "curves", "history", "plot", "log", "metrics"}), None)
            if hit is not None:
                out.append(OverBudgetStop(stmt.lineno, eps, func_name(hit.func), hit.lineno))
                break
    return out


def over_budget_stops(tree: ast.Module) -> list[OverBudgetStop]:
    out: list[OverBudgetStop] = []
    for n in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if not isinstance(block, list):
                continue
            for i, stmt in enumerate(block):
                if isinstance(stmt, (ast.For, ast.While)):
                    out.extend(_check_loop(stmt, block[i + 1:]))
    return out


class OverBudgetModelReleased(Rule):
    id = "DP737"
    name = "over-budget-model-released"
    category = "general"
    severity = "error"
    summary = ("the training loop breaks when the accountant's ε passes the target — after the step that passed "
               "it — and the model is still saved or sampled after the loop")
    rationale = (
        "A budget check placed after the step (`train…; eps = engine.get_epsilon(delta); if eps > target_eps: "
        "break`) only notices the overrun once the over-budget step has been taken: the model the loop leaves "
        "behind has spent more than the target ε. When the code after the loop then saves the final checkpoint, "
        "samples synthetic records from the generator or exports the model, it releases that over-budget state "
        "while the run is reported at the target ε. Reported: the `if` that breaks out of a training loop on "
        "`ε > target` (or `>=`), where the ε is read from the accountant in the same iteration after a training "
        "step, and a statement after the loop saves, samples or exports, with no rollback to an earlier state "
        "(`load_state_dict`, `restore`, a `best` checkpoint) and no ε guard before it. Not reported: a check "
        "before the step (the would-be ε of the next step), a branch that restores a within-budget state, saves "
        "guarded by the budget. Fix: check the ε the next step would spend before taking it (or compute the "
        "number of steps for the target up front), or keep and release the last within-budget checkpoint."
    )
    TRIGGERS = ("break",)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``break``, a call reading the ε spent and a loop."""
        return bool(facts.nodes(ast.Break)) and facts.calls_any(_SPENT) and bool(facts.nodes(ast.For, ast.While))

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._hits: LineHits[OverBudgetStop] = LineHits(ctx, over_budget_stops)

    def visit_If(self, node: cst.If) -> None:
        hit = self._hits.take(node)
        if hit is None:
            return
        self.report(node, f"the loop stops once `{hit.eps}` exceeds the target, after the step that exceeded it, and "
                          f"`{hit.release}` on line {hit.release_line} still saves or samples that over-budget model: "
                          "its privacy loss is above the reported ε; check the next step's ε before taking it, or "
                          "release the last within-budget checkpoint")

    VALID = (
        # twin of 1: the would-be ε of the next epoch is checked before training it
        """
def train(model, loader, engine, opt, target_epsilon, delta, epochs):
    for epoch in range(epochs):
        if engine.accountant.get_epsilon_after(1, delta) > target_epsilon:
            break
        for x, y in loader:
            opt.zero_grad()
            model.loss(x, y).backward()
            opt.step()
    torch.save(model.state_dict(), "final.pt")
""",
        # twin of 2: the over-budget epoch is rolled back to the last within-budget checkpoint before sampling
        """
import torch
class Trainer:
    def fit(self, loader):
        for epoch in range(self.epochs):
            self.train_epoch(loader)
            eps = self.engine.get_epsilon(self.delta)
            if eps > self.target_eps:
                self.generator.load_state_dict(torch.load(self.last_ok))
                break
            torch.save(self.generator.state_dict(), self.last_ok)
        self.save_samples(self.generator(torch.randn(64, 100)))
""",
        # twin of 3: the save after the loop is guarded by the budget
        """
def run(model, data, accountant, opt, max_epsilon, delta):
    while True:
        loss = model.loss(data.next())
        loss.backward()
        opt.step()
        eps, _ = accountant.get_privacy_spent(target_delta=delta)
        if eps >= max_epsilon:
            break
    if eps <= max_epsilon:
        model.save("model.pt")
""",
        # twin of 4: the loop stops on the budget, but nothing is saved or sampled afterwards
        """
def train(model, loader, engine, opt, target_eps, delta):
    for step, (x, y) in enumerate(loader):
        opt.zero_grad()
        model.loss(x, y).backward()
        opt.step()
        epsilon = engine.get_epsilon(delta)
        if epsilon > target_eps:
            break
    return step
""",
        # ML: early stopping on a validation metric, then saving
        """
def train(model, loader, opt, max_patience):
    for epoch in range(100):
        for x, y in loader:
            opt.zero_grad()
            model.loss(x, y).backward()
            opt.step()
        patience = model.patience()
        if patience > max_patience:
            break
    model.save("best.pt")
""",
    )

    INVALID = (
        # 1. per-epoch accountant check after training the epoch, final checkpoint after the loop
        """
import torch
def train(model, loader, engine, opt, target_epsilon, delta, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            model.loss(x, y).backward()
            opt.step()
        eps = engine.get_epsilon(delta)
        if eps > target_epsilon:  # <-
            break
    torch.save(model.state_dict(), "final.pt")
""",
        # 2. a GAN trainer: break on the budget, then sample the generator
        """
import torch
class Trainer:
    def fit(self, loader):
        for epoch in range(self.epochs):
            self.train_epoch(loader)
            eps = self.engine.get_epsilon(self.delta)
            if eps > self.target_eps:  # <-
                print("budget exhausted")
                break
        self.save_samples(self.generator(torch.randn(64, 100)))
""",
        # 3. TF-Privacy accountant in a while loop, then the model is saved
        """
def run(model, data, accountant, opt, max_epsilon, delta):
    while True:
        loss = model.loss(data.next())
        loss.backward()
        opt.step()
        eps, _ = accountant.get_privacy_spent(target_delta=delta)
        if eps >= max_epsilon:  # <-
            break
    model.save("model.pt")
""",
        # 4. the target on the left of the comparison; the synthetic data is generated after the loop
        """
def train(model, loader, engine, opt, target_eps, delta):
    for step, (x, y) in enumerate(loader):
        opt.zero_grad()
        model.loss(x, y).backward()
        opt.step()
        epsilon = engine.get_epsilon(delta)
        if target_eps < epsilon:  # <-
            break
    synthetic = model.generate(10000)
    return synthetic
""",
        # 5. helper step methods in a class; after the break, the final checkpoint and the samples are written
        """
class DPGANTrainer:
    def run(self):
        for epoch in range(1, self.epochs + 1):
            for real, _ in self.loader:
                self._step_critic(real)
                self._step_gen(len(real))
            epsilon = current_epsilon(self.engine, self.delta)
            self.log(epoch, epsilon)
            if epsilon > self.cfg.eps_budget:  # <-
                print("stop")
                break
        self._write_checkpoint(epoch, epsilon, final=True)
        self._write_samples(epoch)
""",
    )
