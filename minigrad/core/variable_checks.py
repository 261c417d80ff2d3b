"""Checks on what a Variable is given: its data, requires_grad, and an assigned `.grad`.

variable.py calls these; each returns the checked value or raises an error that says
what was expected, what was received, and what to write instead.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from minigrad import devices
from minigrad.core.errors import missing_name

# Variables whose data is a NumPy array of one of these kinds may require grad.
DIFFERENTIABLE_KINDS = "f"


def as_data(data: Any) -> Any:
    """What a Variable holds (data not a Variable): a NumPy array, a str, or a GPU array."""
    if isinstance(data, str):
        return data
    if devices.is_on_cuda(data):
        return data  # already an array in GPU memory (see minigrad/devices.py)
    if isinstance(data, np.ndarray):
        array = data if type(data) is np.ndarray else np.asarray(data)  # x.data: plain
    else:
        try:
            array = np.asarray(data)
        except (ValueError, TypeError) as error:
            raise TypeError(
                f"Variable data must be a number, a nested list of numbers, a NumPy array "
                f"or a str; got {type(data).__name__} that NumPy cannot convert ({error})."
            ) from None
    if array.dtype.kind not in "biufc":
        raise TypeError(
            f"Variable data must be numeric (bool, int, float) or a str; got "
            f"{type(data).__name__} holding NumPy dtype {array.dtype}. For text, pass one "
            f"str: Variable('some text', role='...')."
        )
    return array


def constructor_arguments(requires_grad: Any, role: Any, name: Any) -> None:
    if not isinstance(requires_grad, bool):
        raise TypeError(
            f"requires_grad must be True or False; got {requires_grad!r} "
            f"({type(requires_grad).__name__})."
        )
    for label, value in (("role", role), ("name", name)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{label} must be a str or None; got {type(value).__name__}.")


def assigned_data(variable: Any, new: Any) -> Any:
    """`variable.data = ...`: text stays text and numbers stay numbers."""
    if isinstance(new, str) != isinstance(variable._data, str):
        kinds = ("text", "numeric") if isinstance(new, str) else ("numeric", "text")
        raise TypeError(
            f"cannot assign {kinds[0]} data to a {kinds[1]} Variable; make a new Variable instead."
        )
    return new


def requires_grad_value(variable: Any, value: Any) -> bool:
    """`variable.requires_grad = value`: a bool, on a leaf, of floating point data."""
    if not isinstance(value, bool):
        raise TypeError(f"requires_grad must be True or False; got {value!r}.")
    if variable._grad_fn is not None:
        raise RuntimeError(
            "you can only change requires_grad flags of leaf variables. This Variable "
            f"was made by {variable._grad_fn.name()}; to use it as a new leaf, call "
            ".detach() and set requires_grad on the result."
        )
    data = variable._data
    if value and not isinstance(data, str) and data.dtype.kind not in DIFFERENTIABLE_KINDS:
        raise RuntimeError(
            f"only Variables of floating point dtype can require gradients; this one "
            f"has dtype {data.dtype}. Convert first, e.g. "
            f"Variable(data.astype('float64'), requires_grad=True)."
        )
    return value


def gradient_not_a_variable(value: Any) -> TypeError:
    """backward(gradient=[1.0, 2.0]): one gradient, given as a list rather than a Variable."""
    return TypeError(
        f"backward(gradient=...) takes one Variable (or None for a single-number output); "
        f"got a {type(value).__name__}. Wrap the values first: "
        f"backward(minigrad.tensor({list(value)!r}))."
    )


def grad_fn_not_writable() -> AttributeError:
    return AttributeError(
        "attribute 'grad_fn' of Variable is not writable: the operation that made the "
        "Variable sets it. To cut a Variable from its graph, use .detach() (a new leaf) "
        "or .detach_() (in place)."
    )


def grad_not_a_variable(value: Any) -> TypeError:
    return TypeError(
        f"assigned grad expected to be a Variable or None but got grad of type "
        f"{type(value).__name__}; wrap it first: Variable(...)."
    )


def assigned_grad(variable: Any, value: Any) -> None:
    """`variable.grad = value`: a Variable of the same kind, shape and dtype."""
    if value.is_text != variable.is_text:
        kinds = (
            "text" if value.is_text else "numeric",
            "text" if variable.is_text else "numeric",
        )
        raise TypeError(f"assigned grad is {kinds[0]} but this Variable is {kinds[1]}.")
    if variable.is_text:
        return
    if value.shape != variable.shape:
        raise RuntimeError(
            f"assigned grad has data of a different size: got shape {value.shape}, "
            f"expected {variable.shape}."
        )
    dtype = variable._data.dtype
    if value.data.dtype != dtype:
        raise RuntimeError(
            f"assigned grad has data of a different type: got {value.data.dtype}, "
            f"expected {dtype}. Convert it first, e.g. with "
            f"Variable(g.data.astype('{dtype}'))."
        )


# --------------------------------------------------------------------------- mistakes

# What a ctx offers: reading one of these on a Variable means it was passed where ctx goes.
CTX_NAMES = frozenset(
    {
        "save_for_backward",
        "saved_tensors",
        "saved_variables",
        "needs_input_grad",
        "mark_dirty",
        "mark_non_differentiable",
        "set_materialize_grads",
    }
)


def ctx_attribute_error(name: str) -> AttributeError:
    """A Variable asked for a ctx method: it was passed where ctx goes."""
    return AttributeError(
        f"a Variable has no `{name}`: that belongs to ctx, the first argument of forward and "
        f"backward. A Variable is in ctx's place, so forward was probably called directly "
        f"(MyFunction.forward(x)) instead of through MyFunction.apply(x), which makes the ctx; "
        f"or forward was written without ctx: `def forward(ctx, x):`."
    )


NON_LEAF_GRAD = (
    "The .grad attribute of a Variable that is not a leaf Variable is being accessed. Its "
    ".grad attribute won't be populated during backward(): gradients are kept on leaves, "
    "the Variables you made with requires_grad=True. If you indeed want the .grad of this "
    "intermediate result, call .retain_grad() on it before backward(). If you meant the "
    "leaf, read the leaf's .grad instead."
)


def warn_non_leaf_grad() -> None:
    """PyTorch's warning for reading .grad of a non-leaf that does not retain it."""
    # stacklevel 3: the line that read .grad (this function, then the property).
    warnings.warn(NON_LEAF_GRAD, UserWarning, stacklevel=3)


