"""Products of matrices and vectors under PyTorch's names: t, mm, mv, bmm, addmm, dot, outer,
einsum; and norm.

Most are matmul (minigrad/ops/matmul.py) with the shapes PyTorch allows for each name checked
first, so a wrong shape gets a message in the op's own terms. einsum and norm are Functions
of their own.
"""

from __future__ import annotations

import math
import string
from typing import Any

import numpy as np

from minigrad.core.checks import broadcasts_to
from minigrad.core.function import Function, FunctionCtx
from minigrad.core.variable import Variable
from minigrad.devices import is_on_cuda
from minigrad.dtypes import as_dtype
from minigrad.ops.elementwise import Sign, Where
from minigrad.ops.matmul import MatMul
from minigrad.ops.op_error import OpError
from minigrad.ops.operand import normalize_dims, numeric, numeric_metadata, shape_of
from minigrad.ops.shape import Transpose, Unsqueeze
from minigrad.ops.table import register


def _require_variables(op: str, **operands: Any) -> None:
    """Raise TypeError for a list or tuple operand: PyTorch's products take Variables only
    (NumPy would read a list as numbers)."""
    for name, value in operands.items():
        if isinstance(value, (list, tuple)):
            raise TypeError(
                f"{op}(): argument '{name}' must be a Variable, but got "
                f"{type(value).__name__} {value!r:.30}. Make one with minigrad.tensor(...)."
            )


def _require_ndim(op: str, ndim: int, **operands: Any) -> None:
    """Raise unless every operand has `ndim` dimensions, naming the one that has not."""
    _require_variables(op, **operands)
    for name, value in operands.items():
        shape = shape_of(value)
        if len(shape) != ndim:
            kind = {1: "a 1-D vector", 2: "a 2-D matrix", 3: "a 3-D batch of matrices"}[ndim]
            raise RuntimeError(
                f"{op} expects {name} to be {kind}; got shape {shape}. Use matmul (@), which "
                f"accepts vectors, matrices and batches, or reshape first."
            )


def _require_same_dtype(op: str, a: Any, b: Any) -> None:
    """Raise unless both operands have one dtype that is not bool (PyTorch's bmm, dot and
    addmm do not promote; a number operand is not checked)."""
    left, right = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if left is None or right is None:
        return
    if np.dtype(left) == np.bool_ or np.dtype(right) == np.bool_:
        raise NotImplementedError(
            f"{op} is not implemented for bool Variables; convert first, e.g. x.float()."
        )
    if np.dtype(left) != np.dtype(right):
        raise RuntimeError(
            f"{op}: expected both operands to have the same dtype, but got {left} and {right}. "
            f"Convert one first, e.g. other.to(x.dtype)."
        )


def _require_fit(op: str, a: Any, b: Any) -> None:
    """Raise unless the columns of a equal the rows of b."""
    left, right = shape_of(a), shape_of(b)
    if left[-1] != right[-2]:
        raise RuntimeError(
            f"{op}: shapes {left} and {right} cannot be multiplied: the columns of the first "
            f"({left[-1]}) must equal the rows of the second ({right[-2]})."
        )


# --------------------------------------------------------------------------- products


@register("t")
def t(x: Variable) -> Variable:
    """The transpose of a matrix; a 0-D or 1-D Variable comes back as it is (as in PyTorch)."""
    ndim = len(shape_of(x))
    if ndim > 2:
        raise RuntimeError(
            f"t() expects a Variable with at most 2 dimensions; got shape {shape_of(x)}. Use "
            f"x.transpose(dim0, dim1), or x.mT to transpose the last two."
        )
    return Transpose.apply(x, 0, ndim - 1 if ndim else 0)


@register("mm")
def mm(x: Any, mat2: Any) -> Variable:
    """The matrix product of two 2-D matrices (no broadcasting)."""
    _require_ndim("mm", 2, input=x, mat2=mat2)
    _require_fit("mm", x, mat2)
    return MatMul.apply(x, mat2)


