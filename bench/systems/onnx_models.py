"""ONNX runners: the workload's model exported once by torch.onnx.export (its
weights, its T and B), and that one file run by ONNX Runtime (CPU execution
provider), by IREE (iree-import-onnx, iree-compile for llvm-cpu or cuda, the
iree.runtime module) and by Recur (recur.onnx.compile).

    onnx_models.py SPEC.json   (written by bench/run; prints one JSON result)

onnx and onnxruntime come from scripts/setup.sh's directory
(RECUR_ONNX_PYTHONPATH, default /opt/recur/python-onnx), IREE from
RECUR_IREE_PYTHONPATH (default /opt/recur/python-iree; bench/README.md says
how to install it). A missing one makes the row unavailable, saying so.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from systems import runner  # noqa: E402

ONNX_PATH = os.environ.get("RECUR_ONNX_PYTHONPATH", "/opt/recur/python-onnx")
IREE_PATH = os.environ.get("RECUR_IREE_PYTHONPATH", "/opt/recur/python-iree")
IREE_INSTALL = (f"python3 -m pip install --no-deps --target {IREE_PATH} "
                "iree-base-compiler==3.13.0 iree-base-runtime==3.13.0 ml_dtypes==0.5.1")
# onnx first: Debian's torch links libonnx 1.12, whose protobuf descriptors
# the pip onnx would otherwise meet (docs/onnx.md).
for path in (IREE_PATH, ONNX_PATH):
    if os.path.isdir(path):
        sys.path.insert(0, path)
try:
    import onnx
except ImportError as error:
    runner.unavailable(f"onnx is not importable ({error}); scripts/setup.sh installs it in "
                       f"{ONNX_PATH}")
try:
    import torch
except ImportError:
    runner.unavailable(f"torch is not installed for {sys.executable}")
import numpy as np  # noqa: E402

from systems import torch_lstm  # noqa: E402


def export(spec, weights, example, directory):
    """The workload's model as an ONNX file (opset 14, static T and B)."""
    model = spec["workload"]["model"]
    lm = model["kind"].endswith("-lm")
    cell = model["kind"].split("-")[0]
    if cell not in torch_lstm.CELLS:
        runner.unavailable(f"no ONNX export of a '{cell}' model here (LSTM and GRU models)")
    module = (torch_lstm.LanguageModel(model["vocab"], model["embed"], model["hidden"],
                                       model["layers"], cell)
              if lm else torch_lstm.BareLstm(model["input"], model["hidden"], model["layers"],
                                             cell))
    state = {name if lm else f"lstm.{name}": torch.from_numpy(value.copy())
             for name, value in weights.items()}
    module.load_state_dict(state, strict=True)
    module.eval()
    path = os.path.join(directory, "model.onnx")
    name = "tokens" if lm else "input"
    with torch.no_grad():
        torch.onnx.export(module, (torch.from_numpy(example),), path, input_names=[name],
                          output_names=[spec["output"]], opset_version=14)
    return path, name


def onnxruntime_session(path, threads, result):
    try:
        import onnxruntime as ort
    except ImportError as error:
        runner.unavailable(f"onnxruntime is not importable ({error}); scripts/setup.sh "
                           f"installs it in {ONNX_PATH}")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    start = time.perf_counter()
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    result["compile_s"] = time.perf_counter() - start
    result["versions"]["onnxruntime"] = ort.__version__
    result["notes"].append("ONNX Runtime CPUExecutionProvider, all graph optimizations, "
                           "intra-op threads = the bench's threads")
    return lambda feeds: session.run(None, feeds)[0]


