"""DP666: a client participation rate used as the per-step sampling rate of an example-level accountant."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astnames import dotted as ast_dotted
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: words of a rate that is the fraction of clients picked per round
_COHORT_WORDS = frozenset({"participation", "clients", "client", "frac", "fraction", "cohort", "users", "parties",
                           "devices", "workers", "silos"})
#: accountant calls taking the sampling rate first (tf-privacy/Opacus RDP, or a project's own ``rdp_gaussian``)
_ACCOUNTANT_WORDS = frozenset({"rdp", "renyi", "moments", "epsilon", "eps", "privacy", "accountant"})
#: what a loop over one client's local batches iterates
_LOADER_WORDS = frozenset({"loader", "loaders", "dataloader", "batches", "batch", "iterator", "minibatches"})


def _key_words(expr: cst.BaseExpression) -> set[str]:
    """Words of a rate's name or config key: ``cfg["participation_rate"]``, ``args.frac``, ``client_fraction``."""
    out: set[str] = set()
    for node in walk(expr):
        if isinstance(node, cst.SimpleString):
            out |= words(node.value.strip("'\""))
        elif isinstance(node, (cst.Name, cst.Attribute)):
            out |= words((dotted(node) or "").replace(".", "_"))
    return out


def _accountant(name: str) -> bool:
    return bool(words(name) & _ACCOUNTANT_WORDS) or name in ("step", "compute_rdp")


def _loader_named(iterated: str | None) -> bool:
    return bool(words((iterated or "").replace(".", "_")) & _LOADER_WORDS)


def _cohort_rate(expr: cst.BaseExpression) -> bool:
    pieces = _key_words(expr)
    return bool(pieces & _COHORT_WORDS) and not pieces & {"batch", "lot", "examples", "samples", "records"}


class ParticipationRatePerStep(Rule):
    id = "DP666"
    name = "participation-rate-per-step"
    category = "general"
    severity = "error"
    summary = ("the fraction of clients picked per round is handed to an example-level accountant whose steps "
               "count the clients' local batches, as if each local step Poisson-sampled examples at that rate")
    rationale = (
        "In federated DP-SGD the clients picked in a round train on all their examples, in fixed shuffled local "
        "batches, every local epoch. The amplification an RDP accountant credits for a rate q holds only for the "
        "sampling it describes: q = clients per round / clients is the chance a client (with all its records) "
        "takes part in a round, which amplifies a per-round, user-level mechanism with one noisy aggregate per "
        "round, not the local noisy steps of one client. An accountant given `q = cfg['participation_rate']` and "
        "a step count incremented for every local batch (`for _ in loader: steps += 1`) treats each local step "
        "as a fresh Poisson sample of examples at that rate, so the ε it reports is far too small. "
        "Reported: an accountant call (`compute_rdp`, a project's `rdp_gaussian`, `get_privacy_spent` helpers) "
        "whose rate is a client participation rate (by name or config key, directly or through one assignment) "
        "and whose step count is incremented inside a loop over a client's loader or batches. Not reported: the "
        "same rate with one step per round (user-level accounting of a server-side Gaussian aggregate), an "
        "example rate (`batch_size / n_local`). Bad: `q = cfg['participation_rate']; rdp_gaussian(q, sigma, "
        "local_steps)`. Good: account each client's local training with its own rate (`batch_size / n_client`, "
        "Poisson-sampled) and compose, or add the noise at the server and count one step per round."
    )
    TRIGGERS = ("participation", "frac", "client")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is an accountant call with arguments and a ``for`` loop over a loader or batches (the local
        steps it counts)."""
        if not any(isinstance(loop.iter, ast.Subscript) and _loader_named(ast_dotted(loop.iter.value))
                   or _loader_named(ast_dotted(loop.iter))  # type: ignore[attr-defined]
                   for loop in facts.nodes(ast.For, ast.AsyncFor)):
            return False
        return any((c.args or c.keywords) and any(_accountant(n) for n in facts.call_lasts(c)) for c in facts.calls)

    VALID = (
        # twin: the participation rate with one step per round (user-level, noise added to the aggregate)
        """
def run(server, clients, cfg, rdp_gaussian):
    rounds_done = 0
    for r in range(cfg["rounds"]):
        picked = server.pick(clients, cfg["participation_rate"])
        server.noisy_aggregate([c.update() for c in picked], cfg["noise_multiplier"])
        rounds_done += 1
    q = cfg["participation_rate"]
    return rdp_gaussian(q, cfg["noise_multiplier"], rounds_done)
""",
        # twin: the example-level accountant gets the local example rate
        """
