"""Recurrent layers: RNN, LSTM and GRU over whole sequences, and their one-step cells.

RNN, GRU and the three cells are composed from minigrad's ordinary differentiable ops
(matmul, sigmoid, tanh, relu, cat, stack and slicing): the Python loop over time steps
unrolls into an ordinary graph, so backpropagation through time (BPTT) is just the
engine's backward through that unrolled graph, and minigrad.compile traces it as it traces
any other step. The LSTM layer is the exception: each layer and direction is one
Function, LSTMLayer (nn/_functions/lstm.py), whose backward is BPTT written out, the cell
gradients of lesson 16's exercise run backwards over the steps; before it, one matmul
projects every step's input at once. It exists for speed: composed, an LSTM step costs
14 operations, each paying the engine's fixed cost forward and backward, where PyTorch
runs one fused kernel per layer (benchmarks/rnn.py). It gives the same numbers as the
composed step (tests/test_lstm_layer.py).

Parameters, their names and shapes, their initialisation (U(-1/√hidden, 1/√hidden)), the
gate order (LSTM: i, f, g, o; GRU: r, z, n), inputs, outputs and errors are PyTorch's.
The composed steps keep their operation count down without changing what is computed:

- one matmul per step: [x_t, h] @ [W_ih | W_hh]ᵀ = x_t W_ihᵀ + h W_hhᵀ (RNN and the
  LSTMCell; the GRU needs W_hh h apart, because r multiplies W_hn h + b_hn alone);
- one sigmoid over all the gates, then slices (the g block's sigmoid goes unused);
- the input is split into steps once and the output stacked once; in between, each layer
  hands its steps to the next as a list. (Each slice's backward fills an array the size
  of what it was cut from, so splitting a stacked sequence at every layer again would
  cost a whole sequence per step per layer, where an input that requires grad costs it
  once.)
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from minigrad import factories
from minigrad.core.checks import check_flag
from minigrad.core.variable import Parameter, Variable
from minigrad.nn import functional as F
from minigrad.nn import init
from minigrad.nn._functions import LSTMLayer
from minigrad.nn.linear import bias_flag
from minigrad.nn.module import Module
from minigrad.ops.shape import cat, stack

# Gate blocks in each weight: the rows of W_ih and W_hh are these blocks, in this order.
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_NONLINEARITIES = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}

# --------------------------------------------------------------------------- one step
#
# x is one time step, (N, H_in) or unbatched (H_in,); h and c are (N, H) or (H,).
# `weights` is what _arranged() made of one layer's parameters, once per forward.


def _arranged(mode: str, parameters: list) -> tuple:
    """One layer's parameters, [w_ih, w_hh] or [w_ih, w_hh, b_ih, b_hh], arranged for its
    time loop once per forward.

    RNN, LSTM: ([W_ih | W_hh]ᵀ of shape (H_in + H, G·H), b_ih + b_hh), so that one matmul
    per step makes all gates: [x_t, h] [W_ih | W_hh]ᵀ = x_t W_ihᵀ + h W_hhᵀ. GRU: (W_ihᵀ,
    W_hhᵀ, b_ih, b_hh), kept apart because r multiplies h W_hnᵀ + b_hn alone.
    """
    w_ih, w_hh, b_ih, b_hh = parameters if len(parameters) == 4 else (*parameters, None, None)
    if mode == "GRU":
        return w_ih.T, w_hh.T, b_ih, b_hh
    return cat([w_ih, w_hh], 1).T, None if b_ih is None else b_ih + b_hh


def _affine(x: Variable, weight: Variable, bias: Any) -> Variable:
    """x @ weight + bias (no bias when None)."""
    y = x @ weight
    return y if bias is None else y + bias


def _block(gates: Variable, k: int, count: int) -> Variable:
    """Block k of the `count` equal blocks of the last dim: (N, count·H) → (N, H)."""
    size = gates.shape[-1] // count
    return gates[..., k * size : (k + 1) * size]


def _step(mode: str, x: Variable, state: tuple, weights: tuple) -> tuple:
    """One time step of one layer: the new state, (h,) or (h, c) for the LSTM."""
    if mode == "GRU":
        return (_gru_step(x, state[0], *weights),)
    gates = _affine(cat([x, state[0]], -1), *weights)  # x W_ihᵀ + h W_hhᵀ + b_ih + b_hh
    if mode == "RNN_TANH":
        return (gates.tanh(),)
    if mode == "RNN_RELU":
        return (gates.relu(),)
    # σ of all four blocks at once: one operation instead of three (g's share is unused).
    sigmoids = gates.sigmoid()
    i, f, o = (_block(sigmoids, k, 4) for k in (0, 1, 3))
    c = f * state[1] + i * _block(gates, 2, 4).tanh()  # c' = f ⊙ c + i ⊙ g
    return o * c.tanh(), c  # h' = o ⊙ tanh(c')


def _gru_step(
    x: Variable, h: Variable, w_ih_t: Variable, w_hh_t: Variable, b_ih: Any, b_hh: Any
) -> Variable:
    """h' = (1 - z) ⊙ n + z ⊙ h with r, z = σ(x W_iᵀ + b_i + h W_hᵀ + b_h) and
    n = tanh(x W_inᵀ + b_in + r ⊙ (h W_hnᵀ + b_hn))."""
    x_gates, h_gates = _affine(x, w_ih_t, b_ih), _affine(h, w_hh_t, b_hh)
    # σ over all three blocks at once (n's share is unused): r and z in one operation.
    sigmoids = (x_gates + h_gates).sigmoid()
    r, z = _block(sigmoids, 0, 3), _block(sigmoids, 1, 3)
    # r scales h W_hnᵀ + b_hn, bias included, as in PyTorch (and cuDNN).
    n = (_block(x_gates, 2, 3) + r * _block(h_gates, 2, 3)).tanh()
    return n + z * (h - n)  # = (1 - z) ⊙ n + z ⊙ h, one operation fewer


# --------------------------------------------------------------------------- argument checks


def _int(value: Any, name: str, layer: str) -> int:
    """value as an int (NumPy's integers too), or a TypeError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{layer}: {name} should be of type int, got: {type(value).__name__} ({value!r})."
        )
    return int(value)


