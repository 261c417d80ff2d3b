"""Graph drawings (minigrad.viz): DOT text, counts, colours, backward steps and rendering."""

import base64
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import minigrad
from minigrad import Variable, viz
from minigrad.core import engine

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CURRENT_FILL = f'fillcolor="{viz.CURRENT[0]}", color="{viz.CURRENT[1]}"'


# --------------------------------------------------------------------------- helpers


def node_statements(source: str) -> dict[str, str]:
    """The node statements of a DOT text, by node id, in the order they are written."""
    nodes = {}
    for line in source.splitlines():
        match = re.match(r"^  (\w+) \[", line)
        if match and match.group(1) not in ("graph", "node", "edge"):
            nodes[match.group(1)] = line
    return nodes


def edges_of(source: str) -> list[tuple[str, str, str]]:
    """(tail, head, the rest of the statement) for each edge, in the order written."""
    return re.findall(r"^  (\w+) -> (\w+)(.*)$", source, flags=re.MULTILINE)


def the_node(source: str, marker: str) -> tuple[str, str]:
    """The one node statement containing `marker`: (its id, its statement)."""
    found = [(key, line) for key, line in node_statements(source).items() if marker in line]
    assert len(found) == 1, f"{marker!r} is in {len(found)} node statements"
    return found[0]


def style_of(kind: str) -> str:
    fill, border = viz.STYLE[kind]
    return f'fillcolor="{fill}", color="{border}"'


def diamond() -> dict[str, Variable]:
    """out = sum((tanh(a*b) + exp(a*b)) * a): a shared subexpression and a reused leaf."""
    a = Variable([1.0, 2.0], requires_grad=True, name="a")
    b = Variable([3.0, -1.0], requires_grad=True, name="b")
    s = a * b
    t = s.tanh()
    e = s.exp()
    total = t + e
    m = total * a
    out = m.sum()
    return {"a": a, "b": b, "s": s, "t": t, "e": e, "total": total, "m": m, "out": out}


def engine_steps(out: Variable, **kwargs) -> list[str]:
    """The names of the nodes the engine runs in a plain backward, read from the engine."""
    names: list[str] = []

    def observe(node, grads) -> None:
        names.append(node.name())

    engine._step_observers.append(observe)
    try:
        out.backward(**kwargs)
    finally:
        engine._step_observers.remove(observe)
    return names


def small_mlp() -> tuple[minigrad.nn.Module, Variable]:
    """A 2-layer MLP, 3 -> 4 -> 2, and a loss after backward: (model, loss)."""
    model = minigrad.nn.Sequential(
        minigrad.nn.Linear(3, 4), minigrad.nn.Tanh(), minigrad.nn.Linear(4, 2)
    )
    model.x = Variable([[0.5, -1.0, 2.0]], name="x")  # held, so it is drawn with its name
    loss = (model(model.x) ** 2).mean()
    loss.name = "loss"
    loss.backward()
    return model, loss


def frame_order(drawing: viz.Drawing) -> list[list[int]]:
    """Where dot put a strip's frames: their numbers, row by row, each row left to right."""
    rendered = subprocess.run(
        ["dot", "-Tjson"], input=drawing.source, capture_output=True, text=True, check=True
    )
    boxes = {}  # frame number -> (left, top, right, bottom), y growing downwards
    for obj in json.loads(rendered.stdout).get("objects", []):
        if obj.get("name", "").startswith("cluster_"):
            left, bottom, right, top = map(float, obj["bb"].split(","))
            boxes[int(obj["name"].removeprefix("cluster_"))] = (left, -top, right, -bottom)
    rows: list[list[int]] = []
    for frame in sorted(boxes, key=lambda f: boxes[f][1]):
        # A frame belongs to a row when their vertical extents overlap.
        for row in rows:
            if boxes[frame][1] < boxes[row[0]][3] and boxes[row[0]][1] < boxes[frame][3]:
                row.append(frame)
                break
        else:
            rows.append([frame])
    return [sorted(row, key=lambda f: boxes[f][0]) for row in rows]


def frame_action(drawing: viz.Drawing) -> str:
    """'running XBackward' or 'AccumulateGrad adds into a.grad', from a frame's title."""
    match = re.fullmatch(r"step (\d+) of (\d+): (.*)", drawing.title)
    assert match, drawing.title
    return match.group(3)


# --------------------------------------------------------------------------- 1. DOT text

# The graph is deeper (5 ranks: y, SumBackward, x * w, MulBackward, x and w) than it is wide
# (2), so it is drawn top to bottom, within the 9-inch width that fits a notebook cell.
HEADER = """\
digraph minigrad {
  graph [rankdir="TB", fontname="Helvetica", nodesep="0.25", ranksep="0.35", size="9,100"];
  node [fontname="Helvetica", fontsize=11, style=filled];
  edge [color="#495057", arrowsize=0.7, fontname="Helvetica"];
"""

EXPECTED_BEFORE = (
    HEADER
    + """\
  v0 [shape="box", style="rounded,filled", label=<<table border="0" cellborder="0" cellpadding="1"><tr><td><b>y</b></td></tr><tr><td><font point-size="9">scalar float64</font></td></tr><tr><td><font point-size="9">data -1.5</font></td></tr></table>>, fillcolor="#d3f9d8", color="#2f9e44", penwidth="1"];
  f1 [shape="ellipse", label=<SumBackward>, fillcolor="#fff3bf", color="#e67700", penwidth="1"];
  v2 [shape="box", style="rounded,dashed,filled", label=<<table border="0" cellborder="0" cellpadding="1"><tr><td><font point-size="9">(2,) float64</font></td></tr></table>>, fillcolor="#ffffff", color="#495057", penwidth="1", margin="0.05,0.02", height="0.3"];
  f3 [shape="ellipse", label=<MulBackward>, fillcolor="#fff3bf", color="#e67700", penwidth="1"];
  v4 [shape="box", style="rounded,filled", label=<<table border="0" cellborder="0" cellpadding="1"><tr><td><b>x</b></td></tr><tr><td><font point-size="9">(2,) float64</font></td></tr><tr><td><font point-size="9">data [1, 2]</font></td></tr></table>>, fillcolor="#f1f3f5", color="#868e96", penwidth="1"];
  v5 [shape="box", style="rounded,filled", label=<<table border="0" cellborder="0" cellpadding="1"><tr><td><b>w</b></td></tr><tr><td><font point-size="9">(2,) float64</font></td></tr><tr><td><font point-size="9">data [0.5, -1]</font></td></tr></table>>, fillcolor="#d0ebff", color="#1c7ed6", penwidth="1"];
  v2 -> f1;
  f1 -> v0;
  v4 -> f3;
  v5 -> f3;
  f3 -> v2;
}
"""  # noqa: E501
)

