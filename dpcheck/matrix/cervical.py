"""The Cervical GroundHog audits (audit paper Section 6.2): per-audit files → one summary.

``dpcheck audit --impl NAME --attack groundhog --target 397 --json DIR/NAME__target397.json`` and
``… --attack groundhog --json DIR/NAME__selected.json`` (target chosen by mini-audits) write one file
per implementation and target kind. :func:`aggregate` joins whatever files exist into one entry per
built-in implementation × target kind; an audit without a file is an entry with status
``"missing"``, never a number. The matrix's Cervical column and ``benchmarks/audit_cervical.py``
(which writes ``reports/audit_cervical.{json,md,png}``) both read it.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from dpcheck import impls

SCHEMA_VERSION = 1
PAPER_TARGET = 397
#: target kinds, in display order: the paper's own target, then dpcheck's selection
KINDS = ("target397", "selected")
FILE_NAME = re.compile(r"^(?P<impl>[a-z][a-z0-9-]*)__(?P<kind>target397|selected)\.json$")
#: the summary file next to the per-audit folder
SUMMARY_NAME = "audit_cervical.json"
FOLDER_NAME = "audit_cervical"
#: result keys copied into an entry unchanged
COPIED = ("target", "verdict", "eps_cp", "eps_bayes", "certifiable_cp", "certifiable_bayes", "auc", "runs",
          "runs_planned", "until_verdict", "epsilon", "delta", "confidence", "bound_confidence", "fp", "fn",
          "test_per_world", "synth_rows", "runs_executed", "runs_reused", "run_seconds_mean", "run_paths",
          "executor")
VERDICT_LETTER = {"violation": "V", "pass": "P", "underpowered": "U"}
LETTER_MEANING = {"V": "V = violation (ε_emp > ε)", "P": "P = pass (ε_emp ≤ ε, which proves nothing)",
                  "U": "U = underpowered"}


def legend(letters: set[str] | frozenset[str] = frozenset(VERDICT_LETTER.values())) -> str:
    """What the Cervical column shows; only the verdict letters in ``letters`` (the ones used) are explained."""
    used = [LETTER_MEANING[k] for k in ("V", "P", "U") if k in letters]
    return ("Cervical column: GroundHog on the Kaggle Cervical Cancer data, ε_emp (Clopper–Pearson) for the "
            "paper's target 397 / dpcheck's selected target (#record); " + ", ".join([*used, "— = not audited"]))


def letters_used(cells: list[dict[str, Any] | None]) -> set[str]:
    """The verdict letters the given Cervical cells show."""
    return {VERDICT_LETTER.get(str(entry.get("verdict")), "?") for cell in cells if cell
            for entry in (cell.get(kind) for kind in KINDS) if entry}


class CervicalReportError(ValueError):
    """A per-audit file that cannot be read as the Cervical audit its name says it is."""


def file_name(impl: str, kind: str) -> str:
    return f"{impl}__{kind}.json"


def _shown(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return path.as_posix()


def rank_of(record: int, aucs: dict[str, float]) -> dict[str, Any]:
    """Where ``record`` ranks among the selection's candidates by mini-audit AUC (1 = chosen)."""
    if str(record) not in aucs:
        return {"record": record, "candidate": False, "rank": None, "of": len(aucs), "auc": None,
                "note": f"record {record} is not among the {len(aucs)} farthest records, so it was not a candidate"}
    own = float(aucs[str(record)])
    higher = sum(1 for v in aucs.values() if float(v) > own)
    ties = sum(1 for v in aucs.values() if float(v) == own) - 1
    note = f"record {record} ranks {higher + 1} of {len(aucs)} candidates (mini-audit AUC {own:.3f})"
    return {"record": record, "candidate": True, "rank": higher + 1, "of": len(aucs), "auc": own,
            "tied_with": ties, "note": note + (f", tied with {ties} other(s)" if ties else "")}


