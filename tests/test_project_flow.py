"""Project-wide flow: a statistic fitted in module A on the private data a DP model in module B
passes to it is a DP202 finding at A's fitting site, with B's call site as a related location."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from test_scan_support import project, scan, write

from dpcheck.analysis.project import summarize
from dpcheck.rule import Rule


class Dp202Stub(Rule):
    """Stands in for DP202 (the flow phase reports under its id and runs when it is selected),
    so these tests do not depend on the per-file rule's own heuristics."""

    id = "DP202"
    name = "non-private-bounds"
    category = "metadata"
    summary = "stub"
    TRIGGERS = ("\0never",)


RULES = (Dp202Stub,)

ENCODER = """\
import numpy as np


class Encoder:
    def fit(self, X):
        self.lo = X.min(0)
        self.hi = np.max(X, axis=0)
        return self

    def transform(self, X):
        return (X - self.lo) / (self.hi - self.lo)
"""

MODEL = """\
from .preprocess import Encoder


class Synthesizer:
    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon
        self.encoder = Encoder()

    def fit(self, data):
        self.encoder.fit(data)
        return self.encoder.transform(data)
"""


def make(tmp_path: Path, files: dict[str, str]) -> Path:
    project(tmp_path)
    for rel, text in files.items():
        write(tmp_path, rel, text)
    return tmp_path


def rel_findings(result, root: Path) -> list[tuple[str, int, list[tuple[str, int]]]]:
    out = []
    for f in result.findings:
        if f.rule == "DP202":
            rel = Path(os.path.relpath(os.path.abspath(f.path), root)).as_posix()
            out.append((rel, f.line, [(Path(os.path.relpath(os.path.abspath(r.path), root)).as_posix(), r.line)
                                      for r in f.related]))
    return out


def run(root: Path, paths: list[str] | None = None, **kw):
    return scan(root, paths or [str(root / "gen")], rules=RULES, **kw)


# ---- spellings that must be found --------------------------------------------------------------


def test_class_fit_min_max_via_relative_import(tmp_path):
    root = make(tmp_path, {"gen/__init__.py": "", "gen/preprocess.py": ENCODER, "gen/model.py": MODEL})
    result = run(root)
    assert rel_findings(result, root) == [
        ("gen/preprocess.py", 6, [("gen/model.py", 10)]),
        ("gen/preprocess.py", 7, [("gen/model.py", 10)]),
    ]
    first = next(f for f in result.findings if f.rule == "DP202")
    assert first.category == "metadata" and first.severity == "error"
    assert "`Encoder.fit`" in first.message and "Synthesizer.fit" in first.message
    assert first.snippet == "self.lo = X.min(0)"
    assert "`data`" in first.related[0].message and "epsilon" in first.related[0].message


def test_function_with_pd_cut_through_absolute_and_aliased_imports(tmp_path):
    prep = """\
    import pandas as pd

    def discretize(df, columns):
        out = df.copy()
        for c in columns:
            out[c] = pd.cut(out[c], 10, labels=False)
        return out
    """
    absolute = """\
    from gen.prep import discretize

    def train(data, epsilon):  # differentially private: the budget of the Laplace mechanism
        binned = discretize(data, ["age"])
        return binned
    """
    aliased = """\
    import gen.prep as pp

    class PrivBayes:
        '''Differentially private Bayesian network synthesizer.'''

        def fit(self, df):
            self.data = pp.discretize(df, columns=["age"])
    """
    root = make(tmp_path, {"gen/__init__.py": "", "gen/prep.py": prep, "gen/a.py": absolute, "gen/b.py": aliased})
    assert rel_findings(run(root), root) == [("gen/prep.py", 6, [("gen/a.py", 4), ("gen/b.py", 7)])]


def test_label_encoder_in_a_helper_two_levels_up_and_keyword_argument(tmp_path):
    helper = """\
    from sklearn.preprocessing import LabelEncoder

    def encode_labels(y):
        le = LabelEncoder()
        le.fit(y)
        return le
    """
    model = """\
    from ..utils.labels import encode_labels

    class PATEGAN:
        def train(self, X, y, delta=1e-5):
            self.le = encode_labels(y=y)
            return X
    """
    root = make(tmp_path, {
        "gen/__init__.py": "", "gen/utils/__init__.py": "", "gen/utils/labels.py": helper,
        "gen/models/__init__.py": "", "gen/models/pate.py": model,
    })
    assert rel_findings(run(root), root) == [("gen/utils/labels.py", 5, [("gen/models/pate.py", 5)])]


