"""True values for number-forms.md, computed in mpmath at 30 digits.

Prints number-forms.labels.tsv: one row per statement line of the page.
Each row locates its line by a unique substring of the page, checks that the printed result is on that line,
computes the true value from the printed operands, and derives the verdict: `ok` when the printed result,
rounded to its printed digits, equals the true value (|printed - true| <= half a unit of the last printed digit;
a percentage p% is read as p/100 at the precision of its digits). The derived verdict must match the intended one.
Run: /work/venv/bin/python tests/data/forms/number_forms_truth.py > tests/data/forms/number-forms.labels.tsv
"""
from decimal import Decimal
from pathlib import Path

from mpmath import e, exp, mp, mpf, nstr, root, sqrt

mp.dps = 30
PAGE = Path(__file__).with_name("number-forms.md")
NNBSP, THIN = "\u202f", "\u2009"


def softmax(xs):
    es = [exp(mpf(x)) for x in xs]
    total = sum(es)
    return [v / total for v in es]


def axpy(a, u, b, v):
    return [mpf(a) * mpf(x) + mpf(b) * mpf(y) for x, y in zip(u, v)]


M = mpf
# (locator on the page, printed result as printed, printed value(s) as plain decimals, kind, true value, intended verdict, note)
ROWS = [
    ("(5*5*16+1)*32 =", "12,832", ["12832"], "num", (M(5) * 5 * 16 + 1) * 32, "ok", "comma-grouped thousands"),
    ("64 × 512 =", "32,768", ["32768"], "num", M(64) * 512, "ok", "comma-grouped, statement inside prose"),
    ("512 × 96 =", "49,052", ["49052"], "num", M(512) * 96, "wrong", "wrong digit: 49,152"),
    ("4 × 250 =", "1" + NNBSP + "000", ["1000"], "num", M(4) * 250, "ok", "U+202F thousands separator"),
    ("256 × 1" + NNBSP + "024", "262" + NNBSP + "114", ["262114"], "num", M(256) * 1024, "wrong",
     "U+202F grouping; wrong digit: 262 144"),
    ("3 × 4" + THIN + "096", "12" + THIN + "288", ["12288"], "num", M(3) * 4096, "ok", "U+2009 thousands separator"),
    ("16 × 2" + THIN + "500", "40" + THIN + "000", ["40000"], "num", M(16) * 2500, "ok", "U+2009 thousands separator"),
    ("e^{10} ≈", "22,026.47", ["22026.47"], "num", exp(10), "ok", "comma-grouped with decimals"),
    ("softmax([1,2])", "[0.269, 0.731]", ["0.269", "0.731"], "list", softmax([1, 2]), "ok", "list, not a grouped number"),
    ("softmax([0,1,2])", "[0.090, 0.245, 0.665]", ["0.090", "0.245", "0.665"], "list", softmax([0, 1, 2]), "ok",
     "three-way softmax"),
    ("softmax([2,0])", "[0.881, 0.129]", ["0.881", "0.129"], "list", softmax([2, 0]), "wrong",
     "second entry should be 0.119"),
    (r"\frac{e^{2}}{e^{1}+e^{2}}", "0.7311", ["0.7311"], "num", exp(2) / (e + exp(2)), "ok", "display math"),
    ("percentages: 0.3 × 100", "30%", ["30"], "pct", M("0.3"), "ok", "percent; true as fraction 0.3"),
    (r"$0.125 \times 100", r"12.5\%", ["12.5"], "pct", M("0.125"), "ok", "LaTeX percent; true as fraction 0.125"),
    ("typo here: 0.3 × 100", "35%", ["35"], "pct", M("0.3"), "wrong", "percent; should be 30%"),
    ("(1 + 2 + 3 + 6)/4", "3", ["3"], "num", M(1 + 2 + 3 + 6) / 4, "ok", "mean"),
    ("((−2)^2 + (−1)^2", "3.5", ["3.5"], "num", M(4 + 1 + 0 + 9) / 4, "ok", "variance, U+2212 signs"),
    ("√(3.5 + 1e-5)", "1.8708", ["1.8708"], "num", sqrt(M("3.5") + M("1e-5")), "ok", "root with epsilon"),
    ("(1 − 3)/1.8708", "−1.069", ["-1.069"], "num", M(1 - 3) / M("1.8708"), "ok", "U+2212 result"),
    ("(6 − 3)/1.8708", "1.6306", ["1.6306"], "num", M(6 - 3) / M("1.8708"), "wrong", "swapped digits: 1.6036"),
    ("0.1 − 0.25 =", "−0.15", ["-0.15"], "num", M("0.1") - M("0.25"), "ok", "U+2212 subtraction"),
    ("1 − 1.75 =", "−0.65", ["-0.65"], "num", M(1) - M("1.75"), "wrong", "U+2212; should be −0.75"),
    (r"$\frac{1}{4} = 0.25$", "0.25", ["0.25"], "num", M(1) / 4, "ok", r"\frac"),
    (r"$\frac{3}{8} = 0.375$", "0.375", ["0.375"], "num", M(3) / 8, "ok", r"\frac"),
    (r"$\tfrac12 = 0.5$", "0.5", ["0.5"], "num", M(1) / 2, "ok", r"\tfrac12 without braces"),
    (r"$\tfrac{1}{3} \approx 0.333$", "0.333", ["0.333"], "num", M(1) / 3, "ok", r"\tfrac with braces"),
    (r"$\sqrt{2} \approx", "1.4142", ["1.4142"], "num", sqrt(2), "ok", r"\sqrt"),
    (r"$$\sqrt{3} \approx", "1.7132", ["1.7132"], "num", sqrt(3), "wrong", "display math; should be 1.7321"),
    (r"$\sqrt[3]{8} = 2$", "2", ["2"], "num", root(8, 3), "ok", "cube root"),
    (r"$\sqrt[3]{64} = 8$", "8", ["8"], "num", root(64, 3), "wrong", "cube root of 64 is 4"),
    ("√0.25 = 0.5", "0.5", ["0.5"], "num", sqrt(M("0.25")), "ok", "radical sign"),
    ("√(3^2+4^2)", "5", ["5"], "num", sqrt(M(3) ** 2 + M(4) ** 2), "ok", "norm of the point (3,4)"),
    ("0.8 · [2, 0] + 0.2 · [0, 4]", "[1.6, 0.8]", ["1.6", "0.8"], "list", axpy("0.8", [2, 0], "0.2", [0, 4]), "ok",
     "sum of scaled vectors"),
    ("0.25 · [4, 8] + 0.75 · [0, 4]", "[1, 4]", ["1", "4"], "list", axpy("0.25", [4, 8], "0.75", [0, 4]), "wrong",
     "second entry should be 5"),
    (r"$0.5\,(1, 3) + 0.5\,(3, 1)", "(2, 2)", ["2", "2"], "list", axpy("0.5", [1, 3], "0.5", [3, 1]), "ok",
     "LaTeX scaled tuples"),
    (r"$0.9\,(1, 0) + 0.1\,(0, 1)", "(0.9, 0.1)", ["0.9", "0.1"], "list", axpy("0.9", [1, 0], "0.1", [0, 1]), "ok",
     "LaTeX scaled tuples"),
    ("0.5 · 0.8 + 0.25 · (−0.4)", "0.3", ["0.3"], "num", M("0.5") * M("0.8") + M("0.25") * M("-0.4"), "ok",
     "U+2212 operand"),
    ("0.01 × 0.03 = 3e-4.", "3e-4", ["3e-4"], "num", M("0.01") * M("0.03"), "ok", "exponent at sentence end"),
    ("3e-4 × 0.5 =", "1.6e-4", ["1.6e-4"], "num", M("3e-4") * M("0.5"), "wrong",
     "exponent at sentence end; should be 1.5e-4"),
    ("0.5 × 5e−3 =", "2.5e−3", ["2.5e-3"], "num", M("0.5") * M("5e-3"), "ok", "U+2212 in exponent"),
    ("2.5e−3 × 4 =", "1e−2", ["1e-2"], "num", M("2.5e-3") * 4, "ok", "U+2212 exponent at sentence end"),
    (r"$0.003 / 2 =", r"1.5 \times 10^{-3}", ["1.5e-3"], "num", M("0.003") / 2, "ok", r"LaTeX \times 10^{k}"),
    (r"$4 \times 5 \times 10^{-4} =", r"2 \times 10^{-3}", ["2e-3"], "num", M(4) * 5 * M(10) ** -4, "ok",
     r"LaTeX \times 10^{k} on both sides"),
    ("0.5 × 3e-3 =", "1.5 × 10^{-3}", ["1.5e-3"], "num", M("0.5") * M("3e-3"), "ok", "plain × 10^{k}"),
    ("0.02 × 0.4 =", "8 × 10^{-2}", ["8e-2"], "num", M("0.02") * M("0.4"), "wrong", "exponent off by one: 8 × 10^{-3}"),
]


