"""`dpcheck targets` lists every name --impl accepts; typos get the closest names wherever a name is resolved."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpcheck import impls
from dpcheck.audit.reference.mechanisms import REFERENCE
from dpcheck.cli import main
from dpcheck.targets import envs, registry


@pytest.fixture
def no_envs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty env folder: no target env exists."""
    root = tmp_path / "envs"
    root.mkdir()
    monkeypatch.setenv("DPCHECK_ENV_DIR", str(root))
    return root


def _listing(capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict]:
    assert main(["targets", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_lists_every_builtin_reference_and_library_target(no_envs: Path, capsys) -> None:  # noqa: ANN001
    entries = {e["name"]: e for e in _listing(capsys)}
    expected = [*impls.NAMES, *REFERENCE, *registry.names()]
    assert list(entries) == expected
    for info in registry.all_targets():
        entry = entries[info.name]
        assert (entry["library"], entry["env"], entry["kind"]) == (info.library, info.env, info.kind)
        assert entry["neighbours"] == registry.neighbour_relation(info)
        assert entry["env_exists"] is (info.env == "main"), info.name
    for name in impls.NAMES:
        assert entries[name]["group"] == "built-in" and entries[name]["neighbours"] == "add/remove one record"
    assert entries["diffprivlib:GaussianNB"]["version"] == "0.6.6"
    # an env that does not exist: the pinned version and the command that builds it
    snsynth = entries["smartnoise-synth:pategan"]
    assert snsynth["version"] == "1.0.8 (pinned)"
    assert snsynth["setup"] == "dpcheck env create smartnoise"


def test_version_is_read_from_the_env_on_disk(no_envs: Path, capsys) -> None:  # noqa: ANN001
    """A ready env (marker of the current requirements, a python) is listed as existing, with the
    version its site-packages holds: nothing is run in it."""
    env = no_envs / "smartnoise"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").write_text("")
    (env / envs.MARKER).write_text(json.dumps({"requirements": envs.fingerprint(envs.requirements_file("smartnoise"))}))
    dist = env / "lib" / "python3.11" / "site-packages" / "smartnoise_synth-9.9.9.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: smartnoise-synth\nVersion: 9.9.9\n")
    entries = {e["name"]: e for e in _listing(capsys, "--group", "library")}
    assert entries["smartnoise-synth:mwem"]["env_exists"] is True
    assert entries["smartnoise-synth:mwem"]["version"] == "9.9.9"
    assert entries["smartnoise-synth:mwem"]["setup"] == ""
    assert all(e["group"] == "library" for e in entries.values())


def test_table_names_groups_envs_and_relations(no_envs: Path, capsys) -> None:  # noqa: ANN001
    assert main(["targets"]) == 0
    out = capsys.readouterr().out
    for text in ("Built-in PATE-GAN implementations", "Reference mechanisms", "Real-library targets",
                 "diffprivlib:GaussianNB", "smartnoise-synth:pategan", "ref-laplace", "original-fixed",
                 "smartnoise (missing)", "dpcheck env create smartnoise", "add/remove one record"):
        assert text in out, text


@pytest.mark.parametrize(("argv", "expected"), [
    (["audit", "--impl", "diffprivlib:GausianNB"], "did you mean 'diffprivlib:GaussianNB'"),
    (["audit", "--impl", "orignal"], "did you mean 'original'"),
    (["audit", "--impl", "nosuch"], "`dpcheck targets` lists every name"),
    (["audit", "--impl", "ref-laplce"], "did you mean 'ref-laplace'"),
    (["matrix", "--quick", "--no-write", "--impl", "diffprivlib:GausianNB"], "did you mean 'diffprivlib:GaussianNB'"),
    (["matrix", "--quick", "--no-write", "--impl", "synthcty"], "did you mean 'synthcity'"),
    (["test", "--impl", "borealis-fixd"], "did you mean 'borealis-fixed'"),
    (["test", "--impl", "diffprivlib:GausianNB"], "did you mean 'diffprivlib:GaussianNB'"),
    (["diff", "accountant", "--impl", "orignal"], "did you mean 'original'"),
])
def test_typos_suggest_the_closest_names(argv: list[str], expected: str, capsys) -> None:  # noqa: ANN001
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert expected in err, err
    assert "Traceback" not in err


def test_registry_lookup_suggests() -> None:
    with pytest.raises(KeyError, match="did you mean 'smartnoise-synth:pategan'"):
        registry.get("smartnoise-synth:pategn")
    assert registry.closest("GaussianNB", registry.known_names())[0] == "diffprivlib:GaussianNB"
    assert registry.closest("opacus:dpsgd", registry.known_names()) == ["opacus:DPSGD"]
    assert registry.closest("zzzz", registry.known_names()) == []
    registry.check_name("diffprivlib:GaussianNB")  # a real target: no error
    registry.check_name("mypackage.models:MyGan")  # a package.module:Factory is not judged here
