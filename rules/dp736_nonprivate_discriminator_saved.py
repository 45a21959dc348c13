"""DP736: in a DP-GAN whose generator alone is made private, the discriminator (trained plainly on the real
records) is saved in the DP mode beside the DP generator."""
from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.plain_training import LineHits, _Module, _key, _words
from dpcheck.rule import Rule

#: names of a discriminator / critic
_DIS_WORDS = frozenset({"d", "dis", "disc", "discriminator", "discriminators", "critic", "netd", "discrim"})
#: names of a generator
_GEN_WORDS = frozenset({"g", "gen", "generator", "netg", "decoder"})
#: words of a DP switch in a test
_SWITCH_WORDS = frozenset({"dp", "private", "privacy", "dpsgd", "nodp", "nondp", "nonprivate"})
_SAVES = frozenset({"save", "save_weights", "save_model", "dump", "save_pretrained", "save_state_dict"})


@dataclass(frozen=True)
class SavedDiscriminator:
    line: int
    model: str
    dp_model: str
    dp_line: int


def _dis_name(key: str | None) -> bool:
    if not key:
        return False
    last = key.rsplit(".", 1)[-1]
    return bool(_words(last) & _DIS_WORDS) and not _words(last) & _GEN_WORDS


def _saved_model(call: ast.Call) -> str | None:
    """``torch.save(D.state_dict(), …)``, ``torch.save(D, …)``, ``torch.save({"D": D.state_dict()}, …)``,
    ``D.save_weights(…)``: the discriminator saved."""
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if name not in _SAVES:
        return None
    if isinstance(f, ast.Attribute) and name in ("save_weights", "save", "save_pretrained") and _dis_name(_key(f.value)):
        return _key(f.value)
    if not call.args:
        return None
    for n in ast.walk(call.args[0]):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "state_dict" \
                and _dis_name(_key(n.func.value)):
            return _key(n.func.value)
        if isinstance(n, (ast.Name, ast.Attribute)) and n is call.args[0] and _dis_name(_key(n)):
            return _key(n)
    return None


def _negated(test: ast.AST) -> bool:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value in (False, None, 0):
        return isinstance(test.ops[0], (ast.Eq, ast.Is))
    return False


def _in_plain_arm(mod: _Module, node: ast.AST) -> bool:
    """``node`` runs only in the non-private mode (``if not self.dp: <node>``, ``if dp: … else: <node>``)."""
    child, p = node, mod.parents.get(node)
    while p is not None:
        if isinstance(p, ast.If):
            text = ast.unparse(p.test)
            if _words(text) & _SWITCH_WORDS:
                in_body = any(child is s for s in p.body)
                negated = _negated(p.test) or bool(_words(text) & {"nodp", "nondp", "nonprivate"})
                if in_body == negated:
                    return True
        child, p = p, mod.parents.get(p)
    return False


def saved_discriminators(tree: ast.Module) -> list[SavedDiscriminator]:
    mod = _Module(tree)
    if not mod.dp_line:
        return []
    # the models made private, and the optimizers handed to a DP wrapper named for their model (``opt_g``)
    opt_words = {"opt", "optim", "optimizer", "optimiser", "solver"}
    wrapped_opts = [w for w in mod.wrapped if _words(w.rsplit(".", 1)[-1]) & opt_words]
    gens = [m for m in mod.dp_models if _words(m.rsplit(".", 1)[-1]) & _GEN_WORDS] + [
        w for w in wrapped_opts if _words(w.rsplit(".", 1)[-1]) & _GEN_WORDS]
    if not gens or any(_dis_name(m) for m in mod.dp_models) or any(
            _words(w.rsplit(".", 1)[-1]) & _DIS_WORDS - {"d"} or _words(w.rsplit(".", 1)[-1]) & {"d"}
            and not _words(w.rsplit(".", 1)[-1]) & _GEN_WORDS for w in wrapped_opts):
        return []
    dp_last = {m.rsplit(".", 1)[-1] for m in mod.dp_models}
    out: list[SavedDiscriminator] = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call):
            continue
        model = _saved_model(n)
        if model is None or model.rsplit(".", 1)[-1] in dp_last or _in_plain_arm(mod, n):
            continue
        if not mod.dp_in(mod.unit(n)):
            continue
        out.append(SavedDiscriminator(n.lineno, model, gens[0], mod.dp_line))
    return out


