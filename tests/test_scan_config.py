"""[tool.dpcheck] in pyproject.toml, CLI overrides, rule selection by prefix, per-file-ignores."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_scan_support import cli, project, run_json, scan, write  # noqa: F401 - fixture

from dpcheck.scan.config import ConfigError, find_pyproject, load_config, parse_size
from dpcheck.scan.selection import is_enabled, select_rules
from test_scan_support import TEST_RULES

SOURCE = "family = 1\nleak(x)\nnoisy = 2\n"


def rules_of(result) -> list[str]:
    return sorted({f.rule for f in result.findings})


def test_nearest_pyproject_is_found_from_a_subfolder(tmp_path):
    project(tmp_path, 'select = ["DP99"]\nmax-file-size = "1k"\n')
    write(tmp_path, "a/b/c.py", "x = 1\n")
    assert find_pyproject(tmp_path / "a" / "b" / "c.py") == tmp_path / "pyproject.toml"
    cfg = load_config(tmp_path / "a" / "b")
    assert cfg.root == tmp_path.resolve()
    assert cfg.select == ("DP99",) and cfg.max_file_size == 1024


def test_unknown_keys_and_bad_values_are_errors(tmp_path):
    project(tmp_path, "colour = 'red'\n")
    with pytest.raises(ConfigError, match="colour"):
        load_config(tmp_path)
    project(tmp_path, "select = 3\n")
    with pytest.raises(ConfigError, match="select"):
        load_config(tmp_path)


@pytest.mark.parametrize(("text", "size"), [("2MB", 2 * 1024**2), ("512k", 512 * 1024), (100, 100), ("1.5KiB", 1536)])
def test_parse_size(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "-1", "lots", 0])
def test_parse_size_rejects(text):
    with pytest.raises(ConfigError):
        parse_size(text)


@pytest.mark.parametrize(
    ("select", "ignore", "expected"),
    [
        (None, (), ["DP101", "DP991", "DP992", "DP993"]),
        (("DP99",), (), ["DP991", "DP992", "DP993"]),
        (("DP99",), ("DP993",), ["DP991", "DP992"]),
        (None, ("DP9",), ["DP101"]),
        (("DP992",), ("DP99",), ["DP992"]),  # the more specific code wins
        (("DP1", "DP991"), (), ["DP101", "DP991"]),
    ],
)
def test_select_and_ignore_prefixes(select, ignore, expected):
    assert [r.id for r in select_rules(TEST_RULES, select, ignore)] == expected


def test_unknown_select_code_is_rejected():
    with pytest.raises(ConfigError, match="DP7"):
        select_rules(TEST_RULES, ("DP7",), ())


def test_diagnostics_stay_on_unless_ignored():
    assert is_enabled("DP000", ("DP99",), ())
    assert not is_enabled("DP000", None, ("DP0",))
    assert is_enabled("DP003", ("DP003",), ("DP0",))


def test_pyproject_select_is_used_and_cli_overrides_it(tmp_path, cli):
    project(tmp_path, 'select = ["DP991"]\n')
    write(tmp_path, "m.py", SOURCE)
    code, data = run_json(cli, "--no-cache", str(tmp_path))
    assert code == 1 and [f["rule"] for f in data["findings"]] == ["DP991"]
    code, data = run_json(cli, "--no-cache", "--select", "DP1,DP992", str(tmp_path))
    assert sorted(f["rule"] for f in data["findings"]) == ["DP101", "DP992"]
    code, data = run_json(cli, "--no-cache", "--select", "DP99", "--ignore", "DP991", str(tmp_path))
    assert [f["rule"] for f in data["findings"]] == ["DP992"]


def test_per_file_ignores(tmp_path):
    project(tmp_path, '[tool.dpcheck.per-file-ignores]\n"tests/**" = ["DP99"]\n"legacy.py" = ["DP101", "DP992"]\n')
    write(tmp_path, "tests/t.py", SOURCE)
    write(tmp_path, "legacy.py", SOURCE)
    write(tmp_path, "app.py", SOURCE)
    result = scan(tmp_path)
    by_file: dict[str, list[str]] = {}
    for f in result.findings:
        by_file.setdefault(Path(f.path).name, []).append(f.rule)
    assert by_file == {"app.py": ["DP101", "DP991", "DP992"], "legacy.py": ["DP991"], "t.py": ["DP101"]}


def test_category_filter_cli_and_config(tmp_path, cli):
    project(tmp_path, 'category = ["pate"]\n')
    write(tmp_path, "m.py", SOURCE)
    write(tmp_path, "broken.py", "def f(:\n")
    code, data = run_json(cli, "--no-cache", str(tmp_path))
    # diagnostics are always reported: a gate must not pass on a file it could not read
    assert sorted((f["rule"], f["category"]) for f in data["findings"]) == [("DP000", "diagnostic"), ("DP991", "pate")]
    code, data = run_json(cli, "--no-cache", "--category", "laplace_noise,delta_scale", str(tmp_path / "m.py"))
    assert sorted(f["category"] for f in data["findings"]) == ["delta_scale", "laplace_noise"]
    code, out, err = cli("scan", "--no-cache", "--category", "nonsense", str(tmp_path))
    assert code == 2 and "nonsense" in err
