"""DP311: a DP synthesizer asked for exactly as many rows as the private data has."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import ident
from dpcheck.analysis.generator import gan_context, is_gen_identifier
from dpcheck.analysis.release_flow import never_released
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.rule import Rule

#: methods that draw synthetic records from a fitted generative model
_SAMPLE_METHODS = frozenset({"synthetic_data", "sample", "generate", "synthesize", "synthesise", "sample_data",
                             "generate_data", "generate_samples", "sample_synthetic", "synthetic", "sample_rows",
                             "generate_synthetic", "generate_synthetic_data", "sample_dataframe"})
#: a receiver that is a generative model (``sample``/``generate`` alone are too common: ``df.sample``)
_MODEL_WORDS = frozenset({"synth", "synthesizer", "synthesiser", "synthetic", "model", "generator", "gan", "aim",
                          "mst", "mwem", "privbayes", "pgm", "ctgan", "dpctgan", "patectgan", "pategan", "vae",
                          "graph", "engine", "dpgan", "gem", "rap", "jam", "bayes", "ddpm", "diffusion",
                          "histogram", "hist", "markov", "chain", "kde", "density", "sampler"})
#: names of DP synthesizers (not ``model``: ``train_model(X, len(X))`` is ordinary training)
_SYNTHESIZER_WORDS = frozenset({"synth", "synthesizer", "synthesiser", "synthesize", "synthesise", "aim", "mst",
                                "mwem", "privbayes", "pgm", "ctgan", "dpctgan", "patectgan", "pategan", "gem",
                                "privsyn", "jam"})
#: keywords giving the number of rows to draw
_ROW_KEYWORDS = frozenset({"rows", "n", "num_rows", "n_rows", "nrows", "n_samples", "num_samples", "count",
                           "samples", "n_records", "num_records", "size", "num", "number", "N", "length",
                           "n_synth", "num_synth", "sample_size", "amt", "amount", "n_points", "num_points",
                           "npoints", "n_traj", "num_traj", "total"})
#: data sets that are not the private training data
_NOT_PRIVATE = frozenset({"test", "val", "valid", "validation", "eval", "holdout", "public", "synthetic", "synth",
                          "fake", "generated", "gen", "sample", "samples", "batch", "out", "output"})


#: names of a variable holding released synthetic output (``syn``, ``X_syn``, ``generated_df``, ``fake_data``)
_OUTPUT_WORDS = frozenset({"syn", "synth", "synthetic", "generated", "fake"})
#: calls whose result is released output only when they sample, generate or synthesise (not a random draw)
_PRODUCE_WORDS = frozenset({"generate", "generates", "sample", "sampling", "sampler", "synthesize", "synthesise",
                            "synthesis", "gen", "inference", "release", "draw"})
#: functions that only evaluate synthetic data against the private set (a utility or stopping metric)
_EVAL_WORDS = frozenset({"metric", "metrics", "evaluate", "evaluation", "eval", "patience", "score", "test",
                         "validate", "validation", "debug"})


#: calls that build a new array or table (the synthetic output under construction, not the private data)
_CONSTRUCTORS = frozenset({"DataFrame", "zeros", "empty", "ones", "full", "zeros_like", "empty_like", "Dataset"})


def _dataset(expr: cst.BaseExpression | None) -> str | None:
    name = dotted(expr) if expr is not None else None
    if name is None or words(name) & _NOT_PRIVATE:
        return None
    return name


def _group_count(expr: cst.BaseExpression) -> str | None:
    """``(df.center == c).sum()``, ``df["site"].value_counts().max()``: the exact record count of one group (or
    of the largest or smallest group) of a data set."""
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and not expr.args):
        return None
    method, inner = expr.func.attr.value, expr.func.value
    if method == "sum" and isinstance(inner, cst.Comparison) and len(inner.comparisons) == 1 \
            and isinstance(inner.comparisons[0].operator, cst.Equal):
        column = inner.left
    elif method in ("max", "min") and isinstance(inner, cst.Call) and call_name(inner) == "value_counts" \
            and isinstance(inner.func, cst.Attribute) and not inner.args:
        column = inner.func.value
    else:
        return None
    if isinstance(column, cst.Subscript):
        column = column.value
    elif isinstance(column, cst.Attribute):
        column = column.value
    else:
        return None
    return _dataset(column)


def _record_count(expr: cst.BaseExpression) -> str | None:
    """``len(X)``, ``X.shape[0]``, ``df.shape[0]`` of a data set not named held-out or synthetic, or the count of
    one of its groups."""
    group = _group_count(expr)
    if group is not None:
        return group
    if isinstance(expr, cst.Call) and call_name(expr) == "len" and len(expr.args) == 1:
        return _dataset(expr.args[0].value)
    if isinstance(expr, cst.Attribute) and expr.attr.value == "records" and isinstance(expr.value, cst.Name):
        # (h46-2) private-pgm's ``Dataset.records``: the number of rows of the (private) data set
        return _dataset(expr.value)
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) \
            and expr.value.attr.value == "shape" and len(expr.slice) == 1:
        index = expr.slice[0].slice
        if isinstance(index, cst.Index) and number(index.value) == 0:
            return _dataset(expr.value.value)
    return None


#: calls on a generator that do not produce rows (``G.train()``, ``G.eval()``, ``G.parameters()``)
_NOT_GENERATING = frozenset({"train", "eval", "parameters", "zero_grad", "to", "cpu", "cuda", "state_dict", "step",
                             "backward", "load_state_dict", "apply", "named_parameters", "fit"})


def _output_of(expr: cst.BaseExpression, generated: set[int], held: set[str]) -> bool:
    """``expr`` is a generator call in ``generated`` or a name in ``held``, seen through method chains, attributes
    and subscripts (``G(z).detach().cpu().numpy()``, ``gen[:, :d]``)."""
    while True:
        if isinstance(expr, cst.Call) and id(expr) in generated:
            return True
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        elif isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        else:
            return isinstance(expr, cst.Name) and expr.value in held


def _fallback_count(value: cst.BaseExpression, counts=_record_count) -> cst.BaseExpression | None:
    """``args.n if args.n > 0 else len(X)``, ``n_rows or len(df)``: a configured count whose default (the branch
    taken when none is configured) is the private record count."""
    if isinstance(value, cst.IfExp):
        for branch in (value.body, value.orelse):
            if counts(branch) is not None:
                return branch
    if isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or) \
            and counts(value.right) is not None:
        return value.right
    return None


def _synthesizer_named(name: str) -> bool:
    """``fit_mst``, ``generate_synthetic_database``, ``synthesize_trajectories``: named for a DP synthesizer or
    for producing synthetic data."""
    pieces = words(name)
    return bool(pieces & _SYNTHESIZER_WORDS) or any(p.startswith("synth") for p in pieces)


def _ast_count(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" or \
        isinstance(node, ast.Attribute) and node.attr in ("shape", "records")


class SyntheticRowsPrivateCount(Rule):
    _count_site: cst.CSTNode | None = None
    id = "DP311"
    name = "synthetic-rows-private-count"
    category = "general"
    severity = "error"
    summary = "synthetic data is sampled with exactly the private record count (`synth.sample(len(X))`), releasing n without noise"
    rationale = (
        "Under add/remove neighbouring the number of records n is itself private. A DP synthesizer "
        "asked for `rows=len(X)` (or `X.shape[0]`) publishes a table whose length is the exact n: the "
        "release differs between neighbouring data sets with probability one, outside every ε "
        "the synthesizer spends. Reported: a synthetic-data sampling call (`synthetic_data`, "
        "`sample`/`generate` on a receiver named for a generative model, …) whose row count "
        "(a `rows=`/`n=`/`num_rows=`/`n_samples=` keyword or the first positional argument) is "
        "`len(X)` or `X.shape[0]` of a data set not named held-out/public/synthetic, directly or "
        "through a local name (`n, d = X.shape`; `n = len(df)`); a synthesizer-"
        "named function given `total=` the record count; and any generating call (`sampling`, "
        "`generate_…`, `…_inference`) whose result is stored as synthetic output (`syn`, `X_syn`, "
        "`generated_df`) and whose size argument is the private count; the count kept on the object when fitting "
        "(`self.nrows = len(df)`) and sampled later, directly or as the default (`N = N or self.nrows`); "
        "the exact count of one group or of the largest group (`(df.site == s).sum()`, "
        "`df[col].value_counts().max()`) used the same way; synthetic output cut to a private count "
        "(`syn.iloc[:n_site]`, `synthetic[:len(X)]`). "
        "Not reported: a same-size sample that, through every name derived from it, only reaches evaluating "
        "calls (metric/score/evaluate/plot/compare, also an evaluator object's `.evaluate`) and is never "
        "returned, written, pickled, stored on an object, collected or handed to a call of unknown effect; a fixed or "
        "configured row count, a function that only tests or evaluates the generator (`test_…`, "
        "`…_metric`), the size of a test/public set, `df.sample(...)` on data frames, code "
        "with no DP context. Fix: sample a public, fixed number of rows, or a noisy count "
        "(n + Laplace(1/ε_n)) paid from the budget."
    )
    TRIGGERS = ("synth", "Synth", "sample(", "generate", "SYNTH", "sampling(", "syn =", "_syn", "fake", "total=",
                # a generator called in a loop (``visit_For``): every spelling ``is_gen_identifier`` accepts
                "G(", "G.", "G_", "gen", "Gen", "GEN", "netg", "Fake", "FAKE")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A sampling-named call, a call named for a DP synthesizer, or a ``range`` loop that appends (a generator
        run batch by batch), in a module reading ``len(…)`` or a ``.shape``."""
        if not facts.called & (_SAMPLE_METHODS | {"run"}) and not any(
                _synthesizer_named(n) or words(n) & _PRODUCE_WORDS for n in facts.called) \
                and not ("range" in facts.called and facts.called & {"append", "extend"}):
            return False
        return "len" in facts.called or ".shape" in facts.source or ".records" in facts.source \
            or bool(facts.called & {"sum", "value_counts"})

    VALID = (
        # (h46-2 twin) the engine is given a noisy record count
        """
import numpy as np
from mbi import Dataset, FactoredInference
def fit_model(path, domain, cliques, sigma, rng):
    data = Dataset.load(path, domain)
    n_rows = data.records + rng.normal(0, sigma)
    measurements = [(np.eye(data.project(cl).domain.size()), data.project(cl).datavector() + rng.normal(0, sigma, data.project(cl).domain.size()), sigma, cl) for cl in cliques]
    engine = FactoredInference(data.domain, iters=1000)
    return engine.estimate(measurements, total=n_rows)
""",
        # ordinary code: a statistical estimator's estimate() given a total of weights, no synthesizer
        """
def fit_weights(model, batch, weights):
    total = weights.sum()
    return model.estimate(batch, total=total)
""",
        # the row count of the synthetic frame under construction (built from zeros) and of its groups
        """
import numpy as np
import pandas as pd
class GraphicalModel:
    def synthetic_data(self, rows, epsilon):
        df = pd.DataFrame(np.zeros((rows, len(self.cols)), dtype=int), columns=self.cols)
        def synthetic_col(counts, total):
            return np.random.choice(counts.size, total, True, counts / counts.sum())
        def foo(group):
            group["b"] = synthetic_col(self.marg, group.shape[0])
            return group
        df["a"] = synthetic_col(self.marg, df.shape[0])
        return df.groupby("a", group_keys=False).apply(foo)
""",
        # twin: a public count of synthetic trajectories
        """
import numpy as np
def release(trajectories, epsilon, n_public):
    model = fit_noisy_markov(trajectories, epsilon)
    return generate_synthetic_trajectories(model, n_public)
""",
        # twin: a perturbed histogram sampled with a configured count
        """
import numpy as np
def release(database, epsilon, m, n_release=10000):
    histogram = PerturbedHistogram(database, bins=m, epsilon=epsilon)
    return histogram.sample(amt=n_release)
""",
        # twin: a noisy count paid from the budget
        """
import numpy as np
def release(records, epsilon, epsilon_n):
    n_noisy = int(len(records) + np.random.laplace(0, 1 / epsilon_n))
    chain = fit_private_chain(records, epsilon)
    return synthesize_records(chain, n_noisy)
""",
        # twin: a configured count handed to the helper
        """
from mbi import Dataset
from helpers import fit_mst
def main(X, domain, epsilon, delta, n_release=5000):
    synth = fit_mst(Dataset(X, domain), epsilon, delta, n_release)
    return synth.df, len(X)
""",
        # a configured number of synthetic rows
        """
from snsynth import Synthesizer
def release(df, epsilon, n_rows=10000):
    synth = Synthesizer.create("mwem", epsilon=epsilon)
    synth.fit(df, preprocessor_eps=0.1)
    return synth.sample(n_rows)
""",
        # a noisy count paid from the budget
        """
import numpy as np
from mbi import Dataset
def release(aim_model, data, epsilon_n):
    n_noisy = int(max(1, len(data) + np.random.laplace(0, 1 / epsilon_n)))
    return aim_model.synthetic_data(rows=n_noisy).df
""",
        # as many rows as the public test set has
        """
import torch
def evaluate(generator, X_test, epsilon):
    fake = generator.generate(len(X_test))
    return torch.mean((fake - X_test) ** 2), epsilon
""",
        # pandas shuffling of the private frame (not a synthesizer)
        """
def shuffle_private(df, epsilon, laplace):
    shuffled = df.sample(n=len(df))
    return laplace(shuffled.iloc[:, 0].sum(), epsilon)
""",
        # twin: a region-measure sampler sized by a public count
        """
import numpy as np
def measure_release(points, eps, n_public):
    cells, weights = partition(points)
    weights = weights + np.random.laplace(0, 1 / eps, len(weights))
    syn = draw_from_cells(weights, cells, n_public)
    return syn
""",
        # twin: a diffusion driver generating a configured number of rows
        """
import pandas as pd
def run_sampling(config, model, epsilon):
    real = pd.read_csv(config.path)
    num_samples = config.sampling.num_rows
    generated_df = generate_unbalanced(num_samples, model)
    return generated_df, len(real)
""",
        # twin: a private-pgm style estimate given a noisy total
        """
import numpy as np
def main(data, epsilon, seed):
    measurements = [m + np.random.laplace(0, 1 / epsilon, m.size) for m in marginals(data)]
    total = data.df.shape[0] + np.random.laplace(0, 1 / epsilon)
    return privbayes_inference(data.domain, measurements, total=total)
""",
        # a unit test of a DP generator drawing as many rows as its fixture
        """
from synthcity.plugins import Plugins
def test_generate_matches_fixture(X):
    model = Plugins().get("dpgan", epsilon=1.0)
    model.fit(X)
    generated = model.generate(len(X))
    assert generated.shape == X.shape
""",
        # a caller-given count replaced by the number of conditioning rows (one synthetic record per condition)
        """
import pandas as pd
class Pipeline:
    def generate(self, n_records=None, condition_records=None, epsilon=1.0):
        if condition_records is not None:
            n_records = condition_records.shape[0]
        synth_df = self.gen.generate(n_records=n_records, condition_records=condition_records)
        return synth_df
""",
        # a utility metric comparing a same-size synthetic sample with the private data (not a release)
        """
import pandas as pd
class DPGenerator:
    def _evaluate_patience_metric(self, X, epsilon):
        X_syn = self.generate(len(X))
        return self.metric.evaluate(pd.DataFrame(X), pd.DataFrame(X_syn))
""",
        # twins of the per-group sizes: noisy group counts, a public cap, the size of a held-out set
        """
import numpy as np
def twins_per_site(train_df, sites, epsilon, fit_site_model, draw_synthetic, eps_n):
    biggest = int(train_df["site"].value_counts().max() + np.random.laplace(0, 1 / eps_n))
    released = {}
    for site in sites:
        model = fit_site_model(train_df, site, epsilon)
        syn_site = draw_synthetic(model, biggest)
        released[site] = syn_site
    return released
def cut_per_site(train_df, sites, epsilon, fit_site_model, draw_synthetic, m_public, cap):
    released = {}
    for site in sites:
        model = fit_site_model(train_df, site, epsilon)
        released[site] = draw_synthetic(model, m_public).iloc[:cap]
    return released
def cut_all(records, test_records, model, epsilon, m_public):
    synthetic_rows = model.sample(m_public)
    return synthetic_rows[:len(test_records)]
""",
        # a generated training batch cut to the length of another generated batch, inside a training step
        """
import numpy as np
import torch
def train_step(generator, discriminator, transformer, opt, z, epsilon):
    fake = generator(z)
    fakeact = torch.tanh(fake)
    generated_data = np.concatenate([fakeact.detach().cpu().numpy()], axis=0)
    generated_data = generated_data[:len(fakeact)]
    decoded = transformer.inverse_transform(generated_data)
    loss = discriminator(fakeact).mean() + decoded.shape[0] * 0.0
    loss.backward()
    opt.step()
""",
        # twins of the stored count: a noisy count kept on the object, a configured size, the size of a
        # held-out set, a count that is also replaced by a noisy one
        """
import numpy as np
from snsynth import Synthesizer
class PrivateTabularModel:
    def fit(self, df, epsilon, eps_n):
        self.nrows = int(len(df) + np.random.laplace(0, 1 / eps_n))
        self.synth = Synthesizer.create("mst", epsilon=epsilon)
        self.synth.fit(df)
    def generate(self, N=None):
        N = N or self.nrows
        return self.synth.sample(N)
class MarginalGenerator:
    def __init__(self, config):
        self.n_rows = config.rows
    def train(self, X, X_test, epsilon):
        self.n_test = len(X_test)
        self.model = fit_private_marginals(X, epsilon)
    def release(self):
        return self.model.sample(self.n_rows)
    def draw(self, count=None):
        count = self.n_test if count is None else count
        return self.model.sample(count)
class NoisyCountModel:
    def fit(self, X, epsilon):
        self.n = len(X)
        self.model = fit_private_marginals(X, epsilon)
        self.n = self.n + np.random.laplace(0, 1 / epsilon)
    def sample_rows(self):
        return self.model.sample(int(self.n))
""",
        # a sweep drawing a same-size sample only to score it against the private data (neither returned nor saved)
        """
from synth import DPSynthesizer
def privacy_sweep(real_data, epsilons, num_rows=None):
    rows = []
    for eps in epsilons:
        synthesizer = DPSynthesizer(epsilon=eps)
        synthesizer.fit(real_data)
        n = num_rows or len(real_data)
        synthetic = synthesizer.sample(n)
        report = synthesizer.evaluate(real_data, synthetic)
        rows.append({"epsilon": eps, "utility": report.score})
    return rows
""",
        # a same-size sample decoded and cast through helpers, then only scored by an evaluator; only the metrics
        # are written (the synthetic table itself never leaves the loop)
        """
import pandas as pd
from evaluation import TableEvaluator
def sweep(df, epsilons, out_csv):
    rows = []
    for eps in epsilons:
        gan = train_dp_gan(df, epsilon=eps)
        raw = gan.generate(len(df)).detach().cpu().numpy()
        fake_df = decode_rows(raw, df.columns)
        fake_df["label"] = (fake_df["label"] > 0.5).astype(int)
        fake_eval = match_dtypes(df, fake_df)
        scores = TableEvaluator(df).evaluate(fake_eval, target="label")
        rows.append(pd.DataFrame([scores]).assign(epsilon=eps))
    pd.concat(rows).to_csv(out_csv)
""",
        # a script drawing a same-size sample only for histograms and fidelity metrics
        """
import pandas as pd
import pickle
vae = train_private_vae(data, epsilon=1.0)
sample = vae.generate(data.shape[0])
sample = pd.DataFrame(sample.detach().numpy(), columns=columns)
restored = inverse_transform(synthetic_set=sample, transformers=transformers)
plot_marginals(real=data, synthetic=restored, path="")
fidelity = sdv_metrics(real=data, synthetic=restored)
with open("metrics.pkl", "wb") as f:
    pickle.dump(fidelity, f)
""",
        # twins of the generation loop: a configured count, the size of a public set, a training loop that
        # collects losses, and a configured count whose default is a constant
        """
import numpy as np
import torch
def train_and_release(G, D, X_train, X_public, batch_size, epsilon, n_out=10000):
    n = X_train.shape[0]
    losses = []
    for i in range(0, n, batch_size):
        fake = G(torch.randn(batch_size, 16))
        loss = D(fake).mean()
        losses.append(loss.item())
    out = []
    for i in range(0, n_out, batch_size):
        gen = G(torch.randn(batch_size, 16))
        out.append(gen.detach().cpu().numpy())
    m = len(X_public)
    for _ in range(m):
        out.append(G(torch.randn(1, 16)).numpy())
    return np.vstack(out), losses
""",
        """
def main(args, train_df, epsilon):
    n_records = args.n_records if args.n_records > 0 else 5000
    model = fit_private_marginals(train_df, epsilon)
    synth = sample_from_marginals(model, n_records=n_records)
    return synth
""",
    )

    INVALID = (
        # (h46-2) private-pgm's inference engine fit with the private Dataset's exact record count
        """
import numpy as np
from mbi import Dataset, FactoredInference
def fit_model(path, domain, cliques, sigma, rng):
    data = Dataset.load(path, domain)
    n_rows = data.records
    measurements = [(np.eye(data.project(cl).domain.size()), data.project(cl).datavector() + rng.normal(0, sigma, data.project(cl).domain.size()), sigma, cl) for cl in cliques]
    engine = FactoredInference(data.domain, iters=1000)
    return engine.estimate(measurements, total=n_rows)  # <-
""",
        # Final_Year_CTGAN's dp_pate_train.py: the generator run batch by batch up to the private row count
        """
import numpy as np
import torch
def train_dp_gan(G, X_train, y_train, batch_size, epsilon):
    n = X_train.shape[0]  # <-
    out = []
    with torch.no_grad():
        for i in range(0, n, batch_size):
            bs = min(batch_size, n - i)
            gen = G(torch.randn(bs, 16))
            out.append(gen.cpu().numpy())
    return np.vstack(out)
""",
        # one generated row per private record, through a netG spelling and a chained conversion
        """
import torch
def release(netG, train_df, nz, noise_multiplier):
    rows = []
    for _ in range(len(train_df)):  # <-
        rows.append(netG(torch.randn(1, nz)).detach().numpy())
    return rows
""",
        # the count is configured, but its default (the branch taken without a configured count) is the private size
        """
def main(args, train_df, epsilon):
    n_records = args.n_records if args.n_records > 0 else len(train_df)  # <-
    model = fit_private_marginals(train_df, epsilon)
    synth = sample_from_marginals(model, n_records=n_records)
    return synth
def release(model, data, n_rows, epsilon):
    rows = n_rows or len(data)  # <-
    synthetic = model.generate(rows)
    return synthetic
""",
        # the same-size sample is scored against the private data and also returned: released
        """
from synth import DPSynthesizer
def fit_and_release(real_data, epsilon, num_rows=None):
    synthesizer = DPSynthesizer(epsilon=epsilon)
    synthesizer.fit(real_data)
    n = num_rows or len(real_data)  # <-
    synthetic = synthesizer.sample(n)
    report = synthesizer.evaluate(real_data, synthetic)
    return synthetic, report
def fit_and_save(real_data, epsilon, path):
    synthesizer = DPSynthesizer(epsilon=epsilon)
    synthesizer.fit(real_data)
    synthetic = synthesizer.sample(len(real_data))  # <-
    print(synthesizer.evaluate(real_data, synthetic))
    synthetic.to_csv(path)
""",
        # per-group sizes: each group's synthetic set sized by the largest private group or cut to the group's
        # exact count, and a synthetic table cut to the private row count
        """
import numpy as np
def twins_per_site(train_df, sites, epsilon, fit_site_model, draw_synthetic):
    biggest = train_df["site"].value_counts().max()
    released = {}
    for site in sites:
        model = fit_site_model(train_df, site, epsilon)
        syn_site = draw_synthetic(model, biggest)  # <-
        released[site] = syn_site
    return released
def cut_per_site(train_df, sites, epsilon, fit_site_model, draw_synthetic, m_public):
    released = {}
    for site in sites:
        model = fit_site_model(train_df, site, epsilon)
        k = (train_df.site == site).sum()
        released[site] = draw_synthetic(model, m_public).iloc[:k]  # <-
    return released
def cut_all(records, model, epsilon, m_public):
    synthetic_rows = model.sample(m_public)
    return synthetic_rows[:len(records)]  # <-
""",
        # the record count kept on the object when fitting, taken later as the default number of rows to sample
        """
from snsynth import Synthesizer
class PrivateTabularModel:
    def fit(self, df, epsilon):
        self.nrows = len(df)
        self.synth = Synthesizer.create("mst", epsilon=epsilon)
        self.synth.fit(df)
    def generate(self, N=None):
        N = N or self.nrows  # <-
        return self.synth.sample(N)
class MarginalGenerator:
    def train(self, X, epsilon):
        self.n_rows = X.shape[0]
        self.model = fit_private_marginals(X, epsilon)
    def release(self):
        return self.model.sample(self.n_rows)  # <-
    def draw(self, count=None):
        count = self.n_rows if count is None else count  # <-
        return self.model.sample(count)
""",
        # the same spellings, but the decoded sample is written, pickled, kept on the object or collected and returned
        """
import pandas as pd
def sweep(df, epsilons, out_dir):
    for eps in epsilons:
        gan = train_dp_gan(df, epsilon=eps)
        raw = gan.generate(len(df)).detach().cpu().numpy()  # <-
        fake_df = decode_rows(raw, df.columns)
        scores = TableEvaluator(df).evaluate(fake_df)
        fake_df.to_csv(f"{out_dir}/fake_{eps}.csv")
""",
        """
import pandas as pd
import pickle
vae = train_private_vae(data, epsilon=1.0)
sample = vae.generate(data.shape[0])  # <-
sample = pd.DataFrame(sample.detach().numpy(), columns=columns)
restored = inverse_transform(synthetic_set=sample, transformers=transformers)
fidelity = sdv_metrics(real=data, synthetic=restored)
with open("synthetic.pkl", "wb") as f:
    pickle.dump(restored, f)
""",
        """
class Runner:
    def run(self, data, epsilon):
        vae = train_private_vae(data, epsilon=epsilon)
        sample = vae.generate(data.shape[0])  # <-
        self.metrics = sdv_metrics(real=data, synthetic=sample)
        self.synthetic = decode_rows(sample, data.columns)
def sweep(df, epsilons):
    tables = []
    for eps in epsilons:
        gan = train_dp_gan(df, epsilon=eps)
        raw = gan.generate(len(df))  # <-
        tables.append(decode_rows(raw, df.columns))
        print(TableEvaluator(df).evaluate(raw))
    return tables
""",
        # a region-measure sampler sized by n from the private array's shape (result stored as `syn`)
        """
import numpy as np
def measure_release(points, eps):
    n, d = points.shape
    cells, weights = partition(points)
    weights = weights + np.random.laplace(0, 1 / eps, len(weights))
    syn = draw_from_cells(weights, cells, n)  # <-
    return syn
""",
        # a diffusion driver generating as many rows as the original CSV has, through a local name
        """
import pandas as pd
def run_sampling(config, model, epsilon):
    real = pd.read_csv(config.path)
    num_samples = len(real)
    generated_df = generate_unbalanced(num_samples, model)  # <-
    return generated_df
""",
        # a private-pgm style estimate whose total is the exact record count
        """
import numpy as np
def main(data, epsilon, seed):
    measurements = [m + np.random.laplace(0, 1 / epsilon, m.size) for m in marginals(data)]
    total = data.df.shape[0]
    return privbayes_inference(data.domain, measurements, total=total)  # <-
""",
        # a project's own synthesis function given len() of the private trajectories
        """
import numpy as np
def release(trajectories, epsilon):
    model = fit_noisy_markov(trajectories, epsilon)
    return generate_synthetic_trajectories(model, len(trajectories))  # <-
""",
        # a perturbed histogram sampled with amt = len(database)
        """
import numpy as np
def release(database, epsilon, m):
    histogram = PerturbedHistogram(database, bins=m, epsilon=epsilon)
    k = len(database)
    return histogram.sample(amt=k)  # <-
""",
        # a function named for synthesis (`synthesize_…`) given the private record count
        """
import numpy as np
def release(records, epsilon):
    chain = fit_private_chain(records, epsilon)
    return synthesize_records(chain, len(records))  # <-
""",
        # the count handed to a helper that builds and samples a synthesizer
        """
from mbi import Dataset
from helpers import fit_mst
def main(X, domain, epsilon, delta):
    synth = fit_mst(Dataset(X, domain), epsilon, delta, len(X))  # <-
    return synth.df
""",
        # private-pgm AIM: as many synthetic rows as the training frame
        """
from mbi import Dataset
from aim import AIM
def release(train_df, domain, workload, epsilon, delta):
    model = AIM(epsilon=epsilon, delta=delta).run(Dataset(train_df, domain), workload)
    return model.synthetic_data(rows=len(train_df)).df  # <-
""",
        # smartnoise-style: n from the data's shape through a local name
        """
from snsynth import Synthesizer
def release(X, epsilon):
    n, d = X.shape
    synth = Synthesizer.create("patectgan", epsilon=epsilon)
    synth.fit(X)
    return synth.sample(n)  # <-
""",
        # a torch DP-GAN generator asked for the record count of the private set
        """
import torch
class DPGANRelease:
    def __init__(self, generator, epsilon):
        self.generator, self.epsilon = generator, epsilon
    def publish(self, private_data):
        num = private_data.shape[0]
        return self.generator.generate(num_samples=num)  # <-
""",
        # a PrivBayes release with a keyword row count
        """
from DataSynthesizer.DataGenerator import DataGenerator
def synthesize(input_df, description_file, epsilon):
    privbayes_generator = DataGenerator()
    privbayes_generator.generate_dataset_in_correlated_attribute_mode(len(input_df), description_file)
    return privbayes_generator.sample_data(n_records=len(input_df))  # <-
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if self._in_evaluation(node) or self._only_evaluated(node):
            return
        if name not in _SAMPLE_METHODS:
            if not self._count_into_synthesizer(node, name):
                self._count_into_output(node, name)
            return
        if not isinstance(node.func, cst.Attribute):
            self._count_into_output(node, name)
            return
        receiver = dotted(node.func.value) or ident(node.func.value) or ""
        if name not in ("synthetic_data", "sample_synthetic", "generate_synthetic", "generate_synthetic_data") \
                and not words(receiver) & _MODEL_WORDS:
            self._count_into_output(node, name)
            return
        count = None
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in _ROW_KEYWORDS:
                count = arg.value
                break
        else:
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            count = positional[0] if positional else None
        if count is None:
            return
        size = self._private_count(count)
        if size is None or not self.ctx.analysis.in_dp_context(node):
            return
        self._report_once(self._count_site or node, f"the synthetic data is sampled with exactly {size} rows, the private record count: "
                          "under add/remove neighbouring n is private, so the length of the released table "
                          "reveals it without noise, outside the ε the synthesizer spends; sample a fixed public "
                          "number of rows or a noisy count paid from the budget")

    def visit_For(self, node: cst.For) -> None:
        """``for i in range(0, n, batch): out.append(G(z, …))`` with ``n = X_train.shape[0]``: a generator run
        batch by batch until the private record count is reached, its outputs collected into the release."""
        it = node.iter
        if not (isinstance(it, cst.Call) and call_name(it) == "range" and isinstance(it.func, cst.Name)):
            return
        positional = [a.value for a in it.args if a.keyword is None and not a.star]
        if not positional or len(positional) > 3 or self._in_evaluation(node):
            return
        stop = positional[1] if len(positional) >= 2 else positional[0]
        weak = gan_context(self.ctx.source)
        calls = [n for n in walk(node.body) if isinstance(n, cst.Call)]
        generated = [c for c in calls if (dotted(c.func) or "") and is_gen_identifier(dotted(c.func) or "", weak=weak)
                     and call_name(c) not in _NOT_GENERATING]
        if not generated or not self._collects(node, generated):
            return
        size = self._private_count(stop)
        if size is None or not self.ctx.analysis.in_dp_context(node):
            return
        fa = self.ctx.analysis
        self._report_once(self._assign_site or it,
                          f"{size} sets how many synthetic rows the loop on line {fa.line_of(node)} generates "
                          f"(`{fa.code(generated[0].func).strip()}` batch by batch up to it): the released table "
                          "then has exactly the private record count, and n is private under add/remove "
                          "neighbouring; generate a fixed public number of rows or a noisy count paid from the budget")

    def visit_Subscript(self, node: cst.Subscript) -> None:
        """``sample_synthetic(rng, m, params).iloc[:n_center]``, ``syn[:len(X)]``: synthetic output cut to the exact
        private record count (of the data or of one group of it)."""
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Slice):
            return
        cut = node.slice[0].slice
        if cut.lower is not None or cut.upper is None or cut.step is not None:
            return
        table = node.value
        if isinstance(table, cst.Attribute) and table.attr.value in ("iloc", "loc"):
            table = table.value
        if isinstance(table, cst.Call):
            name = call_name(table) or ""
            if not (words(name) & _PRODUCE_WORDS or _synthesizer_named(name)) or name in _NOT_GENERATING:
                return
            if not (name in _SAMPLE_METHODS or _synthesizer_named(name)):
                return
        elif not (isinstance(table, cst.Name) and (words(table.value) & _OUTPUT_WORDS
                                                     or any(p.startswith("synth") for p in words(table.value)))):
            return
        if self._in_evaluation(node) or self._in_training_step(node):
            return
        counted = _record_count(cut.upper)
        if counted is not None and any(p.startswith(("fake", "syn", "gen", "sample")) for p in words(counted)):
            return  # cut to the size of another generated batch (``gen[:len(fakeact)]``)
        size = self._private_count(cut.upper)
        if size is None or not self.ctx.analysis.in_dp_context(node):
            return
        self._report_once(node, f"the synthetic output is cut to exactly {size} rows, a private record count: under "
                                "add/remove neighbouring that count is private, so the length of the released table "
                                "reveals it without noise; keep a fixed public number of rows or a noisy count")

    def _in_training_step(self, node: cst.CSTNode) -> bool:
        """Inside a function that back-propagates (``loss.backward()``): generated rows there are a training batch
        fed to a loss, not the released table."""
        function = self.ctx.analysis.enclosing_function(node)
        return function is not None and any(isinstance(n, cst.Call) and call_name(n) == "backward"
                                            for n in walk(function))

    @staticmethod
    def _collects(loop: cst.For, generated: list[cst.Call]) -> bool:
        """The loop appends the generator's output itself (``out.append(G(z).cpu())``, or a name holding it:
        ``gen = G(z, c)`` … ``out.append(gen.numpy())``) — not a loss or a score computed from it."""
        ids = {id(c) for c in generated}
        held: set[str] = set()
        changed = True
        while changed:
            changed = False
            for stmt in walk(loop.body):
                if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Name):
                    name = stmt.targets[0].target.value
                    if name not in held and _output_of(stmt.value, ids, held):
                        held.add(name)
                        changed = True
        return any(isinstance(c, cst.Call) and call_name(c) in ("append", "extend") and c.args
                   and _output_of(c.args[0].value, ids, held) for c in walk(loop.body))

    def _count_into_synthesizer(self, node: cst.Call, name: str) -> bool:
        """``get_aim_model(df, …, epsilon, delta, len(X))``, ``aim.run(data, workload, len(data))``,
        ``privbayes_inference(domain, measurements, total=total)`` with ``total = df.shape[0]``: the exact record
        count handed to a function named for a DP synthesizer (its number of rows to release)."""
        receiver = dotted(node.func.value) if isinstance(node.func, cst.Attribute) else None
        # (h46-2) private-pgm's inference engine ``engine.estimate(measurements, total=n)``: the graphical model
        # released (and sampled) carries ``total`` as its number of records
        pgm_total = name in ("estimate", "mirror_descent") and receiver is not None \
            and any(a.keyword is not None and a.keyword.value == "total" for a in node.args)
        if not (_synthesizer_named(name) or pgm_total
                or name == "run" and receiver and words(receiver) & _SYNTHESIZER_WORDS):
            return False
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value not in _ROW_KEYWORDS:
                continue
            if isinstance(arg.value, cst.Call) and call_name(arg.value) == "len" or isinstance(arg.value, cst.Subscript):
                size = _record_count(arg.value)
                if size is not None and self._built_locally(node, size):
                    continue
                if size is not None and self.ctx.analysis.in_dp_context(node):
                    self.report(arg.value, f"the private record count `{self.ctx.analysis.code(arg.value).strip()}` is "
                                           f"handed to `{name}`, a DP synthesizer, as its number of rows: the released "
                                           "table then has exactly n rows, and n is private under add/remove "
                                           "neighbouring; pass a fixed public count or a noisy one")
                    return True
            elif isinstance(arg.value, cst.Name) and arg.keyword is not None:
                size = self._private_count(arg.value)
                if size is not None and self.ctx.analysis.in_dp_context(node):
                    self._report_once(self._count_site or arg.value, f"the private record count {size} is handed to `{name}`, a DP "
                                           "synthesizer, as its number of rows: the released table then has exactly "
                                           "n rows, and n is private under add/remove neighbouring; pass a fixed "
                                           "public count or a noisy one")
                    return True
        return False

    def _count_into_output(self, node: cst.Call, name: str | None) -> None:
        """``syn = sampling(nu, regions, n)`` with ``n, d = X.shape``; ``generated_df = generate_rows(num, model)``
        with ``num = len(df)``: a generating call, its result stored under a synthetic-output name, sized by the
        private record count (outside functions that only evaluate the output against the private data)."""
        fa = self.ctx.analysis
        parent = fa.parent(node)
        if not isinstance(parent, cst.Assign) or len(parent.targets) != 1 or name is None:
            return
        target = dotted(parent.targets[0].target) or ident(parent.targets[0].target) or ""
        pieces = words(target)
        if not (pieces & _OUTPUT_WORDS or any(p.startswith("synth") for p in pieces)):
            return
        called = words(name)
        if not (called & _PRODUCE_WORDS or _synthesizer_named(name)) or name in _CONSTRUCTORS:
            return
        enclosing = fa.enclosing_function(node)
        params = {p.name.value for p in enclosing.params.params} if isinstance(enclosing, cst.FunctionDef) else set()
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value not in _ROW_KEYWORDS or arg.star:
                continue
            if isinstance(arg.value, cst.Name) and arg.value.value in params:
                continue  # the caller's count, only sometimes replaced (by the rows of conditioning data)
            size = self._private_count(arg.value)
            if size is None:
                continue
            data = _record_count(arg.value)
            if data is not None and self._built_locally(node, data):
                continue
            if fa.in_dp_context(node):
                self._report_once(self._count_site or node, f"`{target}` is generated with exactly {size} records, the private record count: "
                                  "under add/remove neighbouring n is private, so the size of the released synthetic "
                                  "output reveals it without noise; generate a fixed public number or a noisy count "
                                  "paid from the budget")
            return

    def _in_evaluation(self, node: cst.CSTNode) -> bool:
        """Inside a function that evaluates or tests the generator (``test_…``, ``_evaluate_patience_metric``):
        a same-size sample compared with the data there is not released."""
        return any(isinstance(a, cst.FunctionDef) and words(a.name.value) & _EVAL_WORDS
                   for a in self.ctx.analysis.ancestors(node))

    def _only_evaluated(self, node: cst.Call) -> bool:
        """``synthetic = synth.sample(len(real))`` (or ``G.generate(n).detach().numpy()``) whose value, through
        every name derived from it (``synth_df = decode(synthetic)``), only reaches evaluating calls
        (``SynthEval(real).evaluate(synth_df)``, ``distribution_metrics(synthetic=…)``, ``plot_…``) or nothing:
        the same-size sample is scored against the private data, never returned, written, stored or handed on,
        so its length is not released."""
        fa = self.ctx.analysis
        expr: cst.CSTNode = node
        while True:  # through a method chain on the sample
            up = fa.parent(expr)
            call = fa.parent(up) if isinstance(up, cst.Attribute) else None
            if not (isinstance(call, cst.Call) and call.func is up):
                break
            expr = call
        parent = fa.parent(expr)
        if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1
                and isinstance(parent.targets[0].target, cst.Name)):
            return False
        scope = fa.enclosing_function(node) or self.ctx.module
        return never_released(parent.targets[0].target.value, scope, fa.parent, parent)

    def _built_locally(self, node: cst.CSTNode, data: str) -> bool:
        """The counted table is the output under construction: assigned in an enclosing function from an array or
        frame constructor (``df = pd.DataFrame(np.zeros((total, d)))``), or a parameter of a nested callback
        (``def foo(group): … group.shape[0]`` applied per group of that frame)."""
        fa = self.ctx.analysis
        root = data.split(".")[0]
        functions = [a for a in fa.ancestors(node) if isinstance(a, cst.FunctionDef)]
        if len(functions) > 1 and root in {p.name.value for p in functions[0].params.params}:
            return True
        for fn in functions:
            for sub in walk(fn, into_scopes=False):
                if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and ident(sub.targets[0].target) == root \
                        and isinstance(sub.value, cst.Call) and call_name(sub.value) in _CONSTRUCTORS:
                    return True
        return False

    def _report_once(self, node: cst.CSTNode, message: str) -> None:
        """A count that defaults to the private size is reported where that default is taken, once."""
        seen: set[int] = self.__dict__.setdefault("_reported_sites", set())
        if id(node) in seen:
            return
        seen.add(id(node))
        self.report(node, message)

    def _stored_count(self, expr: cst.BaseExpression) -> str | None:
        """``self.nrows`` where every assignment of that attribute in the enclosing class is the record count of
        a data set (``self.nrows = len(df)`` in ``fit``): the private count kept for later sampling."""
        direct = _record_count(expr)
        if direct is not None:
            return direct
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return None
        cls = next((a for a in self.ctx.analysis.ancestors(expr) if isinstance(a, cst.ClassDef)), None)
        if cls is None:
            return None
        origin: str | None = None
        for sub in walk(cls):
            if isinstance(sub, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = [t.target for t in sub.targets] if isinstance(sub, cst.Assign) else [sub.target]
                for target in targets:
                    if isinstance(target, cst.Attribute) and dotted(target) == f"self.{expr.attr.value}":
                        data = _record_count(sub.value) if isinstance(sub, cst.Assign) and sub.value else None
                        if data is None or self._built_locally(sub, data):
                            return None  # also set from something else
                        origin = data
        return origin

    def _counted(self, expr: cst.BaseExpression) -> str | None:
        """A row count read inline the ways ``dpcheck.analysis.recordcount`` follows (``data_supp.shape[0]``,
        ``X.size(0)``, ``len(df.index)``, an inherited ``self.nrows``); not a count of one class or part."""
        from dpcheck.analysis.recordcount import RecordCounts
        if not isinstance(expr, (cst.Call, cst.Subscript, cst.Attribute)):
            return None
        counts = RecordCounts(self.ctx.analysis)
        found = counts.count(expr)
        if found is None or counts.per_part:
            return None
        return f"`{self.ctx.analysis.code(expr).strip()}` ({found})"

    def _private_count(self, expr: cst.BaseExpression) -> str | None:
        self._count_site: cst.CSTNode | None = None
        self._assign_site: cst.CSTNode | None = None
        direct = self._stored_count(expr)
        if direct is not None:
            return f"`{self.ctx.analysis.code(expr).strip()}`"
        if not isinstance(expr, cst.Name):
            return self._counted(expr)
        scope = self.ctx.analysis.enclosing_function(expr) or self.ctx.module
        found: str | None = None
        for sub in walk(scope, into_scopes=False):
            if not isinstance(sub, cst.Assign) or len(sub.targets) != 1:
                continue
            target = sub.targets[0].target
            if isinstance(target, cst.Name) and target.value == expr.value:
                origin = self._stored_count(sub.value)
                fallback = _fallback_count(sub.value, self._stored_count) if origin is None else None
                if origin is None and fallback is None:
                    return None  # also assigned something else
                code = self.ctx.analysis.code(sub.value if origin is not None else fallback).strip()
                found = f"`{expr.value}` (= `{code}`)" if origin is not None else \
                    f"`{expr.value}` (by default `{code}`)"
                self._count_site = sub if origin is None else None
                self._assign_site = sub
            elif isinstance(target, cst.Tuple) and target.elements and isinstance(target.elements[0].value, cst.Name) \
                    and target.elements[0].value.value == expr.value:
                value = sub.value
                if isinstance(value, cst.Attribute) and value.attr.value == "shape" and _dataset(value.value):
                    found = f"`{expr.value}` (from `{self.ctx.analysis.code(value).strip()}`)"
                else:
                    return None
        return found
