"""nn.GRU and nn.RNN compiled by Recur against PyTorch, module for module:
`recur.compile(module)` called as torch calls the module, with every option
(num_layers, bias, batch_first, bidirectional, nonlinearity, h0), at every
fusion level and on the CUDA emulator."""
import itertools

import pytest
import torch
import torch.nn as nn

import recur


def assert_close(got, want):
    assert got.shape == want.shape
    assert torch.all((got - want).abs() <= 1e-4 * (1 + want.abs())), (
        (got - want).abs().max())


@pytest.fixture(autouse=True)
def cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("RECUR_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


MODULES = {"gru": lambda **kw: nn.GRU(**kw),
           "rnn_tanh": lambda **kw: nn.RNN(nonlinearity="tanh", **kw),
           "rnn_relu": lambda **kw: nn.RNN(nonlinearity="relu", **kw)}


def check_matches(module, x, h0, **options):
    compiled = recur.compile(module, **options)
    assert isinstance(compiled, recur.CompiledRNN)
    with torch.no_grad():
        want, want_h = module(x, h0)
        want_zero, want_zero_h = module(x)
    got, got_h = compiled(x, h0)
    assert_close(got, want)
    assert_close(got_h, want_h)
    got, got_h = compiled(x)  # h0 absent: zeros, as torch
    assert_close(got, want_zero)
    assert_close(got_h, want_zero_h)


@pytest.mark.parametrize("kind,batch_first,bias,bidirectional",
                         [(kind, *options) for kind in MODULES
                          for options in itertools.product([False, True], repeat=3)])
def test_options_match_pytorch(kind, batch_first, bias, bidirectional):
    torch.manual_seed(hash((kind, batch_first, bias, bidirectional)) % 1000)
    module = MODULES[kind](input_size=5, hidden_size=7, num_layers=2, bias=bias,
                           batch_first=batch_first, bidirectional=bidirectional).eval()
    x = torch.randn((3, 4, 5) if batch_first else (4, 3, 5))
    check_matches(module, x, torch.randn(2 * (2 if bidirectional else 1), 3, 7))


@pytest.mark.parametrize("kind,options", [
    (kind, options) for kind in MODULES for options in (
        {"fusion": "none"}, {"fusion": "hoist"}, {"fusion": "cell"},
        {"fusion": "wavefront"}, {"target": "cuda-emulator"})])
def test_every_pipeline_matches_pytorch(kind, options):
    torch.manual_seed(100 + len(kind))
    module = MODULES[kind](input_size=16, hidden_size=32, num_layers=3).eval()
    check_matches(module, torch.randn(6, 5, 16), torch.randn(3, 5, 32), **options)


def test_state_of_the_wrong_shape_is_refused():
    module = nn.GRU(4, 6).eval()
    compiled = recur.compile(module)
    with pytest.raises(recur.RecurError, match=r"h0 has shape \[1, 2, 5\], expected \[1, 2, 6\]"):
        compiled(torch.randn(3, 2, 4), torch.zeros(1, 2, 5))


def test_dropout_in_train_mode_is_refused():
    with pytest.raises(recur.RecurError, match=r"nn.GRU dropout=0.5 in train mode"):
        recur.compile(nn.GRU(4, 6, num_layers=2, dropout=0.5))


class CellLM(nn.Module):
    """Embedding -> GRU or RNN -> Linear, word_language_model's shape, with
    attribute names of its own."""

    def __init__(self, kind, vocab, embed, hidden, layers):
        super().__init__()
        self.encoder = nn.Embedding(vocab, embed)
        self.rnn = MODULES[kind](input_size=embed, hidden_size=hidden, num_layers=layers)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        output, _ = self.rnn(self.encoder(tokens))
        return self.decoder(output)


class StatefulCellLM(CellLM):
    """The same, taking and returning the state (truncated BPTT's shape)."""

    def forward(self, tokens, hidden):
        output, hidden = self.rnn(self.encoder(tokens), hidden)
        return self.decoder(output), hidden


@pytest.mark.parametrize("kind", list(MODULES))
def test_lm_matches_pytorch(kind):
    torch.manual_seed(7)
    module = CellLM(kind, 23, 6, 8, 2).eval()
    compiled = recur.compile(module)
    assert isinstance(compiled, recur.CompiledLM)
    tokens = torch.randint(0, 23, (5, 3))
    with torch.no_grad():
        assert_close(compiled(tokens), module(tokens))


def test_stateful_gru_lm_carries_the_state():
    torch.manual_seed(8)
    module = StatefulCellLM("gru", 19, 5, 7, 2).eval()
    compiled = recur.compile(module)
    tokens = torch.randint(0, 19, (8, 2))
    want_state = got_state = torch.zeros(2, 2, 7)
    for window in (tokens[:4], tokens[4:]):
        with torch.no_grad():
            want, want_state = module(window, want_state)
        got, got_state = compiled(window, got_state)
        assert_close(got, want)
        assert_close(got_state, want_state)


def test_lstm_style_state_for_a_gru_is_refused():
    compiled = recur.compile(nn.GRU(4, 6).eval())
    with pytest.raises(recur.RecurError, match=r"state is one tensor h0, got tuple"):
        compiled(torch.randn(3, 2, 4), (torch.zeros(1, 2, 6),))


@pytest.mark.parametrize("options", [
    {}, {"proj_size": 3}, {"bidirectional": True, "bias": False}, {"batch_first": True}])
def test_lstm_written_as_a_generic_recurrence_matches_nn_lstm(options, tmp_path):
    """recur.lstm generalised to recur.rnn (recur-generalize-cells{lstm},
    which the pipelines leave off) compiles as any cell and still computes
    nn.LSTM."""
    import subprocess
    from recur._compile import _tool
    torch.manual_seed(9)
    module = nn.LSTM(5, 7, num_layers=2, **options).eval()
    gen = ["lstm", "--input", "5", "--hidden", "7", "--layers", "2", "--state"]
    gen += [flag for flag, key in (("--bidirectional", "bidirectional"),
                                   ("--batch-first", "batch_first")) if options.get(key)]
    gen += ["--no-bias"] if options.get("bias") is False else []
    gen += ["--proj-size", "3"] if options.get("proj_size") else []
    named = tmp_path / "lstm.mlir"
    generic = tmp_path / "generic.mlir"
    subprocess.run([_tool("recur-gen"), *gen, "-o", str(named)], check=True)
    subprocess.run([_tool("recur-opt"), str(named), "--recur-generalize-cells=lstm=true",
                    "-o", str(generic)], check=True)
    assert "recur.lstm" not in generic.read_text()
    library = tmp_path / "generic.so"
    subprocess.run([_tool("recur-compile"), str(generic), "-o", str(library), "--quiet"],
                   check=True)
    model = recur.load(library)
    model.bind({name: value.detach() for name, value in module.state_dict().items()})
    directions = 2 if options.get("bidirectional") else 1
    x = torch.randn((3, 4, 5) if options.get("batch_first") else (4, 3, 5))
    h0 = torch.randn(2 * directions, 3, options.get("proj_size") or 7)
    c0 = torch.randn(2 * directions, 3, 7)
    inputs = [x]
    for index in range(2 * directions):
        inputs += [h0[index], c0[index]]
    result, *state = model.run(*inputs)
    with torch.no_grad():
        want, (want_h, want_c) = module(x, (h0, c0))
    assert_close(result, want)
    assert_close(torch.stack(state[0::2]), want_h)
    assert_close(torch.stack(state[1::2]), want_c)


def packed_reference(module, x, lengths, state, batch_first=False):
    """torch's outputs for a padded batch with `lengths`: the module on the
    PackedSequence (unsorted rows), padded back to x's T."""
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                               enforce_sorted=False)
    with torch.no_grad():
        y, final = module(packed, state)
    y, _ = nn.utils.rnn.pad_packed_sequence(y, batch_first=batch_first,
                                            total_length=x.shape[1 if batch_first else 0])
    return y, final


