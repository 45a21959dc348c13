"""Research code is read (issue 21, deliverable 4): Python 2 sources and tab-mixed indentation
are converted for analysis, and findings point at the original line and column."""
from __future__ import annotations

import ast

import pytest
from test_scan_support import project, scan, write

from dpcheck.rules import all_rules
from dpcheck.scan.engine import analyse
from dpcheck.scan.py2 import convert

PY2 = (
    "import numpy as np\n"
    "def sigma(x, delta, epsilon):\n"
    "\tif x <> 0:\n"
    "\t    print 'value', `x`, 0777, 10L\n"
    "\ttry:\n"
    "\t    y = x\n"
    "\texcept ValueError, e:\n"
    "\t    raise ValueError, 'bad'\n"
    "\tprint >>sys.stderr, 'x'; print\n"
    "\texec 'a = 1' in ns\n"
    "\ts = ur'abc'\n"
    "\tlamda = np.sqrt(2 * np.log(1.25 * (10 ^ int(delta)))) / epsilon\n"
    "\tif x: print x\n"
    "        return lamda\n"  # eight spaces: the same indentation as one tab in Python 2
)


def test_python2_constructs_become_python3_on_the_same_lines():
    converted = convert(PY2)
    assert converted is not None
    ast.parse(converted.text)
    assert converted.text.count("\n") == PY2.count("\n")
    lines = converted.text.splitlines()
    assert lines[3].strip() == "print('value', repr(x), 0o777, 10)"
    assert lines[6].strip() == "except ValueError as e:"
    assert lines[8].strip() == "print(sys.stderr, 'x'); print()"
    assert lines[9].strip() == "exec('a = 1' , ns)"
    assert set(converted.changes) >= {"print statement", "tab indentation", "<> operator", "backtick repr",
                                      "except X, e", "raise E, msg", "exec statement", "ur'' string", "Python 2 number"}


def test_python3_source_is_left_alone():
    assert convert("print(x)\nprint = 3\nx.print\n") is None


def test_findings_in_a_python2_file_point_at_the_original_line_and_column():
    findings = analyse(PY2.encode(), "old_gan.py", all_rules()).findings
    xor = [f for f in findings if f.rule == "DP101"]
    assert [f.rule for f in findings if f.rule.startswith("DP00")] == []
    assert len(xor) == 1
    line = PY2.splitlines()[11]
    assert (xor[0].line, xor[0].col) == (12, line.index("10 ^") + 1)
    assert xor[0].snippet == line.strip()


@pytest.mark.parametrize("indent", ["\t", "    \t", "\t    "])
def test_tab_mixed_indentation_is_read_like_python2(indent):
    body = f"def f(delta):\n{indent}x = 1\n        return 10 ^ int(delta)\n"
    if indent == "\t    ":
        body = f"def f(delta):\n{indent}x = 1\n{indent}return 10 ^ int(delta)\n"
    findings = analyse(body.encode(), "tabs.py", all_rules()).findings
    assert [(f.rule, f.line) for f in findings] == [("DP101", 3)]


def test_a_file_that_neither_parses_nor_converts_is_dp000_and_counted(tmp_path):
    project(tmp_path)
    write(tmp_path, "pseudo.py", "print 'x'\ngrads = opt.compute_gradients(loss, <list of variables>)\n")
    write(tmp_path, "fine.py", "x = 1\n")
    result = scan(tmp_path)
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.rule) for f in result.findings] == [("pseudo.py", 2, "DP000")]
    assert result.stats.files == 2


NOTEBOOK_EXPORT = (
    "# -*- coding: utf-8 -*-\n"
    "!pip install tensorflow-privacy==0.5 'scipy<2'\n"
    "%matplotlib inline\n"
    "%%time\n"
    "import numpy as np\n"
    "def sigma(delta, epsilon, n):\n"
    "    !nvidia-smi\n"
    "    rest = n % 7\n"
    "    return np.sqrt(2 * np.log(1.25 * (10 ^ int(delta)))) / epsilon + rest\n"
)


def test_notebook_exports_with_shell_escapes_and_magics_are_analysed():
    converted = convert(NOTEBOOK_EXPORT)
    assert converted is not None
    ast.parse(converted.text)
    lines = converted.text.splitlines()
    assert lines[1].startswith("pass#pip install") and lines[3] == "pass#%time"
    assert lines[6] == "    pass#nvidia-smi" and lines[7] == "    rest = n % 7"
    assert converted.changes == {"IPython magic line": 4}
    findings = analyse(NOTEBOOK_EXPORT.encode(), "colab_export.py", all_rules()).findings
    assert [f.rule for f in findings if f.rule.startswith("DP00")] == []
    xor = [f for f in findings if f.rule == "DP101"]
    assert [(f.line, f.col) for f in xor] == [(9, NOTEBOOK_EXPORT.splitlines()[8].index("10 ^") + 1)]


def test_a_modulo_or_not_equal_inside_a_statement_is_not_a_magic_line():
    source = "x = (a\n     % b)\nif a != b: print 'x'\n"
    converted = convert(source)
    assert converted is not None and converted.changes == {"print statement": 1}
    assert converted.text.splitlines()[:2] == ["x = (a", "     % b)"]


STAR_ARGUMENT = (
    "import numpy as np\n"
    "import torch\n"
    "def step(model, delta, epsilon):\n"
    "    grads = [torch.zeros((*p.shape)) for p in model.parameters()]\n"
    "    pair = g((*grads, 1), key=(*grads,))\n"
    "    return np.sqrt(2 * np.log(1.25 * (10 ^ int(delta)))) / epsilon\n"
)


def test_a_parenthesised_star_argument_as_python_3_8_read_it_is_analysed():
    converted = convert(STAR_ARGUMENT)
    assert converted is not None and converted.changes == {"parenthesised star argument": 1}
    ast.parse(converted.text)
    lines = converted.text.splitlines()
    assert lines[3] == "    grads = [torch.zeros( *p.shape ) for p in model.parameters()]"
    assert lines[4] == STAR_ARGUMENT.splitlines()[4]  # tuples with a star are Python 3 already
    findings = analyse(STAR_ARGUMENT.encode(), "train.py", all_rules()).findings
    assert [f.rule for f in findings if f.rule.startswith("DP00")] == []
    assert [(f.rule, f.line) for f in findings if f.rule == "DP101"] == [("DP101", 6)]


def test_a_parenthesised_star_outside_a_call_argument_stays_a_syntax_error():
    assert convert("x = (*a)\n") is None
