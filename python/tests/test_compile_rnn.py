"""recur.compile_rnn: cells written in PyTorch, compiled by Recur, against
the same cells run step by step by PyTorch (and, for a GRU written as a
cell, against nn.GRU itself), at every fusion level and on the CUDA
emulator; and the errors for what a cell may not do."""
import contextlib
from typing import Tuple

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

import recur
from recur import _safetensors
# The comparison and a fresh compile cache per test, as the GRU/RNN tests'.
from test_cells import assert_close, cache  # noqa: F401


class LayerNorm(nn.Module):
    """fastrnns' decomposed layer norm: mean and std over the features."""

    def __init__(self, size):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(size))
        self.bias = nn.Parameter(0.1 * torch.randn(size))

    def forward(self, x: Tensor) -> Tensor:
        mu = x.mean(-1, keepdim=True)
        sigma = x.std(-1, keepdim=True, unbiased=False)
        return (x - mu) / sigma * self.weight + self.bias


class LayerNormLSTMCell(nn.Module):
    """fastrnns' LayerNormLSTMCell (custom_lstms.py), as an nn.Module."""

    def __init__(self, input_size, hidden_size, decompose_layernorm=False):
        super().__init__()
        self.weight_ih = nn.Parameter(torch.randn(4 * hidden_size, input_size) / input_size**0.5)
        self.weight_hh = nn.Parameter(torch.randn(4 * hidden_size, hidden_size) /
                                      hidden_size**0.5)
        norm = LayerNorm if decompose_layernorm else nn.LayerNorm
        self.layernorm_i = norm(4 * hidden_size)
        self.layernorm_h = norm(4 * hidden_size)
        self.layernorm_c = norm(hidden_size)

    def forward(self, input: Tensor,
                state: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        hx, cx = state
        igates = self.layernorm_i(torch.mm(input, self.weight_ih.t()))
        hgates = self.layernorm_h(torch.mm(hx, self.weight_hh.t()))
        gates = igates + hgates
        ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
        ingate = torch.sigmoid(ingate)
        forgetgate = torch.sigmoid(forgetgate)
        cellgate = torch.tanh(cellgate)
        outgate = torch.sigmoid(outgate)
        cy = self.layernorm_c((forgetgate * cx) + (ingate * cellgate))
        hy = outgate * torch.tanh(cy)
        return hy, (hy, cy)


class PeepholeLSTMCell(nn.Module):
    """An LSTM whose gates also read the cell state (Gers & Schmidhuber),
    weights as x @ W (no transpose), biases added by hand."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.w_x = nn.Parameter(torch.randn(input_size, 4 * hidden_size) / input_size**0.5)
        self.w_h = nn.Parameter(torch.randn(hidden_size, 4 * hidden_size) / hidden_size**0.5)
        self.bias = nn.Parameter(0.1 * torch.randn(4 * hidden_size))
        self.p_i = nn.Parameter(0.1 * torch.randn(hidden_size))
        self.p_f = nn.Parameter(0.1 * torch.randn(hidden_size))
        self.p_o = nn.Parameter(0.1 * torch.randn(hidden_size))
        self.hidden = hidden_size

    def forward(self, x: Tensor,
                state: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        h, c = state
        gates = x @ self.w_x + h @ self.w_h + self.bias
        n = self.hidden
        i = torch.sigmoid(gates[:, :n] + self.p_i * c)
        f = torch.sigmoid(gates[:, n:2 * n] + self.p_f * c)
        g = torch.tanh(gates[:, 2 * n:3 * n])
        c = f * c + i * g
        o = torch.sigmoid(gates[:, 3 * n:] + self.p_o * c)
        h = o * torch.tanh(c)
        return h, (h, c)


class GRUCell(nn.Module):
    """PyTorch's GRU written as a cell: the reset gate after the recurrent
    product; its weights are an nn.GRU's."""

    def __init__(self, gru):
        super().__init__()
        self.ih = nn.Linear(gru.input_size, 3 * gru.hidden_size)
        self.hh = nn.Linear(gru.hidden_size, 3 * gru.hidden_size)
        with torch.no_grad():
            for linear, suffix in ((self.ih, "ih_l0"), (self.hh, "hh_l0")):
                linear.weight.copy_(getattr(gru, "weight_" + suffix))
                linear.bias.copy_(getattr(gru, "bias_" + suffix))

    def forward(self, x, h):
        r_i, z_i, n_i = self.ih(x).chunk(3, dim=-1)
        r_h, z_h, n_h = self.hh(h).chunk(3, dim=-1)
        r = torch.sigmoid(r_i + r_h)
        z = torch.sigmoid(z_i + z_h)
        n = torch.tanh(n_i + r * n_h)
        h = (1 - z) * n + z * h
        return h, h


class Everything(nn.Module):
    """One of each supported op that the other cells do not use."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.w = nn.Parameter(torch.randn(2 * hidden_size, input_size + hidden_size) / 4)
        self.b = nn.Parameter(torch.randn(2 * hidden_size) / 4)
        self.scale = nn.Parameter(torch.rand(1, hidden_size) + 0.5)
        self.norm = nn.LayerNorm(hidden_size, elementwise_affine=False)

    def forward(self, x, h):
        both = torch.cat([x, h], dim=1)
        a, b = F.linear(both, self.w, self.b).split([h.shape[1], h.shape[1]], dim=-1)
        a = torch.clamp(a, -2.0, 2.0) / 2 - F.logsigmoid(b) * 0.1
        b = torch.maximum(torch.relu(b), torch.minimum(a, -a)).pow(2)
        var = a.var(dim=-1, keepdim=True)  # unbiased
        total = (a.exp() + 1).log().sum(-1, keepdim=True)
        out = self.norm(a * self.scale + b / (1 + var) - total.sqrt() * 0.01)
        h = torch.tanh(out) * torch.rsqrt(1 + b) - (-h) * 0.5
        return h, h


def run_eager(cells, x, states, lengths=None, grad=False):
    """The cells run step by step by PyTorch, layer by layer; with
    `lengths`, PyTorch's packed semantics (a row past its length keeps its
    state and its output is zero); with `grad`, under autograd."""
    single = isinstance(cells, nn.Module)
    cells, states = ([cells], [states]) if single else (cells, list(states))

    def keep(active, new, old):
        if isinstance(new, torch.Tensor):
            return torch.where(active, new, old)
        return tuple(keep(active, n, o) for n, o in zip(new, old))
    with contextlib.nullcontext() if grad else torch.no_grad():
        layer_input = x
        for k, cell in enumerate(cells):
            outputs = []
            for t in range(layer_input.shape[0]):
                h, new = cell(layer_input[t], states[k])
                if lengths is not None:
                    active = (t < lengths)[:, None]
                    new = keep(active, new, states[k])
                    h = torch.where(active, h, torch.zeros_like(h))
                states[k] = new
                outputs.append(h)
            layer_input = torch.stack(outputs)
    return layer_input, (states[0] if single else states)


def assert_states_close(got, want):
    if isinstance(want, torch.Tensor):
        assert_close(got, want)
    else:
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_states_close(g, w)


def check_matches(cells, x, states, **options):
    compiled = recur.compile_rnn(cells, **options)
    assert isinstance(compiled, recur.CompiledCells)
    want_y, want_states = run_eager(cells, x, states)
    got_y, got_states = compiled(x, states)
    assert_close(got_y, want_y)
    assert_states_close(got_states, want_states)
    return compiled


PIPELINES = [{"fusion": "none"}, {"fusion": "hoist"}, {"fusion": "cell"},
             {"fusion": "wavefront"}, {"target": "cuda-emulator"}]


@pytest.mark.parametrize("options", PIPELINES)
@pytest.mark.parametrize("decompose", [False, True])
def test_layer_norm_lstm_matches_pytorch(options, decompose):
    torch.manual_seed(1)
    cell = LayerNormLSTMCell(12, 16, decompose_layernorm=decompose)
    x = torch.randn(7, 5, 12)
    check_matches(cell, x, (torch.randn(5, 16), torch.randn(5, 16)), **options)


@pytest.mark.parametrize("options", PIPELINES)
def test_peephole_lstm_matches_pytorch(options):
    torch.manual_seed(2)
    cell = PeepholeLSTMCell(6, 8)
    check_matches(cell, torch.randn(5, 3, 6), (torch.randn(3, 8), torch.randn(3, 8)), **options)


class ElmanCell(nn.Module):
    """An Elman RNN with a learned per-unit leak: the recurrent product read
    whole (one gate) with a column operand."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.ih = nn.Linear(input_size, hidden_size)
        self.hh = nn.Linear(hidden_size, hidden_size, bias=False)
        self.leak = nn.Parameter(torch.rand(hidden_size))

    def forward(self, x, h):
        h = self.leak * h + (1 - self.leak) * torch.tanh(self.ih(x) + self.hh(h))
        return h, h