LENGTHS_MODULES = dict(MODULES, lstm=lambda **kw: nn.LSTM(**kw))


@pytest.mark.parametrize("kind,options,pipeline", [
    (kind, options, pipeline)
    # One direction: at wavefront (and on the GPU's fused wavefront) the
    # two layers are one stack whose steps run on the rows still active.
    for kind, options in [("gru", {}), ("gru", {"bidirectional": True}),
                          ("rnn_tanh", {}), ("rnn_tanh", {"bidirectional": True}),
                          ("lstm", {}), ("lstm", {"bidirectional": True}),
                          ("lstm", {"proj_size": 8, "batch_first": True})]
    for pipeline in ({"fusion": "none"}, {"fusion": "hoist"}, {"fusion": "cell"},
                     {"fusion": "wavefront"}, {"target": "cuda-emulator"})])
def test_lengths_match_a_packed_sequence(kind, options, pipeline, tmp_path):
    """recur-gen --lengths: a padded batch with each row's length, checked
    against torch on the PackedSequence of the same rows (unsorted, lengths
    1 and T among them, one row much longer than the rest, B = 1): outputs
    past a row's length are zero and the final state is each row's at its
    own last step, in both directions."""
    import subprocess
    from recur._compile import _tool
    torch.manual_seed(11 + len(options))
    hidden = 16  # whole vectors: the fused step at `cell` on AVX-512
    module = LENGTHS_MODULES[kind](input_size=5, hidden_size=hidden, num_layers=2,
                                   **options).eval()
    gen = [{"rnn_tanh": "rnn"}.get(kind, kind), "--input", "5", "--hidden", str(hidden),
           "--layers", "2", "--lengths", "--state"]
    gen += [flag for flag, key in (("--bidirectional", "bidirectional"),
                                   ("--batch-first", "batch_first")) if options.get(key)]
    gen += ["--proj-size", str(options["proj_size"])] if "proj_size" in options else []
    source, library = tmp_path / "model.mlir", tmp_path / "model.so"
    subprocess.run([_tool("recur-gen"), *gen, "-o", str(source)], check=True)
    flags = [f"--{key}={value}" for key, value in pipeline.items()]
    subprocess.run([_tool("recur-compile"), str(source), *flags, "-o", str(library),
                    "--quiet"], check=True)
    model = recur.load(library)
    model.bind({name: value.detach() for name, value in module.state_dict().items()})
    layers = 2 * (2 if options.get("bidirectional") else 1)
    batch_first = options.get("batch_first", False)
    # The last batch's longest row is shorter than T: no row has the last steps.
    for lengths in ([6, 3, 1, 6, 2], [4], [1, 6, 1], [3, 2, 3]):
        batch = len(lengths)
        x = torch.randn((batch, 6, 5) if batch_first else (6, batch, 5))
        h0 = torch.randn(layers, batch, options.get("proj_size", hidden))
        state, inputs = h0, list(h0)
        if kind == "lstm":
            c0 = torch.randn(layers, batch, hidden)
            state, inputs = (h0, c0), [v for pair in zip(h0, c0) for v in pair]
        got, *got_state = model.run(x, torch.tensor(lengths), *inputs)
        want, want_state = packed_reference(module, x, torch.tensor(lengths), state,
                                            batch_first)
        assert_close(got, want)
        if kind == "lstm":
            assert_close(torch.stack(got_state[0::2]), want_state[0])
            assert_close(torch.stack(got_state[1::2]), want_state[1])
        else:
            assert_close(torch.stack(got_state), want_state)


