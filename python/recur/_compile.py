"""recur.compile: a PyTorch nn.LSTM or LSTM language model to a compiled
Recur model.

A language model is recognised by its structure, traced with torch.fx: tokens go
through an nn.Embedding, an nn.LSTM (its output sequence) and an nn.Linear,
in that order (nn.Dropout between them is allowed in eval mode, where it is
the identity). Attribute names do not matter. The IR comes from recur-gen,
the library from recur-compile, cached by content, and the module's
parameters are bound through DLPack (no file).
"""

import hashlib
import os
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple, Type, Union

from ._errors import RecurError
from ._model import Model


def _tool(name: str) -> str:
    """recur-gen or recur-compile: $RECUR_BIN, the package's own bin/ (an
    installed copy carries the tools), the build tree this package sits in
    ($RECUR_BUILD_DIR, default python/../build), then PATH: the order in
    which _runtime looks for the runtime."""
    here = os.path.dirname(os.path.abspath(__file__))
    directories = [os.environ.get("RECUR_BIN"), os.path.join(here, "bin"),
                   os.path.join(os.environ.get("RECUR_BUILD_DIR",
                                               os.path.join(here, "..", "..", "build")), "bin")]
    for directory in filter(None, directories):
        path = os.path.join(directory, name)
        if os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if not found:
        raise RecurError(f"{name} not found: build Recur (scripts/build.sh), or set RECUR_BIN "
                         f"to the directory that holds it")
    return found