# Hidden sizes the vector width divides (16 with AVX-512, 8 with AVX2): at
# `cell` the recurrent product's register tile runs the cell's tail
# (recur-fuse-cell-step) for up to 16 rows, 7 leaving a remainder tile; 40
# rows take the kernel's separate tail.
@pytest.mark.parametrize("options", PIPELINES)
@pytest.mark.parametrize("make_cell", [lambda: PeepholeLSTMCell(20, 32),
                                       lambda: GRUCell(nn.GRU(20, 48)),
                                       lambda: ElmanCell(20, 64)],
                         ids=["peephole", "gru", "elman"])
@pytest.mark.parametrize("batch", [7, 40])
def test_fused_cell_steps_match_pytorch(options, make_cell, batch):
    torch.manual_seed(9)
    cell = make_cell()
    hidden = cell.hh.out_features // 3 if isinstance(cell, GRUCell) else \
        cell.hh.out_features if isinstance(cell, ElmanCell) else cell.hidden
    states = torch.randn(batch, hidden)
    if isinstance(cell, PeepholeLSTMCell):
        states = (states, torch.randn(batch, hidden))
    check_matches(cell, torch.randn(6, batch, 20), states, **options)


@pytest.mark.parametrize("options", PIPELINES)
def test_gru_written_as_a_cell_matches_nn_gru(options):
    torch.manual_seed(3)
    gru = nn.GRU(10, 12).eval()
    x, h0 = torch.randn(6, 4, 10), torch.randn(1, 4, 12)
    compiled = recur.compile_rnn(GRUCell(gru), **options)
    y, h = compiled(x, h0[0])
    with torch.no_grad():
        want_y, want_h = gru(x, h0)
    assert_close(y, want_y)
    assert_close(h, want_h[0])


