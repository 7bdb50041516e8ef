"""The cells of PyTorch's benchmarks/fastrnns (cells.py's MI-LSTM, GRU and
Elman RNNs with tanh and ReLU, written as its functions write them;
custom_lstms.py's layer-norm LSTM) and an sLSTM with four state tensors,
compiled by recur.compile_rnn at every fusion level and on the CUDA
emulator, against the same cells run step by step by PyTorch in float64,
|got - want| <= 1e-4 * (1 + |want|), on shapes drawn at random, T = 1 and
B = 1 among them, one layer and stacks."""
import copy
import random
import subprocess
from typing import Tuple

import pytest
import torch
import torch.nn as nn
from torch import Tensor

import recur
from test_cells import cache  # noqa: F401
from test_compile_rnn import PIPELINES, LayerNormLSTMCell, run_eager
from recur._compile import _tool


def uniform(*shape, scale):
    return nn.Parameter((torch.rand(*shape) * 2 - 1) * scale)


class MILSTMCell(nn.Module):
    """fastrnns' milstm_cell: an LSTM whose gates multiply the input and
    recurrent products (multiplicative integration, Wu et al. 2016)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        k = hidden_size ** -0.5
        self.w_ih = uniform(4 * hidden_size, input_size, scale=k)
        self.w_hh = uniform(4 * hidden_size, hidden_size, scale=k)
        self.alpha = uniform(4 * hidden_size, scale=1.0)
        self.beta_i = uniform(4 * hidden_size, scale=1.0)
        self.beta_h = uniform(4 * hidden_size, scale=1.0)
        self.bias = uniform(4 * hidden_size, scale=k)

    def forward(self, x: Tensor, state: Tuple[Tensor, Tensor]):
        hx, cx = state
        Wx = x.mm(self.w_ih.t())
        Uz = hx.mm(self.w_hh.t())
        gates = self.alpha * Wx * Uz + self.beta_i * Wx + self.beta_h * Uz + self.bias
        ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
        ingate = ingate.sigmoid()
        forgetgate = forgetgate.sigmoid()
        cellgate = cellgate.tanh()
        outgate = outgate.sigmoid()
        cy = (forgetgate * cx) + (ingate * cellgate)
        hy = outgate * cy.tanh()
        return hy, (hy, cy)


class FastrnnsGRUCell(nn.Module):
    """fastrnns' gru_cell: h' = n + z * (h - n)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        k = hidden_size ** -0.5
        self.w_ih = uniform(3 * hidden_size, input_size, scale=k)
        self.w_hh = uniform(3 * hidden_size, hidden_size, scale=k)
        self.b_ih = uniform(3 * hidden_size, scale=k)
        self.b_hh = uniform(3 * hidden_size, scale=k)

    def forward(self, input: Tensor, hidden: Tensor):
        gi = torch.mm(input, self.w_ih.t()) + self.b_ih
        gh = torch.mm(hidden, self.w_hh.t()) + self.b_hh
        i_r, i_i, i_n = gi.chunk(3, 1)
        h_r, h_i, h_n = gh.chunk(3, 1)
        resetgate = torch.sigmoid(i_r + h_r)
        inputgate = torch.sigmoid(i_i + h_i)
        newgate = torch.tanh(i_n + resetgate * h_n)
        hy = newgate + inputgate * (hidden - newgate)
        return hy, hy


class FastrnnsRNNCell(nn.Module):
    """fastrnns' rnn_tanh_cell and rnn_relu_cell."""

    def __init__(self, input_size, hidden_size, nonlinearity):
        super().__init__()
        k = hidden_size ** -0.5
        self.w_ih = uniform(hidden_size, input_size, scale=k)
        self.w_hh = uniform(hidden_size, hidden_size, scale=k)
        self.b_ih = uniform(hidden_size, scale=k)
        self.b_hh = uniform(hidden_size, scale=k)
        self.nonlinearity = torch.tanh if nonlinearity == "tanh" else torch.relu

    def forward(self, input: Tensor, hidden: Tensor):
        igates = torch.mm(input, self.w_ih.t()) + self.b_ih
        hgates = torch.mm(hidden, self.w_hh.t()) + self.b_hh
        hy = self.nonlinearity(igates + hgates)
        return hy, hy


