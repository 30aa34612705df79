"""Figures a handout draws: attention heatmaps, per-head comparisons, gradient-path plots.

matplotlib is optional (``pip install 'symseq[figures]'``); without it every
function here raises :class:`~symseq.errors.BackendUnavailable` naming the
extra. Figures are drawn with the object-oriented API on the Agg canvas, so no
global backend is switched and no window opens. The file format follows the
extension: ``.png``, ``.pdf`` or ``.svg``; ``dpi=`` sets a PNG's resolution
(default 100). Layout is matplotlib's own, which keeps every label, tick
label, title and colour bar inside the figure: ``layout="compressed"`` (the
constrained layout for grids of fixed-aspect ``ax.imshow`` panels; plain
``"constrained"`` lets the row labels of the first of six or more heatmap
panels run off the left edge) with ``fig.colorbar``, and ``"constrained"``
for the line plots.

* :func:`heatmap_figure` — a score or attention-weight matrix with its values
  annotated (rounded as the spec says) and masked entries hatched with crosses
  (Week 06, handout 004, Figures 9–11: rows are queries, columns sources).
* :func:`heads_figure` — several heatmaps side by side (per-head
  comparisons), one colour scale and colour bar per kind of quantity:
  attention weights on 0..1, scores on their own diverging range.
* :func:`gradient_paths_figure` — Week 06 Figure 3: on the left fixed
  transition factors raised to the path length; on the right
  |∂h_{T−1}/∂h_0| along real tanh trajectories, both computed by symbolic
  reverse mode over a small ledger (:mod:`symseq.derive.paths`), on
  logarithmic vertical axes.
"""

from __future__ import annotations

import math
import numbers
from pathlib import Path

import numpy as np

from ..errors import ClaimError, ConventionError, import_optional
from .files import write_atomic

FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}
MASK_FACE = "#d4d4d4"
MASK_HATCH = "#404040"
DPI = 100  # the default resolution (dots per inch) of PNG output; PDF and SVG are vector graphics
DPI_RANGE = (10, 1200)


def _matplotlib():
    """Import matplotlib's Figure and Agg canvas, or raise BackendUnavailable naming the extra
    (:func:`symseq.errors.import_optional`)."""
    matplotlib = import_optional("matplotlib", needed_by="drawing a figure",
                                 otherwise="every other symseq command works without it")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    return matplotlib, Figure, FigureCanvasAgg


# ---------------------------------------------------------------------------
# heatmaps
# ---------------------------------------------------------------------------


def check_dpi(dpi) -> float:
    """The resolution in dots per inch, a number from :data:`DPI_RANGE`; raises ConventionError otherwise."""
    ok = isinstance(dpi, numbers.Real) and not isinstance(dpi, bool) and math.isfinite(dpi)
    if not ok or not DPI_RANGE[0] <= dpi <= DPI_RANGE[1]:
        raise ConventionError(f"a figure's resolution is a number of dots per inch from {DPI_RANGE[0]} to "
                              f"{DPI_RANGE[1]}, got {dpi!r}; pass e.g. dpi=200 (--dpi 200) for a printed handout")
    return float(dpi)


def quantity_kind(values: np.ndarray, masked: np.ndarray) -> str:
    """``"weights"`` when every row's unmasked entries are nonnegative and sum to 1 (attention weights, a
    row softmax; a fully masked row is allowed), ``"scores"`` otherwise.

    Each kind gets a colour scale of its own (:func:`colour_scale`): weights 0..1, scores their own range.
    """
    for row, gone in zip(values, masked):
        kept = row[~gone & np.isfinite(row)]
        if kept.size and (kept.min() < 0 or abs(kept.sum() - 1.0) > 1e-9 * max(1, kept.size)):
            return "scores"
    return "weights"


def _bar_label(kind: str, views) -> str:
    """The colour bar's label: attention weight, score (a queries × sources matrix), or value."""
    if kind == "weights":
        return "attention weight"
    return "score" if all(_is_attention(v) for v in views) else "value"


