"""Heatmaps of attention probabilities (from `mtbert attention`): one figure
per grid of layers and heads, query tokens down, key tokens across, one color
scale shared by the figure's panels."""
import math
import textwrap

import matplotlib.pyplot as plt

from .figure_files import plain

MAX_FIGURE_INCHES = 36


def _shorten(text, limit=70):
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def _layout(grid):
    """(rows, columns) of panels: layers x heads when both vary, else the
    panels wrapped into a near-square block."""
    if len(grid.layers) > 1 and len(grid.heads) > 1:
        return len(grid.layers), len(grid.heads)
    n = len(grid.layers) * len(grid.heads)
    columns = math.ceil(math.sqrt(n))
    return math.ceil(n / columns), columns


def plot_attention_grid(maps, grid):
    n = len(maps.tokens)
    panels = [(layer, head) for layer in grid.layers for head in grid.heads]
    rows, columns = _layout(grid)
    # Panels grow with the tokens so that their labels stay legible, within a
    # figure a screen or a page can still take.
    cell = min(max(2.8, 0.15 * n + 1.2), MAX_FIGURE_INCHES / max(rows, columns))
    fig, axes = plt.subplots(rows, columns, figsize=(columns * cell + 1.2, rows * cell + 0.9), squeeze=False,
                             layout="constrained")
    labels = [plain(token) for token in maps.tokens]
    font = min(9.0, max(3.0, 0.5 * (cell - 0.8) * 72 / n))  # half the space of a token, in points
    vmax = max(float(maps.attentions[layer, head].max()) for layer, head in panels)
    image = None
    for index, ax in enumerate(axes.flat):
        if index >= len(panels):
            ax.axis("off")
            continue
        layer, head = panels[index]
        image = ax.imshow(maps.attentions[layer, head], cmap="viridis", vmin=0.0, vmax=vmax, interpolation="nearest")
        ax.set_title(plain(f"{maps.layers[layer]}, head {head}"), fontsize=10)
        row, column = divmod(index, columns)
        ax.set_yticks(range(n), labels if column == 0 else [], fontsize=font)
        # Token labels under the lowest panel of each column.
        lowest = index + columns >= len(panels)
        ax.set_xticks(range(n), labels if lowest else [], fontsize=font, rotation=90)
        if column == 0:
            ax.set_ylabel("query token")
        if lowest:
            ax.set_xlabel("key token")
    fig.colorbar(image, ax=axes, shrink=min(1.0, 0.5 + 0.25 * rows), label="attention probability")
    text = repr(_shorten(maps.text)) + ("" if maps.text2 is None else f" / {_shorten(str(maps.text2))!r}")
    # Wrapped to the figure's width (about 9 title characters an inch): a
    # run folder's path would run off a narrow figure.
    title = f"Attention of {maps.model or maps.path.name}: {text}"
    fig.suptitle(plain(textwrap.fill(title, width=max(30, int(9 * fig.get_figwidth())))))
    return fig
