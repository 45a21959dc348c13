"""Project reach: domain statistics fitted on private data in loaders, preprocessing scripts and
dataset classes that feed a DP release in another module (each INVALID spelling has a VALID twin)."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dpcheck.analysis import project


def _found(root: Path, files: dict[str, str]) -> list[tuple[str, int]]:
    """DP202 findings of the project phase (summaries joined, no per-file rule) as (file, line)."""
    summaries, display = {}, {}
    root = root / "proj" / "src"  # deep enough that no folder above looks like an installed distribution
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        summary = project.summarize(path.read_text(encoding="utf-8"), str(path))
        if summary is not None:
            summaries[str(path)] = summary
            display[str(path)] = rel
    return sorted({(f.path, f.line) for f in project.join(summaries, display) if f.rule == "DP202"})


_TRAIN = """
from opacus import PrivacyEngine
import pandas as pd
from prep import prepare

def main(noise_multiplier=1.1):
    table = pd.read_csv("patients.csv")
    codes, sizes = prepare(table)
    engine = PrivacyEngine()
    return engine, codes, sizes
"""

#: helpers in ``prep.py``: (text, line of the finding or None)
CATEGORY_COUNTS = {
    "amax-plus-one-per-column": ("""
import numpy as np
def prepare(frame):
    cols = ["a", "b"]
    sizes = np.array([np.amax(frame[c]) for c in cols]) + 1
    return frame, sizes
""", 5),
    "int-max-plus-one": ("""
def prepare(frame):
    sizes = {}
    for c in frame.columns:
        sizes[c] = int(frame[c].max()) + 1
    return frame, sizes
""", 5),
    "method-max-plus-one-on-values": ("""
def prepare(frame):
    width = frame.values.max() + 1
    return frame, width
""", 3),
    # VALID twins: the size from a schema, the class count of the label, a sum of per-column constants
    "schema-sizes": ("""
SCHEMA = {"a": 4, "b": 7}
def prepare(frame):
    sizes = [SCHEMA[c] + 1 for c in SCHEMA]
    return frame, sizes
""", None),
    "label-classes": ("""
def prepare(frame):
    n_classes = frame["label"].max() + 1
    return frame, n_classes
""", None),
    "max-of-constants": ("""
def prepare(frame):
    width = max(3, 5) + 1
    return frame, width
""", None),
}


@pytest.mark.parametrize("case", sorted(CATEGORY_COUNTS))
def test_category_count_from_the_data_maximum(tmp_path, case):
    text, line = CATEGORY_COUNTS[case]
    found = _found(tmp_path, {"app/train.py": _TRAIN, "app/prep.py": text})
    assert found == ([("app/prep.py", line)] if line else [])


ENCODER_FAMILY = {
    "rdt-style-onehot-transformer": ("""
from rdt.transformers import categorical
def prepare(frame):
    enc = categorical.OneHotEncodingTransformer()
    enc.fit(frame, columns="a")
    return enc.transform(frame), None
""", 5),
    "project-own-category-encoder": ("""
from mylib.encoders import CategoryEncoder
def prepare(frame):
    return CategoryEncoder().fit_transform(frame), None
""", 4),
    "gmm-mode-transformer": ("""
from rdt.transformers.numerical import BayesGMMTransformer
def prepare(frame):
    t = BayesGMMTransformer()
    t.fit(frame, columns="x")
    return t.transform(frame), None
""", 5),
    # VALID twins: categories given by the schema, a stateless transformer, a fit on the public split
    "onehot-with-given-categories": ("""
from sklearn.preprocessing import OneHotEncoder
def prepare(frame):
    enc = OneHotEncoder(categories=[["x", "y"]])
    return enc.fit_transform(frame), None
""", None),
    "stateless-function-transformer": ("""
from sklearn.preprocessing import FunctionTransformer
import numpy as np
def prepare(frame):
    return FunctionTransformer(np.log1p).fit_transform(frame), None
""", None),
    "category-encoder-fitted-on-public": ("""
from mylib.encoders import CategoryEncoder
import pandas as pd
def prepare(frame):
    public = pd.read_csv("census_public.csv")
    enc = CategoryEncoder().fit(public)
    return enc.transform(frame), None
""", None),
    "learned-representation-encoder": ("""
from mylib.nets import AutoEncoder
def prepare(frame):
    return AutoEncoder().fit_transform(frame), None
""", None),
}


@pytest.mark.parametrize("case", sorted(ENCODER_FAMILY))
def test_encoder_family_fitted_on_private_data(tmp_path, case):
    text, line = ENCODER_FAMILY[case]
    found = _found(tmp_path, {"app/train.py": _TRAIN, "app/prep.py": text})
    assert found == ([("app/prep.py", line)] if line else [])


RUNNING_MAX = {
    "row-norm-loop-then-divide": ("""
import numpy as np
def prepare(rows):
    biggest = 0
    for r in rows:
        biggest = max(biggest, np.linalg.norm(r))
    return rows / biggest, None
""", 6),
    "index-loop-norm-divides": ("""
