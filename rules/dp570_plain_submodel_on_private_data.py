"""DP570: a sub-model trained with a plain optimizer on the data a DP model of the same pipeline trains on."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.plain_training import LineHits, PlainStep, plain_steps
from dpcheck.rule import Rule


class PlainSubModelOnPrivateData(Rule):
    id = "DP570"
    name = "plain-submodel-on-private-data"
    category = "general"
    severity = "error"
    summary = ("a model (autoencoder, embedder, pretrained encoder) is trained with a plain optimizer on the records "
               "a DP model of the same module trains on")
    rationale = (
        "A DP pipeline's guarantee covers what its DP optimizer (or hand-clipped, noised gradient) trains. When the "
        "same module also trains another model — an autoencoder whose decoder turns the generator's output into "
        "records, a TimeGAN embedder/recovery, a pretrained encoder the private classifier sits on — with a plain "
        "optimizer (`torch.optim.Adam`, `tf.train.AdamOptimizer`, Keras `compile(optimizer='adam')` + `fit`, "
        "`optax.adam`) on a loss computed from the private records themselves, that model has memorised the data "
        "without noise and everything it produces is outside the reported ε. Reported: at the plain optimizer's "
        "step (`opt.step()`, `minimize`, `apply_gradients`, Keras `fit`) and at the call handing it to the function "
        "that steps it, when the module holds DP training and the loss it steps reads a "
        "record value — a loop variable over the data, a parameter, a `tf.placeholder`, a loaded array — other "
        "than through the DP-trained model (a GAN generator's loss reaches the data only through the private "
        "discriminator, and stays quiet) or only its size. Not reported: an optimizer handed to a DP wrapper "
        "(`make_private`, `DPOptimizer(opt)`, `engine.attach(opt)`), one whose step follows hand-added gradient "
        "noise or clipping, data named public, synthetic, generated or test, functions, classes and branches of a "
        "non-private mode, baseline or evaluation, modules with no DP training. Fix: train the sub-model with the "
        "DP optimizer too (and account for it), or on public data."
    )
    TRIGGERS = ("DP", "dp", "rivate", "grad")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return bool(facts.memo("plain_steps", lambda: plain_steps(facts.tree)))

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._hits: LineHits[PlainStep] = LineHits(ctx, plain_steps)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        step = self._hits.take(node)
        if step is None:
            return
        self.report(node, f"`{step.optimizer}` is a plain optimizer stepping a loss on `{step.data}`, the records the "
                          f"DP training of this module (line {step.dp_line}) protects: the model it trains "
                          "memorises them without noise and is outside the reported ε; train it with the DP "
                          "optimizer (and account for it) or on public data")

    VALID = (
        # twin of 12: both optimizers come from the factory and both are handed to the engine
        """
import torch
from opacus import PrivacyEngine
from opacus.utils.batch_memory_manager import BatchMemoryManager
class DPTrajGAN:
    def __init__(self, gen, dis, sigma):
        self.gen, self.dis = gen, dis
        self.opt_g = build_optimizer(self.gen.parameters(), kind="adam")
        self.opt_d = build_optimizer(self.dis.parameters(), kind="adam")
        self.engine = PrivacyEngine()
        self.dis, self.opt_d, _ = self.engine.make_private(module=self.dis, optimizer=self.opt_d,
                                                           data_loader=None, noise_multiplier=sigma, max_grad_norm=1.0)

    def fit(self, loader):
        with BatchMemoryManager(data_loader=loader, max_physical_batch_size=32, optimizer=self.opt_d) as loader:
            for real in loader:
                self.opt_d.zero_grad()
                d_loss = self.dis(real).mean() - self.dis(self.gen(torch.randn(len(real), 8)).detach()).mean()
                d_loss.backward()
                self.opt_d.step()
""",
        # twin of 1: the autoencoder is trained with Opacus too (make_private over its optimizer)
        """
