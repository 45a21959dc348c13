"""Project flow: preprocessing fitted on the private data in a module a DP module imports."""
from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.analysis import project

_DP_MAIN = """
from opacus import PrivacyEngine
from loader import load

def main(noise_multiplier=1.0):
    X, y = load("train.csv")
    engine = PrivacyEngine()
    return engine, X, y
"""

#: (loader text, the line a finding must be on or None for the valid twin)
CASES = {
    # (R1 b86) a loss module weights the spectrum of the model's error by its maximum
    "loss-class-weight-matrix": ("""
import torch
class SpectralLoss(torch.nn.Module):
    def weight(self, recon, real):
        w = (recon - real).abs() ** 2
        return w / w.max()
def load(path):
    return torch.load(path), None
""", None),
    # (R1 b94) label smoothing: a hyperparameter spread evenly over the number of classes
    "label-smoothing-over-class-count": ("""
import torch
def load(path, smoothing=0.1):
    data = torch.load(path)
    n_classes = int(data.y.max()) + 1
    ls = float(smoothing)
    soft = torch.full((len(data.y), n_classes), ls / n_classes)
    return data.x, soft
""", None),
    # (R1 b93) a simulated profile scaled to reach a public target peak
    "scaled-to-public-target": ("""
import numpy as np
def load(houses, desired_peak):
    profile = np.zeros(len(houses[0]))
    for h in houses:
        peak = np.max(profile + h)
        if peak > desired_peak:
            profile = profile + h * (desired_peak / np.max(peak))
            break
        profile = profile + h
    return profile, None
""", None),
    # twin: the profile divided by its own peak
    "scaled-to-own-peak": ("""
import numpy as np
def load(houses):
    profile = np.sum(houses, axis=0)
    profile = profile / np.max(profile)
    return profile, None
""", 5),
    # (R1 b93) the error of the noisy result against the truth, normalised for an accuracy metric
    "error-normalised-for-accuracy": ("""
import numpy as np
def empirical_accuracy(noisy, truth):
    error = {k: np.abs(noisy[k] - truth[k]) for k in truth}
    return {k: error[k] / np.max(truth[k]) for k in error}
def load(path):
    return np.load(path), None
""", None),
    # (R1 b86) the min-max arm of a helper whose only caller hard-codes another option
    "dead-dispatch-arm": ("""
import numpy as np
def rescale(data, mode):
    if mode == "minmax":
        data = (data - data.min(axis=0)) / (data.max(axis=0) - data.min(axis=0))
    elif mode == "mean":
        data = (data - data.mean(axis=0)) / data.std(axis=0)
    return data
def load(path):
    mode = "mean"
    return rescale(np.load(path), mode), None
""", 7),
    # (R1 b93/b94) a refit on the codes a first fit wrote (identity) and ids mapped to indices
    "label-refit-and-ids": ("""
from sklearn.preprocessing import LabelEncoder
import pandas as pd
def load(path):
    df = pd.read_csv(path)
    enc = LabelEncoder()
    df["father"] = enc.fit_transform(df["father"])
    df["maternal"] = enc.fit_transform(df["father"])
    df["u"] = LabelEncoder().fit_transform(df["user_id"])
    return df, None
""", 7),
    # the largest record norm found by comparison in a loop over the rows, then every row divided by it
    "numpy-running-max-by-comparison": ("""
import numpy as np
def load(path):
    X = np.loadtxt(path)
    top = 0.0
    for j in range(X.shape[0]):
        size = np.linalg.norm(X[j], ord=2)
        if size > top:
            top = size
    for j in range(X.shape[0]):
        X[j] = (1.0 * X[j]) / top
    return X, None
""", 9),
    # twin: rows clipped to a public radius (the comparison is with the constant bound)
    "numpy-rows-clipped-to-radius": ("""
import numpy as np
def load(path, radius=1.0):
    X = np.loadtxt(path)
    for j in range(X.shape[0]):
        size = np.linalg.norm(X[j], ord=2)
        if size > radius:
            X[j] = X[j] * (radius / size)
    return X / radius, None
""", None),
    "numpy-standardise": ("""
import numpy as np
def load(path):
    data = np.loadtxt(path)
    mu = data.mean(axis=0)
    sd = data.std(axis=0)
    return (data - mu) / sd, None
""", 7),
    # dividing by the longest image side: the array's dimensions, not a statistic of the pixels
    "numpy-crop-by-shape": ("""
import numpy as np
def load(path):
    img = np.load(path)
    side = np.max(img.shape[:2])
    return img / side, None
""", None),
    # the same division by the pixels' own maximum is a statistic of the data
    "numpy-crop-by-values": ("""
import numpy as np
def load(path):
    img = np.load(path)
    side = np.max(img, axis=0)
    return img / side, None
""", 6),
    "numpy-standardise-public": ("""
import numpy as np
PUBLIC_MEAN, PUBLIC_STD = 0.5, 0.2
def load(path):
    data = np.loadtxt(path)
    return (data - PUBLIC_MEAN) / PUBLIC_STD, None
""", None),
    "torch-minmax-attribute": ("""
import torch
class Scale:
    def __call__(self, batch_data):
        lo = self.records.min(dim=0)[0]
        return (self.records - lo)
def load(path):
    return torch.load(path), None
""", 6),
    "torch-minmax-public-range": ("""
import torch
class Scale:
    def __init__(self, low, high):
        self.low, self.high = low, high
    def __call__(self, records):
        return (records - self.low) / (self.high - self.low)
def load(path):
    return torch.load(path), None
""", None),
    "pandas-median-fill": ("""
import pandas as pd
def load(path):
    df = pd.read_csv(path)
    df = df.fillna(df.median())
    return df, None
""", 5),
    "pandas-constant-fill": ("""
import pandas as pd
def load(path):
    df = pd.read_csv(path)
    df = df.fillna(0)
    return df, None
""", None),
    "encoder-through-helper": ("""
from sklearn.preprocessing import OrdinalEncoder
def encode(frame):
    enc = OrdinalEncoder()
    return enc.fit_transform(frame)
def load(path):
    return encode(open(path)), None
""", 5),
    "encoder-public-categories": ("""
from sklearn.preprocessing import OrdinalEncoder
def encode(frame, cats):
    enc = OrdinalEncoder(categories=cats)
    return enc.fit_transform(frame)
def load(path):
    return encode(open(path), [["a", "b"]]), None
""", None),
    "encoder-on-public-split": ("""
from sklearn.preprocessing import StandardScaler
def load(path, public_frame):
    scaler = StandardScaler().fit(public_frame)
    return scaler.transform(open(path)), None
""", None),
    "helper-returning-statistics": ("""
from .utils import min_max_scaler
def load(path):
    rows, lo, hi = min_max_scaler(open(path))
    return rows, (lo, hi)
""", 4),
    "helper-public-range": ("""
from .utils import min_max_scaler
def load(path, lo, hi):
    rows = min_max_scaler(open(path), lo, hi)
    return rows, (lo, hi)
""", None),
    "helper-returning-splits": ("""
from .utils import load_normalised
def load(path):
    train, val, test = load_normalised(path)
    return train, val
""", None),
    "helper-nested-in-evaluation": ("""
import numpy as np
def classifier_utility(X_train, X_test, model):
    def standardise(x):
        return (x - np.mean(x, axis=0)) / np.std(x, axis=0)
    return model.evaluate(standardise(X_test))
def load(path):
    return np.load(path), None
""", None),
    "augmented-shift": ("""
def load(self, column):
    first = self.frame[column].min()
    self.frame[column] -= first
    return self.frame, first
""", 4),
    "kmeans-vocabulary": ("""
from sklearn.cluster import KMeans
def load(points, scale):
    km = KMeans(n_clusters=8)
    km.fit(points)
    return km.cluster_centers_, scale
""", 5),
    "kmeans-public-grid": ("""
from sklearn.cluster import KMeans
def load(public_points, scale):
    km = KMeans(n_clusters=8)
    km.fit(public_points)
    return km.cluster_centers_, scale
""", None),
    "correlation-selection": ("""
def load(df):
    corr = df.corr()
    target = abs(corr["label"])
    keep = target[target > 0.2]
    return df[keep.index], None
""", 5),
    "encoder-on-class-range": ("""
import numpy as np
from sklearn.preprocessing import OneHotEncoder
def load(self, y):
    self.encoder = OneHotEncoder(sparse_output=False)
    self.encoder.fit(np.arange(self.n_classes).reshape(-1, 1))
    return self.encoder.transform(y.reshape(-1, 1)), None
""", None),
    "encoder-on-labels": ("""
import numpy as np
from sklearn.preprocessing import OneHotEncoder
def load(self, y):
    self.encoder = OneHotEncoder(sparse_output=False)
    self.encoder.fit(y.reshape(-1, 1))
    return self.encoder.transform(y.reshape(-1, 1)), None
""", 6),
    "validation-warnings": ("""
def _validate_statistics(self, data):
    warnings = []
    for col in data.columns:
        z = (data[col] - data[col].mean()) / data[col].std()
        if (abs(z) > 3).any():
            warnings.append(col)
    return warnings
def load(path):
    return read(path), None
""", None),
    "validation-raises": ("""
def validate_input_data(data, categories):
    for col in data.columns:
        z = (data[col] - data[col].mean()) / data[col].std()
        if (abs(z) > 3).any():
            raise ValueError(col)
    return data
def load(path):
    return read(path), None
""", 4),
    "distance-to-record-risk": ("""
from sklearn.preprocessing import StandardScaler
def _calculate_dcr(self, original, synthetic):
    scaler = StandardScaler()
    real = scaler.fit_transform(original)
    return nearest(real, scaler.transform(synthetic))
def load(path):
    return read(path), None
""", None),
    "standardised-in-loader": ("""
def load(path, data):
    for col in data.columns:
        data[col] = (data[col] - data[col].mean()) / data[col].std()
    return data, None
""", 4),
    "grad-sampler-centring": ("""
from opacus.grad_sample import register_grad_sampler
from torch.nn import GroupNorm
@register_grad_sampler(GroupNorm)
def groupnorm_grad_sample(layer, A, B):
    mean = A.mean(dim=(0, 2, 3), keepdim=True)
    centred = A - mean
    return {layer.weight: (centred * B).sum(dim=(2, 3))}
def load(path):
    return read(path), None
""", None),
    # across the batch (axis 0 included): a per-record reduction (dim=(2, 3)) alone would read no other record
    "layer-input-centring": ("""
def groupnorm_grad_sample(layer, A, B):
    mean = A.mean(dim=(0, 2, 3), keepdim=True)
    centred = A - mean
    return {layer.weight: (centred * B).sum(dim=(2, 3))}
def load(path):
    return read(path), None
""", 4),
    "toy-rows-drawn": ("""
import numpy as np
def load(amt, dim):
    rows = []
    for n in range(amt):
        row = np.random.normal(loc=0.0, scale=1.0, size=dim)
        rows.append(row)
    rows = np.array(rows)
    return (rows - np.min(rows)) / (np.max(rows) - np.min(rows)), None
""", None),
    "rows-read": ("""
import numpy as np
def load(path, dim):
    rows = []
    for line in open(path):
        row = np.array(line.split(","), dtype=float)
        rows.append(row)
    rows = np.array(rows)
    return (rows - np.min(rows)) / (np.max(rows) - np.min(rows)), None
""", 9),
    "evaluation-only": ("""
from sklearn.preprocessing import StandardScaler
from sklearn.metrics import accuracy_score
def load(real, model):
    X = StandardScaler().fit_transform(real)
    return accuracy_score(model.predict(X), real), None
""", None),
    "home-scaler-fitted-in-dp-function": ("""
import torch
class Standardiser:
    def fit(self, x):
        self.mu, self.sd = x.mean(0), x.std(0)
        return self
    def transform(self, x):
        return (x - self.mu) / self.sd
def load(path, target_epsilon=1.0):
    records = torch.load(path)
    scaler = Standardiser().fit(records)
    return scaler.transform(records), target_epsilon
""", 11),
    "home-scaler-in-baseline": ("""
import torch
class Standardiser:
    def fit(self, x):
        self.mu, self.sd = x.mean(0), x.std(0)
        return self
    def transform(self, x):
        return (x - self.mu) / self.sd
def load(path):
    records = torch.load(path)
    scaler = Standardiser().fit(records)
    return scaler.transform(records), None
""", None),
    "centred-for-covariance-only": ("""
import numpy as np
def load(path):
    data = np.loadtxt(path)
    centred = data - data.mean(axis=0)
    scatter = centred.T.dot(centred)
    return scatter, centred.shape[0]
""", None),
    "centred-and-returned": ("""
import numpy as np
def load(path):
    data = np.loadtxt(path)
    centred = data - data.mean(axis=0)
    scatter = centred.T.dot(centred)
    return centred, scatter
""", 5),
    "toy-sample-rescaled": ("""
import numpy as np
import generators as gen
def load(n, dim):
    database = gen.mixture_sample(n, dim)
    database = (database - np.min(database)) / (np.max(database) - np.min(database))
    return database, None
""", None),
    "gradient-norms-centred": ("""
import torch
def load(grads):
    norms = torch.stack([g.norm() for g in grads])
    importance = norms * 0.9
    return (importance - importance.median()) / importance.std(), None
""", None),
    # a transform applied to one record: each row (channel) rescaled by its own min/max or moments
    "per-record-transform-rows": ("""
import numpy as np
class Normalize:
    def __call__(self, signal):
        for i, row in enumerate(signal):
            signal[i, :] = (row - np.min(row)) / (np.max(row) - np.min(row))
        for i, row in enumerate(signal):
            signal[i, :] = (row - np.mean(row)) / np.std(row)
        return signal
def load(path):
    return Normalize()(np.load(path)), None
""", None),
    "per-record-transform-rows-shared-stat": ("""
import numpy as np
class Normalize:
    def __call__(self, signal):
        for i, row in enumerate(signal):
            signal[i, :] = (row - np.min(signal)) / np.std(signal)
        return signal
def load(path):
    return Normalize()(np.load(path)), None
""", 6),
    "per-record-iterrows": ("""
import pandas as pd
def load(path):
    df = pd.read_csv(path)
    out = []
    for _, rec in df.iterrows():
        out.append((rec - rec.mean()) / rec.std())
    return out, None
""", None),
    # (g1) per-image standardisation by index: each image centred by its own mean and std, the loop
    # counting over the images (TF's per_image_standardization, spelt with numpy)
    "per-record-index-loop": ("""
import numpy as np
def load(path):
    images = np.load(path)
    for k in range(len(images)):
        m = np.mean(images[k, ...])
        s = max(np.std(images[k, ...]), 1e-3)
        images[k, ...] = (images[k, ...] - m) / s
    return images, None
""", None),
    # … a crop of one image bound in the loop body, then standardised by its own moments
    "per-record-index-loop-crop": ("""
import numpy as np
def load(path):
    batch = np.load(path)
    out = []
    for j in range(batch.shape[0]):
        pic = batch[j, :, :, :]
        pic = np.pad(pic, [[2, 2], [2, 2], [0, 0]])
        pic = pic[1:29, 1:29, :]
        out.append((pic - pic.mean()) / pic.std())
    return np.array(out), None
""", None),
    # the twin: the index loop counts over the images but every image is centred by the whole set's mean
    "per-record-index-loop-shared-stat": ("""
import numpy as np
def load(path):
    images = np.load(path)
    for k in range(len(images)):
        images[k, ...] = images[k, ...] - np.mean(images)
    return images, None
""", 6),
    # … and an index loop over the columns (not the records) centres each column by its own mean
    "per-column-index-loop": ("""
import numpy as np
def load(path):
    data = np.load(path)
    for c in range(data.shape[1]):
        data[:, c] = data[:, c] - np.mean(data[:, c])
    return data, None
""", 6),
    # (g1) a helper named for one item rescales that item by its own extremes (a vector, an image map)
    "per-item-helper": ("""
import numpy as np
def normalise_vector(vec):
    lo, hi = np.min(vec), np.max(vec)
    return (vec - lo) / (hi - lo)
def img_to_unit(x):
    x = x - np.min(x)
    return x / np.max(x)
def load(path):
    faces = np.load(path)
    return np.stack([normalise_vector(f) for f in faces]), None
""", None),
    # … nor a vector helper named for a column: the column's extremes are a statistic of every record
    "per-item-helper-column": ("""
import pandas as pd
def column_vector_unit(col_vec):
    return (col_vec - col_vec.min()) / (col_vec.max() - col_vec.min())
def load(path):
    df = pd.read_csv(path)
    df["age"] = column_vector_unit(df["age"])
    return df, None
""", 4),
    # the twin: a helper named for the whole image set scales it by the set's extremes
    "per-item-helper-many": ("""
import numpy as np
def normalise_images(imgs):
    return (imgs - np.min(imgs)) / (np.max(imgs) - np.min(imgs))
def load(path):
    return normalise_images(np.load(path)), None
""", 4),
    "per-column-loop": ("""
import pandas as pd
def load(path):
    df = pd.read_csv(path)
    out = []
    for col in df.columns:
        out.append((df[col] - df[col].mean()) / df[col].std())
    return out, None
""", 7),
    "per-record-axis": ("""
import numpy as np
def load(path):
    X = np.load(path)
    X = X - X.mean(axis=1, keepdims=True)
    return X / np.std(X, axis=(1, 2), keepdims=True), None
""", None),
    # (QF b90) a per-image standardiser: every axis but the records' (``tuple(range(1, ndim))``)
    "per-record-axes-range": ("""
import numpy as np
def load(path):
    X = np.load(path)
    axes = tuple(range(1, len(X.shape)))
    X = X - np.mean(X, axis=axes, keepdims=True)
    return X / np.std(X, axis=list(range(1, X.ndim)), keepdims=True), None
""", None),
    # twin: the range starts at the records' axis 0, a statistic over all of them
    "all-axes-range": ("""
import numpy as np
def load(path):
    X = np.load(path)
    axes = tuple(range(0, X.ndim))
    X = X - np.mean(X, axis=axes, keepdims=True)
    return X, None
""", 6),
    "per-feature-axis": ("""
import numpy as np
def load(path):
    X = np.load(path)
    X = X - X.mean(axis=0, keepdims=True)
    return X, None
""", 5),
    "per-record-torch-dim": ("""
import torch
def load(path):
    x = torch.load(path)
    return (x - x.mean(dim=1, keepdim=True)) / x.std(dim=1, keepdim=True), None
""", None),
    "per-feature-torch-dim": ("""
import torch
def load(path):
    x = torch.load(path)
    return (x - x.mean(dim=0, keepdim=True)) / x.std(dim=0, keepdim=True), None
""", 5),
    # the federated server clusters its own points, weighted by the clients' noised statistics
    "server-own-points-kmeans": ("""
from sklearn.cluster import KMeans
def load(model, k):
    weights = model.accumulated_statistics["point_weights"]
    km = KMeans(n_clusters=k)
    km.fit(model.proj_X_server[weights > 0], sample_weight=weights[weights > 0])
    return km.cluster_centers_, None
""", None),
    "client-points-kmeans": ("""
from sklearn.cluster import KMeans
def load(model, k):
    weights = model.accumulated_statistics["point_weights"]
    km = KMeans(n_clusters=k)
    km.fit(model.proj_X_client[weights > 0], sample_weight=weights[weights > 0])
    return km.cluster_centers_, None
""", 6),
    # a fitted column keeps the private extremes as its range (decoded or sampled between them)
    "stored-range-cast-attributes": ("""
class NumericColumn:
    def infer_range(self, given=None):
        if given:
            self.low, self.high = given
        else:
            self.low = float(self.values_nonnull.min())
            self.high = float(self.values_nonnull.max())
def load(path):
    return NumericColumn(), None
""", 8),
    "stored-range-public-given": ("""
class NumericColumn:
    def infer_range(self, given):
        self.low, self.high = given
        self.spread = self.high - self.low
def load(path):
    return NumericColumn(), None
""", None),
    "stored-range-tuple": ("""
import numpy as np
class Encoder:
    def fit(self, feats):
        self.span = np.min(feats, axis=0), np.max(feats, axis=0)
        return self
def load(path):
    return Encoder().fit(np.loadtxt(path)), None
""", 5),
    "stored-range-tuple-warned": ("""
import warnings
import numpy as np
class Encoder:
    def fit(self, feats):
        if self.span is None:
            warnings.warn("range read from the data: privacy leak")
            self.span = np.min(feats, axis=0), np.max(feats, axis=0)
        return self
def load(path):
    return Encoder().fit(np.loadtxt(path)), None
""", None),
    "stored-range-per-column-dict": ("""
class Table:
    def fit(self, frame):
        for name, column in frame.items():
            self.limits[name] = {"lo": column.min(), "hi": column.max()}
def load(path):
    return Table(), None
""", 5),
    "stored-one-extreme": ("""
class Survival:
    def fit(self, durations):
        self.horizon = durations.max()
def load(path):
    return Survival(), None
""", None),
    "encoder-fitted-on-enumerated-domain": ("""
import numpy as np
from sklearn.preprocessing import OneHotEncoder
class Transformer:
    def __init__(self, domain):
        self.meta = [self._encode(c, np.arange(k)) for c, k in domain.items()]
    def _encode(self, column, values):
        encoder = OneHotEncoder()
        encoder.fit(values.reshape(-1, 1))
        return column, encoder
def load(path):
    return Transformer({"age": 100}), None
""", None),
    "encoder-fitted-on-records-column": ("""
import numpy as np
import pandas as pd
from sklearn.preprocessing import OneHotEncoder
class Transformer:
    def __init__(self, data):
        self.meta = [self._encode(c, data[c].to_numpy()) for c in data.columns]
    def _encode(self, column, values):
        encoder = OneHotEncoder()
        encoder.fit(values.reshape(-1, 1))
        return column, encoder
def load(path):
    return Transformer(pd.read_csv(path)), None
""", 10),
    "fit-shadowed-by-fit-transform": ("""
import pandas as pd
from sklearn.preprocessing import KBinsDiscretizer
class Discretizer:
    def fit(self, data):
        self.bins = KBinsDiscretizer(n_bins=10, encode="ordinal")
        self.bins.fit(data)
    def fit_transform(self, data):
        self.bins = KBinsDiscretizer(n_bins=10, encode="ordinal", strategy="uniform")
        return self.bins.fit_transform(data)
def load(path):
    return Discretizer().fit_transform(pd.read_csv(path)), None
""", 10),
    "fit-reached-from-fit-transform": ("""
import pandas as pd
from sklearn.preprocessing import KBinsDiscretizer
class Discretizer:
    def fit(self, data):
        self.bins = KBinsDiscretizer(n_bins=10, encode="ordinal")
        self.bins.fit(data)
        return self
    def fit_transform(self, data):
        self.fit(data)
        return self.bins.transform(data)
def load(path):
    return Discretizer().fit_transform(pd.read_csv(path)), None
""", (7, 10)),
    "qcut-quantile-bins": ("""
import pandas as pd
def load(path):
    df = pd.read_csv(path)
    df["age"] = pd.qcut(df["age"], q=5, duplicates="drop")
    return df, None
""", 5),
    "cut-public-edges": ("""
import pandas as pd
def load(path):
    df = pd.read_csv(path)
    df["age"] = pd.cut(df["age"], bins=[0, 18, 30, 50, 120])
    return df, None
""", None),
    "qcut-loop-over-columns": ("""
import pandas as pd
def load(path, columns):
    frame = pd.read_csv(path)
    for col in columns:
        frame[col] = pd.qcut(frame[col], 4, labels=False)
    return frame, None
""", 6),
    "cut-loop-public-edges": ("""
import pandas as pd
EDGES = {"age": [0, 30, 60, 120], "hours": [0, 20, 40, 100]}
def load(path, columns):
    frame = pd.read_csv(path)
    for col in columns:
        frame[col] = pd.cut(frame[col], EDGES[col], labels=False)
    return frame, None
""", None),
    "cut-bin-count": ("""
import pandas as pd
def load(path):
    data = pd.read_csv(path)
    data["income"] = pd.cut(data["income"], bins=10, labels=False)
    return data, None
""", 5),
    "cut-linspace-edges": ("""
import numpy as np
import pandas as pd
def load(path):
    data = pd.read_csv(path)
    data["income"] = pd.cut(data["income"], bins=np.linspace(0, 200000, 11), labels=False)
    return data, None
""", None),
    "cut-configured-bin-count": ("""
import pandas as pd
class Binner:
    def __init__(self, n_bins):
        self.n_bins = n_bins
    def __call__(self, records):
        return pd.cut(records["score"], bins=self.n_bins, labels=False)
def load(path):
    return Binner(8)(pd.read_csv(path)), None
""", 7),
    "cut-configured-edges": ("""
import pandas as pd
class Binner:
    def __init__(self, edges):
        self.edges = edges
    def __call__(self, records):
        return pd.cut(records["score"], bins=self.edges, labels=False)
def load(path):
    return Binner([0, 1, 2, 5]), None
""", None),
    # a scaling behind a switch that defaults off and that the module's own call leaves off
    "off-switch-left-off": ("""
import numpy as np
def min_max(data):
    lo = np.min(data, axis=0)
    return data - lo, lo
def load(path, save=False, norm=False):
    data = np.loadtxt(path)
    if norm:
        data, lo = min_max(data)
    return data, None
if __name__ == "__main__":
    load("train.csv", save=True, norm=False)
""", None),
    "off-switch-turned-on": ("""
import numpy as np
def min_max(data):
    lo = np.min(data, axis=0)
    return data - lo, lo
def load(path, save=False, norm=False):
    data = np.loadtxt(path)
    if norm:
        data, lo = min_max(data)
    return data, None
if __name__ == "__main__":
    load("train.csv", save=True, norm=True)
""", (4, 5)),
    "off-switch-default-on": ("""
from sklearn.preprocessing import StandardScaler
def load(path, scale=True):
    data = read_table(path)
    if scale:
        data = StandardScaler().fit_transform(data)
    return data, None
load("train.csv")
""", 6),
    "off-switch-keyword-only-positional-call": ("""
from sklearn.preprocessing import StandardScaler
class Loader:
    def load(self, path, normalise=None):
        data = read_table(path)
        if normalise:
            data = StandardScaler().fit_transform(data)
        return data, None
def load(path):
    return Loader().load(path)
""", None),
    # one subject's gaps filled with that subject's own median, the helper mapped over the subjects
    "per-record-median-fill": ("""
import numpy as np
import pandas as pd
def subject_matrix(frame, columns):
    vals = frame[columns].ffill()
    for c in columns:
        col = vals[c]
        vals[c] = col.fillna(col.median())
    return vals.values
def load(paths):
    rows = []
    for p in paths:
        frame = pd.read_csv(p)
        x = subject_matrix(frame, ["hr", "temp"])
        rows.append(x)
    return np.stack(rows), None
""", None),
    "per-record-helper-on-whole-table": ("""
import numpy as np
import pandas as pd
def subject_matrix(frame, columns):
    vals = frame[columns].ffill()
    for c in columns:
        col = vals[c]
        vals[c] = col.fillna(col.median())
    return vals.values
def load(paths):
    table = pd.concat([pd.read_csv(p) for p in paths])
    return subject_matrix(table, ["hr", "temp"]), None
""", 8),
    # an encoder of the prediction target: its classes are the label schema
    "label-encoder-on-target": ("""
from sklearn.preprocessing import LabelEncoder
def load(path):
    df = read_table(path)
    y_train = df.pop("income")
    y_train = LabelEncoder().fit_transform(y_train)
    return df, y_train
""", None),
    "label-encoder-codes-named-labels": ("""
from sklearn.preprocessing import LabelEncoder
def load(path):
    df = read_table(path)
    enc = LabelEncoder()
    enc = enc.fit(df["diagnosis"].values)
    labels = enc.transform(df["diagnosis"].values)
    return df, labels
""", None),
    "label-binarizer-on-labels": ("""
from sklearn.preprocessing import LabelBinarizer
def load(path):
    records, labels = read_table(path)
    onehot = LabelBinarizer()
    onehot.fit(labels)
    return records, onehot.transform(labels)
""", None),
    "label-encoder-on-features": ("""
from sklearn.preprocessing import LabelEncoder
def load(path):
    df = read_table(path)
    enc = LabelEncoder()
    enc = enc.fit(df["diagnosis"].values)
    df["diagnosis"] = enc.transform(df["diagnosis"].values)
    return df, None
""", 6),
    # one-hot columns made from the categories the records hold
    "get-dummies-frame": ("""
import pandas as pd
def load(path):
    records = pd.read_csv(path)
    wide = pd.get_dummies(records, columns=["job", "city"])
    return wide.values, None
""", 5),
    "get-dummies-series-prefix": ("""
import pandas as pd
def load(path):
    table = pd.read_csv(path)
    parts = [pd.get_dummies(table[c], prefix=c) for c in ("sex", "race")]
    return pd.concat(parts, axis=1), None
""", 5),
    "get-dummies-data-keyword": ("""
import pandas
def load(path, categorical):
    frame = pandas.read_parquet(path)
    encoded = pandas.get_dummies(data=frame[categorical])
    return encoded, None
""", 5),
    "get-dummies-public-categories": ("""
import pandas as pd
JOBS = ["clerk", "nurse", "driver"]
def load(path):
    records = pd.read_csv(path)
    return pd.get_dummies(pd.Categorical(records["job"], categories=JOBS)), None
""", None),
    # the category set given positionally before the encoding: the columns are the code's
    "get-dummies-after-set-categories-loop": ("""
import pandas as pd
def load(path, sizes):
    rows = pd.read_csv(path).astype("category")
    for col in sizes:
        rows[col] = rows[col].cat.set_categories(range(sizes[col]))
    return pd.get_dummies(rows, dtype=int), None
""", None),
    "get-dummies-categorical-dtype-positional": ("""
import pandas as pd
LEVELS = ("low", "mid", "high")
def load(path):
    rows = pd.read_csv(path)
    grade = rows["grade"].astype(pd.CategoricalDtype(LEVELS))
    return pd.get_dummies(grade), None
""", None),
    "get-dummies-categorical-levels-positional": ("""
import pandas as pd
def load(path, levels):
    rows = pd.read_csv(path)
    return pd.get_dummies(pd.Categorical(rows["city"], levels)), None
""", None),
    # categories fitted to the records (no set given): still the records' values
    "get-dummies-after-astype-category-only": ("""
import pandas as pd
def load(path, sizes):
    rows = pd.read_csv(path).astype("category")
    for col in sizes:
        rows[col] = rows[col].cat.remove_unused_categories()
    return pd.get_dummies(rows, dtype=int), None
""", 7),
    "get-dummies-categorical-no-levels": ("""
import pandas as pd
def load(path):
    rows = pd.read_csv(path)
    return pd.get_dummies(pd.Categorical(rows["city"])), None
""", 5),
    # a synthetic set drawn by a scikit-learn generator: toy data, no one's records
    "scaler-on-generated-circles": ("""
from sklearn import datasets
from sklearn.preprocessing import StandardScaler
class Provider:
    def __init__(self, pts, labels):
        self.pts, self.labels = pts, labels

    @classmethod
    def circles(cls, n, seed):
        pts, labels = datasets.make_circles(n_samples=n, noise=0.05, random_state=seed)
        return cls(StandardScaler().fit_transform(pts), labels)
def load(path):
    return Provider.circles(100, 0), None
""", None),
    "scaler-on-generated-imported": ("""
from sklearn.datasets import make_swiss_roll
from sklearn.preprocessing import MinMaxScaler
def load(n):
    cloud, _ = make_swiss_roll(n, noise=0.1)
    return MinMaxScaler().fit_transform(cloud), None
""", None),
    "scaler-on-generated-module-path": ("""
import sklearn.datasets
from sklearn.preprocessing import RobustScaler
def load(n):
    feats, target = sklearn.datasets.make_gaussian_quantiles(n_samples=n, n_features=3)
    return RobustScaler().fit_transform(feats), target
""", None),
    # the twin: the same scaling of records read from a file still fires
    "scaler-on-loaded-points": ("""
import numpy as np
from sklearn.preprocessing import StandardScaler
def load(path):
    pts = np.loadtxt(path)
    return StandardScaler().fit_transform(pts), None
""", 6),
    # an extreme of numbers written out in a tuple or list: a size chosen, not a statistic of records
    "noise-over-max-of-written-sizes": ("""
import numpy as np
def load(path, frac, d, fail):
    rows = np.loadtxt(path)
    k = np.max((int(frac * d), int(frac * np.log(1 / fail))))
    sigma = solve_sigma(rows.shape[0], k)
    return rows, sigma / np.sqrt(k)
""", None),
    "noise-over-min-of-written-list": ("""
import numpy as np
def load(path, width):
    rows = np.loadtxt(path)
    cap = np.min([float(width), 8.0])
    return rows, rows.shape[1] * calibrate(rows.shape[0]) / cap
""", None),
    "noise-over-torch-max-of-written-tuple": ("""
import torch
def load(path, batch):
    rows = torch.load(path)
    m = torch.max(torch.tensor((len(rows), int(batch))))
    return rows, scale_for(rows.shape) / m
""", None),
    # the twin: the data divided by its own maximum still fires
    "data-over-its-max": ("""
import numpy as np
def load(path):
    rows = np.loadtxt(path)
    top = np.max(rows, axis=0)
    return rows / top, None
""", 6),
    "get-dummies-of-labels": ("""
import pandas as pd
def load(path):
    records = pd.read_csv(path)
    labels = pd.get_dummies(records.pop("target"))
    return records.values, labels
""", None),
    "get-dummies-of-synthetic": ("""
import pandas as pd
def load(path):
    synthetic = pd.read_csv(path)
    return pd.get_dummies(synthetic), None
""", None),
    # a unit or scale chosen by comparing a centre of the records with a number
    "unit-by-median": ("""
import pandas as pd
def load(path):
    df = pd.read_csv(path)
    if df["age"].median() > 150:
        df["age"] = df["age"] / 365.0
    return df.values, None
""", 5),
    "unit-by-mean-augmented": ("""
import numpy as np
def load(path):
    masses = np.loadtxt(path)
    if np.mean(masses) < 10:
        masses *= 1000.0
    return masses, None
""", 5),
    "unit-by-quantile-other-name": ("""
import pandas as pd
def load(path):
    table = pd.read_csv(path)
    height = table["height"].astype(float)
    if height.quantile(0.5) <= 3:
        table["height"] = (height * 100).round()
    return table, None
""", 6),
    "unit-by-public-flag": ("""
import pandas as pd
def load(path, age_in_days=True):
    df = pd.read_csv(path)
    if age_in_days:
        df["age"] = df["age"] / 365.0
    return df.values, None
""", None),
    "format-check-by-max": ("""
import numpy as np
def load(path):
    images = np.load(path)
    if images.max() > 1.5:
        images = images / 255.0
    return images, None
""", None),
    "guard-raises-on-median": ("""
import pandas as pd
def load(path):
    df = pd.read_csv(path)
    if df["age"].median() > 150:
        raise ValueError("ages look like days")
    return df.values, None
""", None),
    "builtin-max-of-row-maxima": ("""
def load(groups):
    top = max([max(g) for g in groups])
    return [[v / float(top) for v in g] for g in groups], None
""", 4),
    "builtin-max-generator-indexed": ("""
def load(table):
    n = len(table)
    biggest = max(max(table[i]) for i in range(n))
    for i in range(n):
        for j in range(len(table[i])):
            table[i][j] = table[i][j] / biggest
    return table, None
""", 7),
    "builtin-min-shift": ("""
def load(series_list):
    floor = min([min(s) for s in series_list])
    for s in series_list:
        s[:] = [x - floor for x in s]
        s[0] -= floor
    return series_list, None
""", (5, 6)),
    "builtin-max-of-lengths": ("""
def load(groups):
    longest = max([len(g) for g in groups])
    return [g + [0] * (longest - len(g)) for g in groups], None
""", None),
    "builtin-max-public-bound": ("""
UPPER = 250.0
def load(groups):
    return [[min(v, UPPER) / UPPER for v in g] for g in groups], None
""", None),
    "get-dummies-code-bucketed-column": ("""
import pandas as pd
def band(v):
    if v < 30:
        return "young"
    return "old"
def load(path):
    df = pd.read_csv(path)
    df["age"] = df["age"].map(lambda v: band(v))
    return pd.get_dummies(df["age"], prefix="age"), None
""", None),
    "get-dummies-declared-through-a-name": ("""
import pandas as pd
def load(path, levels):
    df = pd.read_csv(path)
    col = pd.Categorical(df["job"].astype(str), categories=levels)
    return pd.get_dummies(col).to_numpy(), None
""", None),
    "kmeans-helper-on-the-released-graph": ("""
import numpy as np
from sklearn.cluster import KMeans
def cluster(Xi, k):
    return KMeans(n_clusters=k).fit_predict(Xi)
def load(edges, eps, k):
    flipped = randomise_edges(edges, eps=eps)
    Xi_priv = np.linalg.eigh(flipped)[1][:, -k:]
    return cluster(Xi_priv, k), None
""", None),
    "kmeans-helper-in-a-nonprivate-baseline": ("""
from sklearn.cluster import KMeans
def cluster(Xi, k):
    return KMeans(n_clusters=k).fit_predict(Xi)
def run_nonprivate_reference(Xi, k):
    return cluster(Xi, k)
def load(path):
    return None, None
""", None),
    "kmeans-helper-on-the-raw-graph": ("""
import numpy as np
from sklearn.cluster import KMeans
def cluster(Xi, k):
    return KMeans(n_clusters=k).fit_predict(Xi)
def load(edges, eps, k):
    Xi = np.linalg.eigh(edges)[1][:, -k:]
    return cluster(Xi, k), None
""", 5),
    "kmeans-helper-on-released-and-raw": ("""
import numpy as np
from sklearn.cluster import KMeans
def cluster(Xi, k):
    return KMeans(n_clusters=k).fit_predict(Xi)
def load(edges, eps, k):
    flipped = randomise_edges(edges, eps=eps)
    released = cluster(np.linalg.eigh(flipped)[1], k)
    Xi = np.linalg.eigh(edges)[1][:, -k:]
    return cluster(Xi, k), released
""", 5),
    "home-generator-fit-given-more-arguments-than-it-takes": ("""
import numpy as np
class StandInGenerator:
    def fit(self, X):
        self.mu = X.mean(axis=0)
def load(frame, target, kind, sigma):
    if kind == "dp":
        gen = build_dp_model(noise_multiplier=sigma)
    else:
        gen = StandInGenerator()
    gen.fit(frame, target)
    return gen, None
""", None),
    "home-generator-fit-given-what-it-takes": ("""
import numpy as np
class StandInGenerator:
    def fit(self, X):
        self.mu = X.mean(axis=0)
def load(frame, target, kind, sigma):
    if kind == "dp":
        gen = build_dp_model(noise_multiplier=sigma)
    else:
        gen = StandInGenerator()
    gen.fit(frame)
    return gen, None
""", 11),
    # the private frame copied under a word read as synthetic or validation data (`syn`, `vals`):
    # the scaler fitted on it maps the noisy values back with the private min and max (gK 2026-11-27)
    "copy-alias-under-synthetic-word": ("""
import numpy as np
from sklearn.preprocessing import MinMaxScaler
def load(records, epsilon=1.0):
    syn = records.copy()
    vals = syn.values[:, 1:]
    vals = list(vals)
    scaler = MinMaxScaler((-1, 1))
    scaler.fit(vals)
    noisy = scaler.transform(vals) + np.random.laplace(0, 2 / epsilon, np.shape(vals))
    syn = scaler.inverse_transform(noisy)
    return syn, None
""", 9),
    # twin: the frame copied is the generator's output, not the records
    "copy-alias-of-generated-frame": ("""
from sklearn.preprocessing import MinMaxScaler
def load(generator, n):
    syn = generator.sample(n).copy()
    vals = syn.values[:, 1:]
    scaler = MinMaxScaler((-1, 1))
    scaler.fit(vals)
    return scaler.transform(vals), None
""", None),
    # twin: a name rebound to the records only after the fit
    "copy-alias-bound-after-fit": ("""
from sklearn.preprocessing import MinMaxScaler
def load(generator, records, n):
    syn = generator.sample(n)
    scaler = MinMaxScaler().fit(syn)
    syn = records.copy()
    return scaler.transform(syn), None
""", None),
    # the helper handed the budget is the mechanism, though its result is stored back into the
    # frame it read (`frame[f'v_{eps}'] = add_noise(frame, eps, scale)`)
    "budget-handed-helper-fits": ("""
import numpy as np
from sklearn.preprocessing import MinMaxScaler
def add_noise(frame, eps, scale):
    values = np.array(frame['value']).reshape(-1, 1)
    scaler = MinMaxScaler((-1, 1))
    scaler.fit(values)
    noised = scaler.transform(values).reshape(-1) + np.random.laplace(0, scale / eps, len(values))
    return scaler.inverse_transform(noised.reshape(-1, 1))
def load(frame, scale, epsilons):
    for eps in epsilons:
        frame[f'value_{eps}'] = add_noise(frame, eps, scale)
    return frame, None
""", 7),
    # twin: the helper is handed the mechanism's output (and eps): post-processing of the release
    "budget-handed-helper-post-processes": ("""
import numpy as np
from sklearn.preprocessing import MinMaxScaler
def tidy(released, eps):
    scaler = MinMaxScaler()
    scaler.fit(released.reshape(-1, 1))
    return scaler.transform(released.reshape(-1, 1)), eps
def load(frame, eps, lower, upper):
    noisy = np.clip(frame['value'], lower, upper) + np.random.laplace(0, (upper - lower) / eps, len(frame))
    return tidy(noisy, eps)
""", None),
    # (t1) a transformer reached through its holder: per-column dict, conditional constructor, factory
    "per-column-dict-encoders": ("""
from sklearn.preprocessing import OneHotEncoder, QuantileTransformer
def load(df, discrete):
    enc = {}
    for col in df.columns:
        enc[col] = OneHotEncoder() if col in discrete else QuantileTransformer()
        df[col] = enc[col].fit_transform(df[[col]])
    return df, enc
""", 7),
    "factory-built-column-transformer": ("""
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import OneHotEncoder, MinMaxScaler
def make_preprocessor(cats, nums):
    return ColumnTransformer([("c", OneHotEncoder(), cats), ("n", MinMaxScaler(), nums)])
def load(train_df, cats, nums):
    pre = make_preprocessor(cats, nums)
    return pre.fit_transform(train_df), pre
""", 8),
    # twin: the factory's encoder takes its categories from a public schema
    "factory-built-public-categories": ("""
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import OneHotEncoder
def make_preprocessor(cats, schema):
    return ColumnTransformer([("c", OneHotEncoder(categories=[schema[c] for c in cats]), cats)])
def load(train_df, cats, schema):
    pre = make_preprocessor(cats, schema)
    return pre.fit_transform(train_df), pre
""", None),
    # (t1) the response divided in place by its own largest magnitude, the features by the largest row norm
    "in-place-max-abs-scaling": ("""
import numpy as np
def load(X, y, n_train):
    y_train, y_test = y[:n_train], y[n_train:]
    scale = np.max(np.abs(y_train))
    y_train /= scale
    y_test /= scale
    X = X / max(np.linalg.norm(X, axis=1))
    return X, y_train
""", (6, 7, 8)),
    # twins: a matrix computed here rescaled by its own diagonal, an accumulator, a loop's batch
    "in-place-derived-values": ("""
import numpy as np
def load(V, batches):
    eig, P = np.linalg.eigh(V)
    X = P @ np.diag(np.sqrt(np.abs(eig))) @ P.T
    X /= np.diag(X).max()
    total = 0.0
    for b in batches:
        b /= np.max(np.abs(b))
        total -= b.mean()
    return X, total
""", None),
    # (S2 b96) the generated table tidied after the DP step: its own median fills the gaps it left
    "post-process-released-table": ("""
import pandas as pd
def load(path):
    return pd.read_csv(path), None
def _post_process(table):
    for c in ["age", "pulse"]:
        table[c] = table[c].fillna(table[c].median()).round()
    return table
""", None),
    # twin: the same fill in the step that prepares the records for the DP step
    "prepare-records-median-fill": ("""
import pandas as pd
def load(path):
    df = pd.read_csv(path)
    for c in ["age", "pulse"]:
        df[c] = df[c].fillna(df[c].median())
    return df, None
""", 6),
    # (S2 b96) a k-anonymity generaliser bins quasi-identifiers for a release that spends no DP budget
    "k-anonymity-generaliser": ("""
import pandas as pd
def load(path):
    return pd.read_csv(path), None
def generalize_for_k_anonymity(df, quasi_identifiers, k):
    out = df.copy()
    for q in quasi_identifiers:
        col = out[q]
        n_bins = max(1, len(col.unique()) // k)
        out[q] = pd.cut(col, bins=n_bins).astype(str)
    return out
""", None),
    # twin: the records binned between their own extremes before the DP step reads them
    "records-binned-own-extremes": ("""
import pandas as pd
def load(path):
    df = pd.read_csv(path)
    df["age"] = pd.cut(df["age"], bins=10).cat.codes
    return df, None
""", 5),
    # ordinary ML: a detector's post-processing drops low-confidence boxes by the batch's median score
    "ml-detector-postprocess": ("""
import numpy as np
def load(path):
    return np.load(path), None
def postprocess_detections(scores, boxes):
    keep = scores >= np.median(scores)
    return boxes[keep]
""", None),
}


