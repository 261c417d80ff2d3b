"""Drawings of computation graphs with Graphviz, and a step-through of backward.

`draw(y)` walks the graph from `y` back to its leaves and writes it as DOT text:
Variables are boxes, BackwardNodes are ellipses, and edges follow the data forward
(input -> node -> output), so backward reads the drawing against the arrows.
Graphviz's `dot` program turns that text into SVG, PNG or PDF.

Node ids come from the order of the walk (v0, f1, ...), never from `id()`, so the same
program writes the same DOT text, and `dot` the same SVG, every run.

In Jupyter a drawing offers SVG and PNG: a notebook opened untrusted (JupyterLab will
not show an SVG it did not make itself), GitHub and VS Code show the PNG. Both are at
most `MAX_WIDTH_INCHES` wide, so a drawing fits a notebook cell or a README.
"""

from __future__ import annotations

import base64
import html
import io
import os
import threading
import weakref
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import graphviz
import numpy as np

from minigrad.autodiff import graph as autodiff_graph
from minigrad.core.checks import check_flag, check_iterable
from minigrad.core.grad_mode import QUIET, Listener, state
from minigrad.core.variable import AccumulateGrad, Variable

INSTALL_GRAPHVIZ = (
    "Graphviz's `dot` program was not found on PATH, so this drawing cannot be rendered "
    "(its DOT text is still available as `.source`). Install Graphviz, then restart the "
    "kernel: Debian/Ubuntu `sudo apt-get install graphviz`; macOS `brew install graphviz`; "
    "conda `conda install -c conda-forge graphviz`. (`make lab` and `make test` install it "
    "when run as root.)"
)

FORMATS = ("svg", "png", "pdf", "dot")
RANKDIRS = ("LR", "RL", "TB", "BT")

# How big a drawing gets. Graphviz's `size` shrinks (never grows) a drawing to fit this many
# inches: 9 inches is 864 CSS pixels, about a notebook cell or a README. Tall drawings are
# fine (pages scroll); the height limit only keeps a huge graph's PNG within bounds.
MAX_WIDTH_INCHES = 9
MAX_HEIGHT_INCHES = 100
# Rasters are drawn at 144 dpi, twice the 72 points per inch of the SVG, and shown at the
# SVG's size: sharp on high-density screens. With a 256-colour palette a typical lesson
# drawing is tens of KB.
PNG_DPI = 144

# Fill and border colours, one pair per kind of box.
STYLE = {
    "leaf": ("#d0ebff", "#1c7ed6"),  # a leaf that requires grad: what training changes
    "constant": ("#f1f3f5", "#868e96"),  # a leaf that takes no gradient (data, constants)
    "output": ("#d3f9d8", "#2f9e44"),  # what draw() was asked about
    "value": ("#ffffff", "#495057"),  # an intermediate result
    "function": ("#fff3bf", "#e67700"),  # a BackwardNode
    "saved": ("#ffe8cc", "#e8590c"),  # a value a node saved for its backward
    "summary": ("#f8f9fa", "#adb5bd"),  # what max_nodes left out
}
GRAD_COLOUR = "#c92a2a"
MUTED = "#868e96"
CURRENT = ("#ffc9c9", "#e03131")  # the node backward is running, in a step drawing


class GraphvizNotFoundError(RuntimeError):
    """Rendering needs Graphviz's `dot` program, and it is not installed."""


# --------------------------------------------------------------------------- the drawing


class _Layout(NamedTuple):
    """The shape of a drawing, by node id, for strip(): the nodes, the edges that rank them
    (tail, head), and the node that comes first along the ranks and the one that comes last
    (the deepest input and the output)."""

    ids: list[str]
    edges: list[tuple[str, str]]
    first: str
    last: str