@register("mv")
def mv(x: Any, vec: Any) -> Variable:
    """The product of a 2-D matrix and a 1-D vector."""
    _require_variables("mv", input=x, vec=vec)
    if len(shape_of(x)) == 0:
        # PyTorch reads the matrix's row count first: a 0-d input fails as an index.
        raise IndexError(
            "mv: Dimension specified as 0 but tensor has no dimensions: input is 0-d, and mv "
            "expects a 2-D matrix. Use * to multiply by a scalar."
        )
    _require_ndim("mv", 2, input=x)
    _require_ndim("mv", 1, vec=vec)
    if shape_of(x)[1] != shape_of(vec)[0]:
        raise RuntimeError(
            f"mv: a matrix of shape {shape_of(x)} cannot multiply a vector of shape "
            f"{shape_of(vec)}: the vector's length must equal the matrix's columns."
        )
    return MatMul.apply(x, vec)


@register("bmm")
def bmm(x: Any, mat2: Any) -> Variable:
    """Matrix products of two batches of matrices, shapes (b, n, m) and (b, m, p)."""
    _require_ndim("bmm", 3, input=x, mat2=mat2)
    _require_same_dtype("bmm", x, mat2)
    if shape_of(x)[0] != shape_of(mat2)[0]:
        raise RuntimeError(
            f"bmm expects the same batch size for both; got shapes {shape_of(x)} and "
            f"{shape_of(mat2)}. bmm does not broadcast; matmul (@) does."
        )
    _require_fit("bmm", x, mat2)
    return MatMul.apply(x, mat2)


class AddMM(Function):
    """out = beta * input + alpha * (mat1 @ mat2);
    d input = beta * d out, d mat1 = alpha * d out @ mat2^T, d mat2 = alpha * mat1^T @ d out."""

    @staticmethod
    def forward(
        ctx: FunctionCtx, x: Any, mat1: Any, mat2: Any, beta: Any = 1, alpha: Any = 1
    ) -> np.ndarray:
        ctx.beta, ctx.alpha = beta, alpha
        ctx.save_for_backward(mat1, mat2)
        product = np.matmul(numeric(mat1, "addmm"), numeric(mat2, "addmm"))
        if alpha != 1:
            product = product * alpha
        if beta == 0:
            return product  # as in PyTorch, input is then ignored: its nan and inf do not spread
        return product + (numeric(x, "addmm") if beta == 1 else numeric(x, "addmm") * beta)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        mat1, mat2 = ctx.saved_tensors
        needs_x, needs_mat1, needs_mat2 = ctx.needs_input_grad
        scaled = grad * ctx.alpha if ctx.alpha != 1 else grad
        grad_x = grad * ctx.beta if needs_x else None
        grad_mat1 = MatMul.apply(scaled, Transpose.apply(mat2, 0, 1)) if needs_mat1 else None
        grad_mat2 = MatMul.apply(Transpose.apply(mat1, 0, 1), scaled) if needs_mat2 else None
        return grad_x, grad_mat1, grad_mat2


