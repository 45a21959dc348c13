"""DP560: a federated aggregate of DP client models weighted by the clients' exact record counts."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import ident
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.rule import Rule

#: words of a name that counts records (``n_samples``, ``num_examples``)
_RECORD_PLURALS = frozenset({"samples", "examples", "records", "datapoints", "rows"})
_COUNT_WORDS = frozenset({"size", "sizes", "num", "number", "count", "counts", "n", "len", "lens", "length",
                          "lengths", "nb", "cnt"})
_RECORD_WORDS = frozenset({"sample", "samples", "data", "dataset", "train", "training", "example", "examples",
                           "record", "records", "local", "trainset", "rows", "datapoints"})
#: a count that is not one client's private record count: held-out sets, batches, the number of
#: clients, a public cap, a DP-released count, a configured value
_NOT_CLIENT_COUNT = frozenset({"test", "val", "valid", "validation", "eval", "evaluation", "dev", "holdout",
                               "batch", "batches", "microbatch", "clients", "users", "workers", "silos", "devices",
                               "classes", "class", "features", "feature", "steps", "epochs", "rounds", "iterations",
                               "iters", "noisy", "noised", "dp", "private", "public", "max", "min", "cap", "bound",
                               "clip", "synthetic", "synth", "fake", "generated", "selected", "sampled_clients",
                               "tokens", "labels", "label", "layers", "params", "queries", "dims", "dim",
                               "teachers", "groups", "clusters", "per", "expected"})
_CONFIG_OWNERS = frozenset({"args", "cfg", "config", "conf", "opt", "opts", "flags", "hparams", "hp", "settings",
                            "options", "params", "kwargs"})
#: the thing a weight multiplies: a model, its parameters or an update
_MODEL_WORDS = frozenset({"param", "params", "parameters", "model", "models", "update", "updates", "grad", "grads",
                          "gradient", "gradients", "state", "weights", "delta", "deltas", "theta", "w", "coef",
                          "embedding", "embeddings", "locals", "dict", "net", "diff", "diffs"})
#: a quantity averaged for reporting, not released as the model
_METRIC_WORDS = frozenset({"loss", "losses", "acc", "accuracy", "correct", "metric", "metrics", "error", "errors",
                           "score", "scores", "auc", "f1", "precision", "recall", "perplexity", "time", "mse",
                           "rmse", "mae", "log", "logs", "history", "stats"})
_EVAL_FUNCTION_WORDS = frozenset({"test", "eval", "evaluate", "evaluation", "validate", "validation", "metrics",
                                  "report", "log", "print", "plot", "summary", "summarize"})
#: privacy or noise named in the file's text
_PRIVACY_TEXT = re.compile(r"(?i)priva|noise|noisy|epsilon|opacus|accountant|laplace|gaussian|clip|sigma|\bdp\b")
#: the file is federated code: it names clients, silos, a server or an aggregation
_FEDERATED_TEXT = re.compile(r"(?i)client|federat|fedavg|silo|server|aggregat|parties|participant")
#: a function name that says DP: ``train_DPFedAvg``, ``dp_client_update``, ``private_train`` (not ``DDP``)
_DP_NAME = re.compile(r"(?<![D])DP(?!M)|(?:^|_)[lc]?dp(?:_|$)|(?i:priva|noisy|noised)")
_PRIVACY_WORDS = frozenset({"noise", "noisy", "sigma", "epsilon", "eps", "clip", "clipping", "clipped", "privacy",
                            "private", "dp", "accountant", "laplace", "gaussian", "multiplier", "engine"})
#: a docstring describing a non-private control or baseline
_NON_PRIVATE = re.compile(r"(?i)\bnon[- ]?(?:private|dp)\b|\bwithout (?:differential )?privacy\b|\bno[- ]dp\b")
_SUMS = frozenset({"sum", "nansum", "fsum"})
#: methods that reshape or convert an array of counts without changing the counts
_SHAPE_ONLY = frozenset({"reshape", "astype", "flatten", "ravel", "squeeze", "unsqueeze", "view", "float", "double",
                         "long", "int", "to", "cpu", "numpy", "tolist", "copy", "clone"})
_WRAPPERS = frozenset({"int", "float", "round", "abs", "tensor", "Tensor", "array", "asarray", "list", "tuple"})


def _pieces(name: str | None) -> frozenset[str]:
    if not name:
        return frozenset()
    return frozenset(w.lower() for part in name.split(".") for w in words(part))


def _count_named(name: str | None) -> bool:
    """``n_samples``, ``num_train_samples``, ``local_sample_number``, ``client.data_size``, ``sample_counts``."""
    if not name:
        return False
    parts = name.split(".")
    if len(parts) > 1 and _pieces(".".join(parts[:-1])) & _CONFIG_OWNERS:
        return False  # ``args.data_size``: a configured setting
    last = frozenset(w.lower() for w in words(parts[-1]))
    if last & _NOT_CLIENT_COUNT or _pieces(name) & {"test", "val", "eval", "noisy", "noised", "public"}:
        return False
    if last & _RECORD_PLURALS and (last & _COUNT_WORDS or len(last) <= 3):
        return True
    return bool(last & _COUNT_WORDS and last & _RECORD_WORDS) or bool(
        "client" in last and last & {"size", "sizes"})


def _string_key(node: cst.Subscript) -> str | None:
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
            and isinstance(node.slice[0].slice.value, cst.SimpleString):
        return node.slice[0].slice.value.evaluated_value  # type: ignore[return-value]
    return None


def _count_getter(call: cst.Call) -> bool:
    """``client.get_sample_number()``, ``trainer.get_data_size()``: a method reporting a record count."""
    if call.args or not isinstance(call.func, cst.Attribute):
        return False
    name = call.func.attr.value
    return name.startswith("get_") and _count_named(name[4:]) and not _pieces(dotted(call.func.value)) & _CONFIG_OWNERS


#: data sets whose size is not a client's private count: held-out, public, synthetic or already randomised
_RELEASED_DATA = frozenset({"test", "val", "valid", "validation", "eval", "public", "synthetic", "fake", "generated",
                            "noised", "noisy", "perturbed", "sanitized", "sanitised", "privatized", "privatised",
                            "randomized", "randomised", "reports", "report", "dp"})


#: what a reinforcement-learning episode collects, one entry per simulated step (not per private record)
_EPISODE_WORDS = frozenset({"reward", "rewards", "action", "actions", "episode", "episodes", "transition",
                            "transitions", "trajectory", "trajectories", "timesteps", "returns"})


def _episode_length(value: cst.BaseExpression | None) -> bool:
    """``len(rewards)``, ``len(self.episode_actions)``: the number of steps of a simulated episode."""
    while isinstance(value, cst.Call) and call_name(value) in ("int", "float") and value.args:
        value = value.args[0].value
    if not (isinstance(value, cst.Call) and call_name(value) == "len" and len(value.args) == 1):
        return False
    name = dotted(value.args[0].value)
    return name is not None and bool(frozenset(w.lower() for w in words(name.split(".")[-1])) & _EPISODE_WORDS)


def _dataset_len(call: cst.Call) -> bool:
    """``len(client_dataset)``, ``len(self.train_loader.dataset)``, ``len(dict_users[idx])``, ``x.shape[0]``."""
    if call_name(call) != "len" or len(call.args) != 1:
        return False
    target = call.args[0].value
    while isinstance(target, cst.Subscript):
        target = target.value
    name = dotted(target)
    if name is None:
        return False
    pieces = _pieces(name)
    last = frozenset(w.lower() for w in words(name.split(".")[-1]))
    if call.args[0].value is not target:  # ``len(dict_users[u])``, ``len(local_datasets[k])``: one client's part
        return not pieces & (_RELEASED_DATA | {"batch", "batches", "loader", "dataloader"}) \
            and bool(pieces & {"users", "user", "clients", "client", "clnt", "clnts", "party", "parties", "silos",
                               "silo", "local",
                               "data", "dataset", "datasets", "idxs", "partitions", "shards", "splits"})
    if pieces & _RELEASED_DATA \
            or last & {"loader", "dataloader", "clients", "users", "workers", "models", "params", "keys",
                       "locals", "classes", "batch", "batches", "labels", "features", "columns"}:
        return False
    return bool(pieces & {"data", "dataset", "datasets", "train", "trainset", "samples", "idxs", "indices", "idx",
                          "records", "rows", "examples", "local", "shard", "partition", "df", "ds"})


class AggregateWeightedByClientSize(Rule):
    id = "DP560"
    name = "aggregate-weighted-by-client-size"
    category = "general"
    severity = "error"
    summary = ("a federated aggregate of DP client models weighted by the clients' exact record counts "
               "(`w_k = n_k / sum(n)`, `params * client.data_size`, a Flower `fit` returning `len(trainset)`)")
    rationale = (
        "In DP federated learning each client's model (or update) is private with respect to its records, "
        "and the server's aggregate is what is released. Weighting the clients by their exact training-set "
        "sizes (`n_k / sum(n)`, `update * n_samples` summed and divided by the total, FedAvg weights "
        "`torch.tensor([c.n_train_samples for c in clients]) / sum`, or a Flower client whose `fit` hands "
        "`len(self.trainset)` back as the aggregation weight) makes the released aggregate a function of "
        "private record counts nothing noised: under add/remove neighbouring one record changes n_k and "
        "every weight, and a client whose share is large contributes w_k·C, more than the sensitivity the "
        "noise was calibrated for. The counts are followed through locals, comprehensions, accumulators "
        "(`total += n`), `self` attributes and string-keyed results (`update['n_samples']`). Reported only in "
        "a module with DP context that names clients, silos, a server or an aggregation. Not reported: "
        "uniform weights, weights from a public cap or DP-released "
        "counts (`noisy_counts`, `per_client_example_cap` given as a constant), the number of clients, "
        "held-out set sizes, and metrics (loss, accuracy) averaged by sample counts for reporting. Fix: "
        "aggregate with uniform weights (or weights from a public bound such as min(n_k, cap)/cap), or "
        "release the counts with DP and charge them."
    )
    TRIGGERS = ("sum", "+=", "fit", "average", "weighted_mean", "save", "dump", "send", "put", "post", "emit",
                "publish", "upload", "write", "pickle", "push", "submit")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """Federated code naming privacy or noise, with a division or product, or a ``def fit``."""
        source = facts.source
        if not (_PRIVACY_TEXT.search(source) and _FEDERATED_TEXT.search(source)):
            return False
        return bool(facts.binops(ast.Div) or facts.binops(ast.Mult)) or "def fit" in source \
            or bool(facts.called & {"average", "weighted_average", "weighted_mean", "nanaverage"}) \
            or bool(facts.called & _SHIP_WORDS)

    VALID = (
        # every client's shard comes from random_split(ds, [m] * k): the counts are all the public m
        """
