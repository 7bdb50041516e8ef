"""Workload files: what to run (model, shapes, precision, iterations).

A file holds one workload object or a list of them; an object with "sweep"
expands to the product of the listed values. The schema is documented in
docs/benchmarks.md.
"""
import copy
import itertools
import json
import os

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

KINDS = {
    # kind: (model sizes it needs, input name, output name)
    "lstm-lm": (("vocab", "embed", "hidden", "layers"), "tokens", "logits"),
    "lstm": (("input", "hidden", "layers"), "input", "output"),
    "gru-lm": (("vocab", "embed", "hidden", "layers"), "tokens", "logits"),
    "gru": (("input", "hidden", "layers"), "input", "output"),
    # A cell written in PyTorch (bench/systems/custom_cells.py): fastrnns'
    # layer-norm LSTM, traced by recur.compile_rnn.
    "lnlstm": (("input", "hidden", "layers"), "input", "output"),
}
# The gates of each cell: its weights have GATES * hidden rows.
GATES = {"lstm": 4, "gru": 3, "lnlstm": 4}
# Kinds whose IR comes from recur.compile_rnn rather than recur-gen.
TRACED = ("lnlstm",)
PRECISIONS = ("fp32", "tf32", "bf16")
# The check's default bound per precision, as recur-run --check's: TF32 keeps
# 10 mantissa bits and bf16 7, so their bounds are wider.
TOLERANCES = {"fp32": 1e-4, "tf32": 5e-3, "bf16": 5e-2}
# forward: inference batches; train: SGD steps of an LM (recur-gen --train):
# forward, mean cross-entropy against "targets", backward, clipping, update.
MODES = ("forward", "train")
# PyTorch's word_language_model example.
TRAIN_DEFAULTS = {"lr": 20.0, "clip_norm": 0.25}
DEVICES = ("cpu", "cuda")
REFERENCES = ("recur", "torch-fp64")
FIELDS = {"name", "description", "model", "seq", "batch", "precision", "mode",
          "warmup", "iters", "devices", "seed", "reference", "sweep", "lr", "clip_norm",
          "tolerance", "lengths"}
# Name suffixes of swept fields: deepbench-h512-b16-t50.
LABELS = {"model.hidden": "h", "model.input": "i", "model.embed": "e", "model.vocab": "v",
          "model.layers": "l", "batch": "b", "seq": "t"}


class WorkloadError(Exception):
    pass


