"""DP504: ``while epsilon < budget:`` trains first and measures ε after, so the last step overshoots."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, last_name, number, walk, words
from dpcheck.analysis.taint import has_training_step
from dpcheck.rule import Rule
from dpcheck.analysis.noisedraws import EPS_WORDS, is_eps

_BUDGET_WORDS = frozenset({"budget", "target", "max", "total", "limit"})


def _budget(expr: cst.BaseExpression) -> bool:
    name = last_name(expr)
    return name is not None and bool(words(name) & (_BUDGET_WORDS | EPS_WORDS))


def _trains(statement: cst.CSTNode) -> bool:
    if has_training_step(statement):
        return True
    return any(isinstance(n, cst.Call) and words(call_name(n)) & {"train", "training", "fit"}
               for n in walk(statement, into_scopes=False))


def _assigns(statement: cst.CSTNode, name: str) -> bool:
    for node in walk(statement, into_scopes=False):
        if isinstance(node, cst.Assign):
            if any(name in {last_name(t) for t in _targets(target.target)} for target in node.targets):
                return True
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) and last_name(node.target) == name:
            return True
    return False


def _assigns_exactly(statement: cst.CSTNode, name: str) -> bool:
    """Is the dotted name ``name`` (``epsilon``, ``self.epsilon``) itself a target in ``statement``?"""
    for node in walk(statement, into_scopes=False):
        if isinstance(node, cst.Assign):
            targets = [t for target in node.targets for t in _targets(target.target)]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        else:
            continue
        if any(dotted(t) == name for t in targets):
            return True
    return False


def _given_budget(expr: cst.BaseExpression) -> bool:
    """(h46-2) A budget handed in rather than named: ``float(sys.argv[2])``, ``int(args.eps)``,
    ``cfg.get("target_epsilon")``, ``params["max_eps"]``, or a positive number."""
    value = number(expr)
    if value is not None:
        return value > 0
    if isinstance(expr, cst.Call) and call_name(expr) in ("float", "int", "Decimal") and len(expr.args) == 1:
        inner = expr.args[0].value
        if isinstance(inner, cst.Subscript) and dotted(inner.value) in ("sys.argv", "argv"):
            return True
        return _given_budget(inner) or _budget(inner) or is_eps(inner)
    key: cst.BaseExpression | None = None
    if isinstance(expr, cst.Call) and call_name(expr) == "get" and expr.args:
        key = expr.args[0].value
    elif isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        key = expr.slice[0].slice.value
    if isinstance(key, cst.SimpleString):
        pieces = words(key.value.strip("'\""))
        return bool(pieces & _BUDGET_WORDS) and bool(pieces & EPS_WORDS) or bool(pieces & {"budget"})
    return False


def _measured_by_accountant(body: cst.CSTNode, name: str) -> bool:
    """(h46-2) ``name`` is assigned in ``body`` from an accountant's read (``engine.get_epsilon(δ)``,
    ``compute_epsilon(steps, …)``, ``get_privacy_spent(…)[0]``), not decayed by hand (an ε-greedy schedule)."""
    for node in walk(body, into_scopes=False):
        if isinstance(node, cst.Assign) and any(dotted(t) == name for target in node.targets
                                                for t in _targets(target.target)):
            if any(isinstance(c, cst.Call) and words(call_name(c)) & {"epsilon", "eps", "privacy", "spent", "rdp",
                                                                       "dp"} for c in walk(node.value)):
                return True
    return False


def _targets(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [t for e in target.elements for t in _targets(e.value)]
    return [target]


_SPENT_WORDS = frozenset({"spent", "epsilon", "eps"})
_STOP_WORDS = frozenset({"stop", "terminate", "done", "finished", "exceeded"})


def _every_k(test: cst.BaseExpression) -> float | None:
    """``step % 10 == 0`` (possibly ``and``-ed with other conditions): the period k."""
    parts = [test]
    while parts:
        part = parts.pop()
        if isinstance(part, cst.BooleanOperation) and isinstance(part.operator, cst.And):
            parts += [part.left, part.right]
            continue
        if isinstance(part, cst.Comparison) and len(part.comparisons) == 1 \
                and isinstance(part.comparisons[0].operator, cst.Equal) and number(part.comparisons[0].comparator) == 0:
            left = part.left
            if isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Modulo):
                k = number(left.right)
                if k is not None:
                    return k
    return None


#: a loop over passes (``for epoch in range(E)``, ``for rnd in range(ROUNDS)``): each iteration trains a whole
#: epoch or federated round
_PASS_WORDS = frozenset({"epoch", "epochs", "round", "rounds", "rnd", "comm"})


def _pass_loop(loop: cst.For) -> bool:
    return any(isinstance(n, cst.Name) and words(n.value) & _PASS_WORDS
               for part in (loop.target, loop.iter) for n in walk(part))


def _trains_pass(statement: cst.CSTNode) -> bool:
    """A statement that trains a whole pass: a nested loop whose body trains (over the loader, over the selected
    clients), or a call named for training that is not one step (``train(net, loader, …)``, ``local_train(…)``;
    not ``train_step(batch)``, not torch's ``model.train()`` mode switch)."""
    if isinstance(statement, (cst.For, cst.While)):
        return _trains(statement)
    if isinstance(statement, (cst.With, cst.Try)) and isinstance(statement.body, cst.IndentedBlock):
        # (h46-2) ``with warnings.catch_warnings(): … for batch in loader: …``: the pass inside a context block
        if any(_trains_pass(inner) for inner in statement.body.body):
            return True
    for node in walk(statement, into_scopes=False):
        if not isinstance(node, cst.Call):
            continue
        called = words(call_name(node))
        if not called & {"train", "training", "fit"} or called & {"step", "steps", "batch"}:
            continue
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "train" and not node.args:
            continue  # ``model.train()``: the mode switch
        return True
    return False


def _ast_pass_check(facts: AstFacts) -> bool:
    """``for epoch …:`` whose body has an ``if`` comparing two names or attributes one of which is ε-named and
    breaking or returning (the AST gate of ``visit_For``)."""
    import ast

    from dpcheck.analysis.astfacts import dotted as ast_dotted
    for loop in facts.nodes(ast.For):
        names = [n.id if isinstance(n, ast.Name) else n.attr for part in (loop.target, loop.iter)
                 for n in ast.walk(part) if isinstance(n, (ast.Name, ast.Attribute))]
        if not any(words(n) & _PASS_WORDS for n in names):
            continue
        for branch in ast.walk(loop):
            if not isinstance(branch, ast.If) or not isinstance(branch.test, ast.Compare):
                continue
            sides = [branch.test.left, *branch.test.comparators]
            if any(words((ast_dotted(s) or "").split(".")[-1]) & EPS_WORDS for s in sides) \
                    and any(isinstance(s, (ast.Break, ast.Return)) for b in branch.body for s in ast.walk(b)):
                return True
    return False


class BudgetLoopOvershoot(Rule):
    id = "DP504"
    name = "budget-loop-overshoot"
    category = "general"
    severity = "error"
    summary = "`while ε < budget:` trains and only then measures ε: the model released is the one past the budget"
    rationale = (
        "A loop `while epsilon < eps_budget:` whose body trains (an epoch, a step) and then recomputes "
        "`epsilon` from the accountant exits only *after* the iteration that pushed ε over the "
        "budget has updated the model. The model the loop leaves behind — the one saved or "
        "returned — has spent more than the budget, by a whole epoch when ε is measured per epoch. "
        "Not reported: a body that tests the ε the next step would cost and breaks before "
        "training, a loop whose condition is not an ε against a budget, code with no DP context. "
        "Fix: compute the ε after the next step first (the accountant can be queried for "
        "`steps + k`) and stop before taking it, or keep and release the previous model."
    )
    TRIGGERS = ("while", "%", "break")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is ``while ε < budget``, or an every-k-steps test whose body calls an ε/spent function."""
        from dpcheck.analysis.astshapes import budget_loop

        return budget_loop(facts, EPS_WORDS, _BUDGET_WORDS, _SPENT_WORDS) or _ast_pass_check(facts)

    VALID = (
        # (h46-2 twin) the ε the coming pass will cost is tested before it is trained
        """
import sys
import warnings
def run(model, loader, optimizer, params, steps_per_epoch):
    for epoch in range(params["epochs"]):
        eps_next = compute_epsilon((epoch + 1) * steps_per_epoch, params)
        if eps_next > float(sys.argv[2]):
            break
        with warnings.catch_warnings():
            for xb, yb in loader:
                optimizer.zero_grad()
                model.loss(xb, yb).backward()
                optimizer.step()
""",
        # ordinary ML code: an epsilon-greedy rate decayed by hand and a loss threshold, no accountant
        """
def train_agent(agent, env, epochs):
    epsilon = 1.0
    for epoch in range(epochs):
        with agent.session():
            for batch in env.rollouts():
                agent.loss(batch).backward()
                agent.opt.step()
        epsilon = max(0.05, epsilon * 0.99)
        if epsilon > 0.5:
            break
""",
        # an experiment's stop every 100 steps, the budget itself checked after every step
        """
def train(sess, train_op, accountant, steps, delta, target_eps):
    for i in range(steps):
        sess.run(train_op)
        if i % 100 == 0:
            eps = accountant.compute_epsilon(i, delta)
            if eps > 0.5:
                break
        spent = accountant.get_privacy_spent(sess, target_eps=target_eps)
        stop = False
        for _eps, _delta in spent:
            if _delta >= delta:
                stop = True
        if stop:
            break
""",
        # logging ε every 10 steps, with no stop on it
        """
def train(model, loader, accountant, steps, delta):
    for step in range(steps):
        loss = model.step(next(loader))
        loss.backward()
        if step % 10 == 0:
            print(step, accountant.get_epsilon(delta))
    return model
""",
        # the budget checked every step, before the next one
        """
def train(model, loader, accountant, steps, delta, target_eps):
    for step in range(steps):
        if accountant.get_epsilon(delta) > target_eps:
            break
        model.step(next(loader)).backward()
    return model
""",
        # the next step's cost is checked before the step
        """
def train(model, loader, accountant, eps_budget, delta):
    epsilon = 0.0
    while epsilon < eps_budget:
        next_eps = accountant.epsilon_after(steps=len(loader), delta=delta)
        if next_eps > eps_budget:
            break
        train_one_epoch(model, loader)
        epsilon = accountant.get_epsilon(delta)
    return model
""",
        # the loop counts steps, epsilon is only reported
        """
def train(model, optimizer, engine, steps, delta):
    step = 0
    while step < steps:
        optimizer.step()
        step += 1
    epsilon = engine.get_epsilon(delta)
    return model, epsilon
""",
        # epsilon measured before the training step of the iteration
        """
def fit(self, data, target_epsilon):
    epsilon = self.accountant.get_epsilon(self.delta)
    while epsilon < target_epsilon:
        epsilon = self.accountant.get_epsilon_after_step(self.delta)
        if epsilon >= target_epsilon:
            return
        self.optimizer.step()
""",
        # a loop over a numeric tolerance, no training
        """
def calibrate_sigma(epsilon, delta, target_eps):
    sigma = 0.1
    eps = compute_eps(sigma, delta)
    while eps > target_eps:
        sigma *= 1.1
        eps = compute_eps(sigma, delta)
    return sigma
""",
    )

    INVALID = (
        # (h46-2) the pass trains inside a context block, then the budget from the command line is tested
        """
import sys
import warnings
def run(model, loader, optimizer, engine, params):
    for epoch in range(params["epochs"]):
        with warnings.catch_warnings():
            for xb, yb in loader:
                optimizer.zero_grad()
                model.loss(xb, yb).backward()
                optimizer.step()
        eps_now = engine.get_epsilon(delta=params["delta"])
        if eps_now > float(sys.argv[2]):  # <-
            break
        save_scores(model, eps_now)
""",
        # (g2 h41) a for-loop over epochs: a whole epoch is trained, then ε is read and the loop breaks
        """
def run(net, loader, optimizer, engine, args):
    for epoch in range(args.epoch):
        train_loss = train(net=net, dataloader=loader, optimizer=optimizer)
        total_eps = engine.get_epsilon(args.delta)
        if total_eps >= args.eps:  # <-
            break
    save_net(net)
""",
        # (g2 h41) ε recomputed every step inside the epoch but compared with the target only after it
        """
class Synth:
    def fit(self, loader, steps_per_epoch):
        epsilon = 0
        for i in range(self.epochs):
            if self.epsilon < epsilon:
                break
            for _ in range(steps_per_epoch):
                loss = self.discriminator(next(loader)).mean()
                loss.backward()
                self.optimizer.step()
                epsilon, alpha = self.engine.get_privacy_spent(self.delta)
            if not self.disabled:
                if self.epsilon < epsilon:  # <-
                    break
""",
        # (g2 h41) a federated round trained and aggregated before the largest client ε is compared with the target
        """
def federate(users, server, rounds, target_epsilon, k):
    for rnd in range(rounds):
        chosen = pick(users, k)
        for u in chosen:
            users[u].train()
        server.aggregate([users[u].weights() for u in chosen])
        eps = max(user.epsilon for user in users)
        if eps > target_epsilon:  # <-
            break
    return server.model
""",
        # the stop flag checked every step is set only by the every-10-steps budget test
        """
def run(sess, train_op, accountant, loader, target_eps, target_delta):
    early_stop = False
    step = 0
    for batch in loader:
        if early_stop:
            break
        sess.run(train_op, feed_dict={"x": batch})
        if step % 10 == 0:  # <-
            for spent_eps, spent_delta in accountant.get_privacy_spent(sess, target_eps=[target_eps]):
                if spent_delta > target_delta:
                    early_stop = True
        step += 1
""",
        # alps-lab dpgan dp/train.py: the spent budget is read every 10 steps, after the step
        """
def train(config, sess, accountant, loader, train_op):
    total_step, early_stop = 0, False
    while not early_stop:
        sess.run(train_op, feed_dict=loader.next_batch())
        if total_step % 10 == 0 and accountant and config.terminate:  # <-
            spent_eps_deltas = accountant.get_privacy_spent(sess, target_eps=config.target_epsilons)
            for (spent_eps, spent_delta), target_delta in zip(spent_eps_deltas, config.target_deltas):
                if spent_delta > target_delta:
                    early_stop = True
                    break
        total_step += 1
""",
        # Jeff DPSGD_Opacus.py
        """
def main(model_opacus, train_dl_opacus, optimizer_opacus, privacy_engine, eps_budget, delta):
    epsilon = 0.
    while epsilon < eps_budget:  # <-
        central_train_loss, acc = train_privacy_opacus2(model_opacus, train_dl_opacus, optimizer_opacus)
        epsilon = privacy_engine.accountant.get_epsilon(delta=delta)
        print("epsilon", epsilon)
    return model_opacus
""",
        # borealis dp_wgan.py: an epoch of steps, then the accountant
        """
def train(self, data_loader, batch_size, sigma, steps, lmbds, x_train):
    epsilon = 0
    while epsilon < self.target_epsilon:  # <-
        for real in data_loader:
            loss = self.discriminator(real).mean()
            loss.backward()
            self.optimizer_d.step()
            steps += 1
        rdp = compute_rdp(batch_size / x_train.shape[0], sigma, steps, lmbds)
        epsilon, _, _ = get_privacy_spent(lmbds, rdp, target_delta=1e-5)
""",
        """
def run(model, opt, accountant, data, max_epsilon, delta):
    eps = 0.0
    while eps <= max_epsilon:  # <-
        opt.zero_grad()
        model.loss(next(data)).backward()
        opt.step()
        accountant.step()
        eps = accountant.get_epsilon(delta)
    model.save("final.pt")
""",
        """
def fit(self, X, epsilon_budget):
    self.epsilon = 0.0
    while self.epsilon < epsilon_budget:  # <-
        self.sess.run(self.train_op, feed_dict={self.x: X})
        self.epsilon, _ = self.accountant.get_privacy_spent(target_delta=self.delta)[0]
""",
    )

    def visit_If(self, node: cst.If) -> None:
        """``if step % 10 == 0: eps = accountant.get_privacy_spent(…); if eps > target: stop`` inside a training
        loop: the budget is checked only every k steps, after the step, so up to k-1 steps overshoot it."""
        k = _every_k(node.test)
        if k is None or k <= 1:
            return
        if not any(isinstance(n, cst.Call) and words(call_name(n)) & _SPENT_WORDS for n in walk(node.body)):
            return
        if not any(isinstance(n, (cst.Break, cst.Return)) or (
                isinstance(n, cst.Assign) and any(words(last_name(t.target) or "") & _STOP_WORDS for t in n.targets))
                   for n in walk(node.body)):
            return
        fa = self.ctx.analysis
        loops = fa.enclosing_loops(node)
        if not loops or not _trains(loops[0]) or self._checked_every_step(loops[0], node):
            return
        self.report(node.test, f"the privacy budget is checked only every {k:g} steps (and after the step): "
                               f"training can run up to {k - 1:g} steps past the budget before it stops, and the "
                               f"model released has spent more than the target; check before every step")

    def visit_For(self, node: cst.For) -> None:
        """``for epoch in range(E): train(net, loader, …); eps = engine.get_epsilon(δ); if eps >= target: break``:
        the check comes after the pass that crossed the budget was trained, so the model the loop leaves (saved or
        returned after it) has spent a whole epoch or round more than the target — the ``while ε < budget`` shape
        written as a ``for`` with a late ``break``. A check before the pass, or a per-step loop, is not this."""
        if not _pass_loop(node) or not isinstance(node.body, cst.IndentedBlock):
            return
        trained = False
        early: tuple[cst.If, cst.BaseExpression, cst.BaseExpression] | None = None
        for statement in node.body.body:
            if not trained:
                if self._stops_on_eps(statement):
                    check = self._budget_check(statement, node)
                    if check is None or self._measured_before(node, check[1], check[0]):
                        return  # the ε the pass will cost is computed and tested before it is trained
                    early = early or check  # the ε tested is the one the previous pass left: also late
                trained = _trains_pass(statement)
                continue
            check = self._budget_check(statement, node)
            if check is not None:
                self._report_late(node, *check)
                return
        if trained and early is not None:
            self._report_late(node, *early)

    def _measured_before(self, loop: cst.For, measured: cst.BaseExpression, branch: cst.If) -> bool:
        """Is the measured ε assigned in the loop body before the test (``epsilon = compute_…(epochs=epoch)``
        then ``if epsilon >= max_epsilon: break`` ahead of training): computed for the coming pass, not left over
        from the last one."""
        fa = self.ctx.analysis
        name, line = dotted(measured), fa.line_of(branch)
        for node in walk(loop.body, into_scopes=False):
            if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and fa.line_of(node) < line \
                    and _assigns_exactly(node, name or ""):
                return True
        return False

    def _budget_check(self, statement: cst.CSTNode, loop: cst.For) \
            -> tuple[cst.If, cst.BaseExpression, cst.BaseExpression] | None:
        """The first ``if <measured ε> > <budget>: break`` in ``statement`` (not inside a nested loop)."""
        for branch in walk(statement, into_scopes=False):
            if isinstance(branch, (cst.For, cst.While)):
                return None
            if not isinstance(branch, cst.If) or not any(
                    isinstance(s, (cst.Break, cst.Return)) for s in walk(branch.body, into_scopes=False)):
                continue
            sides = self._measured_against_budget(branch.test, loop)
            if sides is not None:
                return branch, sides[0], sides[1]
        return None

    def _report_late(self, loop: cst.For, branch: cst.If, measured: cst.BaseExpression,
                     budget: cst.BaseExpression) -> None:
        fa = self.ctx.analysis
        self.report(branch.test, f"the loop on line {fa.line_of(loop)} trains a whole pass and only then tests "
                                 f"`{fa.code(measured).strip()}` against `{fa.code(budget).strip()}`: it stops after "
                                 "the pass that crossed the budget has updated the model, so the model it leaves has "
                                 "spent more than the target; check the ε the next pass would cost before training "
                                 "it, or release the previous model")

    def _measured_against_budget(self, test: cst.BaseExpression, loop: cst.For) \
            -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        """``eps > target`` / ``target < eps`` (or ``>=``/``<=``), the measured ε re-assigned in the loop body and
        the budget not."""
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return None
        op = test.comparisons[0].operator
        left, right = test.left, test.comparisons[0].comparator
        if isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual)):
            measured, budget = left, right
        elif isinstance(op, (cst.LessThan, cst.LessThanEqual)):
            measured, budget = right, left
        else:
            return None
        name, limit = dotted(measured), dotted(budget)
        if limit is None and name is not None and is_eps(measured) and _given_budget(budget):
            # (h46-2) a budget read from the command line or a config (``float(sys.argv[2])``,
            # ``params.get("target_epsilon")``) or written as a number
            return (measured, budget) if _measured_by_accountant(loop.body, name) else None
        if name is None or limit is None or name == limit or not is_eps(measured):
            return None
        if not (_budget(budget) or is_eps(budget)):
            return None
        if not _assigns_exactly(loop.body, name) or _assigns_exactly(loop.body, limit):
            return None
        return measured, budget

    def visit_While(self, node: cst.While) -> None:
        test = node.test
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return
        if not isinstance(test.comparisons[0].operator, (cst.LessThan, cst.LessThanEqual)):
            return
        measured, budget = test.left, test.comparisons[0].comparator
        if not is_eps(measured) or not _budget(budget) or last_name(measured) == last_name(budget):
            return
        name = last_name(measured) or ""
        statements = list(node.body.body)
        trained = False
        for statement in statements:
            if self._stops_on_eps(statement) and not trained:
                return
            if _trains(statement):
                trained = True
            elif trained and _assigns(statement, name):
                fa = self.ctx.analysis
                self.report(node, f"the body trains and only then re-measures `{fa.code(measured).strip()}`: the loop "
                                  f"exits after the iteration that passed `{fa.code(budget).strip()}`, so the model "
                                  f"it leaves has spent more than the budget; check the next step's ε before "
                                  f"taking it, or release the previous model")
                return

    def _checked_every_step(self, loop: cst.CSTNode, periodic: cst.If) -> bool:
        """The loop also stops on the privacy spent outside the periodic test (``if spent_delta >= delta:
        break`` after every step): the every-k check is then an experiment's own stop, not the budget's."""
        fa = self.ctx.analysis
        for sub in walk(loop):
            if not isinstance(sub, cst.If) or sub is periodic or fa.inside(sub, periodic) or _every_k(sub.test):
                continue
            if any(fa.inside(sub, p) and isinstance(p, cst.If) and _every_k(p.test) for p in walk(loop)
                   if isinstance(p, cst.If) and p is not sub):
                continue
            # a flag the periodic test sets (``if stop: break``) is still checked only every k steps
            tested = {w for n in walk(sub.test) if isinstance(n, cst.Name) and not _assigns(periodic, n.value)
                      for w in words(n.value)}
            stops = any(isinstance(s, (cst.Break, cst.Return)) for s in walk(sub.body, into_scopes=False))
            if stops and tested & (_SPENT_WORDS | _STOP_WORDS | {"delta", "budget", "privacy", "break", "spent"}):
                return True
        return False

    @staticmethod
    def _stops_on_eps(statement: cst.CSTNode) -> bool:
        """An ``if`` on an ε that breaks or returns."""
        for node in walk(statement, into_scopes=False):
            if isinstance(node, cst.If) and any(is_eps(n) for n in walk(node.test)) and any(
                    isinstance(s, (cst.Break, cst.Return)) for s in walk(node.body, into_scopes=False)):
                return True
        return False
