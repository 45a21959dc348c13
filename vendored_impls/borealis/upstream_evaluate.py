"""The data handling of BorealisAI private-data-generation's ``evaluate.py`` driver, rebuilt bug
for bug: features are min-max scaled with bounds read from the training data, and the synthetic
data is handed back in the scaled space (never mapped back to the input's scale or types)."""
from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.preprocessing import MinMaxScaler


def preprocess(x_train: np.ndarray, probe: Any = None) -> tuple[np.ndarray, MinMaxScaler]:
    scaler = MinMaxScaler()
    x_scaled = scaler.fit_transform(x_train)
    if probe is not None:
        probe.bounds(scaler.data_min_, scaler.data_max_, source="data")
    return x_scaled, scaler


def encode_labels(y_train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Class values found in the training labels and each row's class index (conditional mode)."""
    classes, codes = np.unique(y_train, return_inverse=True)
    return classes, codes.astype(np.float64)


def postprocess(x_synthetic: np.ndarray, scaler: MinMaxScaler, probe: Any = None) -> np.ndarray:
    if probe is not None:
        probe.output_transform("none")
    return x_synthetic