def colour_scale(kind: str, values: np.ndarray, masked: np.ndarray, vmin=None, vmax=None):
    """(colour map name, vmin, vmax) for a kind of quantity (:func:`quantity_kind`).

    Attention weights: sequential ``Blues`` on the fixed probability range 0..1, so that two weight panels
    compare and a weight of 0.5 always has the same colour. Scores: diverging ``RdBu_r`` centred on 0 over
    ±(largest magnitude) when any is negative, else sequential from 0 to the largest. ``vmin``/``vmax``
    replace the ends the values give (scores only; weights stay on 0..1 unless both are given).
    """
    if kind == "weights":
        return "Blues", (0.0 if vmin is None else vmin), (1.0 if vmax is None else vmax)
    finite = values[~masked & np.isfinite(values)]
    lo = float(finite.min()) if finite.size else 0.0
    hi = float(finite.max()) if finite.size else 1.0
    if vmin is not None:
        lo = vmin
    if vmax is not None:
        hi = vmax
    if lo >= 0:
        return "Blues", 0.0, max(hi, 1e-12)
    bound = max(abs(lo), abs(hi), 1e-12)
    return "RdBu_r", -bound, bound


def _cell_inches(view) -> float:
    """Width of one cell, wide enough for its longest annotation at 8 points."""
    longest = max((len(c.text.text) for row in view.cells for c in row if not c.masked), default=1)
    return max(0.55, 0.075 * longest + 0.15)


def _is_attention(view) -> bool:
    """Rows and columns are the same positions (queries × sources), as in a score or weight matrix."""
    return list(view.rows) == list(view.cols)


def _figure_size(views, extra_width: float = 1.6) -> tuple[float, float]:
    width = sum(_cell_inches(v) * v.values.shape[1] for v in views) + extra_width * len(views)
    height = max(0.45 * v.values.shape[0] for v in views) + 1.6
    return max(width, 4.5), height


def _draw_heatmap(ax, view, cmap_name, vmin, vmax, annotate=True):
    import textwrap

    from matplotlib.patches import Rectangle

    from .views import mathtext_label

    m, n = view.values.shape
    data = np.ma.masked_array(np.where(np.isfinite(view.values), view.values, 0.0), mask=view.masked)
    import matplotlib

    cmap = matplotlib.colormaps[cmap_name].with_extremes(bad=MASK_FACE)
    cell = _cell_inches(view)
    im = ax.imshow(data, cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest", aspect=0.45 / cell)
    for i in range(m):
        for j in range(n):
            if view.masked[i, j]:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=MASK_FACE, edgecolor=MASK_HATCH,
                                       hatch="xx", linewidth=0.0))
            elif annotate:
                t = (view.values[i, j] - vmin) / (vmax - vmin) if vmax > vmin else 0.5
                dark = t > 0.6 if cmap_name == "Blues" else abs(t - 0.5) > 0.3
                ax.text(j, i, view.cells[i][j].text.text.replace("-", "\u2212"), ha="center", va="center",
                        fontsize=8 if n <= 8 else 6, color="white" if dark else "black")
    cols = [mathtext_label(c) for c in view.cols]
    tilt = max(len(str(c)) for c in view.cols) * 0.07 > cell
    ax.set_xticks(range(n), cols, rotation=45 if tilt else 0, ha="right" if tilt else "center", fontsize=8)
    ax.set_yticks(range(m), [mathtext_label(r) for r in view.rows], fontsize=8)
    if _is_attention(view):
        ax.set_xlabel("source")
        ax.set_ylabel("query")
    title = mathtext_label(view.title)
    if "$" not in title:  # wrapping inside mathtext would break it
        title = "\n".join(textwrap.wrap(title, max(20, int((cell * n + 1.0) * 11))))
    ax.set_title(title, fontsize=10)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(m - 0.5, -0.5)
    return im