class NonPrivateDiscriminatorSaved(Rule):
    id = "DP736"
    name = "nonprivate-discriminator-saved"
    category = "general"
    severity = "error"
    summary = ("a DP-GAN makes only its generator private, and saves the discriminator — trained without noise "
               "on the real records — beside the DP generator")
    rationale = (
        "When a GAN's DP training wraps the generator (`make_private(module=self.gen, optimizer=self.opt_g, …)`, "
        "`DPOptimizer` over the generator's optimizer), the discriminator, the network that reads the real records, "
        "is trained with a plain optimizer: its weights are an exact function of the private data and no ε "
        "covers them. Writing them out (`torch.save(self.dis.state_dict(), …)`, `D.save_weights(…)`) in the DP "
        "mode releases a non-private model next to the checkpoint the ε is claimed for; a membership attack on "
        "the discriminator is the standard white-box attack on a GAN. Reported: a save of a model named as a "
        "discriminator or critic in a module (a class) whose DP wrapper takes only a generator, outside the arm of "
        "a DP switch that is the non-private mode (`if not self.dp:`). Not reported: a discriminator that is itself "
        "made private, saves in the non-private arm, modules with no DP training. Fix: do not release the "
        "discriminator (keep it out of the DP checkpoint), or train it with the DP optimizer and account for it."
    )
    TRIGGERS = ("save",)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a save call and a DP wrapper (``make_private``, a DP optimizer, an engine)."""
        called = facts.called
        return bool(called & _SAVES) and any(c.startswith(("make_private", "DP")) or "DPOptimizer" in c
                                             or c in ("attach", "PrivacyEngine", "GradSampleModule") for c in called)

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._hits: LineHits[SavedDiscriminator] = LineHits(ctx, saved_discriminators)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        hit = self._hits.take(node)
        if hit is None:
            return
        self.report(node, f"`{hit.model}` is saved, but the DP training of this module (line {hit.dp_line}) makes "
                          f"only `{hit.dp_model}` private: the discriminator was trained on the real records without "
                          "clipping or noise, and its weights released beside the DP generator are outside the "
                          "reported ε; do not release it, or train it with the DP optimizer")

    VALID = (
        # twin of 1: the DP checkpoint holds only the generator; the discriminator is saved in the plain mode
        """
import torch
class GAN(torch.nn.Module):
    def save(self, epoch):
        if not self.dp:
            torch.save(self.gen.state_dict(), f"gen_{epoch}.pt")
            torch.save(self.dis.state_dict(), f"dis_{epoch}.pt")
        else:
            self.privacy_engine.save_checkpoint(path=f"gen_{epoch}.pt", module=self.gen, optimizer=self.opt_g)

    def init_dp(self, loader, sigma):
        self.gen, self.opt_g, loader = self.privacy_engine.make_private(module=self.gen, optimizer=self.opt_g,
                                                                        data_loader=loader, noise_multiplier=sigma,
                                                                        max_grad_norm=1.0)
        return loader
""",
        # twin of 2: the discriminator is the DP-trained network (the usual DP-GAN): saving it is the release
        """
import torch
from opacus import PrivacyEngine
def train(netG, netD, loader, sigma, out):
    optD = torch.optim.Adam(netD.parameters())
    netD, optD, loader = PrivacyEngine().make_private(module=netD, optimizer=optD, data_loader=loader,
                                                      noise_multiplier=sigma, max_grad_norm=1.0)
    run(netG, netD, loader)
    torch.save(netD.state_dict(), out + "/netD.pt")
    torch.save(netG.state_dict(), out + "/netG.pt")
