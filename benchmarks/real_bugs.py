"""Recall benchmark: real privacy bugs found by reading public DP code, and what dpcheck reports there.

    .venv/bin/python benchmarks/real_bugs.py --check                  # rebuild, check labels, scan, score
    .venv/bin/python benchmarks/real_bugs.py --batch 1 --rules-at c8ebec1   # first look with frozen rules
    .venv/bin/python benchmarks/real_bugs.py --labels-only            # rebuild and check the bug labels only
    .venv/bin/python benchmarks/real_bugs.py --stub new.json          # label stubs for unlabelled findings
    .venv/bin/python benchmarks/real_bugs.py --available-only          # a partial run: sources without a mirror left out, listed

Manifests: ``benchmarks/real_bugs/batchN.json`` (schema in docs/real_bugs.md). GitHub sources are
rebuilt from the mirrors made by the ``fetch`` tool (``--mirrors``, default /work/.mirror: one
folder ``owner+name`` holding a git directory ``repo`` or ``repo/.git``), at the pinned commit;
only ``*.py`` files are extracted, so a snapshot's absent large data files do not matter. PyPI
sources reuse benchmarks/real_code.py's download and unpacking. A source that cannot be rebuilt
is an error naming it (exit 2); a bug label whose anchor is no longer within its lines, or a
finding without a label under ``--check``, fails the run (exit 1).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_code  # noqa: E402  (a sibling script, not a package)

REPO = Path(__file__).resolve().parents[1]
MANIFEST_DIR = REPO / "benchmarks" / "real_bugs"
DEFAULT_MIRRORS = Path("/work/.mirror")
DEFAULT_CACHE = Path.home() / ".cache" / "dpcheck-bench" / "real_bugs"
CLASSES = (
    "domain-from-private-data", "subsampling-assumed", "guarantee-without-noise",
    "sensitivity-not-enforced", "dpsgd-noise-mistake", "accountant-steps", "private-size-parameter",
    "accountant-formula", "noise-scale", "partition", "other",
)
#: a bug whose ``why`` starts with this is one of the PATE-GAN audit paper's 24 items (issue 21's 24/24 target)
PAPER_TAG = "[paper: "
AREAS = ("pate", "synthetic-data", "dp-sgd", "federated", "local-dp", "query-system", "library")
FINDING_LABELS = ("TP", "ACK", "FP")
#: a finding this many lines outside a bug's range still counts as finding it
SLACK = 2
#: engine diagnostics for a file no rule read (DP007: not analysed — a time or depth limit, or a statement
#: libcst cannot parse, whose message then names the lines; DP008: the process analysing it died)
UNREAD_RULES = {"DP000", "DP001", "DP002", "DP003", "DP006", "DP007", "DP008"}
_UNREAD_SPAN = re.compile(r"^lines (\d+)-(\d+) not analysed")
HEX40 = re.compile(r"^[0-9a-f]{40}$")
PYPI_SOURCE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9.!+_-]+)$")
GITHUB_SOURCE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


class SourceError(Exception):
    """A source that cannot be rebuilt (exit 2)."""


# --------------------------------------------------------------------------- manifest

@dataclass(frozen=True)
class Source:
    source: str
    kind: str
    area: str
    commit: str = ""
    paths: tuple[str, ...] = ()
    #: of the downloaded archive (pypi): a changed sdist or wheel is an error
    sha256: str = ""
    #: published as a source archive only (pypi)
    sdist: bool = False

    @property
    def folder(self) -> str:
        tag = self.commit[:12] if self.kind == "github" else "pypi"
        if self.kind == "github" and self.paths:  # only these folders are extracted
            tag += "-" + hashlib.sha1("\0".join(self.paths).encode()).hexdigest()[:8]
        return self.source.replace("/", "+").replace("==", "-") + "@" + tag


@dataclass(frozen=True)
class Bug:
    id: str
    source: str
    file: str
    lines: tuple[int, int]
    cls: str
    why: str
    static: bool
    anchor: str
    #: why the bug no longer counts (a reader showed the listed code keeps its guarantee); its
    #: anchor is still checked, and it is left out of every recall figure
    withdrawn: str = ""


@dataclass(frozen=True)
class FindingLabel:
    source: str
    file: str
    line: int
    rule: str
    label: str
    bug: str | None
    note: str
    #: a substring of the finding's message, for two findings of one rule on one line
    match: str = ""


@dataclass
class Manifest:
    batch: int
    path: Path
    sources: list[Source]
    bugs: list[Bug]
    findings: list[FindingLabel]
    #: no first look yet (``frozen_rules`` null): scanned only when named with ``--batch``, so a
    #: routine run during rule work never shows its findings to a rules developer
    held_out: bool = False


def schema_errors(data: object, where: str = "manifest") -> list[str]:
    """Everything wrong with one manifest's JSON, as readable sentences (empty when valid)."""
    if not isinstance(data, dict):
        return [f"{where}: not a JSON object"]
    errors: list[str] = []
    for key, kind in (("batch", int), ("description", str), ("sources", list), ("bugs", list), ("findings", list)):
        if not isinstance(data.get(key), kind):
            errors.append(f"{where}: '{key}' missing or not {kind.__name__}")
    if "frozen_rules" not in data or not isinstance(data["frozen_rules"], (str, type(None))):
        errors.append(f"{where}: 'frozen_rules' missing or not a commit (null while the batch is held out)")
    if errors:
        return errors
    names: set[str] = set()
    for i, s in enumerate(data["sources"]):
        w = f"{where} sources[{i}]"
        if not isinstance(s, dict) or not isinstance(s.get("source"), str):
            errors.append(f"{w}: needs a 'source' string")
            continue
        name, kind = s["source"], s.get("kind")
        if name in names:
            errors.append(f"{w}: {name} listed twice")
        names.add(name)
        if s.get("area") not in AREAS:
            errors.append(f"{w}: area {s.get('area')!r} not one of {AREAS}")
        if kind == "github":
            if not GITHUB_SOURCE.match(name):
                errors.append(f"{w}: {name!r} is not owner/name")
            if not HEX40.match(str(s.get("commit", ""))):
                errors.append(f"{w}: {name} needs a 40-hex 'commit'")
        elif kind == "pypi":
            if not PYPI_SOURCE.match(name):
                errors.append(f"{w}: {name!r} is not name==version")
        else:
            errors.append(f"{w}: kind {kind!r} is neither 'github' nor 'pypi'")
        paths = s.get("paths", [])
        if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
            errors.append(f"{w}: 'paths' must be a list of folder names")
    ids: set[str] = set()
    withdrawn: set[str] = set()
    for i, b in enumerate(data["bugs"]):
        w = f"{where} bugs[{i}]"
        if not isinstance(b, dict):
            errors.append(f"{w}: not an object")
            continue
        bid = b.get("id")
        if not isinstance(bid, str) or not bid:
            errors.append(f"{w}: needs an 'id'")
        elif bid in ids:
            errors.append(f"{w}: id {bid} used twice")
        ids.add(str(bid))
        if b.get("source") not in names:
            errors.append(f"{w}: source {b.get('source')!r} is not in 'sources'")
        if b.get("class") not in CLASSES:
            errors.append(f"{w}: class {b.get('class')!r} not one of {CLASSES}")
        lines = b.get("lines")
        if not (isinstance(lines, list) and len(lines) == 2 and all(isinstance(n, int) for n in lines)
                and 1 <= lines[0] <= lines[1]):
            errors.append(f"{w}: 'lines' must be [first, last] with 1 <= first <= last")
        for key in ("file", "why", "anchor"):
            if not isinstance(b.get(key), str) or not b.get(key):
                errors.append(f"{w}: '{key}' missing or empty")
        if isinstance(b.get("anchor"), str) and len(b["anchor"]) > 80:
            errors.append(f"{w}: anchor longer than 80 characters")
        if not isinstance(b.get("static"), bool):
            errors.append(f"{w}: 'static' must be true or false")
        if "withdrawn" in b and (not isinstance(b["withdrawn"], str) or not b["withdrawn"].strip()):
            errors.append(f"{w}: 'withdrawn' must say why")
        elif "withdrawn" in b:
            withdrawn.add(str(bid))
    for i, f in enumerate(data["findings"]):
        w = f"{where} findings[{i}]"
        if not isinstance(f, dict):
            errors.append(f"{w}: not an object")
            continue
        if f.get("source") not in names:
            errors.append(f"{w}: source {f.get('source')!r} is not in 'sources'")
        if f.get("label") not in FINDING_LABELS:
            errors.append(f"{w}: label {f.get('label')!r} not one of {FINDING_LABELS}")
        if not isinstance(f.get("line"), int) or not isinstance(f.get("rule"), str) \
                or not isinstance(f.get("file"), str):
            errors.append(f"{w}: needs 'file', 'line' and 'rule'")
        if f.get("bug") is not None and f.get("bug") not in ids:
            errors.append(f"{w}: bug {f.get('bug')!r} is not a bug id of this batch")
        elif f.get("bug") in withdrawn and f.get("label") != "FP":
            errors.append(f"{w}: labelled {f.get('label')} on withdrawn bug {f.get('bug')}")
        if not isinstance(f.get("match", ""), str):
            errors.append(f"{w}: 'match' must be a string")
    return errors