class SLSTMCell(nn.Module):
    """xLSTM's sLSTM (Beck et al. 2024): exponential input and forget gates
    kept finite by a stabiliser state m, a normaliser state n; the state is
    four tensors (h, c, n, m)."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.ih = nn.Linear(input_size, 4 * hidden_size)
        self.hh = nn.Linear(hidden_size, 4 * hidden_size, bias=False)

    def forward(self, x: Tensor, state: Tuple[Tensor, Tensor, Tensor, Tensor]):
        h, c, n, m = state
        z, i, f, o = (self.ih(x) + self.hh(h)).chunk(4, dim=-1)
        m_new = torch.maximum(f + m, i)
        i = torch.exp(i - m_new)
        f = torch.exp(f + m - m_new)
        c = f * c + i * torch.tanh(z)
        n = f * n + i
        h = torch.sigmoid(o) * (c / n)
        return h, (h, c, n, m_new)


def state_of(cell, batch, hidden):
    """A cell's initial state as its forward takes it: an sLSTM's n
    positive (it divides) and m zero, as its paper starts them."""
    if isinstance(cell, SLSTMCell):
        return (torch.randn(batch, hidden), torch.randn(batch, hidden),
                torch.rand(batch, hidden) + 0.5, torch.zeros(batch, hidden))
    if isinstance(cell, (MILSTMCell, LayerNormLSTMCell)):
        return (torch.randn(batch, hidden), torch.randn(batch, hidden))
    return torch.randn(batch, hidden)


CELLS = {
    "milstm": MILSTMCell,
    "gru": FastrnnsGRUCell,
    "rnn-tanh": lambda i, h: FastrnnsRNNCell(i, h, "tanh"),
    "rnn-relu": lambda i, h: FastrnnsRNNCell(i, h, "relu"),
    "lnlstm": LayerNormLSTMCell,
    "slstm": SLSTMCell,
}


def in_double(value):
    if isinstance(value, torch.Tensor):
        return value.double()
    return tuple(in_double(v) for v in value)


def assert_close_to_double(got, want):
    if isinstance(want, torch.Tensor):
        assert got.shape == want.shape
        error = (got.double() - want).abs()
        assert torch.all(error <= 1e-4 * (1 + want.abs())), error.max()
    else:
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_close_to_double(g, w)


def check_against_double(cells, sizes, shapes, **options):
    """`cells` compiled once, run on each (T, B) of `shapes`, against their
    float64 copies run by PyTorch step by step."""
    compiled = recur.compile_rnn(cells, **options)
    single = isinstance(cells, nn.Module)
    layers = [cells] if single else cells
    doubles = [copy.deepcopy(cell).double() for cell in layers]
    input_size, hidden = sizes
    for steps, batch in shapes:
        x = torch.randn(steps, batch, input_size)
        states = [state_of(cell, batch, hidden) for cell in layers]
        got_y, got_states = compiled(x, states[0] if single else states)
        want_y, want_states = run_eager(doubles[0] if single else doubles, x.double(),
                                        in_double(states[0]) if single else
                                        [in_double(s) for s in states])
        assert_close_to_double(got_y, want_y)
        assert_close_to_double(got_states if single else tuple(got_states),
                               want_states if single else tuple(want_states))


# Shapes drawn once per cell (the seed is the cell's name), with T = 1 and
# B = 1 always among them: one compile per cell and pipeline runs them all.
def shapes_for(name):
    rng = random.Random(name)
    return [(1, 1), (rng.randint(2, 9), 1), (1, rng.randint(2, 20)),
            (rng.randint(2, 9), rng.randint(2, 20))]


@pytest.mark.parametrize("options", PIPELINES)
@pytest.mark.parametrize("name", list(CELLS))
def test_fastrnns_cells_match_pytorch_in_double(name, options):
    torch.manual_seed(len(name))
    rng = random.Random(name)
    input_size, hidden = rng.randint(3, 24), rng.choice([8, 16, 24])
    cell = CELLS[name](input_size, hidden)
    check_against_double(cell, (input_size, hidden), shapes_for(name), **options)


STACKED = ["milstm", "gru", "rnn-tanh", "rnn-relu", "slstm", "lnlstm"]


@pytest.mark.parametrize("options", PIPELINES)
@pytest.mark.parametrize("name", STACKED)
def test_stacks_of_fastrnns_cells_match_pytorch_in_double(name, options):
    """Three layers of one cell (the wavefront's stacks at `wavefront`)."""
    torch.manual_seed(7)
    hidden = 16
    cells = [CELLS[name](12 if k == 0 else hidden, hidden) for k in range(3)]
    check_against_double(cells, (12, hidden), [(1, 1), (5, 3)], **options)


@pytest.mark.parametrize("name", STACKED)
def test_stacks_of_fastrnns_cells_are_one_wavefront(name, tmp_path):
    """Three layers of one cell are one recur.rnn_wavefront at fusion
    wavefront on the CPU; on the GPU (the emulator's pipeline) too, its
    diagonals one unit step over every layer, but for the layer-norm LSTM,
    whose layer norm of the input product between the layers the GPU's
    unit step does not compute: a remark says so."""
    cells = [CELLS[name](12 if k == 0 else 16, 16) for k in range(3)]
    x = torch.randn(5, 3, 12)
    ir = tmp_path / f"{name}.mlir"
    ir.write_text(recur.compile_rnn(cells).ir(x, [state_of(c, 3, 16) for c in cells]))
    fused = subprocess.run([_tool("recur-opt"), str(ir), "--recur-fusion=fusion=wavefront"],
                           check=True, capture_output=True, text=True).stdout
    assert fused.count("recur.rnn_wavefront") == 1 and "recur.rnn " not in fused
    gpu = subprocess.run([_tool("recur-compile"), str(ir), "--target=cuda-emulator",
                          "--remarks", "--emit=mlir", "-o", str(tmp_path / "gpu.mlir")],
                         check=True, capture_output=True, text=True).stderr
    missed = [line for line in gpu.splitlines() if "[Missed]" in line]
    lowered = subprocess.run([_tool("recur-opt"), str(ir), "--recur-lower-to-cuda-emulator",
                              "--mlir-print-ir-after=convert-recur-to-linalg", "-o", "/dev/null"],
                             check=True, capture_output=True, text=True).stderr
    if name == "lnlstm":
        stacking = [line for line in missed if "Category:recur-wavefront" in line]
        assert len(stacking) == 2 and all("rowwise chain" in line for line in stacking), gpu
        assert "layer = 2" not in lowered
    else:
        assert not missed, gpu
        assert "layer = 2, hidden = [16, 16, 16]" in lowered
