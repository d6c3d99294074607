"""Recurrent layers: RNN, LSTM, GRU (multi-layer, bidirectional, packed sequences) and their cells.

Parameter names, shapes, registration order and initialisation
(U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))) follow PyTorch, so a PyTorch
state_dict loads unchanged. Gate order: LSTM i, f, g, o; GRU r, z, n with b_hn
inside r * (W_hn h + b_hn).

A layer-direction runs as:
  1. one linear for the whole sequence: xg = x @ W_ih^T + b_ih, x flattened
     time-major to [sum(batch_sizes), input] (a padded batch has batch_sizes
     [N] * T, a PackedSequence its own);
  2. the recurrence `_lstm_layer` / `_gru_layer` / `_rnn_layer`: only the
     h @ W_hh^T product and the gate arithmetic per step. Each is one function
     with a fixed signature, so a fused kernel can replace it.
Per-step inputs come from one split and the outputs go back with one concat
(slicing per step would make each step's gradient a full-size tensor).

That composition is the reference and the path for LSTM projections
(proj_size) and 16-bit floats. Otherwise a layer-direction is one call of the
fused catalog op `rnn_layer` (oneDNN's RNN primitives on the CPU, the rnn
kernel family on every device), over a padded [T, N, I] batch with per-sequence
lengths for a PackedSequence. `fused_kernels = False` here forces the
composition (tests compare the two). The fused op's backward is first-order
only (as PyTorch's cuDNN RNN): a gradient of a gradient through it (a
gradient penalty) raises NotImplementedError; the composition has them.
"""
import math
import numbers
import warnings

from .. import _C
from .._C import Tensor
from .._ops import ops
from .._creation import zeros
from . import functional as F
from . import init
from .layers import _new_param
from .module import Module
from .utils.rnn import PackedSequence, _index

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _split(x, sizes, dim=0):
    out = ops.split(x, sizes=list(sizes), dim=dim)
    return out if isinstance(out, (tuple, list)) else (out,)


# ---- one time step per cell type: xg = input projection (with b_ih) of this step ----
def _rnn_tanh_cell(xg, h, w_hh, b_hh):
    return ops.tanh(xg + F.linear(h, w_hh, b_hh))


def _rnn_relu_cell(xg, h, w_hh, b_hh):
    return ops.relu(xg + F.linear(h, w_hh, b_hh))


def _lstm_cell(xg, h, c, w_hh, b_hh, w_hr=None):
    gates = xg + F.linear(h, w_hh, b_hh)
    hs = c.shape[-1]
    i, f, g, o = _split(gates, (hs, hs, hs, hs), dim=-1)
    c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
    h = ops.sigmoid(o) * ops.tanh(c)
    if w_hr is not None:
        h = F.linear(h, w_hr)
    return h, c


def _gru_cell(xg, h, w_hh, b_hh):
    hs = h.shape[-1]
    gh = F.linear(h, w_hh, b_hh)
    xrz, xn = _split(xg, (2 * hs, hs), dim=-1)
    hrz, hn = _split(gh, (2 * hs, hs), dim=-1)
    r, z = _split(ops.sigmoid(xrz + hrz), (hs, hs), dim=-1)
    n = ops.tanh(xn + r * hn)
    return n + z * (h - n)  # (1 - z) * n + z * h


