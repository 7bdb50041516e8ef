"""recur.compile(module, train=True): a compiled nn.LSTM under torch.autograd.
Gradients of the input, the state and every parameter against autograd on
the module in float64, with losses that are not cross-entropy and that read
the final state; optimizers, clipping and schedulers over several steps
against the same training in float64; BPTT windows with the state detached;
the errors (run by ctest as `python`)."""

import copy

import pytest
import torch
import torch.nn as nn

import recur


@pytest.fixture(autouse=True)
def cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("RECUR_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


def scaled_error(got, want):
    """max |got - want| / (1 + |want|)."""
    assert got.shape == want.shape
    return ((got.double() - want).abs() / (1 + want.abs())).max().item()


def loss_of(output, h_n, c_n):
    """Reads every output, the final state included, with nonlinear weights."""
    return (output ** 2).mean() + (1.5 * h_n).sum() + (c_n ** 3).sum() * 0.1


def assert_gradients_match_float64(module, trainable, run, tensors):
    """`run(mod, *tensors)` -> (output, h_n, c_n), through `trainable` and
    through a float64 copy of `module`: the outputs agree within 1e-5 and
    the gradients of loss_of (the parameters' and `tensors`') within 1e-4,
    scaled. Returns the compiled run's output and h_n."""
    inputs = [v.clone().requires_grad_() for v in tensors]
    output, h_n, c_n = run(trainable, *inputs)
    assert output.grad_fn is not None
    loss_of(output, h_n, c_n).backward()
    got = [p.grad for p in module.parameters()] + [v.grad for v in inputs]
    reference = copy.deepcopy(module).double()
    for p in reference.parameters():
        p.grad = None
    inputs64 = [v.detach().double().requires_grad_() for v in tensors]
    output64, h64, c64 = run(reference, *inputs64)
    assert scaled_error(output.detach(), output64.detach()) <= 1e-5
    loss_of(output64, h64, c64).backward()
    want = [p.grad for p in reference.parameters()] + [v.grad for v in inputs64]
    for g, w in zip(got, want):
        assert scaled_error(g, w) <= 1e-4
    return output, h_n


# (input, hidden, layers, bidirectional, bias, batch_first, T, B)
SHAPES = [
    (5, 7, 1, False, True, False, 6, 3),
    (5, 7, 2, False, True, False, 6, 3),
    (4, 6, 2, True, True, True, 5, 2),
    (3, 8, 1, False, False, False, 4, 2),
    (6, 5, 3, False, True, False, 1, 1),    # T = 1, B = 1
    (9, 16, 1, True, True, False, 7, 1),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_gradients_match_autograd_in_float64(shape):
    size, hidden, layers, bidirectional, bias, batch_first, steps, batch = shape
    torch.manual_seed(sum(shape))
    module = nn.LSTM(size, hidden, layers, bias=bias, bidirectional=bidirectional,
                     batch_first=batch_first)
    trainable = recur.compile(module, train=True)
    assert isinstance(trainable, recur.TrainableRNN)
    assert {id(p) for p in trainable.parameters()} == {id(p) for p in module.parameters()}
    states = layers * (2 if bidirectional else 1)
    x = torch.randn((batch, steps, size) if batch_first else (steps, batch, size))
    h0, c0 = torch.randn(states, batch, hidden), torch.randn(states, batch, hidden)

    def run(mod, x, h0, c0):
        output, (h_n, c_n) = mod(x, (h0, c0))
        return output, h_n, c_n

    assert_gradients_match_float64(module, trainable, run, (x, h0, c0))


@pytest.mark.parametrize("bidirectional,packed", [(False, False), (True, False), (True, True)],
                         ids=["uni", "bidirectional", "bidirectional-packed"])
def test_projected_lstm_gradients_match_autograd_in_float64(bidirectional, packed):
    """nn.LSTM(proj_size=P): recur-differentiate takes the layers as the
    recur.rnn of their cell (the product with w_hr after the cell) and
    derives their backward from it."""
    torch.manual_seed(5)
    module = nn.LSTM(4, 6, num_layers=2, proj_size=3, bidirectional=bidirectional)
    trainable = recur.compile(module, train=True)
    count = 2 if bidirectional else 1
    x = torch.randn(5, 3, 4)
    h0, c0 = torch.randn(2 * count, 3, 3), torch.randn(2 * count, 3, 6)
    lengths = torch.tensor([5, 2, 4])

    def run(mod, x, h0, c0):
        if packed:
            sequence = nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
            output, (h_n, c_n) = mod(sequence, (h0, c0))
            output = nn.utils.rnn.pad_packed_sequence(output)[0]
        else:
            output, (h_n, c_n) = mod(x, (h0, c0))
        return output, h_n, c_n

    output, h_n = assert_gradients_match_float64(module, trainable, run, (x, h0, c0))
    assert output.shape[-1] == 3 * count and h_n.shape == (2 * count, 3, 3)


# (bidirectional, layers, lengths, sorted): lengths 1 and T, B = 1, and one
# row much longer than the rest.
PACKED = [
    (False, 1, [5, 3, 1], False),
    (False, 2, [2, 6, 6, 1], False),
    (True, 2, [4, 1, 3], False),
    (True, 1, [7, 5, 2], True),
    (False, 2, [4], True),
    (False, 1, [9, 1, 1, 2, 1], False),
]


@pytest.mark.parametrize("case", PACKED, ids=lambda c: f"bi{int(c[0])}-l{c[1]}-{c[2]}-"
                         f"{'sorted' if c[3] else 'unsorted'}")
def test_packed_sequence_gradients_match_autograd_in_float64(case):
    bidirectional, layers, lengths, enforce_sorted = case
    torch.manual_seed(len(lengths) * 7 + layers)
    module = nn.LSTM(3, 5, layers, bidirectional=bidirectional)
    trainable = recur.compile(module, train=True)
    steps, batch = max(lengths), len(lengths)
    states = layers * (2 if bidirectional else 1)
    x = torch.randn(steps, batch, 3)
    h0, c0 = torch.randn(states, batch, 5), torch.randn(states, batch, 5)

    def run(model, dtype):
        inputs = [v.detach().to(dtype).requires_grad_() for v in (x, h0, c0)]
        packed = nn.utils.rnn.pack_padded_sequence(inputs[0], lengths,
                                                   enforce_sorted=enforce_sorted)
        output, (h_n, c_n) = model(packed, (inputs[1], inputs[2]))
        padded, _ = nn.utils.rnn.pad_packed_sequence(output)
        loss_of(padded, h_n, c_n).backward()
        return padded.detach(), inputs

    got, inputs = run(trainable, torch.float32)
    grads = [p.grad.clone() for p in module.parameters()] + [v.grad for v in inputs]
    reference = copy.deepcopy(module).double()
    for p in reference.parameters():
        p.grad = None
    want, inputs64 = run(reference, torch.float64)
    assert scaled_error(got, want) <= 1e-5
    want_grads = [p.grad for p in reference.parameters()] + [v.grad for v in inputs64]
    for g, w in zip(grads, want_grads):
        assert scaled_error(g, w) <= 1e-4


def train(module, optimizer_of, windows, clip, step_lr, forward):
    """A few steps of truncated BPTT: each window's state is the last one's,
    detached; returns the losses."""
    optimizer = optimizer_of(module.parameters())
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 2, 0.5) if step_lr else None
    losses, state = [], None
    for x, target in windows:
        optimizer.zero_grad()
        output, state = forward(x, state)
        loss = torch.nn.functional.mse_loss(output, target) + state[0].abs().mean()
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(module.parameters(), clip)
        optimizer.step()
        if scheduler:
            scheduler.step()
        state = tuple(s.detach() for s in state)
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("optimizer", ["sgd-momentum", "adam"])
def test_optimizer_steps_follow_float64_training(optimizer):
    torch.manual_seed(3)
    module = nn.LSTM(4, 6, 2)
    reference = copy.deepcopy(module).double()
    windows = [(torch.randn(5, 3, 4), torch.randn(5, 3, 6)) for _ in range(6)]

    def optimizer_of(parameters):
        if optimizer == "adam":
            return torch.optim.Adam(parameters, lr=0.01)
        return torch.optim.SGD(parameters, lr=0.1, momentum=0.9)

    trainable = recur.compile(module, train=True)
    losses = train(module, optimizer_of, windows, 0.5, True, lambda x, s: trainable(x, s))
    losses64 = train(reference, optimizer_of,
                     [(x.double(), t.double()) for x, t in windows], 0.5, True,
                     lambda x, s: reference(x, s))
    assert losses[-1] < losses[0]
    for got, want in zip(losses, losses64):
        assert abs(got - want) <= 1e-4 * (1 + abs(want))
    for p, p64 in zip(module.parameters(), reference.parameters()):
        assert scaled_error(p.detach(), p64.detach()) <= 1e-4


def test_packed_batch_training_follows_float64():
    torch.manual_seed(9)
    module = nn.LSTM(3, 6, 2)
    reference = copy.deepcopy(module).double()
    trainable = recur.compile(module, train=True)
    batches = [(torch.randn(6, 4, 3), [6, 2, 5, 1], torch.randn(4, 6)) for _ in range(4)]

    def run(model, params, dtype):
        optimizer = torch.optim.Adam(params, lr=0.02)
        for x, lengths, target in batches:
            optimizer.zero_grad()
            packed = nn.utils.rnn.pack_padded_sequence(x.to(dtype), lengths,
                                                       enforce_sorted=False)
            output, (h_n, _) = model(packed)
            padded, _ = nn.utils.rnn.pad_packed_sequence(output)
            loss = nn.functional.mse_loss(h_n[-1], target.to(dtype)) + padded.abs().mean()
            loss.backward()
            optimizer.step()

    run(trainable, list(module.parameters()), torch.float32)
    run(reference, list(reference.parameters()), torch.float64)
    for p, p64 in zip(module.parameters(), reference.parameters()):
        assert scaled_error(p.detach(), p64.detach()) <= 1e-4


def test_weight_update_is_seen_by_the_next_forward():
    torch.manual_seed(5)
    module = nn.LSTM(3, 4)
    trainable = recur.compile(module, train=True)
    x = torch.randn(2, 2, 3)
    before, _ = trainable(x)
    with torch.no_grad():
        module.weight_hh_l0.mul_(0.5)
    after, _ = trainable(x)
    with torch.no_grad():
        want, _ = module(x)
    assert not torch.allclose(before, after)
    assert scaled_error(after.detach(), want.double()) <= 1e-5


def test_an_optimizer_step_between_forward_and_backward_is_refused():
    module = nn.LSTM(3, 4)
    trainable = recur.compile(module, train=True)
    output, _ = trainable(torch.randn(2, 2, 3))
    with torch.no_grad():
        module.weight_ih_l0.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        output.sum().backward()


def test_dropout_between_layers_in_train_mode_only():
    torch.manual_seed(7)
    module = nn.LSTM(3, 16, 2, dropout=0.5)
    trainable = recur.compile(module, train=True)
    x = torch.randn(4, 8, 3)
    trainable.eval()
    with torch.no_grad():
        want, _ = module(x)
        evaluated, _ = trainable(x)
    assert scaled_error(evaluated, want.double()) <= 1e-5
    trainable.train()
    torch.manual_seed(11)
    dropped, _ = trainable(x)
    assert scaled_error(dropped.detach(), want.double()) > 1e-3
    dropped.sum().backward()
    assert module.weight_ih_l0.grad is not None


def test_refusals_name_what_is_missing():
    trainable = recur.compile(nn.LSTM(3, 4), train=True)
    with pytest.raises(recur.RecurError, match="input has 5 features, the LSTM takes 3"):
        trainable(torch.randn(3, 2, 5))
    with pytest.raises(recur.RecurError, match=r"h0 has shape \[1, 3, 4\], expected \[1, 2, 4\]"):
        trainable(torch.randn(3, 2, 3), (torch.zeros(1, 3, 4), torch.zeros(1, 2, 4)))


class WordLM(nn.Module):
    """PyTorch's word_language_model names (dropout 0: a trained LM's
    dropout is not compiled yet), logits flattened as its RNNModel does."""

    def __init__(self, vocab, embed, hidden, layers):
        super().__init__()
        self.encoder = nn.Embedding(vocab, embed)
        self.rnn = nn.LSTM(embed, hidden, layers)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        output, _ = self.rnn(self.encoder(tokens))
        return self.decoder(output).view(-1, self.decoder.out_features)


class StatefulLM(nn.Module):
    def __init__(self, vocab, embed, hidden, layers):
        super().__init__()
        self.embedding = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, layers)
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, tokens, hidden):
        output, hidden = self.lstm(self.embedding(tokens), hidden)
        return self.proj(output), hidden


