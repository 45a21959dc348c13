"""DP208 in a DP-named package: a codebook module fires when a module running the DP mechanism uses it, and stays
quiet when no such module does (a standalone preprocessing helper of the package, b85)."""
from __future__ import annotations

from pathlib import Path

from dpcheck.rule import run_rules
from dpcheck.rules.dp208_private_category_codebook import PrivateCategoryCodebook

CODEC = '''
import pandas as pd
class TableCodec:
    def fit(self, df):
        self.levels = {}
        for col in df.columns:
            self.levels[col] = sorted(df[col].unique())
        return self
    def decode(self, codes):
        return pd.DataFrame({col: [self.levels[col][c] for c in codes[col]] for col in codes.columns})
'''

MODEL_USING = '''
from dp_tabsynth.prep.codec import TableCodec
class NoisyMarginals:
    def __init__(self, epsilon):
        self.epsilon = epsilon
        self.codec = TableCodec()
    def release(self, df, rng):
        coded = self.codec.fit(df)
        return coded.decode(rng.laplace(scale=1 / self.epsilon, size=(10, len(df.columns))))
'''

MODEL_NOT_USING = '''
class NoisyMarginals:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def release(self, df, rng):
        return df.select_dtypes("number").sum() + rng.laplace(scale=1 / self.epsilon)
'''


def _scan(tmp_path: Path, model: str) -> list:
    pkg = tmp_path / "dp_tabsynth"
    (pkg / "prep").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from dp_tabsynth.prep.codec import TableCodec\n")
    (pkg / "prep" / "__init__.py").write_text("from dp_tabsynth.prep.codec import TableCodec\n")
    (pkg / "prep" / "codec.py").write_text(CODEC)
    (pkg / "model.py").write_text(model)
    return [f for f in run_rules(CODEC, [PrivateCategoryCodebook], path=str(pkg / "prep" / "codec.py"))
            if f.rule == "DP208"]


def test_codebook_used_by_the_dp_model_fires(tmp_path: Path) -> None:
    assert _scan(tmp_path, MODEL_USING)


def test_codebook_no_dp_module_uses_is_quiet(tmp_path: Path) -> None:
    assert not _scan(tmp_path, MODEL_NOT_USING)
