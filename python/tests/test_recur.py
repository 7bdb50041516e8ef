"""The recur package against PyTorch: compiled LMs give the module's logits,
the cache, load/describe, tensors in and out, and the errors (run by ctest
as `python`, with the build tree's tools and runtime)."""

import itertools
import os

import numpy
import pytest
import torch
import torch.nn as nn

import recur


class WordLM(nn.Module):
    """As PyTorch's word_language_model names and calls things (eval mode)."""

    def __init__(self, vocab, embed, hidden, layers, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(vocab, embed)
        self.rnn = nn.LSTM(embed, hidden, layers, dropout=dropout if layers > 1 else 0)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        output, _ = self.rnn(self.drop(self.encoder(tokens)))
        return self.decoder(self.drop(output))


class PlainLM(nn.Module):
    """recur-gen's own names, and the LSTM's output taken as lstm(x)[0]."""

    def __init__(self, vocab, embed, hidden, layers):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, layers)
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        return self.proj(self.lstm(self.embedding(tokens))[0])


@pytest.fixture(autouse=True)
def cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("RECUR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def assert_close(got, want, tolerance=1e-4):
    """|got - want| <= tolerance * (1 + |want|), element by element."""
    assert got.shape == want.shape
    error = ((got - want).abs() / (1 + want.abs())).max().item()
    assert error <= tolerance, f"max scaled error {error}"


def assert_lstm_matches(module, compiled, x, state):
    """The compiled nn.LSTM's output and (h_n, c_n) are the module's, from a
    zero state and from `state`."""
    with torch.no_grad():
        for hx in (None, state):
            want, (want_h, want_c) = module(x, hx)
            got, (got_h, got_c) = compiled(x, hx)
            for g, w in ((got, want), (got_h, want_h), (got_c, want_c)):
                assert_close(g, w)


# Randomized shapes: odd sizes, I != H, one layer to four, B = 1, T = 1.
@pytest.mark.parametrize("cls,vocab,embed,hidden,layers,seq,batch", [
    (WordLM, 37, 6, 9, 2, 5, 3),
    (PlainLM, 11, 4, 4, 1, 1, 1),
    (PlainLM, 50, 13, 7, 4, 7, 2),
    (WordLM, 23, 8, 5, 3, 9, 1),
])
def test_logits_match_pytorch(cls, vocab, embed, hidden, layers, seq, batch):
    torch.manual_seed(vocab + layers)
    module = cls(vocab, embed, hidden, layers).eval()
    compiled = recur.compile(module, threads=1)
    tokens = torch.randint(0, vocab, (seq, batch))
    with torch.no_grad():
        want = module(tokens)
    got = compiled(tokens)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
    assert_close(got, want)
    # Other T and B with the same library (dynamic sizes).
    tokens = torch.randint(0, vocab, (seq + 2, batch + 1))
    with torch.no_grad():
        assert_close(compiled(tokens), module(tokens))


def test_static_sizes_and_fusion():
    torch.manual_seed(1)
    module = PlainLM(19, 6, 8, 2).eval()
    compiled = recur.compile(module, seq=4, batch=2, fusion="none")
    assert compiled.model.describe()["fusion"] == "none"
    tokens = torch.randint(0, 19, (4, 2))
    with torch.no_grad():
        assert_close(compiled(tokens), module(tokens))
    with pytest.raises(recur.RecurError, match="tokens"):
        compiled(torch.randint(0, 19, (5, 2)))


def test_cuda_pipeline_through_the_emulator():
    """target= goes to recur-compile: the CUDA pipeline's kernels, run on the
    CPU by --target=cuda-emulator, give the module's results too."""
    torch.manual_seed(4)
    module = PlainLM(21, 6, 8, 2).eval()
    compiled = recur.compile(module, target="cuda-emulator", state=True)
    assert "recur-lower-to-cuda-emulator" in compiled.model.describe()["pipeline"]
    tokens = torch.randint(0, 21, (5, 3))
    logits, (h_n, c_n) = compiled(tokens)
    with torch.no_grad():
        assert_close(logits, module(tokens))
        _, (want_h, want_c) = module.lstm(module.embedding(tokens))
    assert_close(h_n, want_h)
    assert_close(c_n, want_c)


def test_second_compile_comes_from_the_cache():
    module = PlainLM(17, 5, 6, 1).eval()
    first = recur.compile(module)
    stamp = os.stat(first.library).st_mtime_ns
    second = recur.compile(PlainLM(17, 5, 6, 1).eval())  # same architecture, other weights
    assert not first.cache_hit and second.cache_hit
    assert second.library == first.library and os.stat(second.library).st_mtime_ns == stamp
    tokens = torch.randint(0, 17, (3, 2))
    assert not torch.equal(first(tokens), second(tokens))  # each binds its own weights


def test_load_describe_and_numpy():
    torch.manual_seed(2)
    module = PlainLM(13, 4, 5, 2).eval()
    library = recur.compile(module).library
    model = recur.load(library, tensors="numpy")
    assert [spec.name for spec in model.inputs] == ["tokens"]
    assert [spec.name for spec in model.outputs] == ["logits"]
    assert repr(model.inputs[0]) == "tokens: i64[T, B]"
    assert model.outputs[0].shape == (None, None, 13)
    assert {spec.name for spec in model.weights} == {
        "embedding.weight", "proj.weight", "proj.bias"} | {
        f"lstm.{kind}_{part}_l{layer}" for kind in ("weight", "bias")
        for part in ("ih", "hh") for layer in range(2)}
    assert model.device == "cpu"
    assert model.target == model.describe()["target"] == "cpu"
    state = {name: value.detach().numpy() for name, value in module.state_dict().items()}
    model.bind(state)
    tokens = numpy.random.default_rng(0).integers(0, 13, size=(3, 2))
    got = model.run(tokens=tokens)
    assert isinstance(got, numpy.ndarray)
    with torch.no_grad():
        assert_close(torch.from_numpy(got.copy()), module(torch.from_numpy(tokens)))


def test_runs_return_tensors_that_outlive_the_model():
    module = PlainLM(13, 4, 5, 1).eval()
    compiled = recur.compile(module)
    tokens = torch.randint(0, 13, (2, 2))
    logits = compiled(tokens)
    del compiled
    with torch.no_grad():
        assert_close(logits, module(tokens))


def test_errors_name_what_is_wrong():
    module = PlainLM(13, 4, 5, 1).eval()
    compiled = recur.compile(module)
    with pytest.raises(recur.RecurError, match="'tokens' has dtype f32, expected i64"):
        compiled(torch.zeros(2, 2))
    with pytest.raises(recur.RecurError, match="tokens"):
        compiled(torch.full((2, 2), 13))  # out of the vocabulary
    model = recur.load(compiled.library)
    with pytest.raises(recur.RecurError, match="missing .*lstm.weight_hh_l0"):
        model.bind({"embedding.weight": module.embedding.weight})
    with pytest.raises(recur.RecurError, match="unexpected extra"):
        model.bind(dict(module.state_dict(), extra=torch.zeros(1)))
    with pytest.raises(recur.RecurError, match="proj.weight"):
        model.bind_weight("proj.weight", torch.zeros(3, 3))
    with pytest.raises(recur.RecurError, match="no input 'x'"):
        model.run(x=torch.zeros(1))
    with pytest.raises(recur.RecurError, match="cannot load|No such file|not"):
        recur.load("/nonexistent/lib.so")


# nn.LSTM as called: output, (h_n, c_n) = m(x, (h0, c0)), the state optional.
@pytest.mark.parametrize("input,hidden,layers,seq,batch,dropout", [
    (3, 5, 1, 4, 2, 0.0),
    (6, 4, 2, 1, 1, 0.3),  # dropout between layers: the identity in eval mode
    (9, 9, 4, 6, 3, 0.0),
])
def test_lstm_matches_pytorch(input, hidden, layers, seq, batch, dropout):
    torch.manual_seed(input * hidden)
    module = nn.LSTM(input, hidden, layers, dropout=dropout).eval()
    compiled = recur.compile(module, threads=1)
    assert isinstance(compiled, recur.CompiledLSTM)
    x = torch.randn(seq, batch, input)
    state = (torch.randn(layers, batch, hidden), torch.randn(layers, batch, hidden))
    assert_lstm_matches(module, compiled, x, state)


def check_lstm_options(batch_first, bias, bidirectional, proj_size, fusion=None):
    torch.manual_seed(7 + 2 * batch_first + 4 * bias + 8 * bidirectional + proj_size)
    input, hidden, layers, seq, batch = 5, 6, 2 + bidirectional, 7, 3
    module = nn.LSTM(input, hidden, layers, batch_first=batch_first, bias=bias,
                     bidirectional=bidirectional, proj_size=proj_size).eval()
    compiled = recur.compile(module, threads=1, fusion=fusion)
    x = torch.randn((batch, seq, input) if batch_first else (seq, batch, input))
    states = layers * (2 if bidirectional else 1)
    state = (torch.randn(states, batch, proj_size or hidden), torch.randn(states, batch, hidden))
    assert_lstm_matches(module, compiled, x, state)
    # The state outputs are [B, units], whatever T and B the model takes.
    for spec in compiled.model.outputs[1:]:
        assert spec.dims[0] == "B", spec


# Every combination of batch_first, bias and bidirectional, with the state
# and without, on odd sizes (I != H, B != T); proj_size with some of them.
@pytest.mark.parametrize("batch_first,bias,bidirectional,proj_size", [
    *itertools.product([False, True], [True, False], [False, True], [0]),
    *((first, first, bidirectional, 4) for first in (False, True)
      for bidirectional in (False, True)),
])
def test_lstm_options_match_pytorch(batch_first, bias, bidirectional, proj_size):
    check_lstm_options(batch_first, bias, bidirectional, proj_size)


# Each fusion stage handles reversed, bias-free and projected layers its own
# way (docs/pipeline.md): two stacks with all of them, at every level.
@pytest.mark.parametrize("fusion", ["none", "hoist", "cell", "wavefront"])
@pytest.mark.parametrize("batch_first,proj_size", [(True, 0), (False, 3)])
def test_lstm_options_at_every_fusion_level(fusion, batch_first, proj_size):
    check_lstm_options(batch_first, False, True, proj_size, fusion=fusion)


class OptionsLM(nn.Module):
    """An LM whose LSTM is batch-first, bidirectional, projected and without
    biases."""

    def __init__(self, vocab, embed, hidden, layers, proj_size):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, layers, batch_first=True, bias=False,
                            bidirectional=True, proj_size=proj_size)
        self.proj = nn.Linear(2 * proj_size, vocab)

    def forward(self, tokens, hidden):
        output, hidden = self.lstm(self.embedding(tokens), hidden)
        return self.proj(output), hidden