class Drawing:
    """A drawn graph: DOT text in `.source`; `.svg()`, `.png()` and `.save(path)` render it.

    In Jupyter it shows as SVG, with a PNG beside it for places that will not show SVG;
    its plain-text form is a one-line summary, the same every run.
    """

    def __init__(
        self,
        statements: list[str],
        graph_attrs: dict[str, str],
        nodes: int,
        edges: int,
        title: str = "",
        layout: _Layout | None = None,
    ) -> None:
        self._statements = statements
        self._graph_attrs = graph_attrs
        self.node_count = nodes
        self.edge_count = edges
        self.title = title
        # How strip() places it as a frame; None for a strip, which cannot go in a strip.
        self._layout = layout
        self._svg: str | None = None
        self._png: bytes | None = None

    @property
    def source(self) -> str:
        """The DOT text of the drawing."""
        return _dot_text(self._statements, self._graph_attrs)

    def svg(self) -> str:
        """The drawing rendered as SVG text (needs Graphviz's `dot`)."""
        if self._svg is None:
            self._svg = _render(self.source, "svg").decode("utf-8")
        return self._svg

    def png(self) -> bytes:
        """The drawing rendered as PNG bytes at `PNG_DPI` (needs Graphviz's `dot`)."""
        if self._png is None:
            sharp = dict(self._graph_attrs, dpi=str(PNG_DPI))
            self._png = _fewer_colours(_render(_dot_text(self._statements, sharp), "png"))
        return self._png

    def save(self, path: str | Path) -> Path:
        """Write the drawing to `path`; its suffix (.svg, .png, .pdf, .dot) picks the format."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(
                f"save() takes a file path such as 'graph.svg' (a str or pathlib.Path); got "
                f"{type(path).__name__}."
            )
        path = Path(path)
        fmt = path.suffix.lower().lstrip(".")
        if fmt == "gv":
            fmt = "dot"
        if fmt not in FORMATS:
            raise ValueError(
                f"save() picks the format from the file's suffix; got {path.name!r}. "
                f"Use one of: {', '.join('.' + f for f in FORMATS)}."
            )
        if fmt == "dot":
            path.write_text(self.source, encoding="utf-8")
        elif fmt == "svg":
            path.write_text(self.svg(), encoding="utf-8")
        elif fmt == "png":
            path.write_bytes(self.png())
        else:
            sharp = dict(self._graph_attrs, dpi=str(PNG_DPI))
            path.write_bytes(_render(_dot_text(self._statements, sharp), fmt))
        return path

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> Any:
        """What Jupyter shows: SVG and PNG with the summary, or, without Graphviz, the text.

        Which image a front end picks is its choice: JupyterLab shows the SVG of a cell it
        ran and the PNG of a notebook opened untrusted. The PNG's `width` metadata shows it
        at the SVG's size (its pixels are denser), and the SVG's style lets it shrink to the
        cell's width where it is drawn inline. Returns (data, metadata), as IPython allows.
        """
        try:
            svg, png = self.svg(), self.png()
        except GraphvizNotFoundError as error:
            return {"text/plain": f"{self!r}\n{error}"}
        width = _png_width(png)
        data = {
            "image/svg+xml": _fit_to_cell(svg),
            "image/png": base64.b64encode(png).decode("ascii"),
            "text/plain": repr(self),
        }
        # In CSS pixels, 96 an inch; a front end still narrows a wide image to the cell.
        return data, {"image/png": {"width": round(width * 96 / PNG_DPI)}}

    def __repr__(self) -> str:
        title = f" {self.title!r}" if self.title else ""
        return f"<Drawing{title}: {self.node_count} nodes, {self.edge_count} edges>"


def _fewer_colours(png: bytes) -> bytes:
    """The same PNG with a palette of 256 colours: a third of the bytes, and it looks the
    same (a drawing has a few fills, text and their anti-aliased edges). Uses Pillow, which
    comes with matplotlib; without it the PNG stays as dot wrote it."""
    try:
        from PIL import Image

        median_cut = Image.Quantize.MEDIANCUT  # keeps the fills' colours exact
    except (ImportError, AttributeError):  # no Pillow, or one older than 9.1
        return png
    image = Image.open(io.BytesIO(png))
    if image.mode != "RGB":  # dot may add an alpha channel; the background is white
        flat = Image.new("RGB", image.size, "white")
        flat.paste(image, mask=image.convert("RGBA"))
        image = flat
    out = io.BytesIO()
    image.quantize(256, method=median_cut).save(out, "PNG", optimize=True)
    return out.getvalue()


def _png_width(png: bytes) -> int:
    """The width in pixels, read from a PNG's header (the start of its IHDR chunk)."""
    return int.from_bytes(png[16:20], "big")


def _fit_to_cell(svg: str) -> str:
    """Let an SVG drawn inline shrink to its container, keeping its proportions."""
    return svg.replace("<svg ", '<svg style="max-width:100%;height:auto" ', 1)


def _render(source: str, fmt: str) -> bytes:
    try:
        return graphviz.pipe("dot", fmt, source.encode("utf-8"))
    except graphviz.ExecutableNotFound:
        raise GraphvizNotFoundError(INSTALL_GRAPHVIZ) from None
    except graphviz.CalledProcessError as error:
        message = (error.stderr or b"").decode("utf-8", "replace").strip()
        raise RuntimeError(
            f"Graphviz's dot could not render this drawing as {fmt}: {message or error}. "
            f"The DOT text is in `.source`; please report it with the program that drew it."
        ) from None


def _dot_text(statements: list[str], graph_attrs: dict[str, str]) -> str:
    lines = ["digraph minigrad {"]
    lines.append(f"  graph [{_attributes(graph_attrs)}];")
    lines.append('  node [fontname="Helvetica", fontsize=11, style=filled];')
    lines.append('  edge [color="#495057", arrowsize=0.7, fontname="Helvetica"];')
    lines.extend("  " + statement for statement in statements)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _attributes(attrs: dict[str, str]) -> str:
    """DOT attributes; a value in <...> is an HTML-like label and is written unquoted."""
    parts = []
    for key, value in attrs.items():
        if value.startswith("<") and value.endswith(">"):
            parts.append(f"{key}={value}")
        else:
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            parts.append(f'{key}="{escaped}"')
    return ", ".join(parts)


# --------------------------------------------------------------------------- the public calls


# --------------------------------------------------------------------------- module scopes
#
# A graph knows its operations, not the modules that ran them. Run a forward inside
# `module_scopes(model)` and each node is marked with the module whose forward made it
# (the innermost one); draw() then frames each module's nodes with its name.

# BackwardNode -> (the dotted name of the module that made it, its class name); weak:
# graphs come and go.
_SCOPE_OF: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _ScopeListener(Listener):
    """Hears every Function.apply and marks the new node with the module running now."""

    def __init__(self) -> None:
        self.stack: list[tuple[str, str]] = []  # (name, class name), innermost last

    def apply(self, cls: type, args: tuple, kwargs: dict) -> Any:
        outputs = cls._apply_eagerly(args, kwargs)
        if self.stack:
            for output in outputs if isinstance(outputs, tuple) else (outputs,):
                node = getattr(output, "grad_fn", None)
                if node is not None and node not in _SCOPE_OF:
                    _SCOPE_OF[node] = self.stack[-1]
        return outputs