def selection_summary(choice: dict[str, Any], source: str) -> dict[str, Any]:
    """The chosen record, its AUC, every candidate's AUC and where record 397 ranks."""
    try:
        aucs = {str(k): float(v) for k, v in choice["aucs"].items()}
        chosen = int(choice["target"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CervicalReportError(f"target selection from {source} lacks the chosen record or the candidates' "
                                  f"AUCs ({exc})") from None
    ranked = sorted(aucs.items(), key=lambda kv: (-kv[1], int(kv[0])))
    return {"chosen": chosen, "auc": aucs.get(str(chosen), choice.get("auc")),
            "candidates": len(aucs), "mini_runs": choice.get("mini_runs"), "design": choice.get("design"),
            "source": source, "rank_of_397": rank_of(PAPER_TARGET, aucs),
            "aucs": dict(ranked)}


def read_audit(path: Path, impl: str, kind: str, *, root: Path | None = None) -> dict[str, Any]:
    """One audited entry from a ``dpcheck audit --json`` file, checked against its name."""
    shown = _shown(path, root)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CervicalReportError(f"{shown}: cannot read it as JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") != "audit" or not isinstance(data.get("results"), list):
        raise CervicalReportError(f"{shown}: not a `dpcheck audit --json` file (kind {data.get('kind')!r})"
                                  if isinstance(data, dict) else f"{shown}: not a `dpcheck audit --json` file")
    matching = [r for r in data["results"] if isinstance(r, dict) and r.get("impl") == impl
                and r.get("attack") == "groundhog" and r.get("dataset") == "cervical"]
    if len(matching) != 1:
        names = sorted({str(r.get("impl")) for r in data["results"] if isinstance(r, dict)})
        raise CervicalReportError(f"{shown}: expected one GroundHog result on cervical for {impl!r}, found "
                                  f"{len(matching)} (results for {names})")
    result = matching[0]
    needed = ("target", "verdict", "eps_cp", "eps_bayes", "certifiable_cp", "auc", "runs")
    missing = [k for k in needed if k not in result]
    if missing:
        raise CervicalReportError(f"{shown}: result lacks {', '.join(missing)}")
    if kind == "target397" and result["target"] != PAPER_TARGET:
        raise CervicalReportError(f"{shown}: named for target {PAPER_TARGET} but audits record {result['target']}")
    entry: dict[str, Any] = {"impl": impl, "target_kind": kind, "status": "audited", "file": shown,
                             **{k: result.get(k) for k in COPIED}}
    seconds = result.get("seconds")
    entry["minutes"] = round(float(seconds) / 60, 2) if isinstance(seconds, (int, float)) else None
    if result.get("runs_reused"):
        entry["time_note"] = (f"time of the invocation that wrote the file; {result['runs_reused']} runs were "
                              "reused from the store and are not in it")
    entry["command"] = data.get("command")
    if kind == "selected":
        choice = result.get("target_selection")
        if choice:
            entry["selection"] = selection_summary(choice, "result file (target_selection)")
            if entry["selection"]["chosen"] != result["target"]:
                raise CervicalReportError(f"{shown}: audits record {result['target']} but its selection chose "
                                          f"{entry['selection']['chosen']}")
        else:
            entry["selection"] = None
            entry["selection_note"] = "the file does not record how the target was chosen (no target_selection)"
        if result["target"] == PAPER_TARGET:
            entry["selected_is_397"] = True
    return entry


def aggregate(folder: Path, *, root: Path | None = None) -> dict[str, Any]:
    """One entry per built-in implementation × target kind, from the files in ``folder``."""
    found: dict[tuple[str, str], Path] = {}
    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            match = FILE_NAME.match(path.name)
            if not match or match["impl"] not in impls.NAMES:
                raise CervicalReportError(
                    f"{_shown(path, root)}: unexpected file name; expected IMPL__target397.json or "
                    f"IMPL__selected.json with IMPL one of {', '.join(impls.NAMES)}")
            found[(match["impl"], match["kind"])] = path
    entries, missing = [], []
    for impl in impls.NAMES:
        for kind in KINDS:
            path = found.get((impl, kind))
            if path is None:
                entries.append({"impl": impl, "target_kind": kind, "status": "missing",
                                "file": _shown(folder / file_name(impl, kind), root)})
                missing.append(f"{impl} ({kind})")
            else:
                entries.append(read_audit(path, impl, kind, root=root))
    audited = [e for e in entries if e["status"] == "audited"]
    return {"schema": SCHEMA_VERSION, "kind": "audit_cervical", "folder": _shown(folder, root),
            "setting": _setting(folder, found), "implementations": list(impls.NAMES), "entries": entries,
            "audited": len(audited), "missing": missing}


def _setting(folder: Path, found: dict[tuple[str, str], Path]) -> dict[str, Any] | None:
    """The audit setting most files share, for the report's header; the files whose setting differs
    are named under ``differs`` with what differs."""
    owns: dict[str, dict[str, Any]] = {}
    for (impl, kind), path in sorted(found.items(), key=lambda item: item[1].name):
        result = next(r for r in json.loads(path.read_text(encoding="utf-8"))["results"] if r.get("impl") == impl)
        spec = result.get("spec") or {}
        owns[file_name(impl, kind)] = {
            "attack": result.get("attack"), "dataset": result.get("dataset"), "epsilon": result.get("epsilon"),
            "delta": result.get("delta"), "confidence": result.get("confidence"),
            "hyperparams": spec.get("hyperparams"), "synth_rows": result.get("synth_rows"),
            "seed": spec.get("seed"), "split": spec.get("split")}
    if not owns:
        return None
    keys = [json.dumps(own, sort_keys=True) for own in owns.values()]
    common = json.loads(max(keys, key=lambda k: (keys.count(k), -keys.index(k))))
    differs = [{"file": name, **{k: v for k, v in own.items() if v != common[k]}}
               for name, own in owns.items() if own != common]
    return {**common, "differs": differs}


def load(audit_dir: Path, *, root: Path | None = None) -> dict[str, Any] | None:
    """The summary for the matrix: ``audit_dir/audit_cervical.json``, else aggregated from
    ``audit_dir/audit_cervical/`` when only the per-audit files exist, else None."""
    summary = audit_dir / SUMMARY_NAME
    if summary.is_file():
        try:
            data = json.loads(summary.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CervicalReportError(f"{_shown(summary, root)}: cannot read it as JSON ({exc})") from None
        if not (isinstance(data, dict) and data.get("kind") == "audit_cervical"
                and isinstance(data.get("entries"), list)):
            raise CervicalReportError(f"{_shown(summary, root)}: not a Cervical audit summary "
                                      "(benchmarks/audit_cervical.py writes it)")
        data["source"] = _shown(summary, root)
        return data
    if (audit_dir / FOLDER_NAME).is_dir():
        data = aggregate(audit_dir / FOLDER_NAME, root=root)
        data["source"] = data["folder"]
        return data
    return None


def by_impl(summary: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """impl -> {"target397": entry, "selected": entry, "source": file}; audited entries only."""
    out: dict[str, dict[str, Any]] = {}
    if not summary:
        return out
    for entry in summary["entries"]:
        if entry.get("status") == "audited":
            out.setdefault(entry["impl"], {"source": summary.get("source")})[entry["target_kind"]] = entry
    return out


def target_label(entry: dict[str, Any]) -> str:
    return f"({entry['target']})" if entry["target_kind"] == "target397" else f"(#{entry['target']})"


def entry_text(entry: dict[str, Any] | None) -> str:
    if not entry:
        return "—"
    eps = entry.get("eps_cp")
    value = f"{eps:.2f}" if isinstance(eps, (int, float)) else "?"
    return f"{VERDICT_LETTER.get(str(entry.get('verdict')), '?')} {value} {target_label(entry)}"


def cell_parts(cell: dict[str, Any] | None) -> list[str]:
    """The two halves of a Cervical cell: target 397, then the selected target."""
    cell = cell or {}
    return [entry_text(cell.get(kind)) for kind in KINDS]


def cell_text(cell: dict[str, Any] | None) -> str:
    return "—" if not cell else " / ".join(cell_parts(cell))


def entry_facts(entry: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, value) lines for an audited entry's evidence list."""
    def num(key: str) -> str:
        value = entry.get(key)
        return f"{value:.3g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "—"

    kind = "paper's target" if entry["target_kind"] == "target397" else "selected target"
    facts = [(kind, f"record {entry['target']}: {entry.get('verdict')}"),
             ("ε_emp", f"{num('eps_cp')} (Clopper–Pearson, {num('confidence')} confidence); "
                       f"Bayesian {num('eps_bayes')}"),
             ("AUC", num("auc")),
             ("runs per world", f"{entry.get('runs')}"
                                + (f" of {entry['runs_planned']}" if entry.get("runs_planned") else "")),
             ("certifiable max", num("certifiable_cp")),
             ("minutes", num("minutes"))]
    selection = entry.get("selection")
    if selection:
        facts.append(("selection", f"record {selection['chosen']} had the highest mini-audit AUC "
                                   f"({selection['auc']:.3f}) of {selection['candidates']} candidates; "
                                   + selection["rank_of_397"]["note"]))
    elif entry["target_kind"] == "selected":
        facts.append(("selection", entry.get("selection_note", "not recorded")))
    facts.append(("from", str(entry.get("file"))))
    return facts