def parse_manifest(path: Path) -> Manifest:
    data = json.loads(path.read_text(encoding="utf-8"))
    errors = schema_errors(data, path.name)
    if errors:
        raise ValueError("; ".join(errors))
    sources = [Source(s["source"], s["kind"], s["area"], s.get("commit", ""), tuple(s.get("paths", [])),
                      s.get("sha256", ""), bool(s.get("sdist", False))) for s in data["sources"]]
    bugs = [Bug(b["id"], b["source"], b["file"], (b["lines"][0], b["lines"][1]), b["class"], b["why"],
                b["static"], b["anchor"], b.get("withdrawn", "")) for b in data["bugs"]]
    findings = [FindingLabel(f["source"], f["file"], f["line"], f["rule"], f["label"], f.get("bug"),
                             f.get("note", ""), f.get("match", "")) for f in data["findings"]]
    return Manifest(data["batch"], path, sources, bugs, findings, data["frozen_rules"] is None)


def load_manifests(folder: Path, batches: Sequence[int] = ()) -> list[Manifest]:
    found = sorted(folder.glob("batch*.json"), key=lambda p: int(re.sub(r"\D", "", p.stem) or 0))
    manifests = [parse_manifest(p) for p in found]
    if batches:
        manifests = [m for m in manifests if m.batch in batches]
        missing = set(batches) - {m.batch for m in manifests}
        if missing:
            raise SystemExit(f"no manifest for batch(es) {sorted(missing)} in {folder}")
        return manifests
    held = [m.batch for m in manifests if m.held_out]
    if held:
        print(f"held-out batch(es) {held} not scanned: name them with --batch for their first look",
              file=sys.stderr)
    return [m for m in manifests if not m.held_out]