@contextmanager
def module_scopes(model: Any) -> Iterator[None]:
    """Inside this block, the nodes each submodule's forward records are marked with its
    name (e.g. "blocks.0.attn"); `draw(loss, model=model)` then groups them in frames.

        with viz.module_scopes(model):
            loss = model(x, y)
        viz.draw(loss, model=model)
    """
    _names_of(None, model, "module_scopes")  # the same check as draw(model=...)
    if state.listener is not QUIET:
        raise RuntimeError(
            "module_scopes cannot run inside minigrad.compile or forward-mode AD (they "
            "already listen to every operation); run the forward you want to draw eagerly."
        )
    listener = _ScopeListener()
    wrapped = []
    for name, module in model.named_modules():
        if name:  # the model itself is the whole drawing: no frame of its own
            scope = (name, type(module).__name__)
            module.__dict__["forward"] = _scoped(module.forward, scope, listener)
            wrapped.append(module)
    state.listener = listener
    try:
        yield
    finally:
        state.listener = QUIET
        for module in wrapped:
            del module.__dict__["forward"]  # the class's forward again


def _scoped(forward: Any, scope: tuple[str, str], listener: _ScopeListener) -> Any:
    def scoped(*args: Any, **kwargs: Any) -> Any:
        listener.stack.append(scope)
        try:
            return forward(*args, **kwargs)
        finally:
            listener.stack.pop()

    return scoped


def draw(
    outputs: Variable | Sequence[Variable],
    *,
    params: Mapping[str, Variable] | None = None,
    model: Any = None,
    show_data: bool = True,
    show_grad: bool = True,
    show_saved: bool = False,
    rankdir: str | None = None,
    max_nodes: int | None = None,
) -> Drawing:
    """Draw the graph that produced `outputs` (one Variable or several).

    Boxes show name or role, shape and dtype, a data preview and `.grad` once computed;
    ellipses are BackwardNodes.

    - `params` names Variables, as in torchviz: `draw(loss,
      params=dict(model.named_parameters()))` labels a weight's box `0.weight`.
      `model=model` does the same for every Parameter of a Module. For a Variable found
      there the given name wins over its own `.name` (a model's names say where a weight
      lives); `params` wins over `model` where both name it.
    - `rankdir` sets the direction: "TB" (top to bottom), "LR" (left to right), "BT",
      "RL". None picks one: top to bottom when the graph is deeper than it is wide (its
      longest path from an output has more nodes than its widest rank), else left to
      right, so a long chain such as an MLP's does not outgrow the cell.
    - `max_nodes` folds the nodes beyond the first `max_nodes` met walking back from the
      outputs into one summary node (saved values drawn with `show_saved` come on top).
    """
    roots = _as_roots(outputs, "draw")
    _check_options("draw", rankdir, max_nodes, show_data=show_data, show_grad=show_grad,
                   show_saved=show_saved)  # fmt: skip
    names = _names_of(params, model, "draw")
    graph = _Graph(roots, show_saved, max_nodes, names)
    return graph.drawing(show_data, show_grad, rankdir, step=None)


def backward_steps(
    output: Variable,
    gradient: Any = None,
    *,
    retain_graph: bool = False,
    params: Mapping[str, Variable] | None = None,
    model: Any = None,
    show_data: bool = True,
    show_saved: bool = False,
    rankdir: str | None = None,
    max_nodes: int | None = None,
) -> list[Drawing]:
    """Run `output.backward(gradient)` for real and draw one frame per engine step.

    Each frame highlights the node the engine is running, shows the gradients known so
    far and marks the others pending. The order is the engine's own, read as it runs.
    Leaves' `.grad` accumulate as after any backward(). `params`, `model`, `show_data`,
    `show_saved`, `rankdir` and `max_nodes` are draw()'s; every frame has the same layout.
    """
    (root,) = _as_roots(output, "backward_steps", single=True)
    _check_options("backward_steps", rankdir, max_nodes, show_data=show_data,
                   show_saved=show_saved, retain_graph=retain_graph)  # fmt: skip
    names = _names_of(params, model, "backward_steps")
    graph = _Graph([root], show_saved, max_nodes, names)

    steps: list[tuple[Any, list]] = []
    thread = threading.get_ident()

    def observe(node: Any, grads: list) -> None:
        # Another thread's backward may run meanwhile; its steps are not ours.
        if threading.get_ident() == thread:
            steps.append((node, [_snapshot(g) for g in grads]))

    autodiff_graph.add_step_observer(observe)
    try:
        root.backward(gradient, retain_graph=retain_graph)
    finally:
        autodiff_graph.remove_step_observer(observe)

    frames = []
    known: dict[Any, Any] = {}
    for number, (node, grads) in enumerate(steps, start=1):
        for key, value in graph.gradient_keys(node, grads):
            known[key] = value
        step = _Step(number, len(steps), node, dict(known), [n for n, _ in steps[:number]])
        frames.append(graph.drawing(show_data, True, rankdir, step=step))
    return frames


# An invisible point: strip() places frames by the points that bound them.
_POINT = 'shape="point", style="invis", width="0", height="0"'