@pytest.mark.parametrize("options", [{"fusion": "none"}, {"fusion": "cell"},
                                     {"target": "cuda-emulator"}])
def test_every_supported_op_matches_pytorch(options):
    torch.manual_seed(4)
    cell = Everything(5, 7)
    check_matches(cell, torch.randn(4, 3, 5), torch.randn(3, 7), **options)


class ThresholdCell(nn.Module):
    """F.threshold (ONNX's ThresholdedRelu): a comparison and a select."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.ih = nn.Linear(input_size, hidden_size)
        self.hh = nn.Linear(hidden_size, hidden_size)

    def forward(self, x, h):
        h = F.threshold(self.ih(x) + self.hh(h), 0.2, -0.5)
        return h, h


@pytest.mark.parametrize("options", [{"fusion": "none"}, {"fusion": "cell"},
                                     {"target": "cuda-emulator"}])
def test_threshold_matches_pytorch(options):
    torch.manual_seed(6)
    check_matches(ThresholdCell(5, 7), torch.randn(6, 3, 5), torch.randn(3, 7), **options)


class ScaledRNNCell(nn.Module):
    """An RNN whose input product is scaled per unit: the hoisted GEMM takes
    the scale (and the bias) into its weights at bind time."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.ih = nn.Linear(input_size, hidden_size)
        self.hh = nn.Linear(hidden_size, hidden_size, bias=False)
        self.scale = nn.Parameter(torch.rand(hidden_size) + 0.5)

    def forward(self, x, h):
        h = torch.tanh(self.ih(x) * self.scale + self.hh(h))
        return h, h


