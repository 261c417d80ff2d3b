"""The API reference's table of operations: a Sphinx directive, `{op-table}`.

Every built-in operation is one entry of minigrad's op table (`minigrad/ops/table.py`), which
attaches it as a method, a `minigrad.*` function, an in-place variant and aliases. The table
on the page is made from that registry when the site is built, so it lists exactly the
operations the installed engine has, each with the first line of its docstring and the file
that defines it.
"""

from __future__ import annotations

import inspect
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


def spellings(name: str, op: object) -> str:
    """How PyTorch code calls the op: `x.exp()`, `minigrad.exp`, `x.exp_()`, and the same
    for each alias."""
    ways = []
    for spelled in (name, *op.aliases):
        if op.method is not None:
            ways.append(f"`x.{spelled}()`")
        if op.function is not None:
            ways.append(f"`minigrad.{spelled}`")
        if op.inplace:
            ways.append(f"`x.{spelled}_()`")
    return ", ".join(ways)


def summary(name: str, op: object) -> str:
    """The docstring's first paragraph, on one line and safe inside a Markdown table cell;
    without a docstring, the op means what PyTorch's op of that name means."""
    run = op.function or op.method
    paragraph = (inspect.getdoc(run) or "").split("\n\n")[0]
    if not paragraph:
        home = "torch" if op.function is not None else "torch.Tensor"
        return f"As PyTorch's `{home}.{name}`."
    return " ".join(paragraph.split()).replace("|", "\\|")


def defined_in(run: object, root: Path) -> str:
    source = Path(inspect.getsourcefile(inspect.unwrap(run)) or "")
    try:
        return f"`{source.resolve().relative_to(root).as_posix()}`"
    except ValueError:
        return ""


class OpTable(SphinxDirective):
    """`{op-table}`: one row per entry of the op table, in alphabetical order: how it is
    spelled, what it computes and the file that defines it."""

    def run(self) -> list[nodes.Node]:
        import minigrad  # noqa: F401 (attaches every op to the table)
        from minigrad.ops.table import OPS

        root = Path(minigrad.__file__).resolve().parent.parent
        rows = ["| spelled | what it computes (defined in) |", "|---|---|"]
        for name in sorted(OPS):
            op = OPS[name]
            run = op.function or op.method
            described = f"{summary(name, op)} ({defined_in(run, root)})"
            rows.append(f"| {spellings(name, op)} | {described} |")
        container = nodes.container(classes=["op-table"])
        self.state.nested_parse(StringList(rows), self.content_offset, container)
        return [container]


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("op-table", OpTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