# ---- the time loop ----
def _scan(step, xg, batch_sizes, state, reverse):
    """Runs `step(x_t, *state) -> state` over time; state[0] is the step's output.

    xg: [sum(batch_sizes), G], time-major, batch_sizes non-increasing (a packed batch: at step t the
    first batch_sizes[t] sequences run). state: tuple of [batch_sizes[0], *] tensors. Returns
    (outputs [sum(batch_sizes), H_out] in time order, final state of every sequence)."""
    T = len(batch_sizes)
    xs = _split(xg, batch_sizes, dim=0)
    outs = [None] * T
    if batch_sizes[0] == batch_sizes[-1]:  # a padded batch: every sequence runs every step
        for t in (range(T - 1, -1, -1) if reverse else range(T)):
            state = step(xs[t], *state)
            outs[t] = state[0]
    elif not reverse:  # sequences drop out as they end; their final states are set aside
        ended, cur = [], batch_sizes[0]
        for t in range(T):
            bs = batch_sizes[t]
            if bs < cur:
                parts = [_split(s, (bs, cur - bs)) for s in state]
                state = tuple(p[0] for p in parts)
                ended.append(tuple(p[1] for p in parts))
                cur = bs
            state = step(xs[t], *state)
            outs[t] = state[0]
        state = tuple(ops.concat([s] + [e[k] for e in reversed(ended)], dim=0) for k, s in enumerate(state))
    else:  # backwards in time the batch grows: sequences join with their initial states
        sizes, prev = [], 0
        for bs in reversed(batch_sizes):
            if bs > prev:
                sizes.append(bs - prev)
                prev = bs
        init_parts = [_split(s, sizes) for s in state]
        state = tuple(p[0] for p in init_parts)
        j, cur = 1, sizes[0]
        for t in range(T - 1, -1, -1):
            bs = batch_sizes[t]
            if bs > cur:
                state = tuple(ops.concat([s, init_parts[k][j]], dim=0) for k, s in enumerate(state))
                j, cur = j + 1, bs
            state = step(xs[t], *state)
            outs[t] = state[0]
    return ops.concat(outs, dim=0), state


# ---- one layer-direction's recurrence per cell type (what a fused RNN kernel replaces) ----
def _rnn_layer(xg, batch_sizes, h0, w_hh, b_hh, reverse=False, nonlinearity="tanh"):
    """Elman RNN recurrence: returns (outputs [sum(batch_sizes), H], h_n [B, H])."""
    cell = _rnn_tanh_cell if nonlinearity == "tanh" else _rnn_relu_cell
    out, (h,) = _scan(lambda x, h: (cell(x, h, w_hh, b_hh),), xg, batch_sizes, (h0,), reverse)
    return out, h


def _lstm_layer(xg, batch_sizes, h0, c0, w_hh, b_hh, w_hr=None, reverse=False):
    """LSTM recurrence: returns (outputs [sum(batch_sizes), H_out], h_n [B, H_out], c_n [B, H])."""
    out, (h, c) = _scan(lambda x, h, c: _lstm_cell(x, h, c, w_hh, b_hh, w_hr), xg, batch_sizes, (h0, c0),
                        reverse)
    return out, h, c


def _gru_layer(xg, batch_sizes, h0, w_hh, b_hh, reverse=False):
    """GRU recurrence: returns (outputs [sum(batch_sizes), H], h_n [B, H])."""
    out, (h,) = _scan(lambda x, h: (_gru_cell(x, h, w_hh, b_hh),), xg, batch_sizes, (h0,), reverse)
    return out, h


_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}

fused_kernels = True  # False: every layer runs as the composition above


class _Padding:
    """Moves a time-major packed batch (data [sum(batch_sizes), *], batch_sizes non-increasing) to a padded
    [T, N, *] one and back, with the lengths [N] the fused op stops each sequence at."""

    def __init__(self, batch_sizes, device):
        T, N = len(batch_sizes), batch_sizes[0]
        self.T, self.N = T, N
        self.packed = batch_sizes[-1] != N
        if not self.packed:
            self.lengths = None
            return
        total = sum(batch_sizes)
        to_pad, to_packed, off = [], [], 0
        for t, bs in enumerate(batch_sizes):
            to_pad += [off + b if b < bs else total for b in range(N)]  # `total`: an appended zero row
            to_packed += [t * N + b for b in range(bs)]
            off += bs
        self.to_pad, self.to_packed = _index(to_pad, device), _index(to_packed, device)
        self.lengths = _index([sum(1 for bs in batch_sizes if bs > b) for b in range(N)], device)

    def pad(self, data):
        if not self.packed:
            return data.reshape(self.T, self.N, data.shape[-1])
        data = ops.concat([data, zeros(1, data.shape[-1], dtype=data.dtype, device=data.device)], dim=0)
        return ops.index_select(data, self.to_pad, dim=0).reshape(self.T, self.N, data.shape[-1])

    def unpad(self, x):
        x = x.reshape(self.T * self.N, x.shape[-1])
        return ops.index_select(x, self.to_packed, dim=0) if self.packed else x