@pytest.mark.parametrize("options", PIPELINES)
def test_a_scaled_product_matches_pytorch(options):
    torch.manual_seed(9)
    cell = ScaledRNNCell(5, 7)
    compiled = check_matches(cell, torch.randn(4, 3, 5), torch.randn(3, 7), **options)
    # After a weight update, the folded weights are computed again.
    with torch.no_grad():
        cell.scale.mul_(1.5)
    compiled.refresh()
    x, h = torch.randn(4, 3, 5), torch.randn(3, 7)
    got, _ = compiled(x, h)
    assert_close(got, run_eager(cell, x, h)[0])


# At `wavefront` on the CPU the three layers run as one recur.rnn_wavefront:
# T + 2 diagonal steps (the GPU pipelines leave them apart).
@pytest.mark.parametrize("options", PIPELINES)
def test_a_stack_of_different_cells_matches_pytorch(options):
    torch.manual_seed(5)
    gru = nn.GRU(8, 9)
    cells = [LayerNormLSTMCell(6, 8), GRUCell(gru), PeepholeLSTMCell(9, 5)]
    x = torch.randn(5, 2, 6)
    states = [(torch.randn(2, 8), torch.randn(2, 8)), torch.randn(2, 9),
              (torch.randn(2, 5), torch.randn(2, 5))]
    compiled = check_matches(cells, x, states, **options)
    # Weights are named by layer, as an nn.ModuleList's.
    ir = compiled.ir(x, states)
    assert 'recur.weight = "0.weight_ih"' in ir and 'recur.weight = "1.ih.weight"' in ir
    assert ir.count("recur.rnn") == 3


def test_shapes_compile_once_each():
    torch.manual_seed(6)
    cell = PeepholeLSTMCell(4, 6)
    compiled = recur.compile_rnn(cell)
    for batch in (1, 3, 3):
        for steps in (1, 4):
            states = (torch.randn(batch, 6), torch.randn(batch, 6))
            x = torch.randn(steps, batch, 4)
            got, got_states = compiled(x, states)
            want, want_states = run_eager(cell, x, states)
            assert_close(got, want)
            assert_states_close(got_states, want_states)
    assert len(compiled._models) == 1  # T and B stay dynamic


def test_refresh_binds_new_parameter_values():
    torch.manual_seed(7)
    cell = GRUCell(nn.GRU(3, 4))
    compiled = recur.compile_rnn(cell)
    x, h = torch.randn(3, 2, 3), torch.randn(2, 4)
    compiled(x, h)
    with torch.no_grad():
        cell.hh.weight.mul_(2)
    compiled.refresh()
    got, _ = compiled(x, h)
    assert_close(got, run_eager(cell, x, h)[0])


# Rows of different lengths, unsorted, with 1 and T among them, through a
# stack of different cells (states of one and two tensors), and B = 1.
@pytest.mark.parametrize("options", PIPELINES)
def test_lengths_give_pytorchs_packed_semantics(options):
    torch.manual_seed(12)
    gru = nn.GRU(8, 16)
    cells = [LayerNormLSTMCell(6, 8), GRUCell(gru), PeepholeLSTMCell(16, 16)]
    compiled = recur.compile_rnn(cells, **options)
    for lengths in ([3, 7, 1, 7, 5], [4]):
        batch, steps = len(lengths), max(lengths)
        x = torch.randn(steps, batch, 6)
        states = [(torch.randn(batch, 8), torch.randn(batch, 8)), torch.randn(batch, 16),
                  (torch.randn(batch, 16), torch.randn(batch, 16))]
        lengths = torch.tensor(lengths)
        want_y, want_states = run_eager(cells, x, states, lengths)
        got_y, got_states = compiled(x, states, lengths=lengths)
        assert_close(got_y, want_y)
        assert_states_close(got_states, want_states)
    assert "lengths(%lengths)" in compiled.ir(x, states, lengths=lengths)