def test_lengths_outside_one_to_t_are_refused(tmp_path):
    import subprocess
    from recur._compile import _tool
    source, library = tmp_path / "model.mlir", tmp_path / "model.so"
    subprocess.run([_tool("recur-gen"), "gru", "--input", "3", "--hidden", "4",
                    "--lengths", "-o", str(source)], check=True)
    subprocess.run([_tool("recur-compile"), str(source), "-o", str(library), "--quiet"],
                   check=True)
    model = recur.load(library)
    model.bind({name: value.detach() for name, value in nn.GRU(3, 4).state_dict().items()})
    x = torch.randn(5, 3, 3)
    for lengths, message in (([5, 0, 2], r"holds 0 for row 1; each row's length must "
                                         r"lie in \[1, T\] = \[1, 5\]"),
                             ([5, 6, 2], r"holds 6 for row 1")):
        with pytest.raises(recur.RecurError, match=message):
            model.run(x, torch.tensor(lengths))


@pytest.mark.parametrize("kind,options", [
    ("lstm", {}), ("lstm", {"bidirectional": True, "batch_first": True}),
    ("lstm", {"proj_size": 3}), ("gru", {"bidirectional": True}),
    ("rnn_relu", {"batch_first": True})])
@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_compiled_modules_take_packed_sequences(kind, options, enforce_sorted):
    """recur.compile(nn.LSTM | nn.GRU | nn.RNN) called on a PackedSequence
    returns what torch returns: a PackedSequence with the input's batch
    sizes and order, and the final state in the rows' original order."""
    torch.manual_seed(21 + len(options))
    module = LENGTHS_MODULES[kind](input_size=5, hidden_size=6, num_layers=2,
                                   **options).eval()
    compiled = recur.compile(module)
    batch_first = options.get("batch_first", False)
    lengths = torch.tensor([7, 5, 5, 2, 1] if enforce_sorted else [2, 7, 1, 5, 5])
    x = torch.randn((5, 7, 5) if batch_first else (7, 5, 5))
    packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                               enforce_sorted=enforce_sorted)
    layers = 2 * (2 if options.get("bidirectional") else 1)
    h0 = torch.randn(layers, 5, options.get("proj_size", 6))
    state = (h0, torch.randn(layers, 5, 6)) if kind == "lstm" else h0
    with torch.no_grad():
        want, want_state = module(packed, state)
    got, got_state = compiled(packed, state)
    assert isinstance(got, nn.utils.rnn.PackedSequence)
    assert torch.equal(got.batch_sizes, want.batch_sizes)
    for index in ("sorted_indices", "unsorted_indices"):
        assert (getattr(got, index) is None) == (getattr(want, index) is None)
        if getattr(want, index) is not None:
            assert torch.equal(getattr(got, index), getattr(want, index))
    assert_close(got.data, want.data)
    for got_value, want_value in zip(got_state if kind == "lstm" else (got_state,),
                                     want_state if kind == "lstm" else (want_state,)):
        assert_close(got_value, want_value)
    # The padded call still runs the model without lengths.
    got_padded, _ = compiled(x, state)
    with torch.no_grad():
        want_padded, _ = module(x, state)
    assert_close(got_padded, want_padded)


