"""Real-code benchmark: dpcheck on pinned DP libraries, every finding labelled by a reviewer.

    .venv/bin/python benchmarks/real_code.py                 # fetch (once), scan, labels, speed vs Bandit
    .venv/bin/python benchmarks/real_code.py --check         # exit 1: unlabelled finding, FP/100k > 1, lost TP
    .venv/bin/python benchmarks/real_code.py --no-speed      # findings and labels only (one dpcheck run)
    .venv/bin/python benchmarks/real_code.py --stub new.json # write label stubs for unlabelled findings
    .venv/bin/python benchmarks/real_code.py --gate-check    # same findings with the ast gate on and off?

Wheels are fetched with ``pip download --no-deps`` (never installed) and unpacked to
``--cache-dir`` (default ``~/.cache/dpcheck-bench/real_code``); an unpacked package is reused, so
a second run needs no network. Labels live in ``benchmarks/real_code_labels.json``: one entry per
finding, matched on package + path + rule + the stripped source line, the line number only
breaking ties, so a label survives small line shifts. dpcheck runs as one process (``--jobs 1``,
no cache); Bandit runs on the same files in the same run. "DP-dense" is the part of the corpus
whose text mentions epsilon/ε/noise/privacy (a definition that does not depend on dpcheck's own
prefilters). See docs/real_code.md.
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DEFAULT_CACHE = Path.home() / ".cache" / "dpcheck-bench" / "real_code"
DEFAULT_LABELS = REPO / "benchmarks" / "real_code_labels.json"
LABELS = ("tp", "acceptable", "fp")
FP_TARGET_PER_100K = 1.0
SPEED_TARGET = 1.5
SKIPPED_DIRS = {"__pycache__", "build", "dist", ".git"}


@dataclass(frozen=True)
class Dist:
    name: str
    version: str
    required: bool = True
    #: published as a source archive only (no wheel on PyPI)
    sdist: bool = False

    @property
    def folder(self) -> str:
        return f"{self.name}-{self.version}"


CORPUS: tuple[Dist, ...] = (
    Dist("opacus", "1.6.0"),
    Dist("diffprivlib", "0.6.6"),
    Dist("pipeline-dp", "0.3.1"),
    Dist("tmlt-core", "0.20.0"),
    Dist("prv-accountant", "0.2.0"),
    Dist("smartnoise-synth", "1.0.8", required=False),
    Dist("dpmm", "0.1.9", required=False),
    Dist("synthcity", "0.2.12", required=False),
    Dist("dp-cgans", "0.3.0", required=False),
    Dist("dp-accounting", "0.6.0", required=False),
    Dist("tensorflow-privacy", "0.9.0", required=False),
    # held out: scanned once with the rules frozen, findings labelled, then added (docs/real_code.md)
    Dist("autodp", "0.2.3.1", required=False, sdist=True),
    Dist("DataSynthesizer", "0.1.13", required=False),
    Dist("smartnoise-sql", "1.0.10", required=False),
    Dist("ydata-synthetic", "2.0.1", required=False),
    Dist("gretel-synthetics", "0.22.20", required=False),
    Dist("flwr", "1.42.0", required=False),
    Dist("opendp", "0.16.0", required=False),
    Dist("jax-privacy", "2.0.0", required=False),
    Dist("mbi", "2.0.0", required=False),
    Dist("dp-transformers", "1.0.0", required=False),
    Dist("pyvacy", "0.0.32", required=False, sdist=True),
    Dist("fedml", "0.9.6", required=False),
    Dist("secretflow", "1.14.0b0", required=False),
    Dist("nvflare", "2.9.0", required=False),
    Dist("tmlt-analytics", "0.21.0", required=False),
    Dist("python-dp", "1.1.5", required=False),
    Dist("privacy-meter", "1.0.1", required=False),
    Dist("mostlyai-engine", "2.7.3", required=False),
    Dist("smartnoise-eval", "0.3.1", required=False),
    # held out, third batch: small DP packages (docs/real_code.md)
    Dist("benchmarkdpfair", "0.2.7", required=False),
    Dist("binomialdpy", "0.1.5", required=False, sdist=True),
    Dist("correlated-noise-mechanism", "0.4.0", required=False),
    Dist("deepee", "0.1.9", required=False),
    Dist("diff-priv-laplace-python", "1.0.5", required=False, sdist=True),
    Dist("differential-privacy", "0.1.0", required=False, sdist=True),
    Dist("DiffPriv", "1.0.3", required=False),
    Dist("diffpriv-pure", "0.1.0", required=False),
    Dist("dp-accelerator", "0.1.0", required=False),
    Dist("dp-epidemiology", "0.1.1", required=False),
    Dist("dp-group-stats", "0.1.2", required=False),
    Dist("dp-lora", "0.1.0", required=False),
    Dist("dp-mobility-report", "0.2.11", required=False, sdist=True),
    Dist("dp-wizard", "0.10.0", required=False),
    Dist("dp4gp", "1.01", required=False, sdist=True),
    Dist("dpart", "0.1.2", required=False),
    Dist("dpcrpy", "1.0.0", required=False, sdist=True),
    Dist("dplab", "0.0.7", required=False),
    Dist("dpsprt", "1.2.0", required=False),
    Dist("dptrainer", "0.1.2", required=False),
    Dist("dwork", "0.0.13", required=False, sdist=True),
    Dist("easy-dp", "0.1.0", required=False),
    Dist("forgetnet", "0.1.21", required=False),
    Dist("fourier-accountant", "0.12.11", required=False),
    Dist("gdpnum", "0.1.2", required=False),
    Dist("inf-tda", "0.1", required=False),
    Dist("ldp-toolbox", "0.1.3", required=False),
    Dist("LPDT", "0.0.2", required=False),
    # held out, fourth batch: scanned with the rules of b76244d (docs/real_code.md)
    Dist("mic-dp", "0.3", required=False),
    Dist("mldp-text", "0.1.2", required=False),
    Dist("multi-freq-ldpy", "0.2.5", required=False, sdist=True),
    Dist("nhssynth", "0.10.2", required=False),
    Dist("nprr", "0.1.4", required=False),
    Dist("opake", "0.16.1", required=False),
    Dist("opake-accounting", "0.16.1", required=False),
    Dist("opake-dpsgd", "0.16.1", required=False),
    Dist("ornl-presto", "0.1.29", required=False),
    Dist("pld-accountant", "0.12.1", required=False),
    Dist("privadjust", "1.0.13", required=False),
    Dist("privateAB", "0.0.2", required=False),
    Dist("privfill", "0.1.0", required=False),
    Dist("privjail", "0.1.2", required=False),
    Dist("privsyn-core", "0.1.1", required=False),
    Dist("pypantera", "1.0.2", required=False),
    Dist("pytorch-dp", "0.1b1", required=False),
    Dist("random-allocation", "1.0.5", required=False),
    Dist("riskcal", "1.5.1", required=False, sdist=True),
    Dist("syndp", "0.5.2", required=False, sdist=True),
    Dist("synthhub", "0.1.0.post1", required=False),
    Dist("synthpriv", "0.2.1", required=False),
    Dist("tmlt-private-pgm", "0.1.1a2", required=False),
    Dist("trasgodp", "2.1.0", required=False),
)


@dataclass(frozen=True)
class Hit:
    """One dpcheck finding, located inside an unpacked package."""

    package: str
    path: str
    line: int
    rule: str
    snippet: str
    message: str
    category: str = ""
    col: int = 0

    def where(self) -> str:
        return f"{self.package}/{self.path}:{self.line}"


@dataclass
class Label:
    package: str
    path: str
    line: int
    rule: str
    snippet: str
    label: str
    reason: str
    col: int = 0

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> "Label":
        label = str(data["label"])
        if label not in LABELS:
            raise ValueError(f"label must be one of {LABELS}, got {label!r} in {data}")
        return cls(str(data["package"]), str(data["path"]), int(data["line"]),  # type: ignore[call-overload]
                   str(data["rule"]), str(data.get("snippet", "")), label, str(data.get("reason", "")),
                   int(data.get("col", 0)))  # type: ignore[call-overload]

    def key(self) -> tuple[str, str, str, str]:
        return (self.package, self.path, self.rule, self.snippet)


@dataclass
class Matching:
    labelled: list[tuple[Hit, Label]] = field(default_factory=list)
    unlabelled: list[Hit] = field(default_factory=list)
    stale: list[Label] = field(default_factory=list)


# --------------------------------------------------------------------------- corpus

def fetch(dists: Sequence[Dist], cache_dir: Path) -> dict[str, Path]:
    """Unpacked folder per package name; downloads only what the cache lacks."""
    out: dict[str, Path] = {}
    for dist in dists:
        target = cache_dir / dist.folder
        if not (target / ".complete").exists():
            try:
                unpack(download(dist, cache_dir / "wheels"), target)
            except (subprocess.CalledProcessError, OSError, zipfile.BadZipFile, tarfile.TarError) as exc:
                if dist.required:
                    raise SystemExit(f"cannot fetch {dist.folder}: {exc}") from exc
                print(f"note: optional {dist.folder} not available ({exc}); skipped", file=sys.stderr)
                continue
        out[dist.name] = target
    return out


def download(dist: Dist, wheel_dir: Path) -> Path:
    wheel_dir.mkdir(parents=True, exist_ok=True)
    pattern = "*.tar.gz" if dist.sdist else "*.whl"
    stems = {n.lower() + "-" + dist.version + ("" if dist.sdist else "-")
             for n in (dist.name, dist.name.replace("-", "_"))}

    def saved() -> list[Path]:
        return [p for p in wheel_dir.glob(pattern)
                if any(p.name.lower().startswith(s) for s in stems)
                and (not dist.sdist or p.name.lower().endswith(dist.version + ".tar.gz"))]

    found = saved()
    if not found:
        binary = ["--no-binary", ":all:"] if dist.sdist else ["--only-binary", ":all:"]
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", *binary, "--quiet",
             "-d", str(wheel_dir), f"{dist.name}=={dist.version}"],
            check=True,
        )
        found = saved()
    if not found:
        raise OSError(f"pip saved no {pattern} for {dist.name} {dist.version} in {wheel_dir}")
    return found[0]


def unpack(archive: Path, target: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    if archive.name.endswith(".tar.gz"):
        with tarfile.open(archive) as tf:
            tf.extractall(tmp, filter="data")
        tops = list(tmp.iterdir())
        if len(tops) == 1 and tops[0].is_dir():  # an sdist holds one top folder, name-version/
            for child in list(tops[0].iterdir()):
                child.rename(tmp / child.name)
            tops[0].rmdir()
    else:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(tmp)
    (tmp / ".complete").write_text(archive.name + "\n")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)


def corpus_from_dir(folder: Path) -> dict[str, Path]:
    """Every sub-folder of ``folder`` is one package (used by tests and for ad-hoc corpora)."""
    return {p.name: p for p in sorted(folder.iterdir()) if p.is_dir()}


def python_files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*.py")
        if p.is_file() and not SKIPPED_DIRS.intersection(p.relative_to(root).parts)
    )


def nonblank_lines(path: Path) -> int:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    return sum(1 for line in text.splitlines() if line.strip())


#: what makes a file "DP-dense": it mentions the privacy budget, noise or privacy (any case)
DP_DENSE_TEXT = re.compile(r"epsilon|ε|noise|privacy", re.IGNORECASE)


def dp_dense(files: Iterable[Path]) -> list[Path]:
    """Files whose text mentions epsilon/ε/noise/privacy: the DP code of the corpus, chosen
    without asking dpcheck (whose prefilters decide what it parses)."""
    return [p for p in files if DP_DENSE_TEXT.search(p.read_text(encoding="utf-8", errors="replace"))]


# --------------------------------------------------------------------------- scanning

@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float  # user + system seconds of the process (robust to other load on a shared machine)


def timed(cmd: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[Timing, int, str, str]:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(cmd), cwd=cwd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        return (Timing(wall, usage.ru_utime + usage.ru_stime), os.waitstatus_to_exitcode(status),
                out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"))


@dataclass(frozen=True)
class Dpcheck:
    """How dpcheck is run: which package (``path``: a folder holding another ``dpcheck``, e.g. a
    snapshot of another commit; None = the installed one) and which rules (``select``)."""

    path: Path | None = None
    select: str = ""


_ROOTS: dict[Path, Path] = {}


def package_root(path: Path) -> Path:
    """A folder to put on ``PYTHONPATH`` so that ``dpcheck`` *and* ``dpcheck.rules`` come from
    ``path``. A snapshot (``dpcheck/rules`` inside) is used as it is; a checkout or worktree keeps
    its rules in a top-level ``rules/``, which the editable install maps from the live repository,
    so it is given a private folder of links whose ``dpcheck/rules`` is the checkout's."""
    path = path.resolve()
    if path in _ROOTS:
        return _ROOTS[path]
    if not (path / "dpcheck" / "__init__.py").is_file():
        raise SystemExit(f"--dpcheck-path {path}: no dpcheck package there")
    root = path
    if not (path / "dpcheck" / "rules").is_dir():
        if not (path / "rules").is_dir():
            raise SystemExit(f"--dpcheck-path {path}: no rules/ beside its dpcheck package")
        root = Path(tempfile.mkdtemp(prefix="dpcheck-path-"))
        atexit.register(shutil.rmtree, root, True)  # links only: the checkout is never touched
        (root / "dpcheck").mkdir()
        for entry in (path / "dpcheck").iterdir():
            if entry.name != "__pycache__":
                (root / "dpcheck" / entry.name).symlink_to(entry)
        for sub in ("rules", "vendored_impls", "property_tests"):
            if (path / sub).is_dir():
                (root / "dpcheck" / sub).symlink_to(path / sub)
    probe = subprocess.run([sys.executable, "-c", "import importlib.util as u; print(u.find_spec('dpcheck.rules').origin)"],
                           env=dict(os.environ, PYTHONPATH=str(root)), capture_output=True, text=True, cwd=root)
    if not probe.stdout.strip().startswith(str(root)):
        raise SystemExit(f"--dpcheck-path {path}: dpcheck.rules resolves to {probe.stdout.strip() or probe.stderr[-300:]!r}, "
                         f"not {root}")
    _ROOTS[path] = root
    return root


