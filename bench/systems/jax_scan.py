"""JAX runner: the fine-grained LSTM cell under lax.scan, jit-compiled by XLA
(the graph-mode compiler row).

    jax_scan.py SPEC.json   (written by bench/run; prints one JSON result)
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from systems import runner  # noqa: E402

try:
    import jax
    import jax.numpy as jnp
    import numpy as np
except ImportError:
    runner.unavailable(f"jax is not installed for {sys.executable}")

# XLA's fp32 dot may use TF32 (or bf16 passes) on GPUs unless told otherwise.
MATMUL_PRECISION = {"fp32": "highest", "tf32": "tensorfloat32", "bf16": "default"}


def cell(carry, x, w_ih, w_hh, b):
    h, c = carry
    gates = x @ w_ih.T + h @ w_hh.T + b
    i, f, g, o = jnp.split(gates, 4, axis=-1)
    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    h = jax.nn.sigmoid(o) * jnp.tanh(c)
    return (h, c), h


def stacked_lstm(x, layers):
    for w_ih, w_hh, b_ih, b_hh in layers:
        zeros = jnp.zeros((x.shape[1], w_hh.shape[1]), x.dtype)
        _, x = jax.lax.scan(lambda carry, step: cell(carry, step, w_ih, w_hh, b_ih + b_hh),
                            (zeros, zeros), x)
    return x


def main():
    spec = runner.read_spec()
    workload, precision = spec["workload"], spec["precision"]
    if spec["device"] == "cuda" and not any(d.platform == "gpu" for d in jax.devices()):
        runner.unavailable(f"jax {jax.__version__} sees no GPU ({jax.default_backend()} backend)")
    device = jax.devices("gpu" if spec["device"] == "cuda" else "cpu")[0]
    jax.config.update("jax_default_matmul_precision", MATMUL_PRECISION[precision])
    dtype = jnp.bfloat16 if precision == "bf16" else jnp.float32

    def put(array):
        value = jnp.asarray(array)
        if jnp.issubdtype(value.dtype, jnp.floating):
            value = value.astype(dtype)
        return jax.device_put(value, device)

    weights = {name: put(value) for name, value in runner.load(spec["weights"]).items()}
    (x,) = [put(value) for value in runner.load(spec["inputs"]).values()]
    model = workload["model"]
    lm = model["kind"] == "lstm-lm"
    prefix = "lstm." if lm else ""
    layers = [tuple(weights[f"{prefix}{kind}_l{layer}"]
                    for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
              for layer in range(model["layers"])]

    def forward(inputs, weights, layers):
        if not lm:
            return stacked_lstm(inputs, layers)
        y = stacked_lstm(weights["embedding.weight"][inputs], layers)
        return y @ weights["proj.weight"].T + weights["proj.bias"]

    start = time.perf_counter()
    compiled = jax.jit(forward).lower(x, weights, layers).compile()
    compile_s = time.perf_counter() - start
    output, times = runner.time_batches(
        lambda: compiled(x, weights, layers).block_until_ready(), spec["warmup"], spec["iters"])
    stats = device.memory_stats() or {}
    result = {"times_ms": times, "compile_s": compile_s,
              "versions": {"jax": jax.__version__, "jax_device": device.device_kind},
              "notes": [f"matmul precision '{MATMUL_PRECISION[precision]}'"]}
    if "peak_bytes_in_use" in stats:
        result["peak_device_mib"] = stats["peak_bytes_in_use"] / 2**20
    runner.save(spec["outputs"], {spec["output"]: np.asarray(output, dtype=np.float32)})
    runner.report(result)


if __name__ == "__main__":
    main()