def _check_int(name, v, minimum):
    if not isinstance(v, numbers.Integral) or isinstance(v, bool):
        raise TypeError(f"{name} should be of type int, got: {type(v).__name__}")
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")


class RNNBase(Module):
    """The shared multi-layer machinery of RNN, LSTM and GRU (mode 'RNN_TANH', 'RNN_RELU', 'LSTM', 'GRU')."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if mode not in _GATES:
            raise ValueError(f"Unrecognized RNN mode: {mode}")
        _check_int("input_size", input_size, 0)
        _check_int("hidden_size", hidden_size, 1)
        _check_int("num_layers", num_layers, 1)
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size = mode, int(input_size), int(hidden_size)
        self.num_layers, self.bias, self.batch_first = int(num_layers), bool(bias), bool(batch_first)
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bool(bidirectional), int(proj_size)
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * num_directions
            for direction in range(num_directions):
                sfx = "_reverse" if direction == 1 else ""
                shapes = [(f"weight_ih_l{layer}{sfx}", (gate_size, layer_input)),
                          (f"weight_hh_l{layer}{sfx}", (gate_size, real_hidden))]
                if bias:
                    shapes += [(f"bias_ih_l{layer}{sfx}", (gate_size,)), (f"bias_hh_l{layer}{sfx}", (gate_size,))]
                if proj_size > 0:
                    shapes.append((f"weight_hr_l{layer}{sfx}", (proj_size, hidden_size)))
                for name, shape in shapes:
                    setattr(self, name, _new_param(shape, device, dtype))
                self._flat_weights_names.extend(n for n, _ in shapes)
                self._all_weights.append([n for n, _ in shapes])
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """PyTorch compacts cuDNN weights here; oar's weights need nothing."""

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- forward ----
    def _state_sizes(self):
        """Sizes of the recurrent state tensors: (h,) or (h, c) for LSTM."""
        h = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (h, self.hidden_size) if self.mode == "LSTM" else (h,)

    def _run_layer(self, xg, batch_sizes, state, layer, direction):
        sfx = "_reverse" if direction == 1 else ""
        w_hh = getattr(self, f"weight_hh_l{layer}{sfx}")
        b_hh = getattr(self, f"bias_hh_l{layer}{sfx}") if self.bias else None
        rev = direction == 1
        if self.mode == "LSTM":
            w_hr = getattr(self, f"weight_hr_l{layer}{sfx}") if self.proj_size > 0 else None
            out, h, c = _lstm_layer(xg, batch_sizes, state[0], state[1], w_hh, b_hh, w_hr, rev)
            return out, (h, c)
        if self.mode == "GRU":
            out, h = _gru_layer(xg, batch_sizes, state[0], w_hh, b_hh, rev)
        else:
            out, h = _rnn_layer(xg, batch_sizes, state[0], w_hh, b_hh, rev,
                                "tanh" if self.mode == "RNN_TANH" else "relu")
        return out, (h,)

    def _check_hidden(self, hx, expected, name="hidden"):
        if tuple(hx.shape) != tuple(expected):
            raise RuntimeError(f"Expected {name} size {tuple(expected)}, got {list(hx.shape)}")

    def _fusable(self, data):
        return fused_kernels and self.proj_size == 0 and data.dtype in (_C.dtype.float32, _C.dtype.float64)

    def _run_fused(self, data, batch_sizes, init_states):
        """The layers as fused rnn_layer calls over a padded batch (see the module doc)."""
        D = 2 if self.bidirectional else 1
        padding = _Padding(batch_sizes, data.device)
        x = padding.pad(data)
        finals = [[] for _ in self._state_sizes()]
        for layer in range(self.num_layers):
            outs = []
            for d in range(D):
                sfx = "_reverse" if d == 1 else ""
                p = {k: getattr(self, f"{k}_l{layer}{sfx}") if self.bias or k.startswith("weight") else None
                     for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}
                state = init_states[layer * D + d]
                out, h, c = ops.rnn_layer(x, state[0], p["weight_ih"], p["weight_hh"],
                                          state[1] if self.mode == "LSTM" else None, p["bias_ih"], p["bias_hh"],
                                          padding.lengths, mode=self.mode, reverse=d == 1)
                outs.append(out)
                finals[0].append(h)
                if self.mode == "LSTM":
                    finals[1].append(c)
            x = outs[0] if D == 1 else ops.concat(outs, dim=-1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return padding.unpad(x), tuple(ops.stack(f, dim=0) for f in finals)

    def _run(self, data, batch_sizes, hx):
        """data [sum(batch_sizes), input_size]; hx: tuple of [L * D, B, *] or None.
        Returns (output data, tuple of [L * D, B, *] final states)."""
        D = 2 if self.bidirectional else 1
        B = batch_sizes[0]
        sizes = self._state_sizes()
        if hx is None:
            init_states = [[zeros(B, s, dtype=data.dtype, device=data.device) for s in sizes]
                           for _ in range(self.num_layers * D)]
        else:
            per_state = []
            for s in hx:
                parts = _split(s, [1] * s.shape[0], dim=0)
                per_state.append([p.reshape(p.shape[1], p.shape[2]) for p in parts])
            init_states = [[ps[k] for ps in per_state] for k in range(self.num_layers * D)]
        if self._fusable(data):
            return self._run_fused(data, batch_sizes, init_states)
        finals = [[] for _ in sizes]
        x = data
        for layer in range(self.num_layers):
            outs = []
            for d in range(D):
                sfx = "_reverse" if d == 1 else ""
                w_ih = getattr(self, f"weight_ih_l{layer}{sfx}")
                b_ih = getattr(self, f"bias_ih_l{layer}{sfx}") if self.bias else None
                xg = F.linear(x, w_ih, b_ih)
                out, state = self._run_layer(xg, batch_sizes, init_states[layer * D + d], layer, d)
                outs.append(out)
                for k, s in enumerate(state):
                    finals[k].append(s)
            x = outs[0] if D == 1 else ops.concat(outs, dim=-1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, tuple(ops.stack(f, dim=0) for f in finals)

    def forward(self, input, hx=None):
        is_lstm = self.mode == "LSTM"
        D = 2 if self.bidirectional else 1
        sizes = self._state_sizes()
        if hx is not None:
            if is_lstm:
                if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                    raise RuntimeError("LSTM: hx must be a tuple (h_0, c_0)")
                hx = tuple(hx)
            else:
                if not isinstance(hx, Tensor):
                    raise TypeError(f"{type(self).__name__}: hx must be a Tensor, got {type(hx).__name__}")
                hx = (hx,)
        if isinstance(input, PackedSequence):
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in batch_sizes_t.tolist()]
            self._check_input(data, 2)
            B = batch_sizes[0]
            if hx is not None:
                for s, size, name in zip(hx, sizes, ("hidden", "cell")):
                    self._check_hidden(s, (self.num_layers * D, B, size), name)
                if sorted_indices is not None:
                    hx = tuple(ops.index_select(s, sorted_indices, dim=1) for s in hx)
            out, hn = self._run(data, batch_sizes, hx)
            if unsorted_indices is not None:
                hn = tuple(ops.index_select(s, unsorted_indices, dim=1) for s in hn)
            output = PackedSequence(out, batch_sizes_t, sorted_indices, unsorted_indices)
            return output, (hn if is_lstm else hn[0])
        if not isinstance(input, Tensor):
            raise TypeError(f"{type(self).__name__}: input must be a Tensor or PackedSequence, got "
                            f"{type(input).__name__}")
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D instead")
        self._check_input(input, input.ndim)
        batched = input.ndim == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
            if hx is not None:
                for s in hx:
                    if s.ndim != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {s.ndim}-D "
                                           f"tensor")
                hx = tuple(s.unsqueeze(1) for s in hx)
        elif hx is not None:
            for s in hx:
                if s.ndim != 3:
                    raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {s.ndim}-D tensor")
        x = input.transpose(0, 1) if self.batch_first else input
        T, B = x.shape[0], x.shape[1]
        if hx is not None:
            for s, size, name in zip(hx, sizes, ("hidden", "cell")):
                self._check_hidden(s, (self.num_layers * D, B, size), name)
        if T == 0 or B == 0:
            raise ValueError(f"{type(self).__name__}: expected a non-empty input, got shape {tuple(input.shape)}")
        out, hn = self._run(x.reshape(T * B, x.shape[2]), [B] * T, hx)
        out = out.reshape(T, B, out.shape[-1])
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)
            hn = tuple(s.squeeze(1) for s in hn)
        return out, (hn if is_lstm else hn[0])

    def _check_input(self, x, ndim):
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {x.shape[-1]}")