# --------------------------------------------------------------------------- rebuilding sources

def mirror_git_dir(mirrors: Path, name: str) -> Path:
    base = mirrors / name.replace("/", "+")
    for candidate in (base / "repo" / ".git", base / "repo", base):
        if (candidate / "objects").is_dir() and (candidate / "HEAD").exists():
            return candidate
    raise SourceError(f"{name}: no mirror under {base} (run the fetch tool for github:{name})")


def git(git_dir: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True)


def git_batch(git_dir: Path, oids: Sequence[str]) -> list[bytes | None]:
    """The contents of these blobs (None for one the mirror lacks), from one ``git cat-file --batch``."""
    proc = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
                          input="".join(o + "\n" for o in oids).encode(), capture_output=True)
    out, pos = proc.stdout, 0
    contents: list[bytes | None] = []
    for _ in oids:
        end = out.index(b"\n", pos)
        header = out[pos:end].split(b" ")
        pos = end + 1
        if header[-1] == b"missing":
            contents.append(None)
            continue
        size = int(header[2])
        contents.append(out[pos:pos + size])
        pos += size + 1
    return contents


def materialise_github(source: Source, mirrors: Path, cache: Path) -> Path:
    """The ``*.py`` files of ``source.commit`` (under ``paths``), extracted once into the cache."""
    target = cache / source.folder
    if (target / ".complete").exists():
        return target
    git_dir = mirror_git_dir(mirrors, source.source)
    if git(git_dir, "cat-file", "-e", source.commit + "^{commit}").returncode:
        raise SourceError(f"{source.source}: commit {source.commit} is not in the mirror {git_dir}")
    listing = git(git_dir, "ls-tree", "-r", "-z", source.commit, "--", *source.paths)
    if listing.returncode:
        raise SourceError(f"{source.source}: cannot list {source.commit}: {listing.stderr.decode()[-300:]}")
    blobs: list[tuple[str, str]] = []  # (object id, path) of every *.py file
    for entry in listing.stdout.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, path = entry.partition("\t")
        if path.endswith(".py") and meta.split(" ")[1:2] == ["blob"]:
            blobs.append((meta.split(" ")[2], path))
    if not blobs:
        raise SourceError(f"{source.source}@{source.commit}: no Python files under {list(source.paths) or '/'}")
    # one blob at a time (not ``git archive``): a snapshot lacks its large data files, and
    # ``git archive`` fails on those even when they are not asked for
    contents = git_batch(git_dir, [oid for oid, _ in blobs])
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=source.folder + ".", dir=cache))
    try:
        for (oid, path), data in zip(blobs, contents):
            if data is None:
                raise SourceError(f"{source.source}@{source.commit}: {path} ({oid}) is missing from the mirror")
            out = tmp / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
        (tmp / ".complete").write_text(f"{source.source} {source.commit}\n")
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def materialise_pypi(source: Source, cache: Path) -> Path:
    m = PYPI_SOURCE.match(source.source)
    assert m is not None
    dist = real_code.Dist(m.group(1), m.group(2), required=True, sdist=source.sdist)
    target = cache / source.folder
    try:
        if not (target / ".complete").exists():
            archive = real_code.download(dist, cache / "archives")
            check_sha(source, archive)
            real_code.unpack(archive, target)
        else:
            check_sha(source, cache / "archives" / (target / ".complete").read_text().strip())
    except (subprocess.CalledProcessError, OSError, zipfile.BadZipFile, tarfile.TarError) as exc:
        raise SourceError(f"{source.source}: cannot download or unpack ({exc})") from exc
    return target