def iree_function(path, device, threads, directory, result):
    binaries = os.path.join(IREE_PATH, "bin")
    importer = os.path.join(binaries, "iree-import-onnx")
    compiler = os.path.join(binaries, "iree-compile")
    if not os.path.exists(compiler):
        runner.unavailable(f"IREE is not installed in {IREE_PATH} (install: {IREE_INSTALL})")
    try:
        import iree.runtime as ireert
    except ImportError as error:
        runner.unavailable(f"iree.runtime is not importable ({error}; install: {IREE_INSTALL})")
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ONNX_PATH, IREE_PATH, os.environ.get("PYTHONPATH", "")]))
    imported = os.path.join(directory, "model.iree.mlir")
    module_file = os.path.join(directory, "model.vmfb")
    backend = ["--iree-hal-target-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"] \
        if device == "cpu" else ["--iree-hal-target-backends=cuda",
                                 "--iree-cuda-target=sm_90"]
    start = time.perf_counter()
    for command, what in (([sys.executable, importer, path, "-o", imported], "iree-import-onnx"),
                          ([compiler, imported, *backend, "-o", module_file], "iree-compile")):
        process = subprocess.run(command, capture_output=True, text=True, env=environment)
        if process.returncode != 0:
            lines = (process.stderr or process.stdout).strip().splitlines()
            runner.unavailable(f"{what} failed: {lines[-1] if lines else process.returncode}")
    result["compile_s"] = time.perf_counter() - start
    driver = "local-task" if device == "cpu" else "cuda"
    if device == "cpu":
        # local-task's worker count: the bench's threads.
        ireert.flags.parse_flags(f"--task_topology_max_group_count={threads}")
    config = ireert.Config(driver)
    context = ireert.SystemContext(config=config)
    context.add_vm_module(ireert.VmModule.mmap(config.vm_instance, module_file))
    # iree-import-onnx names the function after the graph (torch_jit).
    function = context.modules.module[onnx.load(path, load_external_data=False).graph.name]
    from importlib import metadata
    result["versions"]["iree"] = metadata.version("iree-base-runtime")
    result["notes"].append(f"IREE: iree-import-onnx, iree-compile {' '.join(backend)}, "
                           f"iree.runtime driver {driver}")
    return lambda feeds: function(*feeds.values()).to_host()


def recur_function(path, spec, threads, result):
    runner.import_recur(spec)
    import recur.onnx
    start = time.perf_counter()
    compiled = recur.onnx.compile(path, threads=threads)
    result["compile_s"] = time.perf_counter() - start
    result["notes"].append("recur.onnx.compile of the exported file (recur-import-onnx's IR, "
                           "recur-compile --target=cpu)")
    return lambda feeds: compiled(**feeds)[0]


def main():
    spec = runner.read_spec()
    device, workload, variant = spec["device"], spec["workload"], spec["variant"]
    if workload["mode"] != "forward":
        runner.unavailable("ONNX runs inference: forward workloads only")
    if spec["precision"] != "fp32":
        runner.unavailable(f"the exported model is fp32; precision {spec['precision']} is not run")
    if device == "cuda" and variant != "iree":
        runner.unavailable(f"variant {variant} runs on the CPU")
    weights = runner.load(spec["weights"])
    inputs = runner.load(spec["inputs"])
    if "lengths" in inputs:
        runner.unavailable("a packed batch (sequence_lens) is not exported here")
    torch.set_num_threads(spec["threads"])
    result = {"versions": {"onnx": onnx.__version__, "torch": torch.__version__}, "notes": []}
    directory = tempfile.mkdtemp(prefix="onnx-bench-")
    try:
        model = workload["model"]
        x = inputs["tokens" if model["kind"].endswith("-lm") else "input"].copy()
        path, name = export(spec, weights, x, directory)
        result["notes"].append("the model exported once by torch.onnx.export (opset 14, the "
                               "workload's T and B); every ONNX row runs that file")
        if variant == "onnxruntime":
            run_model = onnxruntime_session(path, spec["threads"], result)
        elif variant == "iree":
            run_model = iree_function(path, device, spec["threads"], directory, result)
        elif variant == "recur-onnx":
            run_model = recur_function(path, spec, spec["threads"], result)
        else:
            runner.unavailable(f"unknown variant {variant}")
        feeds = {name: np.ascontiguousarray(x)}
        output, times = runner.time_batches(lambda: run_model(feeds), spec["warmup"],
                                            spec["iters"])
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    result["times_ms"] = times
    runner.save(spec["outputs"], {spec["output"]: np.asarray(output, dtype=np.float32)})
    runner.report(result)


if __name__ == "__main__":
    main()