def strip(drawings: Sequence[Drawing], *, title: str = "", columns: int = 1) -> Drawing:
    """Put several drawings (e.g. backward_steps frames) into one, in rows of `columns`.

    Read it like a page: left to right, then the next row. The default, one column, puts
    them one below the other; `columns=3` suits small frames drawn top to bottom, and
    keeps a strip of six within a README's width. The frames share one direction: theirs
    when they agree, else top to bottom.
    """
    drawings = check_iterable(drawings, "drawings", "strip()", "Drawings")
    if not drawings or not all(isinstance(d, Drawing) for d in drawings):
        raise TypeError(
            "strip() expects a non-empty list of Drawings, such as the frames returned by "
            f"backward_steps(); got {_describe(drawings)}."
        )
    if any(d._layout is None for d in drawings):
        raise TypeError(
            "strip() takes drawings made by draw() or backward_steps(), not another strip; "
            "pass all the drawings to one strip() instead."
        )
    if not isinstance(columns, int) or isinstance(columns, bool) or columns < 1:
        raise ValueError(f"columns must be a positive int; got {columns!r}.")
    if not isinstance(title, str):
        raise TypeError(
            f"strip(): title must be a str (shown above the frames; '' for none); got "
            f"{type(title).__name__} {title!r}."
        )
    directions = {d._graph_attrs["rankdir"] for d in drawings}
    rankdir = directions.pop() if len(directions) == 1 else "TB"
    groups = _groups(len(drawings), columns, rankdir)
    # Titles go top left; dot mirrors a frame's label when its ranks run up or leftwards.
    place = {"TB": ("t", "l"), "LR": ("t", "l"), "BT": ("b", "l"), "RL": ("t", "r")}[rankdir]
    statements, nodes, edges = [], 0, 0
    for index in [i for group in _across(groups, rankdir) for i in group]:
        drawing = drawings[index]
        statements.append(
            f"subgraph cluster_{index} {{ graph [label=<{_frame_label(drawing.title, index)}>, "
            f'labelloc="{place[0]}", labeljust="{place[1]}", color="#dee2e6", '
            f'fontname="Helvetica", fontsize="12"];'
        )
        prefix = f"s{index}_"
        statements.extend("  " + _prefixed(s, prefix) for s in drawing._statements)
        statements.extend("  " + s for s in _bounds(index, drawing._layout, prefix))
        statements.append("}")
        nodes += drawing.node_count
        edges += drawing.edge_count
    statements.extend(_grid(groups, rankdir))
    attrs = {
        "rankdir": rankdir,
        "fontname": "Helvetica",
        "newrank": "true",
        "nodesep": "0.25",
        "ranksep": "0.3",
        "size": f"{MAX_WIDTH_INCHES},{MAX_HEIGHT_INCHES}",
    }
    if title:
        attrs.update(label=f"<{_html_text(title)}>", labelloc="t", fontsize="16")
    return Drawing(statements, attrs, nodes, edges, title)


def _groups(count: int, columns: int, rankdir: str) -> list[list[int]]:
    """The frames' numbers in groups that share ranks, each group in reading order.

    dot puts frames that share ranks side by side across the rank direction: next to each
    other when the ranks run down (TB), one above the other when they run across (LR). So
    a group is a row for TB and BT, and a column for LR and RL.
    """
    order = list(range(count))
    if rankdir in ("TB", "BT"):
        return [order[i : i + columns] for i in range(0, count, columns)]
    return [order[c::columns] for c in range(min(columns, count))]


def _across(groups: list[list[int]], rankdir: str) -> list[list[int]]:
    """Each group in dot's order across the ranks: left to right for TB and BT, bottom to
    top for LR and RL. dot keeps that order as written (see _grid)."""
    return [group[::-1] if rankdir in ("LR", "RL") else group for group in groups]


def _grid(groups: list[list[int]], rankdir: str) -> list[str]:
    """Invisible edges and rank constraints between the frames' start_ and end_ points.

    Within a group the start points share a rank, and so do the end points; edges between
    the start points hold the order across the ranks. Groups follow each other along the
    ranks (a frame's end before the start of the one in its place in the next group): down
    for TB, up for BT, right for LR, left for RL.
    """
    lines = []
    for group in _across(groups, rankdir):
        for bound in ("start", "end"):
            lines.append(f"{{ rank=same; {'; '.join(f'{bound}_{i}' for i in group)}; }}")
        lines.extend(f'start_{a} -> start_{b} [style="invis"];' for a, b in zip(group, group[1:]))
    along = groups[::-1] if rankdir in ("BT", "RL") else groups
    for previous, group in zip(along, along[1:]):
        lines.extend(f'end_{a} -> start_{b} [style="invis"];' for a, b in zip(previous, group))
    return lines


def _frame_label(title: str, index: int) -> str:
    """A frame's title, as HTML: 'step 2 of 6: running AddBackward' on two lines, the first
    bold, so a long title does not make the frame wider than its graph."""
    head, colon, rest = (title or f"drawing {index + 1}").partition(": ")
    left = '<br align="left"/>'  # ends a line, aligned left
    label = f"<b>{_html_text(head)}</b>{left}"
    return label + (f"{_html_text(rest)}{left}" if colon else "")


def _bounds(index: int, layout: _Layout, prefix: str) -> list[str]:
    """Two invisible points that bound a frame along the ranks: start_i before every node,
    end_i after every node, so that ordering the points orders whole frames."""
    tails = {tail for tail, _ in layout.edges}
    heads = {head for _, head in layout.edges}
    lines = [f"start_{index} [{_POINT}];", f"end_{index} [{_POINT}];"]
    # dot keeps heavy edges straight: this one lines the two points up, across the frame.
    lines.append(f'start_{index} -> end_{index} [style="invis", weight="10"];')
    # Weight 0: these edges bound the frame without pulling its nodes out of place. The two
    # that keep their weight hold the points in line with the frame's first and last node,
    # so that frames line up.
    for dot_id in layout.ids:
        weight = "" if dot_id == layout.first else ', weight="0"'
        if dot_id not in heads:
            lines.append(f'start_{index} -> {prefix}{dot_id} [style="invis"{weight}];')
        weight = "" if dot_id == layout.last else ', weight="0"'
        if dot_id not in tails:
            lines.append(f'{prefix}{dot_id} -> end_{index} [style="invis"{weight}];')
    return lines


# --------------------------------------------------------------------------- the walk


class _Item:
    """One node of the drawing: a Variable box, a BackwardNode ellipse or a summary."""

    __slots__ = ("dot_id", "kind", "variable", "node", "output_nr", "note", "visible")

    def __init__(self, dot_id: str, kind: str) -> None:
        self.dot_id = dot_id
        self.kind = kind
        self.visible = True
        self.variable: Variable | None = None
        self.node: Any = None
        self.output_nr = 0
        self.note = ""


