"""DP505: a privacy engine / accountant created anew every round, so earlier rounds are never composed."""
from __future__ import annotations

import os

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, last_name, walk, words
from dpcheck.rule import Rule

#: constructors of an object that accumulates the privacy spent
_ACCOUNTANTS = frozenset({
    "PrivacyEngine", "RDPAccountant", "PRVAccountant", "GaussianAccountant", "GDPAccountant",
    "RdpAccountant", "PLDAccountant", "GaussianMomentsAccountant", "MomentsAccountant",
})
_ROUND_WORDS = frozenset({"round", "rounds", "epoch", "epochs", "comm", "communication", "iteration", "iterations"})
#: a federated client's method of these words runs once per round (``train``, ``update_model``, Flower's ``fit``)
_PER_ROUND_METHOD = frozenset({"train", "training", "update", "fit", "local"})
_TRAIN_CALL_WORDS = frozenset({"train", "training", "fit", "update", "backward", "local"})
_READ_WORDS = frozenset({"epsilon", "eps", "spent", "privacy", "dp"})
#: a parameter that is the current round (``global_round``, ``epoch``, ``rnd``), not a count of rounds
_ROUND_INDEX = frozenset({"round", "epoch", "rnd"})
_COUNT_WORDS = frozenset({"num", "n", "total", "max", "count", "rounds", "epochs", "per"})


def _ast_engine_to_helper(facts: AstFacts) -> bool:
    """(AST gate of ``_epsilon_returned``) ``engine = PrivacyEngine(…)`` and, in the same function,
    ``epsilon = helper(…, engine, …)``."""
    import ast

    from dpcheck.analysis.astnames import dotted as ast_dotted
    for node in facts.nodes(ast.Assign):
        value = node.value
        if not (isinstance(value, ast.Call) and (ast_dotted(value.func) or "").split(".")[-1] in _ACCOUNTANTS
                and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        engine, fn = node.targets[0].id, facts.enclosing_function(node)
        if fn is None:
            continue
        for sub in ast.walk(fn):
            if isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Call) and any(
                    isinstance(a, ast.Name) and a.id == engine for a in sub.value.args) and any(
                    isinstance(t, ast.Name) and words(t.id) & {"epsilon", "eps"}
                    for target in sub.targets for t in ast.walk(target)):
                return True
    return False


def _round_handler(fn: cst.FunctionDef) -> bool:
    """A Flower ``ClientApp`` handler (``@app.train()``, ``@app.fit()``): the framework calls it once per round."""
    for decorator in fn.decorators:
        expr = decorator.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        if isinstance(expr, cst.Attribute) and expr.attr.value in ("train", "fit"):
            return True
    return False


def _epsilon_returned(fn: cst.FunctionDef, engine: str) -> bool:
    """``epsilon = train(model, loader, privacy_engine, …)``: the engine handed to a helper whose result is kept
    under an ε name (the helper reads ε from it and returns it)."""
    for node in walk(fn, into_scopes=False):
        if not isinstance(node, cst.Assign) or not isinstance(node.value, cst.Call):
            continue
        targets = [t.target for t in node.targets]
        names = [last_name(e.value) for t in targets if isinstance(t, (cst.Tuple, cst.List)) for e in t.elements]
        names += [last_name(t) for t in targets if not isinstance(t, (cst.Tuple, cst.List))]
        if not any(n and words(n) & {"epsilon", "eps"} for n in names):
            continue
        if any(last_name(a.value) == engine for a in node.value.args):
            return True
    return False


def _round_loop(loop: cst.CSTNode) -> bool:
    """``for r in range(num_rounds)``, ``for epoch in …``, ``while round < R``."""
    if isinstance(loop, cst.For):
        names = [n for n in walk(loop.target)] + [n for n in walk(loop.iter)]
    elif isinstance(loop, cst.While):
        names = list(walk(loop.test))
    else:
        return False
    return any(isinstance(n, cst.Name) and words(n.value) & _ROUND_WORDS for n in names)


def _counts_rounds(expr: cst.BaseExpression) -> bool:
    """A divisor that is the number of rounds: ``num_rounds``, ``cfg.rounds``, ``config["fl"]["rounds"]``."""
    for node in walk(expr):
        if isinstance(node, cst.Name) and words(node.value) & _ROUND_WORDS:
            return True
        if isinstance(node, cst.SimpleString) and words(node.evaluated_value if isinstance(node.evaluated_value, str)
                                                          else "") & _ROUND_WORDS:
            return True
    return False


