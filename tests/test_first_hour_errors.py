"""The slips a learner makes in a first hour, and what minigrad says about each.

Every message says what happened and what to write instead. The slips tried (each is a
test below; "works" means minigrad accepts it, as PyTorch does):

Writing a Function
  1. forward written without ctx, `def forward(x)`                    -> TypeError, clearer
  2. calling `Square.forward(x)` instead of `Square.apply(x)`         -> TypeError, clearer
  3. a direct forward call whose ctx slot got a Variable (ctx.save_for_backward on it)
                                                                       -> AttributeError, clearer
  4. forward / backward written with `self`                           -> TypeError, clearer
  5. backward without a gradient parameter, or one too few            -> TypeError, clearer
  6. forgetting `@staticmethod` on `def forward(ctx, x)`              -> works
  7. `apply` given more inputs than forward takes                     -> TypeError, clearer
  8. the setup_context style with ctx still in forward                -> TypeError, clearer
  9. setup_context with the wrong parameters                          -> TypeError, clearer
 10. forward without `return`                                          -> already clear
 11. backward returning the wrong number of gradients                  -> already clear
 12. backward returning a gradient of the wrong shape                  -> already clear
 13. backward returning float32 for a float64 input                    -> works (cast)
 14. `ctx.save_for_backward(x.data)`, a non-Variable                   -> works (plain values)
 15. forgetting `ctx.save_for_backward`, then unpacking saved_tensors  -> ValueError + a note
 16. `x = ctx.saved_tensors` without unpacking                         -> TypeError + a note
 17. `ctx.saved_tensors()` with parentheses                            -> TypeError + a note
 18. instantiating a Function, `Square()(x)` or `Square(x)`            -> already clear
NumPy and Variables
 19. `np.exp(v)` (and np.maximum(v, 0), np.add.reduce(v))              -> TypeError, clearer
 20. `array * v`, `array + v`, `array @ v`, `array > v`, `np.float64(2) * v`
                                                                       -> work (Variables)
 21. `x.data -= lr * x.grad` (an array updated with a Variable)        -> TypeError, clearer
Gradients and backward
 22. reading `.grad` of a non-leaf                                     -> UserWarning (PyTorch's)
 23. `backward()` on a text leaf                                       -> RuntimeError, clearer
 24. forgetting requires_grad before backward                          -> already clear
 25. backward of a result computed under no_grad()                     -> already clear
 26. backward twice without retain_graph                               -> already clear
 27. backward on a non-scalar without a gradient                       -> already clear
 28. an in-place update of a leaf that requires grad                   -> already clear
 29. requires_grad=True on integer data                                -> already clear
 30. `.item()` on a vector, `float(vector)`                            -> already clear
 31. `.numpy()` on a Variable that requires grad                       -> already clear
Not improved here (the message comes from Python, or from another part of minigrad)
 32. `x.grad.zero_()` before any backward: AttributeError on None (Python's own)
 33. `w.grad * 2` for a leaf the loss did not use: TypeError on None (Python's own)
 34. `np.sum(v)` / `v.sum(axis=1)`: "reduce_sum() got an unexpected keyword argument
     'axis'" (minigrad/ops: PyTorch accepts axis= as an alias of dim=)

The environment report of lesson 00 and `make lab` are first-hour matters too; they are
at the end.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import minigrad
from minigrad import Function, Variable
from minigrad.course import lesson00

ROOT = Path(__file__).resolve().parent.parent


def says(*phrases: str) -> str:
    """A regex that matches when every phrase (taken literally) occurs, in any order."""
    return "(?s)" + "".join(f"(?=.*{re.escape(phrase)})" for phrase in phrases)


def leaf(*values: float) -> Variable:
    return Variable(np.array(values or (1.0, 2.0)), requires_grad=True)


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_output


# --------------------------------------------------------------------------- writing a Function


def test_1_forward_without_ctx_says_to_add_it() -> None:
    class SquareNoCtx(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    with pytest.raises(
        TypeError,
        match=says("SquareNoCtx.forward(x) has no ctx parameter", "`def forward(ctx, x):`"),
    ):
        SquareNoCtx.apply(leaf())


def test_2_calling_forward_directly_says_to_call_apply() -> None:
    x = leaf()
    with pytest.raises(
        TypeError,
        match=says("Square.forward(x) was called directly", "Call Square.apply(x) instead"),
    ):
        Square.forward(x)
    with pytest.raises(TypeError, match=says("called directly", "Square.apply(x)")):
        Square.forward(x.data)  # an array in ctx's place: the same slip


def test_2_a_direct_call_with_a_real_ctx_still_works() -> None:
    """Calling forward directly is fine when a ctx is passed (a forward may reuse another's)."""
    ctx = minigrad.FunctionCtx()
    assert np.allclose(Square.forward(ctx, leaf()).data, [1.0, 4.0])
    assert Square.forward.__name__ == "forward"


def test_3_a_variable_in_ctx_place_names_ctx_and_apply() -> None:
    class Scale(Function):
        @staticmethod
        def forward(ctx, *inputs):
            ctx.save_for_backward(*inputs)
            return inputs[0] * 2

    with pytest.raises(
        AttributeError,
        match=says("a Variable has no `save_for_backward`", "belongs to ctx", "apply(x)"),
    ):
        Scale.forward(leaf(), leaf())


def test_4_self_in_forward_or_backward_says_static_method() -> None:
    class WithSelf(Function):
        @staticmethod
        def forward(self, ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2

    with pytest.raises(TypeError, match=says("takes self", "@staticmethod", "forward(ctx")):
        WithSelf.apply(leaf())

    class BackwardWithSelf(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        def backward(self, ctx, grad_output):
            return grad_output * 2

    with pytest.raises(TypeError, match=says("takes self", "`def backward(ctx, grad_output)`")):
        BackwardWithSelf.apply(leaf()).sum().backward()


def test_5_backward_parameters_that_do_not_fit_say_what_it_receives() -> None:
    class NoGradParameter(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx):
            return None

    with pytest.raises(
        TypeError, match=says("does not fit", "backward(ctx, grad_output)", "1 output")
    ):
        NoGradParameter.apply(leaf()).sum().backward()

    class TwoOutputs(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    first, second = TwoOutputs.apply(leaf())
    with pytest.raises(
        TypeError,
        match=says("forward returned 2 outputs", "def backward(ctx, grad_output1, grad_output2)"),
    ):
        (first + second).sum().backward()


def test_6_forgetting_staticmethod_works() -> None:
    class NoDecorator(Function):
        def forward(ctx, x):  # noqa: N805 - the slip under test
            return x * 3

        def backward(ctx, grad_output):  # noqa: N805
            return grad_output * 3

    x = leaf()
    NoDecorator.apply(x).sum().backward()
    assert np.allclose(x.grad.data, [3.0, 3.0])


def test_7_apply_with_too_many_inputs_says_how_many_forward_takes() -> None:
    with pytest.raises(
        TypeError, match=says("Square.forward(ctx, x)", "called with 2 inputs", "after ctx")
    ):
        Square.apply(leaf(), leaf())


def test_8_setup_context_style_with_ctx_in_forward() -> None:
    class PowerSetup(Function):
        @staticmethod
        def forward(ctx, x, n):
            return x**n

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.n = inputs[1]

    with pytest.raises(TypeError, match=says("takes ctx", "setup_context", "`def forward(x, n):`")):
        PowerSetup.apply(leaf(), 3)


def test_9_setup_context_with_the_wrong_parameters() -> None:
    class PowerSetup(Function):
        @staticmethod
        def forward(x, n):
            return x**n

        @staticmethod
        def setup_context(ctx, inputs):
            pass

    with pytest.raises(TypeError, match=says("`def setup_context(ctx, inputs, output):`")):
        PowerSetup.apply(leaf(), 3)


def test_10_forward_without_return() -> None:
    class NoReturn(Function):
        @staticmethod
        def forward(ctx, x):
            x * x

    with pytest.raises(TypeError, match=says("NoReturn.forward returned None", "`return`")):
        NoReturn.apply(leaf())


def test_11_wrong_number_of_gradients() -> None:
    class Mul(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    with pytest.raises(
        RuntimeError,
        match=says("incorrect number of gradients (expected 2, got 1)", "None for inputs"),
    ):
        Mul.apply(leaf(), leaf()).sum().backward()


def test_12_gradient_of_the_wrong_shape() -> None:
    class Summed(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.sum()[None, None]

    with pytest.raises(RuntimeError, match=says("invalid gradient at index 0", "(1, 1)", "(2,)")):
        Summed.apply(leaf()).sum().backward()


def test_13_a_float32_gradient_for_a_float64_input_is_cast() -> None:
    class Float32Gradient(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return np.full(grad_output.shape, 2.0, dtype=np.float32)

    x = leaf()
    Float32Gradient.apply(x).sum().backward()
    assert x.grad.dtype == np.float64 and np.allclose(x.grad.data, 2.0)


def test_14_saving_a_plain_array_works() -> None:
    class SaveData(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x.data)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output

    x = leaf()
    SaveData.apply(x).sum().backward()
    assert np.allclose(x.grad.data, [2.0, 4.0])


needs_notes = pytest.mark.skipif(sys.version_info < (3, 11), reason="add_note is Python 3.11+")


@needs_notes
def test_15_unpacking_saved_tensors_that_were_never_saved() -> None:
    class NoSave(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * x * grad_output

    with pytest.raises(ValueError, match="not enough values to unpack") as caught:
        NoSave.apply(leaf()).sum().backward()
    assert re.search(
        says("saved_tensors is empty", "ctx.save_for_backward(x, ...)"), caught.value.__notes__[0]
    )


@needs_notes
def test_16_saved_tensors_not_unpacked() -> None:
    class NotUnpacked(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            x = ctx.saved_tensors
            return 2 * x * grad_output

    with pytest.raises(TypeError, match="got tuple") as caught:
        NotUnpacked.apply(leaf()).sum().backward()
    assert re.search(says("unpack it", "(x,) = ctx.saved_tensors"), caught.value.__notes__[0])


@needs_notes
def test_17_saved_tensors_called() -> None:
    class Called(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors()
            return 2 * x * grad_output

    with pytest.raises(TypeError, match="not callable") as caught:
        Called.apply(leaf()).sum().backward()
    assert re.search(says("a property", "`ctx.saved_tensors`"), caught.value.__notes__[0])


def test_18_instantiating_a_function() -> None:
    with pytest.raises(RuntimeError, match=says("should not be instantiated", "Square.apply")):
        Square(leaf())


# --------------------------------------------------------------------------- NumPy and Variables


@pytest.mark.parametrize(
    ("call", "phrases"),
    [
        (lambda v: np.exp(v), ("np.exp was given a Variable", "v.exp()", "np.exp(v.data)")),
        (lambda v: np.tanh(v), ("np.tanh", "minigrad.tanh(v)", "np.tanh(v.data)")),
        (lambda v: np.abs(v), ("np.absolute", "v.abs()", "np.absolute(v.data)")),
        (lambda v: np.maximum(v, 0), ("np.maximum", "minigrad.maximum(a, b)")),
        (lambda v: np.add.reduce(v), ("np.add.reduce was given a Variable", "(v.data)")),
    ],
    ids=["exp", "tanh", "abs", "maximum", "add.reduce"],
)
def test_19_numpy_functions_on_a_variable_say_what_to_use(call, phrases) -> None:
    with pytest.raises(TypeError, match=says(*phrases)):
        call(leaf())


def test_20_operators_with_an_array_on_the_left_stay_variables() -> None:
    v = leaf(1.0, 2.0)
    array = np.array([3.0, 4.0])
    results = {
        "mul": array * v,
        "add": array + v,
        "sub": array - v,
        "div": array / v,
        "pow": array**v,
        "scalar": np.float64(2.0) * v,
        "explicit ufunc": np.multiply(array, v),
    }
    for name, result in results.items():
        assert isinstance(result, Variable) and result.grad_fn is not None, name
    assert np.allclose((array * v).data, [3.0, 8.0])
    assert np.allclose((array - v).data, [2.0, 2.0])
    assert np.allclose((np.eye(2) @ v).data, [1.0, 2.0])
    assert (array > v).data.tolist() == [True, True]
    assert (array == v).data.tolist() == [False, False]
    (array * v).sum().backward()
    assert np.allclose(v.grad.data, array)


def test_21_an_array_updated_in_place_with_a_variable() -> None:
    """`w.data -= lr * w.grad` is PyTorch's old idiom: the numbers change in place and
    nothing is recorded. A NumPy function that would drop the graph still explains."""
    x = leaf(2.0, 3.0)
    (x * x).sum().backward()
    array = x.data
    x.data -= 0.1 * x.grad
    assert x.data is array and np.allclose(x.data, [1.6, 2.4])
    assert x.grad_fn is None and x.is_leaf and x._version == 0
    with pytest.raises(TypeError, match=says("np.exp was given a Variable", "v.exp()")):
        np.exp(x)


# --------------------------------------------------------------------------- gradients, backward


def test_22_reading_grad_of_a_non_leaf_warns_as_pytorch_does() -> None:
    x = leaf()
    h = x * 3
    (h * h).sum().backward()
    with pytest.warns(UserWarning, match=says("not a leaf", "retain_grad()")) as caught:
        assert h.grad is None
    assert caught[0].filename == __file__  # it points at the line that read .grad


def test_22_no_warning_for_leaves_retained_or_filled_gradients() -> None:
    x = leaf()
    kept, wanted = x * 2, x * 5
    kept.retain_grad()
    loss = (kept * wanted).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is None  # a leaf before backward: None, no warning
        loss.backward(retain_graph=True, inputs=[wanted])  # fills wanted.grad
        loss.backward()
        assert x.grad is not None and kept.grad is not None and wanted.grad is not None


def test_22_the_engine_never_reads_grad_of_a_non_leaf() -> None:
    """Hooks, retain_grad, create_graph, grad(), text feedback: no warning from inside."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = leaf()
        h = x * x
        h.register_hook(lambda g: g * 2)
        h.retain_grad()
        y = (h.exp() * x).sum()
        (first,) = minigrad.grad(y, x, create_graph=True)
        first.sum().backward()
        y2 = (x * x).sum()
        y2.backward(create_graph=True)
        draft = Variable("hello", role="greeting", requires_grad=True)
        reply = draft + " world"
        reply.backward(Variable("make it warmer"))
        assert draft.grad.data == "make it warmer"


def test_23_backward_on_a_text_leaf_says_to_pass_feedback() -> None:
    draft = Variable("hello", role="greeting", requires_grad=True)
    with pytest.raises(RuntimeError, match=says("text Variable", "feedback", "backward(Variable(")):
        draft.backward()


@pytest.mark.parametrize(
    ("slip", "error", "phrases"),
    [
        (
            lambda: (Variable(2.0) * 3).backward(),
            RuntimeError,
            ("does not require grad", "requires_grad=True"),
        ),
        (
            lambda: _under_no_grad().backward(),
            RuntimeError,
            ("does not require grad", "no_grad()"),
        ),
        (lambda: _backward_twice(), RuntimeError, ("a second time", "retain_graph=True")),
        (
            lambda: (leaf() * 2).backward(),
            RuntimeError,
            ("only for scalar outputs", "shape (2,)", ".sum()"),
        ),
        (lambda: leaf().add_(1), RuntimeError, ("leaf Variable", "minigrad.no_grad()")),
        (
            lambda: Variable([1, 2], requires_grad=True),
            RuntimeError,
            ("floating point", "astype('float64')"),
        ),
        (lambda: leaf().detach().item(), RuntimeError, ("2 elements", "v[0].item()")),
        (lambda: float(Variable([1.0, 2.0])), ValueError, ("only one element", "float(v[0])")),
        (lambda: leaf().numpy(), RuntimeError, ("requires grad", "detach().numpy()")),
    ],
    ids=[
        "no requires_grad",
        "under no_grad",
        "backward twice",
        "non-scalar",
        "in-place on a leaf",
        "int requires_grad",
        "item of a vector",
        "float of a vector",
        "numpy with grad",
    ],
)
def test_24_to_31_messages_that_were_already_clear(slip, error, phrases) -> None:
    with pytest.raises(error, match=says(*phrases)):
        slip()


def _under_no_grad() -> Variable:
    x = leaf()
    with minigrad.no_grad():
        return (x * x).sum()


def _backward_twice() -> None:
    y = (leaf() * leaf()).exp().sum()
    y.backward()
    y.backward()


# --------------------------------------------------------------------------- lesson 00 and make lab


@pytest.mark.parametrize(
    ("setting", "gpu", "expected"),
    [
        ("1", None, "Numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1): kernels run on the CPU"),
        (None, None, "no GPU: kernels will run in Numba's CUDA simulator, which lesson 08"),
        (None, "NVIDIA H100", "GPU NVIDIA H100 found; lesson 08 runs the kernels in Numba's"),
        ("0", "NVIDIA H100", "GPU NVIDIA H100 (NUMBA_ENABLE_CUDASIM=0): kernels run on it"),
        ("0", None, "no GPU found, and NUMBA_ENABLE_CUDASIM=0 asks for one"),
    ],
)
def test_lesson00_cuda_line_states_where_kernels_run(setting, gpu, expected) -> None:
    line = lesson00.cuda_status(setting, lambda: gpu)
    assert line.startswith(expected)
    if setting != "0":  # every ordinary set-up is stated as a fact, not as something to fix
        assert "set NUMBA" not in line and "no simulator" not in line


def test_lesson00_environment_report(capsys, monkeypatch) -> None:
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    lesson00.environment()
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [
        "Python",
        "NumPy",
        "minigrad",
        "Graphviz",
        "CUDA",
    ]
    assert lines[-1].endswith("kernels run on the CPU")


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_lab_uses_the_venv_kernel_and_passes_lab_args() -> None:
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_ENABLE_CUDASIM"}
    shown = subprocess.run(
        ["make", "-n", "lab", "LAB_ARGS=--port 8890 --no-browser"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "jupyter lab" in shown and "--port 8890 --no-browser" in shown
    assert "ipykernel install" not in shown  # the notebooks use python3, the .venv's kernel
    assert "NUMBA_ENABLE_CUDASIM=1" in shown and "nvidia-smi" in shown
