"""recur.compile(module, train=True): compiled models that train under
torch.autograd (docs/training.md, "From PyTorch").

A pair of compiled models makes one torch.autograd.Function: the forward
(recur-gen ... --keep-activations, which also returns what the backward
reads) and its vector-Jacobian product (recur-gen ... --vjp:
recur-differentiate's backward, which takes the forward's inputs, its kept
outputs and the gradients of its outputs, and returns the gradients of its
float inputs and of its weights). An nn.LSTM is one pair per layer and
direction; a language model is one pair.

An autograd.Function rather than a torch.library custom op: the compiled
models are opaque ctypes calls that torch.compile could not trace into
anyway, and a Function needs no registration, so any number of compiled
modules coexist. One Function per layer means autograd runs the layers'
backwards one after the other, top layer first, and each layer's weight
gradients are ready as soon as its backward returns: DistributedDataParallel's
buckets start their all-reduce while the layers below are still in their
backward.
"""

from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from torch.nn.utils.rnn import PackedSequence

from ._errors import RecurError
from ._model import Model


class _Pair:
    """A compiled forward and its backward, and the module's parameters they
    read (Recur's name -> Parameter), bound again whenever one has changed
    (an optimizer's step, DDP's broadcast)."""

    def __init__(self, forward: Model, backward: Model, parameters: Dict[str, Any]) -> None:
        self.forward, self.backward, self.parameters = forward, backward, parameters
        self.inputs = [spec.name for spec in forward.inputs]
        outputs = forward.describe()["outputs"]
        self.outputs = [output["name"] for output in outputs]
        # What the caller gets: the outputs that are not kept activations.
        self.returned = [output["name"] for output in outputs if not output.get("kept")]
        taken = {spec.name for spec in backward.inputs}
        # The forward's outputs that the backward reads: saved by autograd.
        self.saved = [name for name in self.outputs if name in taken]
        self.backward_inputs = [spec.name for spec in backward.inputs]
        self.gradients = [spec.name for spec in backward.outputs]
        self._bound: Dict[int, Tuple] = {}

    def bind(self, model: Model, values: Sequence[Any]) -> None:
        """Binds `values` (the parameters' values, in order) unless `model`
        holds them already: a tensor's storage and version counter say
        whether it changed."""
        key = tuple((v.data_ptr(), v._version) for v in values)
        if self._bound.get(id(model)) != key:
            model.bind({name: value.detach() for name, value in zip(self.parameters, values)})
            self._bound[id(model)] = key

    def apply(self, *inputs: Any) -> Any:
        """The forward on `inputs` (the model's, in order) under autograd:
        the returned outputs, one tensor or a tuple."""
        return _CompiledFunction.apply(self, *inputs, *self.parameters.values())


class _CompiledFunction(torch.autograd.Function):
    """(pair, inputs..., weights...) -> the pair's returned outputs."""

    @staticmethod
    def forward(ctx, pair, *tensors):
        inputs, weights = tensors[:len(pair.inputs)], tensors[len(pair.inputs):]
        pair.bind(pair.forward, weights)
        results = pair.forward.run(*inputs)
        results = results if isinstance(results, tuple) else (results,)
        by_name = dict(zip(pair.outputs, results))
        ctx.pair = pair
        ctx.shapes = [(tuple(by_name[name].shape), by_name[name].dtype,
                       by_name[name].device) for name in pair.returned]
        # Saved, the weights are those the backward must use; an optimizer
        # step between the two makes autograd raise, as for any module.
        ctx.save_for_backward(*inputs, *weights, *(by_name[name] for name in pair.saved))
        returned = tuple(by_name[name] for name in pair.returned)
        return returned if len(returned) > 1 else returned[0]

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        pair = ctx.pair
        saved = ctx.saved_tensors
        count, weighted = len(pair.inputs), len(pair.inputs) + len(pair.parameters)
        inputs, weights, kept = saved[:count], saved[count:weighted], saved[weighted:]
        pair.bind(pair.backward, weights)
        named = dict(zip(pair.inputs, inputs))
        named.update(zip(pair.saved, kept))
        for name, grad, (shape, dtype, device) in zip(pair.returned, grads, ctx.shapes):
            named["d_" + name] = (torch.zeros(shape, dtype=dtype, device=device)
                                  if grad is None else grad)
        results = pair.backward.run(**{name: named[name] for name in pair.backward_inputs})
        results = results if isinstance(results, tuple) else (results,)
        by_name = dict(zip(pair.gradients, results))
        return (None, *(by_name.get("d_" + name) for name in pair.inputs),
                *(by_name["d_" + name] for name in pair.parameters))