def run_dpcheck(paths: Sequence[Path], cwd: Path, tool: Dpcheck = Dpcheck(),
                extra_env: dict[str, str] | None = None) -> tuple[dict[str, object], Timing]:
    """The JSON report of one ``dpcheck scan --jobs 1 --no-cache`` process, and its times."""
    env = dict(os.environ, **(extra_env or {}))
    if tool.path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(package_root(tool.path)), env.get("PYTHONPATH")]))
    cmd = [sys.executable, "-m", "dpcheck", "scan", "--format", "json", "--no-cache", "--jobs", "1",
           "--exit-zero", *(["--select", tool.select] if tool.select else []),
           *(os.path.relpath(p, cwd) for p in paths)]
    timing, code, stdout, stderr = timed(cmd, cwd, env)
    if code not in (0, 2) or not stdout.strip():
        raise SystemExit(f"dpcheck failed ({code}): {stderr[-2000:]}")
    report = json.loads(stdout)
    if code == 2:
        print("warning: dpcheck reported an internal error (DP005); see the diagnostics below", file=sys.stderr)
    return report, timing


def run_bandit(paths: Sequence[Path], cwd: Path) -> Timing:
    bandit = BIN / "bandit"
    if not bandit.exists():
        raise SystemExit(f"bandit not found at {bandit}")
    cmd = [str(bandit), "-r", "-q", "-f", "json", *(os.path.relpath(p, cwd) for p in paths)]
    timing, code, _, stderr = timed(cmd, cwd)
    if code not in (0, 1):
        raise SystemExit(f"bandit failed ({code}): {stderr[-2000:]}")
    return timing