_TOTAL_WORDS = frozenset({"epsilon", "eps", "spent", "budget", "privacy"})


def _composes(loop: cst.CSTNode) -> bool:
    """The round loop adds each round's ε to a running total kept across rounds (``total_eps += round_eps``
    with ``total_eps`` never reset inside the loop): the rounds are composed by hand (basic composition)."""
    reset = {last_name(t.target) for n in walk(loop) if isinstance(n, cst.Assign) for t in n.targets}
    for node in walk(loop):
        if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign):
            name = last_name(node.target)
            if name is not None and words(name) & _TOTAL_WORDS and name not in reset:
                return True
    return False


def _engine_target(statement: cst.CSTNode) -> str | None:
    """The name an engine is stored in: ``engine = PrivacyEngine()``, ``model, opt, dl, privacy_engine = init(…)``."""
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return None
    target = statement.targets[0].target
    elements = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    value = statement.value
    if isinstance(value, cst.Call) and call_name(value) in _ACCOUNTANTS and len(elements) == 1:
        return last_name(elements[0])
    if isinstance(value, cst.Call):
        for element in elements:
            name = last_name(element)
            if name and {"privacy", "engine"} <= words(name):
                return name
    return None


class AccountantPerRound(Rule):
    id = "DP505"
    name = "accountant-per-round"
    category = "general"
    severity = "error"
    summary = "a PrivacyEngine / accountant is created anew each round: the ε read from it covers one round only"
    rationale = (
        "An accountant composes the mechanisms it has seen. Building `PrivacyEngine()` (or an "
        "RDP/PRV accountant) inside the round or epoch loop — or in a federated client's `train()`, "
        "which the server calls every round — starts each round's count at zero: the ε read from "
        "it is the cost of the last round alone, while the model (and the client's update) has "
        "been trained on the same records in every round. The reported ε undercounts by about the "
        "number of rounds. `make_private_with_epsilon(target_epsilon=budget)` on a fresh engine each "
        "round (in a client's `update_model`/`fit`/`local_train`) spends the whole budget every round. "
        "Not reported: an engine built once before the loop, an engine built per round whose ε is "
        "never read or targeted, a client's per-round engine targeted at the total divided by the number of "
        "rounds (basic composition), a client method in a file no import can name that nothing calls, a binary search that builds one accountant per candidate σ and "
        "replays every step into it (nothing trained in that loop), code with no DP context. "
        "Fix: create the engine (or accountant) once per client and reuse it across rounds, or "
        "compose the per-round costs explicitly."
    )
    TRIGGERS = ("Accountant", "PrivacyEngine", "privacy_engine")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding reads ε from an engine made in a loop or in a client's training method: an engine assigned
        in a function that later reads ε from it."""
        from dpcheck.analysis.astshapes import engine_read_back

        return engine_read_back(facts, _ACCOUNTANTS, _READ_WORDS) or _ast_engine_to_helper(facts)

    VALID = (
        # twin of the per-round local update: the engine is made once in __init__ and read after each round
        """
from opacus import PrivacyEngine
class LocalTrainer:
    def __init__(self, model, optimizer, loader, sigma):
        self.engine = PrivacyEngine()
        self.model, self.optimizer, self.loader = self.engine.make_private(
            module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=sigma, max_grad_norm=1.0)
    def local_step(self, current_round, delta):
        for x, y in self.loader:
            self.optimizer.step()
        return self.engine.get_epsilon(delta)
""",
        # a whole training run: handed the number of epochs, called once
        """
from opacus import PrivacyEngine
def train_private(model, optimizer, loader, num_epochs, sigma, delta):
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=sigma, max_grad_norm=1.0)
    for epoch in range(num_epochs):
        for x, y in loader:
            optimizer.step()
    return engine.get_epsilon(delta)
def main(model, optimizer, loader):
    eps = train_private(model, optimizer, loader, 20, 1.1, 1e-5)
    for epoch in range(3):
        evaluate(model, epoch)
""",
        # twin: the Flower client keeps one engine across rounds
        """
