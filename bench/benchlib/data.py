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


def make_inputs(workload):
    # A stream apart from the weights', so both stay fixed if one changes shape.
    rng = np.random.default_rng([workload.seed, 1])
    shape = (workload.seq, workload.batch)
    if workload.lm:
        value = rng.integers(0, workload.model["vocab"], shape, dtype=np.int64)
    else:
        value = rng.uniform(-1, 1, shape + (workload.model["input"],)).astype(np.float32)
    inputs = {workload.input_name: value}
    if workload.training:  # the next tokens to predict, from a third stream
        targets = np.random.default_rng([workload.seed, 2])
        inputs["targets"] = targets.integers(0, workload.model["vocab"], shape, dtype=np.int64)
    return inputs
