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
    assert len(fig.symseq_axes) == 2 and fig.symseq_kinds == ["weights", "weights"]
    clims = {ax.images[0].get_clim() for ax in fig.symseq_axes}
    assert clims == {(0.0, 1.0)}  # weights of every head on the probability scale
    bars = [ax for ax in fig.axes if ax not in fig.symseq_axes]
    assert len(bars) == 1 and bars[0].get_ylabel() == "attention weight"


def _encoder_heatmaps():
    from symseq.authoring import bundled

    (d,) = [d for d in bundled() if d.name == "week06-encoder"]
    return [x for s in d.sections for x in s.displays if isinstance(x, HeatmapSpec)]


def test_heads_put_scores_and_weights_on_scales_of_their_own(tmp_path):
    """Week 06 Figures 9 (scaled scores) and 10 (their row softmax): each kind has its own scale and colour bar,
    so the weights panel is not washed out by the scores' range (it used to span 9% of one shared scale)."""
    specs = [x for x in _encoder_heatmaps() if x.label in ("Figure 9", "Figure 10")]
    fig = figures.heads_figure(specs)
    scores, weights = fig.symseq_axes
    assert fig.symseq_kinds == ["scores", "weights"]
    lo, hi = scores.images[0].get_clim()
    assert lo == -hi and hi == pytest.approx(np.abs(fig.symseq_views[0].values).max())  # ±1.34, centred on 0
    assert weights.images[0].get_clim() == (0.0, 1.0)
    bars = [ax for ax in fig.axes if ax not in fig.symseq_axes]
    assert sorted(b.get_ylabel() for b in bars) == ["attention weight", "score"]
    # read back from the image: the weight 0.291 (query and source 1: journey) is filled with Blues(0.291)
    img = mpimg.imread(figures.save(fig, tmp_path / "heads.png"))
    x, y = figures.cell_pixels(fig, 1, frac=0.3)[1][1]
    view = fig.symseq_views[1]
    assert view.values[1, 1] == pytest.approx(0.291, abs=5e-4)  # printed 0.291 in the figure
    np.testing.assert_allclose(_window(img, x, y).reshape(-1, 3).mean(axis=0),
                               matplotlib.colormaps["Blues"](view.values[1, 1])[:3], atol=0.02)
    lo, hi = weights.images[0].get_clim()
    assert (view.values.max() - view.values.min()) / (hi - lo) > 0.2  # 24% of its scale; 9% of the shared one


def test_quantity_kinds():
    w = np.array([[1.0, 0.0], [0.25, 0.75]])
    assert figures.quantity_kind(w, np.zeros((2, 2), bool)) == "weights"
    assert figures.quantity_kind(np.array([[0.5, 0.6]]), np.zeros((1, 2), bool)) == "scores"  # sums to 1.1
    assert figures.quantity_kind(np.array([[-0.5, 1.5]]), np.zeros((1, 2), bool)) == "scores"  # negative
    masked = np.array([[False, True], [True, True]])  # a fully masked row is allowed
    assert figures.quantity_kind(np.array([[1.0, 9.0], [0.0, 0.0]]), masked) == "weights"


def test_dpi_sets_the_png_resolution(tmp_path, capsys):
    spec = _heatmap("Figure 2")
    for dpi in (50, 250):
        fig = figures.heatmap_figure(spec, dpi=dpi)
        img = mpimg.imread(figures.save(fig, tmp_path / f"w{dpi}.png"))
        assert img.shape[:2] == tuple(np.floor(fig.get_size_inches()[::-1] * dpi).astype(int))  # whole pixels
    img = mpimg.imread(figures.save(figures.gradient_paths_figure(paths.gradient_path_curves(length=4), dpi=200),
                                    tmp_path / "g.png"))
    assert img.shape[:2] == (720, 1800)
    for bad in (0, 5, 5000, float("nan"), True, "300"):
        with pytest.raises(ConventionError, match=r"dots per inch from 10 to 1200, got .*dpi=200"):
            figures.heads_figure([spec], dpi=bad)
    base = ["figure", "--no-bundled", "--path", str(DEMO_PATH), "present-demo", "Figure 2"]
    assert main(base + ["-o", str(tmp_path / "a.png")]) == 0
    assert main(base + ["-o", str(tmp_path / "b.png"), "--dpi", "300"]) == 0
    a, b = mpimg.imread(tmp_path / "a.png"), mpimg.imread(tmp_path / "b.png")
    assert b.shape[:2] == (3 * a.shape[0], 3 * a.shape[1])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main(base + ["-o", str(tmp_path / "c.png"), "--dpi", "0"])
    assert exc.value.code == 2
    assert "--dpi: expected a number of dots per inch from 10 to 1200 (e.g. 300), got '0'" in capsys.readouterr().err


def test_a_matplotlibrc_savefig_dpi_does_not_change_the_png(tmp_path):
    fig = figures.heatmap_figure(_heatmap("Figure 2"))
    with matplotlib.rc_context({"savefig.dpi": 300}):
        img = mpimg.imread(figures.save(fig, tmp_path / "w.png"))
    assert fig.dpi == 100 and img.shape[:2] == tuple(np.floor(fig.get_size_inches()[::-1] * 100).astype(int))


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
    assert "heads: Figure 9; Figure 10 side by side, one colour scale per kind (choose with --label)" \
        in capsys.readouterr().err
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