import flwr as fl
from opacus import PrivacyEngine
class LDPClient(fl.client.NumPyClient):
    def __init__(self, net, opt, loader, eps):
        self.engine = PrivacyEngine()
        self.model, self.opt, self.loader = self.engine.make_private_with_epsilon(module=net, optimizer=opt,
            data_loader=loader, target_epsilon=eps, target_delta=1e-5, epochs=30, max_grad_norm=1.0)
    def fit(self, parameters, config):
        self.train(self.model, self.opt, self.loader)
        return self.get_parameters(config), len(self.loader), {"epsilon": self.engine.get_epsilon(1e-5)}
""",
        # built once, before the rounds
        """
from opacus import PrivacyEngine
def run(model, optimizer, loader, rounds, sigma, delta):
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=sigma, max_grad_norm=1.0)
    for rnd in range(rounds):
        train_one_round(model, optimizer, loader)
        print(rnd, engine.get_epsilon(delta))
""",
        # one engine per client, built in __init__
        """
from opacus import PrivacyEngine
class Client:
    def __init__(self, model, optimizer, loader, sigma):
        self.privacy_engine = PrivacyEngine()
        self.model, self.optimizer, self.loader = self.privacy_engine.make_private(
            module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=sigma, max_grad_norm=1.0)

    def train(self, delta):
        for x, y in self.loader:
            self.optimizer.step()
        return self.privacy_engine.get_epsilon(delta)
""",
        # a loop over clients at setup time
        """
from opacus import PrivacyEngine
def setup(clients, sigma):
    for client in clients:
        client.engine = PrivacyEngine()
        client.model, client.opt, client.loader = client.engine.make_private(
            module=client.model, optimizer=client.opt, data_loader=client.loader, noise_multiplier=sigma,
            max_grad_norm=1.0)
""",
        # a fresh engine per round whose epsilon is never read (accounted elsewhere)
        """
from opacus import PrivacyEngine
def run(model, optimizer, loader, rounds, sigma):
    for rnd in range(rounds):
        engine = PrivacyEngine()
        model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                       noise_multiplier=sigma, max_grad_norm=1.0)
        train_one_round(model, optimizer, loader)
""",
        # qiuqiu035: a binary search over noise multipliers, each candidate replayed through all rounds
        """
from opacus.accountants import RDPAccountant
def calibrate(target_epsilon, delta, q, num_rounds, max_iterations=50):
    low, high = 0.1, 10.0
    for iteration in range(max_iterations):
        mid = (low + high) / 2
        accountant = RDPAccountant()
        for round_idx in range(num_rounds):
            accountant.step(noise_multiplier=mid, sample_rate=q)
        computed_epsilon = accountant.get_epsilon(delta)
        if computed_epsilon > target_epsilon:
            low = mid
        else:
            high = mid
    return (low + high) / 2
""",
        # HqChen's fix: the engine is built once per client and calibrated for all rounds
        """
from opacus import PrivacyEngine
class client(object):
    def __init__(self, model, optimizer, loader, total_epochs, budget, delta):
        self.privacy_engine = PrivacyEngine()
        self.model, self.optimizer, self.loader = self.privacy_engine.make_private_with_epsilon(
            module=model, optimizer=optimizer, data_loader=loader, epochs=total_epochs,
            target_epsilon=budget, target_delta=delta, max_grad_norm=1.0)

    def update_model(self, global_round):
        for x, y in self.loader:
            self.optimizer.step()
""",
        # Blockchain-Adaptive-DP-FL's main_experiment.py: a fresh engine per round, its ε added to a running total
        """
from opacus import PrivacyEngine
def run(model, optimizer, loaders, num_rounds, sigma, delta):
    cumulative_epsilon = 0.0
    for rnd in range(num_rounds):
        round_epsilons = []
        for loader in loaders:
            engine = PrivacyEngine()
            model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                noise_multiplier=sigma, max_grad_norm=1.0)
            train(model, optimizer, loader)
            round_epsilons.append(engine.get_epsilon(delta))
        cumulative_epsilon += max(round_epsilons)
    return cumulative_epsilon
""",
        # Cypher9802 client.py: each round's engine is calibrated to the total divided by the number of rounds
        """
