"""``dpcheck audit``: black-box ε audit (shadow runs + membership attack → ε lower bound)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from dpcheck.audit.core.hyperparams import parse_hyperparams
from dpcheck.audit.core.spec import ATTACKS, DEFAULT_CHECKPOINTS, RELEASE_ATTACKS, WHITEBOX_ATTACKS
from dpcheck.cli import EXIT_FINDINGS, EXIT_OK, UsageError

NAME = "audit"
HELP = ("Epsilon audit: shadow runs on D and D-target, a membership attack (black-box, or white-box on a released "
        "model), an epsilon lower bound.")
ORDER = 40

ATTACK_DATASET = {"querybased": "worstcase", "groundhog": "cervical", "querybased-subsets": "worstcase",
                  "groundhog-histogram": "cervical", "groundhog-correlation": "cervical",
                  "groundhog-ensemble": "cervical", "dcr": "worstcase", "mc-density": "worstcase",
                  "tvd": "worstcase", "auto": "worstcase", "gradient-canary": "worstcase-classification"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("what to audit")
    g.add_argument("--impl", action="append", metavar="NAME", required=True,
                   help="implementation (repeatable): a built-in name, 'buggy', 'twins', a reference mechanism "
                        "(ref-laplace, ref-broken, ref-marginals, ref-leaky-bounds), a real-library target "
                        "LIBRARY:NAME (e.g. diffprivlib:GaussianNB; docs/targets.md) or package.module:Factory")
    g.add_argument("--attack", action="append", choices=ATTACKS,
                   help="membership attack (repeatable; default querybased, or release for mechanism targets; "
                        "auto: choose among the black-box attacks on the validation part; white-box (passive), "
                        "for adapters with release_model(): logan = the released critic's score on the target, "
                        "model-params = the released parameters; docs/audit.md)")
    g.add_argument("--dataset", metavar="NAME",
                   help="worstcase, worstcase-categorical, worstcase-continuous, worstcase-classification "
                        "(these three take '@N' background rows and '+replace' for replace-one neighbours), cervical; "
                        "default: worstcase for querybased, "
                        "cervical for groundhog, the target's own worst case for real-library targets")
    g.add_argument("--data", metavar="FILE.csv", help="audit on your own data (needs --schema and --target)")
    g.add_argument("--schema", metavar="FILE.json",
                   help="the public domain of --data: {\"columns\": [{\"name\", \"kind\": integer|categorical|"
                        "continuous, \"categories\" or \"lower\"/\"upper\"}], \"label\": NAME or null}")
    g.add_argument("--target", type=target_arg, help="'craft' (or 'craft:K'): add a canary crafted from the public "
                                                     "domain (docs/audit.md); or the "
                                                     "row index of the target in D (cervical, --data); default on "
                                              "cervical: choose the most vulnerable record by mini-audits")
    g.add_argument("--candidates", type=int, default=64, help="target selection: farthest records tried, or with --target craft "
                                                                "crafted candidates (64)")
    g.add_argument("--mini-runs", type=int, default=25,
                   help="target selection: runs per candidate on D′ (and once on D, shared by all candidates) (25)")
    g.add_argument("--epsilon", type=float, default=1.0)
    g.add_argument("--delta", type=float, default=1e-5)
    g.add_argument("--runs", type=int, default=1000, help="shadow runs per world, R (default 1000)")
    g.add_argument("--synth-rows", type=int, help="synthetic rows released per run, the same in both worlds "
                                                  "(default 100 on worstcase, |D'| on cervical)")
    g.add_argument("--hp", action="append", default=[], metavar="KEY=VALUE",
                   help="hyperparameter passed to fit() (repeatable), e.g. --hp max_iterations=100")
    g.add_argument("--seed", type=int, default=0)
    s = p.add_argument_group("statistics")
    s.add_argument("--confidence", type=float, default=0.95, help="joint confidence of the bounds (0.95)")
    s.add_argument("--split", default="40/20/40", help="attack training/validation/test percentages")
    s.add_argument("--until-verdict", action="store_true",
                   help="stop at the first fixed checkpoint that proves a violation (Bonferroni over checkpoints)")
    s.add_argument("--checkpoints", default=",".join(map(str, DEFAULT_CHECKPOINTS)),
                   help="runs per world at which --until-verdict looks, fixed in advance (default %(default)s)")
    e = p.add_argument_group("execution")
    e.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="local worker processes (cores)")
    e.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on an existing Dask scheduler")
    e.add_argument("--cluster", choices=("local",), help="start a Dask LocalCluster with --workers workers")
    e.add_argument("--store", default=".dpcheck/audit.sqlite", help="SQLite store of finished runs")
    e.add_argument("--run-timeout", type=float, default=600.0, metavar="SECONDS",
                   help="a shadow run that takes longer is killed and the audit stops with an error (exit 2); "
                        "a fast batch of k runs gets k times this; 0 = no limit; Dask clusters use their own "
                        "(default %(default)g)")
    paths = e.add_mutually_exclusive_group()
    paths.add_argument("--fast", dest="run_path", action="store_const", const="fast",
                       help="train several shadow models at once wherever a built-in fast path exists "
                            "(default: only where the equivalence test covers it)")
    paths.add_argument("--plain", dest="run_path", action="store_const", const="plain",
                       help="one shadow model per run, the implementation's own code path")
    srch = p.add_argument_group("worst-case settings search (docs/search.md)")
    srch.add_argument("--search", nargs="*", action="extend", metavar="KEY=V1,V2",
                      help="pilot every point of a hyperparameter grid on fresh pilot runs, fix the most "
                           "distinguishing one, audit it on new runs (pilot runs never enter the bound); "
                           "alone: the built-in grid of a built-in implementation")
    srch.add_argument("--search-grid", metavar="FILE.json",
                      help="the grid as JSON: {\"KEY\": [values], ...} (every combination) or {\"points\": [{...}]}")
    srch.add_argument("--pilot-runs", type=int, default=50, metavar="P",
                      help="--search: pilot runs per world per grid point (default %(default)s)")
    one = p.add_argument_group("one-run audit (Steinke, Nasr & Jagielski 2023; docs/onerun.md)")
    one.add_argument("--one-run", type=int, metavar="M", help="instead of R runs per world: M canaries, each included with probability 1/2, ONE run, guesses scored, an epsilon lower bound")
    one.add_argument("--guesses", metavar="K", help="--one-run: guesses made, a count, a fraction of M or a percentage (default 0.5)")
    o = p.add_argument_group("output")
    o.add_argument("--json", dest="json_out", metavar="FILE", help="write results as JSON")
    o.add_argument("--plot", metavar="FILE.png", help="write a PNG of ε_emp per implementation vs claimed ε")
    o.add_argument("--no-progress", action="store_true", help="no progress bar (plain progress lines instead)")


def target_arg(text: str) -> int | str:
    """--target: a row index, or 'craft' / 'craft:K' (a crafted canary, dpcheck.audit.runners.crafting)."""
    from dpcheck.audit.runners.crafting import is_craft

    if is_craft(text):
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a row index, 'craft' or 'craft:K', got {text!r}") from None


def parse_split(text: str) -> tuple[float, float, float]:
    try:
        parts = [float(x) for x in text.split("/")]
    except ValueError:
        raise UsageError(f"--split expects three percentages like 40/20/40, got {text!r}") from None
    if len(parts) != 3 or min(parts) <= 0:
        raise UsageError(f"--split expects three positive percentages like 40/20/40, got {text!r}")
    total = sum(parts)
    return (parts[0] / total, parts[1] / total, parts[2] / total)


def crafted(args: argparse.Namespace) -> bool:
    from dpcheck.audit.runners.crafting import is_craft

    return is_craft(getattr(args, "target", None))


def user_data(args: argparse.Namespace) -> dict[str, Any] | None:
    """Check --data/--schema/--target before any run; the spec's record of the user's data."""
    from dpcheck.audit.worlds import datasets

    data_file, schema_file = getattr(args, "data", None), getattr(args, "schema", None)
    if data_file is None and schema_file is None:
        return None
    if data_file is None or schema_file is None or args.target is None:
        raise UsageError("--data needs --schema FILE.json and --target ROW (and --schema needs --data)")
    if args.dataset:
        raise UsageError("use either --dataset or --data, not both")
    try:
        data = datasets.user_data_spec(data_file, schema_file)
        datasets.user_csv(data["csv"], data["schema"], 0 if crafted(args) else args.target, data["sha256"])
    except OSError as exc:
        raise UsageError(f"cannot read {exc.filename}: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return data


def target_defaults(name: str) -> tuple[str | None, str | None]:
    """(default dataset, default attack) of a real-library target; (None, None) for anything else."""
    from dpcheck.audit.runners.engine import is_target

    if not is_target(name):
        return None, None
    from dpcheck.targets import registry

    info = registry.get(name)
    return info.dataset, ("release" if info.kind == "mechanism" else "querybased")


def build_specs(args: argparse.Namespace) -> list:
    from dpcheck import impls
    from dpcheck.audit.attacks.dpsgd import ATTACK as GRADIENT_CANARY
    from dpcheck.audit.attacks.dpsgd import check_gradient_canary, is_dpsgd_style
    from dpcheck.audit.core.settings import paper_hyperparams
    from dpcheck.audit.core.spec import AuditSpec
    from dpcheck.audit.runners.engine import check_impl_name
    from dpcheck.audit.worlds import datasets
    from dpcheck.targets.base import TargetError

    names = impls.resolve(args.impl)
    hyper_user = parse_hyperparams(args.hp)
    if "bounds" in hyper_user:
        raise UsageError("bounds are the dataset's public domain and are passed by the audit; do not set them with --hp")
    if args.dataset:
        try:
            datasets.check_name(args.dataset)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    data = user_data(args)
    specs = []
    for name in names:
        try:
            check_impl_name(name)
        except (ValueError, TargetError) as exc:
            raise UsageError(str(exc)) from None
        target_dataset, target_attack = target_defaults(name)
        for attack in args.attack or [target_attack or "querybased"]:
            if attack == "auto" and target_attack == "release":
                raise UsageError(f"--attack auto chooses among attacks on synthetic data; {name} is a mechanism "
                                 "target (use release)")
            if attack in RELEASE_ATTACKS and target_attack != "release" and not is_dpsgd_style(name) \
                    and attack != GRADIENT_CANARY:  # the gradient canary names what a target lacks below
                raise UsageError(f"the release attack reads a mechanism's released array; {name} is not a "
                                 "mechanism target (use querybased or groundhog)")
            if attack == "release-query":
                from dpcheck.audit.attacks.release_query import check_supported as check_layout

                try:
                    check_layout(name, attack)
                except ValueError as exc:
                    raise UsageError(str(exc)) from None
            if attack in WHITEBOX_ATTACKS:  # refused before any run (also target selection) if no model is released
                from dpcheck.audit.attacks.whitebox import check_supported

                try:
                    check_supported(name, attack)
                except ValueError as exc:
                    raise UsageError(str(exc)) from None
            dataset = "csv" if data else args.dataset or target_dataset or ATTACK_DATASET.get(attack, "worstcase")
            if crafted(args):
                from dpcheck.audit.runners.crafting import check_craftable

                try:
                    check_craftable(dataset)
                except ValueError as exc:
                    raise UsageError(str(exc)) from None
            if attack == "querybased" and dataset == "cervical":
                raise UsageError("the querybased attack needs a small integer domain: use a worst-case dataset")
            if dataset == "cervical":  # the CSV and the target index, before any run
                try:
                    datasets.check_cervical(None if crafted(args) else args.target)
                except ValueError as exc:
                    raise UsageError(str(exc)) from None
            # the paper's PATE-GAN knobs go to the built-in PATE-GANs only; other adapters get --hp alone
            defaults = paper_hyperparams(name, dataset)
            hyper = {**defaults, **hyper_user}
            if attack == GRADIENT_CANARY:  # its runs are trained with the adversary's gradient
                hyper.setdefault("canary", "gradient")
            try:
                specs.append(AuditSpec(impl=name, dataset=dataset, attack=attack, target=args.target,
                                       epsilon=args.epsilon, delta=args.delta, runs=args.runs,
                                       synth_rows=args.synth_rows, seed=args.seed, hyperparams=hyper,
                                       split=parse_split(args.split), confidence=args.confidence, data=data))
                check_gradient_canary(specs[-1])
            except ValueError as exc:
                raise UsageError(str(exc)) from None
    return specs


def search_grids(args: argparse.Namespace, specs: list) -> dict[str, list[dict[str, Any]]] | None:
    """--search / --search-grid: each implementation's grid points, checked before any run."""
    from dpcheck.audit.runners import search

    items, grid_file = getattr(args, "search", None), getattr(args, "search_grid", None)
    if items is None and grid_file is None:
        return None
    if items and grid_file:
        raise UsageError("give the search grid either as --search KEY=V1,V2 or as --search-grid FILE.json")
    if args.pilot_runs < 5:
        raise UsageError("--pilot-runs must be at least 5")
    grids: dict[str, list[dict[str, Any]]] = {}
    try:
        given = search.load_grid_file(grid_file) if grid_file else (search.parse_items(items) if items else None)
        for spec in specs:
            points = search.expand(given if given is not None else search.default_grid(spec.impl))
            search.check_grid(spec.impl, points)
            grids[spec.impl] = points
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return grids


