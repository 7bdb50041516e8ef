"""PyTorch's word_language_model LSTM (as its model.py builds it), compiled by
Recur and checked against PyTorch:  python3 python/examples/word_lm.py"""

import os
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import recur  # noqa: E402


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)

    def forward(self, tokens):
        output, _ = self.rnn(self.drop(self.encoder(tokens)))
        return self.decoder(self.drop(output))


torch.manual_seed(0)
lm = RNNModel(ntoken=10001, ninp=128, nhid=256, nlayers=3).eval()
tokens = torch.randint(0, 10001, (35, 20))  # [T, B], as the example's eval batches

start = time.perf_counter()
compiled = recur.compile(lm)
print(f"compiled in {time.perf_counter() - start:.1f} s "
      f"({'from the cache' if compiled.cache_hit else 'recur-compile'}): {compiled.library}")
logits = compiled(tokens)
with torch.no_grad():
    want = lm(tokens)
error = ((logits - want).abs() / (1 + want.abs())).max().item()
print(f"logits {tuple(logits.shape)}, max scaled difference from PyTorch {error:.2e}")
sys.exit(0 if error <= 1e-4 else 1)