def check_sha(source: Source, archive: Path) -> None:
    want = source.sha256
    if not want:
        return
    if not archive.exists():
        raise SourceError(f"{source.source}: archive {archive.name} missing from the cache")
    got = hashlib.sha256(archive.read_bytes()).hexdigest()
    if got != want:
        raise SourceError(f"{source.source}: {archive.name} changed (sha256 {got[:16]}…, manifest {want[:16]}…)")


def materialise(source: Source, mirrors: Path, cache: Path) -> Path:
    if source.kind == "github":
        return materialise_github(source, mirrors, cache)
    return materialise_pypi(source, cache)


# --------------------------------------------------------------------------- label check

def check_bug(bug: Bug, root: Path) -> str | None:
    """Why the label no longer holds, or None."""
    path = root / bug.file
    if not path.is_file():
        return f"{bug.id}: {bug.source}/{bug.file} does not exist"
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    first, last = bug.lines
    if last > len(lines):
        return f"{bug.id}: lines {first}-{last} past the end of {bug.file} ({len(lines)} lines)"
    if bug.anchor not in "\n".join(lines[first - 1:last]):
        return f"{bug.id}: anchor {bug.anchor!r} not within {bug.file}:{first}-{last}"
    return None


# --------------------------------------------------------------------------- scanning

@dataclass(frozen=True)
class Finding:
    source: str
    file: str
    line: int
    rule: str
    category: str
    message: str


@dataclass
class Scan:
    findings: list[Finding] = field(default_factory=list)
    #: file -> (diagnostic rule, non-blank lines) for files no rule read
    unread: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    lines: int = 0
    crashed: list[str] = field(default_factory=list)


def scan_roots(source: Source, root: Path) -> list[Path]:
    roots = [root / p for p in source.paths] if source.paths else [root]
    missing = [str(p) for p in roots if not p.exists()]
    if missing:
        raise SourceError(f"{source.source}: paths {missing} not in the rebuilt source")
    return roots