def command_line() -> dict[str, str]:
    """The command that produced a JSON file, when this process is the ``dpcheck`` executable."""
    import shlex

    if Path(sys.argv[0]).name not in ("dpcheck", "__main__.py"):
        return {}
    return {"command": "dpcheck " + shlex.join(sys.argv[1:])}


def check_numbers(args: argparse.Namespace) -> None:
    """Values no audit can mean, and output files that would overwrite the store: refused before any run."""
    import math

    from dpcheck.audit.core import spec
    from dpcheck.audit.core.files import same_file

    one_run = getattr(args, "one_run", None) is not None
    try:
        spec.check_numbers(epsilon=args.epsilon, delta=args.delta, runs=None if one_run else args.runs,
                           synth_rows=args.synth_rows, seed=args.seed)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    timeout = getattr(args, "run_timeout", 600.0)
    if not (math.isfinite(timeout) and timeout >= 0):
        raise UsageError(f"--run-timeout must be a number of seconds ≥ 0 (0: no limit), got {timeout}")
    files = [("--store", args.store), ("--json", args.json_out), ("--plot", getattr(args, "plot", None))]
    files = [(flag, path) for flag, path in files if path]
    for i, (flag_a, a) in enumerate(files):
        for flag_b, b in files[i + 1:]:
            if same_file(a, b):
                raise UsageError(f"{flag_a} and {flag_b} name the same file ({b}): one would overwrite the other")


