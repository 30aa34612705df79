"""symseq figure: heatmaps read back from the image, per-head comparisons, and Week 06's gradient paths."""

import sys

import mpmath
import numpy as np
import pytest

from symseq import BackendUnavailable, ConventionError
from symseq.cli import main
from symseq.derive import paths
from symseq.present import figures
from symseq.authoring import HeatmapSpec

from present_helpers import DEMO_PATH, demo

matplotlib = pytest.importorskip("matplotlib")
from matplotlib import image as mpimg  # noqa: E402


def _heatmap(label):
    return [x for s in demo().sections for x in s.displays if isinstance(x, HeatmapSpec) and x.label.startswith(label)][0]


def _window(img, x, y, r=4):
    return img[y - r:y + r + 1, x - r:x + r + 1, :3]


def test_causal_heatmap_reads_back(tmp_path):
    spec = _heatmap("Figure 2")
    fig = figures.heatmap_figure(spec)
    path = figures.save(fig, tmp_path / "weights.png")
    img = mpimg.imread(path)
    w, h = (fig.get_size_inches() * fig.dpi).round().astype(int)
    assert img.shape[:2] == (h, w)
    assert img[..., :3].std() > 0.1  # not blank
    view = fig.symseq_views[0]
    cmap = matplotlib.colormaps["Blues"]
    masked, flat = [], []
    pixels = figures.cell_pixels(fig, 0, frac=0.3)
    for i in range(7):
        for j in range(7):
            win = _window(img, *pixels[i][j])
            spread = win.reshape(-1, 3).std(axis=0).max()
            if view.masked[i, j]:
                masked.append(spread)
            else:
                flat.append(spread)
                # an unmasked cell is filled with the colour of its weight on the 0..1 scale
                np.testing.assert_allclose(win.reshape(-1, 3).mean(axis=0), cmap(view.values[i, j])[:3], atol=0.02)
    assert len(masked) == 21 and len(flat) == 28
    assert min(masked) > 0.1  # hatched with crosses
    assert max(flat) < 0.01  # plain fill


def test_scores_heatmap_uses_a_diverging_scale_and_masks_minus_infinity(tmp_path):
    fig = figures.heatmap_figure(_heatmap("Figure 1"))
    im = fig.symseq_axes[0].images[0]
    lo, hi = im.get_clim()
    assert lo == -hi and hi == pytest.approx(1.3575453385806617)  # centred on 0, reaching the largest score
    texts = [t.get_text() for t in fig.symseq_axes[0].texts]
    assert len(texts) == 28 and "1.36" in texts and "\u22120.84" in texts


def test_formats_follow_the_extension(tmp_path):
    fig = figures.heatmap_figure(_heatmap("Figure 1"))
    assert figures.save(fig, tmp_path / "s.svg").read_text().lstrip().startswith("<?xml")
    assert figures.save(fig, tmp_path / "s.pdf").read_bytes().startswith(b"%PDF")
    assert figures.save(fig, tmp_path / "s.PNG").read_bytes().startswith(b"\x89PNG")
    with pytest.raises(ConventionError, match=r"\.png, \.pdf or \.svg"):
        figures.save(fig, tmp_path / "s.jpg")
    a = figures.save(figures.heatmap_figure(_heatmap("Figure 1")), tmp_path / "a.svg").read_bytes()
    b = figures.save(figures.heatmap_figure(_heatmap("Figure 1")), tmp_path / "b.svg").read_bytes()
    assert a == b  # no dates, fixed ids


def test_heads_share_one_colour_scale():
    fig = figures.heads_figure([_heatmap("Head 1"), _heatmap("Head 2")])
    assert len(fig.symseq_axes) == 2
    clims = {ax.images[0].get_clim() for ax in fig.symseq_axes}
    assert len(clims) == 1
    top = max(v.values.max() for v in fig.symseq_views)
    assert clims.pop()[1] == pytest.approx(top)


def test_gradient_paths_come_from_the_ledger():
    c = paths.gradient_path_curves(length=12)
    assert c.lengths == list(range(1, 13))
    with mpmath.workdps(40):
        for f, exact in (("0.8", mpmath.mpf(4) / 5), ("1", mpmath.mpf(1)), ("1.2", mpmath.mpf(6) / 5)):
            for T, y in zip(c.lengths, c.fixed[f]):
                assert abs(y - exact ** (T - 1)) < mpmath.mpf(10) ** -25
        # zero input: every state stays 0 and each transition contributes exactly w_h = 1.2
        for T, y in zip(c.lengths, c.trajectories["0"]):
            assert abs(y - (mpmath.mpf(6) / 5) ** (T - 1)) < mpmath.mpf(10) ** -25
    # input 1: the product of w_h tanh'(z_t) along the real trajectory, computed independently
    h, z = 0.0, []
    for _ in range(12):
        zt = 1.0 + 1.2 * h
        z.append(zt)
        h = np.tanh(zt)
    direct = [1.0] + [float(np.prod([1.2 * (1 - np.tanh(zt) ** 2) for zt in z[1:T]])) for T in range(2, 13)]
    np.testing.assert_allclose([float(y) for y in c.trajectories["1"]], direct, rtol=1e-12)
    assert c.trajectories["1"][0] == 1 and all(a > b for a, b in zip(c.trajectories["1"], c.trajectories["1"][1:]))