def _positive(value: Any, name: str, layer: str) -> int:
    """An int > 0, else TypeError (kind) or ValueError (value), as PyTorch's RNNs check."""
    value = _int(value, name, layer)
    if value <= 0:
        raise ValueError(f"{layer}: {name} must be greater than zero; got {value}.")
    return value


def _dropout(value: Any, layer: str) -> float:
    """A probability in [0, 1]: TypeError for what float() refuses (PyTorch reads
    float(dropout) first), ValueError for anything else that is not one."""
    if not isinstance(value, (numbers.Real, str, bytes)):
        raise TypeError(
            f"{layer}: dropout should be a number in range [0, 1] representing the "
            f"probability of an element being zeroed; got {type(value).__name__} {value!r}."
        )
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
        raise ValueError(
            f"{layer}: dropout should be a number in range [0, 1] representing the "
            f"probability of an element being zeroed; got {value!r}."
        )
    return float(value)


def _parameter_settings(dtype: Any, device: Any, layer: str) -> None:
    """dtype and device checked as the factories check them, and a floating dtype:
    parameters require grad (a RuntimeError, PyTorch's class)."""
    if factories.empty(0, dtype=dtype, device=device).dtype.kind != "f":
        raise RuntimeError(
            f"{layer}: only floating point dtypes can hold parameters (they require grad); "
            f"got dtype={dtype!r}. Use minigrad.float32 or minigrad.float64."
        )


def _nonlinearity(value: Any) -> str:
    """'tanh' or 'relu' as RNN's mode, else PyTorch's ValueError."""
    if not isinstance(value, str) or value not in _NONLINEARITIES:
        raise ValueError(f"Unknown nonlinearity {value!r}. Select from 'tanh' or 'relu'.")
    return _NONLINEARITIES[value]


