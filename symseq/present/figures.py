"""Figures a handout draws: attention heatmaps, per-head comparisons, gradient-path plots.

matplotlib is optional (``pip install 'symseq[figures]'``); without it every
function here raises :class:`~symseq.errors.BackendUnavailable` naming the
extra. Figures are drawn with the object-oriented API on the Agg canvas, so no
global backend is switched and no window opens. The file format follows the
extension: ``.png``, ``.pdf`` or ``.svg``.

* :func:`heatmap_figure` — a score or attention-weight matrix with its values
  annotated (rounded as the spec says) and masked entries hatched with crosses
  (Week 06, handout 004, Figures 9–11: rows are queries, columns sources).
* :func:`heads_figure` — several heatmaps side by side on one colour scale
  (per-head comparisons).
* :func:`gradient_paths_figure` — Week 06 Figure 3: on the left fixed
  transition factors raised to the path length; on the right
  |∂h_{T−1}/∂h_0| along real tanh trajectories, both computed by symbolic
  reverse mode over a small ledger (:mod:`symseq.derive.paths`), on
  logarithmic vertical axes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import BackendUnavailable, ClaimError, ConventionError
from .files import write_atomic

FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}
MASK_FACE = "#d4d4d4"
MASK_HATCH = "#404040"


def _matplotlib():
    """Import matplotlib's Figure and Agg canvas, or raise BackendUnavailable naming the extra."""
    try:
        import matplotlib
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise BackendUnavailable(
            "figures need matplotlib, which is not installed; install the extra: pip install 'symseq[figures]'"
        ) from exc
    return matplotlib, Figure, FigureCanvasAgg


# ---------------------------------------------------------------------------
# heatmaps
# ---------------------------------------------------------------------------


def _norm_for(values: np.ndarray, masked: np.ndarray, vmin=None, vmax=None):
    """(cmap name, vmin, vmax): sequential for nonnegative values (weights), diverging around 0 for scores."""
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


def heatmap_figure(spec, *, vmin=None, vmax=None, annotate: bool = True):
    """A heatmap of a :class:`~symseq.authoring.HeatmapSpec` (rows: queries, columns: sources).

    Values are annotated rounded to the spec's significant digits; masked
    entries (``allowed`` False, or −∞ scores) are grey, hatched with crosses,
    and carry no number. Nonnegative matrices (weights) use a sequential
    scale from 0; scores use a diverging scale centred on 0.

    Returns:
        a matplotlib ``Figure`` (on the Agg canvas).

    Raises:
        BackendUnavailable: without matplotlib.
    """
    from .views import heatmap_view

    _, Figure, Canvas = _matplotlib()
    view = heatmap_view(spec)
    fig = Figure(figsize=_figure_size([view]), dpi=100, layout="constrained")
    Canvas(fig)
    ax = fig.add_subplot()
    cmap, lo, hi = _norm_for(view.values, view.masked, vmin, vmax)
    im = _draw_heatmap(ax, view, cmap, lo, hi, annotate)
    fig.colorbar(im, ax=ax, shrink=0.8)
    fig.symseq_views = [view]
    fig.symseq_axes = [ax]
    return fig


def heads_figure(specs, *, annotate: bool = True, title: str = ""):
    """Heatmaps side by side on one shared colour scale (a per-head comparison) with one colour bar.

    Raises:
        ClaimError: for an empty list of heatmaps.
        BackendUnavailable: without matplotlib.
    """
    from .views import heatmap_view, mathtext_label

    if not specs:
        raise ClaimError("a per-head comparison needs at least one heatmap")
    _, Figure, Canvas = _matplotlib()
    views = [heatmap_view(s) for s in specs]
    allv = np.concatenate([v.values[~v.masked & np.isfinite(v.values)] for v in views])
    cmap, lo, hi = _norm_for(allv.reshape(1, -1), np.zeros((1, allv.size), dtype=bool))
    fig = Figure(figsize=_figure_size(views, 1.3), dpi=100, layout="constrained")
    Canvas(fig)
    axes = fig.subplots(1, len(views), squeeze=False)[0]
    im = None
    for ax, v in zip(axes, views):
        im = _draw_heatmap(ax, v, cmap, lo, hi, annotate)
    fig.colorbar(im, ax=list(axes), shrink=0.8)
    if title:
        fig.suptitle(mathtext_label(title))
    fig.symseq_views = views
    fig.symseq_axes = list(axes)
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


def gradient_paths_figure(curves):
    """Week 06 Figure 3 as a two-panel figure on logarithmic vertical axes.

    Left: fixed transition factors raised to the number of transitions T − 1.
    Right: |∂h_{T−1}/∂h_0| against the sequence length T along tanh
    trajectories with constant inputs. ``curves`` is a
    :class:`~symseq.derive.paths.PathCurves` (computed by
    :func:`~symseq.derive.paths.gradient_path_curves`), or a
    :class:`~symseq.authoring.GradientPathsSpec` that a section records.

    Raises:
        BackendUnavailable: without matplotlib.
    """
    _, Figure, Canvas = _matplotlib()
    c = curves.curves() if hasattr(curves, "curves") else curves
    fig = Figure(figsize=(9.0, 3.6), dpi=100, layout="constrained")
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


def save(fig, path, *, force: bool = False, inputs=()) -> Path:
    """Write ``fig`` to ``path`` in the format its extension names (.png, .pdf, .svg), atomically.

    PDF and SVG carry no creation date, so the same figure gives the same bytes.

    Raises:
        ConventionError: for another extension.
        SymseqError: when the file exists and ``force`` is false, or is not a regular file, or is one of
            ``inputs`` (:func:`symseq.present.files.write_atomic`).
        FileSystemError: when the folder cannot be created or written.
    """
    fmt = figure_format(path)
    matplotlib, _, _ = _matplotlib()
    metadata = {"Software": None} if fmt == "png" else ({"CreationDate": None, "Creator": None, "Producer": None}
                                                       if fmt == "pdf" else {"Date": None, "Creator": None})
    with matplotlib.rc_context({"svg.hashsalt": "symseq", "pdf.compression": 6}):
        return write_atomic(path, lambda f: fig.savefig(f, format=fmt, metadata=metadata), force=force, binary=True,
                            inputs=inputs)
