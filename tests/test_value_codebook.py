"""Project flow: the set of values the private data holds (``np.unique``, ``.unique()``, ``set``,
``pd.factorize``) kept as the domain or codebook of a DP pipeline (``value_codebook``), reported as
DP202 in the preparation modules the DP script imports."""
from __future__ import annotations

from pathlib import Path

import pytest


#: the DP script: a local randomiser over the domain the preparation module builds
_DP_MAIN = """
import numpy as np
from prep import build

def randomized_response(value, domain, epsilon, rng):
    p = np.exp(epsilon) / (np.exp(epsilon) + len(domain) - 1)
    return value if rng.random() < p else rng.choice(domain)

def main(path, epsilon=1.0):
    table, domain = build(path)
    rng = np.random.default_rng()
    return [randomized_response(v, domain, epsilon, rng) for v in table]

if __name__ == "__main__":
    main("data.csv")
"""

#: (preparation module, the lines findings must be on; () for a valid twin)
CASES = {
    # (T2 h48) the most frequent occupations survive, the rest merged: the kept categories are read from the records
    "top-categories-kept-lambda": ("""
import pandas as pd
def build(path, limit=20):
    frame = pd.read_csv(path)
    top = frame["job"].value_counts().nlargest(limit).index
    frame["job"] = frame["job"].apply(lambda v: v if v in top else "OTHER")
    return frame["job"], list(frame["job"].unique())
""", (5,)),
    "top-categories-kept-where": ("""
import pandas as pd
def build(path, limit=20):
    frame = pd.read_csv(path)
    keep = frame["city"].value_counts().head(limit).index
    frame["city"] = frame["city"].where(frame["city"].isin(keep), "Other")
    return frame["city"], ["Other"]
""", (5,)),
    # twin: the kept categories are a published list
    "top-categories-from-public-list": ("""
import pandas as pd
PUBLIC_JOBS = ["nurse", "teacher", "driver"]
def build(path):
    frame = pd.read_csv(path)
    frame["job"] = frame["job"].apply(lambda v: v if v in PUBLIC_JOBS else "OTHER")
    return frame["job"], PUBLIC_JOBS + ["OTHER"]
""", ()),
    # each attribute's LDP alphabet is the distinct values of the private column
    "alphabet-per-column-from-unique": ("""
import numpy as np
import pandas as pd
def build(path):
    frame = pd.read_csv(path)
    alphabets = {}
    for name in frame.columns:
        seen = np.unique(frame[name])
        alphabets[name] = list(seen)
    return frame, alphabets
""", (8,)),
    "alphabet-per-column-from-schema": ("""
import pandas as pd
SCHEMA = {"sex": ["F", "M"], "smoker": ["no", "yes"]}
def build(path):
    frame = pd.read_csv(path)
    alphabets = {}
    for name in frame.columns:
        alphabets[name] = list(SCHEMA[name])
    return frame, alphabets
""", ()),
    # the codes of a column enumerate the values it holds
    "codes-enumerate-observed-values": ("""
import pandas as pd
def build(path):
    frame = pd.read_csv(path)
    lookup = {level: code for code, level in enumerate(sorted(frame["region"].dropna().unique()))}
    return frame["region"].map(lookup), lookup
""", (5,)),
    "codes-enumerate-declared-levels": ("""
import pandas as pd
REGIONS = ["north", "south", "east", "west"]
def build(path):
    frame = pd.read_csv(path)
    lookup = {level: code for code, level in enumerate(REGIONS)}
    return frame["region"].map(lookup), lookup
""", ()),
    # an encoder class filling its codebook from np.unique of what it is given
    "encoder-loop-fills-codebook": ("""
import numpy as np
import pandas as pd
class Coder:
    def __init__(self, column):
        distinct = np.unique(column)
        self.to_code = {}
        for position, value in enumerate(distinct):
            self.to_code[value] = position
def build(path):
    frame = pd.read_csv(path)
    return frame, Coder(frame["diagnosis"].to_numpy()).to_code
""", (6,)),
    # factorize: the uniques become the inverse mapping and the domain size
    "factorize-uniques-kept": ("""
import pandas as pd
def build(path):
    frame = pd.read_csv(path)
    inverse, sizes = {}, {}
    for col in frame.columns:
        frame[col], uniques = pd.factorize(frame[col])
        inverse[col] = uniques
        sizes[col] = len(uniques)
    return frame, sizes
""", (7,)),
    "categorical-with-given-categories": ("""
import pandas as pd
LEVELS = {"sex": ["F", "M"]}
def build(path):
    frame = pd.read_csv(path)
    sizes = {}
    for col in frame.columns:
        frame[col] = pd.Categorical(frame[col], categories=LEVELS[col]).codes
        sizes[col] = len(LEVELS[col])
    return frame, sizes
""", ()),
    # a discretiser closing over the sorted distinct values of the series
    "position-among-observed-values": ("""
import pandas as pd
def make_coder(series):
    levels = sorted(set(series))
    def code(value):
        return levels.index(value)
    return code
def build(path):
    frame = pd.read_csv(path)
    coder = make_coder(frame["job"])
    return frame["job"].map(coder), None
""", (4,)),
    # the domain file the DP code reads back lists the values present
    "domain-file-lists-present-values": ("""
import numpy as np
import pandas as pd
def build(path):
    frame = pd.read_csv(path)
    with open("domain.txt", "w") as out:
        for col in frame.columns:
            row = " ".join(map(str, np.unique(frame[col])))
            out.write(col + " " + row + "\\n")
    return frame, None
""", (8,)),
    "domain-file-lists-declared-values": ("""
import pandas as pd
DOMAIN = {"sex": ["F", "M"]}
def build(path):
    frame = pd.read_csv(path)
    with open("domain.txt", "w") as out:
        for col, values in DOMAIN.items():
            out.write(col + " " + " ".join(values) + "\\n")
    return frame, None
""", ()),
    # ordinary code that stays quiet: the target's classes, index sets, id maps, counting, fake values
    "label-classes-enumerated": ("""
import numpy as np
import pandas as pd
def build(path):
    frame = pd.read_csv(path)
    y_train = frame.pop("label").to_numpy()
    class_index = {c: i for i, c in enumerate(np.unique(y_train))}
    return frame, class_index
""", ()),
    "client-index-sets": ("""
import numpy as np
import pandas as pd
def build(path, num_users=10):
    frame = pd.read_csv(path)
    dict_users, all_idxs = {}, np.arange(len(frame))
    for i in range(num_users):
        picked = np.random.choice(all_idxs, 5, replace=False)
        dict_users[i] = set(picked)
    return frame, dict_users
""", ()),
    "user-and-item-id-maps": ("""
import pandas as pd
def build(path):
    ratings = pd.read_csv(path)
    user_map = {u: i for i, u in enumerate(ratings["user_id"].unique())}
    item_map = {m: i for i, m in enumerate(ratings.movieId.unique())}
    return ratings, (user_map, item_map)
""", ()),
    "values-only-counted-or-printed": ("""
import numpy as np
import pandas as pd
def build(path):
    frame = pd.read_csv(path)
    n_levels = len(np.unique(frame["job"]))
    for value in frame["job"].unique():
        print(value)
    return frame, n_levels
""", ()),
    "values-replaced-by-fakes": ("""
import pandas as pd
def build(path, fakes):
    frame = pd.read_csv(path)
    seen = frame["name"].unique()
    swap = dict(zip(seen, fakes))
    return frame["name"].map(swap), None
""", ()),
}


def _join(tmp_path: Path, prep: str, main: str = _DP_MAIN) -> list:
    from test_scan_support import join_project

    return [f for f in join_project(tmp_path / "proj" / "app", {"main.py": main, "prep.py": prep}) if f.path == "prep.py" and "values the data holds" in f.message]


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_codebook_case(tmp_path: Path, name: str) -> None:
    prep, lines = CASES[name]
    assert sorted({f.line for f in _join(tmp_path, prep)}) == sorted(lines)


def test_not_reached_by_dp_code(tmp_path: Path) -> None:
    """The same preparation imported by a script with no DP claim is not reported."""
    plain = _DP_MAIN.replace("epsilon", "temperature").replace("randomized_response", "resample")
    assert _join(tmp_path, CASES["alphabet-per-column-from-unique"][0], main=plain) == []
