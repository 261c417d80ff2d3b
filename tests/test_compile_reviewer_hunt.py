"""Cases a reviewer who had not read the compiler wrote to make minigrad.compile silently
wrong (issue 31). Each changes, between calls, Python state a step reads in a way the
first guards did not see (a class attribute, a module attribute, a default argument, a
partial's keywords, a 4-level dict, a set, a NumPy array's element, os.environ, ...), or
writes through a callable that is C code (`log = history.append`, setattr, heapq,
np.copyto, a file's write, a custom Function's backward). Compiled and eager must agree:
the losses, the parameters and every side effect's count."""

from __future__ import annotations

import collections
import functools
import heapq
import io
import math
import operator
import os
import types
import warnings

import numpy as np
import pytest

import minigrad as torch
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad import optim
from minigrad.compiler import CompileFallbackWarning

mod = types.ModuleType("cfgmod")  # stands for `import config` used as a settings namespace


# ------------------------------------------------------------------ state read by the step
# Each case returns (f, change): the step computes f(loss); change() runs before call 3.


def case_default_arg():
    def weighted(loss, w=1.0):
        return loss * w

    return (lambda loss: weighted(loss)), lambda: setattr(weighted, "__defaults__", (3.0,))


def case_mutable_default():
    def weighted(loss, w=[1.0]):  # noqa: B006 (the case itself)
        return loss * w[0]

    return (lambda loss: weighted(loss)), lambda: weighted.__defaults__[0].__setitem__(0, 3.0)


def case_partial_keywords():
    def weighted(loss, w):
        return loss * w

    p = functools.partial(weighted, w=1.0)
    return (lambda loss: p(loss)), lambda: p.keywords.__setitem__("w", 3.0)


def case_partial_list_arg():
    ws = [1.0]
    p = functools.partial(lambda w, loss: loss * w[0], ws)
    return (lambda loss: p(loss)), lambda: ws.__setitem__(0, 3.0)


def case_module_attribute():
    mod.SCALE = 1.0
    return (lambda loss: loss * mod.SCALE), lambda: setattr(mod, "SCALE", 3.0)


def case_module_function_rebound():
    mod.act = lambda loss: loss * 1.0
    return (lambda loss: mod.act(loss)), lambda: setattr(mod, "act", lambda loss: loss * 3.0)


def case_code_swapped():
    def act(loss):
        return loss * 1.0

    def act3(loss):
        return loss * 3.0

    return (lambda loss: act(loss)), lambda: setattr(act, "__code__", act3.__code__)


def case_method_rebound_on_class():
    class W:
        def f(self, loss):
            return loss * 1.0

    w = W()
    return (lambda loss: w.f(loss)), lambda: setattr(W, "f", lambda self, loss: loss * 3.0)


def case_instance_class_swapped():
    class A:
        def f(self, loss):
            return loss * 1.0

    class B:
        def f(self, loss):
            return loss * 3.0

    a = A()
    return (lambda loss: a.f(loss)), lambda: setattr(a, "__class__", B)


def case_dict_4_levels():
    cfg = {"a": {"b": {"c": {"d": 1.0}}}}
    return (lambda loss: loss * cfg["a"]["b"]["c"]["d"]), (
        lambda: cfg["a"]["b"]["c"].__setitem__("d", 3.0)
    )


def case_list_in_tuple():
    t = ([1.0],)
    return (lambda loss: loss * t[0][0]), lambda: t[0].__setitem__(0, 3.0)


def case_deque():
    d = collections.deque([1.0])
    return (lambda loss: loss * d[-1]), lambda: d.append(3.0)


def case_ordereddict():
    d = collections.OrderedDict(w=1.0)
    return (lambda loss: loss * d["w"]), lambda: d.__setitem__("w", 3.0)


def case_set_membership():
    flags = set()
    return (lambda loss: loss * 3.0 if "boost" in flags else loss), lambda: flags.add("boost")


def case_slots_object():
    class Cfg:
        __slots__ = ("w",)

        def __init__(self):
            self.w = 1.0

    c = Cfg()
    return (lambda loss: loss * c.w), lambda: setattr(c, "w", 3.0)


def case_numpy_element():
    weights = np.array([1.0, 1.0])  # e.g. per-task loss weights kept in NumPy
    return (lambda loss: loss * weights[0]), lambda: weights.__setitem__(0, 3.0)


def case_numpy_item():
    w = np.array(1.0)
    return (lambda loss: loss * float(w)), lambda: w.fill(3.0)


