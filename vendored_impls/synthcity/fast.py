"""Fast path of ``synthcity`` and ``synthcity-fixed`` for audits: K shadow runs trained at once.

Each model replays ``PATEGAN.fit`` of ``upstream`` (or ``fixed``) as the adapter runs it: the
module's own encoder, its generator and discriminator (and the twin's teachers) built under the
run's seed in the plain path's order (the same initial weights), its ``randn`` draws from a
generator positioned where the plain path's global one is after construction
(:func:`dpcheck.vendored_impls._torch_stack.replay`), its permutations and Laplace vote noise
from ``RandomState(seed)``, its accountant (the module's own ``_update_alpha``, on a per-model
instance) and its own budget check. A stopped model's generator is snapshotted and restored before
generation, which replays ``torch.manual_seed(seed * 7919 + 1)``.

Upstream's teachers are sklearn ``LogisticRegression()`` models re-fitted every iteration; here
they are solved for all models at once by the damped Newton solver of ``updated``'s fast path
(the optimum of the same objective, to a gradient below 1e-9, where lbfgs stops at tol 1e-4), so
``synthcity``'s fast path is equivalent in distribution, not bit for bit. The twin's neural
teachers are replayed exactly.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from dpcheck.vendored_impls._common import as_numeric_array
from dpcheck.vendored_impls._torch import (integer_columns, merge_hyperparams, public_bounds, require_bounds,
                                           single_threaded)
from dpcheck.vendored_impls._torch_stack import Stacked, bce, linear, replay
from dpcheck.vendored_impls.synthcity.adapter import DEFAULTS, FIXED_DEFAULTS
from dpcheck.vendored_impls.updated.fast import logistic_regression_batch


def two_layer(act_out: Any) -> Any:
    """``nn.Sequential(Linear, LeakyReLU(0.2), Linear, act_out)`` per model."""

    def forward(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.leaky_relu(linear(x, p["0.weight"], p["0.bias"]), 0.2)
        return act_out(linear(h, p["2.weight"], p["2.bias"]))

    return forward


def alpha_increments(n0: np.ndarray, n1: np.ndarray, lamda: float, L: int, fixed: bool) -> np.ndarray:
    """``PATEGAN._update_alpha``'s increment of ``alpha_dict`` (upstream's, or the twin's log-space
    one) for every row of ``n0``/``n1`` (one model each): [models, L]."""
    gap = lamda * np.abs(n0 - n1)
    log_q = np.log(2 + gap) - np.log(4.0) - gap
    q = np.exp(log_q)[None]
    j = np.arange(L)[:, None, None]
    temp1 = 2 * (lamda ** 2) * (j + 1) * (j + 2)
    if not fixed:
        temp2 = (1 - q) * ((1 - q) / (1 - q * np.exp(2 * lamda))) ** (j + 1) + q * np.exp(2 * lamda * j + 1)
        return np.sum(np.clip(np.log(temp2), 0, temp1), axis=2).T
    valid = log_q < -np.logaddexp(0.0, 2 * lamda)
    q_e2l = np.where(valid, np.exp(log_q + 2 * lamda), 0.0)[None]
    log_t1 = np.log1p(-q) + (j + 1) * (np.log1p(-q) - np.log1p(-q_e2l))
    with np.errstate(over="ignore"):
        temp2 = np.log1p(np.expm1(log_t1) + np.exp(log_q[None] + 2 * lamda * (j + 1)))
    temp2 = np.where(valid[None], temp2, np.inf)
    return np.sum(np.clip(temp2, 0, temp1), axis=2).T


def _batch(name: str, fixed: bool, data: np.ndarray, seeds: list[int], rows: int, epsilon: float,
           delta: float | None, hyperparams: dict[str, Any]) -> list[np.ndarray]:
    if fixed:
        from dpcheck.vendored_impls.synthcity import fixed as module
    else:
        from dpcheck.vendored_impls.synthcity import upstream as module
    params = merge_hyperparams(name, FIXED_DEFAULTS if fixed else DEFAULTS, hyperparams)
    x, _ = as_numeric_array(data, min_rows=int(params["num_teachers"]))
    bounds = (require_bounds(name, params["bounds"], x.shape[1]) if fixed
              else public_bounds(params["bounds"], x.shape[1]))
    ints = integer_columns(data, x, params["integer_columns"])
    extra = {"bounds": bounds, "student_batches": int(params["student_batches"])} if fixed else {}

    def make() -> Any:
        return module.PATEGAN(
            n_iter=int(params["max_iterations"]), n_iter_student=int(params["student_epochs"]),
            n_teachers=int(params["num_teachers"]), epsilon=float(epsilon),
            delta=None if delta is None else float(delta), lamda=float(params["lamda"]),
            alpha=int(params["num_moments"]), batch_size=int(params["batch_size"]), lr=float(params["lr"]),
            integer_columns=ints, **extra)

    K = len(seeds)
    rngs = [np.random.RandomState(int(s) % 2**32) for s in seeds]
    models: list[Any] = []
    encoded = None

    def build(j: int) -> Any:
        nonlocal encoded
        m = make()  # what PATEGAN.fit does before its loop, in its order
        ic = m.integer_columns if m.integer_columns is not None else np.zeros(x.shape[1], bool)
        m.encoder = (module.TabularEncoder(ic, m.bounds) if fixed else module.TabularEncoder(ic)).fit(x)
        encoded = m.encoder.transform(x)
        if m.delta is None:
            m.delta = 1 / (len(encoded) * np.sqrt(len(encoded)))
        m.samples_per_iter = m.batch_size if fixed else min(m.batch_size, len(encoded))
        m._build(encoded.shape[1])
        m.alpha_dict = np.zeros(m.alpha)
        if fixed:  # the twin's teachers: a numpy permutation, then torch-initialised networks
            state = np.random.get_state()
            np.random.set_state(rngs[j].get_state())
            m.teachers = module.Teachers(m.n_teachers, m.samples_per_iter, m.lamda, n_rows=len(encoded),
                                         n_features=encoded.shape[1], lr=m.lr)
            rngs[j].set_state(np.random.get_state())
            np.random.set_state(state)
        return m

    built, gens = zip(*(replay(int(s), lambda j=j: build(j)) for j, s in enumerate(seeds)))
    models = list(built)
    first = models[0]
    spi, n_noise, k = first.samples_per_iter, first.n_noise, first.n_teachers
    n_batches = first.student_batches if fixed else int(np.ceil(len(encoded) / first.batch_size))
    gen_forward = two_layer(torch.tanh)
    disc_forward = two_layer(torch.sigmoid)
    G = Stacked([m.generator for m in models], gen_forward)
    D = Stacked([m.discriminator for m in models], disc_forward)
    opt_g = torch.optim.Adam(G.parameters(), lr=first.lr)
    opt_d = torch.optim.Adam(D.parameters(), lr=first.lr)
    if fixed:
        T = [Stacked([m.teachers.model[i] for m in models], disc_forward) for i in range(k)]
        opt_t = [torch.optim.Adam(t.parameters(), lr=first.lr) for t in T]
    partition = len(encoded) / k
    cuts = [(int(t * partition), int((t + 1) * partition)) for t in range(k)]
    eps_hat = [0.0] * K
    its = [0] * K
    active = [eps_hat[j] < first.epsilon and its[j] < first.n_iter for j in range(K)]
    snaps: list[dict[str, torch.Tensor] | None] = [None if a else G.snapshot(j) for j, a in enumerate(active)]

    def noise(n: int) -> torch.Tensor:
        z = torch.zeros(K, n, n_noise)
        for j in range(K):
            if active[j]:
                z[j] = torch.randn(n, n_noise, generator=gens[j])
        return z

    ones = torch.ones(K, spi)
    lamda, L = first.lamda, first.alpha
    alpha = np.zeros((K, L))
    orders = np.arange(1, L + 1).astype(np.float64)
    with single_threaded():
        while any(active):
            live = [j for j in range(K) if active[j]]
            for j in live:
                its[j] += 1
            # teachers
            perms = {j: (models[j].teachers.permutations if fixed else rngs[j].permutation(len(encoded)))
                     for j in live}
            if fixed:
                for t, (lo, hi) in enumerate(cuts):
                    with torch.no_grad():
                        g_samples = G(noise(spi)).numpy().astype(np.float64)
                    comb = np.zeros((K, hi - lo + spi, encoded.shape[1]), np.float32)
                    for j in live:
                        comb[j] = np.concatenate([encoded[perms[j][lo:hi]], g_samples[j]]).astype(np.float32)
                    target = torch.from_numpy(np.concatenate([np.ones(hi - lo), np.zeros(spi)]).astype(np.float32))
                    T[t].zero_grad()
                    out = T[t](torch.from_numpy(comb)).squeeze(2)
                    bce(out, target.expand(K, -1)).sum().backward()
                    opt_t[t].step()
            else:
                coefs = []
                for t, (lo, hi) in enumerate(cuts):
                    with torch.no_grad():
                        g_samples = G(noise(spi)).numpy().astype(np.float64)
                    comb = np.stack([np.concatenate([encoded[perms[j][lo:hi]], g_samples[j]]) for j in live])
                    target = np.broadcast_to(np.r_[np.ones(hi - lo), np.zeros(spi)], comb.shape[:2])
                    coefs.append(logistic_regression_batch(comb, target))
            for _ in range(models[0].n_iter_student):
                for _ in range(n_batches):
                    with torch.no_grad():
                        fake = G(noise(spi))
                    fake_np = fake.numpy()
                    if fixed:
                        with torch.no_grad():
                            preds = np.stack([(t(fake).squeeze(2) > 0.5).numpy() for t in T], axis=1)
                    rows_live = np.array(live)
                    if fixed:
                        y_pred = preds[rows_live]
                    else:
                        y_pred = np.stack([np.einsum("lnd,ld->ln", fake_np[rows_live].astype(np.float64), w)
                                           + b[:, None] > 0 for w, b in coefs], axis=1)
                    n0 = np.sum(y_pred == 0, axis=1).astype(np.float64)
                    n1 = np.sum(y_pred == 1, axis=1).astype(np.float64)
                    lap = np.stack([rngs[j].laplace(loc=0.0, scale=1 / lamda, size=spi) for j in live])
                    y_mb = (((n1 + lap) / (n0 + n1)) > 0.5).astype(np.float32)
                    skip = np.sum(y_mb, axis=1) >= spi / 2
                    charged = np.ones(len(live), bool) if fixed else ~skip  # the twin charges before its skip
                    alpha[rows_live[charged]] += alpha_increments(n0[charged], n1[charged], lamda, L, fixed)
                    labels = torch.zeros(K, spi)
                    labels[rows_live[~skip]] = torch.from_numpy(y_mb[~skip])
                    D.zero_grad()
                    bce(D(fake).squeeze(2), labels).sum().backward()
                    opt_d.step()
                    G.zero_grad()
                    bce(D(G(noise(spi))).squeeze(2), ones).sum().backward()
                    opt_g.step()
            for j in live:
                eps_hat[j] = float(np.min((alpha[j] + np.log(1 / models[j].delta)) / orders))
                if not (eps_hat[j] < models[j].epsilon and its[j] < models[j].n_iter):
                    active[j], snaps[j] = False, G.snapshot(j)

        for j in range(K):
            G.restore(j, snaps[j])
        released = []
        with torch.no_grad():
            for j, s in enumerate(seeds):  # sample(rows) after torch.manual_seed(seed * 7919 + 1)
                z = torch.randn(rows, n_noise, generator=torch.Generator().manual_seed(int(s) * 7919 + 1))
                out = gen_forward({n: p[j:j + 1] for n, p in G.params.items()}, z.unsqueeze(0))[0]
                released.append(np.asarray(models[j].encoder.inverse_transform(out.numpy().astype(np.float64)),
                                           dtype=np.float64))
    return released


def fit_sample_batch(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                     **hyperparams: Any) -> list[np.ndarray]:
    """``synthcity``: one released dataset per seed."""
    return _batch("synthcity", False, data, seeds, rows, epsilon, delta, hyperparams)


def fit_sample_batch_fixed(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                           **hyperparams: Any) -> list[np.ndarray]:
    """``synthcity-fixed``: one released dataset per seed."""
    return _batch("synthcity-fixed", True, data, seeds, rows, epsilon, delta, hyperparams)