import torch
from opacus import PrivacyEngine
def run(train_loader, epsilon, delta, epochs):
    ae = AutoEncoder()
    ae_opt = torch.optim.Adam(ae.parameters(), lr=1e-3)
    engine = PrivacyEngine()
    ae, ae_opt, train_loader = engine.make_private_with_epsilon(module=ae, optimizer=ae_opt, data_loader=train_loader,
                                                               target_epsilon=epsilon, target_delta=delta, epochs=epochs, max_grad_norm=1.0)
    for x, _ in train_loader:
        ae_opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ae(x), x)
        loss.backward()
        ae_opt.step()
    return ae.decoder
""",
        # DP-GAN: the generator's plain Adam reaches the data only through the DP-trained discriminator
        """
import torch
from opacus.optimizers import DPOptimizer
def train(G, D, loader, sigma, clip, nz=64):
    d_opt = DPOptimizer(torch.optim.Adam(D.parameters()), noise_multiplier=sigma, max_grad_norm=clip, expected_batch_size=64)
    g_opt = torch.optim.Adam(G.parameters(), lr=2e-4)
    for real, _ in loader:
        z = torch.randn(real.size(0), nz)
        d_opt.zero_grad()
        d_loss = -(torch.log(D(real)) + torch.log(1 - D(G(z).detach()))).mean()
        d_loss.backward()
        d_opt.step()
        g_opt.zero_grad()
        g_loss = -torch.log(D(G(z))).mean()
        g_loss.backward()
        g_opt.step()
""",
        # PATE student: plain optimizer on public data labelled by the noisy teacher votes
        """
import torch
def train_student(student, public_loader, noisy_labels, epochs):
    opt = torch.optim.SGD(student.parameters(), lr=0.1)
    for _ in range(epochs):
        for i, (x, _) in enumerate(public_loader):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(student(x), noisy_labels[i])
            loss.backward()
            opt.step()
def train_teachers(teachers, parts, epsilon):
    from opacus import PrivacyEngine
    return PrivacyEngine
""",
        # no DP training in the module: an ordinary autoencoder
        """
import torch
def pretrain(ae, loader, epochs=10):
    opt = torch.optim.Adam(ae.parameters(), lr=1e-3)
    for _ in range(epochs):
        for x, _ in loader:
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(ae(x), x)
            loss.backward()
            opt.step()
""",
        # twin of TF1: both solvers are DP optimizers
        """
import tensorflow as tf
from tensorflow_privacy.privacy.optimizers.dp_optimizer import DPAdamGaussianOptimizer
X = tf.placeholder(tf.float32, [None, 64])
X_hat = decoder(encoder(X))
ae_loss = tf.reduce_mean(tf.square(X - X_hat))
d_loss = discriminator_loss(X)
ae_solver = DPAdamGaussianOptimizer(l2_norm_clip=1.0, noise_multiplier=1.1, num_microbatches=1).minimize(ae_loss, var_list=ae_vars)
d_solver = DPAdamGaussianOptimizer(l2_norm_clip=1.0, noise_multiplier=1.1, num_microbatches=1).minimize(d_loss, var_list=d_vars)
""",
        # a non-private baseline beside the DP model, named so
        """
import torch
from opacus import PrivacyEngine
def train_nonprivate_baseline(model, train_loader):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in train_loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
def train_dp(model, train_loader, sigma):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt, train_loader = PrivacyEngine().make_private(module=model, optimizer=opt, data_loader=train_loader,
                                                             noise_multiplier=sigma, max_grad_norm=1.0)
""",
        # twin of Keras: the embedder's fit is on public data
        """
from tensorflow import keras
from tensorflow_privacy import DPKerasAdamOptimizer
def build(x_public, x_private, y_private, sigma):
    embedder = make_embedder()
    embedder.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    embedder.fit(x_public, x_public, epochs=5)
    clf = make_classifier(embedder)
    clf.compile(optimizer=DPKerasAdamOptimizer(l2_norm_clip=1.0, noise_multiplier=sigma, num_microbatches=1), loss="bce")
    clf.fit(x_private, y_private)
""",
        # a flag picks the plain optimizer for the non-private mode
        """
import torch
from opacus.optimizers import DPOptimizer
def make_opt(model, args):
    opt = torch.optim.Adam(model.parameters())
    if args.dp:
        opt = DPOptimizer(opt, noise_multiplier=args.sigma, max_grad_norm=args.clip, expected_batch_size=args.bs)
    return opt