def case_os_environ():
    os.environ["LOSS_SCALE"] = "1.0"
    return (lambda loss: loss * float(os.environ["LOSS_SCALE"])), (
        lambda: os.environ.__setitem__("LOSS_SCALE", "3.0")
    )


def case_globals_lookup():
    globals()["G_SCALE"] = 1.0
    return (lambda loss: loss * globals()["G_SCALE"]), lambda: globals().__setitem__("G_SCALE", 3.0)


def case_custom_function_class_attr():
    class Scale(torch.autograd.Function):
        k = 1.0

        @staticmethod
        def forward(ctx, x):
            return x * Scale.k

        @staticmethod
        def backward(ctx, g):
            return g * Scale.k

    return (lambda loss: Scale.apply(loss)), lambda: setattr(Scale, "k", 3.0)


STATE_CASES = {name[5:]: case for name, case in list(globals().items()) if name.startswith("case_")}


def _run_state(case, compiled: bool) -> tuple:
    torch.manual_seed(0)
    f, change = case()
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(6, 4)
    y = torch.randint(0, 3, (6,))

    def step(x, y):
        opt.zero_grad()
        loss = f(F.cross_entropy(model(x), y))
        loss.backward()
        opt.step()
        return loss.item()

    if compiled:
        step = torch.compile(step)
    losses = []
    for i in range(6):
        if i == 3:
            change()
        losses.append(step(x, y))
    return losses, [p.detach().numpy().copy() for p in model.parameters()], step


@pytest.mark.parametrize("name", sorted(STATE_CASES))
def test_state_changed_between_calls_is_seen(name: str) -> None:
    case = STATE_CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        eager_losses, eager_params, _ = _run_state(case, False)
        losses, params, step = _run_state(case, True)
    assert eager_losses == losses, step.explain()
    assert all(np.array_equal(a, b) for a, b in zip(eager_params, params))


# ------------------------------------------------------------------ writes through C code
# Each case returns (effect, count): the step calls effect() (or applies it, for a
# Function) on every call; count() reads how often it happened.


def case_bound_append():  # log = history.append (a common micro-optimisation)
    h = []
    log = h.append
    return (lambda: log("step")), (lambda: len(h))


def case_setattr_builtin():  # setattr(state, "steps", state.steps + 1)
    s = type("State", (), {})()
    s.steps = 0
    return (lambda: setattr(s, "steps", s.steps + 1)), (lambda: s.steps)


def case_dunder_setitem():
    c = {"steps": 0}
    return (lambda: c.__setitem__("steps", c["steps"] + 1)), (lambda: c["steps"])


def case_operator_setitem():
    c = {"steps": 0}
    return (lambda: operator.setitem(c, "steps", c["steps"] + 1)), (lambda: c["steps"])


def case_heappush():
    h = []
    return (lambda: heapq.heappush(h, 1)), (lambda: len(h))


def case_np_copyto():
    a = np.zeros(1)
    return (lambda: np.copyto(a, a + 1)), (lambda: float(a[0]))


def case_file_write():  # a log file / csv writer
    f = io.StringIO()
    return (lambda: f.write("step\n")), (lambda: f.getvalue().count("\n"))


def case_custom_backward_counter():
    calls = {"n": 0}

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            calls["n"] += 1  # plain Python write in a backward
            return g

    return Probe, (lambda: calls["n"])


SIDE_CASES = {
    name[5:]: case
    for name, case in list(globals().items())
    if name.startswith("case_") and name[5:] not in STATE_CASES
}


def _run_side(case, compiled: bool) -> tuple:
    torch.manual_seed(0)
    effect, count = case()
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(6, 4)
    y = torch.randint(0, 3, (6,))
    is_function = isinstance(effect, type)

    def step(x, y):
        opt.zero_grad()
        out = model(x)
        if is_function:
            out = effect.apply(out)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        if not is_function:
            effect()
        return loss.item()

    if compiled:
        step = torch.compile(step)
    losses = [step(x, y) for _ in range(8)]
    return losses, count(), step


@pytest.mark.parametrize("name", sorted(SIDE_CASES))
def test_a_write_through_c_code_keeps_the_step_eager(name: str) -> None:
    case = SIDE_CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        eager_losses, eager_count, _ = _run_side(case, False)
        losses, count, step = _run_side(case, True)
    assert eager_losses == losses
    assert eager_count == count, step.explain()
    assert "changes an object outside the step" in step.explain() or "side effect" in step.explain()


# ------------------------------------------------------------------ a second reviewer's cases
# Each returns (step, extra arguments, change); change() runs before call 3.

import dataclasses  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import compile_hunt_helper as helper  # noqa: E402


