"""The ONNX front end (recur.onnx, recur-import-onnx): ONNX's own LSTM, GRU
and RNN node test cases through ONNX's backend test runner; every attribute
of the three operators against ONNX Runtime; modules exported by
torch.onnx.export with dynamic axes against torch; the errors."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
torch = pytest.importorskip("torch")
import onnx.backend.test  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import recur  # noqa: E402
import recur.onnx  # noqa: E402
from recur import _safetensors  # noqa: E402

BUILD = os.environ.get("RECUR_BUILD_DIR", "build")
RECURRENT_CASES = r"test_(lstm|gru|rnn|simple_rnn)_"

# ONNX's node test cases for LSTM, GRU and RNN (the data the installed onnx
# ships), run by ONNX's backend test runner on recur.onnx.Backend.
backend_test = onnx.backend.test.BackendTest(recur.onnx.Backend, __name__)
backend_test.include(RECURRENT_CASES + r".*_cpu$")
# The runner lists every other case of every op as skipped: only these (its
# test_cases property builds the classes anew at each access).
NODE_CASES = backend_test.test_cases["OnnxBackendNodeModelTest"]
for _name in [n for n in dir(NODE_CASES) if n.startswith("test_")]:
    if not re.match(RECURRENT_CASES + r".*_cpu$", _name):
        delattr(NODE_CASES, _name)


def test_the_runner_has_every_recurrent_node_case():
    """The include pattern reaches every LSTM, GRU and RNN case onnx ships
    (none silently skipped): ONNX 1.16 has 12."""
    data = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    shipped = sorted(d for d in os.listdir(data)
                     if d.split("_")[1] in ("lstm", "gru", "rnn", "simple"))
    assert len(shipped) >= 12, shipped
    included = [name for name in dir(NODE_CASES) if name.startswith("test_")]
    missing = [d for d in shipped if d + "_cpu" not in included]
    assert not missing, missing


# --- every attribute, against ONNX Runtime ---------------------------------

def _node_model(kind, hidden, size, directions, attributes, optional):
    """One LSTM/GRU/RNN node whose weights are initializers and whose
    optional inputs (`optional`: names among sequence_lens, initial_h,
    initial_c, B, P) are graph inputs or initializers."""
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    rng = np.random.default_rng(7)
    layout = attributes.get("layout", 0)
    x_shape = ["b", "t", size] if layout else ["t", "b", size]
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)]
    initializers = []

    def init(name, shape, scale=0.4):
        array = (rng.standard_normal(shape) * scale).astype(np.float32)
        initializers.append(onnx.numpy_helper.from_array(array, name))
        return name

    names = ["X", init("W", [directions, gates * hidden, size]),
             init("R", [directions, gates * hidden, hidden])]
    names.append(init("B", [directions, 2 * gates * hidden]) if "B" in optional else "")
    names.append("")
    if "sequence_lens" in optional:
        names[4] = "sequence_lens"
        inputs.append(helper.make_tensor_value_info("sequence_lens", TensorProto.INT32, ["b"]))
    state_shape = ["b", directions, hidden] if layout else [directions, "b", hidden]
    for state in ("initial_h", "initial_c") if kind == "LSTM" else ("initial_h",):
        if state in optional:
            inputs.append(helper.make_tensor_value_info(state, TensorProto.FLOAT, state_shape))
            names.append(state)
        else:
            names.append("")
    if kind == "LSTM" and "P" in optional:
        names.append(init("P", [directions, 3 * hidden]))
    while names and names[-1] == "":
        names.pop()
    outputs = ["Y", "Y_h"] + (["Y_c"] if kind == "LSTM" else [])
    node = helper.make_node(kind, names, outputs, name=f"the_{kind.lower()}",
                            hidden_size=hidden, **attributes)
    shapes = {"Y": ["b", "t", directions, hidden] if layout else
               ["t", directions, "b", hidden], "Y_h": state_shape, "Y_c": state_shape}
    graph = helper.make_graph([node], "g", inputs, [
        helper.make_tensor_value_info(o, TensorProto.FLOAT, shapes[o]) for o in outputs],
        initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def _feeds(model, seq, batch, rng):
    feeds = {}
    for value in model.graph.input:
        dims = [d.dim_value or {"t": seq, "b": batch}[d.dim_param]
                for d in value.type.tensor_type.shape.dim]
        if value.name == "sequence_lens":
            lengths = rng.integers(1, seq + 1, size=dims).astype(np.int32)
            lengths[0] = seq
            feeds[value.name] = lengths
        else:
            feeds[value.name] = rng.standard_normal(dims).astype(np.float32)
    return feeds


def _onnxruntime(model, feeds):
    """ONNX Runtime's outputs. It refuses layout=1 (batch-major): the same
    node with layout=0 then runs on the transposed tensors."""
    ort = pytest.importorskip("onnxruntime")
    node = model.graph.node[0]
    batch_major = any(a.name == "layout" and a.i == 1 for a in node.attribute)
    if batch_major:
        model = onnx.ModelProto.FromString(model.SerializeToString())
        node = model.graph.node[0]
        for attribute in node.attribute:
            if attribute.name == "layout":
                attribute.i = 0
        for value in list(model.graph.input) + list(model.graph.output):
            dims = value.type.tensor_type.shape.dim
            order = [1, 0, 2] if value.name != "Y" else [1, 2, 0, 3]
            if value.name != "sequence_lens":
                copies = [type(d)() for d in dims]
                for copy, source in zip(copies, [dims[k] for k in order]):
                    copy.CopyFrom(source)
                del dims[:]
                dims.extend(copies)
        feeds = {name: value.transpose(1, 0, 2) if name != "sequence_lens" else value
                 for name, value in feeds.items()}
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    outputs = session.run(None, feeds)
    if batch_major:
        outputs = [o.transpose(2, 0, 1, 3) if o.ndim == 4 else o.transpose(1, 0, 2)
                   for o in outputs]
    return outputs


ATTRIBUTE_CASES = [
    ("LSTM", {}, ["B"]),
    ("LSTM", {"direction": "reverse"}, ["B", "initial_h", "initial_c"]),
    ("LSTM", {"direction": "bidirectional"}, ["B", "sequence_lens", "initial_h"]),
    ("LSTM", {"layout": 1, "direction": "bidirectional"}, ["B", "initial_h", "initial_c"]),
    ("LSTM", {"clip": 0.3}, ["B"]),
    ("LSTM", {"input_forget": 1}, ["B", "P"]),
    ("LSTM", {"direction": "bidirectional"}, ["B", "P", "sequence_lens"]),
    ("LSTM", {"activations": ["HardSigmoid", "Affine", "Elu"], "activation_alpha": [0.3, 0.8, 0.7],
              "activation_beta": [0.4, 0.1]}, ["B"]),
    ("LSTM", {"activations": ["Sigmoid", "ScaledTanh", "Softsign"],
              "activation_alpha": [1.3], "activation_beta": [0.7]}, []),
    ("GRU", {}, ["B"]),
    ("GRU", {"linear_before_reset": 1}, ["B", "sequence_lens", "initial_h"]),
    ("GRU", {"linear_before_reset": 1, "direction": "bidirectional"}, ["B"]),
    ("GRU", {"direction": "reverse", "clip": 0.5}, ["B", "initial_h"]),
    ("GRU", {"layout": 1}, ["B", "initial_h"]),
    ("GRU", {"activations": ["LeakyRelu", "Softplus"], "activation_alpha": [0.2]}, []),
    ("GRU", {"activations": ["Sigmoid", "ThresholdedRelu"], "activation_alpha": [0.1]}, ["B"]),
    # alpha given: ONNX Runtime's RNN defaults it to 0, not ThresholdedRelu's 1.
    ("RNN", {"activations": ["ThresholdedRelu"], "activation_alpha": [0.5]}, ["B"]),
    ("RNN", {}, ["B"]),
    ("RNN", {"activations": ["Relu"]}, ["B", "sequence_lens"]),
    ("RNN", {"direction": "bidirectional", "activations": ["Tanh", "Relu"]},
     ["B", "initial_h", "sequence_lens"]),
    ("RNN", {"layout": 1, "direction": "reverse"}, ["initial_h"]),
    ("RNN", {"activations": ["Sigmoid"], "clip": 0.2}, ["B"]),
]


@pytest.mark.parametrize("kind,attributes,optional", ATTRIBUTE_CASES,
                         ids=[f"{k}-{'-'.join(f'{a}={v}' for a, v in at.items()) or 'default'}-"
                              f"{'+'.join(o) or 'none'}" for k, at, o in ATTRIBUTE_CASES])
def test_attributes_match_onnxruntime(kind, attributes, optional):
    directions = 2 if attributes.get("direction") == "bidirectional" else 1
    model = _node_model(kind, 5, 3, directions, attributes, optional)
    compiled = recur.onnx.compile(model)
    rng = np.random.default_rng(3)
    for seq, batch in ((6, 4), (3, 7)):  # dynamic T and B: one library
        feeds = _feeds(model, seq, batch, rng)
        want = _onnxruntime(model, feeds)
        got = compiled(**feeds)
        for name, g, w in zip(compiled.output_names, got, want):
            assert g.shape == w.shape, (name, g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=name)


def test_named_layers_where_torch_semantics_agree():
    """Default LSTMs, GRUs with linear_before_reset=1 and tanh/relu RNNs are
    Recur's named layers (every fusion stage's fast path); the rest are the
    recur.rnn of a cell."""
    cases = {("LSTM", ()): "recur.lstm", ("GRU", (("linear_before_reset", 1),)): "recur.gru",
             ("RNN", (("activations", ("Relu",)),)): "recur.rnn_relu",
             ("GRU", ()): "recur.rnn ", ("LSTM", (("clip", 1.0),)): "recur.rnn "}
    for (kind, attributes), op in cases.items():
        attributes = {k: list(v) if isinstance(v, tuple) else v for k, v in attributes}
        ir, _, _ = recur.onnx.import_model(_node_model(kind, 4, 3, 1, attributes, ["B"]))
        assert op in ir, (kind, attributes, ir)


def test_gemm_head_softmax_and_shape_arithmetic_match_onnxruntime():
    """RNN -> Squeeze -> Reshape [T*B, H] -> Gemm -> Softmax -> Reshape back to
    [T, B, V] by Shape arithmetic: the merged run-time size and the glue."""
    rng = np.random.default_rng(5)
    hidden, size, vocab = 6, 4, 9

    def const(name, array):
        return helper.make_node("Constant", [], [name], name=f"const_{name}",
                                value=onnx.numpy_helper.from_array(np.asarray(array), name))

    nodes = [
        helper.make_node("RNN", ["X", "W", "R", "B"], ["Y"], name="rnn", hidden_size=hidden),
        const("axes", np.array([1], np.int64)),
        helper.make_node("Squeeze", ["Y", "axes"], ["y"], name="squeeze"),
        const("rows", np.array([-1, hidden], np.int64)),
        helper.make_node("Reshape", ["y", "rows"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "V", "c"], ["scores"], name="head", transB=1),
        helper.make_node("Softmax", ["scores"], ["p"], name="softmax", axis=-1),
        helper.make_node("Shape", ["X"], ["shape"], name="shape"),
        const("zero", np.array([0], np.int64)),
        const("two", np.array([2], np.int64)),
        helper.make_node("Slice", ["shape", "zero", "two"], ["tb"], name="tb"),
        const("v", np.array([vocab], np.int64)),
        helper.make_node("Concat", ["tb", "v"], ["tbv"], name="tbv", axis=0),
        helper.make_node("Reshape", ["p", "tbv"], ["probabilities"], name="unflatten"),
    ]
    initializers = [onnx.numpy_helper.from_array(
        (rng.standard_normal(shape) * 0.5).astype(np.float32), name) for name, shape in
        (("W", [1, hidden, size]), ("R", [1, hidden, hidden]), ("B", [1, 2 * hidden]),
         ("V", [vocab, hidden]), ("c", [vocab]))]
    graph = helper.make_graph(
        nodes, "head", [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["t", "b", size])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["t", "b", vocab])],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    compiled = recur.onnx.compile(model)
    for seq, batch in ((5, 3), (2, 6)):
        x = rng.standard_normal((seq, batch, size)).astype(np.float32)
        (want,) = _onnxruntime(model, {"X": x})
        (got,) = compiled(x)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def test_cuda_target_compiles_and_runs_where_there_is_a_gpu():
    """target="cuda": the imported model compiles for the GPU; with a GPU it
    matches ONNX Runtime, without one loading it says why."""
    if not os.path.exists("/usr/local/cuda/bin/ptxas"):
        pytest.skip("no CUDA toolkit (ptxas) to compile for the GPU")
    model = _node_model("GRU", 5, 3, 2, {"direction": "bidirectional"}, ["B", "sequence_lens"])
    try:
        compiled = recur.onnx.compile(model, target="cuda")
    except recur.RecurError as error:
        assert re.search(r"cannot run CUDA model '.*\.so': no CUDA (driver|device)",
                         str(error)), str(error)
        return
    feeds = _feeds(model, 6, 4, np.random.default_rng(1))
    for got, want in zip(compiled(**feeds), _onnxruntime(model, feeds)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


# --- modules exported by torch.onnx.export ----------------------------------

class LanguageModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(50, 8)
        self.lstm = torch.nn.LSTM(8, 16, 2)
        self.proj = torch.nn.Linear(16, 50)

    def forward(self, tokens):
        return torch.log_softmax(self.proj(self.lstm(self.embedding(tokens))[0]), -1)


def _export(module, args, input_names, output_names, path):
    dynamic = {}
    for name, value in zip(input_names + output_names, list(args) + [None] * 9):
        if name in ("input", "tokens", "output", "logits"):
            dynamic[name] = {0: "dim0", 1: "dim1"}
        elif name in ("h0", "c0", "h_n", "c_n"):
            dynamic[name] = {1: "batch"}
    torch.onnx.export(module, tuple(args), path, input_names=input_names,
                      output_names=output_names, dynamic_axes=dynamic, opset_version=14)
    return path


EXPORTED = {
    "lstm-2-layers": (lambda: torch.nn.LSTM(5, 7, 2), False, False),
    "lstm-bidirectional-batch-first-state": (
        lambda: torch.nn.LSTM(5, 7, 2, bidirectional=True, batch_first=True), True, True),
    "gru-bidirectional": (lambda: torch.nn.GRU(5, 7, 1, bidirectional=True), False, False),
    "gru-2-layers-state": (lambda: torch.nn.GRU(5, 7, 2), False, True),
    "rnn-relu-no-bias": (lambda: torch.nn.RNN(5, 7, 2, nonlinearity="relu", bias=False),
                         False, False),
    "rnn-tanh-batch-first-state": (lambda: torch.nn.RNN(5, 7, 1, batch_first=True), True, True),
}


@pytest.mark.parametrize("name", sorted(EXPORTED))
def test_exported_module_matches_torch(name, tmp_path):
    make, batch_first, with_state = EXPORTED[name]
    torch.manual_seed(0)
    module = make().eval()
    lstm = isinstance(module, torch.nn.LSTM)
    directions = 2 if module.bidirectional else 1

    def arguments(seq, batch):
        x = torch.randn(batch, seq, 5) if batch_first else torch.randn(seq, batch, 5)
        if not with_state:
            return [x]
        h0 = torch.randn(module.num_layers * directions, batch, 7)
        return [x, (h0, torch.randn_like(h0))] if lstm else [x, h0]

    names = ["input"] + (["h0", "c0"] if with_state and lstm else ["h0"] if with_state else [])
    outputs = ["output", "h_n"] + (["c_n"] if lstm else [])
    path = _export(module, arguments(4, 3), names, outputs, str(tmp_path / "m.onnx"))
    compiled = recur.onnx.compile(path)
    assert compiled.input_names == names
    for seq, batch in ((4, 3), (9, 5)):
        args = arguments(seq, batch)
        with torch.no_grad():
            y, state = module(*args)
        want = [y] + (list(state) if lstm else [state])
        flat = [args[0]] + (list(args[1]) if with_state and lstm else args[1:])
        got = compiled(*flat)
        for output, g, w in zip(outputs, got, want):
            assert tuple(g.shape) == tuple(w.shape), output
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5, msg=output)


def test_exported_language_model_matches_torch_and_the_reference(tmp_path):
    """The reference LM's form (Embedding -> 2-layer LSTM -> Linear ->
    LogSoftmax) with dynamic T and B, run from Python and by the tools:
    recur-import-onnx, recur-compile, recur-run --check (the
    double-precision reference)."""
    torch.manual_seed(0)
    module = LanguageModel().eval()
    path = _export(module, [torch.randint(0, 50, (6, 2))], ["tokens"], ["logits"],
                   str(tmp_path / "lm.onnx"))
    compiled = recur.onnx.compile(path)
    for seq, batch in ((6, 2), (11, 4)):
        tokens = torch.randint(0, 50, (seq, batch))
        with torch.no_grad():
            want = module(tokens)
        (got,) = compiled(tokens)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    ir = tmp_path / "lm.mlir"
    weights = tmp_path / "lm.safetensors"
    library = tmp_path / "lm.so"
    tool = os.path.join(BUILD, "bin", "recur-import-onnx")
    env = dict(os.environ)
    subprocess.run([sys.executable, tool, path, "-o", str(ir), "--weights", str(weights)],
                   check=True, env=env)
    text = ir.read_text()
    assert "recur.embedding" in text and text.count("recur.lstm") == 2 and \
        "recur.log_softmax" in text
    assert sorted(_safetensors.load(str(weights))) == sorted(recur.onnx.import_model(path)[1])
    subprocess.run([os.path.join(BUILD, "bin", "recur-compile"), str(ir), "-o", str(library),
                    "--quiet"], check=True)
    run = subprocess.run([os.path.join(BUILD, "bin", "recur-run"), str(library), "--weights",
                          str(weights), "--seq", "5", "--batch", "3", "--check"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "check: pass" in run.stdout or "pass" in run.stdout, run.stdout


# --- errors ------------------------------------------------------------------

def test_unsupported_op_is_refused_naming_the_node():
    node = helper.make_node("Sin", ["X"], ["Y"], name="sine_of_x")
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    with pytest.raises(recur.RecurError,
                       match=r"^node 'sine_of_x' \(Sin, opset 14\): this op type is not "
                             r"supported$"):
        recur.onnx.import_model(model)


def test_unknown_activation_is_refused_naming_it():
    model = _node_model("RNN", 4, 3, 1, {"activations": ["Swish"]}, [])
    model.ir_version = 7  # the checker does not read activation names
    with pytest.raises(recur.RecurError, match=r"node 'the_rnn' \(RNN, opset 14\): "
                                               r"activation 'Swish' is not supported"):
        recur.onnx.import_model(model)


def test_weights_computed_at_run_time_are_refused():
    model = _node_model("RNN", 4, 3, 1, {}, [])
    relu = helper.make_node("Relu", ["W_in"], ["W"], name="make_w")
    graph = model.graph
    graph.node.insert(0, relu)
    del graph.initializer[0]
    graph.input.append(helper.make_tensor_value_info("W_in", TensorProto.FLOAT, [1, 4, 3]))
    with pytest.raises(recur.RecurError, match=r"node 'make_w' \(Relu, opset 14\)"):
        recur.onnx.import_model(model)


def test_malformed_files_get_one_line_errors(tmp_path):
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x08\x07\xff\xfe not a protobuf \x00" * 3)
    with pytest.raises(recur.RecurError, match=r"garbage.onnx: not a readable ONNX model"):
        recur.onnx.import_model(str(garbage))
    good = _node_model("GRU", 4, 3, 1, {}, ["B"]).SerializeToString()
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(good[:len(good) // 2])
    with pytest.raises(recur.RecurError) as error:
        recur.onnx.import_model(str(truncated))
    assert "\n" not in str(error.value)
    # The tool: exit status 1 and one line naming the file.
    tool = os.path.join(BUILD, "bin", "recur-import-onnx")
    result = subprocess.run([sys.executable, tool, str(garbage)], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "garbage.onnx" in result.stderr, result.stderr


def test_checker_failures_are_errors():
    node = helper.make_node("LSTM", ["X", "W", "R"], ["Y"], name="l", hidden_size=2)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 1, 2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])  # W, R undefined
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    with pytest.raises(recur.RecurError, match="malformed|not produced"):
        recur.onnx.import_model(model)


def test_inputs_by_name_and_errors_naming_them():
    compiled = recur.onnx.compile(_node_model("GRU", 4, 3, 1, {"linear_before_reset": 1},
                                              ["B", "initial_h"]))
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    h = np.zeros((1, 2, 4), np.float32)
    by_position = compiled(x, h)
    by_name = compiled(initial_h=h, X=x)
    for a, b in zip(by_position, by_name):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(recur.RecurError, match="missing input initial_h"):
        compiled(x)
    with pytest.raises(recur.RecurError, match="has no input 'x'"):
        compiled(x=x, initial_h=h)