class _Step:
    """What one backward_steps frame shows."""

    def __init__(self, number: int, total: int, node: Any, known: dict, done: list) -> None:
        self.number = number
        self.total = total
        self.node = node
        self.known = known
        self.done = set(done)


class _Graph:
    """The graph behind some outputs, walked breadth-first from them to the leaves."""

    def __init__(
        self,
        roots: list[Variable],
        show_saved: bool,
        max_nodes: int | None,
        names: dict[int, str] | None = None,
    ) -> None:
        # Names given with params= or model=, by id() of the Variable (the caller holds them).
        self.names = names or {}
        self.items: dict[Any, _Item] = {}
        self.edges: list[tuple[_Item, _Item, str]] = []
        self.roots = set()
        # The results still alive, found once: nodes keep no references to their outputs.
        self.alive = autodiff_graph.live_outputs()
        queue: list[_Item] = []
        for root in roots:
            key = _box_key(root)
            self.roots.add(key)
            if key not in self.items:
                self._add_box(key, root, queue)
        # A list read by index is a queue that keeps the visiting order, which gives the ids.
        position = 0
        while position < len(queue):
            self._expand(queue[position], queue)
            position += 1
        self.hidden = self._hide_beyond(max_nodes)
        if show_saved:
            for item in list(self.items.values()):
                if item.kind == "function" and item.visible:
                    self._add_saved(item)

    def _new_item(self, key: Any, kind: str) -> _Item:
        prefix = "f" if kind == "function" else "v"
        item = _Item(f"{prefix}{len(self.items)}", kind)
        self.items[key] = item
        return item

    def _add_box(self, key: Any, variable: Variable | None, queue: list) -> _Item:
        item = self._new_item(key, "box")
        item.variable = variable
        if key[0] == "result":
            _, item.node, item.output_nr = key
            queue.append(item)
        elif key[0] == "gone":
            item.note = "freed: nothing holds this leaf"
        return item

    def _expand(self, box: _Item, queue: list) -> None:
        """A result box: draw the node that made it, then that node's inputs."""
        node = box.node
        function = self.items.get(node)
        if function is None:
            function = self._new_item(node, "function")
            function.node = node
            self._expand_inputs(function, queue)
        self.edges.append((function, box, ""))

    def _expand_inputs(self, function: _Item, queue: list) -> None:
        node = function.node
        for index, next_node, output_nr in autodiff_graph.input_edges(node):
            # A Variable still alive; an input that takes no gradient may be gone.
            variable = autodiff_graph.input_variable(node, index, self.alive)
            if next_node is None:
                if variable is None:
                    continue  # a constant that is gone: it took no part in backward
                key = ("leaf", id(variable))
            elif type(next_node) is AccumulateGrad:
                # A leaf nobody holds any more still has its node in the graph.
                key = ("leaf", id(variable)) if variable is not None else ("gone", next_node)
            else:
                key = ("result", next_node, output_nr)
            box = self.items.get(key)
            if box is None:
                box = self._add_box(key, variable, queue)
            self.edges.append((box, function, ""))

    def _hide_beyond(self, max_nodes: int | None) -> int:
        """Keep the first `max_nodes` items (and the outputs); fold the rest into a summary."""
        if max_nodes is None or len(self.items) <= max_nodes:
            return 0
        hidden = 0
        for position, (key, item) in enumerate(self.items.items()):
            if position >= max_nodes and key not in self.roots:
                item.visible = False
                hidden += 1
        summary = _Item("more", "summary")
        edges = []
        for tail, head, label in self.edges:
            if not tail.visible and head.visible:
                tail = summary
            elif tail.visible and not head.visible:
                head = summary
            elif not tail.visible:
                continue
            if (tail, head, label) not in edges:
                edges.append((tail, head, label))
        self.edges = edges
        self.items["summary"] = summary
        return hidden

    def _add_saved(self, function: _Item) -> None:
        """Link each value the node saved for backward to it, with a dashed edge."""
        saved = autodiff_graph.saved_values(function.node)
        if saved is None:
            function.note = "saved values freed"
            return
        for index, (value, output_nr) in enumerate(saved):
            if value is None:
                continue
            if output_nr is not None:  # the node saved one of its own outputs
                target = self.items.get(("result", function.node, output_nr))
            elif isinstance(value, Variable):
                target = self.items.get(_box_key(value))
            else:
                target = None
            if target is None or not target.visible:
                target = self._new_item(("saved", function.dot_id, index), "saved")
                if isinstance(value, Variable):
                    target.variable = value
                else:
                    target.note = _value_preview(value)
            self.edges.append((target, function, f"saved {index}"))

    def gradient_keys(self, node: Any, grads: list):
        """The boxes whose gradients one engine step received."""
        if type(node) is AccumulateGrad:
            yield _accumulator_key(node), grads[0]
            return
        for output_nr, grad in enumerate(grads):
            if grad is not None:
                yield ("result", node, output_nr), grad

    # ----------------------------------------------------------------------- DOT text

    def label(self, variable: Variable | None) -> str | None:
        """What a Variable is called: the name given to draw(), else its .name or role."""
        if variable is None:
            return None
        return self.names.get(id(variable)) or variable.name or variable.role

    def ranks(self) -> dict[_Item, int]:
        """Each drawn node's rank: the length of its longest path to an output (0 for the
        outputs). Saved values, which hang beside the graph, have none."""
        inputs: dict[_Item, list[_Item]] = {}
        consumers: Counter = Counter()
        for tail, head, label in self.edges:
            if not label:  # a saved value's dashed edge does not shape the layout
                inputs.setdefault(head, []).append(tail)
                consumers[tail] += 1
        visible = [item for item in self.items.values() if item.visible and item.kind != "saved"]
        rank = dict.fromkeys(visible, 0)
        # Walk from the outputs: a node is ranked once all its consumers are.
        ready = [item for item in visible if consumers[item] == 0]
        while ready:
            item = ready.pop()
            for tail in inputs.get(item, []):
                rank[tail] = max(rank[tail], rank[item] + 1)
                consumers[tail] -= 1
                if consumers[tail] == 0:
                    ready.append(tail)
        return rank

    def depth_and_width(self) -> tuple[int, int]:
        """The number of ranks (the longest path from an output, counted in nodes) and the
        number of nodes on the widest rank."""
        per_rank = Counter(self.ranks().values())
        return max(per_rank) + 1, max(per_rank.values())

    def auto_rankdir(self) -> str:
        """Top to bottom for a graph deeper than it is wide, else left to right."""
        depth, width = self.depth_and_width()
        return "TB" if depth > width else "LR"

    def drawing(
        self, show_data: bool, show_grad: bool, rankdir: str | None, step: _Step | None
    ) -> Drawing:
        statements = []
        scoped: dict[str, list[str]] = {}  # module name -> its nodes' statements
        for key, item in self.items.items():
            if not item.visible:
                continue
            if item.kind == "function":
                statement = self._function_statement(item, step)
            elif item.kind == "summary":
                statement = self._summary_statement(item, step)
            else:
                statement = self._box_statement(key, item, show_data, show_grad, step)
            scope = self.scope_of(key, item)
            if scope is None:
                statements.append(statement)
            else:
                scoped.setdefault(scope, []).append(statement)
        statements.extend(_frames(scoped, self.scopes()))
        for tail, head, label in self.edges:
            attrs = {}
            if label:
                border = STYLE["saved"][1]
                attrs = {
                    "style": "dashed",
                    "color": border,
                    "fontcolor": border,
                    "label": label,
                    "fontsize": "9",
                    "constraint": "false",
                }
            suffix = f" [{_attributes(attrs)}]" if attrs else ""
            statements.append(f"{tail.dot_id} -> {head.dot_id}{suffix};")
        graph_attrs = {
            "rankdir": rankdir or self.auto_rankdir(),
            "fontname": "Helvetica",
            "nodesep": "0.25",
            "ranksep": "0.35",
            "size": f"{MAX_WIDTH_INCHES},{MAX_HEIGHT_INCHES}",
        }
        title = ""
        if step is not None:
            title = self.step_title(step)
            graph_attrs.update(label=f"<{_html_text(title)}>", labelloc="t", fontsize="13")
        nodes = sum(1 for item in self.items.values() if item.visible)
        return Drawing(statements, graph_attrs, nodes, len(self.edges), title, self.layout())

    def scope_of(self, key: Any, item: _Item) -> str | None:
        """The module a node or box belongs to: the one whose forward made the node (see
        module_scopes), for a result the module of the node that made it, for a named
        Parameter the module that holds it, when that module is in the drawing."""
        if item.kind == "function" or (item.kind == "box" and key[0] == "result"):
            scope = _SCOPE_OF.get(item.node)
            return None if scope is None else scope[0]
        name = self.label(item.variable) if item.kind == "box" else None
        if name and self.names.get(id(item.variable)) == name and "." in name:
            owner = name.rsplit(".", 1)[0]
            if owner in self.scopes():
                return owner
        return None

    def scopes(self) -> dict[str, str]:
        """The modules that made some node of this drawing: name -> class name."""
        if not hasattr(self, "_scopes"):
            self._scopes = dict(
                _SCOPE_OF[item.node]
                for item in self.items.values()
                if item.kind == "function" and item.node in _SCOPE_OF
            )
        return self._scopes

    def layout(self) -> _Layout:
        """What strip() needs to place this drawing as a frame (see _Layout)."""
        ranks = self.ranks()
        return _Layout(
            ids=[item.dot_id for item in self.items.values() if item.visible],
            edges=[(t.dot_id, h.dot_id) for t, h, label in self.edges if not label],
            first=max(ranks, key=ranks.__getitem__).dot_id,  # the first of the deepest
            last=min(ranks, key=ranks.__getitem__).dot_id,  # the first output
        )

    def step_title(self, step: _Step) -> str:
        """'step 2 of 6: running AddBackward → z': what one backward_steps frame shows."""
        node = step.node
        if type(node) is AccumulateGrad:
            action = f"AccumulateGrad adds into {self.label(node.variable) or 'the leaf'}.grad"
        else:
            action = f"running {node.name()}"
            # Several nodes can share a name (two MulBackwards): the output's name tells them
            # apart.
            count = autodiff_graph.number_of_outputs(node)
            outputs = [autodiff_graph.output(node, nr, self.alive) for nr in range(count)]
            names = [name for name in map(self.label, outputs) if name]
            if names:
                action += f" → {', '.join(names)}"
        return f"step {step.number} of {step.total}: {action}"

    def _summary_statement(self, item: _Item, step: _Step | None) -> str:
        fill, border = STYLE["summary"]
        if step is not None:
            # The running node may be one of those folded away: then the summary lights up.
            key = _accumulator_key(step.node) if type(step.node) is AccumulateGrad else step.node
            running = self.items.get(key)
            if running is not None and not running.visible:
                fill, border = CURRENT
        plural = "s" if self.hidden != 1 else ""
        attrs = {
            "shape": "note",
            "label": f"… {self.hidden} more node{plural}",
            "fillcolor": fill,
            "color": border,
            "fontcolor": MUTED,
        }
        return f"{item.dot_id} [{_attributes(attrs)}];"

    def _function_statement(self, item: _Item, step: _Step | None) -> str:
        node = item.node
        fill, border = STYLE["function"]
        width = "1"
        label = _html_text(node.name())
        if item.note:
            label += f"<br/>{_small(item.note, MUTED)}"
        if step is not None:
            if node is step.node:
                fill, border = CURRENT
                width = "3"
            elif node in step.done:
                fill = "#e9ecef"  # already run
            else:
                fill = "#ffffff"  # still to run
        attrs = {
            "shape": "ellipse",
            "label": f"<{label}>",
            "fillcolor": fill,
            "color": border,
            "penwidth": width,
        }
        return f"{item.dot_id} [{_attributes(attrs)}];"

    def _box_statement(
        self, key: Any, item: _Item, show_data: bool, show_grad: bool, step: _Step | None
    ) -> str:
        variable, note = item.variable, item.note
        if variable is not None and item.node is not None and variable.grad_fn is not item.node:
            # Changed in place since: the Variable now belongs to a later node.
            variable, note = None, "overwritten in place"
        kind = _box_kind(key, item, self.roots)
        # A temporary Python has already freed is drawn small: only its shape is known.
        temporary = kind == "value" and variable is None and not note
        fill, border = STYLE[kind]
        width = "1"
        rows = [] if temporary else [_title_row(self.label(variable), kind)]
        described = _describe_value(variable, item)
        if described:
            rows.append(_small(described))
        if show_data and variable is not None:
            rows.append(_small("data " + _value_preview(variable.data)))
        elif note:
            rows.append(_small(note, MUTED))
        is_text = _metadata_of(item) == "text" or (
            variable is not None and isinstance(variable.data, str)
        )
        word = "feedback " if is_text else "grad "
        if step is not None:
            if kind in ("leaf", "value", "output"):
                grad = step.known.get(key)
                if grad is None:
                    rows.append(_small(word + "pending", MUTED))
                else:
                    rows.append(_small(word + _value_preview(grad), GRAD_COLOUR))
                    width = "2"
            if _is_current(key, step):
                fill, border = CURRENT
                width = "3"
        elif show_grad and _grad_of(variable) is not None:
            rows.append(_small(word + _value_preview(_grad_of(variable)), GRAD_COLOUR))
        table = "".join(f"<tr><td>{row}</td></tr>" for row in rows)
        label = f'<<table border="0" cellborder="0" cellpadding="1">{table}</table>>'
        style = "rounded,dashed,filled" if temporary else "rounded,filled"
        attrs = {
            "shape": "box",
            "style": style,
            "label": label,
            "fillcolor": fill,
            "color": border,
            "penwidth": width,
        }
        if temporary:
            attrs.update(margin="0.05,0.02", height="0.3")
        return f"{item.dot_id} [{_attributes(attrs)}];"