def _loss_step(model, opt, weigh):
    def step(x, y):
        opt.zero_grad()
        loss = weigh(F.cross_entropy(model(x), y))
        loss.backward()
        opt.step()
        return loss.item()

    return step


def second_namespace_argument(model, opt):
    cfg = types.SimpleNamespace(w=1.0)

    def step(x, y, cfg):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y) * cfg.w
        loss.backward()
        opt.step()
        return loss.item()

    return step, (cfg,), lambda: setattr(cfg, "w", 3.0)


@dataclasses.dataclass
class _Config:
    w: float = 1.0


def second_dataclass_argument(model, opt):
    cfg = _Config()

    def step(x, y, cfg):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y) * cfg.w
        loss.backward()
        opt.step()
        return loss.item()

    return step, (cfg,), lambda: setattr(cfg, "w", 3.0)


def second_numpy_array_argument(model, opt):
    w = np.array([1.0])

    def step(x, y, w):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y) * float(w[0])
        loss.backward()
        opt.step()
        return loss.item()

    return step, (w,), lambda: w.__setitem__(0, 3.0)


def second_set_argument(model, opt):
    flags = set()

    def step(x, y, flags):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if "boost" in flags:
            loss = loss * 3.0
        loss.backward()
        opt.step()
        return loss.item()

    return step, (flags,), lambda: flags.add("boost")


def second_tensor_in_argument_attribute(model, opt):
    cfg = types.SimpleNamespace(t=torch.tensor(1.0))

    def step(x, y, cfg):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y) * cfg.t
        loss.backward()
        opt.step()
        return loss.item()

    return step, (cfg,), lambda: setattr(cfg, "t", torch.tensor(3.0))


def second_param_group_replaced(model, opt):
    step = _loss_step(model, opt, lambda loss: loss)
    return step, (), lambda: opt.param_groups.__setitem__(0, {**opt.param_groups[0], "lr": 0.5})


def second_closure_of_called_function_rebound(model, opt):
    def make():
        w = 1.0

        def scale(loss):
            return loss * w

        def set_w(value):
            nonlocal w
            w = value

        return scale, set_w

    scale, set_w = make()
    return _loss_step(model, opt, scale), (), lambda: set_w(3.0)


def second_large_numpy_array_in_python(model, opt):
    a = np.ones(10000)
    step = _loss_step(model, opt, lambda loss: loss * float(a.mean()))
    return step, (), lambda: a.__setitem__(0, 20001.0)


def second_module_class_forward_rebound(model, opt):
    class Act(nn.Module):
        def forward(self, x):
            return torch.tanh(x)

    setattr(model, "1", Act())
    step = _loss_step(model, opt, lambda loss: loss)
    return step, (), lambda: setattr(Act, "forward", lambda self, x: torch.sigmoid(x))


def second_function_rebound_under_a_helper(model, opt):
    helper.inner = lambda value: value
    step = _loss_step(model, opt, helper.outer)
    return step, (), lambda: setattr(helper, "inner", lambda value: value * 3.0)


def second_import_inside_a_helper(model, opt):
    helper.SCALE = 1.0

    def weigh(loss):
        import compile_hunt_helper as h

        return loss * h.SCALE

    return _loss_step(model, opt, weigh), (), lambda: setattr(helper, "SCALE", 3.0)


def second_lambda_default_in_a_list(model, opt):
    g = {"w": 1.0}
    fs = [lambda loss, w=g: loss * w["w"]]
    step = _loss_step(model, opt, lambda loss: fs[0](loss))
    return step, (), lambda: g.__setitem__("w", 3.0)


def second_classmethod_reads_cls(model, opt):
    class K:
        w = 1.0

        @classmethod
        def f(cls, loss):
            return loss * cls.w

    return _loss_step(model, opt, lambda loss: K.f(loss)), (), lambda: setattr(K, "w", 3.0)


def second_class_dict_read(model, opt):
    class K:
        w = 1.0

    step = _loss_step(model, opt, lambda loss: loss * K.__dict__["w"])
    return step, (), lambda: setattr(K, "w", 3.0)


def second_metaclass_property(model, opt):
    class Meta(type):
        @property
        def w(cls):
            return cls._w

    class K(metaclass=Meta):
        _w = 1.0

    return _loss_step(model, opt, lambda loss: loss * K.w), (), lambda: setattr(K, "_w", 3.0)


def second_next_on_an_outside_iterator(model, opt):
    it = iter([1.0, 1.0, 1.0, 3.0, 3.0, 3.0])
    return _loss_step(model, opt, lambda loss: loss * next(it)), (), lambda: None