@pytest.mark.parametrize("layers,steps,batch", [(1, 4, 3), (2, 5, 2), (3, 1, 1)])
def test_language_model_gradients_match_autograd_in_float64(layers, steps, batch):
    torch.manual_seed(layers * 10 + steps)
    module = WordLM(17, 5, 6, layers)
    trainable = recur.compile(module, train=True)
    assert isinstance(trainable, recur.TrainableLM)
    tokens = torch.randint(0, 17, (steps, batch))
    targets = torch.randint(0, 17, (steps * batch,))

    def loss_fn(logits):  # cross-entropy and a term that is not
        return nn.functional.cross_entropy(logits, targets) + (logits ** 2).mean() * 0.1

    loss_fn(trainable(tokens)).backward()
    got = {name: p.grad.clone() for name, p in module.named_parameters()}
    reference = copy.deepcopy(module).double()
    for p in reference.parameters():
        p.grad = None
    loss_fn(reference(tokens)).backward()
    for name, p in reference.named_parameters():
        assert scaled_error(got[name], p.grad) <= 1e-4, name


def test_stateful_language_model_trains_with_bptt_like_float64():
    torch.manual_seed(4)
    module = StatefulLM(13, 4, 5, 2)
    reference = copy.deepcopy(module).double()
    trainable = recur.compile(module, train=True)
    windows = [(torch.randint(0, 13, (4, 3)), torch.randint(0, 13, (4, 3))) for _ in range(4)]

    def run(model, params):
        optimizer = torch.optim.SGD(params, lr=0.5, momentum=0.5)
        hidden, losses = None, []
        for tokens, targets in windows:
            optimizer.zero_grad()
            if hidden is None:
                zeros = torch.zeros(2, 3, 5, dtype=next(iter(params)).dtype)
                hidden = (zeros, zeros)
            logits, hidden = model(tokens, hidden)
            loss = nn.functional.cross_entropy(logits.reshape(-1, 13), targets.reshape(-1)) \
                + hidden[1].pow(2).mean()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            hidden = tuple(h.detach() for h in hidden)
            losses.append(loss.item())
        return losses

    losses = run(trainable, list(module.parameters()))
    losses64 = run(reference, list(reference.parameters()))
    for got, want in zip(losses, losses64):
        assert abs(got - want) <= 1e-4 * (1 + abs(want))
    for p, p64 in zip(module.parameters(), reference.parameters()):
        assert scaled_error(p.detach(), p64.detach()) <= 1e-4