from opacus import PrivacyEngine
class Client:
    def local_train(self, model, optimizer, config):
        privacy_engine = PrivacyEngine()
        model, optimizer, loader = privacy_engine.make_private_with_epsilon(module=model, optimizer=optimizer,
            data_loader=self.loader, epochs=1, target_epsilon=config["privacy"]["epsilon"] / config["fl"]["rounds"],
            target_delta=1e-5, max_grad_norm=1.0)
        for x, y in loader:
            optimizer.step()
        self.privacy_spent = privacy_engine.get_epsilon(1e-5)
""",
    )

    INVALID = (
        # (g2 h41) Flower ClientApp: the handler runs once per round, builds a fresh engine, and the ε the helper
        # reads from it is reported as the client's ε
        """
from flwr.clientapp import ClientApp
from opacus import PrivacyEngine
app = ClientApp()
@app.train()
def handle(msg, context):
    model, optimizer, loader = build(msg, context)
    engine = PrivacyEngine(secure_mode=False)  # <-
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=1.0, max_grad_norm=1.0)
    epsilon = train(model, loader, engine, optimizer, 1e-5)
    return reply(model, epsilon)
""",
        # (g2 h41) a client's fit makes the engine and hands it to the training helper, which returns ε
        """
from opacus import PrivacyEngine
class FlowerClient:
    def fit(self, parameters, config):
        set_weights(self.model, parameters)
        privacy_engine = PrivacyEngine()  # <-
        model, optimizer, self.loader = privacy_engine.make_private(
            module=self.model, optimizer=self.optimizer, data_loader=self.loader,
            noise_multiplier=self.sigma, max_grad_norm=1.0)
        eps, loss = train(model, self.loader, privacy_engine, optimizer, self.delta)
        return get_weights(model), len(self.loader), {"epsilon": eps}
""",
        # a local-update class (no "client" in its name) handed the global round builds a fresh engine
        """
from opacus import PrivacyEngine
class LocalUpdate:
    def update_weights(self, model, global_round):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        privacy_engine = PrivacyEngine(model, batch_size=64, sample_size=600, noise_multiplier=1.1,  # <-
                                       max_grad_norm=1.0)
        privacy_engine.attach(optimizer)
        for x, y in self.loader:
            optimizer.step()
        eps, alpha = optimizer.privacy_engine.get_privacy_spent(1e-5)
        return model.state_dict(), eps
""",
        # a plain function the server loop calls once per round
        """
from opacus import PrivacyEngine
def local_train(model, optimizer, loader, sigma):
    engine = PrivacyEngine()  # <-
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=sigma, max_grad_norm=1.0)
    for x, y in loader:
        optimizer.step()
    return engine.get_epsilon(1e-5)
def server(models, optimizers, loaders, num_rounds):
    for rnd in range(num_rounds):
        for m, o, l in zip(models, optimizers, loaders):
            print(local_train(m, o, l, 1.0))
""",
        # the same loop whose total is reset every round, or overwritten by the last round's ε
        """
from opacus import PrivacyEngine
def run(model, optimizer, loaders, num_rounds, sigma, delta):
    spent_eps = 0.0
    for rnd in range(num_rounds):
        total_eps = 0.0
        for loader in loaders:
            engine = PrivacyEngine()  # <-
            model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                noise_multiplier=sigma, max_grad_norm=1.0)
            train(model, optimizer, loader)
            total_eps += engine.get_epsilon(delta)
        spent_eps = total_eps
    return spent_eps
""",
        # a Flower client (an acronym before "Client") building its engine in fit(), called every round
        """
import flwr as fl
from opacus import PrivacyEngine
class LDPClient(fl.client.NumPyClient):
    def fit(self, parameters, config):
        engine = PrivacyEngine()  # <-
        model, opt, loader = engine.make_private_with_epsilon(module=self.net, optimizer=self.opt,
            data_loader=self.loader, target_epsilon=self.eps, target_delta=1e-5, epochs=1, max_grad_norm=1.0)
        self.train(model, opt, loader)
        return self.get_parameters(config), len(loader), {"epsilon": engine.get_epsilon(1e-5)}
""",
        # HqChen2021 client.py: each round's update_model calibrates a fresh engine to the whole budget
        """
from opacus import PrivacyEngine
class client(object):
    def update_model(self, global_round, model_weights, privacy_budget):
        privacy_engine = PrivacyEngine()  # <-
        model = self.load_weights(Initialize_Model(self.args), model_weights)
        optimizer = torch.optim.SGD(model.parameters(), lr=self.args.lr)
        model, optimizer, train_loader = privacy_engine.make_private_with_epsilon(
            module=model, optimizer=optimizer, data_loader=self.train_loader, epochs=self.args.local_ep,
            target_epsilon=privacy_budget, target_delta=self.DELTA, max_grad_norm=1.0)
        for x, y in train_loader:
            optimizer.step()
        return model.state_dict()
