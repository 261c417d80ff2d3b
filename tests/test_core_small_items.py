"""Issue 23's smaller items: anomaly detection is per thread like the other switches, it
keeps a learner's own frames even in a folder called minigrad, and Variable._make makes
an instance of the class it is called on."""

import threading

import numpy as np
import pytest

import minigrad
from minigrad.core import grad_mode
from minigrad.core.grad_mode import state


def test_anomaly_detection_is_per_thread() -> None:
    seen = []
    with minigrad.autograd.detect_anomaly():
        other = threading.Thread(target=lambda: seen.append(state.anomaly_enabled))
        other.start()
        other.join()
        seen.append(state.anomaly_enabled)
    assert seen == [False, True]
    assert state.anomaly_enabled is False


def test_a_learners_frames_in_a_folder_named_minigrad_are_kept(tmp_path) -> None:
    learner = tmp_path / "minigrad" / "my_lesson.py"
    learner.parent.mkdir()
    ours = grad_mode.__file__
    assert not grad_mode._in_package(f'  File "{learner}", line 3, in step\n')
    assert grad_mode._in_package(f'  File "{ours}", line 3, in apply\n')


def test_a_nan_gradient_names_the_learners_line() -> None:
    class Broken(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad):
            return grad * np.nan

    x = minigrad.tensor([1.0], requires_grad=True)
    with minigrad.autograd.detect_anomaly():
        y = Broken.apply(x)  # this line is the one the error shows
        with pytest.raises(RuntimeError, match="returned nan") as info:
            y.sum().backward()
    assert "test_core_small_items.py" in str(info.value)
    assert "core/function.py" not in str(info.value)


def test_make_makes_an_instance_of_the_class_it_is_called_on() -> None:
    data = np.ones(2)
    assert type(minigrad.nn.Parameter._make(data)) is minigrad.nn.Parameter
    assert type(minigrad.Variable._make(data)) is minigrad.Variable


def test_a_compiled_step_that_reads_values_through_numpy_is_never_replayed_wrong() -> None:
    """np.asarray(v) reaches the values through __array__ and numpy(): the tracer must see
    the user's line above both accessors (trace._from_user_code), or a replay would bake
    in the traced value."""
    w = minigrad.tensor([1.0, 2.0], requires_grad=True)

    def step(x):
        scale = float(np.asarray(x.detach()).sum())  # NumPy work on the values
        return (w * x).sum() * scale

    compiled = minigrad.compile(step)
    # The two traced calls agree (the same x), so only seeing the NumPy read keeps the
    # third and later calls from replaying the traced scale.
    for value in (1.0, 1.0, 2.0, 3.0, 4.0):
        x = minigrad.tensor([value, value])
        assert compiled(x).item() == step(x).item()
    assert "reads numpy() of a Variable" in compiled.explain()


def test_inference_mode_false_turns_recording_on_as_pytorchs_does():
    """inference_mode's docstring says what the code does: inference_mode() records nothing,
    inference_mode(False) records, even inside no_grad (checked against torch 2.13)."""
    x = minigrad.ones(2, requires_grad=True)
    with minigrad.inference_mode():
        assert not (x * 2).requires_grad
    with minigrad.no_grad(), minigrad.inference_mode(False):
        assert (x * 2).requires_grad and minigrad.is_grad_enabled()
    assert minigrad.is_grad_enabled()


# What a fresh reviewer found after the core moved (issue 23), each checked against torch.


def test_grad_mode_decorators_hold_for_every_step_of_a_generator():
    x = minigrad.ones(1, requires_grad=True)

    @minigrad.no_grad()
    def steps():
        received = yield (x * 2).requires_grad
        yield received, (x * 2).requires_grad
        return "done"

    generator = steps()
    assert next(generator) is False  # torch: False (the mode holds inside the generator)
    assert generator.send("sent") == ("sent", False)
    assert (x * 2).requires_grad  # and not outside it
    with pytest.raises(StopIteration) as stop:
        next(generator)
    assert stop.value.value == "done"

    @minigrad.inference_mode
    def inferring():
        yield (x * 2).requires_grad

    @minigrad.enable_grad()
    def recording():
        yield (x * 2).requires_grad

    assert list(inferring()) == [False]
    with minigrad.no_grad():
        assert list(recording()) == [True]