""",
        # twin of 3: Keras; only the generator is written out in the DP run
        """
from tensorflow_privacy import DPKerasAdamOptimizer
def fit(generator, critic, data, args):
    generator.compile(optimizer=DPKerasAdamOptimizer(l2_norm_clip=1.0, noise_multiplier=args.sigma, num_microbatches=1))
    train_loop(generator, critic, data)
    generator.save_weights(args.out + "/generator.h5")
""",
        # twin of 4: an if-dp branch saves the generator only; the discriminator in the other (plain) arm
        """
import torch
from opacus.optimizers import DPOptimizer
def checkpoint(G, D, opt_g, args, epoch):
    opt_g = DPOptimizer(opt_g, noise_multiplier=args.sigma, max_grad_norm=1.0, expected_batch_size=64)
    if args.dp:
        torch.save({"G": G.state_dict(), "epoch": epoch}, "ckpt.pt")
    else:
        torch.save({"G": G.state_dict(), "D": D.state_dict()}, "ckpt.pt")
""",
        # ML: an ordinary GAN with no DP saves both networks
        """
import torch
def save_all(gen, dis, epoch):
    torch.save(gen.state_dict(), f"g{epoch}.pt")
    torch.save(dis.state_dict(), f"d{epoch}.pt")
""",
    )

    INVALID = (
        # 1. the DP arm of save_parameters writes the plain discriminator next to the engine's generator checkpoint
        """
import torch
class GAN(torch.nn.Module):
    def save(self, epoch):
        if not self.dp:
            torch.save(self.gen.state_dict(), f"gen_{epoch}.pt")
            torch.save(self.dis.state_dict(), f"dis_{epoch}.pt")
        else:
            torch.save(self.dis.state_dict(), f"dis_{epoch}.pt")  # <-
            self.privacy_engine.save_checkpoint(path=f"gen_{epoch}.pt", module=self.gen, optimizer=self.opt_g)

    def init_dp(self, loader, sigma):
        self.gen, self.opt_g, loader = self.privacy_engine.make_private(module=self.gen, optimizer=self.opt_g,
                                                                        data_loader=loader, noise_multiplier=sigma,
                                                                        max_grad_norm=1.0)
        return loader
""",
        # 2. a function: only the generator is made private, both networks saved at the end
        """
import torch
from opacus import PrivacyEngine
def train(netG, netD, loader, sigma, out):
    optG = torch.optim.Adam(netG.parameters())
    netG, optG, loader = PrivacyEngine().make_private(module=netG, optimizer=optG, data_loader=loader,
                                                      noise_multiplier=sigma, max_grad_norm=1.0)
    run(netG, netD, loader)
    torch.save(netD.state_dict(), out + "/netD.pt")  # <-
    torch.save(netG.state_dict(), out + "/netG.pt")
""",
        # 3. Keras: the critic's weights are written out with the DP generator's
        """
from tensorflow_privacy import DPKerasAdamOptimizer
def fit(generator, critic, data, args):
    generator.compile(optimizer=DPKerasAdamOptimizer(l2_norm_clip=1.0, noise_multiplier=args.sigma, num_microbatches=1))
    train_loop(generator, critic, data)
    generator.save_weights(args.out + "/generator.h5")
    critic.save_weights(args.out + "/critic.h5")  # <-
""",
        # 4. the DP arm's checkpoint dict holds the discriminator too
        """
import torch
from opacus.optimizers import DPOptimizer
def checkpoint(G, D, opt_g, args, epoch):
    opt_g = DPOptimizer(opt_g, noise_multiplier=args.sigma, max_grad_norm=1.0, expected_batch_size=64)
    if args.dp:
        torch.save({"G": G.state_dict(), "D": D.state_dict(), "epoch": epoch}, "ckpt.pt")  # <-
""",
    )