def _join(tmp_path: Path, loader: str, main: str = _DP_MAIN, name: str = "loader.py") -> list:
    files = {"main.py": main, name: loader}
    summaries, display = {}, {}
    root = tmp_path / "proj" / "src"
    root.mkdir(parents=True, exist_ok=True)
    for old in root.iterdir():
        old.unlink()
    for name, text in files.items():
        path = root / name
        path.write_text(text)
        summary = project.summarize(text, str(path))
        if summary is not None:
            summaries[str(path)] = summary
            display[str(path)] = name
    return [f for f in project.join(summaries, display) if f.path == name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_preprocessing_case(tmp_path: Path, name: str) -> None:
    loader, line = CASES[name]
    lines = sorted({f.line for f in _join(tmp_path, loader)})
    assert lines == ([] if line is None else sorted(line) if isinstance(line, tuple) else [line])


def test_validate_script_is_not_a_validator(tmp_path: Path) -> None:
    """Validation words exempt a function (``_validate_statistics``), not a script ``validate.py``."""
    loader = "from sklearn.preprocessing import StandardScaler\ndef load(X):\n    return StandardScaler().fit_transform(X), None\n"
    main = _DP_MAIN.replace("from loader import", "from validate import")
    assert [f.line for f in _join(tmp_path, loader, main=main, name="validate.py")] == [3]


def test_no_dp_claim_no_finding(tmp_path: Path) -> None:
    loader = CASES["numpy-standardise"][0]
    assert _join(tmp_path, loader, main="from loader import load\nX, y = load('a.csv')\n") == []


def test_unreached_module_no_finding(tmp_path: Path) -> None:
    loader = CASES["pandas-median-fill"][0]
    main = _DP_MAIN.replace("from loader import load", "from other import load")
    assert _join(tmp_path, loader, main=main, name="charts.py") == []


def test_standalone_preparation_script_is_reached(tmp_path: Path) -> None:
    """A script no module imports, named for preparing the data, feeds the DP step through files."""
    loader = CASES["pandas-median-fill"][0]
    main = _DP_MAIN.replace("from loader import load", "from other import load")
    assert [f.line for f in _join(tmp_path, loader, main=main, name="prepare_data.py")] == [5]
    assert _join(tmp_path, loader, main=main, name="plot_data.py") == []
    # (R1 b93) a modelling module nothing imports (a non-DP baseline) feeds no DP step; the same
    # preparation function in a job script nothing imports is reached
    prep = loader.replace("def load(path):", "def prepare_features(path):")
    assert _join(tmp_path, prep, main=main, name="ml_modelling.py") == []
    assert [f.line for f in _join(tmp_path, prep, main=main, name="features_job.py")] == [5]


def test_released_distribution_no_finding(tmp_path: Path) -> None:
    """A library's preprocessing (an sdist with PKG-INFO) runs on whatever data its user passes."""
    (tmp_path / "proj" / "PKG-INFO").parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "proj" / "PKG-INFO").write_text("Name: lib\n")
    assert _join(tmp_path, CASES["pandas-median-fill"][0]) == []