def _variable(value: Any, what: str, layer: str) -> None:
    """A TypeError unless value is a numeric Variable."""
    if not isinstance(value, Variable) or value.is_text:
        got = "a text Variable" if isinstance(value, Variable) else type(value).__name__
        raise TypeError(
            f"{layer} expects {what} as a numeric Variable; got {got}. Make one with "
            f"minigrad.tensor(...)."
        )


def _floating(value: Variable, what: str, layer: str, error: type[Exception]) -> None:
    """`error` (the class PyTorch raises there) unless value is floating point. float32
    and float64 may mix: the ops promote, as Linear's do."""
    if value.dtype.kind != "f":
        raise error(
            f"{layer}: {what} must be floating point (float32 or float64) like the weights; "
            f"got dtype {value.dtype}. Convert it: x.float() or x.double()."
        )


def _pair(hx: Any, layer: str, names: str, shape: str) -> tuple[Any, Any]:
    """An LSTM's (h, c), or (None, None) for hx=None; a TypeError for one Variable."""
    if hx is None:
        return None, None
    if not isinstance(hx, (tuple, list)):
        raise TypeError(
            f"{layer} expects hx as a tuple {names} of two Variables, each {shape}; got "
            f"{type(hx).__name__}."
        )
    if len(hx) != 2:
        raise RuntimeError(
            f"{layer} expects two hidden states {names}; got a {type(hx).__name__} of "
            f"{len(hx)}."
        )
    return hx[0], hx[1]


def _shape(value: Variable) -> str:
    return str(tuple(value.shape))