def test_language_model_refusals_name_the_option():
    module = WordLM(11, 4, 5, 2)
    module.rnn.dropout = 0.3
    with pytest.raises(recur.RecurError, match=r"'rnn' \(nn.LSTM dropout=0.3\) in train mode"):
        recur.compile(module, train=True)

    class Dropped(WordLM):
        def __init__(self):
            super().__init__(11, 4, 5, 1)
            self.drop = nn.Dropout(0.2)

        def forward(self, tokens):
            output, _ = self.rnn(self.drop(self.encoder(tokens)))
            return self.decoder(output)

    with pytest.raises(recur.RecurError, match=r"'drop' \(nn.Dropout\(p=0.2\)\) in train mode"):
        recur.compile(Dropped(), train=True)
    with pytest.raises(recur.RecurError, match="takes the tokens only"):
        recur.compile(WordLM(11, 4, 5, 1), train=True)(torch.zeros(2, 2, dtype=torch.long),
                                                      (torch.zeros(1), torch.zeros(1)))


def assert_h_state_gradients(module, trainable, x, h0, lengths):
    """A GRU's or RNN's (state h alone) output and the gradients of its
    input, h0 and parameters, on `x` (packed with `lengths` if given),
    against autograd on the module in float64."""

    def run(model, dtype):
        inputs = [v.detach().to(dtype).requires_grad_() for v in (x, h0)]
        source = inputs[0]
        if lengths:
            source = nn.utils.rnn.pack_padded_sequence(source, lengths, enforce_sorted=False)
        output, h_n = model(source, inputs[1])
        if lengths:
            output, _ = nn.utils.rnn.pad_packed_sequence(output)
        ((output ** 2).mean() + (1.5 * h_n).sum()).backward()
        return output.detach(), inputs

    got, inputs = run(trainable, torch.float32)
    grads = [p.grad.clone() for p in module.parameters()] + [v.grad for v in inputs]
    reference = copy.deepcopy(module).double()
    want, inputs64 = run(reference, torch.float64)
    assert scaled_error(got, want) <= 1e-5
    for g, w in zip(grads, [p.grad for p in reference.parameters()] +
                    [v.grad for v in inputs64]):
        assert scaled_error(g, w) <= 1e-4


