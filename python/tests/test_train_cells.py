"""recur.compile_rnn(cells, train=True): cells written in PyTorch, compiled
with their backward recurrence derived from the cell's region, under
torch.autograd. Gradients of the input, the states and every parameter
against PyTorch's autograd on the same cells in float64, step by step; a
stack of a layer-norm LSTM trained with Adam over BPTT windows against the
same training in float64; packed batches (lengths) (run by ctest as
`python`)."""

import copy

import pytest
import torch
import torch.nn as nn

import recur
from test_compile_rnn import (ElmanCell, Everything, GRUCell, LayerNormLSTMCell,
                              PeepholeLSTMCell, ScaledRNNCell, run_eager)


@pytest.fixture(autouse=True)
def cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("RECUR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def scaled_error(got, want):
    """max |got - want| / (1 + |want|)."""
    assert got.shape == want.shape
    return ((got.double() - want).abs() / (1 + want.abs())).max().item()


def eager(cells, x, states, lengths=None):
    """The cells step by step by PyTorch under autograd (packed semantics
    with lengths)."""
    return run_eager(cells, x, states, lengths, grad=True)


def flat(states):
    if isinstance(states, torch.Tensor):
        return [states]
    return [t for s in states for t in flat(s)]


def loss_of(y, states):
    """Reads the output and every final state, nonlinearly."""
    return (y ** 2).mean() + sum((1.5 * s).sum() + (s ** 3).sum() * 0.1 for s in flat(states))


CELLS = {
    "layernorm-lstm": (lambda: LayerNormLSTMCell(6, 8), 2),
    "layernorm-lstm-decomposed": (lambda: LayerNormLSTMCell(6, 8, decompose_layernorm=True), 2),
    "peephole": (lambda: PeepholeLSTMCell(6, 8), 2),
    "gru": (lambda: GRUCell(nn.GRU(6, 8)), 1),
    "elman-leak": (lambda: ElmanCell(6, 8), 1),
    "scaled": (lambda: ScaledRNNCell(6, 8), 1),
    "every-op": (lambda: Everything(6, 8), 1),
}


def states_for(count, batch, hidden, dtype=torch.float32):
    states = tuple(torch.randn(batch, hidden, dtype=dtype) for _ in range(count))
    return states if count > 1 else states[0]


def check_gradients(make, count, options, lengths=None, T=5, B=3):
    cell = make()
    reference = copy.deepcopy(cell).double()
    trainable = recur.compile_rnn(cell, train=True, **options)
    x = torch.randn(T, B, 6)
    states = states_for(count, B, 8)
    xs = x.clone().requires_grad_()
    ss = tuple(s.clone().requires_grad_() for s in flat(states))
    y, final = trainable(xs, ss if count > 1 else ss[0], lengths=lengths)
    assert y.grad_fn is not None
    loss_of(y, final).backward()
    xr = x.double().requires_grad_()
    sr = tuple(s.double().requires_grad_() for s in flat(states))
    yr, finalr = eager(reference, xr, sr if count > 1 else sr[0], lengths)
    loss_of(yr, finalr).backward()
    assert scaled_error(y.detach(), yr.detach()) < 1e-5
    for (name, p), q in zip(cell.named_parameters(), reference.parameters()):
        assert p.grad is not None, name
        assert scaled_error(p.grad, q.grad) < 1e-4, name
    assert scaled_error(xs.grad, xr.grad) < 1e-4
    for a, b in zip(ss, sr):
        assert scaled_error(a.grad, b.grad) < 1e-4


@pytest.mark.parametrize("options", [{"fusion": "none"}, {}], ids=["none", "default"])
@pytest.mark.parametrize("name", list(CELLS))
def test_cell_gradients_match_autograd(name, options):
    torch.manual_seed(1)
    make, count = CELLS[name]
    check_gradients(make, count, options)


@pytest.mark.parametrize("name", ["layernorm-lstm", "gru"])
def test_packed_batch_gradients_match_autograd(name):
    torch.manual_seed(2)
    make, count = CELLS[name]
    check_gradients(make, count, {}, lengths=torch.tensor([5, 2, 4]))


def test_parameters_are_the_cells():
    cells = [LayerNormLSTMCell(6, 8), LayerNormLSTMCell(8, 8)]
    trainable = recur.compile_rnn(cells, train=True)
    assert isinstance(trainable, nn.Module)
    ids = {id(p) for p in trainable.parameters()}
    assert ids == {id(p) for c in cells for p in c.parameters()}


def test_layernorm_lstm_stack_trains_as_float64():
    """Two layer-norm LSTM cells, Adam, gradient clipping, BPTT windows with
    the state detached between them: after several steps the weights are
    float64 training's."""
    torch.manual_seed(3)
    cells = [LayerNormLSTMCell(6, 8), LayerNormLSTMCell(8, 8)]
    reference = [copy.deepcopy(c).double() for c in cells]
    trainable = recur.compile_rnn(cells, train=True, threads=2)
    head = nn.Linear(8, 3)
    head_r = copy.deepcopy(head).double()
    params = list(trainable.parameters()) + list(head.parameters())
    params_r = [p for c in reference for p in c.parameters()] + list(head_r.parameters())
    opt = torch.optim.Adam(params, lr=1e-2)
    opt_r = torch.optim.Adam(params_r, lr=1e-2)
    states = [states_for(2, 4, 8) for _ in cells]
    states_r = [tuple(s.double() for s in st) for st in states]
    for window in range(4):
        x = torch.randn(5, 4, 6)
        target = torch.randint(0, 3, (5, 4))
        for model, out_head, optimizer, st, inp, store in (
                (trainable, head, opt, states, x, "states"),
                (lambda x, s: eager(reference, x, s), head_r, opt_r, states_r, x.double(),
                 "states_r")):
            optimizer.zero_grad()
            y, finals = model(inp, st)
            loss = nn.functional.cross_entropy(out_head(y).reshape(-1, 3), target.reshape(-1)) \
                + 0.01 * sum((s ** 2).sum() for s in flat(finals))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(optimizer.param_groups[0]["params"], 1.0)
            optimizer.step()
            detached = [tuple(s.detach() for s in f) for f in finals]
            if store == "states":
                states = detached
            else:
                states_r = detached
    for p, q in zip(params, params_r):
        assert scaled_error(p.detach(), q.detach()) < 1e-4