def _undrawn_ticks(fig) -> set:
    """ids of the artists of ticks outside their axis's view (matplotlib keeps them but does not draw them)."""
    ids = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            scale = axis.get_transform()  # compare in scaled coordinates: log axes too
            lo, hi = sorted(scale.transform(np.array(axis.get_view_interval(), dtype=float)))
            tol = 1e-9 * max(1.0, hi - lo)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not lo - tol <= scale.transform(np.array([tick.get_loc()], dtype=float))[0] <= hi + tol:
                    ids.update(id(a) for a in tick.findobj())
    return ids


def outside_the_figure(fig):
    """(artists drawn outside the figure's bbox, kinds of artist checked) after drawing ``fig``: every visible
    artist with an extent (texts, tick labels, titles, colour bars and their labels, images, patches, lines)."""
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box, skip = fig.bbox, _undrawn_ticks(fig)
    out, kinds = [], set()
    for a in fig.findobj():
        if a is fig or a is fig.patch or id(a) in skip or not a.get_visible():
            continue
        if isinstance(a, Text) and not a.get_text().strip():
            continue
        e = a.get_window_extent(renderer)
        if e.width == 0 and e.height == 0:
            continue
        kinds.add(type(a).__name__)
        if e.x0 < box.x0 - 1e-6 or e.y0 < box.y0 - 1e-6 or e.x1 > box.x1 + 1e-6 or e.y1 > box.y1 + 1e-6:
            out.append((type(a).__name__, a.get_text() if isinstance(a, Text) else "", e.extents.round(1).tolist()))
    return out, kinds


def _every_figure(d):
    """(what, draw(dpi)) for each figure kind a derivation records: each heatmap alone, the heatmaps of each
    section that records several side by side, all of them side by side, and each gradient-path figure."""
    from symseq.authoring import GradientPathsSpec

    by_section = [[x for x in s.displays if isinstance(x, HeatmapSpec)] for s in d.sections]
    every = [x for group in by_section for x in group]
    out = [(f"{d.name} {x.label}", lambda dpi, x=x: figures.heatmap_figure(x, dpi=dpi)) for x in every]
    out += [(f"{d.name} heads {[x.label for x in g]}", lambda dpi, g=g: figures.heads_figure(g, dpi=dpi))
            for g in by_section if len(g) > 1]
    if len(every) > 1:
        out.append((f"{d.name} heads (all)", lambda dpi: figures.heads_figure(every, dpi=dpi)))
    out += [(f"{d.name} {x.label}", lambda dpi, x=x: figures.gradient_paths_figure(x, dpi=dpi))
            for s in d.sections for x in s.figures if isinstance(x, GradientPathsSpec)]
    return out


def test_nothing_is_clipped_in_any_figure_of_the_bundled_derivations():
    """Every label, tick label, title, annotation and colour bar of every figure kind of every bundled
    derivation (and the demo) lies inside the figure, at 100 dpi (a section's heads at 300 too). Seven heatmaps
    side by side under plain "constrained" layout ran the first panel's row labels 12 pixels off the left edge.
    Building the derivations takes most of the time; the rest of the suite shares them."""
    from symseq.authoring import bundled

    drawn = []
    for d in [demo()] + bundled():
        for what, draw in _every_figure(d):
            for dpi in (100, 300) if "heads [" in what else (100,):  # a section's heads at print resolution too
                fig = draw(dpi)
                out, kinds = outside_the_figure(fig)
                assert not out, (what, dpi, out)
                assert {"Text", "Spine", "AxesImage" if hasattr(fig, "symseq_views") else "Line2D"} <= kinds, what
                drawn.append(what)
    assert len([w for w in drawn if "heads (all)" in w]) == 3  # demo, handout 11, Week 06 encoder
    assert len([w for w in drawn if "heads [" in w]) == 4  # demo and Week 06 encoder, at 100 and 300 dpi
    assert any("Figure 3" in w for w in drawn) and any("Figure 11" in w for w in drawn)


def test_the_clipping_check_sees_what_leaves_the_figure():
    fig = figures.heatmap_figure(_heatmap("Figure 2"))
    assert outside_the_figure(fig)[0] == []
    fig.symseq_axes[0].set_title("a title far too long to fit " * 8)  # no wrapping: runs off both sides
    out, _ = outside_the_figure(fig)
    assert [kind for kind, _, _ in out] == ["Text"]
    fig = figures.gradient_paths_figure(paths.gradient_path_curves(length=4))
    fig.symseq_axes[0].set_ylabel("a vertical label taller than the figure " * 4)
    assert any(t.startswith("a vertical label") for _, t, _ in outside_the_figure(fig)[0])


def test_a_label_with_code_is_monospace_mathtext_and_draws(tmp_path):
    """Code in a label (``clip_grad_norm_``, ``torch.nn.utils``) is set as mathtext monospace with its marks
    escaped; matplotlib has no \\texttt (and the label once raised NameError)."""
    import matplotlib.pyplot as plt

    from symseq.present.views import mathtext_label

    label = mathtext_label("clip_grad_norm_ of torch.nn.utils, a~b")
    assert label.startswith(r"$\mathtt{clip\_grad\_norm\_}$ of $\mathtt{torch.nn.utils}$")
    fig, ax = plt.subplots()
    ax.set_title(label)
    fig.savefig(tmp_path / "label.png")  # mathtext parses it
    plt.close(fig)
    assert (tmp_path / "label.png").stat().st_size > 0
