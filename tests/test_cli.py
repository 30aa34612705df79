"""The command line: verify exit status, the JSON records, clear errors."""

import json
import textwrap

from symseq.cli import main

BAD = textwrap.dedent('''
    import sympy as sp
    from symseq import Derivation, Ledger, blocks

    derivation = Derivation("bad-week8", title="A copy of Week 8 with one wrong digit", source="000_copy.txt")

    @derivation.section("§4 The forward pass by hand")
    def forward(s):
        L = s.ledger("two tokens")
        H = L.input("H", sp.eye(2))
        eye = sp.eye(2)
        head = blocks.attention_head(L, H, L.parameter("W_Q", eye), L.parameter("W_K", eye),
                                     L.parameter("W_V", eye), orientation="in_out", mask="causal")
        Hp = blocks.residual(L, "H'", H, head.O)
        Z = blocks.linear(L, "Z", Hp, L.parameter("W_out", eye), orientation="in_out")
        P = blocks.probabilities(L, Z)
        s.claim("0.330238", head.A[1, 0], what="w")
        s.claim("0.792413", P[1, 1], what="p(B|AB)")
''')


def test_verify_bundled_passes_and_writes_json(tmp_path, capsys):
    out = tmp_path / "claims.json"
    assert main(["--no-color", "verify", "week08-decoder", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "1/(1 + e^{1/√2})" in text
    assert "claims in 1 derivation(s)" in text
    records = json.loads(out.read_text())
    assert len([r for r in records if r["kind"] == "value"]) >= 30
    assert all(r["status"] == "ok" for r in records)
    p = [r for r in records if r["what"] == "p(B|AB)" and r["printed"] == "0.792412"][0]
    assert p["value"].startswith("0.792411504248746443540635504")
    assert p["source"] == "000_30e9e4099f2cd2dc.txt" and p["location"].startswith("§4")


def test_many_digits_are_the_true_digits(capsys, monkeypatch):
    # p(B|AB) = 0.79241150424874644354063550408792…; float64 would go wrong after about 16 digits
    monkeypatch.setenv("COLUMNS", "250")  # the value on one line
    assert main(["--no-color", "verify", "week08-decoder", "--digits", "30"]) == 0
    assert " 0.792411504248746443540635504088 " in capsys.readouterr().out
    assert main(["verify", "week08-decoder", "--digits", "41"]) == 2
    assert "--digits must be between 1 and 40" in capsys.readouterr().err


def test_the_json_report_is_written_like_any_output_file(tmp_path, capsys):
    import os

    old = os.umask(0o022)
    try:
        out = tmp_path / "reports" / "claims.json"  # the folder is made, as for LaTeX and figures
        assert main(["--no-color", "verify", "week08-decoder", "--json", str(out)]) == 0
        assert main(["--no-color", "verify", "week08-decoder", "--json", str(out)]) == 0  # rewritten
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o644
    assert len(json.loads(out.read_text())) >= 90


def test_one_wrong_digit_fails_with_location_and_correct_rounding(tmp_path, capsys):
    d = tmp_path / "derivations"
    d.mkdir()
    (d / "bad.py").write_text(BAD)
    code = main(["--no-color", "verify", "--no-bundled", "--path", str(d)])
    text = capsys.readouterr().out
    assert code == 1
    assert "MISMATCH 000_copy.txt · §4 The forward pass by hand · p(B|AB)" in text
    assert "correct 0.792412" in text
    assert "1 mismatch" in text


def test_unknown_name_lists_valid_derivations(capsys):
    assert main(["verify", "no-such-handout"]) == 2
    err = capsys.readouterr().err
    assert "valid names" in err and "week08-decoder" in err and "Traceback" not in err


def test_list(capsys):
    assert main(["--no-color", "list"]) == 0
    assert "week08-decoder" in capsys.readouterr().out


def test_author_folder_errors_are_clear(tmp_path, capsys):
    d = tmp_path / "proj" / "derivations"
    d.mkdir(parents=True)
    (d / "broken.py").write_text("from symseq import Derivation\nx = (\n")
    assert main(["verify", "--no-bundled", "--path", str(d)]) == 2
    err = capsys.readouterr().err
    assert "cannot load" in err and "broken.py" in err and "SyntaxError" in err and "Traceback" not in err
    (d / "broken.py").write_text("X = 1\n")
    assert main(["verify", "--no-bundled", "--path", str(d)]) == 2
    assert "defines no Derivation" in capsys.readouterr().err


def test_path_may_name_the_project_folder_and_json_to_stdout_is_pure(tmp_path, capsys):
    d = tmp_path / "proj" / "derivations"
    d.mkdir(parents=True)
    (d / "ok.py").write_text(BAD.replace('"0.792413"', '"0.792412"'))
    assert main(["--no-color", "verify", "--no-bundled", "--path", str(tmp_path / "proj"), "--json", "-"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["status"] for r in records] == ["ok", "ok"]


def test_printed_must_be_a_string():
    from symseq import Derivation

    d = Derivation("t", title="t", source="t.txt")

    @d.section("s")
    def s(sec):
        sec.claim(0.330238, 1)

    assert d.sections[0].error.startswith("ClaimError") and "must be the string" in d.sections[0].error


def test_the_source_tree_derivations_are_not_loaded_twice(monkeypatch):
    from pathlib import Path

    from symseq.authoring import default_paths

    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # the repository root: ./derivations is the bundled set
    assert default_paths() == []


def test_show_finds_a_section_by_the_table_it_shows(capsys):
    assert main(["--no-color", "show", "week06-encoder", "Table 13"]) == 0
    assert "begins" in capsys.readouterr().out