def test_lm_with_lstm_options_matches_pytorch():
    torch.manual_seed(8)
    module = OptionsLM(31, 5, 6, 2, proj_size=4).eval()
    compiled = recur.compile(module)
    tokens = torch.randint(0, 31, (3, 7))  # [B, T]
    hidden = (torch.randn(4, 3, 4), torch.randn(4, 3, 6))
    with torch.no_grad():
        want, (want_h, want_c) = module(tokens, hidden)
    got, (got_h, got_c) = compiled(tokens, hidden)
    assert got.shape == (3, 7, 31)
    for g, w in ((got, want), (got_h, want_h), (got_c, want_c)):
        assert_close(g, w)


def test_stateful_lm_carries_the_state_across_batches():
    torch.manual_seed(3)
    module = PlainLM(29, 6, 8, 2).eval()
    compiled = recur.compile(module, state=True)
    tokens = torch.randint(0, 29, (10, 2))
    with torch.no_grad():
        want = module(tokens)  # the whole text at once, from a zero state
    first, hx = compiled(tokens[:4])
    second, (h_n, c_n) = compiled(tokens[4:], hx)
    assert_close(torch.cat([first, second]), want)
    with torch.no_grad():
        _, (want_h, want_c) = module.lstm(module.embedding(tokens))
    assert_close(h_n, want_h)
    assert_close(c_n, want_c)
    with pytest.raises(recur.RecurError, match=r"h0 has shape \[2, 3, 8\], expected \[2, 2, 8\]"):
        compiled(tokens, (torch.zeros(2, 3, 8), torch.zeros(2, 3, 8)))
    with pytest.raises(recur.RecurError, match="compiled without the recurrent layers' state"):
        recur.compile(module)(tokens, hx)


