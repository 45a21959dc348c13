"""Is a candidate repository for a held-out batch a copy of code already in the benchmark?

Readers of a new batch avoid every repository and owner named by earlier manifests, but a fork or a
copy under another name slips past such lists (batch 73's TamjidHossain/FedDP is batch 46's
yuki-waseda/FedDP). This compares git blob ids, which are content hashes: a `.py` file of at least
``MIN_SIZE`` bytes that is byte-identical to one in an avoided repository's mirror counts as shared.
An edited copy passes; the check catches exact copies only.

    python benchmarks/forkcheck.py index --avoid avoid_repos.txt --out forkindex.json
    python benchmarks/forkcheck.py check owner/name --index forkindex.json   # exit 1: REJECT
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

DEFAULT_MIRRORS = Path("/work/.mirror")
MIN_SIZE = 1500
#: a candidate sharing this many files, or this share of its files, is rejected
MAX_SHARED = 2
MAX_SHARE = 0.2


def git_dir(mirrors: Path, repo: str) -> Path | None:
    base = mirrors / repo.replace("/", "+", 1)
    for cand in (base / "repo", base / "repo" / ".git", base):
        if (cand / "HEAD").is_file():
            return cand
    return None


def py_blobs(gd: Path) -> set[str]:
    out = subprocess.run(["git", "--git-dir", str(gd), "ls-tree", "-r", "-l", "HEAD"],
                         capture_output=True, text=True, check=True).stdout
    blobs = set()
    for line in out.splitlines():
        meta, path = line.split("\t", 1)
        _mode, kind, sha, size = meta.split()
        if kind == "blob" and path.endswith(".py") and size.isdigit() and int(size) >= MIN_SIZE:
            blobs.add(sha)
    return blobs


def build_index(mirrors: Path, avoided: list[str]) -> dict[str, list[str]]:
    index: dict[str, list[str]] = {}
    for repo in avoided:
        gd = git_dir(mirrors, repo)
        if gd is None:
            continue
        for sha in py_blobs(gd):
            owners = index.setdefault(sha, [])
            if repo.lower() not in owners:
                owners.append(repo.lower())
    return index


def verdict(mirrors: Path, repo: str, index: dict[str, list[str]]) -> tuple[int, dict[str, int], bool]:
    gd = git_dir(mirrors, repo)
    if gd is None:
        raise FileNotFoundError(f"no mirror of {repo} under {mirrors}; fetch it first")
    blobs = py_blobs(gd)
    shared: dict[str, int] = {}
    for sha in blobs:
        others = [o for o in index.get(sha, []) if o != repo.lower()]
        if others:
            shared[others[0]] = shared.get(others[0], 0) + 1
    n = sum(shared.values())
    reject = n >= MAX_SHARED or (bool(blobs) and n / len(blobs) >= MAX_SHARE)
    return len(blobs), shared, reject


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS)
    sub = p.add_subparsers(dest="cmd", required=True)
    ix = sub.add_parser("index", help="index the avoided repositories' .py blobs")
    ix.add_argument("--avoid", type=Path, required=True, help="one owner/name per line")
    ix.add_argument("--out", type=Path, required=True)
    ck = sub.add_parser("check", help="REJECT (exit 1) a candidate sharing files with the index")
    ck.add_argument("repo")
    ck.add_argument("--index", type=Path, required=True)
    args = p.parse_args(argv)
    if args.cmd == "index":
        avoided = [l.strip() for l in args.avoid.read_text().splitlines() if l.strip()]
        index = build_index(args.mirrors, avoided)
        args.out.write_text(json.dumps(index))
        print(f"{len(index)} blobs from {len(avoided)} avoided repositories")
        return 0
    try:
        total, shared, reject = verdict(args.mirrors, args.repo, json.loads(args.index.read_text()))
    except FileNotFoundError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"{args.repo}: {total} .py files of >= {MIN_SIZE} bytes, {sum(shared.values())} identical to "
          f"avoided repositories' files {shared}")
    print("REJECT" if reject else "OK")
    return 1 if reject else 0


if __name__ == "__main__":
    sys.exit(main())