""",
        # a fresh engine calibrated to the target in every round of the server loop
        """
from opacus import PrivacyEngine
def run(clients, rounds, target_eps, delta):
    for rnd in range(rounds):
        for c in clients:
            engine = PrivacyEngine()  # <-
            c.model, c.opt, c.loader = engine.make_private_with_epsilon(
                module=c.model, optimizer=c.opt, data_loader=c.loader, epochs=1,
                target_epsilon=target_eps, target_delta=delta, max_grad_norm=1.0)
            c.train_one_round()
""",
        # PFLlib clientavg.py: a helper builds PrivacyEngine() in the per-round train()
        """
class clientAVG(Client):
    def train(self):
        trainloader = self.load_train_data()
        if self.privacy:
            self.model, self.optimizer, trainloader, privacy_engine = \\
                initialize_dp(self.model, self.optimizer, trainloader, self.dp_sigma)  # <-
        for epoch in range(self.local_epochs):
            for x, y in trainloader:
                self.optimizer.step()
        if self.privacy:
            eps, DELTA = get_dp_params(privacy_engine)
            print(f"Client {self.id}", f"epsilon = {eps:.2f}, sigma = {DELTA}")
""",
        """
from opacus import PrivacyEngine
def federated(model, optimizer, loader, num_rounds, sigma, delta):
    for rnd in range(num_rounds):
        engine = PrivacyEngine()  # <-
        model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                       noise_multiplier=sigma, max_grad_norm=1.0)
        train_one_round(model, optimizer, loader)
        print(rnd, engine.get_epsilon(delta))
""",
        """
from opacus.accountants import RDPAccountant
def train(model, loader, epochs, sigma, q, delta):
    for epoch in range(epochs):
        accountant = RDPAccountant()  # <-
        for x, y in loader:
            model.step(x, y)
            accountant.step(noise_multiplier=sigma, sample_rate=q)
        print(epoch, accountant.get_epsilon(delta))
""",
        """
from opacus import PrivacyEngine
class FedClient:
    def local_train(self, delta):
        privacy_engine = PrivacyEngine()  # <-
        self.model, self.opt, self.loader = privacy_engine.make_private(
            module=self.model, optimizer=self.opt, data_loader=self.loader, noise_multiplier=1.1, max_grad_norm=1.0)
        for x, y in self.loader:
            self.opt.step()
        self.epsilon = privacy_engine.get_epsilon(delta)
""",
        # the twin: the budget is halved, not shared out over the rounds, and a fresh engine spends it each round
        """
from opacus import PrivacyEngine
class Client:
    def local_train(self, model, optimizer, config):
        privacy_engine = PrivacyEngine()  # <-
        model, optimizer, loader = privacy_engine.make_private_with_epsilon(module=model, optimizer=optimizer,
            data_loader=self.loader, epochs=1, target_epsilon=config["privacy"]["epsilon"] / 2,
            target_delta=1e-5, max_grad_norm=1.0)
        for x, y in loader:
            optimizer.step()
        self.privacy_spent = privacy_engine.get_epsilon(1e-5)