def scan_source(source: Source, root: Path, tool: real_code.Dpcheck) -> Scan:
    roots = scan_roots(source, root)
    report, _ = real_code.run_dpcheck(roots, root, tool)
    out = Scan(lines=sum(real_code.nonblank_lines(f) for r in roots for f in
                         ([r] if r.is_file() else real_code.python_files(r))))
    for f in report["findings"]:  # type: ignore[union-attr]
        rel = os.path.relpath(os.path.join(root, f["path"]), root).replace(os.sep, "/")
        if f["rule"] in UNREAD_RULES:
            whole = real_code.nonblank_lines(root / rel)
            span = _UNREAD_SPAN.match(f.get("message", ""))
            before = out.unread.get((source.source, rel), (f["rule"], 0))[1]
            n = min(whole, before + int(span[2]) - int(span[1]) + 1) if span else whole
            out.unread[(source.source, rel)] = (f["rule"], n)
        elif f["rule"] == "DP005":
            out.crashed.append(f"{source.source}/{rel}: {f.get('message', '')[:160]}")
        elif not f["rule"].startswith("DP0"):
            out.findings.append(Finding(source.source, rel, f["span"]["start"]["line"], f["rule"],
                                        f.get("category", ""), f.get("message", "")))
    return out


def frozen_rules(rev: str, cache: Path) -> Path:
    """A folder whose ``dpcheck`` package holds the rules of ``rev`` (``dpcheck.rules`` a link to
    that tree's rules/), so the editable install's mapping cannot slip the live rules/ in."""
    cache = cache.resolve()  # the import probe below runs in another working directory
    sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", rev + "^{commit}"],
                         capture_output=True, text=True)
    if sha.returncode:
        raise SourceError(f"--rules-at {rev}: not a commit of {REPO}")
    target = cache / f"dpcheck@{sha.stdout.strip()[:12]}"
    if not (target / ".complete").exists():
        _build_snapshot(sha.stdout.strip(), rev, target)
    probe = subprocess.run([sys.executable, "-c", "import importlib.util as u; "
                            "print(u.find_spec('dpcheck.rules').origin)"],
                           env=dict(os.environ, PYTHONPATH=str(target)), capture_output=True, text=True,
                           cwd=cache)  # not the repository: its own dpcheck/ would shadow the snapshot
    if not probe.stdout.strip().startswith(str(target)):
        raise SourceError(f"--rules-at {rev}: dpcheck.rules resolves to {probe.stdout.strip()!r}, not the snapshot")
    return target


