"""PyTorch's word_language_model (its model.py's RNNModel, LSTM), compiled by
Recur as it is and checked against PyTorch on a text evaluated batch after
batch with the hidden state carried:  python3 python/examples/word_lm.py"""

import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import recur  # noqa: E402


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


torch.manual_seed(0)
lm = RNNModel(ntoken=10001, ninp=128, nhid=256, nlayers=3).eval()
text = torch.randint(0, 10001, (70, 20))  # [T, B]: two of the example's bptt=35 batches

start = time.perf_counter()
compiled = recur.compile(lm)
print(f"compiled in {time.perf_counter() - start:.1f} s "
      f"({'from the cache' if compiled.cache_hit else 'recur-compile'}): {compiled.library}")

worst = 0.0
hidden, want_hidden = lm.init_hidden(20), lm.init_hidden(20)
for i in range(0, text.size(0), 35):
    tokens = text[i:i + 35]
    log_probs, hidden = compiled(tokens, hidden)
    with torch.no_grad():
        want, want_hidden = lm(tokens, want_hidden)
    for got, ref in ((log_probs, want), (hidden[0], want_hidden[0]), (hidden[1], want_hidden[1])):
        worst = max(worst, ((got - ref).abs() / (1 + ref.abs())).max().item())
print(f"log-probabilities {tuple(log_probs.shape)} and the carried state over "
      f"{text.size(0) // 35} batches: max scaled difference from PyTorch {worst:.2e}")
sys.exit(0 if worst <= 1e-4 else 1)