@pytest.mark.parametrize("case", [(1, False, False), (2, True, False), (2, False, True)],
                         ids=["gru-1", "gru-2-bidirectional", "gru-2-no-bias"])
def test_gru_gradients_match_autograd_in_float64(case):
    layers, bidirectional, no_bias = case
    torch.manual_seed(layers + 3 * bidirectional)
    module = nn.GRU(4, 6, layers, bidirectional=bidirectional, bias=not no_bias)
    trainable = recur.compile(module, train=True)
    assert isinstance(trainable, recur.TrainableRNN)
    states = layers * (2 if bidirectional else 1)
    assert_h_state_gradients(module, trainable, torch.randn(5, 3, 4),
                             torch.randn(states, 3, 6), None)


def test_gru_packed_batch_and_lm_train_like_float64():
    torch.manual_seed(12)
    gru = nn.GRU(3, 5, 2)
    reference = copy.deepcopy(gru).double()
    trainable = recur.compile(gru, train=True)
    batches = [(torch.randn(6, 4, 3), [6, 1, 4, 2], torch.randn(2, 4, 5)) for _ in range(3)]

    def run(model, params, dtype):
        optimizer = torch.optim.SGD(params, lr=0.3, momentum=0.9)
        for x, lengths, target in batches:
            optimizer.zero_grad()
            packed = nn.utils.rnn.pack_padded_sequence(x.to(dtype), lengths,
                                                       enforce_sorted=False)
            output, h_n = model(packed)
            padded, _ = nn.utils.rnn.pad_packed_sequence(output)
            (nn.functional.mse_loss(h_n, target.to(dtype)) + padded.pow(2).mean()).backward()
            optimizer.step()

    run(trainable, list(gru.parameters()), torch.float32)
    run(reference, list(reference.parameters()), torch.float64)
    for p, p64 in zip(gru.parameters(), reference.parameters()):
        assert scaled_error(p.detach(), p64.detach()) <= 1e-4

    class GruLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(11, 4)
            self.gru = nn.GRU(4, 5, 2)
            self.proj = nn.Linear(5, 11)

        def forward(self, tokens):
            return self.proj(self.gru(self.embedding(tokens))[0])

    lm = GruLM()
    lm64 = copy.deepcopy(lm).double()
    compiled = recur.compile(lm, train=True)
    tokens, targets = torch.randint(0, 11, (4, 3)), torch.randint(0, 11, (4, 3))
    for model, params in ((compiled, lm.parameters()), (lm64, lm64.parameters())):
        optimizer = torch.optim.Adam(params, lr=0.05)
        for _ in range(3):
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(tokens).reshape(-1, 11),
                                        targets.reshape(-1)).backward()
            optimizer.step()
    for p, p64 in zip(lm.parameters(), lm64.parameters()):
        assert scaled_error(p.detach(), p64.detach()) <= 1e-4


@pytest.mark.parametrize("nonlinearity,bidirectional,packed",
                         [("tanh", False, False), ("relu", True, False), ("tanh", True, True)])
def test_rnn_gradients_match_autograd_in_float64(nonlinearity, bidirectional, packed):
    torch.manual_seed(21 + bidirectional)
    module = nn.RNN(4, 6, 2, nonlinearity=nonlinearity, bidirectional=bidirectional)
    trainable = recur.compile(module, train=True)
    states = 2 * (2 if bidirectional else 1)
    assert_h_state_gradients(module, trainable, torch.randn(5, 3, 4),
                             torch.randn(states, 3, 6), [3, 5, 1] if packed else None)