def _build_snapshot(sha: str, rev: str, target: Path) -> None:
    """Extract ``sha`` into a private folder and rename it into place, so that two runs building
    the same snapshot at once neither collide nor use a half-built one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f"{target.name}.building-", dir=target.parent))
    try:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", sha, "dpcheck", "rules",
                                  "vendored_impls", "property_tests"], capture_output=True)
        if archive.returncode:
            raise SourceError(f"--rules-at {rev}: git archive failed: {archive.stderr.decode()[-300:]}")
        subprocess.run(["tar", "-x", "-C", str(building)], input=archive.stdout, check=True)
        for sub in ("rules", "vendored_impls", "property_tests"):
            (building / "dpcheck" / sub).symlink_to(Path("..") / sub)
        (building / ".complete").write_text(sha + "\n")
        if (target / ".complete").exists():
            return  # another run finished it first
        shutil.rmtree(target, ignore_errors=True)  # a snapshot left incomplete by an interrupted run
        try:
            building.rename(target)
        except OSError:
            if not (target / ".complete").exists():
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)


# --------------------------------------------------------------------------- scoring

def found_by(bug: Bug, findings: Iterable[Finding]) -> list[Finding]:
    first, last = bug.lines
    return [f for f in findings if f.source == bug.source and f.file == bug.file
            and first - SLACK <= f.line <= last + SLACK]


@dataclass
class Score:
    bugs: int = 0
    found: int = 0

    @property
    def recall(self) -> float | None:
        return self.found / self.bugs if self.bugs else None

    def text(self) -> str:
        r = self.recall
        return f"{self.found:>3}/{self.bugs:<3} {'-' if r is None else f'{r:5.0%}'}"


@dataclass
class Result(real_code.PrecisionMixin):
    per_class: dict[str, Score]
    per_source: dict[str, Score]
    static: Score
    all: Score
    paper: Score
    tp: int
    ack: int
    fp: int
    unlabelled: list[Finding]
    lines: int
    unread: dict[str, int]
    missed: list[str]
    false_positives: list[Finding] = field(default_factory=list)
    withdrawn: list[Bug] = field(default_factory=list)
    #: static bugs found by a finding labelled with that bug's id (or not labelled yet): a finding
    #: its reader tied to another bug, or to none listed, finds the bug only by where it lies
    static_linked: Score = field(default_factory=Score)

    def as_json(self) -> dict[str, object]:
        def score(s: Score) -> dict[str, object]:
            return {"bugs": s.bugs, "found": s.found, "recall": s.recall}
        return {"per_class": {k: score(v) for k, v in self.per_class.items()},
                "per_source": {k: score(v) for k, v in self.per_source.items()},
                "static": score(self.static), "static_linked": score(self.static_linked),
                "all": score(self.all), "paper": score(self.paper),
                "findings": {"TP": self.tp, "ACK": self.ack, "FP": self.fp, "unlabelled": len(self.unlabelled)},
                "precision": self.precision, "fp_per_100k": self.fp_per_100k, "lines": self.lines,
                "unread_lines": sum(self.unread.values()), "unread_files": self.unread,
                "unlabelled": [asdict(f) for f in self.unlabelled], "missed": self.missed,
                "withdrawn": {b.id: b.withdrawn for b in self.withdrawn},
                "false_positives": [f"{f.rule} {f.source}/{f.file}:{f.line}" for f in self.false_positives]}


def label_key(source: str, file: str, line: int, rule: str) -> tuple[str, str, int, str]:
    return (source, file, line, rule)


def label_for(finding: Finding, candidates: Sequence[FindingLabel]) -> FindingLabel | None:
    """The label whose ``match`` occurs in the finding's message; else the last one without a ``match``."""
    matched = [l for l in candidates if l.match and l.match in finding.message]
    if matched:
        return matched[-1]
    plain = [l for l in candidates if not l.match]
    return plain[-1] if plain else None


def score(bugs: Sequence[Bug], findings: Sequence[Finding], labels: Sequence[FindingLabel], lines: int,
          unread: dict[str, int] | None = None) -> Result:
    per_class: dict[str, Score] = {c: Score() for c in CLASSES}
    per_source: dict[str, Score] = defaultdict(Score)
    static, every, paper = Score(), Score(), Score()
    by_key: dict[tuple[str, str, int, str], list[FindingLabel]] = defaultdict(list)
    for l in labels:
        by_key[label_key(l.source, l.file, l.line, l.rule)].append(l)

    def label_of(f: Finding) -> FindingLabel | None:
        return label_for(f, by_key.get(label_key(f.source, f.file, f.line, f.rule), []))

    def verdict(f: Finding) -> str | None:
        label = label_of(f)
        return None if label is None else label.label

    missed = []
    linked = Score()
    for bug in (b for b in bugs if not b.withdrawn):
        near = found_by(bug, findings)
        # a finding its reader judged false (its claim is wrong at that line) finds nothing
        hit = any(verdict(f) != "FP" for f in near)
        if bug.static:
            linked.bugs += 1
            linked.found += any((lab := label_of(f)) is None or (lab.label != "FP" and lab.bug == bug.id) for f in near)
        for s in (per_class[bug.cls], per_source[bug.source], every, *((static,) if bug.static else ()),
                  *((paper,) if bug.why.startswith(PAPER_TAG) else ())):
            s.bugs += 1
            s.found += hit
        if not hit:
            missed.append(bug.id)
    counts: Counter[str] = Counter()
    unlabelled, false_positives = [], []
    for f in findings:
        label = label_for(f, by_key.get(label_key(f.source, f.file, f.line, f.rule), []))
        if label is None:
            unlabelled.append(f)
        else:
            counts[label.label] += 1
            if label.label == "FP":
                false_positives.append(f)
    return Result({c: s for c, s in per_class.items() if s.bugs}, dict(per_source), static, every, paper,
                  counts["TP"], counts["ACK"], counts["FP"], unlabelled, lines, dict(unread or {}), missed,
                  false_positives, [b for b in bugs if b.withdrawn], linked)


