"""DP832: each client's noise std is divided by sqrt(number of clients) with no secure aggregation."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, refs, target_names, value_refs, walk, words
from dpcheck.rule import Rule

_SQRT = frozenset({"sqrt"})
_DRAWS = frozenset({"normal", "normal_", "randn", "randn_like", "gauss", "standard_normal", "gaussian",
                    "laplace", "Normal"})
#: words of a name counting the participants whose noisy contributions are summed
_PARTY_PLURAL = frozenset({"clients", "peers", "participants", "workers", "parties", "users", "devices",
                           "silos", "agents"})
_PARTY = frozenset({"client", "peer", "participant", "worker", "party", "user", "device", "silo", "agent"})
_COUNT = frozenset({"num", "n", "number", "count", "total", "k", "nb"})
#: words of a name in the noise scale being split
_SCALE_WORDS = frozenset({"noise", "sigma", "std", "stddev", "multiplier", "clip", "clipping", "bound",
                          "sensitivity", "scale", "z", "c"})
#: code that shares the noise among parties legitimately (only the sum is ever seen)
_SECURE = re.compile(r"secure[\s_-]*(agg|sum)|sec_?agg|secret[\s_-]*shar|pairwise[\s_-]*mask|skellam"
                     r"|distributed[\s_-]*(dp|discrete)|homomorphic|paillier", re.I)


def _party_count(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call) and call_name(expr) in ("len", "float", "int", "tensor", "as_tensor", "array") and expr.args:
        return _party_count(expr.args[0].value)
    name = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else None
    if name is None:
        return False
    w = words(name)
    return bool(w & _PARTY_PLURAL and (w & _COUNT or len(w) == 1 or w & {"participating", "active", "sampled"})
                or w & _PARTY and w & _COUNT)


#: words of a count naming only the clients taking part in this round (not the whole population)
_ROUND_COUNT = frozenset({"sampled", "selected", "chosen", "round"})


def _round_count(expr: cst.BaseExpression) -> bool:
    """The divisor counts this round's sampled clients (``client_num_per_round``, ``num_sampled_clients``)."""
    return any(words(r) & _ROUND_COUNT for r in value_refs(expr))


def _client_loop_stmts(fn: cst.FunctionDef) -> set[int]:
    """ids of the statements inside a loop over clients (``for c in client_indexes``) in ``fn`` itself."""
    inside: set[int] = set()
    for n in walk(fn.body, into_scopes=False):
        if isinstance(n, cst.For) and any(
                words(r) & (_PARTY | _PARTY_PLURAL) for r in refs(n.target) | value_refs(n.iter)):
            inside |= {id(m) for m in walk(n.body, into_scopes=False)}
    return inside


def _scale_operand(expr: cst.BaseExpression) -> bool:
    return any(words(r) & _SCALE_WORDS for r in value_refs(expr))


class ClientNoiseSplitBySqrtClients(Rule):
    id = "DP832"
    name = "client-noise-split-by-sqrt-clients"
    category = "general"
    severity = "error"
    summary = ("each client adds noise of std σ·C/√K (K clients) to its own update, which the server sees "
               "individually")
    rationale = (
        "Distributed noise — each of K parties adds N(0, σ²C²/K) so that the sum carries N(0, σ²C²) — is valid "
        "only when nobody sees a single party's contribution: secure aggregation or a trusted shuffler must "
        "hide every noisy update except the sum. When each client (or peer) sends its own noisy update to the "
        "server or to its group in the clear, each release carries only 1/√K of the noise the accountant's σ "
        "requires, so the reported ε is understated by about a factor √K per client. Reported: a noise std "
        "computed as `... / sqrt(num_clients)` (or `sqrt(C**2 * z**2 / num_clients)`, `/ K ** 0.5`) from a "
        "noise multiplier, a clip bound or a σ, used in a noise draw in the same function, in a file that "
        "mentions no secure aggregation. Fix: add the full std σ·C to each client's update, or implement "
        "secure aggregation so only the sum is revealed."
    )
    TRIGGERS = ("sqrt", "** 0.5", "**0.5")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a square root and a noise draw."""
        return facts.calls_any(_DRAWS) and (facts.calls_any(_SQRT) or bool(facts.binops(ast.Pow)))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if _SECURE.search(self.ctx.source) is not None:
            return
        body = list(walk(node.body, into_scopes=False))
        draw_stmts = [s for s in body if isinstance(s, cst.SimpleStatementLine) and any(
            isinstance(c, cst.Call) and call_name(c) in _DRAWS for c in walk(s))]
        if not draw_stmts:
            return
        drawn_refs: set[str] = set()
        for s in draw_stmts:
            drawn_refs |= refs(s)
        server_loop = _client_loop_stmts(node)
        for stmt in body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                split = self._split(small)
                if split is None:
                    continue
                # the server itself loops over this round's m sampled clients and adds σC/√m to each: the
                # noises sum to N(0, σ²C²) on the aggregate only it sees (central DP-FedAvg, simulated)
                if id(stmt) in server_loop and _round_count(self._divisor(split)):
                    continue
                used = stmt in draw_stmts
                if not used and isinstance(small, cst.Assign):
                    names: set[str] = set()
                    for t in small.targets:
                        names |= target_names(t.target)
                    used = bool(names & drawn_refs)
                if used:
                    self.report(split, "the noise std is divided by √(number of clients) as if only the sum "
                                       "of the noisy updates were seen; with no secure aggregation each client's "
                                       "release carries 1/√K of the noise σ requires: add the full σ·C per client")
                    return

    @staticmethod
    def _divisor(split: cst.CSTNode) -> cst.BaseExpression:
        if isinstance(split, cst.BinaryOperation):
            return split.right
        for d in walk(split):
            if isinstance(d, cst.BinaryOperation) and isinstance(d.operator, cst.Divide) and _party_count(d.right):
                return d.right
        return split  # pragma: no cover

    @staticmethod
    def _split(stmt: cst.CSTNode) -> cst.CSTNode | None:
        for n in walk(stmt):
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide):
                right = n.right
                if isinstance(right, cst.Call) and call_name(right) in _SQRT and right.args \
                        and _party_count(right.args[0].value) and _scale_operand(n.left):
                    return n
                if isinstance(right, cst.BinaryOperation) and isinstance(right.operator, cst.Power) \
                        and isinstance(right.right, cst.Float) and right.right.value == "0.5" \
                        and _party_count(right.left) and _scale_operand(n.left):
                    return n
            if isinstance(n, cst.Call) and call_name(n) in _SQRT and n.args:
                for d in walk(n.args[0].value):
                    if isinstance(d, cst.BinaryOperation) and isinstance(d.operator, cst.Divide) \
                            and _party_count(d.right) and _scale_operand(d.left):
                        return n
        return None

    VALID = (
        # twin: the full std on each client's update
        """