def _join_files(tmp_path: Path, files: dict[str, str]) -> list:
    root = tmp_path / "proj" / "src"
    root.mkdir(parents=True, exist_ok=True)
    summaries, display = {}, {}
    for name, text in files.items():
        path = root / name
        path.write_text(text)
        summary = project.summarize(text, str(path))
        if summary is not None:
            summaries[str(path)] = summary
            display[str(path)] = name
    return project.join(summaries, display)


_FEATURES = "import numpy as np\ndef scale(data):\n    return (data - data.min(axis=0)) / np.ptp(data, axis=0)\n"
_DP_CORE = "from opacus import PrivacyEngine\ndef fit(model, loader):\n    return PrivacyEngine().make_private(model, loader)\n"


@pytest.mark.parametrize("driver, fires", [
    # the entry script reaches DP code through a driver module two imports away
    ("from dp_core import fit\ndef run(m, l):\n    return fit(m, l)\n", True),
    # the same shape with a non-private trainer behind the driver
    ("def run(m, l):\n    return m.fit(l)\n", False),
])
def test_entry_script_reaching_dp_code_through_a_driver(tmp_path: Path, driver: str, fires: bool) -> None:
    """``main.py`` imports the preprocessing and a driver that imports the DP code: the
    preprocessing prepares the DP code's input even though no module imports both."""
    files = {
        "main.py": "from features import scale\nfrom driver import run\nX = scale(load())\nrun(None, X)\n",
        "driver.py": driver, "dp_core.py": _DP_CORE, "features.py": _FEATURES,
    }
    lines = [f.line for f in _join_files(tmp_path, files) if f.path == "features.py"]
    assert bool(lines) is fires