def _state(hx: Any, cell_state: bool, expected: List[int], first: str,
           like: Any, h_size: Optional[int] = None) -> Tuple[Any, ...]:
    """The state as a tuple: (h0, c0) for an LSTM (`cell_state`), (h0,) for
    a GRU or an RNN, each `expected` ([`first`, batch, hidden]; h0's last
    size `h_size` if given, an LSTM's projection); zeros (on `like`'s
    device) for None."""
    names = ("h0", "c0") if cell_state else ("h0",)
    shapes = [expected[:-1] + [h_size] if h_size and name == "h0" else expected
              for name in names]
    if hx is None:
        return tuple(torch.zeros(shape, device=like.device) for shape in shapes)
    if cell_state and (not isinstance(hx, tuple) or len(hx) != 2):
        raise RecurError("an LSTM's state is a tuple (h0, c0)")
    if not cell_state:
        if not isinstance(hx, torch.Tensor):
            raise RecurError(f"a GRU's or an RNN's state is one tensor h0, got "
                             f"{type(hx).__name__}")
        hx = (hx,)
    for name, value, shape in zip(names, hx, shapes):
        if list(value.shape) != shape:
            raise RecurError(f"{name} has shape {list(value.shape)}, expected {shape} "
                             f"({first}, batch, {'proj_size' if shape != expected else 'hidden'})")
    return hx


def _stacked(finals: List[Any], cell_state: bool) -> Any:
    """The final states, per layer (and direction) h_n[, c_n], stacked as
    torch returns them: (h_n, c_n) or h_n."""
    if cell_state:
        return torch.stack(finals[0::2]), torch.stack(finals[1::2])
    return torch.stack(finals)