import torch
def local_update(model, clip, noise_multiplier, num_clients):
    std = clip * noise_multiplier
    for p in model.parameters():
        p.grad += torch.randn_like(p.grad) * std
""",
        # twin: the split is covered by secure aggregation
        """
import torch
def local_update(model, clip, noise_multiplier, num_clients, secure_aggregator):
    std = clip * noise_multiplier / torch.sqrt(torch.tensor(float(num_clients)))
    for p in model.parameters():
        p.grad += torch.randn_like(p.grad) * std
    return secure_aggregator.mask(model)
""",
        # the server noises the average of K clipped updates: std sigma*C/K is right there
        """
import numpy as np
def server_mean(updates, clip, sigma, num_clients):
    total = np.sum(updates, axis=0)
    return (total + np.random.normal(0, sigma * clip, total.shape)) / num_clients
""",
        # the server's own loop over the m clients sampled this round adds sigma*C/sqrt(m) to each update
        # and uses only their average: the noises sum to N(0, sigma^2 C^2), central DP simulated
        """
import numpy as np
def run_round(server, client_ids, global_w, sigma, clip, clients_per_round):
    deltas = []
    for cid in client_ids:
        delta = server.clients[cid].train(global_w) - global_w
        delta = delta * min(1.0, clip / np.linalg.norm(delta))
        delta = delta + np.random.normal(0, sigma * clip / np.sqrt(clients_per_round), delta.shape)
        deltas.append(delta)
    return global_w + np.mean(deltas, axis=0)
""",
        # ordinary ML: weight initialisation scaled by fan-in
        """
import numpy as np
def init_layer(n_in, n_out, num_workers):
    w = np.random.normal(0, 1.0, (n_in, n_out)) / np.sqrt(n_in)
    return w
""",
    )
    INVALID = (
        # twin of the server loop: the split uses the whole population while only m clients are sampled
        """
import numpy as np
def run_round(server, client_ids, global_w, sigma, clip, num_clients):
    deltas = []
    for cid in client_ids:
        delta = server.clients[cid].train(global_w) - global_w
        delta = delta * min(1.0, clip / np.linalg.norm(delta))
        delta = delta + np.random.normal(0, sigma * clip / np.sqrt(num_clients), delta.shape)  # <-
        deltas.append(delta)
    return global_w + np.mean(deltas, axis=0)
""",
        """
import torch
def local_update(model, clip, noise_multiplier, num_clients):
    std = clip * noise_multiplier / torch.sqrt(torch.tensor(float(num_clients)))  # <-
    for p in model.parameters():
        p.grad += torch.randn_like(p.grad) * std
""",
        """
import math, torch
def client_step(weights, clip_bound, noise_multiplier, n_clients):
    sd = math.sqrt(clip_bound ** 2 * noise_multiplier ** 2 / n_clients)  # <-
    return [w + torch.normal(0.0, sd, size=w.shape) for w in weights]
""",
        """
import numpy as np
def privatize_delta(delta, clip_norm, sigma, num_peers):
    delta = delta * min(1.0, clip_norm / np.linalg.norm(delta))
    return delta + np.random.normal(0, sigma * clip_norm / np.sqrt(num_peers), delta.shape)  # <-
""",
        """
import numpy as np
class Peer:
    def noisy(self, vec):
        noise_std = self.noise_multiplier * self.clip / self.num_participants ** 0.5  # <-
        return vec + np.random.normal(0, noise_std, vec.shape)
""",
    )