@register("addmm")
def addmm(x: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Variable:
    """beta * x + alpha * (mat1 @ mat2), with x broadcast to the product's shape."""
    for name, scale in (("beta", beta), ("alpha", alpha)):
        if isinstance(scale, Variable) and scale.numel() != 1:
            raise TypeError(
                f"addmm(): argument '{name}' must be a number, but got a Variable of shape "
                f"{tuple(scale.shape)}. Pass a Python number."
            )
    _require_ndim("addmm", 2, mat1=mat1, mat2=mat2)
    _require_same_dtype("addmm", mat1, mat2)
    _require_same_dtype("addmm", x, mat2)
    _require_fit("addmm", mat1, mat2)
    shape = (shape_of(mat1)[0], shape_of(mat2)[1])
    if not broadcasts_to(shape_of(x), shape):
        raise RuntimeError(
            f"addmm: input of shape {shape_of(x)} cannot be broadcast to the product's shape "
            f"{shape}; give input that shape, or one that broadcasts to it."
        )
    return AddMM.apply(x, mat1, mat2, beta=beta, alpha=alpha)


@register("dot")
def dot(x: Any, other: Any) -> Variable:
    """The dot product of two 1-D vectors of the same length."""
    _require_ndim("dot", 1, input=x, other=other)
    _require_same_dtype("dot", x, other)
    if shape_of(x) != shape_of(other):
        raise RuntimeError(
            f"dot expects two vectors of the same length; got lengths {shape_of(x)[0]} and "
            f"{shape_of(other)[0]}."
        )
    return MatMul.apply(x, other)


@register("outer", aliases=("ger",))
def outer(x: Any, vec2: Any) -> Variable:
    """The outer product of two 1-D vectors: out[i, j] = x[i] * vec2[j]."""
    _require_ndim("outer", 1, input=x, vec2=vec2)
    return Unsqueeze.apply(x, 1) * Unsqueeze.apply(vec2, 0)


# --------------------------------------------------------------------------- einsum

_LETTERS = string.ascii_letters


def _parse_equation(equation: str, shapes: list) -> tuple[list[str], str]:
    """The subscripts of each operand and of the output: letters only, the output explicit.

    Without "->" the output follows NumPy's (and PyTorch's) rule: the ellipsis first, then
    the letters that appear exactly once, in alphabetical order. An ellipsis becomes fresh
    letters, the same ones in every operand (aligned from the right, as in broadcasting), so
    ellipsis dimensions missing from the output are summed, as in PyTorch.
    """
    if not isinstance(equation, str):
        raise TypeError(
            f"einsum expects the equation as a str first, like einsum('ij,jk->ik', a, b); got "
            f"{type(equation).__name__}. (The sublist form einsum(a, [0, 1], ...) is not "
            f"supported.)"
        )
    equation = equation.replace(" ", "")
    left, arrow, output = equation.partition("->")
    strange = set((left + output).replace("...", "").replace(",", "")) - set(_LETTERS)
    if strange:
        raise OpError(
            f"einsum {equation!r}: subscripts are letters (a-z, A-Z), '...', ',' and one "
            f"'->'; got {''.join(sorted(strange))!r}."
        )
    inputs = left.split(",")
    if len(inputs) != len(shapes):
        raise OpError(
            f"einsum: the equation {equation!r} has subscripts for {len(inputs)} operand(s), "
            f"but {len(shapes)} operand(s) were given; write one comma-separated group per "
            f"operand."
        )
    if not arrow:
        letters = left.replace("...", "").replace(",", "")
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = ("..." if "..." in left else "") + "".join(once)
    widths = []
    for subscripts, shape in zip(inputs, shapes):
        width = len(shape) - len(subscripts.replace("...", ""))
        if "..." in subscripts and width < 0:
            raise OpError(
                f"einsum: the subscripts {subscripts!r} name more dimensions than the operand "
                f"of shape {shape} has."
            )
        widths.append(width if "..." in subscripts else 0)
    dots = "".join(c for c in _LETTERS if c not in equation)[: max(widths, default=0)]
    inputs = [s.replace("...", dots[len(dots) - w :]) for s, w in zip(inputs, widths)]
    _check_sizes(equation, inputs, shapes)
    return inputs, output.replace("...", dots)


def _check_sizes(equation: str, inputs: list[str], shapes: list) -> None:
    """One letter per dimension, and each letter of one size (or 1) in every operand."""
    sizes: dict = {}
    for index, (subscripts, shape) in enumerate(zip(inputs, shapes)):
        if len(subscripts) != len(shape):
            raise OpError(
                f"einsum {equation!r}: operand {index} has shape {shape}, which needs "
                f"{len(shape)} letter(s); its subscripts give {len(subscripts)}."
            )
        for letter, size in zip(subscripts, shape):
            known = sizes.setdefault(letter, (size, index))
            if size != known[0] and 1 not in (size, known[0]):
                raise OpError(
                    f"einsum {equation!r}: the letter {letter!r} has size {known[0]} in operand "
                    f"{known[1]} but size {size} in operand {index}; a letter must have one "
                    f"size (or 1, which broadcasts) wherever it appears."
                )
            if known[0] == 1:
                sizes[letter] = (size, index)


class Einsum(Function):
    """out = einsum(equation, *operands): sums of products over the repeated subscripts.

    out is linear in each operand, so the gradient of operand k is again an einsum: of the
    output's gradient with every other operand, giving back operand k's subscripts.
    """

    @staticmethod
    def forward(ctx: FunctionCtx, equation: str, *operands: Any) -> np.ndarray:
        arrays = [numeric(value, "einsum") for value in operands]
        if any(is_on_cuda(array) for array in arrays):
            raise NotImplementedError(
                "einsum is not supported on cuda yet; move the Variables to the CPU with .cpu() "
                "first (and back with .cuda() after)."
            )
        ctx.shapes = [np.shape(array) for array in arrays]
        ctx.inputs, ctx.output = _parse_equation(equation, ctx.shapes)
        ctx.save_for_backward(*operands)
        try:
            return np.asarray(np.einsum(",".join(ctx.inputs) + "->" + ctx.output, *arrays))
        except ValueError as error:
            raise OpError(
                f"einsum {equation!r} with operands of shapes {ctx.shapes}: "
                f"{str(error).strip().rstrip('.')}."
            ) from None

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        operands = ctx.saved_tensors
        grads = [None]  # the equation gets no gradient
        for k, needed in enumerate(ctx.needs_input_grad[1:]):
            grads.append(_einsum_gradient(ctx, grad, operands, k) if needed else None)
        return tuple(grads)


def _einsum_gradient(ctx: FunctionCtx, grad: Variable, operands: tuple, k: int) -> Variable:
    """d out / d operand k, as one einsum of grad with the other operands.

    Two cases need one more, constant, operand:
    - a letter repeated in operand k (a diagonal, "ii"): out reads only the diagonal, so the
      gradient is zero off it; the repeat is renamed to a fresh letter and tied to the first
      by an identity matrix;
    - a letter of operand k that no other term has at operand k's size (summed away in the
      forward): the gradient is constant along it, so an operand of ones spreads it there.
    """
    others = [i for i in range(len(operands)) if i != k]
    terms = [ctx.output] + [ctx.inputs[i] for i in others]
    values = [grad] + [operands[i] for i in others]
    sizes = dict(zip(ctx.inputs[k], ctx.shapes[k]))
    dtype = grad.data.dtype
    fresh = (c for c in _LETTERS if c not in "".join(ctx.inputs) + ctx.output)
    target = ""
    for letter in ctx.inputs[k]:
        if letter in target:
            renamed = next(fresh, None)
            if renamed is None:
                raise OpError("einsum's gradient needs a spare letter, but all 52 are used.")
            terms.append(letter + renamed)
            values.append(np.eye(sizes[letter], dtype=dtype))
            letter = renamed
        target += letter
    for letter in sizes:
        if not _provided(letter, sizes[letter], terms, values):
            terms.append(letter)
            values.append(np.ones(sizes[letter], dtype=dtype))
    return Einsum.apply(",".join(terms) + "->" + target, *values)


def _provided(letter: str, size: int, terms: list, values: list) -> bool:
    """Whether a term of the gradient's einsum has `letter` at operand k's size (or more).

    terms[0] is the output's: its sizes are the broadcast ones, never smaller than k's.
    """
    if letter in terms[0]:
        return True
    for term, value in zip(terms[1:], values[1:]):
        if letter in term and np.shape(numeric(value, "einsum"))[term.index(letter)] == size:
            return True
    return False


def _subscript(item: Any) -> str:
    """One entry of a subscripts list: 0-25 are A-Z, 26-51 are a-z, Ellipsis is '...'."""
    if item is Ellipsis:
        return "..."
    if isinstance(item, (Variable, np.ndarray)):
        count = item.numel() if isinstance(item, Variable) else item.size
        if count != 1:
            raise RuntimeError(
                f"einsum(): a subscripts list holds ints, but one entry has {count} values; "
                f"give one int per dimension, e.g. [0, 1]."
            )
        item = item.item()
    # PyTorch checks the range first, then that the subscript is an int.
    if isinstance(item, (int, float, np.integer, np.floating)) and not 0 <= item < 52:
        raise ValueError(
            f"einsum(): subscript in subscript list is not within the valid range [0, 52); "
            f"got {item}."
        )
    if isinstance(item, (float, np.floating)) or not isinstance(item, (int, np.integer)):
        raise TypeError(
            f"einsum(): a subscripts list holds ints (and Ellipsis), but got "
            f"{type(item).__name__} {item!r:.30}; e.g. einsum(a, [0, 1], b, [1, 2])."
        )
    return _LETTERS[26:][item] if item < 26 else _LETTERS[:26][item - 26]


def _sublist_equation(arguments: tuple) -> tuple[str, tuple]:
    """einsum(a, [0, 1], b, [1, 2], [0, 2]) as ('AB,BC->AC', (a, b)): PyTorch's second
    form, each operand followed by the list of its subscripts, an output list last."""
    terms = [_subscripts(sublist) for sublist in arguments[1::2]]
    if len(arguments) % 2 == 1:
        output = _subscripts(arguments[-1])
        return ",".join(terms) + "->" + output, arguments[:-1:2]
    return ",".join(terms), arguments[::2]


def _subscripts(sublist: Any) -> str:
    """The letters of one subscripts list (a list, a tuple or a 1-d Variable of ints)."""
    listed = isinstance(sublist, (list, tuple))
    if not (listed or (isinstance(sublist, (Variable, np.ndarray)) and np.ndim(sublist) > 0)):
        raise TypeError(
            f"einsum(): after an operand comes the list of its subscripts (ints), but got "
            f"{type(sublist).__name__} {sublist!r:.30}; e.g. einsum(a, [0, 1], b, [1, 2])."
        )
    return "".join(_subscript(item) for item in sublist)


@register("einsum", method=False)
def einsum(equation: Any, *args: Any) -> Variable:
    """Sums of products named by subscripts, as NumPy's and PyTorch's einsum: 'ij,jk->ik'
    is a matrix product, 'ii' a trace, 'bij->bji' a transpose; also einsum(eq, [a, b]) and
    einsum(a, [0, 1], b, [1, 2]) (subscripts as ints: 0-25 for A-Z, 26-51 for a-z)."""
    # args are the operands, or (with a Variable first) subscripts lists between them.
    operands = args
    if not operands:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, or at least "
            "one operand and its subscripts list; e.g. einsum('ij->ji', a)."
        )
    if isinstance(equation, Variable):
        equation, operands = _sublist_equation((equation, *operands))
    elif not isinstance(equation, str):
        raise TypeError(
            f"einsum(): argument 'equation' (position 1) must be a string, but got "
            f"{type(equation).__name__} {equation!r:.30}; e.g. einsum('ij,jk->ik', a, b)."
        )
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for position, operand in enumerate(operands, start=1):
        if not isinstance(operand, (Variable, np.ndarray)):
            raise TypeError(
                f"einsum(): expected a Variable as operand {position}, but got "
                f"{type(operand).__name__} {operand!r:.30}. Make one with minigrad.tensor(...)."
            )
    return Einsum.apply(equation, *operands)