def test_lengths_that_do_not_fit_are_refused():
    cell = GRUCell(nn.GRU(4, 6))
    compiled = recur.compile_rnn(cell)
    x, h = torch.zeros(3, 2, 4), torch.zeros(2, 6)
    with pytest.raises(recur.RecurError, match=r"lengths must be \[B\] integers with B = 2 "
                                               r"\(the input's batch\), got torch.int64 of "
                                               r"shape \[3\]"):
        compiled(x, h, lengths=[1, 2, 3])
    with pytest.raises(recur.RecurError, match=r"got torch.float32"):
        compiled(x, h, lengths=torch.tensor([1.0, 2.0]))
    with pytest.raises(recur.RecurError, match=r"input 'lengths' holds 4 for row 1; each "
                                               r"row's length must lie in \[1, T\] = \[1, 3\]"):
        compiled(x, h, lengths=[3, 4])


class Sorting(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x, h):
        h = torch.tanh(x @ self.w.t() + h)
        return torch.sort(h, dim=-1)[0], h


class OuterProduct(nn.Module):
    def forward(self, x, h):
        return h, h @ x.t()


class OverBatch(nn.Module):
    def forward(self, x, h):
        return h, h - h.mean(0, keepdim=True)


class Widens(nn.Module):
    def forward(self, x, state):
        h, c = state
        return h, (h, torch.cat([c, c], -1))


class SplitBySize(nn.Module):
    def __init__(self):
        super().__init__()
        self.gates = nn.Linear(4, 8)

    def forward(self, x, h):
        a, b = self.gates(x).split(4, dim=-1)
        return a + h, b + h


class ChunkOfBatch(nn.Module):
    def forward(self, x, h):
        first, second = h.mean(-1).chunk(2)
        return h, h


class EmptySlice(nn.Module):
    def forward(self, x, h):
        return h[:, 5:], h


class ReturnsState(nn.Module):
    def forward(self, x, h):
        return h + x


class WrongState(nn.Module):
    def forward(self, x, state):
        h, c = state
        return h, h


@pytest.mark.parametrize("cell,states,message", [
    (Sorting(), torch.zeros(2, 4),
     r"torch.sort at .*test_compile_rnn.py:\d+: return torch.sort\(h, dim=-1\)\[0\], h: "
     r"torch.sort is not supported in a compiled cell \(supported: nn.Linear"),
    (OuterProduct(), torch.zeros(2, 4),
     r"Tensor.t at .*test_compile_rnn.py:\d+: return h, h @ x.t\(\): transposes of "
     r"activations are not supported"),
    (OverBatch(), torch.zeros(2, 4), r"mean over dim=0: cells reduce over the last"),
    (SplitBySize(), torch.zeros(2, 4),
     r"Tensor.split at .*: the pieces of a split by a size cannot be unpacked while tracing "
     r"\(the feature size is not known yet\): give the sizes as a list"),
    (ChunkOfBatch(), torch.zeros(2, 4), r"a chunk of a \[B\] value: cells take apart the last"),
    (EmptySlice(), torch.zeros(2, 4), r"the slice 5:None of a dimension of 4 is empty"),
    (ReturnsState(), (), r"ReturnsState's state is empty"),
    (ReturnsState(), torch.zeros(2, 4), r"ReturnsState.forward must return \(h_t, new_state\)"),
    (WrongState(), (torch.zeros(2, 4), torch.zeros(2, 4)),
     r"WrongState.forward's new state must have the structure of its state: a tuple of 2"),
])
def test_what_a_cell_may_not_do_is_refused_by_name(cell, states, message):
    compiled = recur.compile_rnn(cell)
    with pytest.raises(recur.RecurError, match=message):
        compiled(torch.zeros(3, 2, 4), states)