# --------------------------------------------------------------------------- RNN, LSTM, GRU


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters of every layer and direction, the
    argument checks, and the loop over layers, directions and time steps.

    x (L, N, H_in) (or (N, L, H_in) with batch_first, or unbatched (L, H_in)) →
    output (L, N, D·H) with the last layer's h_t of each step, and the final states
    (num_layers·D, N, H); D = 2 when bidirectional.
    """

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if not isinstance(mode, str) or mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode!r}; expected one of {list(_GATES)}.")
        layer = mode if mode in ("LSTM", "GRU") else "RNN"
        dropout = _dropout(dropout, layer)
        self.bias = check_flag(bias, "bias", layer)
        self.batch_first = check_flag(batch_first, "batch_first", layer)
        self.bidirectional = check_flag(bidirectional, "bidirectional", layer)
        self.input_size = _positive(input_size, "input_size", layer)
        self.hidden_size = _positive(hidden_size, "hidden_size", layer)
        self.num_layers = _positive(num_layers, "num_layers", layer)
        proj_size = _int(proj_size, "proj_size", layer)
        if proj_size < 0:
            raise ValueError(
                f"{layer}: proj_size should be a positive integer or zero to disable "
                f"projections; got {proj_size}."
            )
        if proj_size >= self.hidden_size:
            raise ValueError(
                f"{layer}: proj_size has to be smaller than hidden_size; got proj_size="
                f"{proj_size} and hidden_size={self.hidden_size}."
            )
        _parameter_settings(dtype, device, layer)
        if proj_size:
            raise NotImplementedError(
                f"LSTM(proj_size={proj_size}) is not supported by minigrad: LSTMs with "
                f"projections are not implemented. Use proj_size=0 and a Linear on the "
                f"output (nn.Linear({self.hidden_size}, {proj_size})) if you need the smaller "
                f"size."
            )
        if dropout > 0 and self.num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                stacklevel=3,
            )
        self.mode = mode
        self.dropout = dropout
        self.proj_size = proj_size
        gate_size = _GATES[mode] * self.hidden_size
        directions = 2 if self.bidirectional else 1
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for index in range(self.num_layers):
            for direction in range(directions):
                fan_in = self.input_size if index == 0 else self.hidden_size * directions
                shapes = [(gate_size, fan_in), (gate_size, self.hidden_size)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if self.bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                suffix = "_reverse" if direction == 1 else ""
                names = [name.format(index, suffix) for name in names]
                for name, shape in zip(names, shapes):
                    weight = factories.empty(*shape, dtype=dtype, device=device)
                    setattr(self, name, Parameter(weight))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias ~ U(-1/√hidden_size, 1/√hidden_size), as in PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters of each layer and direction, in order: [[w_ih, w_hh, b_ih, b_hh],
        ...]."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Does nothing: PyTorch packs the weights into one buffer for cuDNN here."""

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            text += f", bidirectional={self.bidirectional}"
        return text

    # ----------------------------------------------------------------------- forward

    def _run(self, x: Variable, states: list[tuple]) -> tuple[Variable, list[tuple]]:
        """The stacked layers over x (checked); states holds the initial state of each
        layer and direction. Returns the output and the final states, in that order."""
        time_dim = 1 if self.batch_first and x.ndim == 3 else 0
        if self.mode == "LSTM":
            return self._run_lstm(x, states, time_dim)
        steps = list(x.unbind(time_dim))
        directions = 2 if self.bidirectional else 1
        finals = []
        for index in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                position = index * directions + direction  # in _all_weights, states, h_n
                parameters = [getattr(self, name) for name in self._all_weights[position]]
                weights = _arranged(self.mode, parameters)
                state = states[position]
                hidden: list[Any] = [None] * len(steps)
                # The reverse direction reads the sequence from its end; its h_t sits at
                # position t, beside the forward direction's.
                order = range(len(steps) - 1, -1, -1) if direction else range(len(steps))
                for t in order:
                    state = _step(self.mode, steps[t], state, weights)
                    hidden[t] = state[0]
                outputs.append(hidden)
                finals.append(state)
            steps = outputs[0] if directions == 1 else [cat(pair, -1) for pair in zip(*outputs)]
            if self.dropout and self.training and index < self.num_layers - 1:
                steps = [F.dropout(step, self.dropout, True) for step in steps]
        return stack(steps, time_dim), finals

    def _run_lstm(
        self, x: Variable, states: list[tuple], time_dim: int
    ) -> tuple[Variable, list[tuple]]:
        """_run for the LSTM: each layer and direction is one LSTMLayer over the whole
        sequence (time first), after one matmul that projects every step's input at once."""
        sequence = x.transpose(0, 1) if time_dim else x
        directions = 2 if self.bidirectional else 1
        finals = []
        for index in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                position = index * directions + direction  # in _all_weights, states, h_n
                w_ih, w_hh, *biases = (getattr(self, name) for name in self._all_weights[position])
                projected = sequence @ w_ih.T
                if biases:
                    projected = projected + (biases[0] + biases[1])
                h0, c0 = states[position]
                hs, h, c, _, _ = LSTMLayer.apply(projected, h0, c0, w_hh, direction == 1)
                outputs.append(hs)
                finals.append((h, c))
            sequence = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and index < self.num_layers - 1:
                sequence = F.dropout(sequence, self.dropout, True)
        return (sequence.transpose(0, 1) if time_dim else sequence), finals

    def _layout(self) -> str:
        if self.batch_first:
            return "(batch, seq_len, input_size), as batch_first=True"
        return "(seq_len, batch, input_size), as batch_first=False"

    def _checked_input(self, x: Any) -> Variable:
        """x as PyTorch checks it: (L, N, H_in), (N, L, H_in) with batch_first, or (L, H_in)."""
        layer = type(self).__name__
        _variable(x, "the input", layer)
        if x.ndim not in (2, 3):
            raise ValueError(
                f"{layer}: Expected input to be 2D or 3D, got {x.ndim}D tensor instead (shape "
                f"{_shape(x)}); expected {self._layout()}, or (seq_len, input_size) for one "
                f"unbatched sequence."
            )
        _floating(x, "the input", layer, ValueError)
        if x.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                f"{x.shape[-1]} (input of shape {_shape(x)}): the features come last, "
                f"{self._layout() if x.ndim == 3 else '(seq_len, input_size)'}."
            )
        if x.shape[1 if self.batch_first and x.ndim == 3 else 0] == 0:
            raise RuntimeError(
                f"Expected sequence length to be larger than 0 in RNN; got input of shape "
                f"{_shape(x)}, read {self._layout()}."
            )
        return x

    def _initial(self, x: Variable, hx: Any, what: str, label: str) -> list[tuple]:
        """The initial `what` (hx, h_0 or c_0) of each layer and direction, as 1-tuples:
        zeros when hx is None, else hx checked against PyTorch's shape and split."""
        layer = type(self).__name__
        count = self.num_layers * (2 if self.bidirectional else 1)
        batch = () if x.ndim == 2 else (x.shape[0] if self.batch_first else x.shape[1],)
        if hx is None:
            dtype = np.result_type(x.dtype, self.weight_ih_l0.dtype)
            zeros = factories.zeros(*batch, self.hidden_size, dtype=dtype, device=x.device)
            return [(zeros,)] * count
        _variable(hx, what, layer)
        _floating(hx, what, layer, RuntimeError)
        layout = f"(num_layers * num_directions, {'batch, ' if batch else ''}hidden_size)"
        if hx.ndim != x.ndim:
            kind = "batched 3-D" if batch else "unbatched 2-D"
            raise RuntimeError(
                f"For {kind} input, {what} should also be {x.ndim}-D but got {hx.ndim}-D "
                f"tensor: {what} is {layout}; got shape {_shape(hx)} for an input of shape "
                f"{_shape(x)}."
            )
        expected = (count, *batch, self.hidden_size)
        if tuple(hx.shape) != expected:
            raise RuntimeError(
                f"Expected {label} size {expected}, got {list(hx.shape)}: {what} is {layout} "
                f"for an input of shape {_shape(x)}{self._batch_hint(x, hx)}."
            )
        return [(part,) for part in hx.unbind(0)]

    def _batch_hint(self, x: Variable, hx: Variable) -> str:
        """What batch_first would change, when the state's batch is the input's other dim."""
        if x.ndim != 3:
            return ""
        batch, other = (x.shape[0], x.shape[1]) if self.batch_first else (x.shape[1], x.shape[0])
        if hx.shape[1] == batch or hx.shape[1] != other:
            return ""
        flipped = "(seq_len, batch, input_size)" if self.batch_first else (
            "(batch, seq_len, input_size)"
        )
        return (
            f", read {self._layout()}, so its batch is {batch}; the state's batch, {other}, is "
            f"the input's other dim: if the input is {flipped}, build the layer with "
            f"batch_first={not self.batch_first}"
        )

    def _forward_one_state(self, x: Any, hx: Any) -> tuple[Variable, Variable]:
        """RNN's and GRU's forward: one state h."""
        x = self._checked_input(x)
        if isinstance(hx, (tuple, list)):
            raise TypeError(
                f"{type(self).__name__} expects hx as one Variable h_0 of shape (num_layers * "
                f"num_directions, batch, hidden_size); got a {type(hx).__name__} (a (h_0, c_0) "
                f"pair is what an LSTM takes)."
            )
        output, finals = self._run(x, self._initial(x, hx, "hx", "hidden"))
        return output, stack([state[0] for state in finals], 0)