# --------------------------------------------------------------------------- norm


class Norm(Function):
    """y = (sum |x|^p)^(1/p) over `dims`;  dy/dx = sign(x) |x|^(p-1) / y^(p-1).

    Special p, as in PyTorch: inf is max |x| (gradient shared by the tied maxima), -inf min |x|,
    0 counts nonzeros (gradient 0), 1 sums |x| (gradient sign(x)). Where y == 0 the gradient
    is 0, not nan, for p >= 1.
    """

    @staticmethod
    def forward(x: Variable, p: float, dims: tuple, keepdim: bool) -> np.ndarray:
        size = np.abs(numeric(x, "norm"))
        if p == math.inf:
            return np.max(size, axis=dims, keepdims=keepdim)
        if p == -math.inf:
            return np.min(size, axis=dims, keepdims=keepdim)
        if p == 0:
            return np.sum((size != 0).astype(size.dtype), axis=dims, keepdims=keepdim)
        if p == 1:
            return np.sum(size, axis=dims, keepdims=keepdim)
        if p == 2:
            return np.sqrt(np.sum(size * size, axis=dims, keepdims=keepdim))
        with np.errstate(divide="ignore"):  # 0 ** p for p < 0 is inf, and the norm then 0
            return np.sum(size**p, axis=dims, keepdims=keepdim) ** (1 / p)

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Variable) -> None:
        x, ctx.p, ctx.dims, _ = inputs
        ctx.kept_shape = tuple(1 if d in ctx.dims else n for d, n in enumerate(x.shape))
        ctx.save_for_backward(x, output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad: Variable) -> tuple:
        x, norm = ctx.saved_tensors
        # Give grad and norm their reduced dimensions back (size 1), to broadcast against x.
        grad, norm = grad.reshape(ctx.kept_shape), norm.reshape(ctx.kept_shape)
        p, zero = ctx.p, norm.data == 0
        if p == 0:
            return Variable._make(np.zeros_like(x.data)), None, None, None
        if p == 1:
            return Sign.apply(x) * grad, None, None, None
        if math.isinf(p):
            # Share the gradient between the elements that reach the max (or min) of |x|,
            # found with operations (minigrad.compile replays them on each call's values).
            hits = x.abs() == norm
            count = hits.to(x.dtype).sum(dim=ctx.dims, keepdim=True)
            return Sign.apply(x) * Where.apply(hits, grad / count, 0.0), None, None, None
        if p < 1:
            # sign(x) |x|^(p-1) is infinite at x == 0, where PyTorch takes 0.
            at_zero = x.data == 0
            power = Where.apply(at_zero, 1.0, x.abs()) ** (p - 1)
            return Sign.apply(x) * power * grad * norm ** (1 - p), None, None, None
        # grad / norm^(p-1), taken as 0 where norm == 0 (x is all zeros there).
        scale = Where.apply(zero, 0.0, grad / Where.apply(zero, 1.0, norm) ** (p - 1))
        if p == 2:
            return x * scale, None, None, None
        return Sign.apply(x) * x.abs() ** (p - 1) * scale, None, None, None