def test_re_export_through_package_init_and_private_data_through_a_helper_method(tmp_path):
    model = """\
    from gen import Encoder

    class DPCTGAN:
        def fit(self, train_data, categorical_columns=None):
            self._prepare(train_data)

        def _prepare(self, frame):
            self.enc = Encoder().fit(frame.to_numpy())
    """
    root = make(tmp_path, {
        "gen/__init__.py": "from .preprocess import Encoder\n", "gen/preprocess.py": ENCODER, "gen/m.py": model,
    })
    assert rel_findings(run(root), root) == [
        ("gen/preprocess.py", 6, [("gen/m.py", 8)]), ("gen/preprocess.py", 7, [("gen/m.py", 8)]),
    ]


def test_value_counts_class_ratios(tmp_path):
    ratios = """\
    def class_ratios(labels):
        return labels.value_counts(normalize=True).to_dict()
    """
    model = """\
    from . import stats

    def fit(data, target, epsilon):  # privacy budget
        weights = stats.class_ratios(data[target])
        return weights
    """
    root = make(tmp_path, {"gen/__init__.py": "", "gen/stats.py": ratios, "gen/model.py": model})
    assert rel_findings(run(root), root) == [("gen/stats.py", 2, [("gen/model.py", 4)])]


# ---- negatives ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mechanism", [True, False])
def test_scores_fed_to_an_exponential_mechanism_are_its_utility(tmp_path, mechanism):
    """dpart's PrivBayes: frequencies inside ``score`` become mutual-information scores that the
    exponential mechanism privatises; handed back as they are, they leak."""
    selection = """\
    import numpy as np

    def score(df, child):
        return -np.sum(np.log(df[child].value_counts(normalize=True).to_numpy()))

    def exponential_mechanism(scores, scale):
        p = np.exp(np.array(scores) / scale)
        return p / p.sum()

    def select(df, candidates, epsilon):
        scores = [score(df, c) for c in candidates]
        probs = exponential_mechanism(scores, 2.0 / epsilon)
        return candidates[int(np.random.choice(len(candidates), p=probs))]
    """
    if not mechanism:
        selection = selection.replace("probs = exponential_mechanism(scores, 2.0 / epsilon)", "probs = scores")
    model = """\
    from .selection import select

    class Network:
        def __init__(self, epsilon=1.0):  # privacy budget
            self.epsilon = epsilon

        def fit(self, df):
            self.root = select(df, list(df.columns), self.epsilon)
            return self
    """
    root = make(tmp_path, {"gen/__init__.py": "", "gen/selection.py": selection, "gen/model.py": model})
    expected = [] if mechanism else [("gen/selection.py", 4, [("gen/model.py", 8)])]
    assert rel_findings(run(root), root) == expected


def test_encoder_fitted_on_public_bounds_is_not_reported(tmp_path):
    model = MODEL.replace("self.encoder.fit(data)", "self.encoder.fit(self.public_bounds)")
    assert model != MODEL
    root = make(tmp_path, {"gen/__init__.py": "", "gen/preprocess.py": ENCODER, "gen/model.py": model})
    assert rel_findings(run(root), root) == []


def test_caller_without_dp_context_is_not_reported(tmp_path):
    model = MODEL.replace("epsilon=1.0", "hidden=128").replace("self.epsilon = epsilon", "self.hidden = hidden")
    model = model.replace("Synthesizer", "Autoencoder")
    root = make(tmp_path, {"gen/__init__.py": "", "gen/preprocess.py": ENCODER, "gen/model.py": model})
    assert rel_findings(run(root), root) == []


def test_encoder_that_takes_public_bounds_is_not_a_fitter(tmp_path):
    scaler = """\
    class Scaler:
        def fit(self, X, lower, upper):
            self.lo, self.hi = lower, upper
            return self
    """
    model = MODEL.replace("Encoder", "Scaler").replace("self.encoder.fit(data)", "self.encoder.fit(data, 0, 1)")
    root = make(tmp_path, {"gen/__init__.py": "", "gen/preprocess.py": scaler, "gen/model.py": model})
    assert rel_findings(run(root), root) == []