import numpy as np
def prepare(X):
    top = 0.0
    for i in range(X.shape[0]):
        n_i = np.linalg.norm(X[i, :])
        top = max(top, n_i)
    X /= top
    return X, None
""", 7),
    "running-min-offset-divisor-list": ("""
def prepare(values):
    hi = 0
    for v in values:
        hi = max(hi, abs(v))
    div = [hi for _ in values]
    return [a / b for a, b in zip(values, div)], values / div
""", 5),
    # VALID twins: a public bound, a running max of losses (not records), a max only printed
    "public-bound": ("""
import numpy as np
def prepare(rows, bound=1.0):
    return rows / bound, None
""", None),
    "running-max-of-losses": ("""
def prepare(rows):
    worst = 0
    for loss in [0.1, 0.5]:
        worst = max(worst, loss)
    return rows / worst, None
""", None),
    "running-max-of-differences-returned": ("""
def prepare(rows):
    worst = 0.0
    for a, b in zip(rows, rows[1:]):
        worst = max(worst, float(abs(a - b).max()))
    return rows, worst
""", None),
    "arithmetic-with-the-maximum": ("""
import numpy as np
def prepare(costs):
    probas = np.max(costs) - costs + 1
    return costs, probas
""", None),
    "running-max-only-printed": ("""
import numpy as np
def prepare(rows):
    biggest = 0
    for r in rows:
        biggest = max(biggest, np.linalg.norm(r))
    print(biggest)
    return rows, None
""", None),
}


@pytest.mark.parametrize("case", sorted(RUNNING_MAX))
def test_running_maximum_over_the_records(tmp_path, case):
    text, line = RUNNING_MAX[case]
    found = _found(tmp_path, {"app/train.py": _TRAIN, "app/prep.py": text})
    assert found == ([("app/prep.py", line)] if line else [])


_STANDALONE = """
import numpy as np
from helpers.encoding import to_onehot

def preprocess(raw="raw.csv", out="clean.npy"):
    data = np.genfromtxt(raw, delimiter=",")
    data = data / data.max(axis=0)
    np.save(out, to_onehot(data))

if __name__ == "__main__":
    preprocess()
"""
_HELPER = """
from sklearn.preprocessing import OneHotEncoder
def to_onehot(cols):
    return OneHotEncoder().fit_transform(cols)
"""
_CALIBRATED = """
import numpy as np

class Perturbed:
    def set_noise(self, eps, delta):
        c = np.sqrt(2 * np.log(1.25 / delta)) / eps
        self.noise = np.random.normal(0, c, 10)

def run(path="clean.npy"):
    X = np.load(path)
    return Perturbed(), X
"""


def test_standalone_preprocessing_script_of_a_project_whose_dp_module_is_known_by_its_calibration(tmp_path):
    found = _found(tmp_path, {
        "app/run.py": _CALIBRATED, "app/prepare_adult.py": _STANDALONE,
        "app/helpers/encoding.py": _HELPER,
    })
    # the helper's fit, the script's own scaling, and the script's use of what the helper returns
    assert found == [("app/helpers/encoding.py", 4), ("app/prepare_adult.py", 7), ("app/prepare_adult.py", 8)]


def test_standalone_script_quiet_without_a_dp_module(tmp_path):
    plain = _CALIBRATED.replace("np.sqrt(2 * np.log(1.25 / delta)) / eps", "0.5 * eps")
    found = _found(tmp_path, {
        "app/run.py": plain, "app/prepare_adult.py": _STANDALONE, "app/helpers/encoding.py": _HELPER,
    })
    assert found == []


def test_evaluation_script_defining_a_preprocess_step_stays_quiet(tmp_path):
    found = _found(tmp_path, {
        "app/run.py": _CALIBRATED, "app/evaluate_utility.py": _STANDALONE.replace("helpers.encoding", "numpy"),
    })
    assert found == []


_DATASET_CLASS = """
import numpy as np

class Categories:
    def __init__(self, frame):
        self.levels = {c: np.unique(frame[c]) for c in frame}

    def encode(self):
        return self.levels
"""
_GIVEN_CLASS = """
class Categories:
    def __init__(self, frame, levels):
        self.frame = frame
        self.levels = dict(levels)

    def encode(self):
        return self.levels
"""


@pytest.mark.parametrize("call", [
    "enc = Categories(table)\n    gan.train(enc.encode())",
    "gan.train(Categories(table).encode())",
    "enc = Categories(frame=table)\n    size = len(enc.levels)\n    gan.train(size)",
])
def test_constructor_keeping_categories_on_the_instance(tmp_path, call):
    script = f"""
import pandas as pd
from opacus import PrivacyEngine
from cats import Categories

def run(gan):
    table = pd.read_csv("private.csv")
    {call}
"""
    found = _found(tmp_path, {"app/main.py": script, "app/cats.py": _DATASET_CLASS})
    assert ("app/cats.py", 6) in found


@pytest.mark.parametrize("call", [
    "enc = Categories(table, LEVELS)\n    gan.train(enc.encode())",
    "enc = Categories(pd.read_csv('synthetic_out.csv'))\n    gan.train(enc.encode())",
    "enc = Categories(table)\n    print(enc)",
])
def test_constructor_valid_twins(tmp_path, call):
    script = f"""