def _check_norm_dtype(given: np.dtype, dtype: Any) -> None:
    """norm(dtype=...) computes in a float dtype at least as wide as x's, as in PyTorch."""
    wanted = as_dtype(dtype)
    if wanted.kind != "f":
        raise RuntimeError(
            f"norm: dtype should be floating point, but got {wanted}. Pass dtype=minigrad.float32 "
            f"or minigrad.float64."
        )
    if wanted.itemsize < given.itemsize:
        raise RuntimeError(
            f"norm: the dtype of the input ({given}) should be convertible without narrowing to "
            f"the specified dtype ({wanted}); convert x first: x.to({wanted}).norm()."
        )


@register("norm")
def norm(
    x: Variable, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None
) -> Variable:
    """The vector p-norm of x over `dim` (all elements by default), as torch.norm.

    p: "fro" (the default, the 2-norm of all the elements: a matrix's Frobenius norm), or a
    number: 1, 2, any other p, 0 (counts nonzeros), inf or -inf. A number p with a tuple of
    dims is still the vector norm of those elements, as in torch.norm (not a matrix norm).
    """
    data = numeric_metadata(x, "norm")  # its dtype and ndim only
    if data.dtype.kind != "f":
        raise RuntimeError(  # PyTorch's class: the values are of the wrong dtype
            f"norm expects floating-point values; got dtype {data.dtype}. Convert first: "
            f"x.float() or x.double()."
        )
    if dtype is not None:
        _check_norm_dtype(data.dtype, dtype)
        x = x.to(dtype)
        data = numeric_metadata(x, "norm")
    dims = normalize_dims(dim, data.ndim)
    if isinstance(p, str):
        if p == "nuc":
            raise NotImplementedError(
                "norm(p='nuc') (the nuclear norm) needs singular values, which minigrad does "
                "not compute; use p='fro' or a number."
            )
        if p != "fro":
            raise OpError(f"norm expects p to be 'fro', 'nuc' or a number; got {p!r}.")
        if dim is not None and len(dims) > 2:
            raise OpError(
                f"norm(p='fro') is a matrix norm over at most 2 dimensions; got dim={dim}. "
                f"Use p=2 for the 2-norm over more."
            )
        p = 2
    if p is None:
        p = 2
    if not isinstance(p, (int, float, np.integer, np.floating)):  # True is 1, as there
        raise TypeError(f"norm expects p to be 'fro' or a number; got {p!r}.")
    if (p < 0 or p == math.inf) and math.prod(data.shape[d] for d in dims) == 0:
        # max |x|, min |x| and sum |x|^p (p < 0) of nothing have no value to start from.
        raise RuntimeError(
            f"norm cannot compute the {p} norm over no elements (shape {tuple(data.shape)}, "
            f"dim={dim}): the operation has no identity. Use p >= 0 (finite), or reduce over "
            f"a dimension that is not empty."
        )
    return Norm.apply(x, float(p), dims, keepdim)