def _cache_dir() -> str:
    root = os.environ.get("RECUR_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "recur")
    os.makedirs(root, exist_ok=True)
    return root


def _run(command: Sequence[str], what: str) -> str:
    process = subprocess.run(command, capture_output=True, text=True)
    if process.returncode != 0:
        raise RecurError(f"{what} failed ({' '.join(command)}):\n{process.stderr.strip()}")
    return process.stdout


class _LanguageModel:
    """What was recognised: the three modules and their names in the module."""

    def __init__(self, embedding, lstm, linear, names, stateful, flatten, log_softmax):
        self.embedding, self.lstm, self.linear = embedding, lstm, linear
        self.names = names  # "embedding"/"lstm"/"proj" -> the module's own name
        self.stateful = stateful  # forward(tokens, hidden) -> (logits, hidden)
        self.flatten = flatten  # the result viewed as [T·B, V]
        self.log_softmax = log_softmax  # log-probabilities rather than logits


def _is_flatten(node: Any, vocab: int) -> bool:
    """x.view(-1, V) or x.reshape(-1, V)."""
    return (node.op == "call_method" and node.target in ("view", "reshape") and
            list(node.args[1:]) in ([-1, vocab], [[-1, vocab]], [(-1, vocab)]))


def _is_log_softmax(node: Any, last: int) -> bool:
    """log_softmax over the last dimension (`last`, or -1)."""
    import torch
    if node.op == "call_function" and node.target in (torch.nn.functional.log_softmax,
                                                       torch.log_softmax):
        dim = node.kwargs.get("dim", node.args[1] if len(node.args) > 1 else None)
    elif node.op == "call_method" and node.target == "log_softmax":
        dim = node.kwargs.get("dim", node.args[1] if len(node.args) > 1 else None)
    else:
        return False
    return dim in (last, -1) and not node.kwargs.get("dtype")


def _check_recurrent(layers: Any) -> None:
    """The nn.LSTM / nn.GRU / nn.RNN options Recur compiles; anything else is
    refused by name."""
    if layers.dropout and layers.training:
        raise RecurError(f"nn.{type(layers).__name__} dropout={layers.dropout} in train mode: "
                         f"Recur runs inference; call .eval() (dropout is then the identity)")


def _RECURRENT_LAYERS() -> Tuple[type, ...]:
    """The torch modules of recurrent layers Recur compiles."""
    import torch
    return (torch.nn.LSTM, torch.nn.GRU, torch.nn.RNN)


def _gen_command(layers: Any, suffix: str = "") -> List[str]:
    """recur-gen's subcommand for `layers` (lstm, gru, rnn; + suffix, e.g.
    "-lm") and the nonlinearity of an nn.RNN."""
    import torch
    if isinstance(layers, torch.nn.LSTM):
        return ["lstm" + suffix]
    if isinstance(layers, torch.nn.GRU):
        return ["gru" + suffix]
    return ["rnn" + suffix, "--nonlinearity", layers.nonlinearity]


def _tracer() -> Any:
    """A torch.fx tracer that can unpack an nn.LSTM's result."""
    import torch
    import torch.fx

    class LstmResultProxy(torch.fx.Proxy):
        """`out, (h, c) = lstm(x)` unpacks two values. fx finds the count in
        the caller's bytecode, which torch 1.13 cannot read on Python 3.11."""

        def __iter__(self):
            return iter((self[0], self[1]))

    class Tracer(torch.fx.Tracer):
        def proxy(self, node):
            if node.op == "call_module" and isinstance(
                    self.root.get_submodule(node.target), _RECURRENT_LAYERS()):
                return LstmResultProxy(node, self)
            return super().proxy(node)

    return Tracer()


def _recognise(module: Any) -> "_LanguageModel":
    """The LM's embedding, LSTM and projection, from a torch.fx trace of its
    forward; a RecurError says what did not fit."""
    import torch
    import torch.fx
    nn = torch.nn
    try:
        graph = _tracer().trace(module)
    except Exception as error:  # fx raises many kinds
        raise RecurError(f"cannot trace {type(module).__name__}.forward with torch.fx: "
                         f"{error}") from error
    placeholders = [node for node in graph.nodes if node.op == "placeholder"]
    if len(placeholders) not in (1, 2):
        raise RecurError(f"{type(module).__name__}.forward takes {len(placeholders)} inputs; "
                         f"an LM takes the tokens, and perhaps its recurrent layers' state")
    expected = [("embedding", nn.Embedding), ("lstm", _RECURRENT_LAYERS()),
                ("proj", nn.Linear)]
    found, node, state_out = {}, placeholders[0], None
    # After the projection: logits.view(-1, V) (reshape) and log_softmax over
    # the vocabulary, as PyTorch's word_language_model ends.
    tail = {"flatten": False, "log_softmax": False}

    def is_item(user, index):
        return (user.op == "call_function" and getattr(user.target, "__name__", "") ==
                "getitem" and user.args[1] == index)

    while True:
        # (Values nobody reads, such as the LSTM's unused (h_n, c_n), aside.)
        users = [user for user in node.users if user.users or user.op == "output"]
        if "lstm" in found and node is found["lstm"][2]:
            # The LSTM's (h_n, c_n), output[1], may only be returned.
            state_users = [user for user in users if is_item(user, 1)]
            if len(state_users) == 1 and all(u.op == "output" for u in state_users[0].users):
                state_out = state_users[0]
                users.remove(state_out)
        if len(users) != 1:
            break
        user = users[0]
        if user.op == "call_module":
            submodule = module.get_submodule(user.target)
            if isinstance(submodule, nn.Dropout):
                if submodule.training:
                    raise RecurError(f"'{user.target}' (nn.Dropout) in train mode: call .eval()")
            elif len(found) < 3 and isinstance(submodule, expected[len(found)][1]):
                found[expected[len(found)][0]] = (user.target, submodule, user)
            else:
                break
        elif "proj" in found and _is_flatten(user, found["proj"][1].out_features):
            if tail["flatten"]:
                break
            tail["flatten"] = True
        elif "proj" in found and _is_log_softmax(user, 1 if tail["flatten"] else 2):
            if tail["log_softmax"]:
                break
            tail["log_softmax"] = True
        elif not (is_item(user, 0) and "lstm" in found and "proj" not in found):
            break  # only the LSTM's output sequence, output[0], goes on
        node = user
    # The result: the logits, or (logits, (h_n, c_n)) from forward(tokens, hidden).
    output = next(iter(node.users)) if len(node.users) == 1 else None
    stateful = len(placeholders) == 2
    if output is not None and output.op == "output":
        result = output.args[0]
        ends = (result is node) if not stateful else (
            isinstance(result, (tuple, list)) and len(result) == 2 and result[0] is node and
            result[1] is state_out and len(found["lstm"][2].args) == 2 and
            found["lstm"][2].args[1] is placeholders[1])
    else:
        ends = False
    if len(found) != 3 or not ends:
        have = " -> ".join(type(m).__name__ for _, m, _ in found.values()) or "nothing"
        raise RecurError(
            f"{type(module).__name__} is not a recurrent language model that Recur "
            f"recognises: expected tokens -> nn.Embedding -> nn.LSTM, nn.GRU or nn.RNN (its "
            f"output) -> nn.Linear -> logits, "
            f"or forward(tokens, hidden) -> (logits, hidden) with those layers taking and "
            f"returning hidden (nn.Dropout allowed in eval mode; the logits may be viewed as "
            f"[-1, V] and go through log_softmax over V), found {have}")
    embedding, lstm, linear = (found[key][1] for key in ("embedding", "lstm", "proj"))
    _check_recurrent(lstm)
    if embedding.max_norm is not None:
        raise RecurError("nn.Embedding option max_norm is not supported (it renormalizes rows)")
    if linear.bias is None:
        raise RecurError("nn.Linear option bias=False is not supported yet")
    directions = 2 if lstm.bidirectional else 1
    if lstm.input_size != embedding.embedding_dim or \
            linear.in_features != directions * (lstm.proj_size or lstm.hidden_size):
        raise RecurError("the embedding, LSTM and projection sizes do not chain")
    return _LanguageModel(embedding, lstm, linear,
                          {key: target for key, (target, _, _) in found.items()}, stateful,
                          **tail)


def _sequence_lengths(lengths: Any, batch: int) -> Any:
    """`lengths` as a model's `lengths` input: an int64 CPU tensor of
    `batch` entries (each in [1, T], which the runtime checks, naming the
    row)."""
    import torch
    if not isinstance(lengths, torch.Tensor):
        lengths = torch.as_tensor(lengths)
    if lengths.dim() != 1 or lengths.shape[0] != batch or \
            lengths.dtype.is_floating_point or lengths.dtype.is_complex:
        raise RecurError(f"lengths must be [B] integers with B = {batch} (the input's "
                         f"batch), got {lengths.dtype} of shape {list(lengths.shape)}")
    return lengths.to(device="cpu", dtype=torch.int64)


def _repack(output: Any, packed: Any) -> Any:
    """`output` ([T, B, ...], rows in the batch's own order) as a
    PackedSequence with `packed`'s batch sizes and order."""
    import torch
    from torch.nn.utils.rnn import PackedSequence
    steps = output
    if packed.sorted_indices is not None:
        steps = steps.index_select(1, packed.sorted_indices.to(steps.device))
    data = torch.cat([steps[t, :int(size)] for t, size in enumerate(packed.batch_sizes)])
    return PackedSequence(data, packed.batch_sizes, packed.sorted_indices,
                          packed.unsorted_indices)


class _Compiled:
    """A compiled module with its parameters bound. `model` is the runtime's
    Model; `library` the compiled file; `cache_hit` whether it came from the
    cache."""

    def __init__(self, model, library, cache_hit, lstm, state, flatten=False,
                 with_lengths=None):
        import torch
        self.model, self.library, self.cache_hit = model, library, cache_hit
        # Makes the model's variant that takes sequence lengths (recur-gen
        # --lengths), at the first packed call; None where there is none.
        self._with_lengths, self._lengths_model = with_lengths, None
        # The state's first dimension, as nn.LSTM's: layers × directions.
        self._states = lstm.num_layers * (2 if lstm.bidirectional else 1)
        self._hidden, self._batch_first = lstm.hidden_size, lstm.batch_first
        self._output = getattr(lstm, "proj_size", 0) or lstm.hidden_size  # h's size
        self._state, self._flatten = state, flatten
        # An LSTM's state is (h, c); a GRU's or an RNN's, h alone.
        self._cell_state = isinstance(lstm, torch.nn.LSTM)

    def _shaped(self, result):
        """The module's view of the result: [T·B, V] when it flattens."""
        return result.reshape(-1, result.shape[-1]) if self._flatten else result

    def _run_packed(self, packed, hx):
        """Runs on a PackedSequence as torch's module does: the padded batch
        with each row's length through the model's lengths variant; returns
        the output as a PackedSequence with the input's batch sizes and
        order, and the final state in the rows' original order."""
        from torch.nn.utils.rnn import pad_packed_sequence
        padded, lengths = pad_packed_sequence(packed, batch_first=self._batch_first)
        output, state = self._run(padded, hx, lengths=lengths)
        return _repack(output.transpose(0, 1) if self._batch_first else output, packed), state

    def _run(self, first, hx, lengths=None):
        """Runs on `first` (tokens or the input sequence) and, for a model
        with the state, hx (zeros if None): (h0, c0) [L·D, B, H] for an
        LSTM, h0 for a GRU or an RNN; with `lengths` ([B]), on the model's
        lengths variant. Returns the result and the final state stacked as
        torch returns it."""
        passed = "(h0, c0)" if self._cell_state else "h0"
        batch = first.shape[0 if self._batch_first else 1]
        model = self.model
        if lengths is not None:
            lengths = _sequence_lengths(lengths, batch)
            if self._lengths_model is None:
                self._lengths_model = self._with_lengths()
            model = self._lengths_model
        inputs = [first] + ([lengths] if lengths is not None else [])
        if not self._state:
            if hx is not None:
                raise RecurError(f"this model was compiled without the recurrent layers' "
                                 f"state: compile with state=True to pass {passed}")
            return self._shaped(model.run(*inputs))
        import torch
        sizes = [("h0", self._output, "proj_size or hidden")]
        if self._cell_state:
            sizes.append(("c0", self._hidden, "hidden"))
        if hx is None:
            hx = tuple(torch.zeros(self._states, batch, size, device=first.device)
                       for _, size, _ in sizes)
        elif not self._cell_state:
            if not isinstance(hx, torch.Tensor):
                raise RecurError(f"an nn.GRU's or nn.RNN's state is one tensor h0, got "
                                 f"{type(hx).__name__}")
            hx = (hx,)
        if self._cell_state and (not isinstance(hx, tuple) or len(hx) != 2):
            raise RecurError("an LSTM's state is a tuple (h0, c0)")
        for value, (name, size, what) in zip(hx, sizes):
            expected = (self._states, batch, size)
            if tuple(value.shape) != expected:
                raise RecurError(f"{name} has shape {list(value.shape)}, expected "
                                 f"{list(expected)} (layers × directions, batch, {what})")
        # The model's state inputs come by layer, then direction: nn.LSTM's order.
        for index in range(self._states):
            inputs += [value[index] for value in hx]
        result, *state = model.run(*inputs)
        if not self._cell_state:
            return self._shaped(result), torch.stack(state)
        return self._shaped(result), (torch.stack(state[0::2]), torch.stack(state[1::2]))

    def __repr__(self) -> str:
        return f"recur.{type(self).__name__}({self.library!r}, {self.model!r})"


class CompiledLM(_Compiled):
    """A compiled LSTM, GRU or RNN LM, called like the module: `logits =
    compiled(tokens)` (tokens [T, B] int64, logits [T, B, V]; [B, T] and
    [B, T, V] for batch_first layers); compiled with state=True,
    `logits, (h_n, c_n) = compiled(tokens, (h0, c0))` (an LSTM's; `h_n`
    and `h0` for a GRU or RNN) carries the state from one batch of a long
    text to the next.

    `compiled(tokens, lengths=lengths)` runs a batch of sentences of
    different lengths ([B] integers in [1, T]) as the module would with its
    recurrent layers on a PackedSequence (pack_padded_sequence, then
    pad_packed_sequence before the projection): row b's recurrence stops
    at its length, its state is the one after its last token, and its
    logits past the length are the projection of zeros (the bias), for a
    loss to mask."""

    def __call__(self, tokens: Any, hx: Optional[Any] = None, lengths: Any = None) -> Any:
        return self._run(tokens, hx, lengths)


def _is_packed(value: Any) -> bool:
    from torch.nn.utils.rnn import PackedSequence
    return isinstance(value, PackedSequence)


class CompiledLSTM(_Compiled):
    """A compiled nn.LSTM, called as the module is: `output, (h_n, c_n) =
    compiled(input, (h0, c0))`, the state optional (zeros). `input` may be a
    PackedSequence, sorted or not: `output` is one too, as torch's."""

    def __call__(self, input: Any, hx: Optional[Tuple[Any, Any]] = None) -> Any:
        return self._run_packed(input, hx) if _is_packed(input) else self._run(input, hx)


class CompiledRNN(_Compiled):
    """A compiled nn.GRU or nn.RNN, called as the module is: `output, h_n =
    compiled(input, h0)`, h0 optional (zeros). `input` may be a
    PackedSequence, sorted or not: `output` is one too, as torch's."""

    def __call__(self, input: Any, hx: Optional[Any] = None) -> Any:
        return self._run_packed(input, hx) if _is_packed(input) else self._run(input, hx)


class _Plan:
    """What recognition found: the recur-gen command for the module, its
    LSTM, the result's class and how the module's parameters are named in
    the model (Recur's prefix -> the submodule's name)."""

    def __init__(self, gen: List[str], lstm: Any, result: Type[_Compiled],
                 names: Dict[str, str], state: bool, flatten: bool) -> None:
        self.gen, self.lstm, self.result = gen, lstm, result
        self.names, self.state, self.flatten = names, state, flatten


def _check_float32_module(module: Any) -> None:
    """What recur.compile takes: a torch.nn.Module with float32 parameters."""
    import torch
    if not isinstance(module, torch.nn.Module):
        raise RecurError(f"recur.compile takes a torch.nn.Module, got {type(module).__name__}")
    dtypes = {p.dtype for p in module.parameters()}
    if dtypes != {torch.float32}:
        raise RecurError(f"parameters of dtype {', '.join(sorted(map(str, dtypes)))}: "
                         f"recur.compile takes float32 modules for now")


def _plan(module: Any, state: bool, seq: Optional[int], batch: Optional[int]) -> _Plan:
    """Recognition: what to generate for `module` (an nn.LSTM, or an LM that
    _recognise accepts); a RecurError says what does not fit."""
    import torch
    _check_float32_module(module)
    if isinstance(module, _RECURRENT_LAYERS()):
        _check_recurrent(module)
        lstm = module
        result = CompiledLSTM if isinstance(module, torch.nn.LSTM) else CompiledRNN
        gen = _gen_command(module) + ["--input", str(lstm.input_size), "--state"]
        names = {"": ""}  # the module itself, its state_dict names as they are
        state, flatten = True, False
    else:
        lm = _recognise(module)
        if lm.linear.out_features != lm.embedding.num_embeddings:
            raise RecurError(f"the projection has {lm.linear.out_features} outputs for a "
                             f"vocabulary of {lm.embedding.num_embeddings}: an LM predicts "
                             f"its own vocabulary")
        lstm, result = lm.lstm, CompiledLM
        state, flatten = state or lm.stateful, lm.flatten
        gen = _gen_command(lstm, "-lm") + ["--vocab", str(lm.embedding.num_embeddings),
               "--embed", str(lm.embedding.embedding_dim)] + (["--state"] if state else []) + \
            (["--log-softmax"] if lm.log_softmax else [])
        # The model names the recurrent layers after their kind: lstm., gru., rnn.
        prefixes = {"embedding": "embedding.", "lstm": _gen_command(lstm)[0] + ".",
                    "proj": "proj."}
        names = {prefixes[key]: target_name for key, target_name in lm.names.items()}
    gen += ["--hidden", str(lstm.hidden_size), "--layers", str(lstm.num_layers)]
    gen += [flag for flag, on in (("--batch-first", lstm.batch_first), ("--no-bias", not lstm.bias),
                                  ("--bidirectional", lstm.bidirectional)) if on]
    if getattr(lstm, "proj_size", 0):
        gen += ["--proj-size", str(lstm.proj_size)]
    if seq is not None:
        gen += ["--seq", str(int(seq))]
    if batch is not None:
        gen += ["--batch", str(int(batch))]
    return _Plan(gen, lstm, result, names, state, flatten)


def _build(ir: str, flags: List[str], label: str, verbose: bool) -> Tuple[str, bool]:
    """recur-compile `ir` with `flags` into the cache, named by a hash of the
    IR, the flags and the compiler; returns the library and whether it was
    already there."""
    compiler = _tool("recur-compile")
    stat = os.stat(compiler)
    key = hashlib.sha256("\0".join(
        [ir, *flags, compiler, str(stat.st_size), str(stat.st_mtime_ns)]).encode()).hexdigest()
    library = os.path.join(_cache_dir(), f"lm-{key[:24]}.so")
    if os.path.exists(library):
        return library, True
    source = library[:-3] + f".{os.getpid()}.mlir"
    partial = library + f".{os.getpid()}.tmp"
    with open(source, "w") as f:
        f.write(ir)
    if verbose:
        print(f"recur: compiling {label}", file=sys.stderr)
    try:
        _run([compiler, source, "-o", partial, "--quiet", *flags], "recur-compile")
        os.replace(partial, library)  # atomic: a concurrent compile never sees half a file
    finally:
        for path in (source, partial):
            if os.path.exists(path):
                os.remove(path)
    return library, False


def _parameters(module: Any, names: Dict[str, str]) -> Dict[str, Any]:
    """`module`'s parameters under Recur's names: its prefix and the
    parameter's own name."""
    parameters = {}
    for prefix, target_name in names.items():
        for name, parameter in module.get_submodule(target_name).named_parameters():
            parameters[prefix + name] = parameter
    return parameters


def compile(module: Any, target: str = "cpu", fusion: Optional[str] = None,
            seq: Optional[int] = None, batch: Optional[int] = None,
            threads: Optional[int] = None, state: bool = False,
            extra_flags: Sequence[str] = (),
            verbose: bool = False, train: bool = False) -> Any:
    """Compiles `module` with Recur and binds its current parameters: an
    nn.LSTM (returns a CompiledLSTM, called as the module), an nn.GRU or
    nn.RNN (a CompiledRNN, called as the module), or an Embedding
    -> LSTM -> Linear language model (a CompiledLM; with state=True it takes
    and returns the recurrent layers' state too).

    target: "cpu" or "cuda" (recur-compile --target); fusion: recur-compile
    --fusion (default: the target's); seq/batch: fix T and B (else dynamic;
    the variant for packed batches keeps B dynamic);
    threads: CPU threads for the runs. The library is cached by the content
    of its IR and flags (RECUR_CACHE_DIR, default ~/.cache/recur), so
    compiling the same architecture again is instant.

    An nn.LSTM, nn.GRU or nn.RNN also takes a PackedSequence (sorted or
    not) and returns one, as torch's modules do, and an LM takes
    `lengths=` (CompiledLM): the first such call compiles the model's
    variant that takes each row's length (cached too), bound with the
    parameters as they were at this call.

    train=True (an nn.LSTM, nn.GRU or nn.RNN, or their LM) returns a
    recur.TrainableRNN (recur.TrainableLM) instead: a torch.nn.Module whose
    outputs carry a grad_fn, so that any loss's
    backward() fills the module's own parameters' .grad, for any
    torch.optim optimizer, and under DistributedDataParallel
    (docs/training.md)."""
    if train:
        from ._train import compile_for_training
        if state:
            raise RecurError("recur.compile(train=True) takes the state as nn.LSTM does "
                             "(hx); state=True is for language models")
        return compile_for_training(module, target, fusion, threads, extra_flags, verbose,
                                    seq, batch)
    plan = _plan(module, state, seq, batch)
    flags = [f"--target={target}"] + ([f"--fusion={fusion}"] if fusion else []) + \
        list(extra_flags)

    def build(gen, parameters):
        ir = _run([_tool("recur-gen"), *gen], "recur-gen")
        library, cache_hit = _build(ir, flags, f"{type(module).__name__} ({target})", verbose)
        model = Model(library)
        if threads is not None:
            model.set_threads(threads)
        model.bind(parameters)
        return model, library, cache_hit

    # The parameters as they are now: a packed call's variant binds the same.
    parameters = _parameters(module, plan.names)
    model, library, cache_hit = build(plan.gen, parameters)
    snapshot = {name: value.detach().clone() for name, value in parameters.items()}
    # The lengths variant keeps B dynamic even when `batch` fixes it: its
    # steps run on the rows still active, fewer than B.
    gen = list(plan.gen)
    if "--batch" in gen:
        del gen[gen.index("--batch"):gen.index("--batch") + 2]
    with_lengths = lambda: build(gen + ["--lengths"], snapshot)[0]  # noqa: E731
    return plan.result(model, library, cache_hit, plan.lstm, plan.state, plan.flatten,
                       with_lengths)
