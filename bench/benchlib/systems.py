"""The systems a workload runs through, and how each one is started.

Every system runs in its own process, so its peak RSS is its own: Recur
through recur-run, PyTorch and JAX through the runners in bench/systems/, the
C++ baselines as executables in the build's bin directory.
"""
import glob
import importlib.util
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Unavailable(RuntimeError):
    """A system cannot run here (a tool or library is missing): reported with
    the reason, not as a failure."""


@dataclass
class System:
    name: str
    device: str
    kind: str  # "recur", "python" (a runner script) or "binary" (a C++ baseline)
    what: str  # one line for the report
    target: str = ""  # recur: recur-compile --target
    fusion: str = "default"  # recur: recur-compile --fusion (default: none given)
    script: str = ""  # python: runner in bench/systems/
    variant: str = ""  # python: what the runner builds
    binary: str = ""  # binary: executable in --bin
    precisions: tuple = ("fp32", "tf32", "bf16")
    env: dict = field(default_factory=dict)
    # Workload modes it runs: "forward", and "train" (an LM's SGD step).
    modes: tuple = ("forward",)
    # The cells of the models it runs (workloads.GATES).
    cells: tuple = ("lstm",)
    # The batches it runs: "full" rectangles, and "packed" ones, whose rows
    # have lengths of their own (a workload's "lengths").
    batches: tuple = ("full",)


BOTH_MODES = ("forward", "train")
# Recur runs any cell the workloads name; PyTorch's nn modules, LSTMs and
# GRUs; its cell loops (eager, TorchScript), LSTMs and cells written in
# PyTorch.
ALL_CELLS = ("lstm", "gru", "lnlstm")
NN_CELLS = ("lstm", "gru")
LOOP_CELLS = ("lstm", "lnlstm")
# Recur's models take sequence lengths (recur-gen --lengths).
ANY_BATCH = ("full", "packed")


# Debian's torch runs aten's OpenMP pool next to OpenBLAS's pthread pool; with
# GNU OpenMP's default spinning the two fight over the cores (LM at B=16 on 2
# cores: nn.LSTM 384 ms median, 70-1140 ms spread; 50 ms passive). Systems
# with one pool (Recur, oneDNN) are faster spinning and keep the default.
TORCH_CPU_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}