@pytest.mark.parametrize("importers, fires", [
    # a demo script runs the DP trainer, which imports the preprocessing
    ({"demo.py": "from private_model import private_run\nprivate_run(None, None)\n"}, True),
    # the DP trainer is a library module another module imports (its users bring their own data)
    ({"api.py": "from private_model import private_run\n", "cli.py": "from api import private_run\nprivate_run(None, None)\n"},
     False),
])
def test_claiming_module_run_by_an_entry_script(tmp_path: Path, importers: dict[str, str], fires: bool) -> None:
    """A DP module only an entry script imports is the top of the DP pipeline: what it imports
    prepares its input."""
    trainer = ("from features import scale\nfrom opacus import PrivacyEngine\ndef private_run(model, loader):\n"
               "    return PrivacyEngine().make_private(model, scale(loader))\n")
    files = {"private_model.py": trainer, "features.py": _FEATURES, **importers}
    lines = [f.line for f in _join_files(tmp_path, files) if f.path == "features.py"]
    assert bool(lines) is fires


# (h45-p) post-processing: a statistic fitted only on what a mechanism released (DP permits it)
_LDP_CLIENT = """import numpy as np
class Client:
    def __init__(self, adj, epsilon):
        self.adj = adj
        self.epsilon = epsilon
    def phase_one(self, parts):
        delta = self.adj @ parts
        delta = delta + np.random.laplace(0, 1.0 / self.epsilon, delta.shape)
        return delta
"""
_LDP_SERVER = """import numpy as np
from sklearn.cluster import KMeans
class Server:
    def __init__(self, k):
        self.k = k
    def phase_one(self, delta):
        self.delta = delta
        X = np.asarray(self.delta)
        self.labels = KMeans(n_clusters=self.k).fit(X).labels_
        return self.labels
"""
_LDP_RUN = """# LDPGen: differentially private graph generation from local degree vectors
from client import Client
from server import Server
def run_ldpgen(adj, parts, epsilon, k):
    client = Client(adj, epsilon)
    server = Server(k)
    delta = client.phase_one(parts)
    return server.phase_one({arg})
"""
_MVG_PREP = """import numpy as np
def rescale(data, bounds=None):
    if bounds is None:
        bounds = (data.min(), data.max())
    lo, hi = bounds
    return (data - lo) / (hi - lo)
"""
_MVG_MECH = """# Gaussian mechanism release of a data matrix (differential privacy)
import numpy as np
import pandas as pd
from preprocessing import rescale
def gaussian_mechanism(x, scale):
    if isinstance(x, float):
        return x + np.random.normal(0, scale)
    return x + np.random.normal(0, scale, x.shape)
def release(df, epsilon, sensitivity):
    sample = gaussian_mechanism(df.values, sensitivity / epsilon)
    return rescale({arg}, bounds=None)
"""