# After backward only w's box changes: a red gradient row, d(sum(x * w))/dw = x.
EXPECTED_AFTER = EXPECTED_BEFORE.replace(
    '<tr><td><font point-size="9">data [0.5, -1]</font></td></tr>',
    '<tr><td><font point-size="9">data [0.5, -1]</font></td></tr>'
    '<tr><td><font point-size="9" color="#c92a2a">grad [1, 2]</font></td></tr>',
)


def small_graph() -> tuple[Variable, Variable, Variable]:
    x = Variable([1.0, 2.0], name="x")
    w = Variable([0.5, -1.0], requires_grad=True, name="w")
    y = (x * w).sum()  # x * w is a temporary: freed, drawn small with its shape only
    y.name = "y"
    return x, w, y


def test_dot_text_of_a_small_graph_is_exactly_as_expected() -> None:
    """Boxes for Variables, ellipses for nodes, edges forward, ids v0, f1, ... in walk order."""
    _, _, y = small_graph()
    assert viz.draw(y).source == EXPECTED_BEFORE


def test_dot_text_after_backward_shows_the_gradient_of_w() -> None:
    """backward adds a grad row to w's box and changes nothing else."""
    _, w, y = small_graph()
    y.backward()
    np.testing.assert_array_equal(w.grad.data, [1.0, 2.0])
    assert EXPECTED_AFTER != EXPECTED_BEFORE
    assert viz.draw(y).source == EXPECTED_AFTER
    assert viz.draw(y, show_grad=False).source == EXPECTED_BEFORE


# --------------------------------------------------------------------------- 2. determinism

DETERMINISM_PROGRAM = textwrap.dedent(
    """
    import hashlib
    import sys
    from minigrad import Variable, viz

    a = Variable([1.0, 2.0], requires_grad=True, name="a")
    b = Variable([3.0, -1.0], requires_grad=True, name="b")
    s = a * b
    out = ((s.tanh() + s.exp()) * a).sum()
    other = (s * 2).mean()
    drawing = viz.draw([out, other], show_saved=True)
    sys.stdout.write(drawing.source)
    sys.stdout.write("=====\\n")
    sys.stdout.write(drawing.svg())
    sys.stdout.write(hashlib.sha256(drawing.png()).hexdigest())
    """
)


def test_same_program_draws_the_same_dot_and_svg_in_two_processes() -> None:
    """Two interpreters (different hash seeds, different addresses) write identical bytes."""
    outputs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        result = subprocess.run(
            [sys.executable, "-c", DETERMINISM_PROGRAM],
            capture_output=True,
            check=True,
            env=env,
            timeout=60,
        )
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    source, svg = outputs[0].decode("utf-8").split("=====\n")
    assert source.startswith("digraph minigrad {") and "<svg" in svg


def test_node_ids_follow_the_walk_and_hold_no_addresses() -> None:
    """Ids are v0, f1, v2, ...: a letter for the kind and the position in the walk."""
    graph = diamond()
    source = viz.draw(graph["out"], show_saved=True).source
    assert "0x" not in source
    ids = list(node_statements(source))
    assert ids[0] == "v0"
    for position, dot_id in enumerate(ids):
        statement = node_statements(source)[dot_id]
        expected_letter = "f" if 'shape="ellipse"' in statement else "v"
        assert dot_id == f"{expected_letter}{position}"
    assert {t for t, _, _ in edges_of(source)} | {h for _, h, _ in edges_of(source)} <= set(ids)


# --------------------------------------------------------------------------- 3. counts


def test_a_leaf_used_twice_is_one_box_with_two_edges() -> None:
    """a + a: one box for a, and two edges from it into AddBackward."""
    a = Variable([1.0, 2.0], requires_grad=True, name="a")
    drawing = viz.draw(a + a)
    source = drawing.source
    assert source.count("<b>a</b>") == 1
    add_id, _ = the_node(source, "AddBackward")
    a_id, _ = the_node(source, "<b>a</b>")
    into_add = [(t, h) for t, h, _ in edges_of(source) if h == add_id]
    assert into_add == [(a_id, add_id), (a_id, add_id)]
    assert (drawing.node_count, drawing.edge_count) == (3, 3)