def _frames(scoped: dict[str, list[str]], kinds: dict[str, str]) -> list[str]:
    """DOT subgraphs, one frame per module, nested as the names are ("blocks.0" holds
    "blocks.0.attn"), each labelled with its name and class; the statements go in their
    frame."""
    names = set(scoped)
    for name in list(names):  # the parents of a framed module are frames too
        parts = name.split(".")
        names.update(".".join(parts[:cut]) for cut in range(1, len(parts)))
    children: dict[str, list[str]] = {}
    for name in sorted(names):
        parent = name.rsplit(".", 1)[0] if "." in name else ""
        children.setdefault(parent, []).append(name)
    number = iter(range(len(names)))

    def frame(name: str) -> list[str]:
        inner = [frame(child) for child in children.get(name, [])]
        body = scoped.get(name, []) + [line for lines in inner for line in lines]
        label = _html_text(f"{name} ({kinds[name]})" if name in kinds else name)
        return [
            f'subgraph cluster_m{next(number)} {{ graph [label=<{label}>, style="rounded", '
            f'color="{MUTED}", fontcolor="{MUTED}", fontsize="10", labeljust="l"];',
            *body,
            "}",
        ]

    return [line for top in children.get("", []) for line in frame(top)]


def _title_row(title: str | None, kind: str) -> str:
    """Bold name or role when there is one; otherwise what the box is, in italics."""
    if kind == "saved":
        return "<b>saved</b>"
    if title:
        return f"<b>{_html_text(_clip(title, 28))}</b>"
    return "<i>leaf</i>" if kind in ("leaf", "constant") else "<i>result</i>"