def train(model, loader, args):
    opt = make_opt(model, args)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
""",
        # ML: a diffusion model with an EMA and a plain Adam, no DP anywhere
        """
import torch
def train_diffusion(unet, loader, steps):
    opt = torch.optim.AdamW(unet.parameters(), lr=1e-4, eps=1e-8)
    for x0, _ in loader:
        noise = torch.randn_like(x0)
        t = torch.randint(0, steps, (x0.size(0),))
        loss = ((unet(x0 + noise, t) - noise) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        # manual DP-SGD for the discriminator, the generator's loss goes through it
        """
import torch
def step(G, D, real, d_opt, g_opt, sigma, C):
    d_opt.zero_grad()
    loss = D(real).mean() - D(G(torch.randn(real.shape[0], 16))).mean()
    loss.backward()
    for p in D.parameters():
        p.grad += torch.normal(0, sigma * C, p.grad.shape)
    d_opt.step()
    g_opt.zero_grad()
    (-D(G(torch.randn(real.shape[0], 16))).mean()).backward()
    g_opt.step()
""",
    )

    INVALID = (
        # 1. torch function: the autoencoder is pretrained with plain Adam on the data the DP-GAN trains on
        """
import torch
from opacus import PrivacyEngine
def run(train_loader, epsilon, delta, epochs):
    ae = AutoEncoder()
    ae_opt = torch.optim.Adam(ae.parameters(), lr=1e-3)
    for x, _ in train_loader:
        ae_opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ae(x), x)
        loss.backward()
        ae_opt.step()  # <-
    D = Discriminator()
    d_opt = torch.optim.Adam(D.parameters())
    engine = PrivacyEngine()
    D, d_opt, train_loader = engine.make_private_with_epsilon(module=D, optimizer=d_opt, data_loader=train_loader,
                                                             target_epsilon=epsilon, target_delta=delta, epochs=epochs, max_grad_norm=1.0)
    return ae.decoder, D
""",
        # 2. a class: the autoencoder's optimizer is plain, the discriminator's a DP optimizer
        """
import torch
import torch.nn.functional as F
from opacus.optimizers import DPOptimizer
class DPAutoGAN:
    def __init__(self, sigma, clip, batch_size):
        self.autoencoder = AutoEncoder()
        self.ae_opt = torch.optim.Adam(self.autoencoder.parameters(), lr=1e-3)
        self.D = Discriminator()
        self.d_opt = DPOptimizer(torch.optim.RMSprop(self.D.parameters()), noise_multiplier=sigma,
                                 max_grad_norm=clip, expected_batch_size=batch_size)

    def fit(self, data, epochs):
        for _ in range(epochs):
            for batch in data:
                recon = self.autoencoder(batch)
                loss = F.binary_cross_entropy(recon, batch)
                self.ae_opt.zero_grad()
                loss.backward()
                self.ae_opt.step()  # <-
        self.train_gan(data)

    def sample(self, n):
        return self.autoencoder.decode(self.G(torch.randn(n, 32)))
""",
        # 3. TF1: the autoencoder's solver is a plain AdamOptimizer fed the real records
        """
import tensorflow as tf
from tensorflow_privacy.privacy.optimizers.dp_optimizer import DPAdamGaussianOptimizer
X = tf.placeholder(tf.float32, [None, 64])
X_hat = decoder(encoder(X))
ae_loss = tf.reduce_mean(tf.square(X - X_hat))
d_loss = discriminator_loss(X)
ae_solver = tf.train.AdamOptimizer(1e-3).minimize(ae_loss, var_list=ae_vars)  # <-
d_solver = DPAdamGaussianOptimizer(l2_norm_clip=1.0, noise_multiplier=1.1, num_microbatches=1).minimize(d_loss, var_list=d_vars)
""",
        # 4. Keras: the embedder is compiled with a plain Adam and fitted on the private records
        """
from tensorflow import keras
from tensorflow_privacy import DPKerasAdamOptimizer
def build(x_private, y_private, sigma):
    embedder = make_embedder()
    embedder.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
    embedder.fit(x_private, x_private, epochs=5)  # <-
    clf = make_classifier(embedder)
    clf.compile(optimizer=DPKerasAdamOptimizer(l2_norm_clip=1.0, noise_multiplier=sigma, num_microbatches=1), loss="bce")
    clf.fit(x_private, y_private)
""",
        # 5. TF2 TimeGAN-style: embedder and recovery trained with a plain optimizer on the real sequences
        """
import tensorflow as tf
from tensorflow_privacy import VectorizedDPKerasAdamOptimizer
class TimeGAN:
    def __init__(self, noise_multiplier, l2_clip):
        self.e_opt = tf.keras.optimizers.Adam(1e-3)
        self.d_opt = VectorizedDPKerasAdamOptimizer(l2_norm_clip=l2_clip, noise_multiplier=noise_multiplier, num_microbatches=1)

    def train_embedder(self, x_real):
        with tf.GradientTape() as tape:
            h = self.embedder(x_real)
            x_tilde = self.recovery(h)
            e_loss = tf.reduce_mean(tf.square(x_real - x_tilde))
        variables = self.embedder.trainable_variables + self.recovery.trainable_variables
        grads = tape.gradient(e_loss, variables)
        self.e_opt.apply_gradients(zip(grads, variables))  # <-
""",
        # 6. a pretrained encoder: its optimizer is SGD on the private loader, the classifier on top is made private
        """
import torch
from opacus import PrivacyEngine
def pretrain_encoder(encoder, private_loader, epochs):
    enc_opt = torch.optim.SGD(encoder.parameters(), lr=0.05)
    for _ in range(epochs):
        for images, _ in private_loader:
            enc_opt.zero_grad()
            loss = contrastive_loss(encoder(augment(images)), encoder(augment(images)))
            loss.backward()
            enc_opt.step()  # <-
    return encoder
def main(args):
    private_loader = get_loader(args.data)
    encoder = pretrain_encoder(Encoder(), private_loader, args.pre_epochs)
    clf = Head(encoder)
    opt = torch.optim.SGD(clf.parameters(), lr=args.lr)
    clf, opt, private_loader = PrivacyEngine().make_private(module=clf, optimizer=opt, data_loader=private_loader,
                                                            noise_multiplier=args.sigma, max_grad_norm=args.clip)
""",
        # 7. a VAE trained plainly beside a flow model attached to the old Opacus engine
        """
import torch
from torch import optim
from opacus import PrivacyEngine
def train(vae, flow, loader, args):
    opt_vae = optim.Adam(vae.parameters(), lr=args.lr)
    opt_flow = optim.Adam(flow.parameters(), lr=args.lr)
    engine = PrivacyEngine(flow, batch_size=args.bs, sample_size=len(loader.dataset), noise_multiplier=args.sigma, max_grad_norm=1.0)
    engine.attach(opt_flow)
    for batch in loader:
        x = batch[0]
        recon, mu, logvar = vae(x)
        vae_loss = ((recon - x) ** 2).sum() - 0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum()
        opt_vae.zero_grad()
        vae_loss.backward()
        opt_vae.step()  # <-
        flow_loss = -flow.log_prob(vae.encode(x).detach()).mean()
        opt_flow.zero_grad()
        flow_loss.backward()
        opt_flow.step()
""",
        # 8. hand-written DP-SGD for the discriminator, the autoencoder steps its raw gradient on the same batch
        """
import torch
def train_step(ae, D, G, x, ae_opt, d_opt, sigma, C):
    d_opt.zero_grad()
    d_loss = D(ae.encode(x).detach()).mean() - D(G(torch.randn(x.shape[0], 8))).mean()
    d_loss.backward()
    for p in D.parameters():
        p.grad += torch.normal(0, sigma * C, p.grad.shape) / x.shape[0]
    d_opt.step()
    ae_opt.zero_grad()
    ae_loss = ((ae(x) - x) ** 2).mean()
    ae_loss.backward()
    ae_opt.step()  # <-
""",
        # 9. Keras autoencoder fitted with the private features; a DP optimizer for the downstream model
        """
import tensorflow as tf
from tensorflow_privacy.privacy.optimizers.dp_optimizer_keras import DPKerasSGDOptimizer
def main(args):
    x_train, y_train = load(args.train_csv)
    autoencoder = tf.keras.Sequential([enc_layers(), dec_layers()])
    autoencoder.compile(optimizer="adam", loss="mse")
    autoencoder.fit(x_train, x_train, batch_size=args.batch_size, epochs=args.ae_epochs)  # <-
    model = build_model()
    opt = DPKerasSGDOptimizer(l2_norm_clip=args.clip, noise_multiplier=args.sigma, num_microbatches=args.batch_size, learning_rate=0.1)
    model.compile(optimizer=opt, loss="categorical_crossentropy")
    model.fit(autoencoder.layers[0](x_train), y_train)
""",
        # 10. JAX/optax: the encoder's optax.adam steps a reconstruction gradient, the classifier is DP-aggregated
        """
import jax
import optax
def train(params, enc_params, batches, sigma, clip):
    dp_opt = optax.chain(optax.differentially_private_aggregate(l2_norm_clip=clip, noise_multiplier=sigma, seed=0), optax.sgd(0.1))
    enc_opt = optax.adam(1e-3)
    enc_state = enc_opt.init(enc_params)
    for batch in batches:
        grads = jax.grad(recon_loss)(enc_params, batch)
        updates, enc_state = enc_opt.update(grads, enc_state)  # <-
        enc_params = optax.apply_updates(enc_params, updates)
    return enc_params
""",
        # 11. benchmark spelling (TableDiffusion's DP-auto-GAN): only the decoder is made private; the records come
        # through torch's ``Variable`` and the encoder's plain Adam steps the shared reconstruction loss
        """
import torch
from torch.autograd import Variable
from opacus import PrivacyEngine
class AutoGANSynthesiser:
    def fit(self, train_data, Tensor=torch.FloatTensor):
        self.optim_enc = torch.optim.Adam(params=self.AE.get_encoder().parameters(), lr=1e-3)
        self.optim_dec = torch.optim.Adam(params=self.AE.get_decoder().parameters(), lr=1e-3)
        self.engine = PrivacyEngine(accountant="rdp")
        self.AE.decoder, self.optim_dec, train_data = self.engine.make_private_with_epsilon(
            module=self.AE.get_decoder(), optimizer=self.optim_dec, data_loader=train_data,
            target_epsilon=1.0, target_delta=1e-5, epochs=1, max_grad_norm=1.0)
        for i, X in enumerate(train_data):
            self.optim_enc.zero_grad()
            self.optim_dec.zero_grad()
            real_X = Variable(X.type(Tensor))
            loss = torch.nn.functional.binary_cross_entropy(self.AE(real_X), real_X)
            loss.backward()
            self.optim_enc.step()  # <-
            self.optim_dec.step()
""",
        # 12. the optimizers come from a factory; only the generator's is handed to the DP machinery, the
        # discriminator (the network reading the real records) steps its plain one; the scheduler is no step
        """
import torch
from opacus import PrivacyEngine
from opacus.utils.batch_memory_manager import BatchMemoryManager
class DPTrajGAN:
    def __init__(self, gen, dis, sigma):
        self.gen, self.dis = gen, dis
        self.opt_g = build_optimizer(self.gen.parameters(), kind="adam")
        self.opt_d = build_optimizer(self.dis.parameters(), kind="adam")
        self.sched_d = torch.optim.lr_scheduler.StepLR(self.opt_d, step_size=100)
        self.engine = PrivacyEngine(accountant="rdp")

    def fit(self, loader, lambda_gp=10.0):
        with BatchMemoryManager(data_loader=loader, max_physical_batch_size=32, optimizer=self.opt_g) as loader:
            for real in loader:
                self.opt_d.zero_grad()
                d_loss = self.dis(real).mean() - self.dis(self.gen(torch.randn(len(real), 8)).detach()).mean()
                d_loss = d_loss + lambda_gp * penalty(self.dis, real)
                d_loss.backward()
                self.opt_d.step()  # <-
""",
    )
