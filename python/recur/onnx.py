"""ONNX front end: recurrent ONNX models imported as Recur IR and compiled.

    import recur.onnx
    run = recur.onnx.compile("lstm.onnx")        # or an onnx.ModelProto
    output, h_n, c_n = run(x)                    # the graph's inputs and outputs

`import_model` translates a graph into one `func.func @forward`: its graph
inputs become `recur.input` arguments, its initializers `recur.weight`
arguments under their ONNX names (bound from the file), and a graph input
that only feeds weight operands (an LSTM's W, R, B, as ONNX's node test
cases pass them) a weight too, bound from the value given at each call.
`LSTM`, `GRU` and `RNN` nodes become Recur's named layers where PyTorch's
semantics agree (default activations, no clip, no peepholes; a GRU with
linear_before_reset=1), with the gate blocks reordered in the IR (work on
weights alone, which the compiler runs once per binding), and otherwise the
`recur.rnn` of a cell that states ONNX's equations in PyTorch and goes
through the cell front end (`recur.compile_rnn`'s translator). The glue
`torch.onnx.export` writes around them (Shape arithmetic of dynamic axes,
ConstantOfShape zeros, Slice, Squeeze/Unsqueeze, Transpose/Reshape of a
bidirectional output, Concat, Gather of an embedding, MatMul/Gemm/Add of a
projection, Softmax/LogSoftmax) is folded where it is constant and written
as tensor ops where it is not. Anything else is refused naming the node,
its op type and the opset.

The importer is Python on the `onnx` package: it is ONNX's reference
parser and checker, and ONNX's conformance cases and backend test runner are
Python too; the cells reuse the PyTorch cell front end.
"""

import math
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ._errors import RecurError

__all__ = ["import_model", "compile", "CompiledONNX", "Backend", "prepare", "run_model",
           "supports_device", "main"]

# ONNX's gate orders and the named ops': blocks of W, R and each half of B
# taken in this order give PyTorch's.
_NAMED_GATE_ORDER = {"LSTM": [0, 2, 3, 1],  # iofc -> ifgo
                     "GRU": [1, 0, 2],  # zrh -> rzn
                     "RNN": [0]}
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_DEFAULT_ACTIVATIONS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"],
                        "RNN": ["Tanh"]}
# ONNX activation -> (takes alpha, default alpha, takes beta, default beta).
_ACTIVATIONS = {
    "Relu": (False, 0, False, 0), "Tanh": (False, 0, False, 0),
    "Sigmoid": (False, 0, False, 0), "Affine": (True, 1.0, True, 0.0),
    "LeakyRelu": (True, 0.01, False, 0), "ScaledTanh": (True, 1.0, True, 1.0),
    "HardSigmoid": (True, 0.2, True, 0.5), "Elu": (True, 1.0, False, 0),
    "Softsign": (False, 0, False, 0), "Softplus": (False, 0, False, 0),
    "ThresholdedRelu": (True, 1.0, False, 0),
}
_ONNX_TYPES = {1: ("f32", np.float32), 6: ("i32", np.int32), 7: ("i64", np.int64)}


def _onnx() -> Any:
    try:
        import onnx
    except ImportError as error:
        raise RecurError(f"recur.onnx needs the onnx package (pip install onnx): {error}") \
            from None
    return onnx


# --- values ---------------------------------------------------------------

class _Sym:
    """A size known at run time: dimension `axis` of argument `arg`, or the
    product of such sizes (a Reshape's merged dimensions)."""

    def __init__(self, atoms: Tuple[Tuple[str, int], ...]) -> None:
        self.atoms = tuple(sorted(atoms))

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, _Sym) and self.atoms == other.atoms

    def __hash__(self) -> int:
        return hash(self.atoms)

    def __repr__(self) -> str:
        return "*".join(f"{a}[{k}]" for a, k in self.atoms)


Dim = Union[int, _Sym]


def _factors(dims: Sequence[Dim]) -> Tuple[int, Tuple]:
    """A product of sizes as (constant factor, run-time atoms)."""
    constant, atoms = 1, []
    for d in dims:
        if isinstance(d, _Sym):
            atoms += list(d.atoms)
        else:
            constant *= d
    return constant, tuple(sorted(atoms))


def _product(dims: Sequence[Dim]) -> Dim:
    constant, atoms = _factors(dims)
    if not atoms:
        return constant
    if constant != 1:
        raise RecurError("a size that multiplies a run-time size by a constant is not supported")
    return _Sym(atoms)


class _Tensor:
    """An SSA value of the function being written."""

    def __init__(self, name: str, shape: Sequence[Dim], dtype: str = "f32") -> None:
        self.name, self.shape, self.dtype = name, list(shape), dtype

    @property
    def type(self) -> str:
        return _type(self.shape, self.dtype)


class _Const:
    """A value known when importing (an initializer read as data, a folded
    node); `weight` names the initializer it is, if any."""

    def __init__(self, array: np.ndarray, weight: Optional[str] = None) -> None:
        self.array, self.weight = np.asarray(array), weight


class _Dims:
    """An int64 shape vector (or scalar) with run-time entries: the Shape
    arithmetic of dynamic axes."""

    def __init__(self, dims: Sequence[Dim], scalar: bool = False) -> None:
        self.dims, self.scalar = list(dims), scalar


class _Splat:
    """A tensor of one value (ConstantOfShape, Expand of a constant):
    written only where a tensor is needed; an RNN takes zeros as no
    initial state."""

    def __init__(self, value: float, shape: Sequence[Dim], dtype: str = "f32") -> None:
        self.value, self.shape, self.dtype = value, list(shape), dtype


class _Stack:
    """The per-direction results of an RNN node stacked along `axis` (ONNX's
    Y [T, D, B, H], Y_h [D, B, H]); written only where the stacked form is
    needed: a Squeeze of one direction is the direction itself, and a
    Transpose then Reshape that puts the directions beside the features is
    a concatenation."""

    def __init__(self, parts: List[_Tensor], axis: int) -> None:
        self.parts, self.axis = parts, axis
        shape = list(parts[0].shape)
        shape.insert(axis, len(parts))
        self.shape = shape


class _Linear:
    """x · wᵀ not yet written: an Add of a bias vector folds into it."""

    def __init__(self, x: _Tensor, weight: _Tensor) -> None:
        self.x, self.weight = x, weight
        self.shape = x.shape[:-1] + [weight.shape[0]]


Value = Union[_Tensor, _Const, _Dims, _Splat, _Stack, _Linear]


def _type(shape: Sequence[Dim], dtype: str = "f32") -> str:
    dims = "".join(("?" if isinstance(d, _Sym) else str(d)) + "x" for d in shape)
    return f"tensor<{dims}{dtype}>"


def _dense(array: np.ndarray, dtype: str) -> str:
    flat = array.reshape(-1)
    if dtype == "f32":
        items = [repr(float(v)) if math.isfinite(v) else ("0x7F800000" if v > 0 else
                 "0xFF800000") if math.isinf(v) else "0x7FC00000" for v in flat]
    else:
        items = [str(int(v)) for v in flat]
    if array.ndim == 0:
        return f"dense<{items[0]}>"
    nested = np.array(items, dtype=object).reshape(array.shape).tolist()
    return "dense<" + str(nested).replace("'", "") + ">"


# --- the importer -----------------------------------------------------------