def hits_from_report(report: dict[str, object], roots: dict[str, Path], cwd: Path) -> tuple[list[Hit], list[dict]]:
    """Rule findings as :class:`Hit` (path relative to the package root) and the engine diagnostics."""
    by_folder = {os.path.relpath(root, cwd).replace(os.sep, "/"): name for name, root in roots.items()}
    hits, diagnostics = [], []
    for f in report["findings"]:  # type: ignore[union-attr]
        if f.get("category") == "diagnostic" or f["rule"].startswith("DP0"):
            diagnostics.append(f)
            continue
        path = f["path"]
        if os.path.isabs(path):
            path = os.path.relpath(path, cwd).replace(os.sep, "/")
        folder, _, rel = path.partition("/")
        package = by_folder.get(folder, folder)
        hits.append(Hit(package, rel, f["span"]["start"]["line"], f["rule"], f.get("snippet", "").strip(),
                        f.get("message", ""), f.get("category", ""), f["span"]["start"].get("column", 0)))
    return hits, diagnostics


# --------------------------------------------------------------------------- labels

def load_labels(path: Path) -> list[Label]:
    if not path.exists():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    entries = data["labels"] if isinstance(data, dict) else data
    return [Label.from_dict(e) for e in entries]


def match(hits: Sequence[Hit], labels: Sequence[Label]) -> Matching:
    """Pair each finding with one label of the same package, path, rule and source line;
    among several such labels (the same line text twice in a file) the nearest line wins, then
    the nearest column (two findings of one rule on one line)."""
    pool: dict[tuple[str, str, str, str], list[Label]] = defaultdict(list)
    for label in labels:
        pool[label.key()].append(label)
    result = Matching()
    # closest pairs first, so one far-off duplicate cannot steal the label of an exact hit
    candidates = sorted(
        ((abs(label.line - hit.line), abs(label.col - hit.col), i, j)
         for i, hit in enumerate(hits)
         for j, label in enumerate(pool.get((hit.package, hit.path, hit.rule, hit.snippet), []))),
    )
    used_hits: set[int] = set()
    used_labels: set[int] = set()
    chosen: dict[int, Label] = {}
    for _, _, i, j in candidates:
        hit = hits[i]
        label = pool[(hit.package, hit.path, hit.rule, hit.snippet)][j]
        if i in used_hits or id(label) in used_labels:
            continue
        used_hits.add(i)
        used_labels.add(id(label))
        chosen[i] = label
    for i, hit in enumerate(hits):
        if i in chosen:
            result.labelled.append((hit, chosen[i]))
        else:
            result.unlabelled.append(hit)
    result.stale = [label for label in labels if id(label) not in used_labels]
    return result