class TrainableRNN(torch.nn.Module):
    """A compiled nn.LSTM, nn.GRU or nn.RNN that trains: called as the module
    is, `output, (h_n, c_n) = trainable(input, (h0, c0))` (a GRU's or an
    RNN's: `output, h_n = trainable(input, h0)`), its outputs carry a grad_fn, and
    `loss.backward()` fills the source module's parameters' .grad (they are
    this module's parameters, `trainable.module`'s, shared, not copies). The
    state may be passed in, and detached between BPTT windows."""

    def __init__(self, module: Any, pairs: List[_Pair], packed_pairs: Any) -> None:
        super().__init__()
        self.module = module
        self._pairs = pairs  # per layer, then direction
        # The layers' variants that take each row's length (recur-gen
        # --lengths), made at the first PackedSequence.
        self._make_packed_pairs, self._packed_pairs = packed_pairs, None

    def forward(self, input: Any, hx: Optional[Tuple[Any, Any]] = None) -> Any:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        output, state = self._layers(input, hx, None)
        return output, state

    def _forward_packed(self, packed: Any, hx: Any) -> Any:
        """As nn.LSTM on a PackedSequence (sorted or not): the padded batch
        in the rows' own order through the layers' lengths variants, the
        output packed again as the input is, the state in the rows' order."""
        from torch.nn.utils.rnn import pad_packed_sequence
        from ._compile import _repack
        padded, lengths = pad_packed_sequence(packed)
        if self._packed_pairs is None:
            self._packed_pairs = self._make_packed_pairs()
        output, state = self._layers(padded, hx, lengths.to(torch.int64))
        return _repack(output, packed), state

    def _layers(self, input: Any, hx: Any, lengths: Any) -> Any:
        """The layers on `input` (time-major when `lengths` is given), from
        `hx`; with `lengths`, row b runs its first lengths[b] steps."""
        lstm = self.module
        batch_first = lstm.batch_first and lengths is None
        if input.dim() != 3:
            raise RecurError(f"input must be [T, B, {lstm.input_size}] "
                             f"([B, T, ...] with batch_first), got shape "
                             f"{list(input.shape)}")
        x = input.transpose(0, 1) if batch_first else input
        if x.shape[2] != lstm.input_size:
            raise RecurError(f"input has {x.shape[2]} features, the LSTM takes "
                             f"{lstm.input_size}")
        x = x.contiguous()
        count = 2 if lstm.bidirectional else 1
        cell_state = isinstance(lstm, torch.nn.LSTM)
        hx = _state(hx, cell_state, [lstm.num_layers * count, x.shape[1], lstm.hidden_size],
                    "layers × directions", x, getattr(lstm, "proj_size", 0))
        finals = []
        pairs, lengths_input = self._pairs, ()
        if lengths is not None:
            pairs, lengths_input = self._packed_pairs, (lengths,)
            # Each row reversed within its length (past it, in place).
            lengths = lengths.to(x.device)
            steps = torch.arange(x.shape[0], device=x.device)[:, None]
            reversed_steps = torch.where(steps < lengths[None, :], lengths[None, :] - 1 - steps,
                                         steps)

        def flip(sequence):
            """The reverse direction runs forward in time on the sequence
            reversed (within each row's length); autograd reverses its
            gradients back."""
            if lengths is None:
                return sequence.flip(0)
            index = reversed_steps[:, :, None].expand(-1, -1, sequence.shape[2])
            return sequence.gather(0, index)

        for layer in range(lstm.num_layers):
            outputs = []
            for direction in range(count):
                index = layer * count + direction
                source = flip(x) if direction else x
                y, *final = pairs[index].apply(source, *lengths_input,
                                               *(value[index].contiguous() for value in hx))
                outputs.append(flip(y) if direction else y)
                finals += final
            x = outputs[0] if count == 1 else torch.cat(outputs, dim=2)
            # nn.LSTM's (nn.GRU's) dropout: on every layer's output but the last's.
            if lstm.dropout and self.training and layer + 1 < lstm.num_layers:
                x = torch.nn.functional.dropout(x, lstm.dropout, training=True)
        output = x.transpose(0, 1) if batch_first else x
        return output, _stacked(finals, cell_state)

    def extra_repr(self) -> str:
        return f"{len(self._pairs)} compiled layer directions"


class TrainableLM(torch.nn.Module):
    """A compiled language model (nn.Embedding -> nn.LSTM or nn.GRU ->
    nn.Linear, as recur.compile recognises it) that trains: called as the module is
    (`logits = trainable(tokens)`, or `logits, hidden =
    trainable(tokens, hidden)` for a module that carries its state), its
    outputs carry a grad_fn, and `loss.backward()` fills the module's own
    parameters' .grad. One compiled forward (which keeps every layer's
    output sequence) and one compiled backward for the whole model."""

    def __init__(self, module: Any, pair: _Pair, lm: Any) -> None:
        super().__init__()
        self.module = module
        self._pair, self._lm = pair, lm

    def forward(self, tokens: Any, hidden: Optional[Any] = None) -> Any:
        lm, pair = self._lm, self._pair
        if tokens.dim() != 2:
            raise RecurError(f"tokens must be [T, B], got shape {list(tokens.shape)}")
        if not lm.stateful:
            if hidden is not None:
                raise RecurError(f"{type(self.module).__name__}.forward takes the tokens "
                                 f"only; it carries no state")
            logits = pair.apply(tokens)
            return logits.reshape(-1, logits.shape[-1]) if lm.flatten else logits
        layers = lm.lstm.num_layers
        cell_state = isinstance(lm.lstm, torch.nn.LSTM)
        hidden = _state(hidden, cell_state, [layers, tokens.shape[1], lm.lstm.hidden_size],
                        "layers", tokens)
        state = [value[layer].contiguous() for layer in range(layers) for value in hidden]
        logits, *final = pair.apply(tokens, *state)
        logits = logits.reshape(-1, logits.shape[-1]) if lm.flatten else logits
        return logits, _stacked(final, cell_state)