def write_outputs(args: argparse.Namespace, results: list) -> None:
    """--json and --plot; a full disk or a missing permission is one line, and no ``.tmp`` is left."""
    from dpcheck.audit.core.files import os_error_text
    from dpcheck.audit.runners import report

    for flag, path, write in (("--json", args.json_out, lambda p: report.write_json(results, p, extra=command_line())),
                              ("--plot", args.plot, lambda p: report.plot(results, p))):
        if not path:
            continue
        try:
            write(Path(path))
        except ImportError:
            raise UsageError("--plot needs matplotlib: pip install 'dpcheck[test]'") from None
        except OSError as exc:
            raise UsageError(f"cannot write {flag} {path}: {os_error_text(exc)} (the runs are stored: the same "
                             "command reuses them)") from None


def run(args: argparse.Namespace) -> int:
    from dpcheck.audit.core.progress import RichProgress, TextProgress
    from dpcheck.audit.core.store import Store, StoreError
    from dpcheck.audit.core.workers import WorkerError
    from dpcheck.audit.runners import report
    from dpcheck.audit.runners.crafting import is_craft, resolve_craft
    from dpcheck.audit.runners.engine import AuditRunError, run_audit
    from dpcheck.audit.runners.executor import make_executor
    from dpcheck.audit.runners.targets import resolve_target

    check_numbers(args)
    if getattr(args, "one_run", None) is not None and (getattr(args, "search", None) is not None
                                                       or getattr(args, "search_grid", None)):
        raise UsageError("--search runs R-run audits; it cannot be combined with --one-run")
    if getattr(args, "one_run", None) is not None:
        from dpcheck.audit.runners.onerun import run_cli

        return run_cli(args)
    if args.scheduler and args.cluster:
        raise UsageError("use either --scheduler or --cluster, not both")
    if args.workers < 1:
        raise UsageError("--workers must be at least 1")
    specs = build_specs(args)
    grids = search_grids(args, specs)
    try:
        checkpoints = [int(c) for c in args.checkpoints.split(",") if c.strip()]
    except ValueError:
        raise UsageError(f"--checkpoints expects integers like 100,250,500,1000, got {args.checkpoints!r}") from None
    try:
        store = Store(args.store)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    progress = TextProgress() if args.no_progress or not sys.stderr.isatty() else RichProgress()
    try:
        executor = make_executor(workers=args.workers, scheduler=args.scheduler, cluster=args.cluster,
                                 path=getattr(args, "run_path", None) or "auto",
                                 run_timeout=getattr(args, "run_timeout", 600.0) or None)
    except (RuntimeError, OSError, TimeoutError) as exc:
        store.close()
        raise UsageError(f"cannot start the executor: {exc}") from None
    results = []
    try:
        for spec in specs:
            try:
                if is_craft(spec.target):  # a canary crafted from the public domain (dpcheck.audit.runners.crafting)
                    spec, choice = resolve_craft(spec, store=store, executor=executor, progress=progress,
                                                 candidates_count=args.candidates, mini_runs=args.mini_runs)
                else:
                    spec, choice = resolve_target(spec, store=store, executor=executor, progress=progress,
                                                  candidates=args.candidates, mini_runs=args.mini_runs)
                if grids is not None:
                    from dpcheck.audit.runners.search import run_search

                    results.append(run_search(spec, grids[spec.impl], store=store, executor=executor,
                                              progress=progress, pilot_runs=args.pilot_runs,
                                              until_verdict=args.until_verdict, checkpoints=checkpoints))
                    continue
                results.append(run_audit(spec, store=store, executor=executor, progress=progress,
                                         until_verdict=args.until_verdict, checkpoints=checkpoints))
                if choice.get("method") in ("vulnerable-record", "crafted"):
                    results[-1].target_selection = choice
            except (AuditRunError, StoreError, ValueError, WorkerError) as exc:
                raise UsageError(str(exc)) from None
    finally:
        progress.end()
        executor.close()
        store.close()
    report.print_table(results)
    for r in results:
        if r.search:
            best = r.search["pilot"][r.search["chosen_index"]]
            print(f"search {r.impl}: chose {r.search['chosen']} of {len(r.search['grid'])} grid points "
                  f"(pilot CV AUC {best['cv_auc']:.3f}, {r.search['pilot_runs']} pilot runs "
                  "per world, not in the bound)")
    write_outputs(args, results)
    leaks = any(r.violation or (r.output_size or {}).get("reveals_input_size") for r in results)
    return EXIT_FINDINGS if leaks else EXIT_OK