def stubs(hits: Iterable[Hit]) -> list[dict[str, object]]:
    return [{"package": h.package, "path": h.path, "line": h.line, "col": h.col, "rule": h.rule,
             "snippet": h.snippet, "label": "?", "reason": "", "message": h.message} for h in hits]


def dump_labels(labels: Iterable[dict[str, object]]) -> str:
    """The labels file: one label per line, sorted, so reviews and diffs stay readable."""
    keys = ("package", "path", "line", "col", "rule", "snippet", "label", "reason")
    rows = sorted(({k: e[k] for k in keys if k in e} for e in labels),
                  key=lambda e: (e["package"], e["path"], e["line"], e.get("col", 0), e["rule"]))
    body = ",\n".join("  " + json.dumps(r, ensure_ascii=False) for r in rows)
    return '{"format": 1,\n "labels": [\n' + body + "\n]}\n"


# --------------------------------------------------------------------------- report

class PrecisionMixin:
    """Precision and false positives per 100k lines of a labelled scan (``tp``, ``fp``, ``lines``)."""

    tp: int
    fp: int
    lines: int

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def fp_per_100k(self) -> float:
        return 100_000 * self.fp / self.lines if self.lines else 0.0


@dataclass
class Summary(PrecisionMixin):
    lines: int
    tp: int
    acceptable: int
    fp: int
    unlabelled: int
    stale: int
    #: ``tp`` labels that no finding matches any more: a real bug the scan stopped reporting
    lost_tp: int = 0
    #: dpcheck reported an internal error (a rule crashed: its findings may be missing)
    crashed: bool = False

    def failures(self) -> list[str]:
        out = []
        if self.crashed:
            out.append("dpcheck reported an internal error (DP005)")
        if self.unlabelled:
            out.append(f"{self.unlabelled} unlabelled finding(s)")
        if self.lost_tp:
            out.append(f"{self.lost_tp} true positive(s) no longer found")
        if self.fp_per_100k > FP_TARGET_PER_100K:
            out.append(f"FP/100k = {self.fp_per_100k:.2f} > {FP_TARGET_PER_100K}")
        return out