def test_gradient_paths_agree_with_torch_autograd():
    torch = pytest.importorskip("torch")
    ours = paths.path_sensitivities(w_h="1.2", w_x=1, x=1, length=8)
    h0 = torch.tensor(np.tanh(1.0), dtype=torch.float64, requires_grad=True)
    h = h0
    for _ in range(7):
        h = torch.tanh(1.0 + 1.2 * h)
    (g,) = torch.autograd.grad(h, h0)
    assert float(ours[-1]) == pytest.approx(abs(g.item()), rel=1e-12)


def test_gradient_paths_figure(tmp_path):
    fig = figures.gradient_paths_figure(paths.gradient_path_curves(length=10))
    left, right = fig.symseq_axes
    assert left.get_yscale() == "log" and right.get_yscale() == "log"
    assert len(left.lines) == 3 and len(right.lines) == 2
    np.testing.assert_allclose(left.lines[2].get_ydata(), 1.2 ** np.arange(10), rtol=1e-12)
    img = mpimg.imread(figures.save(fig, tmp_path / "paths.png"))
    assert img.shape[:2] == (360, 900) and img[..., :3].std() > 0.05


def test_cli_figures(tmp_path, capsys):
    base = ["figure", "--no-bundled", "--path", str(DEMO_PATH), "present-demo"]
    assert main(base + ["Figure 2", "-o", str(tmp_path / "w.png")]) == 0
    assert mpimg.imread(tmp_path / "w.png").shape[2] in (3, 4)
    assert main(base + ["Figure 2", "-o", str(tmp_path / "w.png")]) == 2  # exists: never clobbered
    assert "--force" in capsys.readouterr().err
    assert main(base + ["Figure 2", "-o", str(tmp_path / "w.png"), "--force"]) == 0
    assert main(base + ["heads", "--label", "Head 1", "--label", "Head 2", "-o", str(tmp_path / "h.pdf")]) == 0
    assert main(base + ["gradient-paths", "-o", str(tmp_path / "g.svg")]) == 0
    assert main(base + ["heatmap", "-o", str(tmp_path / "x.png")]) == 2
    assert "choose one with --label" in capsys.readouterr().err
    assert main(base + ["Figure 9", "-o", str(tmp_path / "x.png")]) == 2
    assert "matches none" in capsys.readouterr().err


def test_missing_matplotlib_names_the_extra(monkeypatch, tmp_path, capsys):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(BackendUnavailable, match=r"symseq\[figures\]"):
        figures.heatmap_figure(_heatmap("Figure 2"))
    assert main(["figure", "--no-bundled", "--path", str(DEMO_PATH), "present-demo", "gradient-paths",
                 "-o", str(tmp_path / "g.png")]) == 3  # a missing package is the environment's fault
    assert "pip install 'symseq[figures]'" in capsys.readouterr().err


def test_heads_chosen_for_the_author_are_named(tmp_path, capsys):
    out = tmp_path / "heads.png"
    assert main(["figure", "week06-encoder", "heads", "-o", str(out)]) == 0  # the one section with two heatmaps
    assert "heads: Figure 9; Figure 10 on one colour scale (choose with --label)" in capsys.readouterr().err
    assert out.stat().st_size > 1000
    assert main(["figure", "week06-encoder", "heads", "--label", "Figure 9", "--label", "Figure 10", "-o", str(out),
                 "--force"]) == 0
    assert "choose with --label" not in capsys.readouterr().err


def test_gradient_paths_are_recorded_by_a_section_and_computed_once_on_demand(capsys, tmp_path):
    from symseq import ClaimError, Derivation

    d = demo()
    (spec,) = [x for s in d.sections for x in s.figures]
    assert spec.label.startswith("Figure 3")
    assert spec.curves() is spec.curves() and spec.curves().lengths == list(range(1, 13))
    bad = Derivation("t-paths", title="t", source="t.txt")

    @bad.section("§1")
    def one(s):
        s.gradient_paths("Figure 3", w_h="1.2", slope=2)

    @bad.section("§2")
    def two(s):
        s.gradient_paths("Figure 4", w_h="1.2", length=5)

    assert bad.sections[1].figures[0]._curves is None  # building the section computed nothing

    assert "does not take slope" in bad.sections[0].error and "w_h, w_x" in bad.sections[0].error
    assert main(["figure", "week08-decoder", "gradient-paths", "-o", str(tmp_path / "g.png")]) == 2
    assert "records no gradient-path figure" in capsys.readouterr().err