import pandas as pd
from opacus import PrivacyEngine
from cats import Categories
LEVELS = {{"a": [0, 1]}}

def run(gan):
    table = pd.read_csv("private.csv")
    {call}
"""
    cats = _GIVEN_CLASS if "LEVELS)" in call else _DATASET_CLASS
    found = _found(tmp_path, {"app/main.py": script, "app/cats.py": cats})
    assert found == []


_FEATURES = """
class Vocabulary:
    def __init__(self, name, codes):
        self.name, self.codes = name, codes

    @staticmethod
    def observed(frame, name):
        return sorted(set(frame[name].values))

    @staticmethod
    def from_frame(name, frame):
        seen = Vocabulary.observed(frame, name)
        return Vocabulary(name, {v: i for i, v in enumerate(seen)})
"""
_DP_MODEL = """
from opacus import PrivacyEngine
def train_private(table, noise_multiplier=1.0):
    return PrivacyEngine()
"""


@pytest.mark.parametrize("script, line", [
    # star import, static method through its class, kept in a container used later
    ("import pandas as pd\nfrom features import *\nimport model\n\ndef main():\n    df = pd.read_csv('clicks.csv')\n"
     "    vocab = {}\n    for f in ['a', 'b']:\n        vocab[f] = Vocabulary.from_frame(f, df)\n"
     "    return model.train_private(vocab)\n", 9),
    # module alias, result used at once
    ("import pandas as pd\nimport features as fe\nfrom model import train_private\n\ndf = pd.read_csv('clicks.csv')\n"
     "train_private(fe.Vocabulary.from_frame('a', df))\n", 6),
    # from-import of the class, keyword argument
    ("import pandas as pd\nfrom features import Vocabulary\nfrom model import train_private\n\ndef go(path):\n"
     "    rows = pd.read_parquet(path)\n    v = Vocabulary.from_frame(name='a', frame=rows)\n    train_private(v)\n", 7),
])
def test_loader_script_of_a_dp_model_using_a_helper_that_returns_distinct_values(tmp_path, script, line):
    found = _found(tmp_path, {"app/features.py": _FEATURES, "app/model.py": _DP_MODEL, "app/init_data.py": script})
    assert ("app/init_data.py", line) in found and ("app/features.py", 8) in found


@pytest.mark.parametrize("script", [
    # VALID twins: no DP code imported, the vocabulary of a public file, the result only printed
    "import pandas as pd\nfrom features import *\n\ndef main():\n    df = pd.read_csv('clicks.csv')\n"
    "    return Vocabulary.from_frame('a', df)\n",
    "import pandas as pd\nfrom features import *\nimport model\n\ndef main():\n    pub = pd.read_csv('public_schema.csv')\n"
    "    return model.train_private(Vocabulary.from_frame('a', pub))\n",
    "import pandas as pd\nfrom features import Vocabulary\nimport model\n\ndef main():\n    df = pd.read_csv('c.csv')\n"
    "    print(Vocabulary.from_frame('a', df))\n    return model.train_private(df)\n",
])
def test_loader_script_valid_twins(tmp_path, script):
    found = _found(tmp_path, {"app/features.py": _FEATURES, "app/model.py": _DP_MODEL, "app/init_data.py": script})
    assert [f for f in found if f[0] == "app/init_data.py"] == []


def test_set_of_a_schema_is_not_the_data_values(tmp_path):
    features = _FEATURES.replace("set(frame[name].values)", "set(frame.columns)")
    script = ("import pandas as pd\nfrom features import *\nimport model\n\ndef main():\n    df = pd.read_csv('c.csv')\n"
              "    return model.train_private(Vocabulary.from_frame('a', df))\n")
    assert _found(tmp_path, {"app/features.py": features, "app/model.py": _DP_MODEL, "app/init_data.py": script}) == []


@pytest.mark.parametrize("expr, found", [
    ("int(frame['userId'].max()) + 1", False),  # an entity count from ids: not a category domain
    ("frame['age_code'].max() + 1", True),
])
def test_ids_are_not_categories(tmp_path, expr, found):
    text = f"def prepare(frame):\n    n = {expr}\n    return frame, n\n"
    assert (("app/prep.py", 2) in _found(tmp_path, {"app/train.py": _TRAIN, "app/prep.py": text})) is found


def test_class_count_of_the_labels_is_schema(tmp_path):
    helper = "import torch\ndef split(train_labels, k):\n    n_classes = train_labels.max() + 1\n    return [n_classes] * k\n"
    model = ("from opacus import PrivacyEngine\nfrom helper import split\n\ndef train_dp(data, labels, noise_multiplier=1.0):\n"
             "    parts = split(labels, 4)\n    return PrivacyEngine(), parts\n")
    assert _found(tmp_path, {"app/helper.py": helper, "app/dp.py": model}) == []