def summarise(matching: Matching, lines: int, crashed: bool = False) -> Summary:
    counts = Counter(label.label for _, label in matching.labelled)
    lost = sum(label.label == "tp" for label in matching.stale)
    return Summary(lines, counts["tp"], counts["acceptable"], counts["fp"], len(matching.unlabelled),
                   len(matching.stale), lost, crashed)


def print_report(matching: Matching, summary: Summary, per_package_lines: dict[str, int]) -> None:
    print("\nCorpus (non-blank Python lines):")
    for name, n in per_package_lines.items():
        print(f"  {name:<18} {n:>9,}")
    print(f"  {'total':<18} {summary.lines:>9,}")

    table: dict[str, Counter[str]] = defaultdict(Counter)
    for hit, label in matching.labelled:
        table[hit.rule][label.label] += 1
    for hit in matching.unlabelled:
        table[hit.rule]["unlabelled"] += 1
    acknowledged: Counter[str] = Counter(
        hit.rule for hit in [h for h, _ in matching.labelled] + matching.unlabelled if hit.category == "acknowledged"
    )
    print(f"\n{'rule':<7} {'findings':>8} {'tp':>4} {'acc':>4} {'fp':>4} {'new':>4}  precision  "
          f"(ack = reported as category 'acknowledged')")
    for rule in sorted(table):
        c = table[rule]
        n = sum(c.values())
        prec = f"{c['tp'] / (c['tp'] + c['fp']):.2f}" if c["tp"] + c["fp"] else "-"
        print(f"{rule:<7} {n:>8} {c['tp']:>4} {c['acceptable']:>4} {c['fp']:>4} {c['unlabelled']:>4}  {prec:>9}"
              f"  ack {acknowledged[rule]}")
    total = len(matching.labelled) + len(matching.unlabelled)
    prec = f"{summary.precision:.2f}" if summary.precision is not None else "-"
    print(f"{'total':<7} {total:>8} {summary.tp:>4} {summary.acceptable:>4} {summary.fp:>4} "
          f"{summary.unlabelled:>4}  {prec:>9}  ack {sum(acknowledged.values())}")
    print(f"\nprecision TP/(TP+FP) = {prec}; FP per 100k lines = {summary.fp_per_100k:.2f} "
          f"(target ≤ {FP_TARGET_PER_100K})")

    accepted = [h for h, l in matching.labelled if l.label == "acceptable"]
    if accepted:
        n_ack = sum(h.category == "acknowledged" for h in accepted)
        print(f"acceptable findings reported as 'acknowledged': {n_ack} of {len(accepted)}")
    for hit, label in matching.labelled:
        if label.label == "tp" and hit.category == "acknowledged":
            print(f"  WARNING: true positive downgraded to 'acknowledged': {hit.rule} {hit.where()}")

    fps = [(h, l) for h, l in matching.labelled if l.label == "fp"]
    if fps:
        print("\nFalse positives:")
        for hit, label in fps:
            print(f"  {hit.rule} {hit.where()}: {label.reason}")
    if matching.unlabelled:
        print(f"\nUNLABELLED findings ({len(matching.unlabelled)}): label them in {DEFAULT_LABELS.name}")
        for hit in matching.unlabelled:
            print(f"  {hit.rule} {hit.where()}: {hit.snippet}\n      {hit.message[:200]}")
    lost = [label for label in matching.stale if label.label == "tp"]
    if lost:
        print(f"\nLOST true positives ({len(lost)}): labelled real bugs that no finding reports any more")
        for label in lost:
            print(f"  {label.rule} {label.package}/{label.path}:{label.line}: {label.reason}")
    if matching.stale:
        print(f"\nStale labels ({len(matching.stale)}): no current finding matches (rule fixed or code moved)")
        for label in matching.stale:
            print(f"  {label.rule} {label.package}/{label.path}:{label.line} [{label.label}] {label.snippet[:80]}")