def second_lru_cache_cleared(model, opt):
    settings = {"w": 1.0}

    @functools.lru_cache(None)
    def get_w():
        return settings["w"]

    def change():
        settings["w"] = 3.0
        get_w.cache_clear()

    return _loss_step(model, opt, lambda loss: loss * get_w()), (), change


def second_bound_method_self_named_s(model, opt):
    class Trainer:
        def __init__(s):  # noqa: N805 (the case: not named self)
            s.scale = 1.0

        def step(s, x, y):  # noqa: N805 (the case)
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y) * s.scale
            loss.backward()
            opt.step()
            return loss.item()

    trainer = Trainer()
    return trainer.step, (), lambda: setattr(trainer, "scale", 3.0)


def second_getattr_raising_key_error(model, opt):
    class Config:
        def __init__(s):  # noqa: N805 (the case: not named self)
            s.__dict__["_d"] = {"w": 1.0}

        def __getattr__(s, k):  # noqa: N805 (the case)
            return s._d[k]

    cfg = Config()
    step = _loss_step(model, opt, lambda loss: loss * cfg.w)
    return step, (), lambda: cfg._d.__setitem__("w", 3.0)


SECOND_CASES = {name.removeprefix("second_"): case for name, case in list(globals().items())
                if name.startswith("second_")}


def _run_second(case, compiled: bool) -> tuple:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))
    step, extra, change = case(model, opt)
    if compiled:
        step = torch.compile(step)
    losses = []
    for i in range(5):
        if i == 3:
            change()
        losses.append(step(x, y, *extra))
    return losses, [p.detach().numpy().copy() for p in model.parameters()], step


@pytest.mark.parametrize("name", sorted(SECOND_CASES))
def test_a_second_reviewers_case_is_not_silently_wrong(name: str) -> None:
    case = SECOND_CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        eager_losses, eager_params, _ = _run_second(case, False)
        losses, params, step = _run_second(case, True)
    assert eager_losses == losses, step.explain()
    assert all(np.array_equal(a, b) for a, b in zip(eager_params, params))


def test_a_returned_view_of_a_parameter_follows_later_updates_as_in_eager() -> None:
    """`return model.bias.detach()`: eager's shares the parameter's memory, so each kept
    one ends equal to the final bias; the replay's must too (it returned copies)."""

    def run(compiled: bool) -> list:
        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        opt = optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))

        def step(x, y):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
            return model.bias.detach()

        if compiled:
            step = torch.compile(step)
        kept = [step(x, y) for _ in range(5)]
        return [k.numpy().copy() for k in kept]

    assert all(np.array_equal(a, b) for a, b in zip(run(False), run(True)))


# ------------------------------------------------------------------ a third reviewer's cases


@pytest.mark.parametrize(
    "loss_of",
    [
        lambda d: d.norm(p=math.inf),
        lambda d: d.clamp(max=1.0).pow(2).mean(),
        lambda d: d.clamp(min=-0.5).pow(2).mean(),
    ],
    ids=["norm_inf", "clamp_max", "clamp_min"],
)
def test_masks_a_backward_computes_follow_each_call(loss_of) -> None:
    """norm(p=inf)'s backward finds the maxima, clamp's the elements inside its bounds:
    computed from each call's values, never kept from the traced call."""

    def run(compiled: bool) -> list:
        torch.manual_seed(0)
        model = nn.Linear(4, 4)
        opt = optim.SGD(model.parameters(), lr=0.05)
        x, y = torch.randn(16, 4), torch.randn(16, 4)

        def step(x, y):
            loss = loss_of(model(x) - y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.item()

        if compiled:
            step = torch.compile(step)
        return [step(x, y) for _ in range(8)]

    assert run(False) == run(True)


def _dropout_model():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 1))


