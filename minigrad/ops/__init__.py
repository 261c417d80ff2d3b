"""The built-in numeric operations, each an ordinary Function subclass.

Importing an op module registers its ops in the op table (minigrad/ops/table.py), which
attaches them to Variable and to the top-level minigrad namespace.
"""

from minigrad.ops import (
    closeness,
    linalg,
    pointwise,
    properties,
    reorder,
    selection,
    statistics,
    table,
    triangle,
)
from minigrad.ops.arithmetic import Add, Div, Mul, Neg, Pow, Sub
from minigrad.ops.comparison import compare
from minigrad.ops.conversion import Cast, ToDevice
from minigrad.ops.indexing import Copy, Index, IndexPut, ScatterAdd
from minigrad.ops.matmul import MatMul
from minigrad.ops.reduction import Max, MaxResult, Mean, Sum, max_along
from minigrad.ops.shape import (
    Cat,
    Expand,
    Permute,
    Reshape,
    Squeeze,
    Stack,
    SumToSize,
    Transpose,
    Unsqueeze,
    cat,
    stack,
)
from minigrad.ops.softmax import LogSoftmax, Softmax
from minigrad.ops.unary import Abs, Clone, Exp, Log, Relu, Sigmoid, Sqrt, Tanh

__all__ = [
    "reorder",
    "triangle",
    "closeness",
    "properties",
    "linalg",
    "pointwise",
    "selection",
    "statistics",
    "table",
    "Abs",
    "Add",
    "Cat",
    "Clone",
    "Copy",
    "Div",
    "Exp",
    "Expand",
    "Index",
    "IndexPut",
    "Log",
    "LogSoftmax",
    "MatMul",
    "Max",
    "MaxResult",
    "Mean",
    "Mul",
    "Neg",
    "Permute",
    "Pow",
    "Relu",
    "Reshape",
    "ScatterAdd",
    "Sigmoid",
    "Softmax",
    "Sqrt",
    "Squeeze",
    "Stack",
    "Sub",
    "Sum",
    "SumToSize",
    "Tanh",
    "ToDevice",
    "Cast",
    "Transpose",
    "Unsqueeze",
    "cat",
    "compare",
    "max_along",
    "stack",
]