def test_suppression_on_the_fitting_line(tmp_path):
    encoder = ENCODER.replace("X.min(0)", "X.min(0)  # dpcheck: ignore[DP202]")
    root = make(tmp_path, {"gen/__init__.py": "", "gen/preprocess.py": encoder, "gen/model.py": MODEL})
    assert [line for _, line, _ in rel_findings(run(root), root)] == [7]


def test_not_run_when_dp202_is_not_selected(tmp_path):
    root = make(tmp_path, {"gen/__init__.py": "", "gen/preprocess.py": ENCODER, "gen/model.py": MODEL})

    class Other(Dp202Stub):
        id = "DP203"

    result = scan(root, [str(root / "gen")], rules=(Other,))
    assert result.findings == []


# ---- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("model_import, extra", [
    ("from .a import Encoder", {"gen/a.py": "from .b import Encoder\n", "gen/b.py": "from .a import Encoder\n"}),
    ("from ....far.away import Encoder", {}),
    ("from .missing import Encoder", {}),
    ("import gen.nowhere as Encoder", {}),
    ("from .broken import Encoder", {"gen/broken.py": "class Encoder:\n    def fit(self, X:\n        X.min()\n"}),
])
def test_unresolvable_imports_make_no_finding_and_no_crash(tmp_path, model_import, extra):
    model = MODEL.replace("from .preprocess import Encoder", model_import)
    root = make(tmp_path, {"gen/__init__.py": "", "gen/preprocess.py": ENCODER, "gen/model.py": model, **extra})
    result = run(root)
    assert not result.crashed
    assert rel_findings(result, root) == []


def test_star_import_resolves_to_the_names_the_module_defines(tmp_path):
    model = MODEL.replace("from .preprocess import Encoder", "from .preprocess import *")
    root = make(tmp_path, {"gen/__init__.py": "", "gen/preprocess.py": ENCODER, "gen/model.py": model})
    assert [line for _, line, _ in rel_findings(run(root), root)] == [6, 7]


def test_import_cycle_between_fitting_modules_still_resolves(tmp_path):
    # A and B import each other; the encoder is still found through the cycle-safe resolver
    encoder = "from . import model\n" + ENCODER
    root = make(tmp_path, {"gen/__init__.py": "", "gen/preprocess.py": encoder, "gen/model.py": MODEL})
    assert [line for _, line, _ in rel_findings(run(root), root)] == [7, 8]


def test_a_single_file_scan_works_without_its_package(tmp_path):
    root = make(tmp_path, {"gen/__init__.py": "", "gen/preprocess.py": ENCODER, "gen/model.py": MODEL})
    result = run(root, [str(root / "gen" / "model.py")])
    assert result.findings == [] and result.stats.files == 1


def test_summaries_never_raise_on_bad_source():
    assert summarize("def f(:\n", "x.py") is None
    deep = "x = " + "(" * 2000 + "1" + ")" * 2000 + "\nepsilon = 1\n"
    assert summarize(deep, "deep.py") is None or isinstance(summarize(deep, "deep.py"), dict)
    assert summarize("print('hello')\n", "plain.py") is None  # gated out: neither statistics nor DP words


# ---- cache correctness -------------------------------------------------------------------------


def _age(path: Path) -> None:
    """Make a file old enough for the cache to trust its stat entry."""
    old = time.time() - 60
    os.utime(path, (old, old))


def test_cache_is_invalidated_by_a_change_to_either_module(tmp_path):
    root = make(tmp_path, {"gen/__init__.py": "", "gen/preprocess.py": ENCODER, "gen/model.py": MODEL})
    for p in (root / "gen").iterdir():
        _age(p)
    model_path = root / "gen" / "model.py"
    prep_path = root / "gen" / "preprocess.py"

    def lines() -> list[int]:
        return [line for _, line, _ in rel_findings(run(root, use_cache=True), root)]

    assert lines() == [6, 7]
    warm = run(root, use_cache=True)
    assert warm.stats.cache_hits == 3 and [f.line for f in warm.findings] == [6, 7]

    model_path.write_text(MODEL.replace("self.encoder.fit(data)", "pass"), encoding="utf-8")
    _age(model_path)
    assert lines() == []
    model_path.write_text(MODEL, encoding="utf-8")
    _age(model_path)
    assert lines() == [6, 7]

    prep_path.write_text(ENCODER.replace("X.min(0)", "0.0"), encoding="utf-8")
    _age(prep_path)
    assert lines() == [7]
    prep_path.write_text(ENCODER, encoding="utf-8")
    _age(prep_path)
    assert lines() == [6, 7]
    index = next((root / ".dpcheck" / "cache").glob("index-*.json"))
    assert json.loads(index.read_text())["summaries"], "summaries are cached with the results"