class Workload:
    def __init__(self, spec, path):
        self.spec = spec
        self.path = path
        self.name = spec["name"]
        self.kind = spec["model"]["kind"]
        # Sizes in a fixed order, however the file or a sweep listed them.
        self.model = {"kind": self.kind, **{k: spec["model"][k] for k in KINDS[self.kind][0]}}
        self.seq, self.batch = spec["seq"], spec["batch"]
        self.precision = spec.get("precision", "fp32")
        self.mode = spec.get("mode", "forward")
        self.lr = float(spec.get("lr", TRAIN_DEFAULTS["lr"]))
        self.clip_norm = float(spec.get("clip_norm", TRAIN_DEFAULTS["clip_norm"]))
        self.warmup, self.iters = spec["warmup"], spec["iters"]
        self.devices = spec.get("devices", list(DEVICES))
        self.seed = spec.get("seed", 0)
        self.reference = spec.get("reference", "recur")
        # The check's bound, |got - want| <= tolerance * (1 + |want|): the
        # precision's, or the workload's own where fp32 itself strays further
        # from float64 (a recurrence that amplifies rounding; its description
        # says by how much).
        self.tolerance = float(spec.get("tolerance", TOLERANCES[self.precision]))
        _, self.input_name, self.output_name = KINDS[self.kind]
        # A packed batch: each row's length drawn from [min, T] (recur-gen
        # --lengths; PyTorch's PackedSequence).
        self.min_length = spec["lengths"]["min"] if "lengths" in spec else None

    @property
    def varlen(self):
        """A batch of sequences of different lengths (an input "lengths")."""
        return self.min_length is not None

    def lengths(self):
        """Each row's length, uniform in [min, T], from a stream of its own
        (fixed by the seed, as fastrnns' vl_* benchmarks draw theirs)."""
        import numpy as np
        rng = np.random.default_rng([self.seed, 3])
        return rng.integers(self.min_length, self.seq + 1, self.batch, dtype=np.int64)

    def tokens(self):
        """The tokens the batch computes: T x B, or the sum of the lengths."""
        return int(self.lengths().sum()) if self.varlen else self.seq * self.batch

    @property
    def lm(self):
        """An LM (tokens -> embedding -> layers -> projection -> logits)."""
        return self.kind.endswith("-lm")

    @property
    def cell(self):
        """The recurrent layers' cell: "lstm", "gru" or "lnlstm"."""
        return self.kind.split("-")[0]

    @property
    def traced(self):
        """A cell written in PyTorch: its IR is traced, and the model takes
        each layer's state (zeros) as inputs."""
        return self.kind in TRACED

    @property
    def key(self):
        """Names the compiled model: one per architecture, shape and precision."""
        m = self.model
        if self.lm:
            arch = f"{self.kind}-v{m['vocab']}-e{m['embed']}-h{m['hidden']}x{m['layers']}"
        else:
            arch = f"{self.kind}-i{m['input']}-h{m['hidden']}x{m['layers']}"
        # A reduced precision is another compiled model (recur-compile --precision).
        precision = "" if self.precision == "fp32" else f"-{self.precision}"
        # A training step compiles its optimizer in.
        train = f"-train-lr{self.lr:g}-clip{self.clip_norm:g}" if self.training else ""
        # A packed batch's model takes the lengths (another compiled model).
        lengths = "-lengths" if self.varlen else ""
        return f"{arch}-t{self.seq}-b{self.batch}{precision}{train}{lengths}"

    @property
    def training(self):
        return self.mode == "train"

    def ir_command(self, recur_gen, python):
        """The command that writes the model's recur IR to stdout: recur-gen,
        or for a traced cell bench/systems/custom_cells.py (with `python`,
        which needs torch)."""
        if self.traced:
            m = self.model
            return [python, os.path.join(BENCH, "systems", "custom_cells.py"), "ir", self.kind,
                    str(m["input"]), str(m["hidden"]), str(m["layers"])]
        return [recur_gen] + self.recur_gen_args()

    def recur_gen_args(self):
        sizes = KINDS[self.kind][0]
        args = [self.kind]
        for size in sizes:
            args += [f"--{size}", str(self.model[size])]
        # bf16: weights, inputs and outputs in bf16 (computed in f32 inside).
        dtype = ["--dtype", "bf16"] if self.precision == "bf16" else []
        train = (["--train", "--lr", repr(self.lr), "--clip-norm", repr(self.clip_norm)]
                 if self.training else [])
        # A packed batch's model keeps B dynamic: its steps run on their
        # active rows only, fewer than B (recur-sort-by-length).
        shape = ["--seq", str(self.seq)] + ([] if self.varlen else ["--batch", str(self.batch)])
        lengths = ["--lengths"] if self.varlen else []
        return args + shape + dtype + train + lengths

    def flops(self):
        """Multiply-adds x 2 of one forward batch (pointwise work left out),
        over its real tokens (a packed batch's lengths summed); a training
        step counts three times that (the forward, and the input and the
        weight gradients of every product)."""
        m, tokens = self.model, self.tokens()
        first = m["embed"] if self.lm else m["input"]
        total = 0
        for layer in range(m["layers"]):
            size = first if layer == 0 else m["hidden"]
            total += 2 * tokens * GATES[self.cell] * m["hidden"] * (size + m["hidden"])
        if self.lm:
            total += 2 * tokens * m["hidden"] * m["vocab"]
        return 3 * total if self.training else total

    def describe(self):
        m = self.model
        sizes = ", ".join(f"{k} {m[k]}" for k in KINDS[self.kind][0])
        mode = (f"train (SGD lr {self.lr:g}, clip_grad_norm {self.clip_norm:g})"
                if self.training else self.mode)
        lengths = (f", lengths U[{self.min_length}, {self.seq}] "
                   f"({self.tokens() / (self.seq * self.batch):.1%} of the tokens)"
                   if self.varlen else "")
        return (f"{self.kind} ({sizes}), T={self.seq}, B={self.batch}{lengths}, "
                f"{self.precision}, {mode}, {self.warmup} warm-up + {self.iters} timed batches")

    def to_json(self):
        return {"name": self.name, "key": self.key, "file": self.path, "model": self.model,
                "seq": self.seq, "batch": self.batch, "precision": self.precision,
                "mode": self.mode, "warmup": self.warmup, "iters": self.iters,
                "devices": self.devices, "seed": self.seed, "reference": self.reference,
                **({"lr": self.lr, "clip_norm": self.clip_norm} if self.training else {}),
                **({"tolerance": self.tolerance} if "tolerance" in self.spec else {}),
                **({"lengths": {"min": self.min_length, "tokens": self.tokens(),
                                "fraction": self.tokens() / (self.seq * self.batch)}}
                   if self.varlen else {}),
                "gflop_per_batch": self.flops() / 1e9,
                "description": self.spec.get("description", "")}