def test_two_layer_mlp_has_the_nodes_and_edges_counted_by_hand() -> None:
    """10 operations: 10 ellipses and 10 result boxes, plus 6 leaves; 25 edges."""
    rng = np.random.default_rng(0)
    x = Variable(rng.normal(size=(32, 4)), name="x")
    w1 = Variable(rng.normal(size=(4, 8)), requires_grad=True, name="w1")
    b1 = Variable(np.zeros(8), requires_grad=True, name="b1")
    w2 = Variable(rng.normal(size=(8, 3)), requires_grad=True, name="w2")
    b2 = Variable(np.zeros(3), requires_grad=True, name="b2")
    target = Variable(np.eye(3)[rng.integers(0, 3, 32)], name="target")
    hidden = (x @ w1 + b1).relu()
    logits = hidden @ w2 + b2
    loss = -(logits.log_softmax(1) * target).sum(dim=1).mean()

    drawing = viz.draw(loss)
    source = drawing.source
    # Nodes: MatMul, Add, Relu, MatMul, Add, LogSoftmax, Mul, Sum, Mean, Neg.
    functions = 10
    # Boxes: one result per node, and the leaves x, w1, b1, w2, b2, target.
    boxes = functions + 6
    # Edges: one per input of each node (2,2,1,2,2,1,2,1,1,1) and one to each result.
    edges = (2 + 2 + 1 + 2 + 2 + 1 + 2 + 1 + 1 + 1) + functions
    assert source.count('shape="ellipse"') == functions
    assert source.count('shape="box"') == boxes
    assert drawing.node_count == functions + boxes == 26
    assert drawing.edge_count == len(edges_of(source)) == edges == 25
    for name in ("x", "w1", "b1", "w2", "b2", "target"):
        assert source.count(f"<b>{name}</b>") == 1, name
    for name in ("w1", "b1", "w2", "b2"):
        assert style_of("leaf") in the_node(source, f"<b>{name}</b>")[1]
    for name in ("x", "target"):
        assert style_of("constant") in the_node(source, f"<b>{name}</b>")[1]
    assert source.count("MatMulBackward") == 2 and source.count("AddBackward") == 2


def test_a_leaf_alone_is_one_node_and_no_edges() -> None:
    """draw(leaf): a single box, drawn as the output."""
    leaf = Variable([1.0, 2.0], requires_grad=True, name="leaf")
    drawing = viz.draw(leaf)
    assert (drawing.node_count, drawing.edge_count) == (1, 0)
    assert edges_of(drawing.source) == []
    assert style_of("output") in the_node(drawing.source, "<b>leaf</b>")[1]


def test_several_outputs_share_their_common_subgraph() -> None:
    """draw([y1, y2]) draws tanh(x) and x once; both outputs get the output colour."""
    x = Variable([0.3, 0.1], requires_grad=True, name="x")
    h = x.tanh()
    y1 = h.sum()
    y1.name = "y1"
    y2 = (h * 2).sum()
    y2.name = "y2"
    alone = viz.draw(y1).node_count + viz.draw(y2).node_count
    together = viz.draw([y1, y2])
    assert (viz.draw(y1).node_count, viz.draw(y2).node_count) == (5, 7)
    # x, its TanhBackward and h are shared: 12 - 3.
    assert together.node_count == 9 < alone
    assert together.source.count("<b>x</b>") == 1
    assert together.source.count("TanhBackward") == 1
    for name in ("y1", "y2"):
        assert style_of("output") in the_node(together.source, f"<b>{name}</b>")[1]


# --------------------------------------------------------------------------- 4. colours


def test_each_kind_of_box_has_its_colour_and_nodes_are_ellipses() -> None:
    """Output, leaf requiring grad, constant and intermediate boxes; BackwardNode ellipses."""
    x = Variable([1.0, 2.0], name="data")
    w = Variable([0.5, -1.0], requires_grad=True, name="weight")
    product = x * w
    product.name = "product"
    y = product.sum()
    y.name = "loss"
    source = viz.draw(y).source
    assert style_of("output") in the_node(source, "<b>loss</b>")[1]
    assert style_of("leaf") in the_node(source, "<b>weight</b>")[1]
    assert style_of("constant") in the_node(source, "<b>data</b>")[1]
    assert style_of("value") in the_node(source, "<b>product</b>")[1]
    for name in ("MulBackward", "SumBackward"):
        dot_id, statement = the_node(source, f"label=<{name}>")
        assert dot_id.startswith("f")
        assert 'shape="ellipse"' in statement and style_of("function") in statement
    assert source.count('shape="box"') == 4


# --------------------------------------------------------------------------- 5. text


def test_text_graph_shows_role_text_and_feedback() -> None:
    """A text leaf shows its role and text; after backward its feedback."""
    greeting = Variable("hello", role="greeting", requires_grad=True)
    sentence = greeting + " world"
    source = viz.draw(sentence).source
    _, box = the_node(source, "<b>greeting</b>")
    assert "text, 5 chars" in box and "data “hello”" in box
    assert "feedback" not in source
    _, output = the_node(source, "data “hello world”")
    assert style_of("output") in output

    sentence.backward(Variable("too informal", role="feedback"))
    assert greeting.grad.data == "too informal"
    _, box = the_node(viz.draw(sentence).source, "<b>greeting</b>")
    assert f'<font point-size="9" color="{viz.GRAD_COLOUR}">feedback “too informal”</font>' in box
    assert "grad " not in box


def test_long_text_is_shown_clipped_with_an_ellipsis() -> None:
    """200 characters become a short preview ending in '…'; the length is stated."""
    essay = Variable("a" * 200, role="essay", requires_grad=True)
    _, box = the_node(viz.draw(essay).source, "<b>essay</b>")
    assert "text, 200 chars" in box
    preview = re.search(r"data “(a+)…”", box)
    assert preview is not None
    assert 10 <= len(preview.group(1)) < 50
    assert "a" * 50 not in box


def test_html_characters_in_text_are_escaped_and_the_svg_renders() -> None:
    """<, >, & and " in a text and a role are escaped in DOT and read back from the SVG."""
    tagged = Variable('<b>&"', role="<r>", requires_grad=True)
    joined = tagged + "x"
    drawing = viz.draw(joined)
    source = drawing.source
    assert '<b>&"' not in source
    assert "&lt;b&gt;&amp;&quot;" in source
    assert "<b>&lt;r&gt;</b>" in source
    root = ET.fromstring(drawing.svg())
    texts = [element.text for element in root.iter() if element.tag.endswith("text")]
    assert "<r>" in texts
    assert 'data “<b>&"”' in texts and 'data “<b>&"x”' in texts