""",
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        engine = _engine_target(node)
        if engine is None:
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or not self._epsilon_read(fn, engine, fa.line_of(node)):
            return
        loops = [loop for loop in fa.enclosing_loops(node) if _round_loop(loop)]
        if loops and (self._replays(loops[0], engine) or any(_composes(loop) for loop in loops)):
            return
        if loops:
            where = "inside the loop on line " + str(fa.line_of(loops[0]))
        else:
            cls = fa.enclosing_class(node)
            # ``DPClient``, ``FlowerClient``, ``client``: camel case after an acronym is one word to ``words``
            client_method = (cls is not None and "client" in cls.name.value.lower()
                             and bool(words(fn.name.value) & _PER_ROUND_METHOD)) or _round_handler(fn)
            if not client_method and not self._runs_per_round(fn):
                return
            if self._targets_round_share(fn, engine) or self._unreachable_method(fn):
                return
            owner = f"{cls.name.value}.{fn.name.value}" if cls is not None else fn.name.value
            where = f"in `{owner}`, which runs once per round"
        self.report(node.value, f"`{engine}` is created {where}, and the ε read from it covers only what ran since: "
                                f"every earlier round is dropped from the accounting; create it once and reuse it")

    def _runs_per_round(self, fn: cst.FunctionDef) -> bool:
        """A training function that runs once per round: it is handed the round (``update_weights(self, model,
        global_round)``, ``train(model, epoch)``), or this module calls it inside a round loop
        (``for epoch in range(args.epochs): ... local.update_weights(model, epoch)``)."""
        if not words(fn.name.value) & _TRAIN_CALL_WORDS:
            return False
        params = [words(p.name.value) for p in fn.params.params]
        if any(ws & _ROUND_INDEX and not ws & _COUNT_WORDS for ws in params):
            return True
        name = fn.name.value
        fa = self.ctx.analysis
        method = fa.enclosing_class(fn) is not None
        required = [p for p in fn.params.params if p.default is None][1 if method else 0:]

        def calls_fn(call: cst.Call) -> bool:
            # ``model.train()`` (torch's mode switch) is not a call of a ``train(self, loader, config)`` method
            if call_name(call) != name or fa.inside(call, fn):
                return False
            if isinstance(call.func, cst.Name):
                return not method
            return bool(required) and len(call.args) >= len(required)

        return any(isinstance(n, cst.Call) and calls_fn(n) and any(_round_loop(loop) for loop in fa.enclosing_loops(n))
                   for n in walk(self.ctx.module))

    def _targets_round_share(self, fn: cst.FunctionDef, engine: str) -> bool:
        """``engine.make_private_with_epsilon(target_epsilon=total / n_rounds)``: each round's engine is
        calibrated to the round's share of the total, so the rounds add up to the total by basic composition
        and no round escapes the budget."""
        for node in walk(fn, into_scopes=False):
            if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
                    and last_name(node.func.value) == engine):
                continue
            for arg in node.args:
                value = arg.value
                if (arg.keyword is not None and arg.keyword.value == "target_epsilon"
                        and isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide)
                        and _counts_rounds(value.right)):
                    return True
        return False

    def _unreachable_method(self, fn: cst.FunctionDef) -> bool:
        """The method sits in a file no import can name (``client (conflicted copy).py``) and nothing in the
        file calls it: no server reaches it once per round."""
        stem, extension = os.path.splitext(os.path.basename(self.ctx.path))
        if extension != ".py" or stem.isidentifier():
            return False
        name = fn.name.value
        return not any(isinstance(n, cst.Call) and call_name(n) == name for n in walk(self.ctx.module))

    def _replays(self, loop: cst.CSTNode, engine: str) -> bool:
        """A loop that only simulates: each candidate (a binary search over noise multipliers) gets a fresh
        accountant stepped through every round in an inner loop, and nothing is trained in the loop."""
        if self.ctx.analysis.trains(loop):
            return False
        replayed = False
        for node in walk(loop, into_scopes=False):
            if not isinstance(node, cst.Call):
                continue
            receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
            if last_name(receiver) == engine:
                if call_name(node) in ("step", "compose", "accumulate_privacy_spending") and any(
                        isinstance(inner, (cst.For, cst.While)) and self.ctx.analysis.inside(node, inner)
                        for inner in walk(loop, into_scopes=False) if inner is not loop):
                    replayed = True
            elif words(call_name(node)) & _TRAIN_CALL_WORDS or call_name(node) in ("make_private", "make_private_with_epsilon"):
                return False
        return replayed

    @staticmethod
    def _epsilon_read(fn: cst.FunctionDef, engine: str, after: int) -> bool:
        """Is ε read from ``engine`` later in ``fn`` (``engine.get_epsilon(…)``, ``get_dp_params(engine)``)?"""
        for node in walk(fn, into_scopes=False):
            if not isinstance(node, cst.Call) or not words(call_name(node)) & _READ_WORDS:
                continue
            func = node.func
            receiver = func.value if isinstance(func, cst.Attribute) else None
            while isinstance(receiver, cst.Attribute):
                if last_name(receiver) == engine:
                    break
                receiver = receiver.value
            if last_name(receiver) == engine or any(last_name(a.value) == engine for a in node.args):
                return True
        return _epsilon_returned(fn, engine)