def missing_attribute(variable: Any, name: str) -> Exception:
    """What `variable.name` raises when no such attribute exists (Variable.__getattr__)."""
    if not isinstance(name, str):
        return TypeError(f"attribute name must be a str; got {type(name).__name__} {name!r}.")
    if name.startswith("_"):
        return AttributeError(f"'{type(variable).__name__}' object has no attribute {name!r}")
    if name in CTX_NAMES:  # a Variable passed where a Function's ctx goes
        return ctx_attribute_error(name)
    return missing_name("Tensor", name, dir(type(variable)))


# ---------------------------------------------------------------- hooks and conversions


def hook_target_error(variable: Any, hook: Any) -> Exception | None:
    """register_hook(hook) needs a callable, on a Variable that requires grad."""
    if not callable(hook):
        return TypeError(f"register_hook expects a function; got {type(hook).__name__}.")
    if not variable.requires_grad:
        return RuntimeError(
            "cannot register a hook on a Variable that doesn't require gradient; set "
            "requires_grad=True on the leaf first."
        )
    return None


def not_one_truth_value(variable: Any) -> RuntimeError:
    """bool(v) of a Variable that does not hold exactly one element."""
    if variable._data.size == 0:
        return RuntimeError("a Variable with no elements has no truth value.")
    return RuntimeError(
        f"The truth value of a Variable with more than one element is ambiguous "
        f"(shape {variable.shape}); use (v > 0).data.all() or .any()."
    )


def text_is_not_a_number(what: str) -> TypeError:
    return TypeError(f"{what} of a text Variable: only numeric Variables convert to numbers.")


def convertible_to_number(variable: Any, what: str) -> None:
    """float(v) and int(v) need one numeric element; as in PyTorch, a Variable of several
    elements is a ValueError here, while v.item() raises RuntimeError."""
    if variable.is_text:
        raise text_is_not_a_number(what)
    if variable._data.size != 1:
        raise ValueError(
            f"only one element Variables can be converted to Python scalars; this one has "
            f"shape {variable.shape}. Pick one element first, e.g. {what[:-2]}(v[0])."
        )


def not_an_index(variable: Any) -> TypeError:
    """operator.index(v) needs one integer element."""
    if variable.is_text:
        kind = "a text Variable"
    else:
        kind = f"dtype {variable.dtype}, shape {variable.shape}"
    return TypeError(
        f"only integer Variables of a single element can be converted to an index; got "
        f"{kind}. Use .long() for floats, or pick one element first."
    )


# PyTorch's legacy type names (x.type() -> "torch.FloatTensor"), by NumPy dtype.
_TYPE_NAMES = {
    "float16": "torch.HalfTensor",
    "float32": "torch.FloatTensor",
    "float64": "torch.DoubleTensor",
    "int8": "torch.CharTensor",
    "uint8": "torch.ByteTensor",
    "int16": "torch.ShortTensor",
    "int32": "torch.IntTensor",
    "int64": "torch.LongTensor",
    "bool": "torch.BoolTensor",
}


def type_name(variable: Any) -> str:
    """x.type(): PyTorch's legacy name of the Variable's type, "torch.FloatTensor"."""
    if variable.is_text:
        raise TypeError("type() is for numeric Variables; a text Variable has no dtype.")
    dtype = str(variable._data.dtype)
    return _TYPE_NAMES.get(dtype, f"torch.{dtype}")


def dtype_of_type_name(variable: Any, dtype: Any) -> Any:
    """x.type(dtype): a dtype passes; a legacy name ("torch.FloatTensor") becomes its dtype."""
    if variable.is_text:
        raise TypeError("type() is for numeric Variables; a text Variable has no dtype.")
    if not isinstance(dtype, str):
        return dtype
    names = {name: dtype_name for dtype_name, name in _TYPE_NAMES.items()}
    if dtype not in names:
        raise ValueError(f"type() expects a dtype or one of {sorted(names)}; got {dtype!r}.")
    return names[dtype]


def format_spec(spec: Any) -> None:
    if not isinstance(spec, str):
        raise TypeError(f"__format__() argument must be str, not {type(spec).__name__}.")


def formatted(value: Any, spec: str) -> str:
    """format(value, spec), or a ValueError that names the spec and the value's kind."""
    try:
        return format(value, spec)
    except ValueError:
        raise ValueError(
            f"format spec {spec!r} does not apply to a Variable holding {type(value).__name__}; "
            f"use one such as '.4f' for a number, or '' for text."
        ) from None


def format_needs_one_number(variable: Any, spec: str) -> TypeError:
    return TypeError(
        f"format spec {spec!r} needs a Variable holding one number, but this one has "
        f"shape {tuple(variable.shape)}; format x.item() or each element, or use str(x)."
    )