class _Importer:
    def __init__(self, model: Any) -> None:
        onnx = _onnx()
        self.onnx = onnx
        self.graph = model.graph
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                          1)
        self.lines: List[str] = []
        self.counter = 0
        self.env: Dict[str, Value] = {}
        self.dim_values: Dict[_Sym, str] = {}
        self.index_constants: Dict[int, str] = {}
        # Arguments: (ssa, type, kind "input" | "weight", name).
        self.arguments: Dict[str, Tuple[str, str, str]] = {}
        self.weights: Dict[str, np.ndarray] = {}  # initializer data by weight name
        self.weight_inputs: List[str] = []  # graph inputs bound as weights
        self.input_casts: Dict[str, Any] = {}  # input name -> dtype Recur takes
        # Run-time sizes by role: a recurrence's sequence ("T") or batch ("B").
        self.roles: Dict[Tuple[str, int], str] = {}
        self.node: Any = None
        from onnx import numpy_helper
        self.numpy_helper = numpy_helper
        initializers = {t.name: t for t in self.graph.initializer}
        self.initializers = initializers
        self.inputs = [i for i in self.graph.input if i.name not in initializers]
        named_dims: Dict[str, _Sym] = {}
        for position, value in enumerate(self.inputs):
            ssa = f"%arg{position}"
            tensor_type = value.type.tensor_type
            if tensor_type.elem_type not in _ONNX_TYPES:
                raise RecurError(f"input '{value.name}': element type "
                                 f"{onnx.TensorProto.DataType.Name(tensor_type.elem_type)} "
                                 f"is not supported (float32, int32, int64 are)")
            dtype = _ONNX_TYPES[tensor_type.elem_type][0]
            if not tensor_type.HasField("shape"):
                raise RecurError(f"input '{value.name}' has no shape; Recur needs its rank")
            shape: List[Dim] = []
            for axis, dim in enumerate(tensor_type.shape.dim):
                if dim.HasField("dim_value") and dim.dim_value > 0:
                    shape.append(dim.dim_value)
                else:
                    key = dim.dim_param or f"{value.name}[{axis}]"
                    named_dims.setdefault(key, _Sym(((ssa, axis),)))
                    shape.append(named_dims[key])
            if dtype == "i32":  # lengths and ids: Recur takes int64
                dtype = "i64"
                self.input_casts[value.name] = np.int64
            self.env[value.name] = _Tensor(ssa, shape, dtype)
            self.arguments[value.name] = (ssa, _type(shape, dtype), "input")

    # -- writing --
    def fresh(self, kind: str = "t") -> str:
        self.counter += 1
        return f"%o_{kind}{self.counter}"  # apart from the cells' region names

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def where(self) -> str:
        node = self.node
        name = node.name or (node.output[0] if node.output else "?")
        return f"node '{name}' ({node.op_type}, opset {self.opset})"

    def fail(self, message: str) -> RecurError:
        return RecurError(f"{self.where()}: {message}")

    def index(self, value: int) -> str:
        if value not in self.index_constants:
            name = f"%o_c{value}"
            self.emit(f"{name} = arith.constant {value} : index")
            self.index_constants[value] = name
        return self.index_constants[value]

    def dim_value(self, dim: Dim) -> str:
        """The SSA index value of a size."""
        if not isinstance(dim, _Sym):
            return self.index(dim)
        if dim not in self.dim_values:
            names = []
            for arg, axis in dim.atoms:
                atom = _Sym(((arg, axis),))
                if atom not in self.dim_values:
                    name = self.fresh("dim")
                    argument_type = next(t for s, t, _ in self.arguments.values() if s == arg)
                    self.emit(f"{name} = tensor.dim {arg}, {self.index(axis)} : "
                              f"{argument_type}")
                    self.dim_values[atom] = name
                names.append(self.dim_values[atom])
            result = names[0]
            for other in names[1:]:
                product = self.fresh("dim")
                self.emit(f"{product} = arith.muli {result}, {other} : index")
                result = product
            self.dim_values[dim] = result
        return self.dim_values[dim]

    def dynamic(self, shape: Sequence[Dim]) -> str:
        return ", ".join(self.dim_value(d) for d in shape if isinstance(d, _Sym))

    def sizes(self, shape: Sequence[Dim]) -> str:
        return ", ".join(self.dim_value(d) if isinstance(d, _Sym) else str(d) for d in shape)

    # -- values --
    def value(self, name: str) -> Optional[Value]:
        if name == "":
            return None
        if name not in self.env:
            if name in self.initializers:
                self.env[name] = _Const(self.numpy_helper.to_array(self.initializers[name]),
                                        weight=name)
            else:
                raise self.fail(f"input '{name}' is not produced by any node")
        return self.env[name]

    def const(self, name: str, what: str) -> np.ndarray:
        value = self.value(name)
        if isinstance(value, _Const):
            return value.array
        raise self.fail(f"{what} must be a constant")

    def weight(self, name: str, what: str) -> _Tensor:
        """A weight operand: an initializer or constant (bound from the
        file), or a graph input that feeds weights alone (bound at each
        call)."""
        value = self.value(name)
        if isinstance(value, _Const):
            if name not in self.arguments:
                array = value.array.astype(np.float32)
                ssa = f"%o_weight{len(self.weights)}"
                self.weights[name] = array
                self.arguments[name] = (ssa, _type(array.shape), "weight")
            ssa = self.arguments[name][0]
            return _Tensor(ssa, list(value.array.shape))
        if isinstance(value, _Tensor) and name in self.arguments and \
                self.arguments[name][0] == value.name:
            ssa, argument_type, kind = self.arguments[name]
            if any(isinstance(d, _Sym) for d in value.shape) or value.dtype != "f32":
                raise self.fail(f"{what} '{name}' is a graph input taken as a weight: it "
                                f"needs a static float32 shape, got {value.type}")
            if kind == "input":
                self.arguments[name] = (ssa, argument_type, "weight")
                self.weight_inputs.append(name)
            return value
        raise self.fail(f"{what} '{name}' is computed at run time; Recur takes it as a "
                        f"weight (an initializer or a graph input)")

    def tensor(self, value: Value, what: str = "operand") -> _Tensor:
        """A value written as an SSA tensor."""
        if isinstance(value, _Tensor):
            return value
        if isinstance(value, _Linear):
            return self.linear(value.x, value.weight, None)
        if isinstance(value, _Splat):
            name = self.fresh()
            t = _type(value.shape, value.dtype)
            self.emit(f"{name}_empty = tensor.empty({self.dynamic(value.shape)}) : {t}")
            scalar = self.fresh("cst")
            element = "f32" if value.dtype == "f32" else "i64"
            literal = repr(float(value.value)) if element == "f32" else str(int(value.value))
            self.emit(f"{scalar} = arith.constant {literal} : {element}")
            self.emit(f"{name} = linalg.fill ins({scalar} : {element}) outs({name}_empty : {t})"
                      f" -> {t}")
            return _Tensor(name, value.shape, value.dtype)
        if isinstance(value, _Stack):
            parts = [self.reshape(p, p.shape[:value.axis] + [1] + p.shape[value.axis:])
                     for p in value.parts]
            return self.concat(parts, value.axis)
        if isinstance(value, _Const):
            array = value.array
            if array.dtype.kind == "f":
                return self.weight_of_const(value)
            name = self.fresh("cst")
            t = _type(array.shape, "i64")
            self.emit(f"{name} = arith.constant {_dense(array.astype(np.int64), 'i64')} : {t}")
            return _Tensor(name, list(array.shape), "i64")
        raise self.fail(f"{what} is a shape computation, not a tensor")

    def weight_of_const(self, value: _Const) -> _Tensor:
        """A float constant used as a tensor: a weight (its initializer's
        name, or a name of its own)."""
        name = value.weight or f"{self.node.output[0]}.constant"
        self.env[name] = value
        return self.weight(name, "constant")

    # -- tensor ops --
    def linear(self, x: _Tensor, weight: _Tensor, bias: Optional[_Tensor]) -> _Tensor:
        name = self.fresh()
        shape = x.shape[:-1] + [weight.shape[0]]
        types = [x.type, weight.type] + ([bias.type] if bias else [])
        text = f"{name} = recur.linear {x.name}, {weight.name}"
        if bias is not None:
            text += f" bias({bias.name})"
        self.emit(f"{text} : ({', '.join(types)}) -> {_type(shape)}")
        return _Tensor(name, shape)

    def transpose(self, x: _Tensor, permutation: Sequence[int]) -> _Tensor:
        if list(permutation) == list(range(len(x.shape))):
            return x
        name = self.fresh()
        shape = [x.shape[p] for p in permutation]
        self.emit(f"{name} = recur.transpose {x.name} [{', '.join(map(str, permutation))}] : "
                  f"{x.type} -> {_type(shape, x.dtype)}")
        return _Tensor(name, shape, x.dtype)

    def concat(self, parts: List[_Tensor], axis: int) -> _Tensor:
        if len(parts) == 1:
            return parts[0]
        shape = list(parts[0].shape)
        sizes = [p.shape[axis] for p in parts]
        if not all(isinstance(s, int) for s in sizes):
            raise self.fail("a concatenation along a dimension whose size is known only at "
                            "run time is not supported")
        shape[axis] = sum(sizes)
        name = self.fresh()
        self.emit(f"{name} = tensor.concat dim({axis}) {', '.join(p.name for p in parts)} : "
                  f"({', '.join(p.type for p in parts)}) -> {_type(shape, parts[0].dtype)}")
        return _Tensor(name, shape, parts[0].dtype)

    def extract(self, x: _Tensor, offsets: Sequence[int], sizes: Sequence[Dim],
                keep: Sequence[int]) -> _Tensor:
        """x[offsets : offsets + sizes], keeping the dimensions `keep` (the
        others have size 1 and are dropped)."""
        name = self.fresh()
        shape = [sizes[k] for k in keep]
        self.emit(f"{name} = tensor.extract_slice {x.name}[{', '.join(map(str, offsets))}] "
                  f"[{self.sizes(sizes)}] [{', '.join('1' for _ in sizes)}] : {x.type} to "
                  f"{_type(shape, x.dtype)}")
        return _Tensor(name, shape, x.dtype)

    def rows(self, x: _Tensor, first: int, count: int) -> _Tensor:
        """Rows first..first+count of a weight (its first dimension)."""
        if first == 0 and count == x.shape[0]:
            return x
        return self.extract(x, [first] + [0] * (len(x.shape) - 1), [count] + x.shape[1:],
                            range(len(x.shape)))

    def reshape(self, x: _Tensor, shape: Sequence[Dim]) -> _Tensor:
        """x as `shape` (same elements in order) by collapse_shape then
        expand_shape over groups of dimensions."""
        shape = list(shape)
        if shape == x.shape:
            return x
        source, target = x.shape, shape
        groups: List[Tuple[List[int], List[int]]] = []
        i = j = 0
        while i < len(source) or j < len(target):
            if i == len(source) or j == len(target):
                rest_in, rest_out = source[i:], target[j:]
                if any(d != 1 for d in rest_in + rest_out) or not groups:
                    raise self.fail(f"cannot reshape {x.type} to {_type(shape, x.dtype)}")
                groups[-1][0].extend(range(i, len(source)))
                groups[-1][1].extend(range(j, len(target)))
                break
            group_in, group_out = [i], [j]
            i, j = i + 1, j + 1
            while _factors([source[k] for k in group_in]) != \
                    _factors([target[k] for k in group_out]):
                have_in = _factors([source[k] for k in group_in])
                have_out = _factors([target[k] for k in group_out])
                grow_in = set(have_in[1]) < set(have_out[1]) or (
                    set(have_in[1]) == set(have_out[1]) and have_in[0] < have_out[0])
                if grow_in and i < len(source):
                    group_in.append(i)
                    i += 1
                elif j < len(target):
                    group_out.append(j)
                    j += 1
                else:
                    raise self.fail(f"cannot reshape {x.type} to {_type(shape, x.dtype)}")
            groups.append((group_in, group_out))
        if any(len(a) > 1 and len(b) > 1 for a, b in groups):
            raise self.fail(f"a reshape of {x.type} to {_type(shape, x.dtype)} that both "
                            f"merges and splits dimensions is not supported")
        value = x
        if any(len(a) > 1 for a, _ in groups):
            middle = [_product([source[k] for k in a]) for a, _ in groups]
            name = self.fresh()
            association = ", ".join("[" + ", ".join(map(str, a)) + "]" for a, _ in groups)
            self.emit(f"{name} = tensor.collapse_shape {value.name} [{association}] : "
                      f"{value.type} into {_type(middle, x.dtype)}")
            value = _Tensor(name, middle, x.dtype)
        if any(len(b) > 1 for _, b in groups):
            name = self.fresh()
            association = ", ".join("[" + ", ".join(map(str, b)) + "]" for _, b in groups)
            self.emit(f"{name} = tensor.expand_shape {value.name} [{association}] output_shape "
                      f"[{self.sizes(target)}] : {value.type} into {_type(target, x.dtype)}")
            value = _Tensor(name, target, x.dtype)
        value.shape = target
        return value

    def pointwise(self, x: _Tensor, body: List[str]) -> _Tensor:
        """A linalg.generic applying `body` (lines on %a, ending in %r) to
        every element."""
        rank = len(x.shape)
        dims = ", ".join(f"d{k}" for k in range(rank))
        identity = f"affine_map<({dims}) -> ({dims})>"
        name = self.fresh()
        self.emit(f"{name}_empty = tensor.empty({self.dynamic(x.shape)}) : {x.type}")
        parallel = ", ".join(['"parallel"'] * rank)
        self.emit(f"{name} = linalg.generic {{indexing_maps = [{identity}, {identity}], "
                  f"iterator_types = [{parallel}]}} "
                  f"ins({x.name} : {x.type}) outs({name}_empty : {x.type}) {{")
        self.emit("^bb0(%a: f32, %out: f32):")
        for line in body:
            self.emit("  " + line)
        self.emit("  linalg.yield %r : f32")
        self.emit(f"}} -> {x.type}")
        return _Tensor(name, x.shape)

    # -- the graph --
    def run(self) -> Tuple[str, Dict[str, np.ndarray]]:
        for node in self.graph.node:
            self.node = node
            if node.domain not in ("", "ai.onnx"):
                raise self.fail(f"domain '{node.domain}' is not supported")
            handler = getattr(self, "op_" + node.op_type, None)
            if handler is None:
                raise self.fail("this op type is not supported")
            results = self.fold(node) if node.op_type in self.FOLDED else None
            if results is None:
                results = handler(node, {a.name: self.onnx.helper.get_attribute_value(a)
                                         for a in node.attribute})
            results = results if isinstance(results, (list, tuple)) else [results]
            for name, result in zip(node.output, results):
                if name:
                    self.env[name] = result
        self.node = None
        outputs, types = [], []
        for output in self.graph.output:
            if output.name not in self.env:
                raise RecurError(f"graph output '{output.name}' is not produced by any node")
            value = self.env[output.name]
            if isinstance(value, _Dims):
                raise RecurError(f"graph output '{output.name}' is a shape computation; "
                                 f"Recur's outputs are tensors")
            self.node = self.graph.node[-1] if self.graph.node else None
            tensor = self.tensor(value, f"output '{output.name}'")
            outputs.append(tensor)
            dims = self.dims_attribute(tensor.shape, f"output '{output.name}'")
            types.append(f"{tensor.type} {{recur.output = \"{output.name}\"{dims}}}")
        arguments = []
        for name, (ssa, argument_type, kind) in self.arguments.items():
            attribute = "recur.input" if kind == "input" else "recur.weight"
            dims = ""
            if kind == "input":
                shape = self.env[name].shape
                dims = self.dims_attribute(shape, f"input '{name}'")
            arguments.append(f"{ssa}: {argument_type} {{{attribute} = \"{name}\"{dims}}}")
        text = ["module {", f"  func.func @forward({', '.join(arguments)}) -> "
                f"({', '.join(types)}) {{"]
        text += ["    " + line for line in self.lines]
        text.append(f"    return {', '.join(t.name for t in outputs)} : "
                    f"{', '.join(t.type for t in outputs)}")
        text += ["  }", "}", ""]
        return "\n".join(text), self.weights

    # Ops run at import (by fold) when all their inputs are constants.
    FOLDED = {"Gather", "Unsqueeze", "Squeeze", "Concat", "Cast", "Expand", "Slice",
              "Transpose", "Reshape", "Add"}

    # -- constants and shapes --
    def op_Constant(self, node: Any, attributes: Dict[str, Any]) -> Value:
        if "value" in attributes:
            return _Const(self.numpy_helper.to_array(attributes["value"]))
        for key, dtype in (("value_float", np.float32), ("value_floats", np.float32),
                           ("value_int", np.int64), ("value_ints", np.int64)):
            if key in attributes:
                return _Const(np.array(attributes[key], dtype=dtype))
        raise self.fail(f"attributes {sorted(attributes)} are not supported")

    def op_Identity(self, node: Any, attributes: Dict[str, Any]) -> Value:
        return self.value(node.input[0])

    def op_Shape(self, node: Any, attributes: Dict[str, Any]) -> Value:
        value = self.value(node.input[0])
        if isinstance(value, _Const):
            return _Const(np.array(value.array.shape, dtype=np.int64))
        shape = getattr(value, "shape", None)
        if shape is None:
            raise self.fail("the shape of a shape computation")
        start, end = attributes.get("start", 0), attributes.get("end", len(shape))
        return _Dims(shape[start:end])

    def dims_of(self, value: Value) -> Optional[_Dims]:
        if isinstance(value, _Dims):
            return value
        if isinstance(value, _Const) and value.array.dtype.kind in "iu" and \
                value.array.ndim <= 1:
            return _Dims([int(v) for v in value.array.reshape(-1)], value.array.ndim == 0)
        return None

    def folded(self, dims: _Dims) -> Value:
        if all(isinstance(d, int) for d in dims.dims):
            array = np.array(dims.dims, dtype=np.int64)
            return _Const(array.reshape(()) if dims.scalar else array)
        return dims

    def fold(self, node: Any) -> Optional[Value]:
        """A node whose inputs are all constants, run by ONNX's reference
        evaluator."""
        values = [self.value(name) for name in node.input]
        if not all(v is None or isinstance(v, _Const) for v in values):
            return None
        from onnx.reference import ReferenceEvaluator
        helper = self.onnx.helper
        inputs = [name for name in node.input if name]
        graph = helper.make_graph(
            [node], "fold",
            [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(
                self.value(name).array.dtype), None) for name in inputs],
            [helper.make_tensor_value_info(name, 0, None) for name in node.output if name])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        results = ReferenceEvaluator(model).run(
            None, {name: self.value(name).array for name in inputs})
        consts = [_Const(np.asarray(r)) for r in results]
        return consts if len(consts) > 1 else consts[0]

    def op_Gather(self, node: Any, attributes: Dict[str, Any]) -> Value:
        axis = attributes.get("axis", 0)
        data, indices = self.value(node.input[0]), self.value(node.input[1])
        if isinstance(data, _Const) and data.weight and isinstance(indices, _Tensor):
            if axis != 0 or data.array.ndim != 2:
                raise self.fail("a Gather of a weight is an embedding: axis 0 of a 2-D table")
            table = self.weight(node.input[0], "the embedding table")
            ids = indices
            if ids.dtype != "i64":
                raise self.fail(f"embedding ids must be int64 (int32 inputs are widened), "
                                f"got {ids.type}")
            name = self.fresh()
            shape = ids.shape + [table.shape[1]]
            self.emit(f"{name} = recur.embedding {table.name}[{ids.name}] : ({table.type}, "
                      f"{ids.type}) -> {_type(shape)}")
            return _Tensor(name, shape)
        dims, index = self.dims_of(data), indices
        if dims is not None and isinstance(index, _Const) and not dims.scalar:
            picked = [dims.dims[int(i)] for i in index.array.reshape(-1)]
            return self.folded(_Dims(picked, index.array.ndim == 0))
        raise self.fail("a Gather other than of a shape or of an embedding table")

    def axes(self, node: Any, attributes: Dict[str, Any], position: int) -> Optional[List[int]]:
        if "axes" in attributes:
            return list(attributes["axes"])
        if len(node.input) > position and node.input[position]:
            return [int(a) for a in self.const(node.input[position], "axes").reshape(-1)]
        return None

    def op_Unsqueeze(self, node: Any, attributes: Dict[str, Any]) -> Value:
        value = self.value(node.input[0])
        axes = self.axes(node, attributes, 1)
        dims = self.dims_of(value)
        if dims is not None and dims.scalar and axes == [0]:
            return self.folded(_Dims(dims.dims))
        shape = list(getattr(value, "shape", []))
        rank = len(shape) + len(axes)
        for axis in sorted(a % rank for a in axes):
            shape.insert(axis, 1)
        if isinstance(value, _Splat):
            return _Splat(value.value, shape, value.dtype)
        if isinstance(value, _Stack) and len(value.parts) == 1:
            value = value.parts[0]
            shape_part = list(value.shape)
            return self.reshape(value, shape) if shape_part != shape else value
        return self.reshape(self.tensor(value), shape)

    def op_Squeeze(self, node: Any, attributes: Dict[str, Any]) -> Value:
        value = self.value(node.input[0])
        shape = list(value.shape)
        axes = self.axes(node, attributes, 1)
        if axes is None:
            axes = [k for k, d in enumerate(shape) if d == 1]
        axes = sorted(a % len(shape) for a in axes)
        if any(shape[a] != 1 for a in axes):
            raise self.fail(f"squeezes axes {axes} of a shape {shape} whose size is not 1")
        kept = [d for k, d in enumerate(shape) if k not in axes]
        if isinstance(value, _Stack) and axes == [value.axis] and len(value.parts) == 1:
            return value.parts[0]
        if isinstance(value, _Splat):
            return _Splat(value.value, kept, value.dtype)
        return self.reshape(self.tensor(value), kept)

    def op_Concat(self, node: Any, attributes: Dict[str, Any]) -> Value:
        values = [self.value(name) for name in node.input]
        dims = [self.dims_of(v) for v in values]
        if all(d is not None for d in dims):
            return self.folded(_Dims([x for d in dims for x in d.dims]))
        axis = attributes["axis"] % len(values[0].shape)
        return self.concat([self.tensor(v) for v in values], axis)

    def op_Cast(self, node: Any, attributes: Dict[str, Any]) -> Value:
        value = self.value(node.input[0])
        to = attributes["to"]
        if isinstance(value, _Dims) and to in (6, 7):
            return value
        if isinstance(value, _Tensor) and _ONNX_TYPES.get(to, ("?",))[0] == value.dtype:
            return value
        raise self.fail(f"a Cast to {self.onnx.TensorProto.DataType.Name(to)} at run time")

    def op_ConstantOfShape(self, node: Any, attributes: Dict[str, Any]) -> Value:
        dims = self.dims_of(self.value(node.input[0]))
        if dims is None:
            raise self.fail("the shape must be a shape computation or a constant")
        array = self.numpy_helper.to_array(attributes["value"]) if "value" in attributes else \
            np.zeros(1, np.float32)
        if all(isinstance(d, int) for d in dims.dims):
            return _Const(np.full(dims.dims, array.reshape(-1)[0], dtype=array.dtype))
        dtype = "f32" if array.dtype.kind == "f" else "i64"
        return _Splat(array.reshape(-1)[0], dims.dims, dtype)

    def op_Expand(self, node: Any, attributes: Dict[str, Any]) -> Value:
        value = self.value(node.input[0])
        dims = self.dims_of(self.value(node.input[1]))
        if isinstance(value, _Const) and value.array.size == 1 and dims is not None:
            dtype = "f32" if value.array.dtype.kind == "f" else "i64"
            return _Splat(value.array.reshape(-1)[0], dims.dims, dtype)
        raise self.fail("an Expand other than of a scalar constant")

    def op_Slice(self, node: Any, attributes: Dict[str, Any]) -> Value:
        value = self.value(node.input[0])
        if self.opset < 10:
            starts, ends = attributes["starts"], attributes["ends"]
            axes, steps = attributes.get("axes"), None
        else:
            starts = self.const(node.input[1], "starts").reshape(-1).tolist()
            ends = self.const(node.input[2], "ends").reshape(-1).tolist()
            axes = self.axes(node, {}, 3)
            steps = self.const(node.input[4], "steps").reshape(-1).tolist() \
                if len(node.input) > 4 and node.input[4] else None
        dims = self.dims_of(value)
        if dims is not None and not dims.scalar:
            if steps and any(s != 1 for s in steps):
                raise self.fail("a Slice with steps other than 1")
            start, end = starts[0], ends[0]
            return self.folded(_Dims(dims.dims[slice(start, end)]))
        shape = list(value.shape)
        axes = list(range(len(starts))) if axes is None else [a % len(shape) for a in axes]
        if steps and any(s != 1 for s in steps):
            raise self.fail("a Slice with steps other than 1")
        offsets, sizes = [0] * len(shape), list(shape)
        for axis, start, end in zip(axes, starts, ends):
            size = shape[axis]
            if isinstance(size, _Sym):
                if start == 0 and end >= 2**31 - 1:
                    continue
                raise self.fail(f"a Slice of axis {axis}, whose size is known only at run time")
            start = max(0, min(size, start + size if start < 0 else start))
            end = max(start, min(size, end + size if end < 0 else end))
            offsets[axis], sizes[axis] = start, end - start
        if isinstance(value, _Splat):
            return _Splat(value.value, sizes, value.dtype)
        if isinstance(value, _Stack) and all(
                o == 0 and s == d for k, (o, s, d) in enumerate(zip(offsets, sizes, shape))
                if k != value.axis):
            return _Stack(value.parts[offsets[value.axis]:offsets[value.axis] +
                                      sizes[value.axis]], value.axis)
        return self.extract(self.tensor(value), offsets, sizes, range(len(shape)))

    def op_Transpose(self, node: Any, attributes: Dict[str, Any]) -> Value:
        value = self.value(node.input[0])
        rank = len(value.shape)
        permutation = list(attributes.get("perm", range(rank)[::-1]))
        if isinstance(value, _Stack):
            # Directions moved, the rest in order: the stack along the new axis.
            rest = [p for p in permutation if p != value.axis]
            if rest == sorted(rest):
                return _Stack(value.parts, permutation.index(value.axis))
        if isinstance(value, _Splat):
            return _Splat(value.value, [value.shape[p] for p in permutation], value.dtype)
        return self.transpose(self.tensor(value), permutation)

    def op_Reshape(self, node: Any, attributes: Dict[str, Any]) -> Value:
        value = self.value(node.input[0])
        dims = self.dims_of(self.value(node.input[1]))
        if dims is None:
            raise self.fail("the shape must be a shape computation or a constant")
        source = list(value.shape)
        target: List[Any] = []
        for k, d in enumerate(dims.dims):
            if d == 0 and not attributes.get("allowzero", 0):
                target.append(source[k])
            else:
                target.append(d)
        if -1 in target:
            k = target.index(-1)
            known = _factors([d for d in target if d != -1])
            total = _factors(source)
            atoms = list(total[1])
            for atom in known[1]:
                if atom not in atoms:
                    raise self.fail(f"cannot infer the -1 of a reshape of {source} to {target}")
                atoms.remove(atom)
            if total[0] % known[0]:
                raise self.fail(f"cannot reshape {source} to {target}")
            constant = total[0] // known[0]
            if atoms and constant != 1:
                raise self.fail(f"cannot infer the -1 of a reshape of {source} to {target}")
            target[k] = _Sym(tuple(atoms)) if atoms else constant
        if isinstance(value, _Stack) and value.axis == len(source) - 2 and \
                target == source[:-2] + [_product(source[-2:])]:
            # [.., D, H] -> [.., D * H]: the directions side by side.
            return self.concat(value.parts, value.axis)
        if isinstance(value, _Splat):
            return _Splat(value.value, target, value.dtype)
        return self.reshape(self.tensor(value), target)

    # -- products, softmax --
    def op_MatMul(self, node: Any, attributes: Dict[str, Any]) -> Value:
        x = self.tensor(self.value(node.input[0]))
        weight = self.weight(node.input[1], "the right operand")
        if len(weight.shape) != 2:
            raise self.fail("MatMul's right operand must be a 2-D weight")
        return _Linear(x, self.transpose(weight, [1, 0]))

    def op_Gemm(self, node: Any, attributes: Dict[str, Any]) -> Value:
        if attributes.get("alpha", 1.0) != 1.0 or attributes.get("beta", 1.0) != 1.0 or \
                attributes.get("transA", 0):
            raise self.fail("a Gemm with alpha, beta or transA other than the defaults")
        x = self.tensor(self.value(node.input[0]))
        weight = self.weight(node.input[1], "B")
        if not attributes.get("transB", 0):
            weight = self.transpose(weight, [1, 0])
        bias = self.weight(node.input[2], "C") if len(node.input) > 2 and node.input[2] \
            else None
        if bias is not None and len(bias.shape) != 1:
            raise self.fail("C must be a vector of the output's size")
        return self.linear(x, weight, bias)

    def op_Add(self, node: Any, attributes: Dict[str, Any]) -> Value:
        a, b = self.value(node.input[0]), self.value(node.input[1])
        if isinstance(b, _Linear):
            a, b = b, a
            node_inputs = [node.input[1], node.input[0]]
        else:
            node_inputs = list(node.input)
        if isinstance(a, _Linear) and isinstance(b, _Const) and b.array.ndim == 1:
            return self.linear(a.x, a.weight, self.weight(node_inputs[1], "the bias"))
        dims = [self.dims_of(a), self.dims_of(b)]
        if all(d is not None for d in dims) and len(dims[0].dims) == len(dims[1].dims):
            pairs = zip(dims[0].dims, dims[1].dims)
            if all(isinstance(x, int) and isinstance(y, int) for x, y in pairs):
                return self.folded(_Dims([x + y for x, y in zip(dims[0].dims, dims[1].dims)],
                                         dims[0].scalar))
        raise self.fail("an Add other than a product's bias or shape arithmetic")

    def op_LogSoftmax(self, node: Any, attributes: Dict[str, Any]) -> Value:
        x = self.tensor(self.value(node.input[0]))
        axis = attributes.get("axis", -1 if self.opset >= 13 else 1)
        if axis % len(x.shape) != len(x.shape) - 1:
            raise self.fail("a softmax over a dimension other than the last")
        name = self.fresh()
        self.emit(f"{name} = recur.log_softmax {x.name} : {x.type} -> {x.type}")
        return _Tensor(name, x.shape)

    def op_Softmax(self, node: Any, attributes: Dict[str, Any]) -> Value:
        log = self.op_LogSoftmax(node, attributes)
        return self.pointwise(log, ["%r = math.exp %a : f32"])

    # -- recurrences --
    def op_LSTM(self, node: Any, attributes: Dict[str, Any]) -> Value:
        return self.recurrence("LSTM", node, attributes)

    def op_GRU(self, node: Any, attributes: Dict[str, Any]) -> Value:
        return self.recurrence("GRU", node, attributes)

    def op_RNN(self, node: Any, attributes: Dict[str, Any]) -> Value:
        return self.recurrence("RNN", node, attributes)

    def recurrence(self, kind: str, node: Any, attributes: Dict[str, Any]) -> List[Value]:
        known = {"hidden_size", "direction", "layout", "activations", "activation_alpha",
                 "activation_beta", "clip"} | ({"input_forget"} if kind == "LSTM" else set()) \
            | ({"linear_before_reset"} if kind == "GRU" else set())
        unknown = sorted(set(attributes) - known)
        if unknown:
            raise self.fail(f"attribute {', '.join(unknown)} is not supported")
        gates = _GATES[kind]
        hidden = attributes.get("hidden_size")
        direction = attributes.get("direction", b"forward")
        direction = direction.decode() if isinstance(direction, bytes) else direction
        if direction not in ("forward", "reverse", "bidirectional"):
            raise self.fail(f"direction '{direction}'")
        directions = 2 if direction == "bidirectional" else 1
        layout = attributes.get("layout", 0)
        inputs = list(node.input) + [""] * (8 - len(node.input))
        x = self.tensor(self.value(inputs[0]), "X")
        if x.dtype != "f32" or len(x.shape) != 3:
            raise self.fail(f"X must be a float32 tensor of rank 3, got {x.type}")
        if layout:
            x = self.transpose(x, [1, 0, 2])
        self.assign(x.shape[0], "T")
        self.assign(x.shape[1], "B")
        w = self.weight(inputs[1], "W")
        r = self.weight(inputs[2], "R")
        if hidden is None:
            hidden = r.shape[-1]
        size = x.shape[2]
        expected = {"W": (w, [directions, gates * hidden, size]),
                    "R": (r, [directions, gates * hidden, hidden])}
        b = self.weight(inputs[3], "B") if inputs[3] else None
        if b is not None:
            expected["B"] = (b, [directions, 2 * gates * hidden])
        p = None
        if kind == "LSTM" and inputs[7]:
            p = self.weight(inputs[7], "P")
            expected["P"] = (p, [directions, 3 * hidden])
        for what, (value, shape) in expected.items():
            if value.shape != shape:
                raise self.fail(f"{what} has shape {value.shape}, expected {shape}")
        lengths = None
        if inputs[4]:
            value = self.value(inputs[4])
            lengths = self.tensor(value, "sequence_lens")
            if lengths.dtype != "i64" or len(lengths.shape) != 1:
                raise self.fail(f"sequence_lens must be a vector of int32 or int64, got "
                                f"{lengths.type}")
            self.assign(lengths.shape[0], "B")
        batch = x.shape[1]
        initial = []
        for position, what in ((5, "initial_h"), (6, "initial_c")):
            value = self.value(inputs[position]) if inputs[position] else None
            if isinstance(value, _Splat) and value.value == 0 or \
                    isinstance(value, _Const) and not value.array.any():
                value = None  # zeros: the default initial state
            if value is not None:
                value = self.tensor(value, what)
                if layout:
                    value = self.transpose(value, [1, 0, 2])
                want = [directions, batch, hidden]
                if len(value.shape) != 3 or value.shape[0] != directions or \
                        value.shape[2] != hidden:
                    raise self.fail(f"{what} has shape {value.shape}, expected {want}")
                self.assign(value.shape[1], "B")
            initial.append(value)
        activations = [a.decode() if isinstance(a, bytes) else a
                       for a in attributes.get("activations", [])]
        per_direction = len(_DEFAULT_ACTIVATIONS[kind])
        if activations and len(activations) != per_direction * directions:
            raise self.fail(f"{len(activations)} activations; a {direction} {kind} takes "
                            f"{per_direction * directions}")
        alphas = list(attributes.get("activation_alpha", []))
        betas = list(attributes.get("activation_beta", []))
        outputs_y, outputs_h, outputs_c = [], [], []
        for d in range(directions):
            names = activations[d * per_direction:(d + 1) * per_direction] or \
                _DEFAULT_ACTIVATIONS[kind]
            functions = []
            for name in names:
                if name not in _ACTIVATIONS:
                    raise self.fail(f"activation '{name}' is not supported (supported: "
                                    f"{', '.join(sorted(_ACTIVATIONS))})")
                takes_alpha, alpha, takes_beta, beta = _ACTIVATIONS[name]
                if takes_alpha and alphas:
                    alpha = alphas.pop(0)
                if takes_beta and betas:
                    beta = betas.pop(0)
                functions.append((name, float(alpha), float(beta)))
            reverse = direction == "reverse" or d == 1
            h0 = c0 = None
            if initial[0] is not None:
                h0 = self.extract(initial[0], [d, 0, 0], [1, batch, hidden], [1, 2])
            if len(initial) > 1 and initial[1] is not None:
                c0 = self.extract(initial[1], [d, 0, 0], [1, batch, hidden], [1, 2])
            weights = {"w": self.extract(w, [d, 0, 0], [1] + w.shape[1:], [1, 2]),
                       "r": self.extract(r, [d, 0, 0], [1] + r.shape[1:], [1, 2])}
            if b is not None:
                half = gates * hidden
                weights["wb"] = self.extract(b, [d, 0], [1, half], [1])
                weights["rb"] = self.extract(b, [d, half], [1, half], [1])
            if p is not None:
                weights["p"] = self.extract(p, [d, 0], [1, 3 * hidden], [1])
            named = [n for n, _, _ in functions] == _DEFAULT_ACTIVATIONS[kind] and \
                "clip" not in attributes and not attributes.get("input_forget", 0) and \
                p is None and (kind != "GRU" or attributes.get("linear_before_reset", 0))
            if kind == "RNN" and [n for n, _, _ in functions] == ["Relu"] and \
                    "clip" not in attributes:
                named = True
            if named:
                results = self.named_layer(kind, functions, x, weights, hidden, h0, c0,
                                           lengths, reverse)
            else:
                results = self.cell_layer(kind, functions, attributes, x, weights, hidden,
                                          h0, c0, lengths, reverse)
            outputs_y.append(results[0])
            outputs_h.append(results[1])
            if kind == "LSTM":
                outputs_c.append(results[2])
        if layout:
            outputs_y = [self.transpose(y, [1, 0, 2]) for y in outputs_y]
        stacks = [_Stack(outputs_y, 2 if layout else 1),
                  _Stack(outputs_h, 1 if layout else 0)]
        if kind == "LSTM":
            stacks.append(_Stack(outputs_c, 1 if layout else 0))
        return stacks

    def assign(self, dim: Dim, role: str) -> None:
        """`dim` is a recurrence's sequence length or batch size."""
        if isinstance(dim, _Sym) and len(dim.atoms) == 1:
            if self.roles.setdefault(dim.atoms[0], role) != role:
                raise self.fail(f"a size is both a sequence length and a batch size")

    def dims_attribute(self, shape: Sequence[Dim], what: str) -> str:
        """recur.dims for a model tensor: which run-time size each dimension
        is."""
        names = []
        for axis, dim in enumerate(shape):
            role = ""
            if isinstance(dim, _Sym):
                role = self.roles.get(dim.atoms[0], "") if len(dim.atoms) == 1 else ""
                if not role:
                    raise RecurError(f"{what}: dimension {axis} is known only at run time and "
                                     f"is neither a recurrence's sequence length nor its batch "
                                     f"size; Recur's models have those two sizes only")
            names.append(f'"{role}"')
        if not any(isinstance(d, _Sym) for d in shape):
            return ""
        return f", recur.dims = [{', '.join(names)}]"

    def reordered(self, value: _Tensor, gates: int, order: List[int]) -> _Tensor:
        """The gate blocks of a weight (or bias) in PyTorch's order."""
        if order == list(range(gates)):
            return value
        block = value.shape[0] // gates
        return self.concat([self.rows(value, k * block, block) for k in order], 0)

    def named_layer(self, kind: str, functions: List[Tuple[str, float, float]], x: _Tensor,
                    weights: Dict[str, _Tensor], hidden: int, h0: Optional[_Tensor],
                    c0: Optional[_Tensor], lengths: Optional[_Tensor],
                    reverse: bool) -> List[_Tensor]:
        gates, order = _GATES[kind], _NAMED_GATE_ORDER[kind]
        operands = [self.reordered(weights[k], gates, order) for k in ("w", "r")]
        if "wb" in weights:
            operands += [self.reordered(weights[k], gates, order) for k in ("wb", "rb")]
        op = {"LSTM": "recur.lstm", "GRU": "recur.gru",
              "RNN": "recur.rnn_relu" if functions[0][0] == "Relu" else "recur.rnn_tanh"}[kind]
        text = f"{op} {x.name}, " + ", ".join(v.name for v in operands)
        types = [x.type] + [v.type for v in operands]
        for what, value in (("h0", h0), ("c0", c0)):
            if value is not None:
                text += f" {what}({value.name})"
                types.append(value.type)
        if lengths is not None:
            text += f" lengths({lengths.name})"
            types.append(lengths.type)
        if reverse:
            text += " reverse"
        y = _Tensor(self.fresh("y"), x.shape[:2] + [hidden])
        state = [_Tensor(self.fresh("h_n"), [x.shape[1], hidden])]
        if kind == "LSTM":
            state.append(_Tensor(self.fresh("c_n"), [x.shape[1], hidden]))
        results = [y] + state
        self.emit(f"{', '.join(v.name for v in results)} = {text} : ({', '.join(types)}) -> "
                  f"({', '.join(v.type for v in results)})")
        return results

    def cell_layer(self, kind: str, functions: List[Tuple[str, float, float]],
                   attributes: Dict[str, Any], x: _Tensor, weights: Dict[str, _Tensor],
                   hidden: int, h0: Optional[_Tensor], c0: Optional[_Tensor],
                   lengths: Optional[_Tensor], reverse: bool) -> List[_Tensor]:
        """A layer as the recur.rnn of a cell stating ONNX's equations in
        PyTorch, translated by the cell front end."""
        from ._cells import _translate
        # The cell front end takes whole parameters: the gate blocks that
        # ONNX's definition reads one by one are weights of their own.
        weights = dict(weights)
        if kind == "GRU":
            for key in ("r", "rb"):
                if key in weights:
                    value = weights.pop(key)
                    block = value.shape[0] // 3
                    for k, gate in enumerate("zrh"):
                        weights[key + gate] = self.rows(value, k * block, block)
        if "p" in weights:
            for k, gate in enumerate("iof"):
                weights["p" + gate] = self.rows(weights["p"], k * hidden, hidden)
            del weights["p"]
        cell = _onnx_cell(kind, functions, attributes, x.shape[2], hidden, weights)
        states = 2 if kind == "LSTM" else 1
        layer = _translate(cell, x.shape[2], [hidden] * states, kind == "LSTM", "")
        init = []
        for value in ([h0, c0] if kind == "LSTM" else [h0]):
            if value is None:
                value = self.tensor(_Splat(0.0, [x.shape[1], hidden]))
            init.append(value)
        captures = []
        for capture, value in layer.captures:
            operand = weights[capture.name]
            if capture.transposed:
                operand = self.transpose(operand, [1, 0])
            captures.append(operand)
        y = _Tensor(self.fresh("y"), x.shape[:2] + [layer.output])
        finals = [_Tensor(self.fresh("state_n"), [x.shape[1], hidden]) for _ in init]
        operand_types = [x.type] + [v.type for v in init] + [v.type for v in captures]
        line = f"{', '.join(v.name for v in [y] + finals)} = recur.rnn {x.name}"
        line += f" init({', '.join(v.name for v in init)})"
        if captures:
            line += f" captures({', '.join(v.name for v in captures)})"
        if lengths is not None:
            line += f" lengths({lengths.name})"
            operand_types.append(lengths.type)
        if reverse:
            line += " reverse"
        line += (f" : ({', '.join(operand_types)}) -> "
                 f"({', '.join(v.type for v in [y] + finals)}) {{")
        self.emit(line)
        for text in layer.text:
            self.emit("  " + text)
        self.emit("}")
        return [y] + finals


