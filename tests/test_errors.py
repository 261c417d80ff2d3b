"""Error paths: every bad input gets a specific exception type and a helpful message.

The rule (DESIGN.md, "Errors:"): the message says what was expected, what was received
and what to do; PyTorch's wording is the model where PyTorch has one; nothing internal
leaks (no bare AssertionError, IndexError or KeyError, no NumPy message from inside the
engine); nothing is silently wrong.

Most cases are one row of a table: an id, a call that must fail, the exception type, and
the phrases its message must contain (in any order). Cases that need a graph, a custom
Function or a context manager are written out below the tables.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import minigrad as mg
from minigrad import Function, GradcheckError, Variable


def allof(*phrases: str) -> str:
    """A regex that matches when every phrase (itself a regex) occurs, in any order."""
    return "(?s)" + "".join(f"(?=.*(?:{phrase}))" for phrase in phrases)


def lit(text: str) -> str:
    """A phrase matched literally."""
    return re.escape(text)


def absent(phrase: str) -> str:
    """For allof: `phrase` must not occur anywhere in the message."""
    return f"^(?!.*{phrase})"


def leaf(*values: float) -> Variable:
    """A float64 leaf that requires grad (default [1, 2, 3])."""
    return Variable(np.array(values or (1.0, 2.0, 3.0)), requires_grad=True)


def ones(*shape: int) -> Variable:
    return Variable(np.ones(shape))


def assign_grad(variable: Variable, value: Any) -> None:
    variable.grad = value


def set_requires_grad(variable: Variable, value: Any) -> None:
    variable.requires_grad = value


def setitem(variable: Variable, index: Any, value: Any) -> None:
    variable[index] = value


# --------------------------------------------------------------------------- custom Functions


def _square_with_slope(coefficient: float) -> type[Function]:
    """y = a**2 with backward coefficient * a: 2 is right, anything else is wrong."""

    class Square(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a.data**2

        @staticmethod
        def backward(ctx, grad):
            (a,) = ctx.saved_tensors
            return grad * coefficient * a

    return Square


Square = _square_with_slope(2)  # correct
WrongSquare = _square_with_slope(3)  # a wrong backward (3a instead of 2a), for gradcheck


class OneGradForTwo(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a.data * b.data

    @staticmethod
    def backward(ctx, grad):
        return grad


class WrongShapeGrad(Function):
    @staticmethod
    def forward(ctx, a):
        return a.data * 2

    @staticmethod
    def backward(ctx, grad):
        return Variable(np.ones(4))


class WrongShapeArrayGrad(Function):
    @staticmethod
    def forward(ctx, a):
        return a.data * 2

    @staticmethod
    def backward(ctx, grad):
        return np.ones((2, 2))


class GradForNumber(Function):
    @staticmethod
    def forward(ctx, a, k):
        return a.data * k

    @staticmethod
    def backward(ctx, grad):
        return grad * 2, grad


class DictGrad(Function):
    @staticmethod
    def forward(ctx, a):
        return a.data * 2

    @staticmethod
    def backward(ctx, grad):
        return {"a": grad}


class TextGradForNumber(Function):
    @staticmethod
    def forward(ctx, a):
        return a.data * 2

    @staticmethod
    def backward(ctx, grad):
        return "make it bigger"


class NoForward(Function):
    @staticmethod
    def backward(ctx, grad):
        return grad


class NoBackward(Function):
    @staticmethod
    def forward(ctx, a):
        return a.data * 2


class DirtyNotReturned(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.mark_dirty(b)
        return a.data * 2

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class AddOneInPlace(Function):
    @staticmethod
    def forward(ctx, a):
        a.data += 1
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx, grad):
        return grad


class OnceSquare(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a.data**2

    @staticmethod
    @mg.once_differentiable
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        return grad * 2 * a


class NanGrad(Function):
    @staticmethod
    def forward(ctx, a):
        return a.data * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * float("nan")


# --------------------------------------------------------------------------- the cases


def _backward_twice(make: Callable[[Variable], Variable]) -> None:
    y = make(leaf()).sum()
    y.backward()
    y.backward()


def _modify_saved_input_then_backward() -> None:
    b = leaf() * 1
    y = (b * b).sum()  # MulBackward saves b
    b.mul_(2.0)
    y.backward()


def _modify_saved_output_then_backward() -> None:
    b = leaf().exp()  # ExpBackward saves its output b
    b.add_(Variable(1.0))
    b.sum().backward()


def _hook_changes_leaf_grad_shape() -> None:
    a = leaf()
    a.register_hook(lambda g: Variable(np.ones(5)))
    (a * 2).sum().backward()


def _hook_changes_nonleaf_grad_shape() -> None:
    a = leaf()
    b = a * 2
    b.register_hook(lambda g: Variable(np.ones(5)))
    b.sum().backward()


def _hook_returns_text_for_numeric() -> None:
    a = leaf()
    a.register_hook(lambda g: "feedback")
    (a * 2).sum().backward()


def _grad_of_unused_input() -> None:
    a, b = leaf(), leaf()
    mg.grad((a * 2).sum(), [a, b])


CONSTRUCTION = [
    ("data-None", lambda: Variable(None), TypeError, allof("numeric", "str", "NoneType")),
    ("data-object", lambda: Variable(object()), TypeError, allof("numeric", "object")),
    (
        "data-list-of-str",
        lambda: Variable(["a", "b"]),
        TypeError,
        allof("numeric", "list", "pass one str"),
    ),
    ("data-dict", lambda: Variable({"a": 1}), TypeError, allof("numeric", "dict")),
    ("data-set", lambda: Variable({1, 2}), TypeError, allof("numeric", "set")),
    ("data-bytes", lambda: Variable(b"abc"), TypeError, allof("numeric", "bytes")),
    (
        "data-ragged-list",
        lambda: Variable([[1.0, 2.0], [3.0]]),
        TypeError,
        allof("nested list of numbers", "list"),
    ),
    (
        "requires_grad-int",
        lambda: Variable(1.0, requires_grad=1),
        TypeError,
        allof("requires_grad must be True or False", "got 1"),
    ),
    (
        "requires_grad-None",
        lambda: Variable(1.0, requires_grad=None),
        TypeError,
        allof("requires_grad must be True or False", "None"),
    ),
    ("role-int", lambda: Variable(1.0, role=3), TypeError, allof("role must be a str", "int")),
    ("name-int", lambda: Variable(1.0, name=3), TypeError, allof("name must be a str", "int")),
    (
        "requires_grad-on-int-dtype",
        lambda: Variable([1, 2], requires_grad=True),
        RuntimeError,
        allof("only Variables of floating point dtype can require gradients", "int64", "astype"),
    ),
    (
        "requires_grad-on-bool-dtype",
        lambda: Variable([True, False], requires_grad=True),
        RuntimeError,
        allof("only Variables of floating point dtype can require gradients", "bool"),
    ),
    (
        "Parameter-of-ints",
        lambda: mg.Parameter(np.array([1, 2])),
        RuntimeError,
        allof("floating point dtype", "int64"),
    ),
    (
        "requires_grad-setter-str",
        lambda: set_requires_grad(Variable(1.0), "yes"),
        TypeError,
        allof("requires_grad must be True or False", "'yes'"),
    ),
    (
        "requires_grad-on-non-leaf",
        lambda: set_requires_grad(leaf() * 2, False),
        RuntimeError,
        allof("you can only change requires_grad flags of leaf variables", "MulBackward", "detach"),
    ),
]

ATTRIBUTES = [
    (
        "grad-assign-list",
        lambda: assign_grad(leaf(), [1.0, 2.0, 3.0]),
        TypeError,
        allof("assigned grad expected to be a Variable or None", "list"),
    ),
    (
        "grad-assign-wrong-shape",
        lambda: assign_grad(leaf(), Variable([1.0, 2.0])),
        RuntimeError,
        allof("assigned grad has data of a different size", lit("(2,)"), lit("(3,)")),
    ),
    (
        "grad-assign-text-to-numeric",
        lambda: assign_grad(leaf(), Variable("feedback")),
        TypeError,
        allof("assigned grad is text", "numeric"),
    ),
    (
        "grad-assign-numeric-to-text",
        lambda: assign_grad(Variable("x", requires_grad=True), Variable(1.0)),
        TypeError,
        allof("assigned grad is numeric", "text"),
    ),
    (
        # PyTorch: "assigned grad has data of a different type".
        "grad-assign-int-dtype-to-float",
        lambda: assign_grad(leaf(), Variable([1, 2, 3])),
        RuntimeError,
        allof("assigned grad has data of a different type", "int64", "float64"),
    ),
    (
        "item-multi-element",
        lambda: leaf().item(),
        RuntimeError,
        allof("a Variable with 3 elements cannot be converted to Scalar", lit("(3,)")),
    ),
    (
        "numpy-requires-grad",
        lambda: leaf().numpy(),
        RuntimeError,
        allof(lit("Can't call numpy() on a Variable that requires grad"), lit(".detach().numpy()")),
    ),
    (
        "numpy-of-text",
        lambda: Variable("abc").numpy(),
        TypeError,
        allof("text Variable has no NumPy form", lit(".item()")),
    ),
    (
        "bool-multi-element",
        lambda: bool(ones(2)),
        RuntimeError,
        allof("truth value of a Variable with more than one element is ambiguous", "any"),
    ),
    (
        "len-0d",
        lambda: len(Variable(1.0)),
        TypeError,
        allof(lit("len() of a 0-d Variable"), lit(".item()")),
    ),
    (
        # A text Variable is not a number: no implicit str -> float parsing.
        "float-of-text",
        lambda: float(Variable("1.5")),
        TypeError,
        allof("text"),
    ),
    ("int-of-text", lambda: int(Variable("hello")), TypeError, allof("text")),
    (
        "to-tpu",
        lambda: Variable(1.0).to("tpu"),
        ValueError,
        allof("unknown device 'tpu'", "'cpu'"),
    ),
    (
        "to-int",
        lambda: Variable(1.0).to(3),
        TypeError,
        allof("device must be .cpu., .cuda. or minigrad.device", "int"),
    ),
    # Without CUDA support (NotImplementedError today, a "no GPU" error later): a RuntimeError.
    (
        "size-dim-out-of-range",
        lambda: ones(3).size(5),
        IndexError,
        allof("Dimension out of range", lit("[-1, 0]"), "got 5"),
    ),
]

ENGINE = [
    (
        "backward-twice-saved-input",
        lambda: _backward_twice(lambda a: a * a),
        RuntimeError,
        allof("Trying to backward through the graph a second time", "Specify retain_graph=True"),
    ),
    (
        "backward-twice-saved-output",
        lambda: _backward_twice(lambda a: a.exp()),
        RuntimeError,
        allof("Trying to backward through the graph a second time", "Specify retain_graph=True"),
    ),
    (
        "implicit-grad-non-scalar",
        lambda: (leaf() * 2).backward(),
        RuntimeError,
        allof("grad can be implicitly created only for scalar outputs", lit("(3,)"), "sum"),
    ),
    (
        "implicit-grad-text",
        lambda: (Variable("a", requires_grad=True) + Variable("b")).backward(),
        RuntimeError,
        allof("text Variable", "feedback", "cannot be created implicitly"),
    ),
    (
        "backward-not-requiring-grad",
        lambda: Variable(1.0).backward(),
        RuntimeError,
        allof(
            "element 0 of variables does not require grad and does not have a grad_fn",
            "requires_grad=True",
        ),
    ),
    (
        "backward-after-no_grad",
        lambda: _computed_under_no_grad().backward(),
        RuntimeError,
        allof("element 0 of variables does not require grad", "no_grad"),
    ),
    (
        "gradient-wrong-shape",
        lambda: (leaf() * 2).backward(Variable([1.0, 2.0])),
        RuntimeError,
        allof("Mismatch in shape", lit("(2,)"), lit("(3,)")),
    ),
    (
        "gradient-wrong-count",
        lambda: _two_outputs_one_gradient(),
        RuntimeError,
        allof("1 element", "2 output", "one gradient"),
    ),
    (
        "gradient-text-for-numeric",
        lambda: (leaf() * 2).backward(Variable("feedback")),
        TypeError,
        allof("is text", "numeric"),
    ),
    (
        "gradient-numeric-for-text",
        lambda: (Variable("a", requires_grad=True) + Variable("b")).backward(Variable(1.0)),
        TypeError,
        allof("is numeric", "text"),
    ),
    (
        "gradient-dict",
        lambda: (leaf() * 2).backward({"a": 1}),
        TypeError,
        allof("dict", "expected a Variable"),
    ),
    (
        "backward-variables-not-a-variable",
        lambda: mg.backward("loss"),
        TypeError,
        allof("tensors must be a Variable", "str"),
    ),
    (
        "grad-unused-input",
        _grad_of_unused_input,
        RuntimeError,
        allof(
            lit("inputs[1]"),
            "appears to not have been used in the graph",
            "Set allow_unused=True",
        ),
    ),
    (
        "grad-input-not-requiring-grad",
        lambda: mg.grad((leaf() * 2).sum(), [Variable(1.0)]),
        RuntimeError,
        allof(lit("inputs[0]"), "does not require grad", "requires_grad=True"),
    ),
    (
        "grad-grad_outputs-wrong-shape",
        lambda: mg.grad(leaf() * 2, [leaf()], grad_outputs=np.ones(2)),
        RuntimeError,
        allof("Mismatch in shape", lit("grad_outputs[0]")),
    ),
    (
        # PyTorch: "grad requires non-empty inputs."
        "grad-empty-inputs",
        lambda: mg.grad((leaf() * 2).sum(), []),
        RuntimeError,
        allof("non-empty inputs|inputs.*empty"),
    ),
    (
        "backward-inputs-empty",
        lambda: (leaf() * 2).sum().backward(inputs=[]),
        RuntimeError,
        allof("'inputs' argument to backward\\(\\) cannot be empty"),
    ),
    (
        "backward-inputs-not-requiring-grad",
        lambda: (leaf() * 2).sum().backward(inputs=[Variable(1.0)]),
        RuntimeError,
        allof(lit("inputs[0]"), "does not require grad"),
    ),
    (
        "backward-inputs-not-variables",
        lambda: (leaf() * 2).sum().backward(inputs=[1.0]),
        TypeError,
        allof(lit("inputs[0] must be a Variable"), "float"),
    ),
    (
        "backward-twice-through-kept-graph-then-freed",
        lambda: _backward_create_graph_no_retain(),
        RuntimeError,
        allof("backward through the graph a second time"),
    ),
]


def _computed_under_no_grad() -> Variable:
    with mg.no_grad():
        return (leaf() * 2).sum()


def _two_outputs_one_gradient() -> None:
    a = leaf()
    mg.backward([a * 2, a * 3], [Variable([1.0, 1.0, 1.0])])


def _backward_create_graph_no_retain() -> None:
    y = (leaf() * leaf()).sum()
    y.backward(create_graph=True, retain_graph=False)
    y.backward()


FUNCTIONS = [
    (
        "backward-wrong-number-of-grads",
        lambda: OneGradForTwo.apply(leaf(), leaf()).sum().backward(),
        RuntimeError,
        allof(
            "OneGradForTwoBackward",
            lit("returned an incorrect number of gradients (expected 2, got 1)"),
        ),
    ),
    (
        # Shape (4,) for an input of shape (3,): not a shape (3,) broadcasts to.
        "backward-wrong-grad-shape",
        lambda: WrongShapeGrad.apply(leaf()).sum().backward(),
        RuntimeError,
        allof("WrongShapeGradBackward", "invalid gradient at index 0", lit("(4,)"), lit("(3,)")),
    ),
    (
        "backward-wrong-grad-shape-ndarray",
        lambda: WrongShapeArrayGrad.apply(leaf()).sum().backward(),
        RuntimeError,
        allof("WrongShapeArrayGradBackward", "invalid gradient", lit("(2, 2)"), lit("(3,)")),
    ),
    (
        "backward-grad-for-non-variable-input",
        lambda: GradForNumber.apply(leaf(), 2.0).sum().backward(),
        RuntimeError,
        allof("GradForNumberBackward", "position 1", "not a Variable", "return None"),
    ),
    (
        "backward-grad-of-type-dict",
        lambda: DictGrad.apply(leaf()).sum().backward(),
        TypeError,
        allof("DictGradBackward", "dict", "expected a Variable"),
    ),
    (
        "backward-text-grad-for-numeric-input",
        lambda: TextGradForNumber.apply(leaf()).sum().backward(),
        TypeError,
        allof("TextGradForNumberBackward", "text gradient", "numeric"),
    ),
    (
        "instantiate-function",
        lambda: Square(),
        RuntimeError,
        allof("Square should not be instantiated", lit("Square.apply(")),
    ),
    (
        "function-without-forward",
        lambda: NoForward.apply(leaf()),
        NotImplementedError,
        allof("implement the forward"),
    ),
    (
        "function-without-backward",
        lambda: NoBackward.apply(leaf()).sum().backward(),
        NotImplementedError,
        allof("implement the backward"),
    ),
    (
        "mark_dirty-not-returned",
        lambda: DirtyNotReturned.apply(leaf(), Variable([1.0, 2.0, 3.0])),
        RuntimeError,
        allof("mark_dirty", "did not return", "must also be returned"),
    ),
    (
        "mark_dirty-leaf-requiring-grad",
        lambda: AddOneInPlace.apply(leaf()),
        RuntimeError,
        allof("a leaf Variable that requires grad is being used in an in-place operation"),
    ),
]

IN_PLACE = [
    (
        "add_-on-leaf-requiring-grad",
        lambda: leaf().add_(1.0),
        RuntimeError,
        allof(
            "a leaf Variable that requires grad is being used in an in-place operation",
            "no_grad",
        ),
    ),
    (
        "setitem-on-leaf-requiring-grad",
        lambda: setitem(leaf(), 0, 5.0),
        RuntimeError,
        allof("a leaf Variable that requires grad is being used in an in-place operation"),
    ),
    (
        "modified-saved-input",
        _modify_saved_input_then_backward,
        RuntimeError,
        allof(
            "one of the variables needed for gradient computation has been modified by an "
            "inplace operation",
            "MulBackward",
            "version 1",
            "version 0",
        ),
    ),
    (
        "modified-saved-output",
        _modify_saved_output_then_backward,
        RuntimeError,
        allof("modified by an inplace operation", "ExpBackward"),
    ),
    (
        "in-place-on-expanded",
        lambda: Variable([[1.0], [2.0]]).expand(2, 3).add_(1.0),
        RuntimeError,
        allof("read-only", "expand", lit(".clone()")),
    ),
    (
        "in-place-broadcast-grows-shape",
        lambda: ones(3).add_(ones(2, 3)),
        RuntimeError,
        allof(lit("(3,)"), lit("(2, 3)"), "out-of-place"),
    ),
    (
        "setitem-on-text",
        lambda: setitem(Variable("abc"), 0, "x"),
        TypeError,
        allof("text Variables are immutable"),
    ),
    (
        "setitem-value-wrong-shape",
        lambda: setitem(ones(3), slice(0, 2), ones(3)),
        ValueError,
        allof("cannot assign", lit("(3,)"), lit("(2,)")),
    ),
]

SHAPES = [
    *[
        (
            f"broadcast-{name}",
            (lambda op=op: op(ones(3), ones(4))),
            ValueError,
            allof(name, lit("(3,)"), lit("(4,)"), "cannot be broadcast"),
        )
        for name, op in [
            ("add", lambda a, b: a + b),
            ("sub", lambda a, b: a - b),
            ("mul", lambda a, b: a * b),
            ("div", lambda a, b: a / b),
        ]
    ],
    (
        "matmul-inner-mismatch",
        lambda: ones(2, 3) @ ones(2, 3),
        ValueError,
        allof("matmul", lit("(2, 3)"), "must equal"),
    ),
    (
        "matmul-1d-mismatch",
        lambda: ones(3) @ ones(4),
        ValueError,
        allof("matmul", lit("(3,)"), lit("(4,)")),
    ),
    (
        "matmul-batch-mismatch",
        lambda: ones(2, 3, 4) @ ones(5, 4, 2),
        ValueError,
        allof("matmul", "batch", lit("(2, 3, 4)"), lit("(5, 4, 2)")),
    ),
    (
        "matmul-0d",
        lambda: Variable(2.0) @ ones(3),
        ValueError,
        allof("matmul needs at least 1-D operands", lit("()"), "Use \\*"),
    ),
    (
        "reshape-incompatible",
        lambda: ones(6).reshape(4, 2),
        RuntimeError,
        allof(lit("shape (4, 2) is invalid for input of size 6")),
    ),
    (
        "reshape-float-size",
        lambda: ones(6).reshape(2.0, 3),
        TypeError,
        allof("argument 'shape'", "must be an int or a tuple of ints", "2.0"),
    ),
    (
        # PyTorch: "only one dimension can be inferred".
        "reshape-two-minus-ones",
        lambda: ones(6).reshape(-1, -1),
        RuntimeError,
        allof("only one dimension can be inferred"),
    ),
    (
        # PyTorch: "invalid shape dimension -2"; NumPy silently treats it as -1.
        "reshape-minus-two",
        lambda: ones(6).reshape(-2, 3),
        RuntimeError,
        allof("invalid shape dimension -2"),
    ),
    *[
        (
            f"dim-out-of-range-{name}",
            call,
            IndexError,
            allof("Dimension out of range", lit(expected), f"but got {got}"),
        )
        for name, call, expected, got in [
            ("sum", lambda: ones(2, 3).sum(2), "[-2, 1]", 2),
            ("mean", lambda: ones(2, 3).mean(-3), "[-2, 1]", -3),
            ("max", lambda: ones(2, 3).max(3), "[-2, 1]", 3),
            ("softmax", lambda: ones(2, 3).softmax(5), "[-2, 1]", 5),
            ("log_softmax", lambda: ones(2, 3).log_softmax(-4), "[-2, 1]", -4),
            ("transpose", lambda: ones(2, 3).transpose(0, 2), "[-2, 1]", 2),
            ("unsqueeze", lambda: ones(2, 3).unsqueeze(4), "[-3, 2]", 4),
            ("squeeze", lambda: ones(1, 3).squeeze(3), "[-2, 1]", 3),
            ("cat", lambda: mg.cat([ones(3), ones(3)], dim=1), "[-1, 0]", 1),
            ("stack", lambda: mg.stack([ones(3), ones(3)], dim=3), "[-2, 1]", 3),
        ]
    ],
    (
        "dim-float",
        lambda: ones(3).sum(1.5),
        TypeError,
        allof("argument 'dim'", "must be an int", "float"),
    ),
    (
        "dim-repeated",
        lambda: ones(2, 3).sum((0, 0)),
        ValueError,
        allof(lit("(0, 0)"), "same dimension twice"),
    ),
    # Each of these takes one int dim; a tuple (or None for softmax on 2-D) must say so.
    (
        "softmax-dim-None-2d",
        lambda: ones(2, 3).softmax(None),
        TypeError,
        allof("dim", "int"),
    ),
    ("max-dim-tuple", lambda: ones(2, 3).max(dim=(0, 1)), TypeError, allof("dim", "int")),
    ("unsqueeze-dim-tuple", lambda: ones(2, 3).unsqueeze((0, 1)), TypeError, allof("dim", "int")),
    (
        "transpose-dim-tuple",
        lambda: ones(2, 3).transpose((0, 1), 1),
        TypeError,
        allof("dim", "int"),
    ),
    (
        "permute-repeated-dim",
        lambda: ones(2, 3).permute(0, 0),
        ValueError,
        allof("duplicate dims are not allowed", lit("(0, 0)")),
    ),
    (
        "permute-too-few-dims",
        lambda: ones(2, 3).permute(0),
        ValueError,
        allof("number of dims must match the Variable's 2 dimensions", lit("(0,)")),
    ),
    (
        "expand-incompatible",
        lambda: ones(2, 3).expand(4, 3),
        RuntimeError,
        allof(
            lit("The expanded size of the Variable (4) must match the existing size (2)"),
            "non-singleton dimension 0",
        ),
    ),
    (
        "expand-too-few-sizes",
        lambda: ones(2, 3).expand(3),
        RuntimeError,
        allof("number of sizes provided", "greater or equal"),
    ),
    (
        "sum_to_size-not-expandable",
        lambda: ones(3).sum_to_size(5),
        RuntimeError,
        allof("sum_to_size", lit("(5,)"), lit("(3,)"), "not expandable"),
    ),
    (
        "index-out-of-range",
        lambda: ones(3)[5],
        IndexError,
        allof("index 5 is out of range", lit("shape (3,)")),
    ),
    (
        "index-out-of-range-requires-grad",
        lambda: leaf()[-4],
        IndexError,
        allof("index -4 is out of range", lit("shape (3,)")),
    ),
    (
        "index-too-many",
        lambda: ones(3)[0, 0],
        IndexError,
        allof("too many indices", lit("shape (3,)")),
    ),
    # A float or str index is the wrong kind, not "out of range": say what was given.
    (
        "index-float",
        lambda: ones(3)[1.5],
        IndexError,
        allof("float", "integers|ints", absent("out of range")),
    ),
    (
        "index-str",
        lambda: ones(3)["a"],
        IndexError,
        allof("str", "integers|ints", absent("out of range")),
    ),
    (
        "index-float-variable",
        lambda: ones(3)[Variable([0.0, 1.0])],
        IndexError,
        allof("must hold integers or bools", "float64"),
    ),
    (
        "text-index-float",
        lambda: Variable("abc")[1.5],
        TypeError,
        allof("int or a slice", "float"),
    ),
    (
        "text-index-out-of-range",
        lambda: Variable("abc")[10],
        IndexError,
        allof("index 10 is out of range", "length 3"),
    ),
    (
        "cat-incompatible",
        lambda: mg.cat([ones(2, 3), ones(2, 4)]),
        ValueError,
        allof("cat", "same shape except in dimension 0", lit("(2, 3)"), lit("(2, 4)")),
    ),
    ("cat-empty", lambda: mg.cat([]), ValueError, allof("cat expects a non-empty list")),
    (
        "cat-not-a-list",
        lambda: mg.cat(ones(3)),
        TypeError,
        allof("minigrad.cat()", "must be a list or tuple of Variables", "Variable"),
    ),
    (
        # PyTorch: "zero-dimensional tensor (at position 0) cannot be concatenated".
        "cat-zero-dimensional",
        lambda: mg.cat([Variable(1.0), Variable(2.0)]),
        ValueError,
        allof("zero-dimensional"),
    ),
    (
        "stack-unequal",
        lambda: mg.stack([ones(3), ones(4)]),
        ValueError,
        allof("stack expects each Variable to be equal size", lit("(3,)"), lit("(4,)")),
    ),
    ("stack-empty", lambda: mg.stack([]), ValueError, allof("stack expects a non-empty list")),
    ("max-empty", lambda: ones(0).max(), ValueError, allof("max of an empty Variable")),
]

TEXT_AND_NUMBERS = [
    (
        "text-plus-number-variable",
        lambda: Variable("hi") + Variable(1.0),
        TypeError,
        allof("cannot concatenate text with a numeric Variable", "right operand", "str\\("),
    ),
    (
        "number-variable-plus-text",
        lambda: Variable(1.0) + Variable("hi"),
        TypeError,
        allof("cannot concatenate text with a numeric Variable", "left operand"),
    ),
    (
        "number-plus-text",
        lambda: 1 + Variable("hi"),
        TypeError,
        allof("cannot concatenate text with int", "left operand"),
    ),
    (
        "text-times-two",
        lambda: Variable("hi") * 2,
        TypeError,
        allof("mul needs numbers", "text Variable"),
    ),
    (
        "log-of-text",
        lambda: Variable("hi").log(),
        TypeError,
        allof("log needs numbers", "text Variable"),
    ),
    ("sum-of-text", lambda: Variable("hi").sum(), TypeError, allof("sum needs numbers", "text")),
    ("neg-of-text", lambda: -Variable("hi"), TypeError, allof("neg needs numbers", "text")),
    (
        "text-minus-text",
        lambda: Variable("a") - Variable("b"),
        TypeError,
        allof("sub needs numbers", "text"),
    ),
    (
        "matmul-text",
        lambda: Variable("a") @ ones(3),
        TypeError,
        allof("matmul needs numbers", "text"),
    ),
    (
        "number-pow-str",
        lambda: leaf() ** "a",
        TypeError,
        allof("pow cannot mix text and numbers", "'a'"),
    ),
    (
        "text-less-than-text",
        lambda: Variable("a") < Variable("b"),
        TypeError,
        allof("text Variables support == and != only", "'lt'"),
    ),
    (
        "text-greater-than-number",
        lambda: Variable("a") > 1,
        TypeError,
        allof("cannot compare text with numbers", "gt"),
    ),
    (
        "number-plus-None",
        lambda: leaf() + None,
        TypeError,
        allof("add expects a Variable, a NumPy array or a number", "NoneType"),
    ),
    (
        "number-less-than-None",
        lambda: Variable(1.0) < None,
        TypeError,
        allof("lt expects", "NoneType"),
    ),
    (
        "compare-shape-mismatch",
        lambda: ones(3) < ones(4),
        ValueError,
        allof("lt", lit("(3,)"), lit("(4,)"), "cannot be broadcast"),
    ),
]

FACTORIES_AND_MODES = [
    (
        "zeros-negative",
        lambda: mg.zeros(-1, 2),
        RuntimeError,
        allof(lit("zeros() sizes must be non-negative"), lit("(-1, 2)")),
    ),
    (
        "ones-negative-nested",
        lambda: mg.ones((2, -1)),
        RuntimeError,
        allof(lit("ones() sizes must be non-negative"), lit("(2, -1)")),
    ),
    (
        "randn-negative",
        lambda: mg.randn(-2),
        RuntimeError,
        allof(lit("randn() sizes must be non-negative")),
    ),
    (
        "full-negative",
        lambda: mg.full((-1,), 2.0),
        RuntimeError,
        allof(lit("full() sizes must be non-negative")),
    ),
    (
        "zeros-float-size",
        lambda: mg.zeros(2.5),
        TypeError,
        allof(lit("zeros() sizes must be ints"), "2.5"),
    ),
    (
        "ones-str-size",
        lambda: mg.ones("3"),
        TypeError,
        allof(lit("ones() sizes must be ints"), "'3'"),
    ),
    (
        "rand-float-size",
        lambda: mg.rand(1.0),
        TypeError,
        allof(lit("rand() sizes must be ints"), "1.0"),
    ),
    (
        "zeros_like-of-list",
        lambda: mg.zeros_like([1, 2]),
        TypeError,
        allof("zeros_like", "Variable", "list"),
    ),
    (
        "manual_seed-negative",
        lambda: mg.manual_seed(-1),
        ValueError,
        allof("manual_seed expects a non-negative int", "-1"),
    ),
    (
        # A wrong type is a TypeError, as for the factories' sizes.
        "manual_seed-str",
        lambda: mg.manual_seed("1"),
        TypeError,
        allof("manual_seed", "int", "str|'1'"),
    ),
    ("arange-step-0", lambda: mg.arange(0, 5, 0), RuntimeError, allof("step must be nonzero")),
    (
        "set_grad_enabled-str",
        lambda: mg.set_grad_enabled("yes"),
        TypeError,
        allof("set_grad_enabled expects True or False", "'yes'"),
    ),
    (
        "no_grad-int",
        lambda: mg.no_grad(42),
        TypeError,
        allof(lit("no_grad() takes no arguments"), "int", lit("with no_grad():")),
    ),
    (
        "enable_grad-int",
        lambda: mg.enable_grad(42),
        TypeError,
        allof(lit("enable_grad() takes no arguments"), "int"),
    ),
    (
        "register_hook-not-requiring-grad",
        lambda: Variable(1.0).register_hook(lambda g: g),
        RuntimeError,
        allof("cannot register a hook on a Variable that doesn't require gradient"),
    ),
    (
        "register_hook-not-callable",
        lambda: leaf().register_hook(3),
        TypeError,
        allof("register_hook expects a function", "int"),
    ),
    (
        "retain_grad-not-requiring-grad",
        lambda: Variable(1.0).retain_grad(),
        RuntimeError,
        allof("can't retain_grad on a Variable that has requires_grad=False"),
    ),
    (
        # PyTorch: "hook 'hook' has changed the size of value".
        "hook-changes-leaf-grad-shape",
        _hook_changes_leaf_grad_shape,
        RuntimeError,
        allof("hook", lit("(5,)"), lit("(3,)")),
    ),
    (
        "hook-changes-non-leaf-grad-shape",
        _hook_changes_nonleaf_grad_shape,
        RuntimeError,
        allof("hook", lit("(5,)"), lit("(3,)")),
    ),
    (
        "hook-returns-text-for-numeric",
        _hook_returns_text_for_numeric,
        TypeError,
        allof("hook", "text", "numeric"),
    ),
    (
        "gradcheck-no-input-requires-grad",
        lambda: mg.gradcheck(lambda a: a * 2, (Variable([1.0, 2.0]),)),
        ValueError,
        allof("gradcheck expects at least one input Variable with requires_grad=True"),
    ),
    (
        "gradcheck-text-input",
        lambda: mg.gradcheck(lambda a: a, (Variable("a", requires_grad=True),)),
        TypeError,
        allof("gradcheck works on numeric inputs", "input 0"),
    ),
    (
        "gradcheck-fn-returns-no-variable",
        lambda: mg.gradcheck(lambda a: 3, (leaf(),)),
        ValueError,
        allof("returned no Variable that requires grad"),
    ),
]

ALL_CASES = (
    CONSTRUCTION
    + ATTRIBUTES
    + ENGINE
    + FUNCTIONS
    + IN_PLACE
    + SHAPES
    + TEXT_AND_NUMBERS
    + FACTORIES_AND_MODES
)


@pytest.mark.parametrize(
    ("call", "expected", "pattern"),
    [
        pytest.param(call, expected, pattern, id=case_id)
        for case_id, call, expected, pattern in ALL_CASES
    ],
)
def test_bad_input_raises(call: Callable[[], Any], expected: type, pattern: str) -> None:
    with pytest.raises(expected, match=pattern):
        call()


def test_case_ids_are_unique() -> None:
    ids = [case[0] for case in ALL_CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


# --------------------------------------------------------------------------- written out


def test_once_differentiable_raises_when_the_double_backward_reaches_it() -> None:
    a = leaf(1.0, 2.0)
    z = (OnceSquare.apply(a) ** 2).sum()  # the grad flowing into OnceSquare requires grad
    (g,) = mg.grad(z, [a], create_graph=True)
    with pytest.raises(RuntimeError, match="differentiate twice.*@once_differentiable"):
        g.sum().backward()


def test_once_differentiable_first_order_create_graph_then_backward() -> None:
    # The seed is a constant, but a second derivative still has to go through the
    # once-differentiable backward: the error must name it, not claim that the gradient
    # "does not require grad".
    a = leaf(1.0, 2.0)
    (g,) = mg.grad(OnceSquare.apply(a).sum(), [a], create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable"):
        g.sum().backward()


@pytest.mark.parametrize(
    "change_through_view",
    [
        pytest.param(lambda b: b.reshape(3).mul_(2.0), id="reshape"),
        pytest.param(lambda b: b.view(3, 1).mul_(2.0), id="view"),
        pytest.param(lambda b: b[0:2].mul_(2.0), id="slice"),
        pytest.param(lambda b: b.unsqueeze(0).mul_(2.0), id="unsqueeze"),
    ],
)
def test_changing_a_saved_variable_through_a_view(change_through_view: Callable) -> None:
    # Either the change is refused (minigrad does not record in-place ops on views), or the
    # view shares the version counter so backward raises, or it is a copy and the gradient
    # is untouched. Never a wrong gradient.
    a = leaf()
    b = a * 1
    y = (b * b).sum()  # MulBackward saves b
    try:
        change_through_view(b)
    except RuntimeError as error:
        assert "in-place operation on a view" in str(error), error
        return
    try:
        y.backward()
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error), error
    else:
        changed = not np.array_equal(b.data, a.data)
        assert not changed, (
            f"b's data changed through a view ({b.data}) and backward silently used it: "
            f"a.grad = {a.grad.data}, expected {2 * a.data} or an error"
        )


def test_gradcheck_failure_names_input_element_and_values() -> None:
    assert issubclass(GradcheckError, RuntimeError)
    x = Variable([1.0, 2.0], requires_grad=True, name="w")
    with pytest.raises(GradcheckError, match="Jacobian mismatch") as caught:
        mg.gradcheck(WrongSquare.apply, (x,))
    message = str(caught.value)
    assert re.search(r"input 0 \('w'\)", message), message
    assert re.search(r"element \(0,\)", message), message
    assert re.search(r"analytical[^\n]*: 3\b", message), message
    assert re.search(r"numerical[^\n]*: 2\b", message), message


def test_gradcheck_passes_a_correct_backward() -> None:
    assert mg.gradcheck(Square.apply, (leaf(1.0, 2.0),)) is True


def test_gradcheck_raise_exception_false_returns_false() -> None:
    x = Variable([1.0, 2.0], requires_grad=True)
    assert mg.gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False


def test_detect_anomaly_names_the_custom_function_returning_nan() -> None:
    with mg.detect_anomaly():
        y = NanGrad.apply(leaf()).sum()
        with pytest.raises(
            RuntimeError,
            match=allof("Function 'NanGradBackward' returned nan values", "forward call"),
        ):
            y.backward()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_detect_anomaly_names_sqrt_at_zero() -> None:
    a = Variable([0.0, 1.0], requires_grad=True)
    with mg.detect_anomaly():
        y = (a.sqrt() * 0).sum()  # 0 * (1 / (2 * sqrt(0))) = nan in SqrtBackward
        with pytest.raises(RuntimeError, match="'SqrtBackward' returned nan values"):
            y.backward()


# --------------------------------------------------------------------------- no false alarms

# Good inputs next to the bad ones: an error path that fires on them is a bug too.
GOOD_CALLS = [
    ("number-plus-python-float", lambda: (leaf() + 1.0).sum().backward()),
    ("python-float-plus-number", lambda: (1.0 + leaf()).sum().backward()),
    ("number-plus-ndarray", lambda: (leaf() + np.ones(3)).sum().backward()),
    (
        "text-plus-text-backward",
        lambda: (Variable("a", requires_grad=True) + Variable("b", requires_grad=True)).backward(
            Variable("shorter")
        ),
    ),
    ("text-plus-str-backward", lambda: (Variable("a", requires_grad=True) + "b").backward("x")),
    ("str-plus-text-backward", lambda: ("a" + Variable("b", requires_grad=True)).backward("x")),
    ("backward-twice-with-retain_graph", lambda: _backward_twice_retained()),
    ("grad-allow_unused", lambda: mg.grad((leaf() * 2).sum(), [leaf()], allow_unused=True)),
]


def _backward_twice_retained() -> None:
    y = (leaf() * leaf()).sum()
    y.backward(retain_graph=True)
    y.backward()


@pytest.mark.parametrize("call", [pytest.param(c, id=i) for i, c in GOOD_CALLS])
def test_good_input_does_not_raise(call: Callable[[], Any]) -> None:
    call()


# --------------------------------------------------------------------------- nothing leaks

# Exception types that are always internal when they escape the engine.
_INTERNAL = (AssertionError, KeyError, AttributeError, UnboundLocalError, ZeroDivisionError)
# Texts of Python's and NumPy's own messages, which say nothing about Variables.
_LEAKED_TEXTS = (
    "too many values to unpack",
    "not enough values to unpack",
    "object has no attribute",
    "objects cannot be broadcast to a single shape",
    "could not convert string",
    "invalid literal for int",
    "is not subscriptable",
    "unhashable type",
)

BAD_CALLS = [
    ("sum_to_size", lambda: ones(3).sum_to_size(5)),
    ("softmax-None", lambda: ones(2, 3).softmax(None)),
    ("log_softmax-None", lambda: ones(2, 3).log_softmax(None)),
    ("max-dim-tuple", lambda: ones(2, 3).max(dim=(0, 1))),
    ("unsqueeze-tuple", lambda: ones(2, 3).unsqueeze((0, 1))),
    ("zeros_like-list", lambda: mg.zeros_like([1, 2])),
    ("ones_like-None", lambda: mg.ones_like(None)),
    ("hook-text", _hook_returns_text_for_numeric),
    ("hook-shape", _hook_changes_nonleaf_grad_shape),
    ("wrong-grad-shape", lambda: WrongShapeGrad.apply(leaf()).sum().backward()),
    ("wrong-grad-shape-array", lambda: WrongShapeArrayGrad.apply(leaf()).sum().backward()),
    ("int-of-text", lambda: int(Variable("hello"))),
    ("float-of-text", lambda: float(Variable("hello"))),
    ("index-float", lambda: ones(3)[1.5]),
    ("index-bool-mask-wrong-length", lambda: ones(3)[np.array([True, False])]),
    ("index-out-of-range", lambda: ones(2, 3)[1, 7]),
    ("setitem-out-of-range", lambda: setitem(ones(3), 5, 1.0)),
    ("size-out-of-range", lambda: ones(3).size(2)),
    ("grad-unused", _grad_of_unused_input),
    ("backward-twice", lambda: _backward_twice(lambda a: a * a)),
    ("cat-0d", lambda: mg.cat([Variable(1.0), Variable(2.0)])),
    ("expand-negative", lambda: ones(3).expand(2, -2)),
    ("permute-out-of-range", lambda: ones(2, 3).permute(0, 1, 2)),
]


def _leak(error: BaseException) -> str | None:
    """Why `error` looks internal, or None when it is one of ours."""
    message = str(error)
    if isinstance(error, _INTERNAL):
        return f"internal {type(error).__name__}"
    if isinstance(error, IndexError) and not re.search(r"Variable|Dimension|text", message):
        return "bare IndexError"
    for text in _LEAKED_TEXTS:
        if text in message:
            return f"leaked message {text!r}"
    return None


def test_no_internal_errors_leak() -> None:
    offenders = []
    for case_id, call in BAD_CALLS:
        try:
            call()
        except Exception as error:
            reason = _leak(error)
            if reason:
                offenders.append(f"{case_id}: {reason}: {type(error).__name__}: {error}")
        else:
            offenders.append(f"{case_id}: raised nothing")
    assert not offenders, "\n".join(offenders)