def gate_check(paths: Sequence[Path], cwd: Path, tool: Dpcheck) -> bool:
    """Scan with the ast gate on and off (``DPCHECK_AST_GATE``); True when the findings are identical."""
    on, t_on = run_dpcheck(paths, cwd, tool, {"DPCHECK_AST_GATE": "1"})
    off, t_off = run_dpcheck(paths, cwd, tool, {"DPCHECK_AST_GATE": "0"})

    def keyed(report: dict[str, object]) -> list[str]:
        return sorted(json.dumps(f, sort_keys=True) for f in report["findings"])  # type: ignore[union-attr]

    a, b = keyed(on), keyed(off)
    parsed = (on.get("summary", {}).get("parsed"), off.get("summary", {}).get("parsed"))  # type: ignore[union-attr]
    print(f"\nGate check: {len(a)} findings with the ast gate, {len(b)} without; files parsed with libcst "
          f"{parsed[0]} vs {parsed[1]}; cpu {t_on.cpu:.1f}s vs {t_off.cpu:.1f}s")
    if a == b:
        print("  identical findings (every field, cross-module flow included)")
        return True
    for line in sorted(set(b) - set(a)):
        print(f"  LOST with the gate: {line[:300]}")
    for line in sorted(set(a) - set(b)):
        print(f"  ONLY with the gate: {line[:300]}")
    return False


