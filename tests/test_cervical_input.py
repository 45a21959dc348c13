"""The Cervical Cancer data: the paper's split, target 397, and clear errors for bad CSVs and targets."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcheck.audit.worlds import datasets
from dpcheck.cli import main


@pytest.fixture
def raw() -> pd.DataFrame:
    return pd.read_csv(datasets.cervical_path(), na_values=["?"])


@pytest.fixture
def use_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Write a frame as the Cervical CSV the audit reads (DPCHECK_CERVICAL_CSV)."""

    def write(frame: pd.DataFrame, text: str | None = None) -> Path:
        path = tmp_path / "cervical.csv"
        if text is not None:
            path.write_text(text)
        else:
            frame.to_csv(path, index=False)
        monkeypatch.setenv(datasets.CERVICAL_ENV, str(path))
        datasets.cervical_clean.cache_clear()
        return path

    yield write
    datasets.cervical_clean.cache_clear()


def test_paper_split_686_rows_seed_13(raw: pd.DataFrame) -> None:
    from sklearn.model_selection import train_test_split

    train, test, columns, _, _ = datasets.cervical_clean()
    assert (len(train), len(test)) == (686, 172)
    # the same rows, in the same order, as the paper's call on the raw file
    paper_train, _ = train_test_split(raw, test_size=0.2, stratify=raw["Biopsy"], random_state=13)
    ours = [c for c in raw.columns if c not in datasets.CERVICAL_SPARSE]
    assert list(columns) == ours
    observed = paper_train[ours].to_numpy(dtype=float)
    filled = ~np.isnan(observed)
    assert np.array_equal(train[filled], observed[filled])
    assert train[:, columns.index("Biopsy")].sum() == paper_train["Biopsy"].sum() == 44


def test_row_397_is_a_valid_target() -> None:
    assert datasets.check_cervical(397) == 686
    d = datasets.cervical(397)
    assert np.array_equal(d.target, d.with_target[397])
    assert len(d.without_target) == 685


@pytest.mark.parametrize("target", [686, -1, 10_000])
def test_target_out_of_range_is_refused(target: int) -> None:
    with pytest.raises(ValueError, match="out of range.*686 rows"):
        datasets.check_cervical(target)


def test_cli_refuses_out_of_range_target_before_any_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    store = tmp_path / "s.sqlite"
    code = main(["audit", "--impl", "ref-marginals", "--attack", "groundhog", "--target", "686", "--runs", "5",
                 "--workers", "1", "--store", str(store), "--no-progress"])
    assert code == 2
    assert "--target 686 is out of range" in capsys.readouterr().err
    assert not store.exists()  # refused before the store (or any run) was touched


def test_missing_column(raw: pd.DataFrame, use_csv) -> None:
    use_csv(raw.drop(columns=["Age"]))
    with pytest.raises(ValueError, match="missing column\\(s\\) Age"):
        datasets.check_cervical()


def test_renamed_column(raw: pd.DataFrame, use_csv) -> None:
    use_csv(raw.rename(columns={"Biopsy": "biopsy"}))
    with pytest.raises(ValueError, match="missing column\\(s\\) Biopsy; unexpected column\\(s\\) biopsy \\(renamed\\?\\)"):
        datasets.check_cervical()


def test_wrong_type(raw: pd.DataFrame, use_csv) -> None:
    frame = raw.astype(object)
    frame.loc[5, "N_pregnancies"] = "three"
    use_csv(frame)
    with pytest.raises(ValueError, match="column N_pregnancies must be numeric; row 6 \\(line 7\\) holds 'three'"):
        datasets.check_cervical()


def test_bad_label(raw: pd.DataFrame, use_csv) -> None:
    frame = raw.copy()
    frame.loc[0, "Biopsy"] = 2
    use_csv(frame)
    with pytest.raises(ValueError, match="Biopsy must be 0 or 1"):
        datasets.check_cervical()


def test_too_few_rows(raw: pd.DataFrame, use_csv) -> None:
    use_csv(raw.head(30))
    with pytest.raises(ValueError, match="too few rows: 30"):
        datasets.check_cervical()


def test_empty_column(raw: pd.DataFrame, use_csv) -> None:
    frame = raw.copy()
    frame["Age"] = np.nan
    use_csv(frame)
    with pytest.raises(ValueError, match="column\\(s\\) Age hold no values"):
        datasets.check_cervical()


def test_not_a_csv(use_csv) -> None:
    use_csv(pd.DataFrame(), text="")
    with pytest.raises(ValueError, match="not a readable CSV"):
        datasets.check_cervical()


def test_missing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(datasets.CERVICAL_ENV, str(tmp_path / "nope.csv"))
    with pytest.raises(ValueError, match="nope.csv: no such file"):
        datasets.check_cervical()


def test_cli_names_the_problem(raw: pd.DataFrame, use_csv, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    use_csv(raw.drop(columns=["Smokes"]))
    code = main(["audit", "--impl", "ref-marginals", "--attack", "groundhog", "--target", "3", "--runs", "5",
                 "--workers", "1", "--store", str(tmp_path / "s.sqlite"), "--no-progress"])
    assert code == 2
    assert "missing column(s) Smokes" in capsys.readouterr().err


def test_a_good_copy_passes(raw: pd.DataFrame, use_csv) -> None:
    use_csv(raw)
    assert datasets.check_cervical(397) == 686