class TrainableCells(torch.nn.Module):
    """recur.compile_rnn(cells, train=True): cells written in PyTorch,
    compiled, that train. Called as recur.CompiledCells is, `y, states =
    trainable(x, states)` (or with `lengths`); the outputs carry a grad_fn,
    and `loss.backward()` fills the cells' parameters' .grad (the cells are
    this module's submodules, their parameters shared, not copied). Each
    layer is one pair of compiled models per input size and state structure,
    compiled on first use: its forward, which also returns the states that
    entered each step (recur.keep_activations), and its vector-Jacobian
    product (recur.vjp), whose backward recurrence recur-differentiate
    derives from the cell's region."""

    def __init__(self, cells: List[Any], single: bool, target: str, fusion: Optional[str],
                 threads: Optional[int], extra_flags: Sequence[str], verbose: bool) -> None:
        super().__init__()
        from ._cells import CompiledCells
        self.cells = torch.nn.ModuleList(cells)
        self.single = single
        # The argument checks and their messages are the inference module's.
        self._checker = CompiledCells(cells, single, target, fusion, threads, extra_flags,
                                      verbose)
        self._flags = [f"--target={target}"] + ([f"--fusion={fusion}"] if fusion else []) + \
            list(extra_flags)
        self._threads, self._verbose, self._target = threads, verbose, target
        self._pairs: Dict[Tuple, _Pair] = {}

    def _tensor(self, cell: Any, local: str, traced: Any) -> Any:
        """The cell's own parameter (or buffer) named `local`, which the
        optimizer updates; the traced value for a constant."""
        for get in (cell.get_parameter, cell.get_buffer):
            try:
                return get(local)
            except AttributeError:
                pass
        return traced

    def _pair(self, layer: int, input_size: int, sizes: Tuple[int, ...], is_tuple: bool,
              lengths: bool) -> _Pair:
        key = (layer, input_size, sizes, is_tuple, lengths)
        if key not in self._pairs:
            from ._cells import _module_text, _translate
            from ._compile import _build
            cell = self.cells[layer]
            prefix = "" if self.single else f"{layer}."
            traced = _translate(cell, input_size, list(sizes), is_tuple, prefix)
            models = []
            for attribute, what in (("recur.keep_activations", ""), ("recur.vjp", ", backward")):
                ir, weights = _module_text([traced], input_size, [list(sizes)], lengths,
                                           attribute)
                label = f"{type(cell).__name__} ({self._target}){what}"
                model = Model(_build(ir, self._flags, label, self._verbose)[0])
                if self._threads is not None:
                    model.set_threads(self._threads)
                models.append(model)
            parameters = {name: self._tensor(cell, name[len(prefix):], value)
                          for name, value in weights.items()}
            self._pairs[key] = _Pair(models[0], models[1], parameters)
        return self._pairs[key]

    def forward(self, x: Any, states: Any, lengths: Any = None) -> Tuple[Any, Any]:
        from ._compile import _sequence_lengths
        tensors, tuples = self._checker._structure(x, states)
        if lengths is not None:
            lengths = _sequence_lengths(lengths, x.shape[1])
        y, result = x, []
        for layer, (values, is_tuple) in enumerate(zip(tensors, tuples)):
            pair = self._pair(layer, y.shape[2], tuple(v.shape[1] for v in values), is_tuple,
                              lengths is not None)
            inputs = [y] + ([lengths] if lengths is not None else []) + values
            outputs = pair.apply(*inputs)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            y, finals = outputs[0], list(outputs[1:])
            result.append(tuple(finals) if is_tuple else finals[0])
        return y, (result[0] if self.single else result)