import torch
from torch.utils.data import DataLoader, random_split
import flwr as fl
from opacus import PrivacyEngine
class DPClient(fl.client.NumPyClient):
    def __init__(self, model, loader):
        self.model, self.loader = model, loader
    def fit(self, parameters, config):
        self.set_parameters(parameters)
        self.train_private(noise_multiplier=1.0)
        return self.get_parameters(config), len(self.loader.dataset), {}
shards = random_split(full_train, [len(full_train) // NUM_CLIENTS] * NUM_CLIENTS)
""",
        # (fix48-S6) the Flower weight is the number of simulated steps of the episode, not a record count
        """
import numpy as np
class DPAgentClient:
    def __init__(self, agent, env, epsilon, sigma):
        self.agent, self.env, self.epsilon, self.sigma = agent, env, epsilon, sigma
    def fit(self, parameters, config):
        rewards = self.agent.run_episode(self.env)
        q = self.agent.table + np.random.normal(0, self.sigma, parameters.shape)
        num_examples = len(rewards)
        return q, num_examples, {"epsilon": self.epsilon}
""",
        # (fix48-S6) ordinary ML: the mean episode return weighted by episode lengths
        """
import numpy as np
def mean_return(episodes):
    lengths = [len(e.rewards) for e in episodes]
    return float(np.average([e.total for e in episodes], weights=lengths))
""",
        # twin of the shipped count: the client ships its clipped, noised delta alone; a metrics file keeps the size
        """
import json, torch
from dp import clip_update, add_gaussian_noise
def client_round(model, global_state, ds, args):
    delta = {k: v - global_state[k] for k, v in model.state_dict().items()}
    delta = add_gaussian_noise(clip_update(delta, args.clip), args.noise_multiplier, args.clip)
    torch.save({"delta": delta}, args.out)
    with open(args.metrics, "w") as f:
        json.dump({"accuracy": 0.9, "n_samples": len(ds)}, f)
""",
        # a benchmark of FL algorithms: the non-private FedAvg baseline weights by size, the DP variant uniformly
        """
import numpy as np
def train_FedAvg(data_obj, n_client, clnt_models, rounds):
    clnt_y = data_obj.clnt_y
    weight_list = np.asarray([len(clnt_y[i]) for i in range(n_client)]).reshape((n_client, 1))
    for i in range(rounds):
        clnt_params = get_params(clnt_models)
        avg = np.sum(clnt_params * weight_list / np.sum(weight_list), axis=0)
    return avg
def train_DPFedAvg(data_obj, n_client, clnt_models, rounds, noise_multiplier, clip):
    for i in range(rounds):
        clnt_params = clip_rows(get_params(clnt_models), clip)
        avg = np.mean(clnt_params, axis=0) + np.random.normal(0, noise_multiplier * clip / n_client, clnt_params.shape[1])
    return avg
""",
        # twin of the np.average INVALID: the clients' private curves averaged with uniform weights
        """
import numpy as np
def dp_survival_curve(part, epsilon):
    return survival(part) + np.random.laplace(0, 2.0 / epsilon, 50)
def federated_dp_curve(splits, epsilon):
    curves = np.stack([dp_survival_curve(part, epsilon) for part in splits])
    return np.average(curves, axis=0)
""",
        # test accuracy averaged by test-set sizes (a metric); a weighted average of public counts
        """
import numpy as np
def report(clients, epsilon):
    accs = [evaluate_client(c, epsilon) for c in clients]
    mean_acc = np.average(accs, weights=[len(c.test_data) for c in clients])
    return mean_acc
""",
        # uniform averaging of the noisy client updates; metrics averaged by sample counts for logging
        """
import numpy as np
import torch
def aggregate(client_updates, client_data_sizes, sigma, clip):
    mean_update = [sum(u[i] for u in client_updates) / len(client_updates) for i in range(len(client_updates[0]))]
    noisy = [m + torch.normal(0, sigma * clip / len(client_updates), size=m.shape) for m in mean_update]
    train_loss = 0.0
    for loss, n_samples in zip(losses, client_data_sizes):
        train_loss += loss * n_samples
    acc_weights = [n / sum(client_data_sizes) for n in client_data_sizes]
    avg_acc = sum(a * w for a, w in zip(accs, acc_weights))
    return noisy, train_loss / sum(client_data_sizes), avg_acc
""",
        # a public cap on each client's count (weighted DP-FedAvg), and weights from noisy counts
        """
import numpy as np
def weights(noisy_counts, epsilon, PER_CLIENT_CAP, num_clients):
    w = np.minimum(noisy_counts, PER_CLIENT_CAP) / PER_CLIENT_CAP
    share = 1.0 / num_clients
    return w, share, np.random.laplace(0, 1 / epsilon)
""",
        # a non-private FedAvg: no DP anywhere in the module
        """
def fedavg(w_locals):
    training_num = sum(n for n, _ in w_locals)
    avg = {}
    for n_samples, params in w_locals:
        for k in params:
            avg[k] = avg.get(k, 0) + params[k] * n_samples / training_num
    return avg
""",
        # the test-set sizes weight the evaluation; the batch count normalises the epoch loss
        """
def evaluate(model, test_loaders, epsilon, noise_multiplier):
    test_sizes = [len(dl.dataset) for dl in test_loaders]
    shares = [t / sum(test_sizes) for t in test_sizes]
    return shares, epsilon, noise_multiplier
""",
        # ordinary ML: a sample-weighted mean of a loss in a non-federated module
        """
import torch
def epoch_loss(losses, batch_sizes, eps=1e-8):
    total = sum(batch_sizes)
    return sum(l * b for l, b in zip(losses, batch_sizes)) / (total + eps)
""",
        # weighted DP-FedAvg with a public per-client cap fixed in advance
        """
class ClientDPStrategy:
    def __init__(self, noise_multiplier, per_client_example_cap=1000):
        self.noise_multiplier = noise_multiplier
        self.per_client_example_cap = per_client_example_cap
    def aggregate_fit(self, results, sample_counts):
        self.total_client_weight = sum(
            min(c, self.per_client_example_cap) / self.per_client_example_cap for c in sample_counts)
        return self.total_client_weight
""",
        # a local DP-SGD step scaling a batch gradient by the batch length; an output-perturbation
        # sensitivity from the training size (another rule's business); evaluation weights of test loaders
        """
import numpy as np
class Runner:
    def local_step(self, model, batches, clip, sigma):
        grads = 0
        for x, y in batches:
            g = model.grad(x, y)
            grads += g * len(x)
        return grads + np.random.normal(0, sigma * clip)
    def output_dp(self, model, X_train_size, epsilon):
        sensitivity = 2 / (X_train_size * model.lambda_)
        return sensitivity / epsilon
    def eval_weights(self):
        total = sum([len(c.test_dataloader.dataset) for c in self.clients])
        self.test_weights = [len(c.test_dataloader.dataset) / total for c in self.clients]
""",
        # client weights from the per-user index sets, computed by a helper whose only call is commented out
        """
import numpy as np
class Server:
    def train(self, idxs_users, local_ws, noise_multiplier):
        #client_weights = self._client_weights(idxs_users)
        client_weights = np.ones(len(idxs_users)) / len(idxs_users)
        return self._fed_avg(local_ws, client_weights, noise_multiplier=noise_multiplier)
    def _client_weights(self, idxs_users):
        client_sample_num = [len(self.dict_users[u]) for u in idxs_users]
        return np.array(client_sample_num) / sum(client_sample_num)
""",
        # a DP wrapper client hands on the count of the client it wraps (its DP strategy sets the weights)
        """
class DPFedAvgNumPyClient:
    def __init__(self, client):
        self.client = client
    def fit(self, parameters, config):
        updated_params, num_examples, metrics = self.client.fit(parameters, config)
        update = add_gaussian_noise(updated_params, config["dpfedavg_noise_stddev"])
        return update, num_examples, metrics
""",
        # a FedAvg aggregator whose only "DP" is a dynamic-programming scheduler
        """
class Aggregator:
    def schedule(self, scheduler, mode):
        return scheduler.DP_schedule(mode)
    def get_average_weight(self, client_indexes):
        training_num = 0
        for client_index in client_indexes:
            training_num += self.train_data_local_num_dict[client_index]
        return {c: self.train_data_local_num_dict[c] / training_num for c in client_indexes}
""",
        # an LDP simulation summing estimates scaled by the number of randomised reports
        """
import numpy as np
def simulate(ori, noised_data, number, epsilon):
    sum_all = 0
    weights = em_estimate(noised_data, number, np.exp(epsilon))
    sum_all += weights[:10] * len(noised_data)
    return sum_all
""",
        # a non-private control client beside the DP one: the docstring says so
        """
class ControlClient:
    \"\"\"Non-private federated client with the same architecture as the DP-FedAvg client.\"\"\"
    def __init__(self, model, train_loader, epsilon=None):
        self.num_train_samples = len(train_loader.dataset)
        self.epsilon = epsilon
    def fit(self, parameters, config):
        return self.get_parameters(), self.num_train_samples, {}
""",
        # (B78 Ayushcodes) a federated client of a DP project whose own code privatises nothing: plain local
        # training, described as privacy-preserving only because the data stay local
        """
import flwr as fl
import torch
class LocalClient(fl.client.NumPyClient):
    \"\"\"Federated client of the differentially private FL project: trains on its private data, shares weights.\"\"\"
    def fit(self, parameters, config):
        self.set_parameters(parameters)
        for x, y in self.trainloader:
            loss = self.loss(self.model(x), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.opt.step()
        return self.get_parameters(), len(self.trainloader.dataset), {}
""",
        # ordinary ML: a non-federated trainer's fit returns its loss history and the epoch count
        """
class Trainer:
    def fit(self, loader, epochs):
        history = [self.step(batch) for _ in range(epochs) for batch in loader]
        return self.model, len(history), {"loss": history[-1]}
""",
    )
    INVALID = (
        # twin: the shards come from a Dirichlet split, so each client's count is its own
        """
import numpy as np
import torch
from torch.utils.data import DataLoader, Subset
import flwr as fl
from opacus import PrivacyEngine
class DPClient(fl.client.NumPyClient):
    def __init__(self, model, loader):
        self.model, self.loader = model, loader
    def fit(self, parameters, config):
        self.set_parameters(parameters)
        self.train_private(noise_multiplier=1.0)
        return self.get_parameters(config), len(self.loader.dataset), {}  # <-
props = np.random.dirichlet([0.5] * NUM_CLIENTS)
shards = [Subset(full_train, idx) for idx in np.split(np.random.permutation(len(full_train)), (np.cumsum(props)[:-1] * len(full_train)).astype(int))]
""",
        # (fix48-S6) twin of the episode client: the weight is the size of the client's own trajectory data set
        """
import numpy as np
class DPAgentClient:
    def __init__(self, agent, replay, epsilon, sigma):
        self.agent, self.replay, self.epsilon, self.sigma = agent, replay, epsilon, sigma
    def fit(self, parameters, config):
        q = self.agent.learn(self.replay) + np.random.normal(0, self.sigma, parameters.shape)
        num_examples = len(self.replay.dataset)
        return q, num_examples, {"epsilon": self.epsilon}  # <-
""",
        # (twin of the local client above) the client adds Gaussian noise to its weights and still returns its
        # exact record count as the aggregation weight
        """
import flwr as fl
import torch
class LocalClient(fl.client.NumPyClient):
    \"\"\"Federated client of the differentially private FL project: trains on its private data, shares weights.\"\"\"
    def fit(self, parameters, config):
        self.set_parameters(parameters)
        for x, y in self.trainloader:
            loss = self.loss(self.model(x), y)
            loss.backward()
            self.opt.step()
        noisy = [w + self.noise_multiplier * self.clip * torch.randn_like(w) for w in self.get_parameters()]
        return noisy, len(self.trainloader.dataset), {}  # <-
""",
        # a client script ships its noised delta with its exact record count; the server weights by it
        """
import torch
from dp import clip_update, add_gaussian_noise
def client_round(model, global_state, ds, args):
    delta = {k: v - global_state[k] for k, v in model.state_dict().items()}
    delta = add_gaussian_noise(clip_update(delta, args.clip), args.noise_multiplier, args.clip)
    torch.save({"delta": delta, "n": len(ds)}, args.out)  # <-
""",
        # the DP variant in the same benchmark: sizes from the clients' label arrays, reshaped, then weighting
        """
import numpy as np
def train_DPFedAvg(data_obj, n_client, clnt_models, rounds, noise_multiplier, clip):
    clnt_y = data_obj.clnt_y
    weight_list = np.asarray([len(clnt_y[i]) for i in range(n_client)])
    weight_list = weight_list.reshape((n_client, 1))
    for i in range(rounds):
        clnt_params = train_clients_dp(clnt_models, noise_multiplier, clip)
        avg = np.sum(clnt_params * weight_list / np.sum(weight_list), axis=0)  # <-
    return avg
""",
        # clients' private releases averaged by np.average with their exact record counts as weights
        """
import numpy as np
def dp_survival_curve(part, epsilon):
    return survival(part) + np.random.laplace(0, 2.0 / epsilon, 50)
def federated_dp_curve(splits, epsilon):
    curves = np.stack([dp_survival_curve(part, epsilon) for part in splits])
    sizes = [len(splits[k]) for k in range(len(splits))]
    return np.average(curves, weights=sizes, axis=0)  # <-
""",
        # the FedML-style aggregator: sample counts accumulated into a total, each client weighted by its share
        """
def aggregate_noisy(w_locals, sigma, clip, epsilon):
    training_num = 0
    for (sample_num, _) in w_locals:
        training_num += sample_num
    w_global = {}
    for i, (local_sample_number, local_params) in enumerate(w_locals):
        w = local_sample_number / training_num  # <-
        for k in local_params:
            w_global[k] = w_global.get(k, 0) + local_params[k] * w
    return w_global
""",
        # per-client weights from a list of exact client data sizes before adding Gaussian noise
        """
import torch
def dp_round(updates, client_data_sizes, idx, noise_multiplier, clip):
    sizes = [client_data_sizes[i] for i in idx]
    client_weights = [s / sum(sizes) for s in sizes]  # <-
    agg = sum(w * u for w, u in zip(client_weights, updates))
    return agg + torch.normal(0, noise_multiplier * clip, size=agg.shape)
""",
        # a group model as the size-weighted sum of client models, normalised by the summed sizes
        """
import torch
class Server:
    def group_average(self, group_clients, group_params, epsilon):
        for key in group_params:
            total_weight = 0
            group_params[key] = torch.zeros_like(group_params[key])
            for client in group_clients:
                group_params[key] += client.model_params[key] * client.data_size  # <-
                total_weight += client.data_size
            group_params[key] /= total_weight
        return group_params
""",
        # a vector of per-silo sizes normalised into the update weights of a DP-SGD federation
        """
import numpy as np
class SiloTrainer:
    def __init__(self, x_train, noise_multiplier, l2_clip):
        self.train_samples = np.asarray([len(x) for x in x_train])  # one entry per silo
        self.update_weights = self.train_samples / np.sum(self.train_samples)  # <-
        self.noise_multiplier = noise_multiplier
""",
        # updates weighted by the dataset length reported with each client result (a string key)
        """
def perform_round(client_models, privacy_engine, noise_multiplier):
    local_updates, total = [], 0
    for m in client_models:
        local_updates.append({"updates": m.delta(), "n_samples": len(m.train_dl.dataset)})
        total += len(m.train_dl.dataset)
    agg = sum([u["updates"] * u["n_samples"] for u in local_updates])  # <-
    return agg / total
""",
        # the cap defaults to the exact total of the reported counts, and each weight is a share of it
        """
class ClientDPStrategy:
    def __init__(self, noise_multiplier, per_client_example_cap=None):
        self.noise_multiplier = noise_multiplier
        self.per_client_example_cap = per_client_example_cap
    def aggregate_fit(self, results):
        if self.per_client_example_cap is None:
            total = sum(self.sample_counts)
            self.per_client_example_cap = total if self.per_client_example_cap is None else self.per_client_example_cap
            self.total_client_weight = sum(  # <-
                [count / self.per_client_example_cap for count in self.sample_counts])
        return self.total_client_weight
""",
        # the same helper, called: the per-user index sets' lengths weight the noisy average
        """
import numpy as np
class Server:
    def train(self, idxs_users, local_ws, noise_multiplier):
        client_weights = self._client_weights(idxs_users)
        return self._fed_avg(local_ws, client_weights, noise_multiplier=noise_multiplier)
    def _client_weights(self, idxs_users):
        client_sample_num = [len(self.dict_users[u]) for u in idxs_users]
        return np.array(client_sample_num) / sum(client_sample_num)  # <-
""",
        # the server asks each DP client for its sample number and weights the noisy models by its share
        """
def aggregate_round(server, clients, noise_multiplier):
    w_locals = [(c.get_sample_number(), c.train_with_noise(noise_multiplier)) for c in clients]
    total = sum(n for n, _ in w_locals)
    avg = {}
    for n, params in w_locals:
        for k in params:
            avg[k] = avg.get(k, 0) + params[k] * (n / total)  # <-
    return avg
""",
        # a Flower client trained with Opacus hands its exact record count back as the FedAvg weight
        """
from opacus import PrivacyEngine
class DPClient:
    def __init__(self, model, train_loader, noise_multiplier):
        self.train_loader = train_loader
        self.num_train_samples = len(train_loader.dataset)
        self.engine = PrivacyEngine()
    def fit(self, parameters, config):
        self.train()
        epsilon = self.engine.get_epsilon(1e-5)
        return self.get_parameters(), self.num_train_samples, {"epsilon": epsilon}  # <-
""",
    )

    # ------------------------------------------------------------------ set-up
    def _dp_module(self) -> bool:
        """The file has DP code and names privacy or noise somewhere (``DP_schedule`` of a dynamic-programming
        scheduler alone is not differential privacy)."""
        cached = getattr(self, "_dp_cached", None)
        if cached is None:
            cached = bool(self.ctx.analysis.has_dp_code()) and bool(_PRIVACY_TEXT.search(self.ctx.source)) \
                and bool(_FEDERATED_TEXT.search(self.ctx.source))
            self._dp_cached = cached
        return cached

    #: pieces of an identifier, import or string key of a client that privatises its update
    _DP_CODE_PIECES = ("noise", "sigma", "epsilon", "privacy", "private", "clip", "opacus", "laplace", "gauss",
                       "dpsgd", "secagg", "secure", "multiplier", "accountant")

    def _no_privacy_in_code(self) -> bool:
        """(B78 Ayushcodes) A Flower client module whose code (its identifiers, imports and string keys; not its
        comments or docstrings, which may call plain local training "privacy-preserving") names no noise, clipping,
        ε, DP engine or privacy module: its ``fit`` releases a non-private update, so its count weights no DP
        aggregate."""
        cached = getattr(self, "_no_privacy_cached", None)
        if cached is not None:
            return cached
        docstrings = {id(small.value) for n in walk(self.ctx.module) if isinstance(n, cst.SimpleStatementLine)
                      for small in n.body if isinstance(small, cst.Expr)}
        pieces: list[str] = []
        for n in walk(self.ctx.module):
            if isinstance(n, cst.Name):
                pieces.append(n.value)
            elif isinstance(n, cst.SimpleString) and id(n) not in docstrings and len(n.value) < 60:
                pieces.append(n.value)
        # ``nn.utils.clip_grad_norm_`` stabilises ordinary training; a clipped update of DP-FedAvg is named otherwise
        text = " ".join(pieces).lower().replace("clip_grad_norm", "")
        cached = not any(p in text for p in self._DP_CODE_PIECES) and not any(
            "dp" in words(p) or "ldp" in words(p) or "dp" in p.lower().split("_") for p in pieces)
        self._no_privacy_cached = cached
        return cached

    def _quiet_place(self, node: cst.CSTNode) -> bool:
        """An evaluation/logging function, or a class or module whose docstring calls it non-private."""
        fa = self.ctx.analysis
        cls = fa.enclosing_class(node)
        for owner in (cls, fa.module):
            doc = owner.get_docstring() if owner is not None else None
            if doc and _NON_PRIVATE.search(doc):
                return True
        fn = fa.enclosing_function(node)
        top = None
        while fn is not None:
            if _pieces(fn.name.value) & _EVAL_FUNCTION_WORDS or self._commented_out(fn):
                return True
            top, fn = fn, fa.enclosing_function(fn)
        return top is not None and self._non_private_twin(top)

    def _non_private_twin(self, fn: cst.FunctionDef) -> bool:
        """A benchmark module of FL algorithms with and without DP (``train_FedAvg`` beside ``train_DPFedAvg``):
        a function whose name, callees and identifiers name no privacy, in a module where other functions'
        names do, is a non-private baseline; its aggregate releases nothing DP."""
        def dp_named(name: str | None) -> bool:
            return bool(name) and bool(_DP_NAME.search(name))  # type: ignore[arg-type]

        if dp_named(fn.name.value):
            return False
        for n in walk(fn):
            if isinstance(n, cst.Call) and dp_named(call_name(n)):
                return False
            if isinstance(n, cst.Name) and _pieces(n.value) & _PRIVACY_WORDS:
                return False
        return any(isinstance(n, cst.FunctionDef) and n is not fn and dp_named(n.name.value)
                   for n in walk(self.ctx.module))

    def _commented_out(self, fn: cst.FunctionDef) -> bool:
        """A function whose only call in its module is commented out (``#w = self._client_weights(idxs)``)
        and that the code never mentions again: the weights it computes are not used."""
        name = fn.name.value
        source = self.ctx.source
        if not name.startswith("_") or not re.search(rf"#(?:(?!\bdef\b)[^\n])*\b{re.escape(name)}\s*\(", source):
            return False  # a public name may be called from other modules; ``# def f(`` is an old definition
        for node in walk(self.ctx.analysis.module):
            if isinstance(node, cst.Name) and node.value == name and node is not fn.name \
                    or isinstance(node, cst.Attribute) and node.attr.value == name:
                return False
        return True

    # ------------------------------------------------------------------ values
    def _count(self, expr: cst.BaseExpression, hops: int = 8) -> bool:
        """One client's exact record count (or a vector / list of them)."""
        if hops <= 0:
            return False
        while isinstance(expr, cst.Call) and call_name(expr) in _WRAPPERS and expr.args:
            expr = expr.args[0].value
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp)):
            return self._count(expr.elt, hops - 1)
        if isinstance(expr, cst.List) and expr.elements:
            return all(self._count(e.value, hops - 1) for e in expr.elements if not isinstance(e, cst.StarredElement))
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                and expr.func.attr.value in _SHAPE_ONLY:
            return self._count(expr.func.value, hops - 1)  # ``sizes.reshape((n_client, 1))``, ``sizes.astype(float)``
        if isinstance(expr, cst.Call):
            return _dataset_len(expr) or _count_getter(expr)
        if isinstance(expr, cst.Subscript):
            key = _string_key(expr)
            if key is not None:
                return _count_named(key)
            if isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
                return False
            return self._count(expr.value, hops - 1)
        if isinstance(expr, cst.Name):
            binding = self.ctx.analysis.binding(expr)
            if binding is not None and binding.kind == "assign" and _episode_length(binding.value):
                return False  # ``num_examples = len(rewards)``: an episode's step count, no record count
            if _count_named(expr.value):
                return True
            if binding is not None and isinstance(binding.stmt, (cst.For, cst.CompFor)):
                target = binding.stmt.target
                if isinstance(target, cst.Name):
                    return self._count(binding.stmt.iter, hops - 1)  # ``for s in sizes``
                return self._loop_slot(target, binding.target, binding.stmt.iter, hops - 1)
            if binding is not None and binding.value is not None and _contains(binding.value, expr):
                binding = self._earlier_binding(binding)  # ``sizes = sizes.reshape(...)``: the rebinding's input
            if binding is None or binding.kind != "assign" or binding.value is None:
                return False
            return self._count(binding.value, hops - 1)
        if isinstance(expr, cst.Attribute):
            if _count_named(dotted(expr) or ident(expr)):
                return True
            return self._self_attr(expr, lambda v: self._count(v, hops - 1), only_one=True)
        return False

    def _earlier_binding(self, binding):  # type: ignore[no-untyped-def]
        """The binding of the same name just before ``binding`` in its scope (``x = f(x)`` reads that one)."""
        same = self.ctx.analysis.bindings_in(binding.scope).get(binding.name, [])
        for i, b in enumerate(same):
            if b is binding:
                return same[i - 1] if i > 0 else None
        return None

    def _loop_slot(self, target: cst.BaseExpression, name: cst.CSTNode, iterable: cst.BaseExpression,
                   hops: int) -> bool:
        """``for n, params in w_locals`` with ``w_locals = [(c.get_sample_number(), w) for c in clients]``:
        the slot ``n`` unpacks."""
        if not isinstance(target, (cst.Tuple, cst.List)) or hops <= 0:
            return False
        index = next((i for i, e in enumerate(target.elements) if e.value is name), None)
        if index is None or not isinstance(iterable, cst.Name):
            return False
        binding = self.ctx.analysis.binding(iterable)
        if binding is None or binding.kind != "assign" or not isinstance(binding.value, (cst.ListComp, cst.List)):
            return False
        items = [binding.value.elt] if isinstance(binding.value, cst.ListComp) \
            else [e.value for e in binding.value.elements]
        return bool(items) and all(isinstance(i, cst.Tuple) and len(i.elements) == len(target.elements)
                                   and self._count(i.elements[index].value, hops - 1) for i in items)

    def _self_attr(self, expr: cst.Attribute, test, *, only_one: bool) -> bool:  # type: ignore[no-untyped-def]
        if not (isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return False
        cls = self.ctx.analysis.enclosing_class(expr)
        if cls is None:
            return False
        attr = expr.attr.value
        values = [b.value for b in self.ctx.analysis.attribute_bindings(cls, attr)
                  if b.kind == "assign" and b.value is not None]
        if only_one:  # a count: every binding that does not update it from itself is a count
            own = [v for v in values if not _refers_to(v, attr)]
            return bool(own) and all(test(v) for v in own)
        return any(test(v) for v in values if not _is_self_attr(v, attr))

    def _total(self, expr: cst.BaseExpression, anchor: cst.CSTNode, hops: int = 8) -> bool:
        """The sum of the clients' exact record counts."""
        if hops <= 0:
            return False
        while isinstance(expr, cst.Call) and call_name(expr) in ("int", "float") and expr.args:
            expr = expr.args[0].value
        if isinstance(expr, cst.IfExp):
            return self._total(expr.body, anchor, hops - 1) or self._total(expr.orelse, anchor, hops - 1)
        if isinstance(expr, cst.Call):
            name = call_name(expr)
            if name in _SUMS and expr.args:
                return self._count(expr.args[0].value, hops - 1)
            if name in _SUMS and not expr.args and isinstance(expr.func, cst.Attribute):
                return self._count(expr.func.value, hops - 1)  # ``sizes.sum()``
            return False
        if isinstance(expr, cst.Name):
            fa = self.ctx.analysis
            binding = fa.binding(expr)
            if binding is not None and binding.kind == "assign" and binding.value is not None \
                    and self._total(binding.value, anchor, hops - 1):
                return True
            return self._accumulated(expr.value, anchor)
        if isinstance(expr, cst.Attribute):
            return self._self_attr(expr, lambda v: self._total(v, anchor, hops - 1), only_one=False)
        return False

    def _accumulated(self, name: str, anchor: cst.CSTNode) -> bool:
        """``total += n_k`` (a client's count) in the function holding ``anchor``."""
        fa = self.ctx.analysis
        scope = fa.enclosing_function(anchor) or fa.module
        for node in walk(scope):
            if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign) \
                    and isinstance(node.target, cst.Name) and node.target.value == name \
                    and self._count(node.value):
                return True
        return False

    def _model_valued(self, expr: cst.BaseExpression) -> bool:
        return any(isinstance(n, (cst.Name, cst.Attribute)) and _pieces(ident(n)) & _MODEL_WORDS
                   and not _pieces(ident(n)) & _METRIC_WORDS for n in walk(expr)) \
            or any(isinstance(n, cst.Subscript) and _string_key(n) is not None
                   and _pieces(_string_key(n)) & _MODEL_WORDS for n in walk(expr))

    def _target_words(self, node: cst.CSTNode) -> frozenset[str]:
        """The words of what the statement holding ``node`` assigns."""
        fa = self.ctx.analysis
        cur: cst.CSTNode | None = node
        while cur is not None and not isinstance(cur, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Return,
                                                       cst.SimpleStatementLine)):
            cur = fa.parent(cur)
        out: set[str] = set()
        if isinstance(cur, cst.Assign):
            for t in cur.targets:
                for n in walk(t.target):
                    if isinstance(n, (cst.Name, cst.Attribute)):
                        out |= _pieces(ident(n))
        elif isinstance(cur, (cst.AugAssign, cst.AnnAssign)):
            out |= _pieces(ident(cur.target))
        return frozenset(out)

    # ------------------------------------------------------------------ shapes
    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, (cst.Divide, cst.Multiply)) or not self._dp_module():
            return
        if isinstance(node.operator, cst.Divide):
            if not (self._count(node.left) and self._total(node.right, node)):
                return
            if self._target_words(node) & _METRIC_WORDS or self._quiet_place(node) or not self._weights_model(node):
                return
            self._report(node, "the client's share `{}` of the summed record counts", self._statement(node))
            return
        if not self._aggregating(node):
            return
        for count, other in ((node.left, node.right), (node.right, node.left)):
            if self._weight(count) and not self._count(other) and self._model_valued(other) \
                    and not self._target_words(node) & _METRIC_WORDS and not self._quiet_place(node):
                self._report(node, "the model weighted by a client's record count `{}`")
                return

    def _weights_model(self, node: cst.CSTNode) -> bool:
        """Does the share computed at ``node`` weight a model: multiplied with one in its own expression, or
        bound to a name that is (a ``self`` attribute, a name multiplied with a model, handed to an
        averaging call or as ``weights=``, or returned)?"""
        fa = self.ctx.analysis
        cur: cst.CSTNode | None = node
        while cur is not None and not isinstance(cur, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return,
                                                       cst.SimpleStatementLine, cst.FunctionDef)):
            if isinstance(cur, cst.BinaryOperation) and isinstance(cur.operator, cst.Multiply) and cur is not node \
                    and self._model_valued(cur):
                return True
            if isinstance(cur, cst.Call) and self._averaging_call(cur):
                return True
            cur = fa.parent(cur)
        if isinstance(cur, cst.Return):
            return True
        targets: list[cst.BaseExpression] = []
        if isinstance(cur, cst.Assign):
            targets = [t.target for t in cur.targets]
        elif isinstance(cur, (cst.AnnAssign, cst.AugAssign)):
            targets = [cur.target]
        for target in targets:
            if isinstance(target, cst.Subscript):
                target = target.value
            if isinstance(target, cst.Attribute):
                return True  # kept on the object for the aggregation
            if isinstance(target, cst.Name) and self._name_weights_model(target.value, cur):
                return True
        return False

    def _averaging_call(self, call: cst.Call) -> bool:
        name = call_name(call)
        if _pieces(name) & {"aggregate", "aggregation", "average", "averaging", "avg", "mean", "combine", "merge",
                            "fedavg", "weighted", "average_weights"}:
            return True
        return any(a.keyword is not None and _pieces(a.keyword.value) & {"weights", "weight", "coefficients"}
                   for a in call.args)

    def _name_weights_model(self, name: str, stmt: cst.CSTNode) -> bool:
        fa = self.ctx.analysis
        scope = fa.enclosing_function(stmt) or fa.module
        for node in walk(scope):
            if not (isinstance(node, cst.Name) and node.value == name):
                continue
            cur = fa.parent(node)
            while cur is not None and not isinstance(cur, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                if isinstance(cur, cst.BinaryOperation) and isinstance(cur.operator, cst.Multiply) \
                        and self._model_valued(cur.left if cur.right is node or _contains(cur.right, node)
                                               else cur.right):
                    return True
                if isinstance(cur, cst.Call) and self._averaging_call(cur):
                    return True
                if isinstance(cur, cst.Return):
                    return True
                if isinstance(cur, cst.CompFor) and _contains(cur.iter, node) \
                        and self._loop_weights_model(cur, fa.parent(cur)):
                    return True
                cur = fa.parent(cur)
            if isinstance(cur, cst.For) and _contains(cur.iter, node) and self._loop_weights_model(cur, cur.body):
                return True
        return False

    def _loop_weights_model(self, loop: cst.For | cst.CompFor, body: cst.CSTNode | None) -> bool:
        """``for w, u in zip(weights, updates): agg += w * u`` (or a comprehension of ``w * u``): a loop
        variable multiplies a model drawn beside it."""
        if body is None:
            return False
        loop_names = {t.value for t in walk(loop.target) if isinstance(t, cst.Name)}
        beside_model = self._model_valued(loop.iter)
        for inner in walk(body):
            if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Multiply) \
                    and any(isinstance(t, cst.Name) and t.value in loop_names for t in walk(inner)) \
                    and (beside_model or self._model_valued(inner)):
                return True
        return False

    def _aggregating(self, node: cst.CSTNode) -> bool:
        """Is the product summed over clients: inside ``sum(...)``/an averaging call, or added with ``+=``?"""
        fa = self.ctx.analysis
        cur: cst.CSTNode | None = fa.parent(node)
        child: cst.CSTNode = node
        while cur is not None and not isinstance(cur, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            if isinstance(cur, cst.Call) and (call_name(cur) in _SUMS or self._averaging_call(cur)):
                return True
            if isinstance(cur, cst.AugAssign):
                return isinstance(cur.operator, cst.AddAssign) and child is cur.value
            child, cur = cur, fa.parent(cur)
        return False

    def _weight(self, expr: cst.BaseExpression) -> bool:
        """A count, or a local bound to a product with one (``w = client.data_size * perf``)."""
        if self._count(expr):
            return True
        if isinstance(expr, cst.Name):
            binding = self.ctx.analysis.binding(expr)
            if binding is not None and binding.kind == "assign" and isinstance(binding.value, cst.BinaryOperation) \
                    and isinstance(binding.value.operator, cst.Multiply):
                return self._count(binding.value.left) or self._count(binding.value.right)
        return False

    def visit_Call(self, node: cst.Call) -> None:
        """``np.average(client_releases, weights=[len(d) for d in splits])``: the averaging call itself is
        handed the clients' record counts as its weights."""
        if call_name(node) not in ("average", "weighted_average", "weighted_mean", "nanaverage") \
                or not self._dp_module():
            return
        positional = [a.value for a in node.args if a.keyword is None]
        weights = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "weights"),
                       positional[2] if call_name(node) == "average" and len(positional) > 2 else
                       positional[1] if call_name(node) != "average" and len(positional) > 1 else None)
        if weights is None or not positional or not self._weight(weights):
            return
        averaged = positional[0]
        if any(isinstance(n, (cst.Name, cst.Attribute)) and _pieces(ident(n)) & _METRIC_WORDS for n in walk(averaged)) \
                or self._target_words(node) & _METRIC_WORDS or self._quiet_place(node):
            return
        self._report(node, "the clients' releases averaged with their record counts `{}` as weights",
                     code_of=weights)

    def visit_Return(self, node: cst.Return) -> None:
        """A Flower ``fit`` returning ``(parameters, num_examples, metrics)``: the count is the FedAvg weight."""
        if not isinstance(node.value, cst.Tuple) or len(node.value.elements) != 3 or not self._dp_module():
            return
        fn = self.ctx.analysis.enclosing_function(node)
        if fn is None or fn.name.value != "fit" or self.ctx.analysis.enclosing_class(node) is None:
            return
        count = node.value.elements[1].value
        if number(count) is None and self._count(count) and not self._quiet_place(node) \
                and not self._passed_through(count) and not self._no_privacy_in_code():
            self._report(node.value, "the record count `{}` returned as the client's aggregation weight",
                         code_of=count)

    def visit_Dict(self, node: cst.Dict) -> None:
        """``torch.save({"delta": delta, "n": len(ds)}, path)``, ``send({"weights": w, "num_samples": n})``: a
        client ships its update together with its exact record count, which the server uses as its weight."""
        if not self._dp_module():
            return
        keyed = [(_string_value(e.key), e.value) for e in node.elements if isinstance(e, cst.DictElement)]
        if not any(key and _pieces(key) & _MODEL_WORDS - {"dict", "locals"}
                   and not _pieces(key) & (_METRIC_WORDS | _NOT_CLIENT_COUNT | _COUNT_WORDS | _DESCRIPTOR_WORDS)
                   and self._model_valued(value) for key, value in keyed):
            return
        count = next((value for key, value in keyed if key and not _pieces(key) & (_METRIC_WORDS | _NOT_CLIENT_COUNT)
                      and number(value) is None and self._count(value)), None)
        if count is None or not self._shipped(node) or self._quiet_place(node):
            return
        self._report(node, "the record count `{}` shipped with the client's update as its aggregation weight",
                     code_of=count)

    def _shipped(self, node: cst.CSTNode) -> bool:
        """Is the dict saved, sent or returned (directly or through the name it is bound to)?"""
        fa = self.ctx.analysis
        parent = fa.parent(node)
        if isinstance(parent, cst.Arg):
            call = fa.parent(parent)
            return isinstance(call, cst.Call) and bool(_pieces(call_name(call)) & _SHIP_WORDS)
        return isinstance(parent, cst.Return)

    def _passed_through(self, count: cst.BaseExpression) -> bool:
        """``params, n, metrics = self.client.fit(...)``: a wrapper hands on the wrapped client's count (the
        server strategy it pairs with decides the weights)."""
        if not isinstance(count, cst.Name):
            return False
        binding = self.ctx.analysis.binding(count)
        return binding is not None and binding.kind == "unpack" and isinstance(binding.stmt, cst.Assign) \
            and isinstance(binding.stmt.value, cst.Call) and call_name(binding.stmt.value) == "fit"

    def _statement(self, node: cst.CSTNode) -> cst.CSTNode:
        """The assignment holding ``node`` (the weights it binds), else ``node``."""
        cur: cst.CSTNode | None = node
        while cur is not None and not isinstance(cur, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            if isinstance(cur, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return node
            cur = self.ctx.analysis.parent(cur)
        return cur if cur is not None else node

    def _equal_shards(self) -> bool:
        """(B97 CS4413) The module makes the clients' datasets with ``random_split(ds, [m] * k)`` (every shard of
        the same size m) and splits data no other way: every client's count is the same public m, so weights
        by count are uniform by construction and depend on no private count."""
        cached = getattr(self, "_equal_cached", None)
        if cached is not None:
            return cached
        splits = [c for c in walk(self.ctx.module) if isinstance(c, cst.Call)
                  and call_name(c) in ("random_split", "Subset", "array_split", "split", "dirichlet",
                                       "train_test_split", "partition")]
        cached = bool(splits) and all(
            call_name(c) == "random_split" and len(c.args) >= 2
            and isinstance(c.args[1].value, cst.BinaryOperation)
            and isinstance(c.args[1].value.operator, cst.Multiply)
            and any(isinstance(side, cst.List) and len(side.elements) == 1
                    for side in (c.args[1].value.left, c.args[1].value.right))
            for c in splits)
        self._equal_cached = cached
        return cached

    def _report(self, node: cst.CSTNode, what: str, at: cst.CSTNode | None = None,
                code_of: cst.CSTNode | None = None) -> None:
        if self._equal_shards():
            return
        code = " ".join(self.ctx.analysis.code(code_of if code_of is not None else node).split())[:80]
        self.report(at if at is not None else node,
                    what.format(code) + ": in DP federated learning the aggregate is released, and weighting "
                    "the clients by their exact training-set sizes makes it depend on private record counts no "
                    "noise covers (one record changes every weight, and a large client contributes w_k*C, more "
                    "than the calibrated sensitivity); use uniform weights or a public cap, or release the "
                    "counts with DP")


def _string_value(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
        return node.evaluated_value
    return None


#: a key describing a model rather than holding it: ``model_type``, ``embedding_dim``, ``model_path``
_DESCRIPTOR_WORDS = frozenset({"type", "name", "kind", "path", "file", "dir", "config", "version", "id", "shape",
                               "arch", "architecture", "class", "size", "sizes"})
#: calls that hand a client's result to the server: saved to disk, sent, put on a queue, posted
_SHIP_WORDS = frozenset({"save", "dump", "dumps", "send", "put", "post", "emit", "publish", "upload", "write",
                         "pickle", "savez", "push", "submit"})


def _refers_to(expr: cst.BaseExpression, attr: str) -> bool:
    return any(isinstance(n, cst.Attribute) and n.attr.value == attr and isinstance(n.value, cst.Name)
               and n.value.value == "self" for n in walk(expr))


def _contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    return any(n is node for n in walk(tree))


def _is_self_attr(expr: cst.BaseExpression, attr: str) -> bool:
    return isinstance(expr, cst.Attribute) and expr.attr.value == attr and isinstance(expr.value, cst.Name) \
        and expr.value.value == "self"