def fmt(x):
    if x == 0:
        return "0"
    s = nstr(x, 12, min_fixed=-6, max_fixed=13)
    return s[:-2] if s.endswith(".0") else s


def printed_value(text, kind):
    d = Decimal(text)
    return d.scaleb(-2) if kind == "pct" else d


def close(printed, true):
    half = Decimal(1).scaleb(printed.as_tuple().exponent) / 2
    return abs(mpf(str(printed)) - true) <= mpf(str(half))


def main():
    lines = PAGE.read_text(encoding="utf-8").split("\n")
    print("line\tverdict\tprinted\ttrue\tnote")
    seen = set()
    for locator, printed, values, kind, true, intended, note in ROWS:
        hits = [i for i, line in enumerate(lines, 1) if locator in line]
        assert len(hits) == 1, (locator, hits)
        line_no = hits[0]
        assert line_no not in seen, line_no
        seen.add(line_no)
        text = lines[line_no - 1]
        assert printed in text, (printed, text)
        trues = true if isinstance(true, list) else [true]
        assert len(trues) == len(values), locator
        verdict = "ok" if all(close(printed_value(v, kind), t) for v, t in zip(values, trues)) else "wrong"
        assert verdict == intended, (locator, verdict)
        print(f"{line_no}\t{verdict}\t{printed}\t{';'.join(fmt(t) for t in trues)}\t{note}")


if __name__ == "__main__":
    main()
