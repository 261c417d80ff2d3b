"""minigrad.Generator and `generator=`: a stream of random numbers of its own.

What is checked: a Generator seeded with s repeats its draws when seeded with s again, for
every factory that takes generator=; it never touches the global stream, nor the global
seed it; its seed rules, state and errors are PyTorch's (compared with real torch where
installed); its numbers are not PyTorch's (another bit generator); and a step compiled
with minigrad.compile that draws from it replays those draws, or stays eager saying why.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import nn, optim
from minigrad.compiler.compiled import CompileFallbackWarning
from minigrad.generator import DEFAULT_SEED, STATE_SIZE

WEIGHTS = mg.tensor([[0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 2.0, 1.0]])

# Every factory (and in-place fill) that takes generator=, as a function of it.
DRAWS = {
    "rand": lambda g: mg.rand(2, 3, generator=g),
    "randn": lambda g: mg.randn(4, generator=g),
    "randint": lambda g: mg.randint(0, 10, (6,), generator=g),
    "randint short form": lambda g: mg.randint(5, (6,), generator=g),
    "randperm": lambda g: mg.randperm(7, generator=g),
    "normal numbers": lambda g: mg.normal(1.0, 2.0, (3,), generator=g),
    "normal Variables": lambda g: mg.normal(mg.zeros(3), mg.ones(3), generator=g),
    "multinomial with replacement": lambda g: mg.multinomial(WEIGHTS, 5, True, generator=g),
    "multinomial without": lambda g: mg.multinomial(WEIGHTS, 3, generator=g),
    "rand_like": lambda g: mg.rand_like(mg.zeros(2, 2), generator=g),
    "randn_like": lambda g: mg.randn_like(mg.zeros(2, 2), generator=g),
    "randint_like": lambda g: mg.randint_like(mg.zeros(5), 3, 9, generator=g),
    "Variable.normal_": lambda g: mg.zeros(4).normal_(0.0, 3.0, generator=g),
    "Variable.uniform_": lambda g: mg.zeros(4).uniform_(-1.0, 1.0, generator=g),
    "bernoulli": lambda g: mg.bernoulli(mg.full((20,), 0.4), generator=g),
    "bernoulli with p": lambda g: mg.bernoulli(mg.zeros(20), 0.4, generator=g),
    "Variable.bernoulli_": lambda g: mg.zeros(20).bernoulli_(mg.full((20,), 0.3), generator=g),
}
# What the global generator draws for the same call, without generator=.
GLOBAL_DRAWS = {
    "rand": lambda: mg.rand(2, 3),
    "randn": lambda: mg.randn(4),
    "randint": lambda: mg.randint(0, 10, (6,)),
    "randperm": lambda: mg.randperm(7),
    "normal numbers": lambda: mg.normal(1.0, 2.0, (3,)),
    "multinomial with replacement": lambda: mg.multinomial(WEIGHTS, 5, True),
    "randn_like": lambda: mg.randn_like(mg.zeros(2, 2)),
    "bernoulli": lambda: mg.bernoulli(mg.full((20,), 0.4)),
}


def values(drawn: mg.Variable) -> np.ndarray:
    return np.asarray(drawn.data).copy()


# =========================================================================== seeding


def test_a_new_generator_starts_from_pytorchs_default_seed(real_torch):
    assert mg.Generator().initial_seed() == real_torch.Generator().initial_seed() == DEFAULT_SEED


def test_two_new_generators_draw_the_same_numbers():
    np.testing.assert_array_equal(values(mg.randn(5, generator=mg.Generator())),
                                  values(mg.randn(5, generator=mg.Generator())))


def test_manual_seed_returns_the_generator_and_sets_initial_seed():
    g = mg.Generator()
    assert g.manual_seed(2147483647) is g
    assert g.initial_seed() == 2147483647
    assert g.device == "cpu" and g.device == mg.device("cpu")
    assert "initial_seed=2147483647" in repr(g)


@pytest.mark.parametrize("seed", [0, 1, 2**63, 2**64 - 1, -1, -(2**63), np.int64(5)])
def test_seeds_are_taken_as_pytorch_takes_them(seed):
    """-2**63 .. 2**64 - 1, a negative one modulo 2**64."""
    expected = int(seed) % 2**64
    assert mg.Generator().manual_seed(seed).initial_seed() == expected


@pytest.mark.parametrize("seed", [2**63, 2**64 - 1, -1, -(2**63), 12345])
def test_initial_seed_equals_pytorchs(real_torch, seed):
    theirs = real_torch.Generator().manual_seed(seed).initial_seed()
    assert mg.Generator().manual_seed(seed).initial_seed() == theirs


BAD_SEEDS = [1.5, "a", True, None, 2**64, -(2**63) - 1]


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_bad_seeds_raise_pytorchs_error_class(seed):
    expected = ValueError if isinstance(seed, int) and not isinstance(seed, bool) else RuntimeError
    with pytest.raises(expected, match="manual_seed"):
        mg.Generator().manual_seed(seed)


@pytest.mark.parametrize("seed", BAD_SEEDS, ids=repr)
def test_bad_seed_error_classes_equal_torchs(real_torch, seed):
    with pytest.raises(Exception) as theirs:
        real_torch.Generator().manual_seed(seed)
    with pytest.raises(Exception) as mine:
        mg.Generator().manual_seed(seed)
    assert type(mine.value) is type(theirs.value)


def test_seed_picks_a_fresh_64_bit_seed_and_uses_it():
    g = mg.Generator()
    chosen = g.seed()
    assert isinstance(chosen, int) and 0 <= chosen < 2**64
    assert g.initial_seed() == chosen
    first = values(mg.rand(3, generator=g))
    g.manual_seed(chosen)
    np.testing.assert_array_equal(values(mg.rand(3, generator=g)), first)
    assert mg.Generator().seed() != chosen  # 64 random bits: equal once in 2**64


# =========================================================================== repeatability


@pytest.mark.parametrize("name", list(DRAWS))
def test_reseeding_repeats_every_draw_exactly(name):
    draw = DRAWS[name]
    g = mg.Generator().manual_seed(11)
    first, second = values(draw(g)), values(draw(g))
    g.manual_seed(11)
    np.testing.assert_array_equal(values(draw(g)), first)
    np.testing.assert_array_equal(values(draw(g)), second)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), size=st.integers(1, 20))
def test_property_the_same_seed_gives_the_same_stream(seed, size):
    a = mg.Generator().manual_seed(seed)
    b = mg.Generator().manual_seed(seed)
    for _ in range(3):
        np.testing.assert_array_equal(values(mg.randn(size, generator=a)),
                                      values(mg.randn(size, generator=b)))
    assert a.initial_seed() == b.initial_seed() == seed


@pytest.mark.parametrize("name", list(DRAWS))
def test_draws_from_a_generator_leave_the_global_stream_alone(name):
    mg.manual_seed(3)
    expected = values(mg.rand(5))
    g = mg.Generator().manual_seed(4)
    mg.manual_seed(3)
    DRAWS[name](g)
    np.testing.assert_array_equal(values(mg.rand(5)), expected)


@pytest.mark.parametrize("name", list(DRAWS))
def test_the_global_seed_leaves_a_generator_alone(name):
    draw = DRAWS[name]
    g = mg.Generator().manual_seed(5)
    mg.manual_seed(0)
    expected = values(draw(g))
    g.manual_seed(5)
    mg.manual_seed(99)
    mg.rand(10)  # the global stream moves; g's does not
    np.testing.assert_array_equal(values(draw(g)), expected)


@pytest.mark.parametrize("name", list(GLOBAL_DRAWS))
def test_a_generator_seeded_with_s_draws_what_manual_seed_s_draws(name):
    """As in PyTorch: the global generator is a Generator seeded by manual_seed."""
    mg.manual_seed(42)
    expected = values(GLOBAL_DRAWS[name]())
    np.testing.assert_array_equal(values(DRAWS[name](mg.Generator().manual_seed(42))), expected)


def test_the_numbers_are_not_pytorchs(real_torch):
    """PyTorch's CPU generator is mt19937, minigrad's PCG64: another stream."""
    seeded = real_torch.Generator().manual_seed(0)
    theirs = real_torch.randn(8, generator=seeded, dtype=real_torch.float64)
    mine = mg.randn(8, generator=mg.Generator().manual_seed(0))
    assert not np.allclose(values(mine), theirs.numpy())


def test_draws_have_the_dtypes_and_ranges_asked_for():
    g = mg.Generator().manual_seed(1)
    assert mg.rand(3, generator=g, dtype=mg.float32).dtype == np.float32
    assert mg.randint(2, 5, (100,), generator=g).dtype == np.int64
    drawn = values(mg.randint(2, 5, (100,), generator=g))
    assert drawn.min() >= 2 and drawn.max() < 5
    assert sorted(values(mg.randperm(9, generator=g))) == list(range(9))
    assert mg.randn(2, generator=g, requires_grad=True).requires_grad
    uniform = values(mg.zeros(200).uniform_(3.0, 4.0, generator=g))
    assert uniform.min() >= 3.0 and uniform.max() < 4.0


# =========================================================================== state


def test_get_state_is_a_uint8_variable_and_set_state_resumes_there():
    g = mg.Generator().manual_seed(8)
    mg.rand(3, generator=g)
    state = g.get_state()
    assert isinstance(state, mg.Variable) and state.dtype == np.uint8
    assert state.shape == (STATE_SIZE,)
    ahead = [values(mg.randn(5, generator=g)), values(mg.rand(1, generator=g))]
    assert g.set_state(state) is g
    np.testing.assert_array_equal(values(mg.randn(5, generator=g)), ahead[0])
    np.testing.assert_array_equal(values(mg.rand(1, generator=g)), ahead[1])


def test_a_state_moves_a_stream_to_another_generator_with_its_seed():
    g = mg.Generator().manual_seed(77)
    mg.randint(0, 100, (13,), generator=g)  # a 32-bit half may be buffered: it travels too
    other = mg.Generator().set_state(g.get_state())
    assert other.initial_seed() == 77
    np.testing.assert_array_equal(values(mg.randint(0, 2**40, (9,), generator=other)),
                                  values(mg.randint(0, 2**40, (9,), generator=g)))


def test_get_state_is_a_copy():
    g = mg.Generator()
    state = g.get_state()
    before = values(state)
    mg.rand(4, generator=g)
    np.testing.assert_array_equal(values(state), before)


SET_STATE_ERRORS = [
    ("a float Variable", lambda torch: torch.zeros(STATE_SIZE), TypeError),
    ("a list", lambda torch: [1, 2, 3], TypeError),
    ("too few bytes", lambda torch: torch.zeros(3, dtype=torch.uint8), RuntimeError),
]


@pytest.mark.parametrize(("label", "make", "error"), SET_STATE_ERRORS,
                         ids=[case[0] for case in SET_STATE_ERRORS])
def test_set_state_errors(label, make, error):
    with pytest.raises(error, match="state|ByteTensor"):
        mg.Generator().set_state(make(mg))


@pytest.mark.parametrize(("label", "make", "error"), SET_STATE_ERRORS,
                         ids=[case[0] for case in SET_STATE_ERRORS])
def test_set_state_error_classes_equal_torchs(real_torch, label, make, error):
    with pytest.raises(error):
        real_torch.Generator().set_state(make(real_torch))


def test_set_state_refuses_bytes_that_are_no_state_and_pytorchs_state(real_torch):
    with pytest.raises(RuntimeError, match="no Generator state"):
        mg.Generator().set_state(mg.zeros(STATE_SIZE, dtype=mg.uint8))
    theirs = mg.tensor(real_torch.Generator().get_state().numpy())
    with pytest.raises(RuntimeError, match="5056"):
        mg.Generator().set_state(theirs)


# =========================================================================== arguments


@pytest.mark.parametrize(
    "factory",
    [mg.rand, mg.randn, mg.randint, mg.randperm, mg.normal, mg.multinomial, mg.rand_like,
     mg.randn_like, mg.randint_like, mg.Variable.normal_, mg.Variable.uniform_,
     mg.bernoulli, mg.Variable.bernoulli_],
    ids=lambda f: f.__name__,
)
def test_generator_is_keyword_only_as_in_pytorch(factory):
    parameter = inspect.signature(factory).parameters["generator"]
    assert parameter.kind is parameter.KEYWORD_ONLY and parameter.default is None


@pytest.mark.parametrize(
    "wrong", [3, np.random.default_rng(0), "g"], ids=["int", "numpy-generator", "str"]
)
@pytest.mark.parametrize("name", list(DRAWS))
def test_generator_of_another_kind_is_a_type_error(name, wrong):
    with pytest.raises(TypeError, match="generator must be a minigrad.Generator"):
        DRAWS[name](wrong)


def test_pytorch_raises_type_error_for_such_generators_too(real_torch):
    for wrong in (3, np.random.default_rng(0)):
        with pytest.raises(TypeError):
            real_torch.rand(2, generator=wrong)


def test_the_generator_device_must_match_the_draw():
    cuda = mg.Generator(device="cuda")
    assert cuda.device == "cuda"
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator"):
        mg.rand(3, generator=cuda)
    with pytest.raises(RuntimeError, match="'cpu' device type"):
        mg.zeros(2).normal_(generator=cuda)


@pytest.mark.parametrize(("device", "error"), [(3, TypeError), ("xyz", RuntimeError)])
def test_generator_device_errors(device, error):
    with pytest.raises(error, match="device"):
        mg.Generator(device=device)


def test_generator_device_none_is_the_cpu():
    assert mg.Generator(device=None).device == "cpu"
    assert mg.Generator(mg.device("cpu")).device == "cpu"


# =========================================================================== randint_like


@pytest.mark.parametrize(
    ("dtype", "args"),
    [("float32", (10,)), ("float64", (3, 10)), ("int32", (5,)), ("int64", (-4, 4))],
)
def test_randint_like_dtype_and_range_as_pytorch(real_torch, dtype, args):
    mine = mg.randint_like(mg.zeros(50, dtype=getattr(mg, dtype)), *args)
    theirs = real_torch.randint_like(real_torch.zeros(50, dtype=getattr(real_torch, dtype)), *args)
    assert str(mine.dtype) == str(theirs.dtype).removeprefix("torch.")
    low, high = (0, args[0]) if len(args) == 1 else args
    drawn = values(mine)
    assert drawn.min() >= low and drawn.max() < high and np.all(drawn == np.round(drawn))


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda torch: torch.randint_like(torch.zeros(2), 5, 2), RuntimeError),
        (lambda torch: torch.randint_like(torch.zeros(2, dtype=torch.uint8), 300), RuntimeError),
    ],
    ids=["low >= high", "out of the dtype"],
)
def test_randint_like_errors_as_pytorch(real_torch, make, error):
    with pytest.raises(error):
        make(real_torch)
    with pytest.raises(error, match="randint_like"):
        make(mg)


def test_randint_like_without_torch():
    x = mg.zeros(3, 4, dtype=mg.int32)
    drawn = mg.randint_like(x, 2, 6, generator=mg.Generator().manual_seed(0))
    assert drawn.shape == (3, 4) and drawn.dtype == np.int32
    assert values(drawn).min() >= 2 and values(drawn).max() < 6
    with pytest.raises(RuntimeError, match="low < high"):
        mg.randint_like(x, 5, 5)


# =========================================================================== bernoulli


def test_bernoulli_draws_zeros_and_ones_with_the_chances_given():
    g = mg.Generator().manual_seed(0)
    chances = mg.tensor([0.0, 1.0, 0.25], dtype=mg.float32).expand(4000, 3)
    drawn = mg.bernoulli(chances, generator=g)
    assert drawn.dtype == np.float32 and drawn.shape == (4000, 3)
    assert set(np.unique(values(drawn))) <= {0.0, 1.0}
    np.testing.assert_allclose(values(drawn).mean(axis=0), [0.0, 1.0, 0.25], atol=0.03)
    filled = mg.zeros(4000, dtype=mg.int64).bernoulli_(0.75, generator=g)
    assert filled.dtype == np.int64 and abs(values(filled).mean() - 0.75) < 0.03
    assert mg.tensor([0.5, 0.5]).bernoulli().shape == (2,)


def test_bernoulli_has_a_zero_gradient_as_in_pytorch(real_torch):
    theirs = real_torch.full((3,), 0.5, requires_grad=True)
    real_torch.bernoulli(theirs).sum().backward()
    mine = mg.full((3,), 0.5, requires_grad=True)
    drawn = mg.bernoulli(mine)
    assert drawn.requires_grad
    drawn.sum().backward()
    np.testing.assert_array_equal(values(mine.grad), theirs.grad.numpy())


BERNOULLI_ERRORS = [
    ("a chance above 1", lambda t: t.bernoulli(t.tensor([0.5, 1.5])), RuntimeError),
    ("a NaN chance", lambda t: t.bernoulli(t.tensor([float("nan")])), RuntimeError),
    ("integer chances", lambda t: t.bernoulli(t.tensor([1, 0])), NotImplementedError),
    ("p above 1", lambda t: t.bernoulli(t.zeros(2), 2.0), RuntimeError),
    ("bernoulli_ p below 0", lambda t: t.zeros(2).bernoulli_(-0.5), RuntimeError),
]


@pytest.mark.parametrize(("label", "make", "error"), BERNOULLI_ERRORS,
                         ids=[case[0] for case in BERNOULLI_ERRORS])
def test_bernoulli_errors(label, make, error):
    with pytest.raises(error, match="bernoulli"):
        make(mg)


@pytest.mark.parametrize(("label", "make", "error"), BERNOULLI_ERRORS,
                         ids=[case[0] for case in BERNOULLI_ERRORS])
def test_bernoulli_error_classes_equal_torchs(real_torch, label, make, error):
    with pytest.raises(error):
        make(real_torch)


# =========================================================================== minigrad.compile


def _twin_runs(body, calls: int = 8) -> tuple[list, list, object]:
    """body(g, model, opt, x) -> loss, run eagerly and compiled from the same seeds."""
    results = []
    for compiled in (False, True):
        mg.manual_seed(0)
        g = mg.Generator().manual_seed(3)
        model = nn.Linear(4, 2)
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x, g=g, model=model, opt=opt):
            return body(g, model, opt, x)

        if compiled:
            step = mg.compile(step)
        x = mg.randn(8, 4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompileFallbackWarning)
            losses = [values(step(x)) for _ in range(calls)]
        after = [values(mg.rand(2, generator=g)), values(mg.rand(2))]
        results.append((losses, after, step))
    (eager, eager_after, _), (replayed, replayed_after, step) = results
    for a, b in zip(eager + eager_after, replayed + replayed_after):
        np.testing.assert_array_equal(a, b)
    return eager, replayed, step


def _noise_from_g(g, model, opt, x):
    opt.zero_grad()
    noisy = x + mg.randn(8, 4, generator=g) * 0.1 + mg.rand_like(x, generator=g)
    loss = (model(noisy) ** 2).mean() + mg.randn(1).sum() * 0
    loss.backward()
    opt.step()
    return loss.detach()


def _bernoulli_masks_from_g(g, model, opt, x):
    opt.zero_grad()
    mask = mg.bernoulli(mg.sigmoid(x), generator=g)
    keep = mg.zeros(8, 4).bernoulli_(0.7, generator=g)
    loss = (model(x * mask * keep) ** 2).mean()
    loss.backward()
    opt.step()
    return loss.detach()


def _seeds_g_in_the_step(g, model, opt, x):
    g.manual_seed(11)
    opt.zero_grad()
    loss = (model(x * mg.rand(8, 4, generator=g) + mg.randn(8, 4)) ** 2).mean()
    loss.backward()
    opt.step()
    return loss.detach()


@pytest.mark.parametrize("body", [_noise_from_g, _bernoulli_masks_from_g],
                         ids=["randn and rand_like", "bernoulli and bernoulli_"])
def test_a_compiled_step_drawing_from_a_generator_replays_its_draws(body):
    """Each replay draws again from g (the Generator object, read at each call): the same
    numbers as the eager step, call after call, and g's stream ends where eager's does."""
    eager, replayed, step = _twin_runs(body)
    assert step.replays >= 5, step.explain()
    assert len({a.tobytes() for a in eager}) == len(eager)  # new noise on every call


def test_a_compiled_step_that_seeds_its_generator_replays_the_seeding():
    eager, replayed, step = _twin_runs(_seeds_g_in_the_step)
    assert step.replays >= 5, step.explain()


def test_multinomial_from_a_generator_keeps_the_step_eager_and_says_why():
    def body(g, model, opt, x):
        opt.zero_grad()
        rows = mg.multinomial(mg.ones(8), 8, generator=g)
        loss = (model(x[rows]) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.detach()

    _, _, step = _twin_runs(body)
    assert step.replays == 0
    assert "multinomial() draws from a minigrad.Generator" in step.explain()


@pytest.mark.parametrize("method", ["get_state", "seed"])
def test_generator_state_and_seed_in_a_compiled_step_keep_it_eager(method):
    g = mg.Generator()
    model = nn.Linear(4, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        getattr(g, method)()
        opt.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.detach()

    step = mg.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        for _ in range(4):
            step(mg.randn(8, 4))
    assert step.replays == 0 and f"Generator.{method}()" in step.explain()


def test_a_generator_made_inside_a_compiled_step_keeps_it_eager_and_says_why():
    model = nn.Linear(4, 2)

    def step(x):
        g = mg.Generator().manual_seed(5)
        return (model(x + mg.randn(8, 4, generator=g)) ** 2).mean().detach()

    compiled = mg.compile(step)
    x = mg.randn(8, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        got = [values(compiled(x)) for _ in range(4)]
    assert all(np.array_equal(value, values(step(x))) for value in got)
    assert compiled.replays == 0
    assert "Generator made inside the step" in compiled.explain()


# =========================================================================== exports


def test_generator_is_exported_under_pytorchs_names():
    assert "Generator" in mg.__all__ and "randint_like" in mg.__all__
    assert mg.Generator is __import__("minigrad.generator").generator.Generator
