"""Recur from Python: compile a PyTorch LSTM language model, or load a model
compiled ahead of time, and run it on torch tensors (or NumPy arrays) without
copies, through librecur-runtime (docs/python.md).

    import recur
    compiled = recur.compile(lm)              # an Embedding -> LSTM -> Linear module
    logits = compiled(tokens)                 # tokens [T, B] int64, as lm(tokens)

    lstm = recur.compile(nn.LSTM(...), train=True)   # an nn.Module under autograd (nn.GRU too)
    output, (h_n, c_n) = lstm(x, (h0, c0))
    loss_fn(output, target).backward()        # fills the nn.LSTM's .grad

    with recur.load("liblm.so") as model:     # from recur-compile
        print(model.describe())
"""

from ._cells import CompiledCells, compile_rnn
from ._compile import CompiledLM, CompiledLSTM, CompiledRNN, compile
from ._errors import RecurError
from ._model import Model, TensorSpec, load

__all__ = ["RecurError", "Model", "TensorSpec", "load", "compile", "CompiledLM",
           "CompiledLSTM", "CompiledRNN", "compile_rnn", "CompiledCells", "TrainableRNN", "TrainableLM",
           "TrainableCells"]


def __getattr__(name):
    # The trainable modules need torch, which the rest of the package does not.
    if name in ("TrainableRNN", "TrainableLM", "TrainableCells"):
        from . import _train
        return getattr(_train, name)
    raise AttributeError(f"module 'recur' has no attribute '{name}'")