class RNN(RNNBase):
    """h_t = tanh(x_t W_ihᵀ + b_ih + h_(t-1) W_hhᵀ + b_hh) (or relu), per layer:
    x (L, N, H_in) → (output (L, N, D·H), h_n (num_layers·D, N, H))."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        mode = _nonlinearity(nonlinearity)  # checked first, as in PyTorch
        super().__init__(
            mode, input_size, hidden_size, num_layers, bias,
            batch_first, dropout, bidirectional, 0, device, dtype,
        )
        self.nonlinearity = nonlinearity

    def forward(self, x: Variable, hx: Variable | None = None) -> tuple[Variable, Variable]:
        return self._forward_one_state(x, hx)


class GRU(RNNBase):
    """Gated recurrent unit: r, z = σ(x W_iᵀ + b_i + h W_hᵀ + b_h), n = tanh(x W_inᵀ + b_in
    + r ⊙ (h W_hnᵀ + b_hn)), h' = (1 - z) ⊙ n + z ⊙ h; shapes as RNN's."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            "GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, 0, device, dtype,
        )

    def forward(self, x: Variable, hx: Variable | None = None) -> tuple[Variable, Variable]:
        return self._forward_one_state(x, hx)


class LSTM(RNNBase):
    """Long short-term memory: i, f, o = σ(...), g = tanh(...) from x W_ihᵀ + b_ih + h W_hhᵀ
    + b_hh, c' = f ⊙ c + i ⊙ g, h' = o ⊙ tanh(c'): x (L, N, H_in) → (output (L, N, D·H),
    (h_n, c_n) each (num_layers·D, N, H))."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            "LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
            bidirectional, proj_size, device, dtype,
        )

    def forward(
        self, x: Variable, hx: tuple[Variable, Variable] | None = None
    ) -> tuple[Variable, tuple[Variable, Variable]]:
        x = self._checked_input(x)
        shape = "(num_layers * num_directions, batch, hidden_size)"
        h0, c0 = _pair(hx, "LSTM", "(h_0, c_0)", shape)
        if hx is not None:
            _variable(h0, "hx", "LSTM")
            _variable(c0, "cx", "LSTM")
            if h0.ndim != x.ndim or c0.ndim != x.ndim:
                kind = "batched 3-D" if x.ndim == 3 else "unbatched 2-D"
                raise RuntimeError(
                    f"For {kind} input, hx and cx should also be {x.ndim}-D but got "
                    f"({h0.ndim}-D, {c0.ndim}-D) tensors (shapes {_shape(h0)} and "
                    f"{_shape(c0)} for an input of shape {_shape(x)})."
                )
        hs = self._initial(x, h0, "h_0", "hidden[0]")
        cs = self._initial(x, c0, "c_0", "hidden[1]")
        output, finals = self._run(x, [(h, c) for (h,), (c,) in zip(hs, cs)])
        h_n = stack([state[0] for state in finals], 0)
        c_n = stack([state[1] for state in finals], 0)
        return output, (h_n, c_n)


# --------------------------------------------------------------------------- the cells


class RNNCellBase(Module):
    """What the cells share: weight_ih (G·H, H_in), weight_hh (G·H, H), bias_ih and bias_hh
    (G·H,), G gate blocks, all ~ U(-1/√hidden_size, 1/√hidden_size)."""

    mode = "RNN_TANH"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        layer = type(self).__name__
        # Every kind first, then the values, as PyTorch's torch.empty reads its arguments.
        sizes = {"input_size": _int(input_size, "input_size", layer),
                 "hidden_size": _int(hidden_size, "hidden_size", layer)}  # fmt: skip
        self.bias = bias_flag(bias, layer)  # a cell takes None too; a multi-layer RNN does not
        _parameter_settings(dtype, device, layer)
        for name, size in sizes.items():
            if size < 0:  # RuntimeError, PyTorch's "negative dimension" class
                raise RuntimeError(f"{layer}: {name} must be an int >= 0; got {size}.")
        self.input_size, self.hidden_size = sizes["input_size"], sizes["hidden_size"]
        rows = num_chunks * self.hidden_size
        settings = {"dtype": dtype, "device": device}
        self.weight_ih = Parameter(factories.empty(rows, self.input_size, **settings))
        self.weight_hh = Parameter(factories.empty(rows, self.hidden_size, **settings))
        if self.bias:
            self.bias_ih = Parameter(factories.empty(rows, **settings))
            self.bias_hh = Parameter(factories.empty(rows, **settings))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias ~ U(-1/√hidden_size, 1/√hidden_size), as in PyTorch."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            text += f", nonlinearity={self.nonlinearity}"
        return text

    def _checked(self, x: Any, states: tuple) -> tuple[Variable, tuple]:
        """x and the states (None: zeros) checked as PyTorch checks a cell's: (N, H_in)
        with (N, H) states, or unbatched (H_in,) with (H,) states."""
        layer = type(self).__name__
        _variable(x, "the input", layer)
        if x.ndim not in (1, 2):
            raise ValueError(
                f"{layer}: Expected input to be 1D or 2D, got {x.ndim}D instead (shape "
                f"{_shape(x)}): a cell takes one time step, (batch, input_size) or "
                f"(input_size,); for a whole sequence use the layer (nn.RNN, nn.LSTM, nn.GRU)."
            )
        _floating(x, "the input", layer, RuntimeError)
        if x.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {x.shape[-1]} expected "
                f"{self.input_size} ({layer}({self.input_size}, {self.hidden_size}) got input "
                f"of shape {_shape(x)}; features last)."
            )
        dtype = np.result_type(x.dtype, self.weight_ih.dtype)
        checked = []
        for index, state in enumerate(states):
            if state is None:
                zeros = factories.zeros(*x.shape[:-1], self.hidden_size, dtype=dtype,
                                        device=x.device)
                checked.append(zeros)
                continue
            what = "hidden" if len(states) == 1 else f"hx[{index}]"
            _variable(state, what, layer)
            _floating(state, what, layer, RuntimeError)
            if state.ndim not in (1, 2):
                raise ValueError(
                    f"{layer}: Expected {what} to be 1D or 2D, got {state.ndim}D instead "
                    f"(shape {_shape(state)})."
                )
            if state.ndim != x.ndim:
                kind = "batched 2-D" if x.ndim == 2 else "unbatched 1-D"
                raise RuntimeError(
                    f"For {kind} input, {what} should also be {x.ndim}-D but got "
                    f"{state.ndim}-D tensor (shape {_shape(state)} for an input of shape "
                    f"{_shape(x)})."
                )
            if x.ndim == 2 and state.shape[0] != x.shape[0]:
                raise RuntimeError(
                    f"Input batch size {x.shape[0]} doesn't match hidden{index} batch size "
                    f"{state.shape[0]} (input {_shape(x)}, {what} {_shape(state)})."
                )
            if state.shape[-1] != self.hidden_size:
                raise RuntimeError(
                    f"hidden{index} has inconsistent hidden_size: got {state.shape[-1]}, "
                    f"expected {self.hidden_size} ({what} of shape {_shape(state)})."
                )
            checked.append(state)
        return x, tuple(checked)

    def _weights(self) -> tuple:
        parameters = [self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh]
        return _arranged(self.mode, parameters if self.bias else parameters[:2])


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh) (or relu): x (N, H_in), h (N, H) → (N, H)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        # PyTorch accepts a wrong one here and fails at the first call; saying so now is
        # kinder (after the checks above, so that a wrong kind still raises TypeError).
        self.mode = _nonlinearity(nonlinearity)
        self.nonlinearity = nonlinearity

    def forward(self, x: Variable, hx: Variable | None = None) -> Variable:
        x, (h,) = self._checked(x, (hx,))
        return _step(self.mode, x, (h,), self._weights())[0]


class LSTMCell(RNNCellBase):
    """One LSTM step: (x (N, H_in), (h, c) each (N, H)) → (h', c')."""

    mode = "LSTM"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(
        self, x: Variable, hx: tuple[Variable, Variable] | None = None
    ) -> tuple[Variable, Variable]:
        pair = _pair(hx, "LSTMCell", "(h, c)", "(batch, hidden_size)")
        x, state = self._checked(x, pair)
        return _step(self.mode, x, state, self._weights())


class GRUCell(RNNCellBase):
    """One GRU step: x (N, H_in), h (N, H) → h' (N, H); see GRU for the gates."""

    mode = "GRU"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, x: Variable, hx: Variable | None = None) -> Variable:
        x, (h,) = self._checked(x, (hx,))
        return _step(self.mode, x, (h,), self._weights())[0]