SYSTEMS = [
    # bf16: a bf16 model (recur-gen --dtype bf16) with bf16 products (f32
    # sums): AVX512-BF16 dot products on the CPU, tensor cores on the GPU.
    System("recur-cpu", "cpu", "recur",
           "Recur, compiled for this CPU (recur-compile --target=cpu; its default fusion level)",
           target="cpu", precisions=("fp32", "bf16"), modes=BOTH_MODES, cells=ALL_CELLS,
           batches=ANY_BATCH),
    # The staged table: each fusion level on its own (recur-compile --fusion).
    System("recur-cpu-none", "cpu", "recur", "Recur, CPU, unfused (--fusion=none)",
           target="cpu", fusion="none", precisions=("fp32",), modes=BOTH_MODES, cells=ALL_CELLS,
           batches=ANY_BATCH),
    System("recur-cpu-hoist", "cpu", "recur", "Recur, CPU, input GEMM hoisted (--fusion=hoist)",
           target="cpu", fusion="hoist", precisions=("fp32",), modes=BOTH_MODES, cells=ALL_CELLS,
           batches=ANY_BATCH),
    System("recur-cpu-cell", "cpu", "recur", "Recur, CPU, + fused cell (--fusion=cell)",
           target="cpu", fusion="cell", precisions=("fp32",), modes=BOTH_MODES, cells=ALL_CELLS,
           batches=ANY_BATCH),
    System("recur-cpu-wavefront", "cpu", "recur", "Recur, CPU, + layer wavefront (--fusion=wavefront)",
           target="cpu", fusion="wavefront", precisions=("fp32",), modes=BOTH_MODES,
           cells=ALL_CELLS, batches=ANY_BATCH),
    System("onednn-cpu", "cpu", "binary",
           "oneDNN lstm_forward (GRU: lbr_gru_forward) + inner_product (C++); train: + "
           "lstm_backward, "
           "inner_product backward, softmax",
           binary="bench-onednn-lm", precisions=("fp32", "bf16"), modes=BOTH_MODES,
           cells=NN_CELLS),
    System("torch-nn-lstm", "cpu", "python", "PyTorch nn.LSTM (nn.GRU for a GRU) (aten, BLAS)",
           script="torch_lstm.py", variant="nn-lstm", env=TORCH_CPU_ENV, modes=BOTH_MODES,
           cells=NN_CELLS),
    # A packed batch as PyTorch users run one: nn.LSTM (nn.GRU) on a
    # PackedSequence (pack_padded_sequence, enforce_sorted=False), and on
    # the padded rectangle, every row for T steps (its outputs past a row's
    # length zeroed before the projection, so that they check).
    System("torch-nn-lstm-packed", "cpu", "python",
           "PyTorch nn.LSTM (nn.GRU) on a PackedSequence (aten, BLAS)",
           script="torch_lstm.py", variant="nn-packed", env=TORCH_CPU_ENV, cells=NN_CELLS,
           batches=("packed",)),
    System("torch-nn-lstm-padded", "cpu", "python",
           "PyTorch nn.LSTM (nn.GRU) on the padded batch, every row for T steps",
           script="torch_lstm.py", variant="nn-padded", env=TORCH_CPU_ENV, cells=NN_CELLS,
           batches=("packed",)),
    # A training step as PyTorch users drive one, the model compiled:
    # recur.compile(lm, train=True) under torch.autograd.
    System("recur-cpu-autograd", "cpu", "python",
           "Recur from PyTorch: the LM compiled for training (recur.compile(train=True)) "
           "under torch.autograd; F.cross_entropy, clip_grad_norm_, torch.optim.SGD in PyTorch",
           script="torch_lstm.py", variant="recur-autograd", env=TORCH_CPU_ENV,
           precisions=("fp32",), modes=("train",)),
    # One file exported by torch.onnx.export, run by ONNX Runtime, IREE and
    # Recur's ONNX front end (bench/systems/onnx_models.py).
    System("onnxruntime-cpu", "cpu", "python",
           "ONNX Runtime (CPU execution provider) on the model exported by torch.onnx.export",
           script="onnx_models.py", variant="onnxruntime", precisions=("fp32",),
           cells=NN_CELLS),
    System("iree-cpu", "cpu", "python",
           "IREE on the exported model (iree-import-onnx, iree-compile llvm-cpu)",
           script="onnx_models.py", variant="iree", precisions=("fp32",), cells=NN_CELLS),
    System("recur-onnx-cpu", "cpu", "python",
           "Recur on the exported model (recur.onnx.compile: recur-import-onnx's IR)",
           script="onnx_models.py", variant="recur-onnx", precisions=("fp32",),
           cells=NN_CELLS),
    System("torch-eager-cell", "cpu", "python", "PyTorch eager fine-grained LSTM cell loop",
           script="torch_lstm.py", variant="eager-cell", env=TORCH_CPU_ENV, modes=BOTH_MODES,
           cells=LOOP_CELLS),
    System("torch-script", "cpu", "python", "TorchScript-scripted fine-grained LSTM",
           script="torch_lstm.py", variant="script", env=TORCH_CPU_ENV, modes=BOTH_MODES,
           cells=LOOP_CELLS),
    System("torch-compile", "cpu", "python", "torch.compile of the fine-grained LSTM",
           script="torch_lstm.py", variant="compile", env=TORCH_CPU_ENV),
    # tf32: recur-compile --precision=tf32 (tensor cores for the GEMMs and
    # the recurrence's products); bf16: a bf16 model, bf16 tensor cores.
    System("recur-cuda", "cuda", "recur", "Recur, compiled for the GPU (recur-compile --target=cuda)",
           target="cuda", modes=BOTH_MODES, cells=ALL_CELLS,
           batches=ANY_BATCH),
    System("recur-cuda-none", "cuda", "recur", "Recur, GPU, unfused (--fusion=none)",
           target="cuda", fusion="none", modes=BOTH_MODES, cells=ALL_CELLS,
           batches=ANY_BATCH),
    # Per-layer time loops (--fusion=cell) beside the default wavefront, for
    # the GRU stacks: what the GPU's wavefront of recur.rnn layers (one unit
    # step over every layer per diagonal) buys.
    System("recur-cuda-cell", "cuda", "recur",
           "Recur, GPU, a persistent kernel per layer (--fusion=cell)",
           target="cuda", fusion="cell", precisions=("fp32", "tf32"), cells=("gru",)),
    System("recur-cuda-cublaslt", "cuda", "recur",
           "Recur, GPU, GEMMs outside the recurrence by cuBLASLt (--gemm=cublaslt)",
           target="cuda-cublaslt", modes=BOTH_MODES, cells=ALL_CELLS,
           batches=ANY_BATCH),
    System("cudnn", "cuda", "binary", "cuDNN cudnnRNNForward + cuBLASLt projection (C++)",
           # bf16: the row reports whether this cuDNN takes a bf16 LSTM.
           binary="bench-cudnn-lm", precisions=("fp32", "tf32", "bf16"), modes=BOTH_MODES),
    System("torch-cudnn", "cuda", "python", "PyTorch nn.LSTM (nn.GRU) on the GPU (cuDNN)",
           script="torch_lstm.py", variant="nn-lstm", modes=BOTH_MODES, cells=NN_CELLS),
    System("torch-cudnn-packed", "cuda", "python",
           "PyTorch nn.LSTM (nn.GRU) on a PackedSequence on the GPU (cuDNN)",
           script="torch_lstm.py", variant="nn-packed", cells=NN_CELLS, batches=("packed",)),
    System("torch-eager-cell-cuda", "cuda", "python", "PyTorch eager fine-grained LSTM cell loop",
           script="torch_lstm.py", variant="eager-cell", modes=BOTH_MODES, cells=LOOP_CELLS),
    System("torch-script-cuda", "cuda", "python", "TorchScript-scripted fine-grained LSTM (fused)",
           script="torch_lstm.py", variant="script", modes=BOTH_MODES, cells=LOOP_CELLS),
    System("torch-compile-cuda", "cuda", "python", "torch.compile of the fine-grained LSTM",
           script="torch_lstm.py", variant="compile", modes=BOTH_MODES),
    System("iree-cuda", "cuda", "python",
           "IREE on the exported model (iree-import-onnx, iree-compile cuda sm_90)",
           script="onnx_models.py", variant="iree", precisions=("fp32",), cells=NN_CELLS),
    System("jax-scan", "cuda", "python", "JAX lax.scan of the LSTM cell, jit (XLA)",
           script="jax_scan.py", env={"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}),
]
BY_NAME = {s.name: s for s in SYSTEMS}
# Names the issues and fastrnns use for rows that exist under another name:
# the custom cell scripted step by step is the torch-script row.
ALIASES = {"torch-script-cell": "torch-script", "torch-script-cell-cuda": "torch-script-cuda"}
# The float64 reference for workloads whose recur-run reference would take too long.
FP64_REFERENCE = System("torch-fp64", "cpu", "python", "PyTorch nn.LSTM (nn.GRU) in float64",
                        script="torch_lstm.py", variant="fp64-reference", env=TORCH_CPU_ENV,
                        cells=NN_CELLS)


def select(text):
    """--systems: names (or ALIASES), 'cpu', 'cuda' or 'all', comma-separated."""
    chosen = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        item = ALIASES.get(item, item)
        if item == "all":
            matches = SYSTEMS
        elif item in ("cpu", "cuda"):
            matches = [s for s in SYSTEMS if s.device == item]
        elif item in BY_NAME:
            matches = [BY_NAME[item]]
        else:
            raise ValueError(f"unknown system '{item}'; known: {', '.join(BY_NAME)}, "
                             "or cpu, cuda, all")
        chosen += [s for s in matches if s not in chosen]
    return chosen


def nvidia_library_dirs():
    """Where PyTorch's wheels keep cuDNN and cuBLAS (site-packages/nvidia/*/lib):
    the cuDNN baseline loads them from there rather than carrying its own.
    RECUR_CUDNN_DIR comes first."""
    dirs = [os.environ["RECUR_CUDNN_DIR"]] if os.environ.get("RECUR_CUDNN_DIR") else []
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations if spec else []):
        dirs += sorted(d for d in glob.glob(os.path.join(root, "*", "lib"))
                       if glob.glob(os.path.join(d, "lib*.so*")))
    return dirs


def busy_cpu_seconds():
    """CPU time all processes have spent (from /proc/stat), in seconds."""
    with open("/proc/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal: all but idle and iowait.
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def wait_for_quiet(limit, timeout, window=3.0):
    """Waits until the machine has a `window` in which fewer than `limit`
    cores are busy, at most `timeout` seconds; returns whether it had one."""
    deadline = time.monotonic() + timeout
    while True:
        busy = busy_cpu_seconds()
        time.sleep(window)
        if (busy_cpu_seconds() - busy) / window < limit:
            return True
        if time.monotonic() > deadline:
            return False


@dataclass
class Process:
    returncode: int
    stdout: str
    stderr: str
    peak_rss_mib: float
    wall_s: float
    timed_out: bool = False
    # Cores other processes kept busy on average while this one ran: timings
    # taken next to a compiler job are not worth much.
    background_cores: float = 0.0

    def failure(self, what):
        """One paragraph saying why the process failed, with its last words."""
        if self.timed_out:
            reason = f"{what} timed out after {self.wall_s:.0f} s"
        elif self.returncode < 0:
            reason = f"{what} was killed by signal {-self.returncode}"
        else:
            reason = f"{what} exited with status {self.returncode}"
        tail = "\n".join(self.stderr.strip().splitlines()[-8:])
        return f"{reason}: {tail}" if tail else reason


def run_process(command, workdir, name, timeout, env=None):
    """Runs `command` with stdout/stderr in files under `workdir`; returns its
    exit status, output and peak RSS (from wait4, so it is this child's
    alone)."""
    out_path = os.path.join(workdir, f"{name}.stdout")
    err_path = os.path.join(workdir, f"{name}.stderr")
    environment = dict(os.environ, **(env or {}))
    busy = busy_cpu_seconds()
    start = time.perf_counter()
    with open(out_path, "w") as out, open(err_path, "w") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, env=environment,
                                   start_new_session=True)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                os.killpg(process.pid, 9)
                timed_out = True
                _, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.02)
    # Popen must not wait for the child again.
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    others = busy_cpu_seconds() - busy - usage.ru_utime - usage.ru_stime
    with open(out_path) as out, open(err_path) as err:
        stdout, stderr = out.read(), err.read()
    return Process(process.returncode, stdout, stderr, usage.ru_maxrss / 1024, wall, timed_out,
                   max(0.0, others / wall))


def parse_result(process, what):
    """The JSON object a runner printed last, or raises RuntimeError."""
    if process.returncode != 0 or process.timed_out:
        raise RuntimeError(process.failure(what))
    # recur-run prints an indented object, runners one line after any chatter.
    text = process.stdout.strip()
    for candidate in (text, text.splitlines()[-1] if text else ""):
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            pass
    raise RuntimeError(f"{what} printed no JSON result; stdout ends: {text[-300:]!r}")


def python_command(system, spec_path):
    return [sys.executable, os.path.join(BENCH, "systems", system.script), spec_path]