def test_backward_steps_on_text_show_feedback_pending_then_feedback() -> None:
    """Text boxes say 'feedback pending' until the feedback reaches them."""
    greeting = Variable("hello", role="greeting", requires_grad=True)
    sentence = greeting + " world"
    frames = viz.backward_steps(sentence, Variable("too informal", role="feedback"))
    assert [frame_action(f) for f in frames] == [
        "running ConcatBackward",
        "AccumulateGrad adds into greeting.grad",
    ]
    assert "feedback pending" in the_node(frames[0].source, "<b>greeting</b>")[1]
    assert "feedback “too informal”" in the_node(frames[-1].source, "<b>greeting</b>")[1]
    assert "grad pending" not in frames[0].source


# --------------------------------------------------------------------------- 6. show_saved


def test_mul_links_its_saved_inputs_with_dashed_edges() -> None:
    """show_saved: the two inputs Mul saved point at it, dashed and labelled 'saved i'."""
    a = Variable([1.0, 2.0], requires_grad=True, name="a")
    b = Variable([3.0, 4.0], requires_grad=True, name="b")
    y = (a * b).sum()
    assert "saved" not in viz.draw(y).source
    drawing = viz.draw(y, show_saved=True)
    source = drawing.source
    mul, _ = the_node(source, "MulBackward")
    a_id, _ = the_node(source, "<b>a</b>")
    b_id, _ = the_node(source, "<b>b</b>")
    saved = [(t, h, rest) for t, h, rest in edges_of(source) if "saved" in rest]
    assert [(t, h) for t, h, _ in saved] == [(a_id, mul), (b_id, mul)]
    assert 'label="saved 0"' in saved[0][2] and 'label="saved 1"' in saved[1][2]
    assert all('style="dashed"' in rest for _, _, rest in saved)
    assert drawing.edge_count == viz.draw(y).edge_count + 2


def test_after_backward_the_node_says_its_saved_values_are_freed() -> None:
    """Without retain_graph, backward frees what Mul saved; the drawing says so."""
    a = Variable([1.0, 2.0], requires_grad=True, name="a")
    b = Variable([3.0, 4.0], requires_grad=True, name="b")
    y = (a * b).sum()
    y.backward()
    source = viz.draw(y, show_saved=True).source
    _, mul = the_node(source, "MulBackward")
    assert "saved values freed" in mul
    assert "saved 0" not in source
    assert "saved values freed" not in viz.draw(y).source

    c = Variable([1.0, 2.0], requires_grad=True, name="c")
    z = (c * c).sum()
    z.backward(retain_graph=True)
    kept = viz.draw(z, show_saved=True).source
    assert "saved values freed" not in kept and "saved 0" in kept


def test_tanh_saved_output_links_to_its_output_box() -> None:
    """tanh saves its output: the dashed edge starts at the output's own box."""
    t = Variable([0.5], requires_grad=True, name="t")
    o = t.tanh()
    o.name = "o"
    source = viz.draw(o, show_saved=True).source
    o_id, _ = the_node(source, "<b>o</b>")
    tanh_id, _ = the_node(source, "TanhBackward")
    saved = [(t_, h) for t_, h, rest in edges_of(source) if "saved 0" in rest]
    assert saved == [(o_id, tanh_id)]
    assert "<b>saved</b>" not in source  # no separate box for a value already drawn


# --------------------------------------------------------------------------- 7. max_nodes


def tanh_chain(length: int) -> Variable:
    x = Variable([0.1], requires_grad=True, name="x")
    h = x
    for _ in range(length):
        h = h.tanh()
    return h


def test_max_nodes_folds_the_rest_into_a_summary_node() -> None:
    """50 tanh: 101 nodes; max_nodes=10 keeps 10 and says how many more there are."""
    h = tanh_chain(50)
    full = viz.draw(h)
    assert (full.node_count, full.edge_count) == (101, 100)
    cut = viz.draw(h, max_nodes=10)
    assert cut.node_count <= 11
    summaries = [line for line in node_statements(cut.source).values() if 'shape="note"' in line]
    assert len(summaries) == 1
    assert style_of("summary") in summaries[0]
    left_out = int(re.search(r'label="… (\d+) more nodes?"', summaries[0]).group(1))
    assert left_out + (cut.node_count - 1) == full.node_count
    assert left_out == 91
    assert style_of("output") in node_statements(cut.source)["v0"]
    # Every edge joins drawn nodes; the summary feeds what is drawn.
    drawn = set(node_statements(cut.source))
    assert all(t in drawn and h_ in drawn for t, h_, _ in edges_of(cut.source))
    assert any(t == "more" for t, _, _ in edges_of(cut.source))
    # A limit the graph fits in changes nothing.
    assert viz.draw(h, max_nodes=101).source == full.source


@pytest.mark.parametrize("bad", [0, -1, 2.5, True], ids=["zero", "negative", "float", "bool"])
def test_invalid_max_nodes_is_a_value_error_naming_it(bad) -> None:
    """max_nodes must be a positive int."""
    y = tanh_chain(2)
    with pytest.raises(ValueError, match="max_nodes"):
        viz.draw(y, max_nodes=bad)
    with pytest.raises(ValueError, match="max_nodes"):
        viz.backward_steps(y.sum(), max_nodes=bad)


def test_invalid_rankdir_is_a_value_error_naming_it() -> None:
    """rankdir is one of LR, RL, TB, BT."""
    y = tanh_chain(2)
    with pytest.raises(ValueError, match="rankdir.*'up'"):
        viz.draw(y, rankdir="up")
    assert 'rankdir="TB"' in viz.draw(y, rankdir="TB").source


@pytest.mark.parametrize(
    ("value", "described"),
    [(3, "got int"), ([], "got a list of nothing"), ([Variable(1.0), 2], "list of Variable, int")],
    ids=["int", "empty-list", "mixed-list"],
)
def test_draw_of_something_else_is_a_type_error_naming_it(value, described) -> None:
    """draw() wants a Variable or a non-empty list of them, and says what it got."""
    with pytest.raises(TypeError, match=re.escape(described)):
        viz.draw(value)


def test_backward_steps_takes_one_variable() -> None:
    """backward_steps() draws the backward of one output."""
    with pytest.raises(TypeError, match="backward_steps.*got a list of Variable"):
        viz.backward_steps([Variable(1.0, requires_grad=True)])