def test_parallel_and_inline_agree(tmp_path):
    files = {"gen/__init__.py": "", "gen/preprocess.py": ENCODER, "gen/model.py": MODEL}
    for i in range(6):
        files[f"gen/pad{i}.py"] = f"import numpy as np\nepsilon = {i}\nv{i} = np.zeros(3).max()\n"
    root = make(tmp_path, files)
    assert rel_findings(run(root, jobs=2), root) == rel_findings(run(root, jobs=1), root) != []


def test_with_the_real_catalogue_through_the_cli(tmp_path, monkeypatch, capsys):
    from dpcheck.cli import main

    root = make(tmp_path, {"gen/__init__.py": "", "gen/preprocess.py": ENCODER, "gen/model.py": MODEL})
    monkeypatch.chdir(root)
    code = main(["scan", "--no-cache", "--select", "DP202", "--format", "json", "gen"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    hits = [f for f in data["findings"] if f["path"] == "gen/preprocess.py"]
    assert [f["span"]["start"]["line"] for f in hits] == [6, 7]
    assert hits[0]["related"][0]["path"] == "gen/model.py" and hits[0]["related"][0]["line"] == 10


# ---- acknowledged fallbacks --------------------------------------------------------------------

TOOLS = """\
import warnings
import numpy as np
from .utils import PrivacyLeakWarning


def mean(array, epsilon=1.0, bounds=None):
    if bounds is None:
        warnings.warn("Bounds will be calculated on the data: additional privacy leakage.", PrivacyLeakWarning)
        bounds = (np.nanmin(array), np.nanmax(array))
    return np.clip(array, *bounds).mean()


def spread(array, epsilon=1.0, lower=None):
    if lower is None:
        lower = array.min()
    return array - lower


def silent(array, epsilon=1.0, bounds=None):
    bounds = (np.nanmin(array), np.nanmax(array))
    return bounds
"""

SCALER = """\
from .tools import mean, silent, spread


class StandardScaler:
    '''Differentially private standard scaler.'''

    def fit(self, X):
        self.mean_ = mean(X, epsilon=self.epsilon, bounds=None)
        self.low_ = spread(X)
        self.raw_ = silent(X)
        return self
"""


def test_fallback_flagged_by_a_warning_or_a_missing_public_bound_is_acknowledged(tmp_path):
    root = make(tmp_path, {"gen/__init__.py": "", "gen/tools.py": TOOLS, "gen/scaler.py": SCALER})
    result = run(root)
    got = [(f.line, f.category, f.severity) for f in result.findings]
    assert got == [
        (9, "acknowledged", "note"),   # right after warnings.warn(..., PrivacyLeakWarning)
        (15, "acknowledged", "note"),  # only when the public `lower` was not given
        (20, "metadata", "error"),     # the same fallback without any warning stays a violation
    ]
    assert result.gating() == [result.findings[2]]
    assert "right after a privacy-leak warning" in result.findings[0].message
    assert "`lower is None`" in result.findings[1].message


def test_else_branch_of_a_public_bound_test_is_the_fallback(tmp_path):
    """synthpriv's DPEcdf: ``if self.bounds is not None: … else: <quantiles of the data>``."""
    ecdf = """\
    import numpy as np

    class Ecdf:
        def __init__(self, epsilon, bounds=None):
            self.epsilon, self.bounds = epsilon, bounds

        def fit(self, values):
            if self.bounds is not None:
                lo, hi = self.bounds
            else:
                lo = np.quantile(values, 0.001)
                hi = np.quantile(values, 0.999)
            return np.histogram(values, range=(lo, hi))[0] + np.random.laplace(0, 1 / self.epsilon)
    """
    model = """\
    from .ecdf import Ecdf

    class CopulaGenerator:
        def __init__(self, epsilon=1.0):  # privacy budget
            self.epsilon = epsilon

        def fit(self, data):
            self.ecdf = Ecdf(self.epsilon).fit(data)
            return self
    """
    root = make(tmp_path, {"gen/__init__.py": "", "gen/ecdf.py": ecdf, "gen/model.py": model})
    got = [(f.line, f.category) for f in run(root).findings]
    assert got == [(11, "acknowledged"), (12, "acknowledged")]
    unguarded = ecdf.replace("if self.bounds is not None:", "if self.epsilon > 1:")
    root2 = make(tmp_path / "b", {"gen/__init__.py": "", "gen/ecdf.py": unguarded, "gen/model.py": model})
    assert [(f.line, f.category) for f in run(root2).findings] == [(11, "metadata"), (12, "metadata")]


def test_caller_that_passes_the_public_value_never_reaches_the_fallback(tmp_path):
    # by keyword and by position; `bounds=None` (above) does not count as passing it
    scaler = SCALER.replace("bounds=None)", "bounds=self.bounds)").replace("spread(X)", "spread(X, 1.0, self.lower)")
    assert scaler.count("self.bounds") == 1 and "self.lower" in scaler
    root = make(tmp_path, {"gen/__init__.py": "", "gen/tools.py": TOOLS, "gen/scaler.py": scaler})
    got = [(f.line, f.category) for f in run(root).findings]
    assert got == [(20, "metadata")]


# ---- ordinary ML estimators: epsilon/eps/delta are not privacy parameters -----------------------

VALIDATION = """\
import numpy as np

def check_sample_weight(sample_weight, X):
    if sample_weight is not None and X.min() < 0:
        raise ValueError("negative data")
    return np.ones(len(X))
"""


@pytest.mark.parametrize("init", [
    "def __init__(self, epsilon=1.35, alpha=0.0001, max_iter=100):",  # HuberRegressor
    "def __init__(self, eps=0.5, min_samples=5, metric='euclidean'):",  # DBSCAN
    "def __init__(self, epsilon=0.0, tol=1e-4, C=1.0, loss='epsilon_insensitive'):",  # LinearSVR
    "def __init__(self, eps=1e-3, n_alphas=100, cv=None):",  # a path length, a tolerance default
    "def __init__(self, delta=1.0, sigma=0.5):",  # Huber-loss delta, a kernel width
])
def test_ml_estimator_hyperparameters_are_not_a_privacy_budget(tmp_path, init):
    model = f"""\
from .validation import check_sample_weight


class Estimator:
    {init}
        self.params = locals()

    def fit(self, X, y, sample_weight=None):
        w = check_sample_weight(sample_weight, X)
        return w
"""
    root = make(tmp_path, {"gen/__init__.py": "", "gen/validation.py": VALIDATION, "gen/model.py": model})
    assert rel_findings(run(root), root) == []
    claimed = model.replace("class Estimator:", "class Estimator:\n    '''Differentially private estimator.'''")
    root2 = make(tmp_path / "dp", {"gen/__init__.py": "", "gen/validation.py": VALIDATION, "gen/model.py": claimed})
    assert [f[0] for f in rel_findings(run(root2), root2)] == ["gen/validation.py"]


# ---- DP scripts and non-entry functions that read the data and call another module's helper -------

BOUNDS_HELPER = """\
def column_range(values):
    low = values.min()
    high = values.max()
    return low, high


def spread_score(real, fake):
    gap = real.max() - fake.max()
    return abs(gap)
"""


@pytest.mark.parametrize("script", [
    # module-level script code: the released histogram's range is the private column's range
    """\
import numpy as np
import pandas as pd
from gen.utils import column_range

# differentially private histogram of the ages
incomes = pd.read_csv("people.csv")
lo, hi = column_range(incomes["age"])
counts, edges = np.histogram(incomes["age"], bins=10, range=(lo, hi))
noisy = counts + np.random.laplace(0, 1 / 0.5, size=counts.shape)
""",
    # a function of a DP module (not a training entry point) reading a table under another name
    """\
import pandas as pd
from gen import utils


def release_mean(path, epsilon):
    table = pd.read_parquet(path).dropna()
    bounds = utils.column_range(table.salary)
    clipped = table.salary.clip(*bounds)
    sensitivity = (bounds[1] - bounds[0]) / len(clipped)
    return clipped.mean() + laplace_noise(sensitivity / epsilon)  # privacy budget spent here
""",
    # a keyword argument, the data read by a local loader, inside ``if __name__ == "__main__"``
    """\
import numpy as np
from gen.utils import column_range as rng


def load(path):
    frame = np.loadtxt(path, delimiter=",")
    return frame


if __name__ == "__main__":
    records = load("private.csv")
    domain = rng(values=records[:, 2])
    print("privacy budget", 1.0)
    edges = np.linspace(domain[0], domain[1], 20)
    release = noisy_count(records, edges, epsilon=1.0)
""",
])
def test_dp_script_using_a_helpers_returned_range_of_the_data_it_reads(tmp_path, script):
    root = make(tmp_path, {"gen/__init__.py": "", "gen/utils.py": BOUNDS_HELPER, "gen/release.py": script})
    use = next(i + 1 for i, text in enumerate(script.splitlines()) if "column_range(" in text or "rng(" in text)
    assert rel_findings(run(root), root) == [
        ("gen/release.py", use, [("gen/utils.py", 2), ("gen/utils.py", 3)]),
        ("gen/utils.py", 2, [("gen/release.py", use)]),
        ("gen/utils.py", 3, [("gen/release.py", use)]),
    ]


@pytest.mark.parametrize("script", [
    # the range comes from a public schema, not from the table read here
    """\
import pandas as pd
from gen.utils import column_range

# differentially private histogram of the ages
incomes = pd.read_csv("people.csv")
schema = pd.read_json("schema.json", typ="series")
lo, hi = column_range(schema)
noisy = hist(incomes["age"], lo, hi) + laplace_noise(1.0)
""",
    # an evaluation score of real against synthetic data: the helper returns no statistic
    """\
import pandas as pd
from gen.utils import spread_score


def report(path, synthetic):
    table = pd.read_csv(path)
    score = spread_score(table, synthetic)  # utility of the differentially private synthetic data
    return score
""",
    # the same script with no word of differential privacy: an ordinary analysis
    """\
import pandas as pd
from gen.utils import column_range

incomes = pd.read_csv("people.csv")
lo, hi = column_range(incomes["age"])
plot_histogram(incomes["age"], lo, hi)
""",
])
def test_dp_script_with_a_public_range_an_evaluation_or_no_dp_claim_is_quiet(tmp_path, script):
    root = make(tmp_path, {"gen/__init__.py": "", "gen/utils.py": BOUNDS_HELPER, "gen/release.py": script})
    assert rel_findings(run(root), root) == []


def test_a_helper_of_an_evaluation_module_called_by_a_dp_script_is_a_score(tmp_path):
    script = """\
import pandas as pd
from gen import evaluation

# differentially private recommender: held-out categories for the ranking metrics
ratings = pd.read_csv("ratings.csv")
lo, hi = evaluation.column_range(ratings["item"])
popular = [i for i in range(lo, hi)]
"""
    files = {"gen/__init__.py": "", "gen/evaluation.py": BOUNDS_HELPER, "gen/release.py": script}
    root = make(tmp_path, files)
    assert rel_findings(run(root), root) == []
    # the same helper in a module not named for evaluation is reported
    root = make(tmp_path / "twin", {**files, "gen/evaluation.py": "", "gen/utils.py": BOUNDS_HELPER,
                                     "gen/release.py": script.replace("import evaluation", "import utils")
                                     .replace("evaluation.column_range", "utils.column_range")})
    assert [f[:2] for f in rel_findings(run(root), root)] == [("gen/release.py", 6), ("gen/utils.py", 2),
                                                              ("gen/utils.py", 3)]


SAME_FILE = """\
import pandas as pd


def domains_of(frame, columns):
    out = {}
    for col in columns:
        out[col] = sorted(frame[col].dropna().unique().tolist())
    return out


def main(epsilon=1.0):
    # differentially private synthetic data
    table = pd.read_csv("adult.csv")
    domains = domains_of(table, ["sex", "race"])
    return synthesize(table, domains=domains, epsilon=epsilon)
"""


@pytest.mark.parametrize("variant", ["as is", "print only", "public file", "no dp claim"])
def test_same_file_helper_filling_a_dict_with_the_categories_of_the_table_read_by_the_caller(tmp_path, variant):
    text = SAME_FILE
    if variant == "print only":
        text = text.replace("    domains = domains_of(", "    print(domains_of(").replace('"race"])', '"race"]))')
        text = text.replace("domains=domains, ", "")
    elif variant == "public file":
        text = text.replace('table = pd.read_csv("adult.csv")\n    domains = domains_of(table,',
                            'table = pd.read_csv("adult.csv")\n    meta = pd.read_csv("adult_schema.csv")\n'
                            '    domains = domains_of(meta,')
    elif variant == "no dp claim":
        text = text.replace("# differentially private synthetic data", "# synthetic data").replace(
            "epsilon=1.0", "seed=1").replace("epsilon=epsilon", "seed=seed")
    assert text != SAME_FILE or variant == "as is"
    root = make(tmp_path, {"gen/__init__.py": "from gen import run\n", "gen/run.py": text})
    found = [f[:2] for f in rel_findings(run(root), root)]
    assert found == ([("gen/run.py", 7), ("gen/run.py", 14)] if variant == "as is" else [])


@pytest.mark.parametrize("variant", ["as is", "no dp claim"])
def test_a_lone_script_is_still_a_project_for_its_own_helpers(tmp_path, variant):
    # Scanned alone (a one-file folder or the file itself), the helper->caller flow still counts.
    text = SAME_FILE
    if variant == "no dp claim":
        text = text.replace("# differentially private synthetic data", "# synthetic data").replace(
            "epsilon=1.0", "seed=1").replace("epsilon=epsilon", "seed=seed")
    root = make(tmp_path, {"solo/run.py": text})
    expected = [("solo/run.py", 7), ("solo/run.py", 14)] if variant == "as is" else []
    for target in (root / "solo", root / "solo" / "run.py"):
        result = run(root, [str(target)])
        assert result.stats.files == 1
        assert [f[:2] for f in rel_findings(result, root)] == expected


HELPER_SCRIPT = """\
import numpy as np
import pandas as pd


def p99(series):
    x = pd.to_numeric(series, errors="coerce").replace([np.inf, -np.inf], np.nan).dropna()
    return float(np.percentile(x, 99))


def make_vocab(values):
    vals = values.dropna().astype(str)
    uniq = sorted(set(vals.tolist()))
    itos = ["<unk>"] + uniq
    return {"itos": itos}


def main(epsilon=1.0):
    # differentially private training data
    table = pd.read_csv(SOURCE)
BODY
    return train(table, meta=meta, epsilon=epsilon)
"""

HELPER_BODIES = {
    # a converted and cleaned column handed to a percentile
    "converted column": ('    meta = {"hi": p99(table["bytes"])}\n', 7),
    # the distinct values through .tolist() and a list concatenation
    "vocabulary": ('    meta = {}\n    for c in ["os", "vendor"]:\n        meta[c] = make_vocab(table[c])\n', 12),
    # a comprehension over a dict of the table's columns
    "comprehension": ('    cols = {"a": table["a"], "b": table["b"]}\n'
                      '    meta = {k: p99(v) for k, v in cols.items()}\n', 7),
    # a loop over the values of such a dict
    "loop": ('    cols = [table["a"], table["b"]]\n    meta = []\n    for col in cols:\n'
             '        meta.append(p99(col))\n', 7),
}


@pytest.mark.parametrize("source", ['"events.csv"', '"events_schema.csv"'])
@pytest.mark.parametrize("spelling", sorted(HELPER_BODIES))
def test_a_local_helpers_statistic_of_the_table_read_here(tmp_path, spelling, source):
    body, fitted = HELPER_BODIES[spelling]
    text = HELPER_SCRIPT.replace("BODY\n", body).replace("SOURCE", source)
    root = make(tmp_path, {"gen/__init__.py": "", "gen/prep.py": text})
    lines = {line for _, line, _ in rel_findings(run(root), root)}
    if "schema" in source:  # VALID twin: the helper reads a public schema file
        assert lines == set()
    else:
        assert fitted in lines and len(lines) == 2

