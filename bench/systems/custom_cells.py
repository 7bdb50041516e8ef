"""Recurrent cells written in PyTorch (workload kind `lnlstm`): their recur
IR, traced by recur.compile_rnn, and PyTorch's runs of them, eager or with
the step loop in TorchScript, as fastrnns runs its custom LSTMs.

    custom_cells.py ir KIND INPUT HIDDEN LAYERS   writes the recur IR to stdout
    (runs: torch_lstm.py hands a workload of these kinds to run())
"""
import os
import sys
from typing import List, Tuple

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
from systems import runner  # noqa: E402

try:
    import torch
    from torch import Tensor, nn
except ImportError:
    runner.unavailable(f"torch is not installed for {sys.executable} "
                       "(Debian: apt-get install python3-torch)")

# The cells, as the tests write them (fastrnns' custom_lstms.py, nn.Modules).
from test_compile_rnn import LayerNormLSTMCell  # noqa: E402

CELLS = {"lnlstm": LayerNormLSTMCell}


class ScriptedLayer(nn.Module):
    """A cell over a sequence as fastrnns scripts its custom LSTMs
    (custom_lstms.py's LSTMLayer): the step loop inside TorchScript."""

    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def forward(self, x: Tensor,
                state: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        outputs = torch.jit.annotate(List[Tensor], [])
        for step in x.unbind(0):
            out, state = self.cell(step, state)
            outputs.append(out)
        return torch.stack(outputs), state


def make_cells(kind, input_size, hidden, layers):
    return [CELLS[kind](input_size if layer == 0 else hidden, hidden)
            for layer in range(layers)]


def weight_name(layers, layer, name):
    """A parameter's name in the model: recur.compile_rnn's, the cell's own
    for one layer, `<layer>.<name>` for a list."""
    return name if layers == 1 else f"{layer}.{name}"


def ir(kind, input_size, hidden, layers):
    import recur
    cells = make_cells(kind, input_size, hidden, layers)
    compiled = recur.compile_rnn(cells[0] if layers == 1 else cells)
    x = torch.zeros(1, 1, input_size)
    state = (torch.zeros(1, hidden), torch.zeros(1, hidden))
    return compiled.ir(x, state if layers == 1 else [state] * layers)


def run(spec, variant, weights, x, result):
    """Times `variant` (eager-cell or script) of the workload's cells on x
    from zero states; returns the outputs by the model's names: the last
    layer's `output` and each layer's final (h, c), `state_n_l<k>_<j>`."""
    model = spec["workload"]["model"]
    layers, hidden = model["layers"], model["hidden"]
    cells = make_cells(model["kind"], model["input"], hidden, layers)
    for layer, cell in enumerate(cells):
        cell.load_state_dict({name: weights[weight_name(layers, layer, name)]
                              for name, _ in cell.state_dict().items()}, strict=True)
        cell.to(x.device, x.dtype).eval()
    if variant == "script":
        runs = [torch.jit.script(ScriptedLayer(cell)) for cell in cells]
        result["notes"].append("the step loop in TorchScript, as fastrnns scripts its "
                               "custom LSTMs")
    else:
        def eager(cell):
            def layer(inputs, state):
                outputs = []
                for step in inputs.unbind(0):
                    out, state = cell(step, state)
                    outputs.append(out)
                return torch.stack(outputs), state
            return layer
        runs = [eager(cell) for cell in cells]

    def forward():
        inputs, outputs = x, {}
        for index, layer in enumerate(runs):
            zeros = x.new_zeros(x.shape[1], hidden)
            inputs, state = layer(inputs, (zeros, zeros))
            for j, value in enumerate(state):
                outputs[f"state_n_l{index}_{j}"] = value
        outputs[spec["output"]] = inputs
        return outputs

    with torch.no_grad():
        warmup = max(spec["warmup"], 2) if variant == "script" else spec["warmup"]
        output, times = runner.time_batches(forward, warmup, spec["iters"])
    result["warmup"] = warmup
    result["times_ms"] = times
    return output


if __name__ == "__main__":
    if len(sys.argv) != 6 or sys.argv[1] != "ir":
        sys.exit(__doc__)
    print(ir(sys.argv[2], *map(int, sys.argv[3:])))
