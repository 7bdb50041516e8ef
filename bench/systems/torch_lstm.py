"""PyTorch runners: nn.LSTM (aten on CPU, cuDNN on GPU), on a PackedSequence
or the padded rectangle for a packed batch, the fine-grained cell loop
eager, scripted (TorchScript) and compiled (torch.compile), and the float64
reference for workloads too large for recur-run's.

    torch_lstm.py SPEC.json   (written by bench/run; prints one JSON result)
"""
import os
import re
import sys
import time
from typing import List

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from systems import runner  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
    from torch import Tensor, nn
except ImportError:
    runner.unavailable(f"torch is not installed for {sys.executable} "
                       "(Debian: apt-get install python3-torch)")


CELLS = {"lstm": nn.LSTM, "gru": nn.GRU}
# Cells written in PyTorch (bench/systems/custom_cells.py).
CUSTOM_KINDS = ("lnlstm",)
from systems import custom_cells  # noqa: E402


class LanguageModel(nn.Module):
    """recur-gen lstm-lm (gru-lm) as a PyTorch module, with the same
    state_dict names: the layers are `lstm` (`gru`)."""

    def __init__(self, vocab, embed, hidden, layers, cell="lstm"):
        super().__init__()
        self.cell = cell
        self.embedding = nn.Embedding(vocab, embed)
        setattr(self, cell, CELLS[cell](embed, hidden, layers))
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        y, _ = getattr(self, self.cell)(self.embedding(tokens))
        return self.proj(y)


class PackedLstm(nn.Module):
    """A packed batch as PyTorch users run one: the LM's or the stack's
    layers on a PackedSequence of the rows' `lengths` (unsorted:
    enforce_sorted=False), padded back to T before the projection; or,
    `padded`, on the whole rectangle, the outputs past a row's length
    zeroed (what the packed call returns there)."""

    def __init__(self, module, lengths, padded):
        super().__init__()
        self.module, self.lengths, self.padded = module, lengths, padded
        self.layers = getattr(module, module.cell if isinstance(module, LanguageModel)
                              else "lstm")

    def forward(self, x):
        lm = isinstance(self.module, LanguageModel)
        x = self.module.embedding(x) if lm else x
        steps = x.shape[0]
        if self.padded:
            y, _ = self.layers(x)
            active = torch.arange(steps, device=x.device)[:, None] < \
                self.lengths.to(x.device)[None, :]
            y = y * active[:, :, None].to(y.dtype)
        else:
            packed = nn.utils.rnn.pack_padded_sequence(x, self.lengths, enforce_sorted=False)
            y, _ = self.layers(packed)
            y, _ = nn.utils.rnn.pad_packed_sequence(y, total_length=steps)
        return self.module.proj(y) if lm else y


class BareLstm(nn.Module):
    """An nn.LSTM (nn.GRU) stack returning its output sequence."""

    def __init__(self, input, hidden, layers, cell="lstm"):
        super().__init__()
        self.lstm = CELLS[cell](input, hidden, layers)

    def forward(self, x):
        return self.lstm(x)[0]


