"""GRU and Elman RNN layers compiled by Recur against PyTorch's nn.GRU and
nn.RNN, module for module: the same state_dict, inputs and initial state,
every option recur-gen takes, at every fusion level and on the CUDA
emulator. The IR comes from recur-gen (gru, rnn); the front end for nn.GRU
modules is not written yet."""
import itertools
import subprocess

import pytest
import torch
import torch.nn as nn

import recur
from recur._compile import _tool


def assert_close(got, want):
    assert got.shape == want.shape
    assert torch.all((got - want).abs() <= 1e-4 * (1 + want.abs())), (
        (got - want).abs().max())


def compile_stack(tmp_path, kind, module, extra_gen=(), compile_options=()):
    gen = [_tool("recur-gen"), kind, "--input", str(module.input_size),
           "--hidden", str(module.hidden_size), "--layers", str(module.num_layers),
           "--state", *extra_gen]
    if module.batch_first:
        gen.append("--batch-first")
    if not module.bias:
        gen.append("--no-bias")
    if module.bidirectional:
        gen.append("--bidirectional")
    ir = tmp_path / "model.mlir"
    library = tmp_path / "model.so"
    subprocess.run(gen + ["-o", str(ir)], check=True)
    subprocess.run([_tool("recur-compile"), str(ir), "-o", str(library),
                    "--quiet", *compile_options], check=True)
    return recur.load(library)


def run_like_torch(model, module, x, h0):
    """The compiled model called as torch calls the module: (output, h_n)
    with h_n [layers * directions, B, H]."""
    directions = 2 if module.bidirectional else 1
    names = [f"h0_l{layer}{'_reverse' if direction else ''}"
             for layer in range(module.num_layers) for direction in range(directions)]
    model.bind({name: value.detach() for name, value in module.state_dict().items()})
    outputs = model.run(x, **dict(zip(names, h0)))
    return outputs[0], torch.stack(list(outputs[1:]))


CELLS = [("gru", lambda **kw: nn.GRU(**kw), ()),
         ("rnn", lambda **kw: nn.RNN(nonlinearity="tanh", **kw), ("--nonlinearity", "tanh")),
         ("rnn", lambda **kw: nn.RNN(nonlinearity="relu", **kw), ("--nonlinearity", "relu"))]


@pytest.mark.parametrize("cell,batch_first,bias,bidirectional",
                         [(cell, *options) for cell in range(len(CELLS))
                          for options in itertools.product([False, True], repeat=3)])
def test_layers_match_pytorch(tmp_path, cell, batch_first, bias, bidirectional):
    kind, make, extra = CELLS[cell]
    torch.manual_seed(cell * 8 + batch_first * 4 + bias * 2 + bidirectional)
    module = make(input_size=5, hidden_size=7, num_layers=2, bias=bias,
                  batch_first=batch_first, bidirectional=bidirectional).eval()
    model = compile_stack(tmp_path, kind, module, extra)
    x = torch.randn((3, 4, 5) if batch_first else (4, 3, 5))
    h0 = torch.randn(2 * (2 if bidirectional else 1), 3, 7)
    with torch.no_grad():
        want, want_h = module(x, h0)
    got, got_h = run_like_torch(model, module, x, h0)
    assert_close(got, want)
    assert_close(got_h, want_h)


@pytest.mark.parametrize("cell,options", [
    (cell, options) for cell in range(len(CELLS)) for options in (
        ["--fusion=none"], ["--fusion=hoist"], ["--fusion=cell"],
        ["--fusion=wavefront"], ["--target=cuda-emulator"])])
def test_layers_match_pytorch_through_every_pipeline(tmp_path, cell, options):
    kind, make, extra = CELLS[cell]
    torch.manual_seed(100 + cell)
    module = make(input_size=16, hidden_size=32, num_layers=3).eval()
    model = compile_stack(tmp_path, kind, module, extra, options)
    x = torch.randn(6, 5, 16)
    h0 = torch.randn(3, 5, 32)
    with torch.no_grad():
        want, want_h = module(x, h0)
    got, got_h = run_like_torch(model, module, x, h0)
    assert_close(got, want)
    assert_close(got_h, want_h)
