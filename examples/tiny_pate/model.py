"""TinyPate: a small, correct PATE-style generator written with numpy only.

The shape of the algorithm is PATE-GAN's (Jordon et al. 2019, Algorithm 1), scaled down so that a
fit takes milliseconds:

* every column is mapped to [0, 1] with **public** bounds (passed by the caller, never read from
  the data) and cut into ``bins`` equal-width bins; a record is the concatenation of the one-hot
  codes of its bins;
* the **generator** is one categorical distribution over the bins of each column (softmax of
  logits); a value is drawn uniformly inside its bin;
* ``num_teachers`` logistic-regression **teachers**, each trained (warm-started) on its own slice of
  one fixed, disjoint partition of the records against generated records;
* each round, the teachers vote real/fake on a batch of generated records; the vote counts get
  Laplace noise of scale ``1/lamda`` and the noisy majority labels the batch;
* the **moments accountant** of Theorem 5 is charged for the batch (in log space) *before* the
  labels are used; training continues ``while eps_hat < epsilon`` (and at most
  ``max_iterations`` rounds);
* a logistic-regression **student** learns from the noisy labels only, and the generator follows
  the student's gradient;
* samples are mapped back to the input scale, integer columns are rounded.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

DEFAULTS: dict[str, Any] = dict(
    max_iterations=1000,
    num_teachers=10,
    lamda=0.05,
    num_moments=20,
    batch_size=64,
    bins=16,
    learning_rate=0.5,
    teacher_steps=2,
    bounds=None,
    integer_columns=None,
)


# --------------------------------------------------------------------------- accountant


def moments_increment(n0: Any, n1: Any, lamda: float, num_moments: int) -> np.ndarray:
    """Increase of alpha(1..L) from labelling samples with vote counts ``n0`` (fake) and ``n1`` (real).

    Theorem 5 per sample and order l:
    ``min(2 lamda^2 l(l+1), log((1-q)((1-q)/(1-e^{2 lamda} q))^l + q e^{2 lamda l}))`` with
    ``q = (2 + lamda |n0-n1|) / (4 e^{lamda |n0-n1|})``; the data-dependent term is taken as +inf
    where ``1 - e^{2 lamda} q <= 0`` (it is undefined there).
    """
    gap = np.abs(np.asarray(n0, dtype=np.float64) - np.asarray(n1, dtype=np.float64)).reshape(-1, 1)
    orders = np.arange(1, int(num_moments) + 1, dtype=np.float64)
    lamda = float(lamda)
    data_independent = 2.0 * lamda**2 * orders * (orders + 1.0)
    log_q = np.log(2.0 + lamda * gap) - np.log(4.0) - lamda * gap
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_one_minus_q = _log1mexp(log_q)
        defined = log_q + 2.0 * lamda < 0.0
        log_denominator = _log1mexp(np.where(defined, log_q + 2.0 * lamda, -1.0))
        first = log_one_minus_q + orders * (log_one_minus_q - log_denominator)
        second = log_q + 2.0 * lamda * orders
        data_dependent = np.where(defined, np.logaddexp(first, second), np.inf)
    return np.minimum(data_independent, data_dependent).sum(axis=0)


def epsilon_estimate(alpha: np.ndarray, delta: float) -> float:
    """``min_l (alpha(l) + log(1/delta)) / l``."""
    orders = np.arange(1, alpha.size + 1, dtype=np.float64)
    return float(np.min((alpha + np.log(1.0 / delta)) / orders))


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 - e^x)`` for ``x < 0``, accurate on both sides of ``x = -log 2``."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > -np.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


# --------------------------------------------------------------------------- model pieces


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@dataclass
class Logistic:
    """Logistic regression trained by plain gradient steps; its state persists between rounds."""

    weights: np.ndarray
    bias: float = 0.0

    def logits(self, features: np.ndarray) -> np.ndarray:
        return features @ self.weights + self.bias

    def step(self, features: np.ndarray, targets: np.ndarray, learning_rate: float) -> None:
        error = _sigmoid(self.logits(features)) - targets
        self.weights -= learning_rate * features.T @ error / len(targets)
        self.bias -= learning_rate * float(error.mean())


class BinGenerator:
    """Independent categorical distribution over the bins of each column, uniform within a bin."""

    def __init__(self, columns: int, bins: int) -> None:
        self.logits = np.zeros((columns, bins))

    def probabilities(self) -> np.ndarray:
        shifted = np.exp(self.logits - self.logits.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)

    def draw_bins(self, n: int, rng: np.random.Generator) -> np.ndarray:
        cumulative = np.cumsum(self.probabilities(), axis=1)
        uniform = rng.random((n, self.logits.shape[0], 1))
        picked = (uniform > cumulative[None, :, :]).sum(axis=2)
        return np.minimum(picked, self.logits.shape[1] - 1)

    def ascend(self, student_weights: np.ndarray, learning_rate: float) -> None:
        """One gradient step on the expected student logit of a generated record."""
        p = self.probabilities()
        per_bin = student_weights.reshape(self.logits.shape)
        self.logits += learning_rate * p * (per_bin - (p * per_bin).sum(axis=1, keepdims=True))


def one_hot(bins: np.ndarray, width: int) -> np.ndarray:
    rows, columns = bins.shape
    out = np.zeros((rows, columns * width))
    out[np.arange(rows)[:, None], np.arange(columns)[None, :] * width + bins] = 1.0
    return out


# --------------------------------------------------------------------------- the adapter


class TinyPate:
    """The dpcheck adapter: ``fit(data, *, epsilon, delta, seed, probe=None, **hyperparams)``,
    ``sample(n)``."""

    name = "tiny-pate"
    framework = "numpy"
    upstream = "examples/tiny_pate (dpcheck worked example)"
    source_files = [str(Path(__file__))]

    def __init__(self) -> None:
        self._generator: BinGenerator | None = None
        self._lower = np.zeros(0)
        self._width = np.ones(0)
        self._integers: list[int] = []
        self._seed = 0
        self._draws = 0
        self._probe: Any = None

    @staticmethod
    def accountant_update(n0: Any, n1: Any, *, lamda: float, num_moments: int) -> np.ndarray:
        return moments_increment(n0, n1, lamda, num_moments)

    def fit(self, data: Any, *, epsilon: float, delta: float, seed: int, probe: Any = None,
            **hyperparams: Any) -> "TinyPate":
        unknown = sorted(set(hyperparams) - set(DEFAULTS))
        if unknown:
            raise TypeError(f"unknown hyperparameters: {', '.join(unknown)}")
        hp = {**DEFAULTS, **hyperparams}
        records = np.asarray(data, dtype=np.float64)
        k, lamda, bins = int(hp["num_teachers"]), float(hp["lamda"]), int(hp["bins"])
        if records.ndim != 2 or not np.all(np.isfinite(records)):
            raise ValueError("data must be a finite 2-D array")
        if k < 2 or records.shape[0] < k:
            raise ValueError(f"need at least 2 teachers and one row per teacher, got {k} teachers "
                             f"for {records.shape[0]} rows")
        if not (epsilon > 0 and 0 < delta < 1 and lamda > 0):
            raise ValueError("epsilon and lamda must be > 0 and delta in (0, 1)")
        if hp["bounds"] is None:
            raise ValueError("TinyPate needs public bounds=(lower, upper); it never reads them from the data")
        lower, upper = (np.broadcast_to(np.asarray(b, dtype=np.float64), records.shape[1:]) for b in hp["bounds"])
        if np.any(upper <= lower):
            raise ValueError("every upper bound must exceed its lower bound")
        if probe is not None:
            probe.bounds(lower, upper, source="parameter")

        rng = np.random.default_rng(seed)
        self._lower, self._width = lower.copy(), upper - lower
        self._integers = self._integer_columns(records, hp["integer_columns"])
        self._seed, self._draws, self._probe = seed, 0, probe

        unit = np.clip((records - self._lower) / self._width, 0.0, 1.0)
        real = one_hot(np.minimum((unit * bins).astype(np.int64), bins - 1), bins)
        dims = real.shape[1]
        partition = self._partition(records.shape[0], k, rng)
        teachers = [Logistic(np.zeros(dims)) for _ in range(k)]
        student = Logistic(np.zeros(dims))
        generator = BinGenerator(records.shape[1], bins)
        alpha = np.zeros(int(hp["num_moments"]))
        eps_hat, iteration, lr, batch = 0.0, 0, float(hp["learning_rate"]), int(hp["batch_size"])
        if probe is not None:
            probe.latent("uniform", phase="train")

        while eps_hat < epsilon and iteration < int(hp["max_iterations"]):
            for t, (teacher, rows) in enumerate(zip(teachers, partition)):
                fake = one_hot(generator.draw_bins(len(rows), rng), bins)
                for _ in range(int(hp["teacher_steps"])):
                    teacher.step(np.vstack([real[rows], fake]),
                                 np.concatenate([np.ones(len(rows)), np.zeros(len(rows))]), lr)
                if probe is not None:
                    probe.teacher_data(t, rows, iteration=iteration)

            queries = one_hot(generator.draw_bins(batch, rng), bins)
            n1 = np.sum([teacher.logits(queries) > 0.0 for teacher in teachers], axis=0).astype(np.float64)
            n0 = k - n1
            noise, scale = self._vote_noise(lamda, (2, batch), rng)
            labels = (n1 + noise[1] > n0 + noise[0]).astype(np.float64)
            alpha += self.accountant_update(n0, n1, lamda=lamda, num_moments=alpha.size)
            eps_hat = epsilon_estimate(alpha, delta)
            if probe is not None:
                probe.votes(n0, n1, iteration=iteration)
                probe.noise(noise.ravel(), distribution="laplace", scale=scale, applied_to="votes",
                            iteration=iteration)
                probe.accountant(alpha.copy(), eps_hat, iteration=iteration)

            student.step(queries, labels, lr)
            generator.ascend(student.weights, lr)
            iteration += 1

        if probe is not None:
            probe.training_end(iteration, reason="budget" if eps_hat >= epsilon else "max_iterations")
        self._generator = generator
        return self

    @staticmethod
    def _partition(rows: int, teachers: int, rng: np.random.Generator) -> list[np.ndarray]:
        """One fixed split of the row indices into disjoint slices, one per teacher."""
        return np.array_split(rng.permutation(rows), teachers)

    @staticmethod
    def _vote_noise(lamda: float, shape: tuple[int, int], rng: np.random.Generator) -> tuple[np.ndarray, float]:
        """Laplace noise for the vote counts (row 0: fake, row 1: real) and its scale 1/lamda."""
        return rng.laplace(0.0, 1.0 / lamda, size=shape), 1.0 / lamda

    @staticmethod
    def _integer_columns(records: np.ndarray, declared: Any) -> list[int]:
        """Integer-typed columns: declared by the caller, else read from the column types (the
        schema, which is public), i.e. columns whose values are all whole numbers."""
        if declared is not None:
            return [int(j) for j in declared]
        return [j for j in range(records.shape[1]) if np.array_equal(records[:, j], np.round(records[:, j]))]

    def sample(self, n: int) -> np.ndarray:
        if self._generator is None:
            raise RuntimeError("call fit before sample")
        self._draws += 1
        rng = np.random.default_rng([self._seed, self._draws])
        bins = self._generator.logits.shape[1]
        if self._probe is not None:
            self._probe.latent("uniform", phase="generate")
        unit = (self._generator.draw_bins(int(n), rng) + rng.random((int(n), self._generator.logits.shape[0]))) / bins
        out = self._lower + unit * self._width
        if self._probe is not None:
            self._probe.output_transform("inverse_minmax")
        out[:, self._integers] = np.rint(out[:, self._integers])
        if self._probe is not None:
            self._probe.output_transform("round_int", columns=list(self._integers))
        return out