def _grad_of(variable: Variable | None) -> Variable | None:
    """`.grad` where backward fills it in: leaves, and results that call retain_grad().
    (Reading it on any other result warns, as in PyTorch, and it is None there anyway.)"""
    if variable is not None and (variable.is_leaf or variable.retains_grad):
        return variable.grad
    return None


def _box_kind(key: Any, item: _Item, roots: set) -> str:
    if item.kind == "saved":
        return "saved"
    if key in roots:
        return "output"
    if item.node is not None:
        return "value"
    if key[0] == "gone" or (item.variable is not None and item.variable.requires_grad):
        return "leaf"
    return "constant"


def _is_current(key: Any, step: _Step) -> bool:
    """In a step drawing, a leaf's box stands for its AccumulateGrad node."""
    node = step.node
    return type(node) is AccumulateGrad and key == _accumulator_key(node)


def _accumulator_key(node: AccumulateGrad) -> tuple:
    variable = node.variable
    return ("leaf", id(variable)) if variable is not None else ("gone", node)


def _box_key(variable: Variable) -> tuple:
    """A leaf is drawn once however often it is used, a result once per (node, output)."""
    if variable.grad_fn is None:
        return ("leaf", id(variable))
    return ("result", variable.grad_fn, autodiff_graph.output_nr(variable))


# --------------------------------------------------------------------------- labels