def _check(spec, where):
    def fail(message):
        raise WorkloadError(f"{where}: {message}")

    def positive_int(value, field):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            fail(f"'{field}' must be a positive integer, got {json.dumps(value)}")

    unknown = set(spec) - FIELDS
    if unknown:
        fail(f"unknown field(s) {sorted(unknown)}; known: {sorted(FIELDS)}")
    for field in ("name", "model", "seq", "batch", "warmup", "iters"):
        if field not in spec:
            fail(f"missing field '{field}'")
    if not isinstance(spec["name"], str) or not spec["name"]:
        fail("'name' must be a non-empty string")
    model = spec["model"]
    if not isinstance(model, dict) or model.get("kind") not in KINDS:
        fail(f"'model.kind' must be one of {sorted(KINDS)}")
    sizes = KINDS[model["kind"]][0]
    extra = set(model) - set(sizes) - {"kind"}
    if extra:
        fail(f"model kind '{model['kind']}' takes {list(sizes)}, not {sorted(extra)}")
    for size in sizes:
        if size not in model:
            fail(f"model kind '{model['kind']}' needs 'model.{size}'")
        positive_int(model[size], f"model.{size}")
    for field in ("seq", "batch", "iters"):
        positive_int(spec[field], field)
    if not isinstance(spec["warmup"], int) or spec["warmup"] < 0:
        fail(f"'warmup' must be a non-negative integer, got {json.dumps(spec['warmup'])}")
    if spec.get("precision", "fp32") not in PRECISIONS:
        fail(f"'precision' must be one of {list(PRECISIONS)}")
    mode = spec.get("mode", "forward")
    if mode not in MODES:
        fail(f"'mode' must be one of {list(MODES)}, got {json.dumps(mode)}")
    if mode == "train":
        if model["kind"] != "lstm-lm":
            fail("mode 'train' needs model kind 'lstm-lm' (a loss over tokens)")
        if spec.get("precision", "fp32") != "fp32":
            fail("mode 'train' runs in fp32 only")
        if spec.get("reference", "recur") != "recur":
            fail("mode 'train' takes its reference from recur-run (reference 'recur')")
    elif "lr" in spec or "clip_norm" in spec:
        fail("'lr' and 'clip_norm' belong to mode 'train'")
    for field, smallest in (("lr", None), ("clip_norm", 0)):
        value = spec.get(field, 1)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not (value > 0 if smallest is None else value >= smallest):
            fail(f"'{field}' must be a {'positive' if smallest is None else 'non-negative'} "
                 f"number, got {json.dumps(value)}")
    devices = spec.get("devices", list(DEVICES))
    if not devices or not set(devices) <= set(DEVICES):
        fail(f"'devices' must be a non-empty list of {list(DEVICES)}")
    tolerance = spec.get("tolerance", 1e-4)
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or \
            not 0 < tolerance < 1:
        fail(f"'tolerance' must be a number in (0, 1), got {json.dumps(tolerance)}")
    if spec.get("reference", "recur") not in REFERENCES:
        fail(f"'reference' must be one of {list(REFERENCES)}")
    if "lengths" in spec:
        lengths = spec["lengths"]
        if not isinstance(lengths, dict) or set(lengths) != {"min"}:
            fail("'lengths' must be {\"min\": L}: each row's length drawn from [L, seq]")
        positive_int(lengths["min"], "lengths.min")
        if lengths["min"] > spec["seq"]:
            fail(f"'lengths.min' is {lengths['min']}, more than seq {spec['seq']}")
        if model["kind"] in TRACED or mode != "forward" or \
                spec.get("reference", "recur") != "recur":
            fail("'lengths' takes a forward workload of nn.LSTM/nn.GRU layers or an LM "
                 "with the reference 'recur'")


def _expand(spec, where):
    """The workloads of one object: itself, or the product of its sweep."""
    sweep = spec.get("sweep")
    if sweep is None:
        return [spec]
    if not isinstance(sweep, dict) or not sweep or \
            not all(isinstance(v, list) and v for v in sweep.values()):
        raise WorkloadError(f"{where}: 'sweep' must map fields to non-empty lists")
    # "model.hidden+model.input" sets both fields to each value.
    for key in sweep:
        for field in key.split("+"):
            if field not in LABELS:
                raise WorkloadError(f"{where}: cannot sweep '{field}'; sweepable: "
                                    f"{sorted(LABELS)}")
    out = []
    for values in itertools.product(*sweep.values()):
        entry = copy.deepcopy(spec)
        del entry["sweep"]
        suffix = []
        for key, value in zip(sweep, values):
            for field in key.split("+"):
                target = entry
                *parents, last = field.split(".")
                for parent in parents:
                    target = target.setdefault(parent, {})
                target[last] = value
            suffix.append(f"{LABELS[key.split('+')[0]]}{value}")
        entry["name"] = f"{spec['name']}-{'-'.join(suffix)}"
        out.append(entry)
    return out


def load(path):
    """Reads, expands and checks one workload file; returns [Workload]."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as error:
        raise WorkloadError(f"{path}: {error}") from None
    objects = data if isinstance(data, list) else [data]
    workloads = []
    for index, spec in enumerate(objects):
        where = f"{path}[{index}]" if isinstance(data, list) else path
        if not isinstance(spec, dict):
            raise WorkloadError(f"{where}: a workload is a JSON object")
        for entry in _expand(spec, where):
            _check(entry, f"{where} ({entry.get('name', '?')})")
            workloads.append(Workload(entry, path))
    names = [w.name for w in workloads]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise WorkloadError(f"{path}: workload names repeat: {duplicates}")
    return workloads