def compile_for_training(module: Any, target: str, fusion: Optional[str],
                         threads: Optional[int], extra_flags: Sequence[str],
                         verbose: bool, seq: Optional[int], batch: Optional[int]) -> Any:
    """recur.compile(module, train=True): an nn.LSTM or a language model."""
    from ._compile import (_build, _check_float32_module, _parameters, _plan, _recognise,
                           _run, _tool)
    _check_float32_module(module)
    flags = [f"--target={target}"] + ([f"--fusion={fusion}"] if fusion else []) + \
        list(extra_flags)
    libraries: Dict[Tuple, str] = {}

    def load(gen: List[str], label: str) -> Model:
        key = tuple(gen)
        if key not in libraries:
            ir = _run([_tool("recur-gen"), *gen], "recur-gen")
            libraries[key] = _build(ir, flags, label, verbose)[0]
        model = Model(libraries[key])
        if threads is not None:
            model.set_threads(threads)
        return model

    def pair(gen: List[str], label: str, parameters: Dict[str, Any]) -> _Pair:
        return _Pair(load(gen + ["--keep-activations"], label),
                     load(gen + ["--vjp"], f"{label}, backward"), parameters)

    shape = (["--seq", str(int(seq))] if seq is not None else []) + \
        (["--batch", str(int(batch))] if batch is not None else [])
    if isinstance(module, (torch.nn.LSTM, torch.nn.GRU, torch.nn.RNN)):
        from ._compile import _gen_command
        kind = _gen_command(module)
        proj = getattr(module, "proj_size", 0)
        count = 2 if module.bidirectional else 1

        def layer_pairs(extra: List[str]) -> List[_Pair]:
            pairs = []
            for layer in range(module.num_layers):
                width = module.input_size if layer == 0 else (proj or module.hidden_size) * count
                gen = kind + ["--input", str(width), "--hidden", str(module.hidden_size),
                       "--state"] + (["--no-bias"] if not module.bias else []) + \
                    (["--proj-size", str(proj)] if proj else []) + extra
                kinds = ["weight_ih", "weight_hh"] + \
                    (["bias_ih", "bias_hh"] if module.bias else []) + \
                    (["weight_hr"] if proj else [])
                for direction in range(count):
                    suffix = f"_l{layer}" + ("_reverse" if direction else "")
                    parameters = {f"{kind}_l0": getattr(module, kind + suffix)
                                  for kind in kinds}
                    pairs.append(pair(gen, f"{type(module).__name__} layer {layer} "
                                      f"({target})", parameters))
            return pairs

        # The lengths variant keeps B dynamic: its steps run on the rows still
        # active.
        packed_shape = ["--seq", str(int(seq))] if seq is not None else []
        return TrainableRNN(module, layer_pairs(shape),
                            lambda: layer_pairs(packed_shape + ["--lengths"]))
    # A language model: refused options first, with their names.
    for name, submodule in module.named_modules():
        if isinstance(submodule, torch.nn.Dropout) and submodule.p > 0 and submodule.training:
            raise RecurError(f"recur.compile(train=True): '{name}' (nn.Dropout(p="
                             f"{submodule.p})) in train mode is not compiled for a language "
                             f"model yet; set p=0, or compile its recurrent layers alone")
        if isinstance(submodule, torch.nn.RNNBase) and submodule.training and \
                submodule.dropout:
            raise RecurError(f"recur.compile(train=True): '{name}' (nn."
                             f"{type(submodule).__name__} dropout={submodule.dropout}) in train "
                             f"mode is not compiled for a language model yet; compile its "
                             f"recurrent layers alone")
    plan = _plan(module, False, seq, batch)
    lm = _recognise(module)
    for option, value in (("batch_first", lm.lstm.batch_first),
                          ("bidirectional", lm.lstm.bidirectional),
                          ("proj_size", getattr(lm.lstm, "proj_size", 0)),
                          ("log_softmax", lm.log_softmax)):
        if value:
            raise RecurError(f"recur.compile(train=True): a language model with {option} has "
                             f"no compiled gradient yet")
    parameters = _parameters(module, plan.names)
    forward_pair = pair(plan.gen, f"{type(module).__name__} ({target})", {})
    # The weights in the models' order.
    forward_pair.parameters = {spec.name: parameters[spec.name]
                               for spec in forward_pair.forward.weights}
    return TrainableLM(module, forward_pair, lm)