def _describe_value(variable: Variable | None, item: _Item) -> str:
    if variable is None:
        info = _metadata_of(item)
        if info is not None and info.kind == "text":
            return "text"
        if info is not None:
            return f"{_shape_text(info.shape)} {info.dtype}"
        return ""
    if isinstance(variable.data, str):
        return f"text, {len(variable.data)} chars"
    return f"{_shape_text(variable.shape)} {variable.dtype}"


def _metadata_of(item: _Item) -> Any:
    node = item.node
    if node is None or isinstance(node, AccumulateGrad):
        return None
    return autodiff_graph.output_info(node, item.output_nr)


def _shape_text(shape: tuple) -> str:
    return "scalar" if shape == () else str(tuple(shape))


def _value_preview(value: Any) -> str:
    """A short, escaped preview of an array, a number, a str or a Variable."""
    if isinstance(value, Variable):
        value = value.data
    if isinstance(value, str):
        return "“" + _html_text(_clip(value, 36)) + "”"
    if isinstance(value, (np.ndarray, np.generic, int, float)):
        return _html_text(_preview(np.asarray(value)))
    return _html_text(_clip(type(value).__name__, 20))


def _preview(array: np.ndarray) -> str:
    """Numbers to 4 significant digits; long axes keep their first two and last entries."""
    if array.ndim == 0:
        return _number(array.item())
    if array.shape[0] > 3:
        parts = [_preview(array[0]), _preview(array[1]), "…", _preview(array[-1])]
    else:
        parts = [_preview(row) for row in array]
    if array.ndim >= 2 and array.shape[0] > 1:
        # Rows of rows get long: the first row stands for the rest.
        parts = [parts[0], "…"]
    return "[" + ", ".join(parts) + "]"


def _number(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(value)
    return format(value, ".4g")


def _clip(text: str, limit: int) -> str:
    text = text.replace("\n", " ↵ ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _html_text(text: str) -> str:
    return html.escape(text, quote=True)


def _small(text: str, colour: str | None = None) -> str:
    colour_attr = f' color="{colour}"' if colour else ""
    return f'<font point-size="9"{colour_attr}>{text}</font>'


def _snapshot(grad: Any) -> Any:
    """A copy of one gradient as the engine sees it now (later steps must not change it)."""
    if isinstance(grad, Variable):
        grad = grad.data
    if isinstance(grad, np.ndarray):
        return grad.copy()
    return grad


def _prefixed(statement: str, prefix: str) -> str:
    """Rename the ids in one statement written by _Graph.drawing (`v3 [..]`, `v3 -> f4 [..]`)."""
    head, bracket, rest = statement.partition(" [")
    ids = [part.strip(" ;") for part in head.split(" -> ")]
    renamed = " -> ".join(prefix + dot_id for dot_id in ids)
    return renamed + (bracket + rest if bracket else ";")


# --------------------------------------------------------------------------- argument checks


def _as_roots(outputs: Any, caller: str, single: bool = False) -> list[Variable]:
    if isinstance(outputs, Variable):
        return [outputs]
    if not single and isinstance(outputs, (list, tuple)) and outputs:
        if all(isinstance(o, Variable) for o in outputs):
            return list(outputs)
    wanted = "a Variable" if single else "a Variable or a non-empty list of Variables"
    raise TypeError(
        f"{caller}() expects {wanted}; got {_describe(outputs)}. Pass the result of a "
        f"computation, e.g. {caller}(loss)."
    )


def _check_options(caller: str, rankdir: Any, max_nodes: Any, **flags: Any) -> None:
    """rankdir, max_nodes, and each flag True or False; else a clear error."""
    for name, value in flags.items():
        check_flag(value, name, f"{caller}()")
    if rankdir is not None and not isinstance(rankdir, str):
        raise TypeError(
            f"{caller}(): rankdir must be a str, one of {', '.join(RANKDIRS)}, or None; got "
            f"{type(rankdir).__name__}."
        )
    if rankdir is not None and rankdir not in RANKDIRS:
        raise ValueError(
            f"rankdir must be one of {', '.join(RANKDIRS)} (LR: left to right), or None to "
            f"pick one from the graph's shape; got {rankdir!r}."
        )
    if max_nodes is not None and (
        not isinstance(max_nodes, int) or isinstance(max_nodes, bool) or max_nodes < 1
    ):
        raise ValueError(
            f"max_nodes must be a positive int (or None for no limit); got {max_nodes!r}."
        )


def _names_of(params: Any, model: Any, caller: str) -> dict[int, str]:
    """The names to show, by id() of the Variable: a model's Parameters, then `params`."""
    names: dict[int, str] = {}
    if model is not None:
        from minigrad.nn.module import Module  # nn loads on first use, as in `import minigrad`

        if not isinstance(model, Module):
            raise TypeError(
                f"{caller}(model=...) expects a minigrad.nn.Module, whose Parameters it "
                f"names; got {_describe(model)}. To name other Variables, pass params=."
            )
        names.update((id(p), name) for name, p in model.named_parameters())
    if params is not None:
        if not isinstance(params, Mapping):
            raise TypeError(
                f"{caller}(params=...) expects a dict of name -> Variable, such as "
                f"dict(model.named_parameters()); got {_describe(params)}."
            )
        for name, variable in params.items():
            if not isinstance(name, str) or not isinstance(variable, Variable):
                raise TypeError(
                    f"{caller}(params=...) expects a dict of name -> Variable; its entry "
                    f"{name!r} is {_describe(name)} -> {_describe(variable)}."
                )
            names[id(variable)] = name
    return names


def _describe(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        kinds = sorted({type(v).__name__ for v in value})
        return f"a {type(value).__name__} of {', '.join(kinds) or 'nothing'}"
    return type(value).__name__


__all__ = [
    "Drawing",
    "GraphvizNotFoundError",
    "backward_steps",
    "draw",
    "strip",
]