@pytest.mark.parametrize("arg, fires", [
    ("delta", False),  # the clients' Laplace-noised degree vectors: LDPGen's clustering is post-processing
    ("adj @ parts", True),  # twin: the server clusters the raw degree vectors
    ("delta + adj.sum(1)", True),  # a noised value mixed with a raw one is still private
])
def test_clustering_a_mechanism_output_across_modules(tmp_path: Path, arg: str, fires: bool) -> None:
    files = {"client.py": _LDP_CLIENT, "server.py": _LDP_SERVER, "run.py": _LDP_RUN.format(arg=arg)}
    lines = [f.line for f in _join_files(tmp_path, files) if f.path == "server.py"]
    assert bool(lines) is fires


@pytest.mark.parametrize("arg, fires", [
    ("pd.DataFrame(sample, columns=df.columns)", False),  # the noisy sample rescaled by its own range
    ("df", True),  # twin: the private table rescaled by its own range
])
def test_rescaling_a_noisy_sample_from_a_sibling_module(tmp_path: Path, arg: str, fires: bool) -> None:
    """``from preprocessing import rescale`` run from a package folder: a script's sibling import."""
    files = {"__init__.py": "", "preprocessing.py": _MVG_PREP, "mechanisms.py": _MVG_MECH.format(arg=arg)}
    lines = [f.line for f in _join_files(tmp_path, files) if f.path == "preprocessing.py"]
    assert bool(lines) is fires