def best(timings: Iterable[Timing]) -> Timing:
    ts = list(timings)
    return Timing(min(t.wall for t in ts), min(t.cpu for t in ts))


def speed(label: str, paths: Sequence[Path], cwd: Path, lines: int, repeat: int, tool: Dpcheck,
          first: Timing | None = None) -> None:
    """Alternate dpcheck and Bandit ``repeat`` times on the same files; keep each tool's best run."""
    d_runs = [first] if first is not None else []
    b_runs = []
    for i in range(repeat):
        if i or first is None:
            d_runs.append(run_dpcheck(paths, cwd, tool)[1])
        b_runs.append(run_bandit(paths, cwd))
    d, b = best(d_runs), best(b_runs)
    cpu_ratio, wall_ratio = b.cpu / d.cpu, b.wall / d.wall
    verdict = "meets" if cpu_ratio >= SPEED_TARGET else "below"
    print(f"  {label}: {lines:,} lines, {len(paths)} path(s)\n"
          f"    dpcheck  wall {d.wall:6.1f}s = {lines / d.wall:>8,.0f} lines/s   cpu {d.cpu:6.1f}s = "
          f"{lines / d.cpu:>8,.0f} lines/s\n"
          f"    bandit   wall {b.wall:6.1f}s = {lines / b.wall:>8,.0f} lines/s   cpu {b.cpu:6.1f}s = "
          f"{lines / b.cpu:>8,.0f} lines/s\n"
          f"    dpcheck/bandit: {cpu_ratio:.2f}× by CPU time ({verdict} the {SPEED_TARGET}× target), "
          f"{wall_ratio:.2f}× by wall clock")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help="where wheels are unpacked (reused)")
    p.add_argument("--corpus-dir", type=Path, help="scan every sub-folder of DIR as a package; no download")
    p.add_argument("--labels", type=Path, default=DEFAULT_LABELS)
    p.add_argument("--check", action="store_true",
                   help="exit 1 on an unlabelled finding, FP/100k above target, a lost true positive or a crash")
    p.add_argument("--no-speed", action="store_true", help="skip the Bandit comparison")
    p.add_argument("--repeat", type=int, default=1, help="timed runs per tool (best kept)")
    p.add_argument("--stub", type=Path, help="write label stubs for the unlabelled findings to this JSON file")
    p.add_argument("--select", default="", help="rule ids or prefixes passed to dpcheck (default: all)")
    p.add_argument("--gate-check", action="store_true",
                   help="also scan with the ast gate off (DPCHECK_AST_GATE=0); exit 1 if the findings differ")
    p.add_argument("--dpcheck-path", type=Path,
                   help="scan with the dpcheck package found in this folder (e.g. a snapshot of another commit)")
    args = p.parse_args(argv)
    tool = Dpcheck(args.dpcheck_path, args.select)

    if args.corpus_dir:
        roots, cwd = corpus_from_dir(args.corpus_dir), args.corpus_dir
    else:
        args.cache_dir.mkdir(parents=True, exist_ok=True)
        roots, cwd = fetch(CORPUS, args.cache_dir), args.cache_dir
    cwd = cwd.resolve()
    roots = {name: root.resolve() for name, root in roots.items()}
    files = {name: python_files(root) for name, root in roots.items()}
    per_package = {name: sum(nonblank_lines(f) for f in fs) for name, fs in files.items()}
    lines = sum(per_package.values())

    report, first = run_dpcheck(list(roots.values()), cwd, tool)
    hits, diagnostics = hits_from_report(report, roots, cwd)
    matching = match(hits, load_labels(args.labels))
    crashed = bool(report.get("summary", {}).get("internal_error")) or any(d["rule"] == "DP005" for d in diagnostics)
    summary = summarise(matching, lines, crashed)
    print_report(matching, summary, per_package)
    for d in diagnostics:
        print(f"  diagnostic {d['rule']} {d['path']}: {d.get('message', '')[:160]}")
    if args.stub:
        args.stub.write_text(json.dumps(stubs(matching.unlabelled), indent=1, ensure_ascii=False) + "\n")
        print(f"\nwrote {len(matching.unlabelled)} stub(s) to {args.stub}")

    gate_ok = gate_check(list(roots.values()), cwd, tool) if args.gate_check else True

    if not args.no_speed:
        print(f"\nThroughput (dpcheck scan --jobs 1 --no-cache vs bandit -r -q -f json; one process each, "
              f"start-up included; best of {args.repeat}, the two tools alternating; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores):")
        speed("whole corpus", list(roots.values()), cwd, lines, args.repeat, tool, first)
        dense = dp_dense(f for fs in files.values() for f in fs)
        speed("DP-dense part (files mentioning epsilon/ε/noise/privacy)", dense, cwd,
              sum(nonblank_lines(f) for f in dense), args.repeat, tool)

    if args.check and summary.failures():
        print("\nCHECK FAILED: " + "; ".join(summary.failures()))
        return 1
    if not gate_ok:
        print("\nGATE CHECK FAILED: the ast gate changes the findings")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