def test_autograd_backward_takes_pytorchs_grad_tensors_and_names_what_was_passed():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    minigrad.autograd.backward([x * 2, x * x], grad_tensors=[minigrad.ones(2), minigrad.ones(2)])
    assert x.grad.tolist() == [4.0, 6.0]  # torch: [4., 6.]
    with pytest.raises(RuntimeError, match=r"gradient\[0\] has a shape of \(3,\)"):
        (x * 2).backward(minigrad.ones(3))
    with pytest.raises(TypeError, match=r"got a list.*minigrad.tensor\(\[1.0, 2.0\]\)"):
        (x * 2).backward([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"grad_tensors\[0\] has a shape"):
        minigrad.autograd.backward(x * 2, grad_tensors=minigrad.ones(3))


def test_a_ctx_attribute_forward_did_not_set_is_named_with_what_it_did_set():
    class Scale(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x.data * k

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.scale, None  # the slip: ctx.k

    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(AttributeError, match=r"'ScaleBackward' object has no attribute 'scale'; "
                       r"forward set ctx.k"):
        Scale.apply(x, 3.0).sum().backward()


def test_jvp_reads_what_save_for_forward_kept_through_saved_tensors_as_in_pytorch():
    from minigrad.autograd import forward_ad

    class Square(minigrad.autograd.Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(inputs[0])
            ctx.result = output

        @staticmethod
        def jvp(ctx, tangent):
            (x,) = ctx.saved_tensors
            del ctx.result  # PyTorch's tutorial frees it so
            return 2 * x * tangent

    with forward_ad.dual_level():
        dual = forward_ad.make_dual(minigrad.tensor([1.0, 2.0]), minigrad.tensor([1.0, 1.0]))
        tangent = forward_ad.unpack_dual(Square.apply(dual)).tangent
    assert tangent.tolist() == [2.0, 4.0]  # torch: [2., 4.]


def test_grad_fn_is_read_only_and_a_hook_handle_is_a_context_manager():
    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(AttributeError, match="'grad_fn' of Variable is not writable.*detach"):
        y.grad_fn = None  # torch: not writable either
    seen = []
    with x.register_hook(lambda grad: seen.append(grad.tolist())):
        (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0]]  # the hook ran inside the block only


def test_saved_other_is_an_attribute_error_or_the_number_as_in_pytorch():
    """A one-input node has no _saved_other (hasattr is False, not an IndexError); x * 2
    and x ** 2 saved the number 2 (PyTorch's _saved_other for a scalar)."""
    x = minigrad.tensor([0.5, 1.5], requires_grad=True)
    assert not hasattr(x.tanh().grad_fn, "_saved_other")
    assert (x * 2).grad_fn._saved_other == 2
    assert (x**2).grad_fn._saved_other == 2
    assert (x * x).grad_fn._saved_other is x


def test_a_gradient_has_its_inputs_dtype_on_every_path():
    """float32 weights times a float64 constant: PyTorch gives float32 gradients, through
    backward(), backward(create_graph=True) and autograd.grad alike."""
    x = minigrad.tensor([2.0, 3.0], dtype=minigrad.float32, requires_grad=True)
    c = minigrad.tensor([3.0, 1.0], dtype=minigrad.float64)
    assert minigrad.autograd.grad((2.0**x).sum(), x)[0].dtype == minigrad.float32
    assert minigrad.autograd.grad((x * c).sum(), x, create_graph=True)[0].dtype == minigrad.float32
    (x * c).sum().backward(create_graph=True)
    assert x.grad.dtype == minigrad.float32
