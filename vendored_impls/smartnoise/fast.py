"""Fast path of ``smartnoise`` and ``smartnoise-fixed`` for audits: K shadow runs trained at once.

Each model replays ``PATEGAN.train`` of ``upstream_pategan`` (or ``fixed_pategan``) as the
adapter runs it. Its generator, student and teachers are that module's own classes, built under
the run's seed in the plain path's order (the same initial weights); its ``randperm``/``rand``
draws come from a generator positioned where the plain path's global one is after construction
(:func:`dpcheck.vendored_impls._torch_stack.replay`), its Laplace vote noise from
``RandomState(seed)``, its accountant is the module's own ``moments_acc``, and each model checks
its own budget at the top of every iteration, as upstream's loop does. A stopped model's
generator is snapshotted and restored before generation, which replays the adapter's
``torch.manual_seed(seed * 7919 + 1)`` and the module's latent draw (``randn`` upstream, ``rand``
in the twin). The modules' layers are computed for all models at once (batched matrix products).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from dpcheck.vendored_impls._common import as_numeric_array
from dpcheck.vendored_impls._torch import integer_columns, merge_hyperparams, public_bounds, single_threaded
from dpcheck.vendored_impls._torch_stack import Stacked, bce, layer_norm, linear, replay
from dpcheck.vendored_impls.smartnoise.adapter import DEFAULTS


def _modules(fixed: bool) -> tuple[Any, Any]:
    if fixed:
        from dpcheck.vendored_impls.smartnoise import fixed_pategan as pategan, fixed_privacy_utils as utils
    else:
        from dpcheck.vendored_impls.smartnoise import upstream_pategan as pategan, upstream_privacy_utils as utils
    return pategan, utils


def generator_forward(binary: bool) -> Any:
    """``Generator.forward`` (three Linear-LayerNorm-activation blocks, two residual) per model."""
    act = torch.tanh if binary else (lambda t: torch.nn.functional.leaky_relu(t, 0.2))

    def forward(p: dict[str, torch.Tensor], noise: torch.Tensor) -> torch.Tensor:
        def block(i: int, x: torch.Tensor) -> torch.Tensor:
            return act(layer_norm(linear(x, p[f"layer_{i}.0.weight"]), p[f"layer_{i}.1.weight"],
                                  p[f"layer_{i}.1.bias"]))

        noise = block(0, noise) + noise
        noise = block(1, noise) + noise
        return block(2, noise)

    return forward


def discriminator_forward(p: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """``Discriminator.forward`` (Linear, LeakyReLU(0.2), Linear, LeakyReLU(0.2), Linear, Sigmoid) per model."""
    leaky = torch.nn.functional.leaky_relu
    h = leaky(linear(x, p["model.0.weight"], p["model.0.bias"]), 0.2)
    h = leaky(linear(h, p["model.2.weight"], p["model.2.bias"]), 0.2)
    return torch.sigmoid(linear(h, p["model.4.weight"], p["model.4.bias"]))


def _batch(name: str, fixed: bool, data: np.ndarray, seeds: list[int], rows: int, epsilon: float,
           delta: float | None, hyperparams: dict[str, Any]) -> list[np.ndarray]:
    params = merge_hyperparams(name, DEFAULTS, hyperparams)
    k_given = params["num_teachers"]
    x, _ = as_numeric_array(data, min_rows=1 if k_given is None else int(k_given))
    bounds = public_bounds(params["bounds"], x.shape[1])
    if bounds is None or (params["preprocessor_eps"] or 0) > 0:
        raise ValueError(f"{name} fast path: needs public bounds and no preprocessor budget (DP bounds are "
                         "estimated on the plain path only)")
    ints = integer_columns(data, x, params["integer_columns"])
    pategan, utils = _modules(fixed)
    latent, batch = int(params["latent_dim"]), int(params["batch_size"])
    lamda = 1e-3 if params["lamda"] is None else float(params["lamda"])
    num_moments, lr = int(params["num_moments"]), float(params["lr"])
    max_iterations = int(params["max_iterations"])
    transformer = pategan.MinMaxTransformer(bounds, 0.0, ints).fit(x)
    scaled = transformer.transform(x)
    d = scaled.shape[1]
    k = max(1, int(len(scaled) / 1000) if k_given is None else int(k_given))
    if delta is None:
        delta = 1 / (scaled.shape[0] * np.sqrt(scaled.shape[0]))
    parts = [torch.from_numpy(scaled[p].astype("double")) for p in np.array_split(np.arange(len(scaled)), k)]

    def build() -> tuple[Any, Any, list[Any]]:
        g = pategan.Generator(latent, d, binary=bool(params["binary"])).double()
        s = pategan.Discriminator(d).double()
        return g, s, [pategan.Discriminator(d).double() for _ in range(k)]

    K = len(seeds)
    built, gens = zip(*(replay(int(s), build) for s in seeds))
    rngs = [np.random.RandomState(int(s) % 2**32) for s in seeds]
    G = Stacked([b[0] for b in built], generator_forward(bool(params["binary"])))
    S = Stacked([b[1] for b in built], discriminator_forward)
    T = [Stacked([b[2][i] for b in built], discriminator_forward) for i in range(k)]
    opt_g = torch.optim.Adam(G.parameters(), lr=lr)
    opt_s = torch.optim.Adam(S.parameters(), lr=lr)
    opt_t = [torch.optim.Adam(t.parameters(), lr=lr) for t in T]
    l_list = 1 + torch.tensor(range(num_moments))
    # the module's own moments_acc, mapped over the models' votes
    accountant = torch.func.vmap(lambda v: utils.moments_acc(k, v, lamda, l_list))
    alphas = [torch.tensor([0.0] * num_moments, dtype=torch.float64) for _ in range(K)]
    eps = [0.0] * K
    its = [0] * K
    active = [True] * K
    snaps: list[dict[str, torch.Tensor] | None] = [None] * K

    def uniform(n: int) -> torch.Tensor:
        out = torch.zeros(K, n, latent)
        for j in range(K):
            if active[j]:
                out[j] = torch.rand(n, latent, generator=gens[j])
        return out.double()

    with single_threaded():
        while True:
            for j in range(K):  # the top of upstream's loop, per model
                if not active[j]:
                    continue
                if not (eps[j] < epsilon and its[j] < max_iterations):
                    active[j], snaps[j] = False, G.snapshot(j)
                    continue
                its[j] += 1
                eps[j] = float(torch.min((alphas[j] - math.log(delta)) / l_list))
                if eps[j] > epsilon:
                    if its[j] == 1:
                        raise ValueError("Inputted epsilon parameter is too small to create a private dataset. "
                                         "Try increasing epsilon and rerunning.")
                    active[j], snaps[j] = False, G.snapshot(j)
            if not any(active):
                break
            for _ in range(int(params["teacher_iters"])):
                for i in range(k):
                    size = len(parts[i])
                    real = torch.zeros(K, min(size, batch), d, dtype=torch.float64)
                    noise = torch.zeros(K, batch, latent)
                    for j in range(K):
                        if active[j]:
                            real[j] = parts[i][torch.randperm(size, generator=gens[j])[:batch]]
                            noise[j] = torch.rand(batch, latent, generator=gens[j])
                    fake = G(noise.double())
                    T[i].zero_grad()
                    out_real, out_fake = T[i](real), T[i](fake.detach())
                    loss = (bce(out_real.squeeze(-1), torch.ones(out_real.shape[:2], dtype=torch.float64))
                            + bce(out_fake.squeeze(-1), torch.zeros(out_fake.shape[:2], dtype=torch.float64)))
                    loss.sum().backward()
                    opt_t[i].step()
            for _ in range(int(params["student_iters"])):
                fake = G(uniform(batch)).detach()
                with torch.no_grad():
                    votes = sum((t(fake) > 0.5).squeeze(-1).to(torch.int64) for t in T).to(torch.float64)
                labels = torch.zeros(K, batch, dtype=torch.float64)
                for j in range(K):
                    if active[j]:
                        noise = torch.from_numpy(rngs[j].laplace(loc=0, scale=1 / lamda, size=(batch, 1)))
                        labels[j] = ((votes[j].unsqueeze(1) + noise) > k / 2).to(torch.float64).squeeze(1)
                increments = accountant(votes.unsqueeze(2))
                for j in range(K):
                    if active[j]:
                        alphas[j] = alphas[j] + increments[j]
                output = S(fake)
                S.zero_grad()
                bce(output.squeeze(-1), labels).sum().backward()
                opt_s.step()
            gen_data = G(uniform(batch))
            out_g = S(gen_data)
            G.zero_grad()
            bce(out_g.squeeze(-1), torch.ones(out_g.shape[:2], dtype=torch.float64)).sum().backward()
            opt_g.step()

        for j in range(K):
            G.restore(j, snaps[j])
        # generate(rows) after the adapter's torch.manual_seed(seed * 7919 + 1)
        steps = rows // batch + 1
        draw = torch.rand if fixed else torch.randn
        noise = torch.stack([_latents(draw, int(s), steps, batch, latent) for s in seeds])
        with torch.no_grad():
            out = G(noise.double()).numpy()
    return [np.asarray(transformer.inverse_transform(o[:rows].copy()), dtype=np.float64) for o in out]


def _latents(draw: Any, seed: int, steps: int, batch: int, latent: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed * 7919 + 1)
    return torch.cat([draw(batch, latent, generator=generator) for _ in range(steps)])


def fit_sample_batch(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                     **hyperparams: Any) -> list[np.ndarray]:
    """``smartnoise``: one released dataset per seed."""
    return _batch("smartnoise", False, data, seeds, rows, epsilon, delta, hyperparams)


def fit_sample_batch_fixed(data: np.ndarray, seeds: list[int], rows: int, *, epsilon: float, delta: float,
                           **hyperparams: Any) -> list[np.ndarray]:
    """``smartnoise-fixed``: one released dataset per seed."""
    return _batch("smartnoise-fixed", True, data, seeds, rows, epsilon, delta, hyperparams)