def _no_proj(module, kwargs):
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"{type(module).__name__}.__init__() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu); returns (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _no_proj(self, kwargs)
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    def extra_repr(self):
        s = super().extra_repr()
        return s + (f", nonlinearity={self.nonlinearity}" if self.nonlinearity != "tanh" else "")


class LSTM(RNNBase):
    """LSTM (gates i, f, g, o), optionally with a projection of h (proj_size); returns
    (output, (h_n, c_n))."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)


class GRU(RNNBase):
    """GRU (gates r, z, n; n = tanh(W_in x + b_in + r * (W_hn h + b_hn))); returns (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, **kwargs):
        _no_proj(self, kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


# ---- cells ----
class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        _check_int("input_size", input_size, 0)
        _check_int("hidden_size", hidden_size, 1)
        self.input_size, self.hidden_size, self.bias = int(input_size), int(hidden_size), bool(bias)
        self.weight_ih = _new_param((num_chunks * hidden_size, input_size), device, dtype)
        self.weight_hh = _new_param((num_chunks * hidden_size, hidden_size), device, dtype)
        if bias:
            self.bias_ih = _new_param((num_chunks * hidden_size,), device, dtype)
            self.bias_hh = _new_param((num_chunks * hidden_size,), device, dtype)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, hx, n_states):
        """(input projection [N, G], states [N, H] each, batched flag)."""
        if not isinstance(input, Tensor):
            raise TypeError(f"{type(self).__name__}: input must be a Tensor, got {type(input).__name__}")
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected "
                               f"{self.input_size}")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
        N = input.shape[0]
        if hx is None:
            states = tuple(zeros(N, self.hidden_size, dtype=input.dtype, device=input.device)
                           for _ in range(n_states))
        else:
            states = tuple(hx) if n_states > 1 else (hx,)
            if not batched:
                for s in states:
                    if s.ndim != 1:
                        raise RuntimeError(f"{type(self).__name__}: Expected hidden to be 1D for a 1D input, "
                                           f"got {s.ndim}D instead")
                states = tuple(s.unsqueeze(0) for s in states)
            for s in states:
                if tuple(s.shape) != (N, self.hidden_size):
                    raise RuntimeError(f"{type(self).__name__}: Expected hidden size {(N, self.hidden_size)}, "
                                       f"got {tuple(s.shape)}")
        return F.linear(input, self.weight_ih, self.bias_ih), states, batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input, hx=None):
        xg, (h,), batched = self._prepare(input, hx, 1)
        cell = _rnn_tanh_cell if self.nonlinearity == "tanh" else _rnn_relu_cell
        h = cell(xg, h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise RuntimeError("LSTMCell: hx must be a tuple (h_0, c_0)")
        xg, (h, c), batched = self._prepare(input, hx, 2)
        h, c = _lstm_cell(xg, h, c, self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        xg, (h,), batched = self._prepare(input, hx, 1)
        h = _gru_cell(xg, h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)
