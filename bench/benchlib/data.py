"""Weights and inputs of a workload, made once and shared by every system.

Names and layouts are PyTorch's (state_dict of embedding / nn.LSTM or nn.GRU
/ proj), as recur-gen's models and the runtime expect. Values follow
PyTorch's default initialization: uniform in [-1/sqrt(H), 1/sqrt(H)] for the
recurrent layers and the projection, standard normal for the embedding.
"""
import numpy as np

from .workloads import GATES


def make_weights(workload):
    m = workload.model
    rng = np.random.default_rng(workload.seed)
    hidden, layers = m["hidden"], m["layers"]
    bound = 1 / np.sqrt(hidden)

    def uniform(*shape):
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    if workload.traced:
        return _layer_norm_lstm(workload, rng, uniform)
    weights = {}
    # An LM names its layers after their cell: lstm.*, gru.*
    prefix = f"{workload.cell}." if workload.lm else ""
    if workload.lm:
        weights["embedding.weight"] = rng.standard_normal((m["vocab"], m["embed"]),
                                                          dtype=np.float32)
    first = m["embed"] if workload.lm else m["input"]
    rows = GATES[workload.cell] * hidden
    for layer in range(layers):
        size = first if layer == 0 else hidden
        weights[f"{prefix}weight_ih_l{layer}"] = uniform(rows, size)
        weights[f"{prefix}weight_hh_l{layer}"] = uniform(rows, hidden)
        weights[f"{prefix}bias_ih_l{layer}"] = uniform(rows)
        weights[f"{prefix}bias_hh_l{layer}"] = uniform(rows)
    if workload.lm:
        weights["proj.weight"] = uniform(m["vocab"], hidden)
        weights["proj.bias"] = uniform(m["vocab"])
    return weights


def _layer_norm_lstm(workload, rng, uniform):
    """fastrnns' LayerNormLSTMCell per layer, named as recur.compile_rnn names
    a cell's parameters (`<layer>.` first for several layers). The layer
    norms' scales are drawn from [0.5, 1.5] and their shifts as the weights,
    rather than PyTorch's ones and zeros, so that a wrong one shows."""
    m = workload.model
    hidden, layers = m["hidden"], m["layers"]
    weights = {}
    for layer in range(layers):
        prefix = "" if layers == 1 else f"{layer}."
        size = m["input"] if layer == 0 else hidden
        weights[f"{prefix}weight_ih"] = uniform(4 * hidden, size)
        weights[f"{prefix}weight_hh"] = uniform(4 * hidden, hidden)
        for norm, width in (("i", 4 * hidden), ("h", 4 * hidden), ("c", hidden)):
            weights[f"{prefix}layernorm_{norm}.weight"] = \
                rng.uniform(0.5, 1.5, width).astype(np.float32)
            weights[f"{prefix}layernorm_{norm}.bias"] = uniform(width)
    return weights


def make_inputs(workload):
    # A stream apart from the weights', so both stay fixed if one changes shape.
    rng = np.random.default_rng([workload.seed, 1])
    shape = (workload.seq, workload.batch)
    if workload.lm:
        value = rng.integers(0, workload.model["vocab"], shape, dtype=np.int64)
    else:
        value = rng.uniform(-1, 1, shape + (workload.model["input"],)).astype(np.float32)
    inputs = {workload.input_name: value}
    if workload.varlen:
        inputs["lengths"] = workload.lengths()
    if workload.traced:  # each layer's (h0, c0), zeros as nn.LSTM's default
        for layer in range(workload.model["layers"]):
            for index in range(2):
                inputs[f"state_l{layer}_{index}"] = np.zeros(
                    (workload.batch, workload.model["hidden"]), np.float32)
    if workload.training:  # the next tokens to predict, from a third stream
        targets = np.random.default_rng([workload.seed, 2])
        inputs["targets"] = targets.integers(0, workload.model["vocab"], shape, dtype=np.int64)
    return inputs