class StatefulWordLM(WordLM):
    """forward(tokens, hidden) -> (logits, hidden), as PyTorch's example
    evaluates a long text (its log_softmax aside)."""

    def forward(self, tokens, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(tokens)), hidden)
        return self.decoder(self.drop(output)), hidden


class ExampleRNNModel(WordLM):
    """word_language_model's forward as it is: the log-probabilities of the
    logits viewed as [T·B, V], and the state."""

    def forward(self, input, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.decoder.out_features)
        return torch.nn.functional.log_softmax(decoded, dim=1), hidden


# forward(tokens, hidden) -> (logits, hidden), and word_language_model's own.
@pytest.mark.parametrize("cls,shape", [(StatefulWordLM, (5, 3, 41)),
                                       (ExampleRNNModel, (15, 41))])
def test_lm_that_takes_and_returns_its_state_is_recognised(cls, shape):
    torch.manual_seed(6)
    module = cls(41, 6, 7, 2).eval()
    compiled = recur.compile(module)
    tokens = torch.randint(0, 41, (5, 3))
    hidden = (torch.randn(2, 3, 7), torch.randn(2, 3, 7))
    with torch.no_grad():
        want, (want_h, want_c) = module(tokens, hidden)
    got, (got_h, got_c) = compiled(tokens, hidden)
    assert got.shape == shape
    for g, w in ((got, want), (got_h, want_h), (got_c, want_c)):
        assert_close(g, w)