def heatmap_figure(spec, *, vmin=None, vmax=None, annotate: bool = True, dpi: float = DPI):
    """A heatmap of a :class:`~symseq.authoring.HeatmapSpec` (rows: queries, columns: sources).

    Values are annotated rounded to the spec's significant digits; masked
    entries (``allowed`` False, or −∞ scores) are grey, hatched with crosses,
    and carry no number. Attention weights (rows summing to 1) use a
    sequential scale on 0..1; scores a diverging scale centred on 0
    (:func:`colour_scale`). The colour bar is labelled with the kind.

    Args:
        spec: the heatmap a section records (an m×n matrix node, its labels and mask).
        vmin, vmax: ends of the colour scale instead of those of the kind.
        annotate: print each entry's rounded value in its cell.
        dpi: dots per inch of the PNG (10 to 1200; the layout, in inches, does not change).

    Returns:
        a matplotlib ``Figure`` (on the Agg canvas, ``layout="compressed"``).

    Raises:
        BackendUnavailable: without matplotlib.
        ConventionError: for a ``dpi`` outside 10..1200.
    """
    from .views import heatmap_view

    dpi = check_dpi(dpi)
    _, Figure, Canvas = _matplotlib()
    view = heatmap_view(spec)
    fig = Figure(figsize=_figure_size([view]), dpi=dpi, layout="compressed")
    Canvas(fig)
    ax = fig.add_subplot()
    kind = quantity_kind(view.values, view.masked)
    cmap, lo, hi = colour_scale(kind, view.values, view.masked, vmin, vmax)
    im = _draw_heatmap(ax, view, cmap, lo, hi, annotate)
    fig.colorbar(im, ax=ax, shrink=0.8, label=_bar_label(kind, [view]))
    fig.symseq_views = [view]
    fig.symseq_axes = [ax]
    fig.symseq_kinds = [kind]
    return fig


def heads_figure(specs, *, annotate: bool = True, title: str = "", dpi: float = DPI):
    """Heatmaps side by side (a per-head comparison), one colour scale and one colour bar per kind of quantity.

    The panels of one kind (:func:`quantity_kind`) share a scale: every
    attention-weight panel is drawn on 0..1, every score panel on the
    diverging range of all the scores shown; each kind has its own colour
    bar beside its last panel, so weights next to scores (Week 06, handout
    004, Figures 9 and 10) are not washed out by the scores' range.

    Args:
        specs: one or more :class:`~symseq.authoring.HeatmapSpec`, drawn left to right.
        annotate: print each entry's rounded value in its cell.
        title: a title above all panels.
        dpi: dots per inch of the PNG (10 to 1200).

    Raises:
        ClaimError: for an empty list of heatmaps.
        BackendUnavailable: without matplotlib.
        ConventionError: for a ``dpi`` outside 10..1200.
    """
    from .views import heatmap_view, mathtext_label

    if not specs:
        raise ClaimError("a per-head comparison needs at least one heatmap")
    dpi = check_dpi(dpi)
    _, Figure, Canvas = _matplotlib()
    views = [heatmap_view(s) for s in specs]
    kinds = [quantity_kind(v.values, v.masked) for v in views]
    scales = {}
    for kind in dict.fromkeys(kinds):
        same = [v for v, k in zip(views, kinds) if k == kind]
        vals = np.concatenate([v.values[~v.masked & np.isfinite(v.values)] for v in same])
        scales[kind] = colour_scale(kind, vals, np.zeros(vals.shape, dtype=bool))
    fig = Figure(figsize=_figure_size(views, 1.3 + 0.4 * (len(scales) - 1)), dpi=dpi, layout="compressed")
    Canvas(fig)
    axes = list(fig.subplots(1, len(views), squeeze=False)[0])
    images = {}
    for ax, v, kind in zip(axes, views, kinds):
        images[kind] = _draw_heatmap(ax, v, *scales[kind], annotate)
    for kind, im in images.items():
        same = [i for i, k in enumerate(kinds) if k == kind]
        fig.colorbar(im, ax=[axes[i] for i in same], shrink=0.8, label=_bar_label(kind, [views[i] for i in same]))
    if title:
        fig.suptitle(mathtext_label(title))
    fig.symseq_views = views
    fig.symseq_axes = axes
    fig.symseq_kinds = kinds
    return fig


def cell_pixels(fig, ax_index: int = 0, frac: float = 0.0) -> list:
    """Pixel (x, y) of every cell (i, j) of a heatmap axis in the saved PNG (origin top left), as rows.

    For tests and tools that read a figure back: call it right after saving
    the PNG, since each save lays the figure out again and the positions are
    those of the last layout. ``frac`` moves from each cell's centre towards
    its lower-left corner (0 to 0.5).
    """
    ax = fig.symseq_axes[ax_index]
    m, n = fig.symseq_views[ax_index].values.shape
    height = fig.bbox.height
    out = []
    for i in range(m):
        row = []
        for j in range(n):
            x, y = ax.transData.transform((j - frac, i + frac))
            row.append((int(round(x)), int(round(height - y))))
        out.append(row)
    return out