def _activation(name: str, alpha: float, beta: float) -> Any:
    import torch
    if name == "Sigmoid":
        return torch.sigmoid
    if name == "Tanh":
        return torch.tanh
    if name == "Relu":
        return torch.relu
    if name == "Affine":
        return lambda v: v * alpha + beta
    if name == "LeakyRelu":
        return lambda v: torch.relu(v) - torch.relu(-v) * alpha
    if name == "ScaledTanh":
        return lambda v: torch.tanh(v * beta) * alpha
    if name == "HardSigmoid":
        return lambda v: torch.clamp(v * alpha + beta, 0.0, 1.0)
    if name == "Elu":
        return lambda v: torch.relu(v) + (torch.exp(-torch.relu(-v)) - 1.0) * alpha
    if name == "Softsign":
        return lambda v: v / (torch.maximum(v, -v) + 1.0)
    if name == "Softplus":
        return lambda v: torch.log(torch.exp(v) + 1.0)
    if name == "ThresholdedRelu":
        return lambda v: torch.nn.functional.threshold(v, alpha, 0.0)
    raise RecurError(f"activation '{name}'")


def _onnx_cell(kind: str, functions: List[Tuple[str, float, float]],
               attributes: Dict[str, Any], size: int, hidden: int,
               weights: Dict[str, _Tensor]) -> Any:
    """A PyTorch cell computing one step of an ONNX LSTM, GRU or RNN as the
    operator's definition states it (gate blocks in ONNX's order). Its
    parameters stand for the weights by their shapes; their values are the
    IR's."""
    import torch
    import torch.nn as nn
    clip = attributes.get("clip")
    input_forget = bool(attributes.get("input_forget", 0))
    linear_before_reset = bool(attributes.get("linear_before_reset", 0))
    f = [_activation(*a) for a in functions]

    def clipped(v: Any) -> Any:
        return torch.clamp(v, -clip, clip) if clip is not None else v

    class OnnxCell(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            for name, value in weights.items():
                self.register_parameter(name, nn.Parameter(torch.zeros(value.shape)))
            self.bias = "wb" in weights

        def forward(self, x: Any, state: Any) -> Any:
            g = x @ self.w.t()
            if self.bias:
                g = g + self.wb
            if kind == "LSTM":
                h, c = state
                g = g + h @ self.r.t()
                if self.bias:
                    g = g + self.rb
                i, o, fg, cc = g.chunk(4, 1)
                if "pi" in weights:
                    i, fg = i + self.pi * c, fg + self.pf * c
                i = f[0](clipped(i))
                fg = 1.0 - i if input_forget else f[0](clipped(fg))
                c = fg * c + i * f[1](clipped(cc))
                if "po" in weights:
                    o = o + self.po * c
                h = f[0](clipped(o)) * f[2](c)
                return h, (h, c)
            h = state
            if kind == "RNN":
                g = g + h @ self.r.t()
                if self.bias:
                    g = g + self.rb
                h = f[0](clipped(g))
                return h, h
            xz, xr, xh = g.chunk(3, 1)
            hz, hr = h @ self.rz.t(), h @ self.rr.t()
            if self.bias:
                hz, hr = hz + self.rbz, hr + self.rbr
            z = f[0](clipped(xz + hz))
            r = f[0](clipped(xr + hr))
            if linear_before_reset:
                hh = h @ self.rh.t()
                if self.bias:
                    hh = hh + self.rbh
                n = f[1](clipped(xh + r * hh))
            else:
                hh = (r * h) @ self.rh.t()
                if self.bias:
                    hh = hh + self.rbh
                n = f[1](clipped(xh + hh))
            h = (1.0 - z) * n + z * h
            return h, h

    return OnnxCell()


def import_model(model: Any) -> Tuple[str, Dict[str, np.ndarray], Dict[str, Any]]:
    """`model` (a path or an onnx.ModelProto) as Recur IR. Returns the IR,
    the weights to bind (initializers by name) and the signature: the
    graph's inputs in order (`inputs`), which of them are bound as weights
    (`weight_inputs`), which Recur takes widened to int64 (`int64`), and the
    outputs in order (`outputs`)."""
    onnx = _onnx()
    if isinstance(model, (str, os.PathLike)):
        if not os.path.isfile(model):
            raise RecurError(f"{os.fspath(model)}: no such file")
        try:
            model = onnx.load(os.fspath(model))
        except Exception as error:  # a truncated or foreign file: protobuf's DecodeError
            raise RecurError(f"{os.fspath(model)}: not a readable ONNX model: "
                             f"{str(error).splitlines()[0] if str(error) else type(error).__name__}"
                             ) from None
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as error:
        raise RecurError(f"the ONNX model is malformed: {str(error).splitlines()[0]}") \
            from None
    importer = _Importer(model)
    ir, weights = importer.run()
    signature = {"inputs": [i.name for i in importer.inputs],
                 "weight_inputs": list(importer.weight_inputs),
                 "int64": sorted(importer.input_casts),
                 "outputs": [o.name for o in model.graph.output]}
    return ir, weights, signature


class CompiledONNX:
    """An ONNX model compiled by Recur: `outputs = compiled(*inputs)` or by
    name, NumPy arrays or torch tensors; the outputs in graph order (a list),
    of the inputs' kind."""

    def __init__(self, model: Any, target: str = "cpu", threads: Optional[int] = None,
                 verbose: bool = False) -> None:
        from ._compile import _build
        from ._model import Model
        self.ir, weights, self.signature = import_model(model)
        flags = [f"--target={target}"]
        label = "ONNX model" if not isinstance(model, (str, os.PathLike)) else os.fspath(model)
        self.model = Model(_build(self.ir, flags, label, verbose)[0])
        if threads is not None:
            self.model.set_threads(threads)
        self._initializers = weights
        self._bound: Optional[Tuple] = None
        if not self.signature["weight_inputs"]:
            self.model.bind({k: _contiguous(v) for k, v in weights.items()})

    @property
    def input_names(self) -> List[str]:
        return list(self.signature["inputs"])

    @property
    def output_names(self) -> List[str]:
        return list(self.signature["outputs"])

    def __call__(self, *inputs: Any, **named: Any) -> List[Any]:
        from ._model import inputs_by_name
        given = inputs_by_name(self.signature["inputs"], inputs, named)
        as_numpy = not any(type(v).__module__.startswith("torch") for v in given.values())
        for name in self.signature["int64"]:
            value = given[name]
            given[name] = value.astype(np.int64) if isinstance(value, np.ndarray) else \
                value.long() if hasattr(value, "long") else np.asarray(value, np.int64)
        weight_inputs = self.signature["weight_inputs"]
        if weight_inputs:
            values = {name: _contiguous(np.asarray(given[name], np.float32))
                      for name in weight_inputs}
            key = tuple(v.tobytes() for v in values.values())
            if key != self._bound:
                self.model.bind({**{k: _contiguous(v) for k, v in self._initializers.items()},
                                 **values})
                self._bound = key
        run_inputs = {spec.name: _contiguous(given[spec.name]) for spec in self.model.inputs}
        results = self.model.run(**run_inputs)
        results = list(results) if isinstance(results, tuple) else [results]
        if as_numpy:  # host outputs: views of the runtime's buffers, no copy
            results = [r.cpu().numpy() if hasattr(r, "cpu") else np.asarray(r) for r in results]
        return results


def _contiguous(value: Any) -> Any:
    """`value` as the runtime takes it: contiguous, and for NumPy writable
    (DLPack cannot export a read-only array, as numpy_helper returns)."""
    if hasattr(value, "contiguous"):
        return value.contiguous()
    value = np.ascontiguousarray(value)
    return value if value.flags.writeable else value.copy()


def compile(model: Any, target: str = "cpu", threads: Optional[int] = None,
            verbose: bool = False) -> CompiledONNX:
    """An ONNX model (a path or an onnx.ModelProto) compiled for `target`
    ("cpu" or "cuda"): a callable over the graph's inputs that returns its
    outputs in graph order."""
    if target not in ("cpu", "cuda"):
        raise RecurError(f"target must be 'cpu' or 'cuda', got {target!r}")
    return CompiledONNX(model, target, threads, verbose)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """recur-import-onnx model.onnx -o model.mlir [--weights model.safetensors]:
    the Recur IR of an ONNX model and its initializers as the weights file
    recur-run --weights reads. Graph inputs that feed weights only (as in
    ONNX's node test cases) are weights bound at run time: listed, not
    written."""
    import argparse
    import sys
    from . import _safetensors
    parser = argparse.ArgumentParser(
        prog="recur-import-onnx",
        description="Import an ONNX model (LSTM, GRU, RNN and the glue torch.onnx.export "
                    "writes around them) as Recur IR.")
    parser.add_argument("model", help="the .onnx file")
    parser.add_argument("-o", "--output", default="-", help="the IR file (default: stdout)")
    parser.add_argument("--weights", help="write the initializers here (safetensors), "
                        "under the names the IR's recur.weight arguments carry")
    args = parser.parse_args(argv)
    try:
        ir, weights, signature = import_model(args.model)
    except RecurError as error:
        message = str(error)
        if not message.startswith(args.model):
            message = f"{args.model}: {message}"
        print(f"recur-import-onnx: {message}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(ir)
    else:
        with open(args.output, "w") as f:
            f.write(ir)
    if args.weights:
        _safetensors.save(args.weights, weights)
    if signature["weight_inputs"]:
        print(f"recur-import-onnx: note: graph inputs taken as weights (bind them with the "
              f"initializers): {', '.join(signature['weight_inputs'])}", file=sys.stderr)
    if signature["int64"]:
        print(f"recur-import-onnx: note: int32 inputs taken as int64: "
              f"{', '.join(signature['int64'])}", file=sys.stderr)
    return 0


# --- onnx.backend.base.Backend ---------------------------------------------

def _backend_classes() -> Tuple[Any, Any]:
    from onnx.backend.base import Backend as Base
    from onnx.backend.base import BackendRep as BaseRep

    class RecurBackendRep(BaseRep):
        def __init__(self, compiled: CompiledONNX) -> None:
            self.compiled = compiled

        def run(self, inputs: Any, **kwargs: Any) -> Tuple[Any, ...]:
            if isinstance(inputs, dict):
                return tuple(self.compiled(**inputs))
            if not isinstance(inputs, (list, tuple)):
                inputs = [inputs]
            return tuple(self.compiled(*inputs))

    class RecurBackend(Base):
        """ONNX's backend interface over recur.onnx.compile: ONNX's backend
        test runner (onnx.backend.test.BackendTest) drives it."""

        @classmethod
        def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> RecurBackendRep:
            super().prepare(model, device, **kwargs)
            target = "cuda" if str(device).upper().startswith("CUDA") else "cpu"
            return RecurBackendRep(compile(model, target))

        @classmethod
        def run_model(cls, model: Any, inputs: Any, device: str = "CPU",
                      **kwargs: Any) -> Tuple[Any, ...]:
            return cls.prepare(model, device, **kwargs).run(inputs)

        @classmethod
        def supports_device(cls, device: str) -> bool:
            return str(device).upper() in ("CPU", "CUDA")

    return RecurBackend, RecurBackendRep


def __getattr__(name: str) -> Any:
    # The backend classes derive from onnx's, imported when first asked for.
    if name in ("Backend", "BackendRep"):
        backend, rep = _backend_classes()
        globals().update(Backend=backend, BackendRep=rep, prepare=backend.prepare,
                         run_model=backend.run_model, supports_device=backend.supports_device)
        return globals()[name]
    if name in ("prepare", "run_model", "supports_device"):
        __getattr__("Backend")
        return globals()[name]
    raise AttributeError(name)