def test_what_is_not_an_lm_is_refused():
    with pytest.raises(recur.RecurError, match="dropout=0.5 in train mode"):
        recur.compile(nn.LSTM(3, 4, 2, dropout=0.5))
    with pytest.raises(recur.RecurError, match="float32"):
        recur.compile(nn.LSTM(3, 4).double())

    class TwoLayers(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(5, 3)
            self.proj = nn.Linear(3, 5)

        def forward(self, tokens):
            return self.proj(self.embedding(tokens))

    with pytest.raises(recur.RecurError, match="found Embedding"):
        recur.compile(TwoLayers())
    with pytest.raises(recur.RecurError, match="Dropout.*train mode"):
        recur.compile(WordLM(5, 3, 4, 1).train())

    class StateInOnly(PlainLM):
        def forward(self, tokens, hidden):
            return self.proj(self.lstm(self.embedding(tokens), hidden)[0])

    with pytest.raises(recur.RecurError, match=r"forward\(tokens, hidden\) -> \(logits, hidden\)"):
        recur.compile(StateInOnly(5, 3, 4, 1).eval())

    class SoftmaxOverTime(PlainLM):
        def forward(self, tokens):
            return torch.log_softmax(super().forward(tokens), dim=0)

    with pytest.raises(recur.RecurError, match="log_softmax over V"):
        recur.compile(SoftmaxOverTime(5, 3, 4, 1).eval())


def test_close_and_context_manager():
    module = PlainLM(13, 4, 5, 1).eval()
    library = recur.compile(module).library
    tokens = torch.randint(0, 13, (2, 2))
    with recur.load(library) as model:
        model.bind(dict(module.state_dict()))
        logits = model(tokens)
        assert not model.closed
    assert model.closed
    assert "closed" in repr(model)
    with pytest.raises(recur.RecurError, match="is closed"):
        model(tokens)
    model.close()  # a second close does nothing
    with torch.no_grad():  # outputs own their buffers: they outlive the model
        assert_close(logits, module(tokens))