# ---------------------------------------------------------------------------
# gradient paths (Week 06 Figure 3)
# ---------------------------------------------------------------------------


def gradient_paths_figure(curves, *, dpi: float = DPI):
    """Week 06 Figure 3 as a two-panel figure on logarithmic vertical axes.

    Left: fixed transition factors raised to the number of transitions T − 1.
    Right: |∂h_{T−1}/∂h_0| against the sequence length T along tanh
    trajectories with constant inputs. ``curves`` is a
    :class:`~symseq.derive.paths.PathCurves` (computed by
    :func:`~symseq.derive.paths.gradient_path_curves`), or a
    :class:`~symseq.authoring.GradientPathsSpec` that a section records.

    ``dpi`` is the PNG's dots per inch (10 to 1200).

    Raises:
        BackendUnavailable: without matplotlib.
        ConventionError: for a ``dpi`` outside 10..1200.
    """
    dpi = check_dpi(dpi)
    _, Figure, Canvas = _matplotlib()
    c = curves.curves() if hasattr(curves, "curves") else curves
    fig = Figure(figsize=(9.0, 3.6), dpi=dpi, layout="constrained")
    Canvas(fig)
    left, right = fig.subplots(1, 2)
    steps = [T - 1 for T in c.lengths]
    for label, ys in c.fixed.items():
        left.plot(steps, [float(y) for y in ys], marker="o", markersize=2.5, label=f"factor {label}")
    left.set_yscale("log")
    left.set_xlabel("number of transitions")
    left.set_ylabel("|factor|$^{\\,k}$")
    left.set_title("fixed transition factors")
    left.legend(fontsize=8)
    for label, ys in c.trajectories.items():
        right.plot(c.lengths, [float(y) for y in ys], marker="o", markersize=2.5, label=f"$x_t = {label}$")
    right.set_yscale("log")
    right.set_xlabel("sequence length $T$")
    right.set_ylabel(r"$|\partial h_{T-1} / \partial h_0|$")
    right.set_title(f"tanh trajectories, $w_h = {c.params['w_h']}$, $w_x = {c.params['w_x']}$")
    right.legend(fontsize=8)
    for ax in (left, right):
        ax.grid(True, which="major", alpha=0.3)
    fig.symseq_axes = [left, right]
    fig.symseq_curves = c
    return fig


# ---------------------------------------------------------------------------
# saving
# ---------------------------------------------------------------------------


def figure_format(path) -> str:
    """The format a file name asks for: ``png``, ``pdf`` or ``svg``.

    Raises:
        ConventionError: for any other extension.
    """
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise ConventionError(f"cannot tell the figure format from {Path(path).name!r}: "
                              f"use a .png, .pdf or .svg file name")
    return fmt


def save(fig, path, *, force: bool = False, mkdir: bool = False, inputs=()) -> Path:
    """Write ``fig`` to ``path`` in the format its extension names (.png, .pdf, .svg), atomically.

    PDF and SVG carry no creation date, so the same figure gives the same bytes. A PNG has the figure's own
    resolution (``dpi=`` of the function that drew it), whatever ``savefig.dpi`` a matplotlibrc sets.

    Raises:
        ConventionError: for another extension.
        SymseqError: when the file exists and ``force`` is false, or is not a regular file, or is one of
            ``inputs``, or its folder is missing and ``mkdir`` is false (:func:`symseq.present.files.check_target`).
        FileSystemError: when the folder cannot be created or written.
    """
    fmt = figure_format(path)
    matplotlib, _, _ = _matplotlib()
    metadata = {"Software": None} if fmt == "png" else ({"CreationDate": None, "Creator": None, "Producer": None}
                                                       if fmt == "pdf" else {"Date": None, "Creator": None})
    with matplotlib.rc_context({"svg.hashsalt": "symseq", "pdf.compression": 6}):
        return write_atomic(path, lambda f: fig.savefig(f, format=fmt, metadata=metadata, dpi="figure"),
                            force=force, mkdir=mkdir, binary=True, inputs=inputs)
