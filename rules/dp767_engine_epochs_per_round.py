"""DP767: a federated client calibrates its privacy engine for one round's epochs (``make_private_with_epsilon(
epochs=local_epochs)``) while every round trains that many epochs again."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

_CALIBRATE = frozenset({"make_private_with_epsilon"})
#: words of an epochs value that already spans the whole federated run
_RUN_WORDS = frozenset({"round", "rounds", "total", "global", "server", "overall", "all"})
#: method names a federated framework calls once per round
_ROUND_METHODS = frozenset({"fit", "train", "local_train", "local_update", "client_update", "update", "run_round",
                            "train_round", "on_round", "step"})


def _client_class(cls: cst.ClassDef) -> bool:
    bases = " ".join(dotted(b.value) or "" for b in cls.bases)
    methods = {f.name.value for f in cls.body.body if isinstance(f, cst.FunctionDef)} \
        if isinstance(cls.body, cst.IndentedBlock) else set()
    return "Client" in bases or "client" in cls.name.value.lower() or ("fit" in methods and "evaluate" in methods)



def _spans_run(value: cst.BaseExpression) -> bool:
    """Does the value name the whole run (``rounds * local_epochs``, ``cfg["total_epochs"]``)?"""
    text = " ".join(
        [n.value for n in walk(value) if isinstance(n, cst.Name)]
        + [n.value.strip("'\"") for n in walk(value) if isinstance(n, cst.SimpleString)]
        + [n.attr.value for n in walk(value) if isinstance(n, cst.Attribute)])
    return bool(set().union(*(words(w) for w in text.split()), set()) & _RUN_WORDS)

class EngineEpochsPerRound(Rule):
    id = "DP767"
    name = "engine-epochs-per-round"
    category = "general"
    severity = "error"
    summary = ("a federated client calibrates its privacy engine for one round's local epochs "
               "(`make_private_with_epsilon(epochs=local_epochs)`), but every round trains that many epochs again")
    rationale = (
        "Opacus' `make_private_with_epsilon(target_epsilon, target_delta, epochs=E)` chooses the noise "
        "multiplier so that E epochs of DP-SGD reach exactly the target ε. A federated client (a Flower "
        "`NumPyClient`, a class with `fit`/`evaluate`) runs E local epochs in each round's `fit`: the engine "
        "made once keeps accounting, so after R rounds the same data have seen R·E epochs and ε is far above "
        "the target; an engine made again inside `fit` restarts the accountant and spends the full target ε "
        "every round with no composition. Reported: the `epochs=` argument of `make_private_with_epsilon` in a "
        "federated client class, when the value does not mention the rounds (`rounds * local_epochs`, "
        "`total_epochs`). Not reported: calibration outside client classes (centralised training), epochs "
        "covering all rounds. Fix: calibrate for the whole run (`epochs=num_rounds * local_epochs`, or split "
        "the target ε across rounds) and keep one engine."
    )
    TRIGGERS = ("make_private_with_epsilon",)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A ``make_private_with_epsilon`` call with an ``epochs=`` keyword inside a class."""
        return facts.calls_any(_CALIBRATE) and any(
            k.arg == "epochs" for c in facts.calls if facts.call_lasts(c) & _CALIBRATE for k in c.keywords)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if not _client_class(node):
            return
        for call in walk(node.body):
            if not (isinstance(call, cst.Call) and call_name(call) in _CALIBRATE):
                continue
            # a per-round share of the budget (``target_epsilon=eps / rounds``) composes over the rounds
            if any(a.keyword is not None and a.keyword.value == "target_epsilon" and _spans_run(a.value)
                   for a in call.args):
                continue
            for arg in call.args:
                if arg.keyword is None or arg.keyword.value != "epochs":
                    continue
                if _spans_run(arg.value):
                    continue
                self.report(arg, "the privacy engine is calibrated for one round's local epochs, but the client "
                                 "trains that many epochs in every federated round: after R rounds ε is far above "
                                 "the target; calibrate for all rounds (`epochs=num_rounds * local_epochs`)")

    VALID = (
        # twin: calibrated for every round's epochs
        """
import flwr as fl
from opacus import PrivacyEngine
class DPClient(fl.client.NumPyClient):
    def __init__(self, model, optimizer, loader, cfg):
        self.engine = PrivacyEngine()
        self.model, self.optimizer, self.loader = self.engine.make_private_with_epsilon(
            module=model, optimizer=optimizer, data_loader=loader,
            epochs=cfg["num_rounds"] * cfg["local_epochs"],
            target_epsilon=cfg["epsilon"], target_delta=cfg["delta"], max_grad_norm=1.0)
    def fit(self, parameters, config):
        for _ in range(self.cfg["local_epochs"]):
            train_one_epoch(self.model, self.loader, self.optimizer)
        return get_weights(self.model), len(self.loader.dataset), {}
    def evaluate(self, parameters, config):
        return 0.0, 1, {}
""",
        # twin: a total-epochs variable computed from the rounds
        """
from opacus import PrivacyEngine
class HospitalClient:
    def setup(self, model, opt, loader, eps, delta, rounds, local_epochs):
        total_epochs = rounds * local_epochs
        return PrivacyEngine().make_private_with_epsilon(
            module=model, optimizer=opt, data_loader=loader, epochs=total_epochs,
            target_epsilon=eps, target_delta=delta, max_grad_norm=1.0)
""",
        # twin: the target ε is split across the rounds, each round's engine calibrated for its share
        """
from opacus import PrivacyEngine
class Client:
    def fit(self, model, optimizer, loader, config):
        engine = PrivacyEngine()
        model, optimizer, loader = engine.make_private_with_epsilon(
            module=model, optimizer=optimizer, data_loader=loader, epochs=self.local_epochs,
            target_epsilon=config["privacy"]["epsilon"] / config["federated"]["rounds"],
            target_delta=config["privacy"]["delta"], max_grad_norm=1.0)
        for _ in range(self.local_epochs):
            train_one_epoch(model, optimizer, loader)
        return model
""",
        # centralised training: one calibration for the epochs actually run
        """
from opacus import PrivacyEngine
def train(model, optimizer, loader, epochs, epsilon, delta):
    model, optimizer, loader = PrivacyEngine().make_private_with_epsilon(
        module=model, optimizer=optimizer, data_loader=loader, epochs=epochs,
        target_epsilon=epsilon, target_delta=delta, max_grad_norm=1.0)
    for _ in range(epochs):
        run_epoch(model, loader, optimizer)
""",
        # ordinary ML: a Flower client with no privacy engine
        """
import flwr as fl
class Client(fl.client.NumPyClient):
    def fit(self, parameters, config):
        for _ in range(config["epochs"]):
            train_one_epoch(self.model, self.loader)
        return get_weights(self.model), len(self.loader), {}
    def evaluate(self, parameters, config):
        return 0.0, 1, {}
""",
    )
    INVALID = (
        # engine made once in the client, calibrated for the local epochs of one round
        """
import flwr as fl
from opacus import PrivacyEngine
class DPClient(fl.client.NumPyClient):
    def __init__(self, model, optimizer, loader, cfg):
        self.engine = PrivacyEngine()
        self.model, self.optimizer, self.loader = self.engine.make_private_with_epsilon(
            module=model, optimizer=optimizer, data_loader=loader,
            epochs=cfg["local_epochs"],  # <-
            target_epsilon=cfg["epsilon"], target_delta=cfg["delta"], max_grad_norm=1.0)
    def fit(self, parameters, config):
        for _ in range(self.cfg["local_epochs"]):
            train_one_epoch(self.model, self.loader, self.optimizer)
        return get_weights(self.model), len(self.loader.dataset), {}
    def evaluate(self, parameters, config):
        return 0.0, 1, {}
""",
        # engine made again in every round's fit: the full target ε per round
        """
from opacus import PrivacyEngine
class SiteClient:
    def fit(self, parameters, config):
        set_weights(self.model, parameters)
        model, opt, loader = PrivacyEngine().make_private_with_epsilon(
            module=self.model, optimizer=self.opt, data_loader=self.loader,
            epochs=self.local_epochs,  # <-
            target_epsilon=self.eps, target_delta=self.delta, max_grad_norm=self.clip)
        for _ in range(self.local_epochs):
            train_one_epoch(model, loader, opt)
        return get_weights(model), len(loader), {}
""",
        # a literal number of epochs in a client with fit/evaluate
        """
from opacus import PrivacyEngine
class Participant:
    def __init__(self, net, opt, dl):
        self.net, self.opt, self.dl = PrivacyEngine().make_private_with_epsilon(
            module=net, optimizer=opt, data_loader=dl, epochs=5,  # <-
            target_epsilon=3.0, target_delta=1e-5, max_grad_norm=1.2)
    def fit(self, parameters, config):
        return train(self.net, self.dl, self.opt, epochs=5)
    def evaluate(self, parameters, config):
        return test(self.net)
""",
        # epochs from a params mapping, engine in a Flower client constructor
        """
import flwr as fl
from opacus import PrivacyEngine
class HospitalClient(fl.client.NumPyClient):
    def __init__(self, model, loader, params):
        self.engine = PrivacyEngine(secure_mode=False)
        m, o, self.loader = self.engine.make_private_with_epsilon(
            module=model.net, optimizer=model.opt, data_loader=loader,
            epochs=params["train_epochs"],  # <-
            target_epsilon=float(params["EPSILON"]), target_delta=float(params["DELTA"]),
            max_grad_norm=params["MAX_GRAD_NORM"])
""",
    )