from tensorflow_privacy import compute_rdp
def account(loaders, cid, batch_size, n_local, sigma, orders):
    steps = 0
    for _ in loaders[cid]:
        steps += 1
    q = batch_size / n_local
    return compute_rdp(q, sigma, steps, orders)
""",
        # a client fraction used only to pick clients; the accountant sees the local example rate
        """
from tensorflow_privacy import compute_rdp
def fed(clients, frac, local_rate, sigma, orders):
    steps = 0
    for c in clients[: int(frac * len(clients))]:
        for _ in c.loader:
            steps += 1
    return compute_rdp(local_rate, sigma, steps, orders)
""",
        # ordinary ML: a participation rate logged next to per-batch loss bookkeeping, no accountant
        """
def log_round(cfg, loader, model):
    seen = 0
    for xb, yb in loader:
        seen += 1
    return {"participation": cfg["participation_rate"], "batches": seen, "loss": model.loss}
""",
    )
    INVALID = (
        """
def train(cfg, loaders, sel, rdp_gaussian):
    steps = 0
    for cid in sel:
        for _ in loaders[cid]:
            steps += 1
    q = cfg["participation_rate"]
    return rdp_gaussian(q, cfg["noise_multiplier"], steps)  # <-
""",
        """
from tensorflow_privacy import compute_rdp, get_privacy_spent
def federated(clients, args, orders):
    local_steps = 0
    for c in clients:
        for epoch in range(args.local_ep):
            for images, labels in c.train_loader:
                c.dp_step(images, labels)
                local_steps += 1
    rdp = compute_rdp(args.frac, args.noise_multiplier, local_steps, orders)  # <-
    return get_privacy_spent(orders, rdp, target_delta=1e-5)
""",
        """
from opacus.accountants import RDPAccountant
def account(client_fraction, sigma, loaders):
    acct = RDPAccountant()
    for loader in loaders:
        for batch in loader:
            acct.step(noise_multiplier=sigma, sample_rate=client_fraction)  # <-
    return acct.get_epsilon(1e-5)
""",
        """
from tensorflow_privacy import compute_rdp
def epsilon_after(participation_rate, sigma, client_loaders, orders):
    rate = participation_rate
    n = 0
    for loader in client_loaders:
        for _ in loader:
            n += 1
    return compute_rdp(q=rate, noise_multiplier=sigma, steps=n, orders=orders)  # <-
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if not _accountant(name):
            return
        rate, steps = self._rate_and_steps(node, name)
        if rate is None:
            return
        fa = self.ctx.analysis
        shown = rate
        if isinstance(rate, cst.Name) and not _cohort_rate(rate):
            value = fa.value_of(rate)
            if value is None or not isinstance(value, cst.BaseExpression):
                return
            rate = value
        if not _cohort_rate(rate):
            return
        if name == "step":
            # ``accountant.step(sample_rate=…)`` run once per local batch
            if not any(self._loader_loop(lp) for lp in fa.enclosing_loops(node, comprehensions=False)):
                return
        elif not (isinstance(steps, cst.Name) and self._counted_per_batch(node, steps.value)):
            return
        self.report(node, f"`{fa.code(shown).strip()}` is the fraction of clients picked per round, but the "
                          "accountant charges it as the per-step Poisson rate of the clients' local batches: a "
                          "picked client trains on all its examples every local epoch, so the reported ε is far "
                          "too small; account local steps with the example rate (batch / local n) or count one "
                          "server-side noisy aggregate per round")

    @staticmethod
    def _rate_and_steps(node: cst.Call, name: str) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None]:
        keyed = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        rate = next((keyed[k] for k in ("q", "sample_rate", "sampling_rate", "sampling_probability") if k in keyed),
                    None)
        if rate is None and name != "step" and positional:
            rate = positional[0]
        steps = keyed.get("steps") or keyed.get("num_steps") or (positional[2] if len(positional) > 2 else None)
        return rate, steps

    def _loader_loop(self, loop: cst.CSTNode) -> bool:
        if not isinstance(loop, cst.For):
            return False
        it = loop.iter
        if isinstance(it, cst.Subscript):
            it = it.value
        return _loader_named(dotted(it))

    def _counted_per_batch(self, node: cst.Call, steps: str) -> bool:
        """``steps += 1`` inside a loop over a loader in the accountant's function."""
        fn = self.ctx.analysis.enclosing_function(node) or self.ctx.module
        for sub in walk(fn):
            if isinstance(sub, cst.AugAssign) and isinstance(sub.target, cst.Name) and sub.target.value == steps \
                    and isinstance(sub.operator, cst.AddAssign):
                if any(self._loader_loop(lp) for lp in self.ctx.analysis.enclosing_loops(sub, comprehensions=False)):
                    return True
        return False