@pytest.mark.parametrize("reach", ["dict", "tuple", "box", "argument", "trainer"])
@pytest.mark.parametrize("change", ["eval", "p"])
def test_a_models_mode_and_settings_are_guarded_however_the_step_reaches_it(reach, change):
    def run(compiled: bool) -> list:
        torch.manual_seed(0)
        model = _dropout_model()
        opt = optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(8, 4), torch.randn(8, 1)
        holders = {"dict": {"net": model}, "tuple": (model,),
                   "box": types.SimpleNamespace(m=model)}

        def through(holder):
            if reach == "dict":
                return holder["net"]
            if reach == "tuple":
                return holder[0]
            return holder.m

        class Trainer:
            def __init__(self) -> None:
                self.model = model

            def step(self, x, y):
                loss = F.mse_loss(self.model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                return loss.item()

        if reach == "trainer":
            step, extra = Trainer().step, ()
        elif reach == "argument":

            def step(x, y, net):
                loss = F.mse_loss(net(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                return loss.item()

            extra = (model,)
        else:
            holder = holders[reach]

            def step(x, y):
                loss = F.mse_loss(through(holder)(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                return loss.item()

            extra = ()
        if compiled:
            step = torch.compile(step)
        out = []
        for i in range(8):
            if i == 5:
                if change == "eval":
                    model.eval()
                else:
                    model[2].p = 0.0
            out.append(step(x, y, *extra))
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        assert run(False) == run(True)


class _Counted(nn.Module):
    total = 0

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 1)
        self.calls = torch.zeros(1)

    def forward(self, x):
        type(self).total += 1  # a class attribute, through a call
        self.calls += 1  # a Variable: an in-place operation, not a Python number
        return self.linear(x)


def test_writes_through_a_call_or_to_a_variable_keep_the_step_eager_and_counting() -> None:
    def run(compiled: bool) -> tuple:
        torch.manual_seed(0)
        _Counted.total = 0
        model = _Counted()
        opt = optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(8, 4), torch.randn(8, 1)

        def step(x, y):
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.item()

        if compiled:
            step = torch.compile(step)
        losses = [step(x, y) for _ in range(6)]
        return losses, _Counted.total, model.calls.item()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        assert run(False) == run(True)


def test_a_counter_a_scheduler_lambda_reads_mid_step_keeps_the_step_eager() -> None:
    def run(compiled: bool) -> list:
        global _CALLS
        torch.manual_seed(0)
        _CALLS = 0
        model = nn.Linear(4, 1)
        opt = optim.SGD(model.parameters(), lr=0.1)
        schedule = optim.lr_scheduler.LambdaLR(opt, lambda epoch: 1 / (1 + _CALLS))
        x, y = torch.randn(8, 4), torch.randn(8, 1)

        def step(x, y):
            global _CALLS
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            schedule.step()
            _CALLS += 1
            return loss.item()

        if compiled:
            step = torch.compile(step)
        return [(step(x, y), opt.param_groups[0]["lr"]) for _ in range(6)]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        assert run(False) == run(True)


_CALLS = 0


def test_a_forward_given_to_exec_keeps_the_step_eager() -> None:
    source = (
        "class Logged(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.linear = nn.Linear(4, 1)\n"
        "        self.calls = []\n"
        "    def forward(self, x):\n"
        "        self.calls.append(1)\n"
        "        return self.linear(x)\n"
    )
    namespace = {"nn": nn}
    exec(compile(source, "<string>", "exec"), namespace)  # noqa: S102 (the case)

    def run(compiled: bool) -> int:
        torch.manual_seed(0)
        model = namespace["Logged"]()
        opt = optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(8, 4), torch.randn(8, 1)

        def step(x, y):
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.item()

        if compiled:
            step = torch.compile(step)
        for _ in range(6):
            step(x, y)
        return len(model.calls)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        assert run(False) == run(True) == 6


def test_a_library_layers_class_swapped_between_calls_traces_again() -> None:
    def run(compiled: bool) -> list:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        opt = optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(8, 4), torch.randn(8, 1)

        def step(x, y):
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.item()

        if compiled:
            step = torch.compile(step)
        out = []
        for i in range(8):
            if i == 5:
                model[1].__class__ = nn.Tanh
            out.append(step(x, y))
        return out

    assert run(False) == run(True)


@pytest.mark.parametrize("how", ["loop over a captured iterator", "an iterator argument"])
def test_an_iterator_from_outside_the_step_keeps_it_eager(how: str) -> None:
    def run(compiled: bool) -> list:
        torch.manual_seed(0)
        model = nn.Linear(4, 1)
        opt = optim.SGD(model.parameters(), lr=0.1)
        scales = iter([1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        x, y = torch.randn(8, 4), torch.randn(8, 1)

        def step(x, y):
            for scale in scales:  # noqa: B007 (takes the next one)
                break
            loss = F.mse_loss(model(x), y) * scale
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.item()

        def step_taking(x, y, it):
            loss = F.mse_loss(model(x), y) * next(it)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.item()

        chosen = step if how.startswith("loop") else step_taking
        if compiled:
            chosen = torch.compile(chosen)
        extra = () if how.startswith("loop") else (scales,)
        return [chosen(x, y, *extra) for _ in range(8)]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        assert run(False) == run(True)