def test_states_that_do_not_fit_are_refused():
    cell = PeepholeLSTMCell(4, 6)
    compiled = recur.compile_rnn(cell)
    with pytest.raises(recur.RecurError, match=r"cell 0's state\[1\] has shape \[3, 6\], "
                                               r"expected \[B, n\] with B = 2"):
        compiled(torch.zeros(3, 2, 4), (torch.zeros(2, 6), torch.zeros(3, 6)))
    with pytest.raises(recur.RecurError, match=r"new state 1 has shape \[B, 12\], the state "
                                               r"\[B, 6\]"):
        recur.compile_rnn(Widens())(torch.zeros(3, 2, 4), (torch.zeros(2, 6), torch.zeros(2, 6)))
    with pytest.raises(recur.RecurError, match=r"states: expected a list of 2"):
        recur.compile_rnn([cell, cell])(torch.zeros(3, 2, 4), (torch.zeros(2, 6),) * 2)


def test_dropout_in_train_mode_is_refused():
    cell = nn.Sequential()
    cell.drop = nn.Dropout(0.5)
    with pytest.raises(recur.RecurError, match=r"nn.Dropout in train mode: call .eval\(\)"):
        recur.compile_rnn(cell)


def write_safetensors(path, tensors):
    _safetensors.save(str(path), {name: t.detach().to(torch.float32).numpy()
                                  for name, t in tensors.items()})


def read_safetensors(path):
    return {name: torch.from_numpy(a) for name, a in _safetensors.load(str(path)).items()}


@pytest.mark.parametrize("make", [lambda: LayerNormLSTMCell(6, 8, decompose_layernorm=True),
                                  lambda: LayerNormLSTMCell(6, 8),
                                  lambda: PeepholeLSTMCell(6, 8),
                                  lambda: Everything(6, 8)],
                         ids=["decomposed-layer-norm", "layer-norm", "peephole", "everything"])
def test_the_reference_evaluates_any_cell_as_pytorch_does(make, tmp_path):
    """recur-run --check's reference (the cell region interpreted in double,
    runtime/reference/CellInterpreter.cpp) against the cell run by PyTorch
    in float64, and the compiled model against the reference."""
    import subprocess
    torch.manual_seed(8)
    cell = make()
    x = torch.randn(5, 3, 6)
    states = (torch.randn(3, 8), torch.randn(3, 8)) if not isinstance(cell, Everything) \
        else torch.randn(3, 8)
    compiled = recur.compile_rnn(cell)
    model = compiled.model(x, states)
    flat = list(states) if isinstance(states, tuple) else [states]
    write_safetensors(tmp_path / "w.safetensors", {
        spec.name: dict(cell.named_parameters())[spec.name] for spec in model.weights})
    write_safetensors(tmp_path / "in.safetensors", {
        "input": x, **{f"state_l0_{j}": value for j, value in enumerate(flat)}})
    run = subprocess.run(
        [recur._compile._tool("recur-run"), model.path, "--weights", str(tmp_path / "w.safetensors"),
         "--inputs", str(tmp_path / "in.safetensors"), "--iters", "1", "--check",
         "--save-reference", str(tmp_path / "ref.safetensors")],
        capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count(": pass") == 1 + len(flat), run.stdout
    reference = read_safetensors(tmp_path / "ref.safetensors")
    double = make()
    double.load_state_dict(cell.state_dict())
    double = double.double()
    as_double = tuple(v.double() for v in flat)
    want_y, want_states = run_eager(double, x.double(),
                                    as_double if isinstance(states, tuple) else as_double[0])
    want_states = list(want_states) if isinstance(states, tuple) else [want_states]
    for got, want in [(reference["output"], want_y)] + [
            (reference[f"state_n_l0_{j}"], want) for j, want in enumerate(want_states)]:
        assert torch.all((got.double() - want).abs() <= 1e-6 * (1 + want.abs())), (
            (got.double() - want).abs().max())