class PackedLM(nn.Module):
    """Embedding -> LSTM/GRU/RNN on a PackedSequence -> Linear: the padded
    positions' logits are the projection of zeros."""

    def __init__(self, kind, vocab, embed, hidden, layers):
        super().__init__()
        self.encoder = nn.Embedding(vocab, embed)
        self.rnn = LENGTHS_MODULES[kind](input_size=embed, hidden_size=hidden,
                                         num_layers=layers)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens, lengths, hidden=None):
        packed = nn.utils.rnn.pack_padded_sequence(self.encoder(tokens), lengths,
                                                   enforce_sorted=False)
        output, hidden = self.rnn(packed, hidden)
        output, _ = nn.utils.rnn.pad_packed_sequence(output, total_length=tokens.shape[0])
        return self.decoder(output), hidden


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_lm_takes_lengths_as_a_packed_sequence(kind):
    torch.manual_seed(31)
    module = PackedLM(kind, 17, 5, 8, 2).eval()
    # The same layers called on the padded tokens: what recur.compile reads.
    plain = StatefulCellLM("gru", 17, 5, 8, 2)
    plain.encoder, plain.rnn, plain.decoder = module.encoder, module.rnn, module.decoder
    compiled = recur.compile(plain.eval(), state=True)
    tokens = torch.randint(0, 17, (6, 4))
    lengths = torch.tensor([3, 6, 1, 4])
    layers = 2
    state = torch.randn(layers, 4, 8)
    hx = (state, torch.randn(layers, 4, 8)) if kind == "lstm" else state
    with torch.no_grad():
        want, want_state = module(tokens, lengths, hx)
    got, got_state = compiled(tokens, hx, lengths=lengths)
    assert_close(got, want)
    for got_value, want_value in zip(got_state if kind == "lstm" else (got_state,),
                                     want_state if kind == "lstm" else (want_state,)):
        assert_close(got_value, want_value)
    with pytest.raises(recur.RecurError, match=r"lengths must be \[B\] integers with B = 4"):
        compiled(tokens, hx, lengths=[1, 2])


def test_a_fixed_batch_still_takes_packed_sequences():
    """recur.compile(..., batch=B): the model for packed batches keeps B
    dynamic (its steps run on the active rows), and matches torch."""
    torch.manual_seed(41)
    module = nn.GRU(input_size=5, hidden_size=6, num_layers=2).eval()
    compiled = recur.compile(module, batch=4)
    lengths = torch.tensor([3, 6, 1, 4])
    packed = nn.utils.rnn.pack_padded_sequence(torch.randn(6, 4, 5), lengths,
                                               enforce_sorted=False)
    h0 = torch.randn(2, 4, 6)
    with torch.no_grad():
        want, want_h = module(packed, h0)
    got, got_h = compiled(packed, h0)
    assert_close(got.data, want.data)
    assert_close(got_h, want_h)