# --------------------------------------------------------------------------- cdist


@register("cdist", method=False)
def cdist(
    x1: Any, x2: Any, p: float = 2.0, compute_mode: Any = "use_mm_for_euclid_dist"
) -> Variable:
    """The p-norm distance between each row of x1 (.., P, M) and each row of x2 (.., R, M):
    out[.., i, j] = ||x1[.., i, :] - x2[.., j, :]||_p, of shape (.., P, R); batch dims
    broadcast. The differences as one (.., P, R, M) Variable, then norm over M, whose
    gradient is norm's (0 where a distance is 0). compute_mode is accepted; NumPy computes
    the differences directly whatever it says."""
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist")
    if not isinstance(compute_mode, str) or compute_mode not in modes:
        raise ValueError(
            f"{compute_mode} is not a valid value for compute_mode; use one of {modes}."
        )
    for name, value in (("X1", x1), ("X2", x2)):
        if not isinstance(value, Variable) or value.is_text:
            raise TypeError(f"cdist(): {name} must be a Variable; got {type(value).__name__}.")
        if value.ndim < 2:
            raise RuntimeError(
                f"cdist only supports at least 2D tensors, {name} got: {value.ndim}D; give "
                f"rows of points, e.g. x.unsqueeze(0)."
            )
        if np.dtype(value.dtype).kind != "f":
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {value.dtype}; "
                f"convert first with .double()."
            )
    if x1.dtype != x2.dtype:
        raise RuntimeError(
            f"cdist(): expected scalar type {x1.dtype} but found {x2.dtype}; convert x2 first: "
            f"x2.to(x1.dtype)."
        )
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
            f"{x2.shape[-1]}"
        )
    if isinstance(p, bool) or not isinstance(p, (int, float, np.number)) or p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values; got p={p!r}.")
    differences = Unsqueeze.apply(x1, -2) - Unsqueeze.apply(x2, -3)  # (.., P, R, M)
    return differences.norm(p=float(p), dim=-1)