def print_result(result: Result, title: str) -> None:
    print(f"\n== {title}")
    print("recall per class (bug found = a finding not labelled FP in its file within its lines ±2):")
    for cls, s in sorted(result.per_class.items()):
        print(f"  {cls:<26} {s.text()}")
    print("recall per source:")
    for src, s in sorted(result.per_source.items()):
        print(f"  {src:<48} {s.text()}")
    print(f"recall, static bugs: {result.static.text()}    all bugs: {result.all.text()}"
          + (f"    the audit paper's items: {result.paper.text()}" if result.paper.bugs else ""))
    print(f"  static bugs found by a finding labelled with that bug (not only by where it lies): "
          f"{result.static_linked.text()}")
    prec = "-" if result.precision is None else f"{result.precision:.2f}"
    print(f"findings: {result.tp} TP, {result.ack} ACK, {result.fp} FP, {len(result.unlabelled)} unlabelled; "
          f"precision TP/(TP+FP) = {prec}; FP per 100k non-blank lines = {result.fp_per_100k:.2f} "
          f"({result.lines:,} lines)")
    print(f"lines no rule read: {sum(result.unread.values()):,} in {len(result.unread)} file(s)")
    for path, n in sorted(result.unread.items()):
        print(f"  {n:>6}  {path}")
    for f in result.false_positives:
        print(f"  FP {f.rule} {f.source}/{f.file}:{f.line}")
    if result.missed:
        print("missed bugs: " + ", ".join(result.missed))
    for b in result.withdrawn:
        print(f"withdrawn (not counted): {b.id}: {b.withdrawn}")
    for f in result.unlabelled:
        print(f"  UNLABELLED {f.rule} {f.source}/{f.file}:{f.line}  {f.message[:140]}")


# --------------------------------------------------------------------------- main

def available_part(manifest: Manifest, mirrors: Path, cache: Path,
                   skipped: list[tuple[int, str, str]]) -> tuple[Manifest, dict[str, Path]]:
    """``manifest`` without the sources that cannot be rebuilt here (each appended to ``skipped`` with
    its reason), their bugs and their finding labels; and the roots of the sources that remain."""
    roots: dict[str, Path] = {}
    for s in manifest.sources:
        try:
            roots[s.source] = materialise(s, mirrors, cache)
        except SourceError as exc:
            skipped.append((manifest.batch, s.source, str(exc)))
    part = replace(manifest, sources=[s for s in manifest.sources if s.source in roots],
                   bugs=[b for b in manifest.bugs if b.source in roots],
                   findings=[f for f in manifest.findings if f.source in roots])
    return part, roots


