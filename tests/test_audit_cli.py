import json
import sqlite3

from dpcheck.cli import main


def test_json_plot_table_and_exit_code(tmp_path, capsys):
    out, png = tmp_path / "r.json", tmp_path / "r.png"
    code = main(["audit", "--impl", "ref-laplace", "--impl", "ref-broken", "--runs", "150", "--workers", "1",
                 "--store", str(tmp_path / "s.sqlite"), "--json", str(out), "--plot", str(png), "--no-progress"])
    payload = json.loads(out.read_text())
    results = {r["impl"]: r for r in payload["results"]}
    assert payload["kind"] == "audit" and set(results) == {"ref-laplace", "ref-broken"}
    assert results["ref-broken"]["verdict"] == "violation" and results["ref-laplace"]["verdict"] == "pass"
    assert code == 1
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = capsys.readouterr().out
    for column in ("ε_emp CP", "ε_emp Bayes", "AUC", "verdict", "certifiable max", "ref-broken"):
        assert column in table


def test_clean_audit_exits_zero_and_says_until_verdict_split(tmp_path, capsys):
    code = main(["audit", "--impl", "ref-laplace", "--runs", "120", "--workers", "1", "--until-verdict",
                 "--checkpoints", "60", "--store", str(tmp_path / "s.sqlite"), "--no-progress"])
    assert code == 0
    assert "Bonferroni" in capsys.readouterr().out


def test_unknown_implementation_is_a_usage_error(tmp_path, capsys):
    code = main(["audit", "--impl", "no-such-impl", "--store", str(tmp_path / "s.sqlite")])
    assert code == 2 and "unknown implementation 'no-such-impl'" in capsys.readouterr().err


def test_corrupt_store_is_refused_with_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "s.sqlite"
    bad.write_text("definitely not sqlite" * 50)
    code = main(["audit", "--impl", "ref-laplace", "--runs", "10", "--store", str(bad)])
    assert code == 2 and "not a usable dpcheck audit store" in capsys.readouterr().err


def test_foreign_sqlite_store_is_refused(tmp_path, capsys):
    other = tmp_path / "s.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    db.execute("INSERT INTO meta VALUES ('application', 'someone-else')")
    db.commit()
    db.close()
    code = main(["audit", "--impl", "ref-laplace", "--runs", "10", "--store", str(other)])
    assert code == 2 and "someone-else" in capsys.readouterr().err


def test_querybased_on_a_continuous_dataset_is_a_usage_error(tmp_path, capsys):
    code = main(["audit", "--impl", "ref-laplace", "--attack", "querybased", "--dataset", "cervical",
                 "--store", str(tmp_path / "s.sqlite")])
    assert code == 2 and "small integer domain" in capsys.readouterr().err


def test_bad_hyperparameter_syntax(tmp_path, capsys):
    code = main(["audit", "--impl", "ref-laplace", "--hp", "oops", "--store", str(tmp_path / "s.sqlite")])
    assert code == 2 and "KEY=VALUE" in capsys.readouterr().err


def test_selected_cervical_target_is_reported_with_every_candidate(tmp_path):
    out = tmp_path / "r.json"
    main(["audit", "--impl", "ref-marginals", "--attack", "groundhog", "--candidates", "3", "--mini-runs", "5",
          "--runs", "10", "--synth-rows", "40", "--workers", "1", "--store", str(tmp_path / "s.sqlite"),
          "--json", str(out), "--no-progress"])
    result = json.loads(out.read_text())["results"][0]
    chosen = result["target_selection"]
    assert chosen["method"] == "vulnerable-record" and len(chosen["aucs"]) == 3 and chosen["mini_runs"] == 5
    assert result["target"] == chosen["target"] and str(chosen["target"]) in chosen["aucs"]


def test_given_cervical_target_has_no_selection(tmp_path):
    out = tmp_path / "r.json"
    main(["audit", "--impl", "ref-marginals", "--attack", "groundhog", "--target", "397", "--runs", "10",
          "--synth-rows", "40", "--workers", "1", "--store", str(tmp_path / "s.sqlite"), "--json", str(out),
          "--no-progress"])
    result = json.loads(out.read_text())["results"][0]
    assert result["target"] == 397 and result["target_selection"] is None