# (R3 b69) a module claiming DP that counts rows per column from the sizes of its data and of the variance
_SIZES = """\"\"\"Differentially private statistics.\"\"\"
import numpy as np
def private_variance(values, epsilon, seed=0):
    spread = np.var(values, axis=0)
    per_column = {expr}
    scale = 2.0 / (per_column * epsilon)
    return spread + np.random.RandomState(seed).laplace(0.0, scale, size=spread.size)
"""


@pytest.mark.parametrize("expr,fires", [
    ("values.size / spread.size", False),  # shapes: how many rows, not what they hold
    ("(values / spread).sum()", True),  # the twin: the records divided by their own variance
])
def test_count_from_shapes_is_not_scaling(tmp_path: Path, expr: str, fires: bool) -> None:
    files = {"dp_stats.py": _SIZES.format(expr=expr)}
    lines = [f.line for f in _join_files(tmp_path, files) if f.path == "dp_stats.py"]
    assert bool(lines) is fires


_DP_GMM_INIT = """# differentially private Gaussian mixture: DP k-means initialisation, Laplace-noised weights
import numpy as np
from {lib} import KMeans
class PrivateGMM:
    def __init__(self, k, epsilon, bounds):
        self.k, self.epsilon, self.bounds = k, epsilon, bounds
    def fit(self, X):
        labels = {ctor}.fit(X).labels_
        counts = np.bincount(labels, minlength=self.k)
        self.weights = counts + np.random.laplace(0, 1 / self.epsilon, self.k)
        return self
"""


@pytest.mark.parametrize("lib, ctor, fires", [
    # (QC, DP-GMM cdp_gmm.py) diffprivlib's KMeans given part of the budget: a DP estimator, not a fitted transform
    ("diffprivlib.models", "KMeans(n_clusters=self.k, epsilon=self.epsilon / 10, bounds=self.bounds)", False),
    # twin: sklearn's KMeans clusters the raw records outside the budget
    ("sklearn.cluster", "KMeans(n_clusters=self.k)", True),
])
def test_dp_estimator_given_budget_is_not_fitted_preprocessing(tmp_path: Path, lib: str, ctor: str,
                                                               fires: bool) -> None:
    found = _join_files(tmp_path, {"gmm.py": _DP_GMM_INIT.format(lib=lib, ctor=ctor)})
    assert bool([f for f in found if f.line == 8]) is fires