# The fine-grained LSTM of PyTorch's benchmarks/fastrnns (lstm_cell and its
# multi-layer loop), written once: eager as is, torch.jit.script, torch.compile.
def lstm_cell(x: Tensor, h: Tensor, c: Tensor, w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor, b_hh: Tensor):
    gates = torch.mm(x, w_ih.t()) + torch.mm(h, w_hh.t()) + b_ih + b_hh
    i, f, g, o = gates.chunk(4, 1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    h = torch.sigmoid(o) * torch.tanh(c)
    return h, c


def stacked_lstm(x: Tensor, params: List[Tensor]) -> Tensor:
    for layer in range(len(params) // 4):
        w_ih, w_hh = params[4 * layer], params[4 * layer + 1]
        b_ih, b_hh = params[4 * layer + 2], params[4 * layer + 3]
        h = x.new_zeros(x.size(1), w_hh.size(1))
        c = x.new_zeros(x.size(1), w_hh.size(1))
        outputs: List[Tensor] = []
        for step in x.unbind(0):
            h, c = lstm_cell(step, h, c, w_ih, w_hh, b_ih, b_hh)
            outputs.append(h)
        x = torch.stack(outputs)
    return x


def cell_lm(tokens: Tensor, embedding: Tensor, params: List[Tensor], proj_w: Tensor,
            proj_b: Tensor) -> Tensor:
    return F.linear(stacked_lstm(F.embedding(tokens, embedding), params), proj_w, proj_b)


def lstm_params(weights, prefix, layers):
    return [weights[f"{prefix}{kind}_l{layer}"] for layer in range(layers)
            for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]


def fuser_in_use(device):
    """Which TorchScript fuser can fuse on `device`, in words."""
    jit = torch._C
    if device == "cuda" and getattr(jit, "_jit_nvfuser_enabled", lambda: False)():
        return "nvFuser"
    texpr = jit._jit_texpr_fuser_enabled()
    can_fuse = jit._jit_can_fuse_on_cpu() if device == "cpu" else jit._jit_can_fuse_on_gpu()
    if texpr and can_fuse:
        return f"NNC (TensorExpr) on {device}"
    return (f"none on {device} (TensorExpr fuser {'on' if texpr else 'off'}, "
            f"{device} fusion {'allowed' if can_fuse else 'off'})")


def blas_in_use():
    """The BLAS this process mapped: Debian's torch calls whatever libblas.so.3
    the alternatives system points at, netlib's reference unless OpenBLAS is
    installed. Returns (name, warning or None)."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "/" in line}
    names = {os.path.basename(p): p for p in paths}
    for name, path in sorted(names.items()):
        if name.startswith("libopenblas"):
            return f"OpenBLAS ({name})", None
        if name.startswith("libmkl_"):
            return f"MKL ({name})", None
        if name.startswith("libblis"):
            return f"BLIS ({name})", None
    for path in paths:
        if re.search(r"/blas/libblas\.so", path):
            return (f"reference BLAS ({path})",
                    "reference (netlib) BLAS is active: about 15x slower GEMMs; "
                    "install libopenblas0-pthread")
    config = torch.__config__.show()
    match = re.search(r"BLAS_INFO=(\w+)", config)
    return f"{match.group(1) if match else 'unknown'} (no BLAS library mapped)", None


def versions(device):
    out = {"torch": torch.__version__}
    match = re.search(r"MKL-DNN v([\d.]+)", torch.__config__.show())
    if match:
        out["torch_onednn"] = match.group(1)
    if device == "cuda":
        out["cuda_device"] = torch.cuda.get_device_name()
        out["torch_cuda"] = torch.version.cuda
        out["torch_cudnn"] = torch.backends.cudnn.version()
    return out


def compiled(fn, variant, device, result):
    """The cell loop `fn` as `variant` runs it: eager, TorchScript (its
    compile time and fuser noted in `result`) or torch.compile."""
    if variant == "script":
        start = time.perf_counter()
        fn = torch.jit.script(fn)
        result["compile_s"] = time.perf_counter() - start
        result["notes"].append(f"fuser: {fuser_in_use(device)}")
    elif variant == "compile":
        fn = torch.compile(fn)
    return fn


def add_platform(result, device):
    """The BLAS in use on the CPU (with a warning for netlib's), the peak
    device memory on the GPU."""
    if device == "cpu":
        blas, warning = blas_in_use()
        result["versions"]["torch_blas"] = blas
        if warning:
            result["warnings"] = [warning]
    else:
        result["peak_device_mib"] = torch.cuda.max_memory_allocated() / 2**20


def set_precision(precision):
    """fp32 means no TF32 anywhere (PyTorch lets cuDNN use TF32 by default)."""
    allow = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = allow
    torch.backends.cudnn.allow_tf32 = allow


def recur_autograd_lm(spec, module, result):
    """The LM compiled by Recur for training (recur.compile(module,
    train=True), from the bench's build: spec["bin"]): its forward and
    backward run compiled under torch.autograd; the loss, the clipping and
    the optimizer stay PyTorch's."""
    recur = runner.import_recur(spec)
    start = time.perf_counter()
    trainable = recur.compile(module, train=True, threads=spec["threads"])
    result["compile_s"] = time.perf_counter() - start
    result["notes"].append("the LM's compiled forward (which keeps each layer's output) and "
                           "compiled backward (recur-differentiate's vector-Jacobian product) "
                           "as one torch.autograd.Function; F.cross_entropy, clip_grad_norm_ "
                           "and torch.optim.SGD are PyTorch's")
    return trainable


def train(spec, variant, weights, tokens, targets, result):
    """SGD steps of the LM as PyTorch users train it (word_language_model):
    forward, mean cross-entropy, backward, clip_grad_norm_, optimizer.step().
    The first step's loss and the weights after it are the outputs checked;
    the steps after it are timed."""
    workload, device = spec["workload"], spec["device"]
    m = workload["model"]
    if variant in ("nn-lstm", "recur-autograd"):
        module = LanguageModel(m["vocab"], m["embed"], m["hidden"], m["layers"])
        module = module.to(device, torch.float32).train()
        module.load_state_dict(weights, strict=True)
        parameters = dict(module.named_parameters())
        forward = module
        if variant == "recur-autograd":
            forward = recur_autograd_lm(spec, module, result)
    else:
        parameters = {name: value.clone().requires_grad_(True)
                      for name, value in weights.items()}
        fn = compiled(cell_lm, variant, device, result)
        params = lstm_params(parameters, "lstm.", m["layers"])

        def forward(inputs):
            return fn(inputs, parameters["embedding.weight"], params,
                      parameters["proj.weight"], parameters["proj.bias"])
    optimizer = torch.optim.SGD(list(parameters.values()), lr=workload["lr"])
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def step():
        optimizer.zero_grad(set_to_none=True)
        logits = forward(tokens)
        loss = F.cross_entropy(logits.reshape(-1, m["vocab"]), targets.reshape(-1))
        loss.backward()
        if workload["clip_norm"] > 0:
            torch.nn.utils.clip_grad_norm_(parameters.values(), workload["clip_norm"])
        optimizer.step()
        sync()
        return loss.detach()

    start = time.perf_counter()
    first = {"loss": step().cpu().numpy()}
    first.update({name: p.detach().cpu().numpy().copy() for name, p in parameters.items()})
    if variant in ("script", "compile"):
        result["compile_s"] = result.get("compile_s", 0) + time.perf_counter() - start
    _, times = runner.time_batches(step, spec["warmup"], spec["iters"])
    result["warmup"] = spec["warmup"]
    result["times_ms"] = times
    result["notes"].append("the first step (checked) runs before the warm-up steps")
    add_platform(result, device)
    runner.save(spec["outputs"], first)
    runner.report(result)


def main():
    spec = runner.read_spec()
    device, workload = spec["device"], spec["workload"]
    variant = spec["variant"]
    if device == "cuda" and not torch.cuda.is_available():
        runner.unavailable(f"torch {torch.__version__} sees no CUDA device")
    if variant == "compile" and not hasattr(torch, "compile"):
        runner.unavailable(f"torch {torch.__version__} has no torch.compile (needs 2.0+)")
    set_precision(spec["precision"])
    torch.set_num_threads(spec["threads"])
    torch.manual_seed(0)

    dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16,
             "fp64": torch.float64}[spec["precision"]]
    weights = {name: torch.from_numpy(value.copy()).to(device, dtype)
               for name, value in runner.load(spec["weights"]).items()}
    model = workload["model"]
    lm = model["kind"].endswith("-lm")
    cell = model["kind"].split("-")[0]
    inputs = runner.load(spec["inputs"])
    x = torch.from_numpy(inputs["tokens" if lm else "input"].copy()).to(device)
    if x.is_floating_point():
        x = x.to(dtype)
    prefix = "lstm." if lm else ""
    result = {"versions": versions(device), "notes": []}
    if model["kind"] in CUSTOM_KINDS:
        if variant not in ("eager-cell", "script"):
            runner.unavailable(f"variant {variant} does not run cells written in PyTorch")
        outputs = custom_cells.run(spec, variant, weights, x, result)
        add_platform(result, device)
        runner.save(spec["outputs"], {name: value.float().cpu().numpy()
                                      for name, value in outputs.items()})
        runner.report(result)
        return
    if workload["mode"] == "train":
        targets = torch.from_numpy(inputs["targets"].copy()).to(device)
        train(spec, variant, weights, x, targets, result)
        return
    if variant in ("nn-lstm", "fp64-reference", "nn-packed", "nn-padded"):
        module = (LanguageModel(model["vocab"], model["embed"], model["hidden"], model["layers"],
                                cell)
                  if lm else BareLstm(model["input"], model["hidden"], model["layers"], cell))
        module = module.to(device, dtype).eval()
        state = {name if lm else f"lstm.{name}": tensor for name, tensor in weights.items()}
        module.load_state_dict(state, strict=True)
        forward = module
        if variant in ("nn-packed", "nn-padded"):
            if "lengths" not in inputs:
                runner.unavailable(f"variant {variant} runs packed batches (a workload with "
                                   "'lengths') only")
            # pack_padded_sequence takes the lengths on the CPU.
            lengths = torch.from_numpy(inputs["lengths"].copy())
            forward = PackedLstm(module, lengths, padded=variant == "nn-padded")
    else:
        params = lstm_params(weights, prefix, model["layers"])
        fn, args = ((cell_lm, (weights["embedding.weight"], params, weights["proj.weight"],
                               weights["proj.bias"]))
                    if lm else (stacked_lstm, (params,)))
        fn = compiled(fn, variant, device, result)

        def forward(inputs):
            return fn(inputs, *args)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()

    def run():
        out = forward(x)
        sync()
        return out

    with torch.no_grad():
        warmup = spec["warmup"]
        if variant in ("script", "compile"):
            # The first call compiles (torch.compile) or profiles and
            # optimizes (TorchScript's profiling executor): JIT time, apart.
            start = time.perf_counter()
            run()
            result["compile_s"] = result.get("compile_s", 0) + time.perf_counter() - start
            # The profiling executor optimizes on the second call at the latest.
            warmup = max(warmup, 2)
        output, times = runner.time_batches(run, warmup, spec["iters"])
    result["warmup"] = warmup
    result["times_ms"] = times
    add_platform(result, device)
    runner.save(spec["outputs"], {spec["output"]: output.float().cpu().numpy()})
    runner.report(result)


if __name__ == "__main__":
    main()
