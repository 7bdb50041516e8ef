"""Recur from Python: compile a PyTorch LSTM language model, or load a model
compiled ahead of time, and run it on torch tensors (or NumPy arrays) without
copies, through librecur-runtime (docs/python.md).

    import recur
    compiled = recur.compile(lm)              # an Embedding -> LSTM -> Linear module
    logits = compiled(tokens)                 # tokens [T, B] int64, as lm(tokens)

    with recur.load("liblm.so") as model:     # from recur-compile
        print(model.describe())
"""

from ._cells import CompiledCells, compile_rnn
from ._compile import CompiledLM, CompiledLSTM, CompiledRNN, compile
from ._errors import RecurError
from ._model import Model, TensorSpec, load

__all__ = ["RecurError", "Model", "TensorSpec", "load", "compile", "CompiledLM",
           "CompiledLSTM", "CompiledRNN", "compile_rnn", "CompiledCells"]