# --------------------------------------------------------------------------- 8. backward_steps


def test_backward_steps_order_is_the_order_hooks_fire_in() -> None:
    """Hooks on every Variable fire in the engine's order; the frame titles follow it."""
    graph = diamond()
    fired: list[str] = []
    for label, variable in graph.items():
        variable.register_hook(lambda grad, label=label: fired.append(label))
    frames = viz.backward_steps(graph["out"])

    action = {
        "out": "running SumBackward",
        "m": "running MulBackward",
        "total": "running AddBackward",
        "t": "running TanhBackward",
        "e": "running ExpBackward",
        "s": "running MulBackward",
        "a": "AccumulateGrad adds into a.grad",
        "b": "AccumulateGrad adds into b.grad",
    }
    assert sorted(fired) == sorted(action)  # each node ran once
    assert [frame_action(f) for f in frames] == [action[label] for label in fired]
    # Consumers come first: s runs only after both tanh and exp, a only after both Muls.
    assert fired.index("s") > max(fired.index("t"), fired.index("e"))
    assert fired.index("a") > fired.index("s")
    n = len(frames)
    assert [f.title.split(":")[0] for f in frames] == [f"step {k} of {n}" for k in range(1, n + 1)]


def test_backward_steps_has_one_frame_per_engine_step_and_the_same_gradients() -> None:
    """As many frames as the engine runs steps; the leaves get what a plain backward gives."""
    stepped, plain = diamond(), diamond()
    frames = viz.backward_steps(stepped["out"])
    steps = engine_steps(plain["out"])
    assert len(frames) == len(steps) == 8
    assert [frame_action(f) for f in frames if f.title.count("running")] == [
        f"running {name}" for name in steps if name != "AccumulateGrad"
    ]
    for leaf in ("a", "b"):
        np.testing.assert_array_equal(stepped[leaf].grad.data, plain[leaf].grad.data)
    assert engine._step_observers == []


def test_frames_show_gradients_arriving_and_highlight_one_node() -> None:
    """Frame 1 knows only the output's 'grad 1'; gradients spread, pending ones go."""
    graph = diamond()
    frames = viz.backward_steps(graph["out"])
    out_box = frames[0].source.splitlines()[4]
    assert out_box.startswith("  v0 [") and ">grad 1</font>" in out_box
    pending = [f.source.count("grad pending") for f in frames]
    known = [f.source.count(f'color="{viz.GRAD_COLOUR}">grad ') for f in frames]
    assert known[0] == 1 and pending[0] > 0
    assert pending == sorted(pending, reverse=True) and pending[-1] == 0
    assert known == sorted(known) and known[-1] == pending[0] + 1
    for frame in frames:
        assert frame.source.count(CURRENT_FILL) == 1, frame.title
        current_id, current = the_node(frame.source, CURRENT_FILL)
        if "AccumulateGrad" in frame.title:
            leaf = frame.title.split("adds into ")[1].removesuffix(".grad")
            assert current_id.startswith("v") and f"<b>{leaf}</b>" in current
        else:
            assert current_id.startswith("f") and frame_action(frame).split()[-1] in current


def test_backward_steps_with_retain_graph_lets_backward_run_again() -> None:
    """retain_graph=True keeps saved values: a second backward adds the same again."""
    graph = diamond()
    viz.backward_steps(graph["out"], retain_graph=True)
    first = graph["a"].grad.data.copy()
    graph["out"].backward()
    np.testing.assert_allclose(graph["a"].grad.data, 2 * first)

    other = diamond()
    viz.backward_steps(other["out"])
    with pytest.raises(RuntimeError):
        other["out"].backward()


def test_backward_steps_takes_a_gradient_for_a_non_scalar_output() -> None:
    """The gradient argument seeds backward, as in output.backward(gradient)."""
    v = Variable([1.0, 2.0], requires_grad=True, name="v")
    frames = viz.backward_steps(v * 3, np.array([1.0, -1.0]))
    assert [frame_action(f) for f in frames] == [
        "running MulBackward",
        "AccumulateGrad adds into v.grad",
    ]
    np.testing.assert_array_equal(v.grad.data, [3.0, -3.0])
    assert ">grad [1, -1]</font>" in frames[0].source