def run(manifests: Sequence[Manifest], mirrors: Path, cache: Path, tool: real_code.Dpcheck | None,
        stub: Path | None = None, skipped: list[tuple[int, str, str]] | None = None) -> tuple[list[str], list[Result], list[Finding]]:
    """Rebuild, check labels and (unless ``tool`` is None) scan and score every manifest.
    Returns the label failures, one result per manifest and the unlabelled findings. With
    ``skipped`` (a list), a source that cannot be rebuilt is left out with its bugs and labels and
    named there, instead of stopping the run."""
    failures: list[str] = []
    results: list[Result] = []
    unlabelled: list[Finding] = []
    for manifest in manifests:
        if skipped is None:
            roots = {s.source: materialise(s, mirrors, cache) for s in manifest.sources}
        else:
            manifest, roots = available_part(manifest, mirrors, cache, skipped)
        failures += [msg for bug in manifest.bugs if (msg := check_bug(bug, roots[bug.source]))]
        if tool is None:
            # a path the scan would refuse (a notebook, a folder the rebuild leaves out) fails here too
            for source in manifest.sources:
                try:
                    scan_roots(source, roots[source.source])
                except SourceError as missing:
                    failures.append(str(missing))
            continue
        scans = {s.source: scan_source(s, roots[s.source], tool) for s in manifest.sources}
        findings = [f for sc in scans.values() for f in sc.findings]
        unread = {f"{src}/{path}": n for sc in scans.values() for (src, path), (_, n) in sc.unread.items()}
        for sc in scans.values():
            failures += [f"dpcheck crashed: {c}" for c in sc.crashed]
        result = score(manifest.bugs, findings, manifest.findings, sum(sc.lines for sc in scans.values()), unread)
        results.append(result)
        unlabelled += result.unlabelled
        print_result(result, f"batch {manifest.batch} ({manifest.path.name}): {len(manifest.bugs)} bugs in "
                             f"{len({b.source for b in manifest.bugs})} codebases")
    if stub is not None:
        stub.write_text(json.dumps([{"source": f.source, "file": f.file, "line": f.line, "rule": f.rule,
                                     "label": "?", "bug": None, "note": "", "message": f.message}
                                    for f in unlabelled], indent=1, ensure_ascii=False) + "\n")
    return failures, results, unlabelled


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS, help="folder of fetched mirrors")
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help="where sources are rebuilt (reused)")
    p.add_argument("--manifests", type=Path, default=MANIFEST_DIR)
    p.add_argument("--batch", type=int, action="append", default=[], help="batch number(s) (default: all but held-out ones, whose frozen_rules is null)")
    p.add_argument("--rules-at", help="scan with the rules of this commit of the dpcheck repository")
    p.add_argument("--dpcheck-path", type=Path, help="scan with the dpcheck package found in this folder")
    p.add_argument("--labels-only", action="store_true", help="rebuild and check the bug labels; no scan")
    p.add_argument("--check", action="store_true", help="exit 1 on an unlabelled finding as well")
    p.add_argument("--json", type=Path, help="write the numbers to this file")
    p.add_argument("--stub", type=Path, help="write label stubs for unlabelled findings to this file")
    p.add_argument("--available-only", action="store_true",
                   help="leave out (and list) the sources that cannot be rebuilt here, with their bugs and "
                        "labels, instead of stopping: a partial run, said so in the output and the JSON")
    args = p.parse_args(argv)
    # the snapshot's import probe and the scans run in other working directories
    args.cache_dir = args.cache_dir.resolve()
    skipped: list[tuple[int, str, str]] | None = [] if args.available_only else None
    try:
        manifests = load_manifests(args.manifests, args.batch)
        tool: real_code.Dpcheck | None = None
        if not args.labels_only:
            path = frozen_rules(args.rules_at, args.cache_dir) if args.rules_at else args.dpcheck_path
            tool = real_code.Dpcheck(path)
        failures, results, unlabelled = run(manifests, args.mirrors, args.cache_dir, tool, args.stub, skipped)
    except SourceError as exc:
        print(f"error: cannot rebuild {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"error: invalid manifest: {exc}", file=sys.stderr)
        return 2
    if args.json:
        args.json.write_text(json.dumps({"rules_at": args.rules_at, "batches": [m.batch for m in manifests],
                                         "results": [r.as_json() for r in results], "failures": failures,
                                         "partial": bool(skipped),
                                         "skipped_sources": [{"batch": b, "source": src, "reason": why}
                                                             for b, src, why in skipped or []]},
                                        indent=1, ensure_ascii=False) + "\n")
    if skipped:
        print(f"\nPARTIAL RUN: {len(skipped)} source(s) could not be rebuilt and were left out with their "
              f"bugs and labels (--available-only):")
        for batch, _, why in skipped:
            print(f"  SKIPPED batch {batch}: {why}")
    for msg in failures:
        print(f"LABEL CHECK FAILED: {msg}")
    if failures or (args.check and unlabelled):
        if unlabelled:
            print(f"CHECK FAILED: {len(unlabelled)} unlabelled finding(s)")
        return 1
    gone = {(b, src) for b, src, _ in skipped or []}
    checked = sum(1 for m in manifests for bug in m.bugs if (m.batch, bug.source) not in gone)
    print(f"\nlabels hold: {checked} bug(s) in {len(manifests)} batch(es)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