def test_backward_steps_removes_its_observer_when_backward_fails() -> None:
    """A failing backward raises as usual and leaves no observer behind."""
    v = Variable([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="scalar"):
        viz.backward_steps(v * 3)
    assert engine._step_observers == []


def test_a_backward_in_another_thread_adds_no_frames() -> None:
    """A backward run by another thread while backward_steps runs is not drawn."""
    graph = diamond()
    other_grads: list = []

    def run_other_backward(grad) -> None:
        def work() -> None:
            p = Variable([1.0, 2.0], requires_grad=True)
            (p * p).tanh().sum().backward()
            other_grads.append(p.grad)

        worker = threading.Thread(target=work)
        worker.start()
        worker.join()

    graph["s"].register_hook(run_other_backward)
    frames = viz.backward_steps(graph["out"])
    assert len(other_grads) == 1 and other_grads[0] is not None  # it ran, meanwhile
    assert len(frames) == 8


# --------------------------------------------------------------------------- 9. without dot


def test_without_dot_the_text_works_and_rendering_explains_the_install(
    monkeypatch, tmp_path
) -> None:
    """No dot on PATH: .source and .dot files work; SVG, PNG and Jupyter say how to install."""
    _, _, y = small_graph()
    drawing = viz.draw(y)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert drawing.source == EXPECTED_BEFORE
    with pytest.raises(viz.GraphvizNotFoundError) as raised:
        drawing.svg()
    for hint in ("apt-get", "brew", "conda"):
        assert hint in str(raised.value)
    with pytest.raises(viz.GraphvizNotFoundError, match="apt-get"):
        drawing.save(tmp_path / "g.png")
    assert not (tmp_path / "g.png").exists()
    bundle = drawing._repr_mimebundle_()
    assert list(bundle) == ["text/plain"]
    assert bundle["text/plain"].startswith(repr(drawing))
    assert "apt-get" in bundle["text/plain"] and "brew install graphviz" in bundle["text/plain"]
    saved = drawing.save(tmp_path / "g.dot")
    assert saved.read_text(encoding="utf-8") == EXPECTED_BEFORE


# --------------------------------------------------------------------------- 10. the Drawing


def test_repr_is_a_stable_summary() -> None:
    """repr names the counts (and a title), never an address."""
    _, _, y = small_graph()
    assert repr(viz.draw(y)) == "<Drawing: 6 nodes, 5 edges>"
    frames = viz.backward_steps(y)
    assert repr(frames[0]) == "<Drawing 'step 1 of 3: running SumBackward → y': 6 nodes, 5 edges>"
    assert all("0x" not in repr(frame) for frame in frames)


def test_jupyter_gets_svg_png_and_text() -> None:
    """_repr_mimebundle_ offers the SVG, a PNG (for untrusted notebooks, GitHub, VS Code)
    and the one-line summary, with the PNG's display width as metadata."""
    _, _, y = small_graph()
    drawing = viz.draw(y)
    data, metadata = drawing._repr_mimebundle_()
    assert set(data) == {"image/svg+xml", "image/png", "text/plain"}
    assert data["text/plain"] == repr(drawing) == "<Drawing: 6 nodes, 5 edges>"
    png = base64.b64decode(data["image/png"])
    assert png.startswith(PNG_MAGIC) and png == drawing.png()
    # Shown at the SVG's size: PNG pixels at 144 dpi, CSS pixels at 96 an inch.
    width = int.from_bytes(png[16:20], "big")
    assert metadata == {"image/png": {"width": round(width * 96 / viz.PNG_DPI)}}
    svg_width_pt = float(re.search(r'<svg[^>]* width="([\d.]+)pt"', drawing.svg()).group(1))
    assert metadata["image/png"]["width"] == pytest.approx(svg_width_pt * 96 / 72, abs=2)
    # The SVG shrinks to the cell where it is drawn inline; otherwise it is dot's own.
    assert data["image/svg+xml"].startswith(drawing.svg()[: drawing.svg().index("<svg")])
    assert '<svg style="max-width:100%;height:auto" ' in data["image/svg+xml"]
    assert data["image/svg+xml"].replace('style="max-width:100%;height:auto" ', "") == drawing.svg()


def test_ipython_displays_the_png_with_its_width() -> None:
    """IPython takes the (data, metadata) pair: what a notebook stores for the drawing."""
    formatters = pytest.importorskip("IPython.core.formatters")
    _, _, y = small_graph()
    data, metadata = formatters.DisplayFormatter().format(viz.draw(y))
    assert {"image/svg+xml", "image/png", "text/plain"} <= set(data)
    assert data["text/plain"] == "<Drawing: 6 nodes, 5 edges>"
    assert metadata["image/png"]["width"] > 0


def test_a_lesson_sized_png_is_tens_of_kilobytes() -> None:
    """A 256-colour palette keeps the PNG small (an MLP's drawing, 26 nodes, under 100 KB)."""
    model, loss = small_mlp()
    png = viz.draw(loss, model=model).png()
    assert png.startswith(PNG_MAGIC)
    assert len(png) < 100_000
    assert len(viz.draw(small_graph()[2]).png()) < 30_000


def test_save_writes_each_format(tmp_path) -> None:
    """The suffix picks the format: SVG text, PNG and PDF bytes, DOT text."""
    _, _, y = small_graph()
    drawing = viz.draw(y)
    assert drawing.save(tmp_path / "g.svg") == tmp_path / "g.svg"
    assert "<svg" in (tmp_path / "g.svg").read_text(encoding="utf-8")
    drawing.save(tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes().startswith(PNG_MAGIC)
    drawing.save(str(tmp_path / "g.pdf"))
    assert (tmp_path / "g.pdf").read_bytes().startswith(b"%PDF")
    drawing.save(tmp_path / "g.dot")
    assert (tmp_path / "g.dot").read_text(encoding="utf-8").startswith("digraph minigrad {")
    drawing.save(tmp_path / "G.GV")
    assert (tmp_path / "G.GV").read_text(encoding="utf-8") == drawing.source


def test_save_with_an_unknown_suffix_names_the_allowed_ones(tmp_path) -> None:
    """.jpg is not offered: the error lists .svg, .png, .pdf and .dot."""
    _, _, y = small_graph()
    with pytest.raises(ValueError, match=re.escape(".svg, .png, .pdf, .dot")):
        viz.draw(y).save(tmp_path / "g.jpg")
    assert not (tmp_path / "g.jpg").exists()


def test_strip_combines_frames() -> None:
    """strip() puts frames into one drawing; its counts are the sums; dot renders it."""
    graph = diamond()
    frames = viz.backward_steps(graph["out"], max_nodes=6)
    combined = viz.strip(frames, title="backward, step by step")
    assert combined.node_count == sum(f.node_count for f in frames)
    assert combined.edge_count == sum(f.edge_count for f in frames)
    assert combined.title == "backward, step by step"
    assert combined.source.count("subgraph cluster_") == len(frames)
    assert "s0_more" in combined.source and "s7_v0" in combined.source
    drawn = re.findall(r"^    (s\d+_\w+) \[", combined.source, flags=re.MULTILINE)
    assert len(drawn) == len(set(drawn)) == combined.node_count
    assert "<svg" in combined.svg()


@pytest.mark.parametrize("bad", [[], [1]], ids=["empty", "not-drawings"])
def test_strip_of_no_drawings_is_a_type_error(bad) -> None:
    """strip() wants a non-empty list of Drawings."""
    with pytest.raises(TypeError, match="strip"):
        viz.strip(bad)


def test_strip_title_is_plain_text() -> None:
    """A title is shown as written, whatever characters it holds."""
    frames = viz.backward_steps(small_graph()[2])
    svg = viz.strip(frames, title="<a & b>").svg()
    texts = [element.text for element in ET.fromstring(svg).iter() if element.tag.endswith("text")]
    assert "<a & b>" in texts


# --------------------------------------------------------------------------- 11. imports


def test_import_minigrad_does_not_import_graphviz() -> None:
    """minigrad.viz loads on first use; importing minigrad alone leaves graphviz out."""
    program = (
        "import sys, minigrad; "
        "assert 'graphviz' not in sys.modules, 'graphviz imported'; "
        "assert 'minigrad.viz' not in sys.modules; "
        "viz = minigrad.viz; "
        "assert 'graphviz' in sys.modules and viz.draw.__module__ == 'minigrad.viz'; "
        "print('ok')"
    )
    result = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
    assert minigrad.viz is viz


def test_running_node_folded_away_lights_up_the_summary() -> None:
    """With max_nodes, a step whose node is hidden highlights the summary node instead."""
    x = Variable(0.3, requires_grad=True, name="x")
    y = x
    for _ in range(6):
        y = y.tanh()
    frames = viz.backward_steps(y, max_nodes=4)
    for frame in frames:
        assert frame.source.count(viz.CURRENT[1]) == 1, frame.title


# --------------------------------------------------------------------------- 12. layout


def test_a_graph_deeper_than_wide_is_drawn_top_to_bottom() -> None:
    """rankdir=None: TB when the longest path from the output has more nodes than the widest
    rank, else LR; an explicit rankdir wins."""
    chain = tanh_chain(3)  # 7 ranks of one node each
    assert 'rankdir="TB"' in viz.draw(chain).source
    assert 'rankdir="LR"' in viz.draw(chain, rankdir="LR").source
    # stack of five leaves: 3 ranks (output, StackBackward, leaves), the widest holds five.
    leaves = [Variable(float(i), requires_grad=True, name=f"x{i}") for i in range(5)]
    wide = minigrad.stack(leaves)
    assert 'rankdir="LR"' in viz.draw(wide).source
    assert 'rankdir="BT"' in viz.draw(wide, rankdir="BT").source
    # One box: as deep as it is wide, so left to right.
    assert 'rankdir="LR"' in viz.draw(Variable(1.0)).source


def test_depth_counts_the_longest_path_not_the_first_one_found() -> None:
    """x feeds the output directly and through four tanh. Its longest path puts it on the
    last of 11 ranks, one node each (the first path found would put it beside h)."""
    x = Variable([0.5], requires_grad=True, name="x")
    h = x
    for _ in range(4):
        h = h.tanh()
    out = h + x
    graph = viz._Graph([out], show_saved=False, max_nodes=None)
    assert graph.depth_and_width() == (11, 1)
    assert graph.auto_rankdir() == "TB"
    # Saved values hang beside the graph and change neither number.
    assert viz._Graph([out], True, None).depth_and_width() == (11, 1)


def test_max_nodes_folding_is_ranked_with_its_summary() -> None:
    """The folded drawing is ranked as drawn: output, tanh nodes kept, the summary node."""
    h = tanh_chain(50)
    graph = viz._Graph([h], show_saved=False, max_nodes=10)
    assert graph.depth_and_width() == (11, 1)
    assert 'rankdir="TB"' in viz.draw(h, max_nodes=10).source


def test_backward_steps_frames_share_the_chosen_direction() -> None:
    """Every frame of a deep graph is TB; rankdir="LR" applies to all of them."""
    graph = diamond()
    frames = viz.backward_steps(graph["out"], retain_graph=True)
    assert all('rankdir="TB"' in frame.source for frame in frames)
    frames = viz.backward_steps(graph["out"], rankdir="LR")
    assert all('rankdir="LR"' in frame.source for frame in frames)


def test_drawings_fit_a_notebook_cell() -> None:
    """A chain drawn left to right would be ~60 inches wide: dot shrinks it to 9 inches
    (864 CSS pixels), and the PNG to 9 inches at 144 dpi."""
    wide = viz.draw(tanh_chain(12), rankdir="LR")
    assert f'size="{viz.MAX_WIDTH_INCHES},{viz.MAX_HEIGHT_INCHES}"' in wide.source
    svg_width_pt = float(re.search(r'<svg[^>]* width="([\d.]+)pt"', wide.svg()).group(1))
    assert svg_width_pt <= 9 * 72 + 1
    png = wide.png()
    assert int.from_bytes(png[16:20], "big") <= 9 * viz.PNG_DPI + 2
    _, metadata = wide._repr_mimebundle_()
    assert metadata["image/png"]["width"] <= 9 * 96 + 2


def test_a_two_layer_mlp_fits_a_cell_top_to_bottom() -> None:
    """The MLP of the lessons is drawn TB, narrower than a cell and not shrunk."""
    model, loss = small_mlp()
    drawing = viz.draw(loss, model=model)
    assert 'rankdir="TB"' in drawing.source
    svg_width_pt = float(re.search(r'<svg[^>]* width="([\d.]+)pt"', drawing.svg()).group(1))
    assert svg_width_pt < 9 * 72
    assert 'transform="scale(1 1)' in drawing.svg()  # natural size: labels stay readable


# --------------------------------------------------------------------------- 13. names


def test_params_name_the_boxes_of_a_models_weights() -> None:
    """draw(y, params=dict(model.named_parameters())), as in torchviz."""
    model, loss = small_mlp()
    source = viz.draw(loss, params=dict(model.named_parameters())).source
    for name, shape in (("0.weight", "(4, 3)"), ("0.bias", "(4,)"), ("2.weight", "(2, 4)")):
        _, box = the_node(source, f"<b>{name}</b>")
        assert f"{shape} float64" in box and style_of("leaf") in box
    assert "<b>2.bias</b>" in source
    assert "<b>x</b>" in source and "<b>loss</b>" in source  # their own names stay


def test_model_names_its_parameters_like_params() -> None:
    """draw(y, model=model) is draw(y, params=dict(model.named_parameters()))."""
    model, loss = small_mlp()
    by_params = viz.draw(loss, params=dict(model.named_parameters())).source
    assert viz.draw(loss, model=model).source == by_params


def test_given_names_win_over_own_names_and_params_over_model() -> None:
    """A parameter's .name gives way to the name it has in the model; params= wins over
    model= for the Variables it names, and can name any Variable."""
    model, loss = small_mlp()
    model[0].weight.name = "W1"
    source = viz.draw(loss, model=model).source
    assert "<b>0.weight</b>" in source and "<b>W1</b>" not in source
    first = model[0].weight
    source = viz.draw(loss, model=model, params={"first layer": first, "the loss": loss}).source
    assert "<b>first layer</b>" in source and "<b>0.weight</b>" not in source
    assert "<b>the loss</b>" in source and "<b>2.weight</b>" in source
    # Names of Variables that are not in the graph are ignored.
    assert viz.draw(loss, params={"other": Variable(1.0)}).source == viz.draw(loss).source


def test_backward_steps_frames_use_the_names() -> None:
    """A frame's title says which parameter AccumulateGrad fills."""
    model = minigrad.nn.Linear(2, 1)
    loss = model(Variable([[1.0, 2.0]])).sum()
    frames = viz.backward_steps(loss, model=model)
    actions = [frame_action(frame) for frame in frames]
    assert "AccumulateGrad adds into weight.grad" in actions
    assert "AccumulateGrad adds into bias.grad" in actions
    assert all("<b>weight</b>" in frame.source for frame in frames)


@pytest.mark.parametrize(
    ("make_kwargs", "message"),
    [
        (lambda m: {"params": ["w"]}, r"params=.*dict of name -> Variable.*got a list of str"),
        (
            lambda m: {"params": m.named_parameters()},
            r"dict\(model.named_parameters\(\)\); got gen",
        ),
        (lambda m: {"params": {"w": 3.0}}, r"entry 'w' is str -> float"),
        (lambda m: {"params": {1: m.weight}}, r"entry 1 is int -> Parameter"),
        (lambda m: {"model": "model"}, r"model=.*minigrad.nn.Module.*got str"),
        (lambda m: {"model": dict(m.named_parameters())}, r"model=.*Module.*got dict.*params="),
    ],
    ids=["list", "generator", "not-a-variable", "not-a-str", "str-model", "dict-model"],
)
def test_bad_params_or_model_are_type_errors_saying_what_to_pass(make_kwargs, message) -> None:
    """params must be a dict of str -> Variable, model a minigrad Module."""
    model = minigrad.nn.Linear(2, 1)
    loss = model(Variable([[1.0, 2.0]])).sum()
    with pytest.raises(TypeError, match=message):
        viz.draw(loss, **make_kwargs(model))
    with pytest.raises(TypeError, match="backward_steps"):
        viz.backward_steps(loss, **make_kwargs(model))
    assert model.weight.grad is None  # rejected before backward ran


def test_drawing_after_backward_does_not_warn_about_non_leaf_grads() -> None:
    """Reading .grad of a result warns, as in PyTorch; a drawing reads it only where
    backward fills it (leaves and retain_grad() results)."""
    model, loss = small_mlp()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        source = viz.draw(loss, model=model).source
        viz.backward_steps(tanh_chain(3).sum())
    assert source.count(">grad ") == 4  # the four parameters


# --------------------------------------------------------------------------- 14. strips


@pytest.mark.parametrize("rankdir", ["TB", "LR", "BT", "RL"])
@pytest.mark.parametrize(("count", "columns"), [(6, 3), (6, 2), (5, 2), (5, 3), (4, 4), (3, 1)])
def test_strip_lays_frames_out_in_rows_read_like_a_page(rankdir, count, columns) -> None:
    """columns=3: frames 1-3 in the first row, 4-6 in the second, whatever the direction."""
    frames = viz.backward_steps(diamond()["out"], rankdir=rankdir)[:count]
    order = frame_order(viz.strip(frames, columns=columns))
    expected = [list(range(i, min(i + columns, count))) for i in range(0, count, columns)]
    assert order == expected


def test_strip_of_different_drawings_keeps_the_reading_order() -> None:
    """Frames of different sizes (lessons put a graph beside its derivative) still read
    like a page."""
    for rankdir in ("TB", "LR"):
        deep = viz.draw(diamond()["out"], rankdir=rankdir)
        small = viz.draw(small_graph()[2], rankdir=rankdir)
        strip = viz.strip([deep, small, small, deep, small], columns=2)
        assert frame_order(strip) == [[0, 1], [2, 3], [4]]


def test_strip_titles_each_frame_on_two_lines() -> None:
    """'step 1 of 3' in bold, then the action, each line aligned left."""
    frames = viz.backward_steps(small_graph()[2])
    source = viz.strip(frames, columns=3).source
    assert '<b>step 1 of 3</b><br align="left"/>running SumBackward → y<br align="left"/>' in source


def test_strip_of_frames_in_different_directions_is_top_to_bottom() -> None:
    """Frames that agree keep their direction; frames that disagree are drawn TB."""
    deep = viz.draw(tanh_chain(3))
    flat = viz.draw(Variable(1.0))
    assert 'rankdir="LR"' in viz.strip([flat, flat]).source
    assert 'rankdir="TB"' in viz.strip([flat, deep]).source


@pytest.mark.parametrize("bad", [0, -2, 1.5, True])
def test_strip_columns_must_be_a_positive_int(bad) -> None:
    frames = viz.backward_steps(small_graph()[2])
    with pytest.raises(ValueError, match="columns"):
        viz.strip(frames, columns=bad)


def test_a_strip_cannot_go_into_another_strip() -> None:
    frames = viz.backward_steps(small_graph()[2])
    with pytest.raises(TypeError, match="not another strip"):
        viz.strip([viz.strip(frames), frames[0]])
