"""recur.compile_rnn: recurrent cells written in PyTorch, compiled by Recur.

A cell is an nn.Module whose `forward(x_t, state)` returns `(h_t,
new_state)`, the state a tensor or a tuple of tensors. It is traced with
torch.fx and written as the cell region of a `recur.rnn`, one per layer, so
every fusion stage sees it: products with a parameter become `recur.linear`
(hoisted out of the time loop when they read x_t), everything else
`linalg.generic`s with torch's broadcasting in their indexing maps,
reductions over the feature dimension, and slices and concatenations along
it. What the cell does outside that vocabulary is refused with the op's name
and the cell's source line.
"""

import inspect
import math
import operator
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ._errors import RecurError

Shape = Tuple[Union[int, str], ...]  # "B" for the batch, else a static size
BATCH = "B"


def _type(shape: Shape) -> str:
    """The MLIR tensor type of an f32 value of `shape`."""
    return "tensor<" + "".join(("?" if d == BATCH else str(d)) + "x" for d in shape) + "f32>"


def _float(value: float) -> str:
    """An f32 literal MLIR parses (inf and nan as bit patterns)."""
    if math.isnan(value):
        return "0x7FC00000"
    if math.isinf(value):
        return "0x7F800000" if value > 0 else "0xFF800000"
    return f"{float(value):.9e}"


class _Value:
    """An SSA tensor value of the cell region, with its shape."""

    def __init__(self, name: str, shape: Shape) -> None:
        self.name, self.shape = name, tuple(shape)

    @property
    def type(self) -> str:
        return _type(self.shape)


class _Body:
    """The scalar body of a linalg.generic: SSA names of f32 values."""

    def __init__(self, emitter: "_Emitter") -> None:
        self.emitter, self.lines = emitter, []

    def _new(self, text: str) -> str:
        name = self.emitter.fresh("s")
        self.lines.append(f"{name} = {text}")
        return name

    def const(self, value: float) -> str:
        return self._new(f"arith.constant {_float(value)} : f32")

    def unary(self, op: str, a: str) -> str:
        return self._new(f"{op} {a} : f32")

    def binary(self, op: str, a: str, b: str) -> str:
        return self._new(f"{op} {a}, {b} : f32")

    def sigmoid(self, a: str) -> str:
        # 1 / (1 + exp(-a)), as the named cells' CellMath.h writes it.
        exp = self.unary("math.exp", self.unary("arith.negf", a))
        return self.binary("arith.divf", self.const(1.0),
                           self.binary("arith.addf", self.const(1.0), exp))


class _Emitter:
    """Writes one cell region: its operations as text, and what it captures."""

    def __init__(self, prefix: str) -> None:
        self.prefix, self.counter = prefix, 0
        self.lines: List[str] = []
        self.captures: Dict[Tuple[str, bool], Tuple["_Param", _Value]] = {}

    def fresh(self, kind: str = "v") -> str:
        self.counter += 1
        return f"%{self.prefix}{kind}{self.counter}"

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def capture(self, name: str, tensor: Any, transposed: bool = False) -> _Value:
        """The block argument that stands for a captured tensor."""
        key = (name, transposed)
        if key not in self.captures:
            shape = tuple(tensor.shape)
            if transposed:
                shape = shape[::-1]
            self.captures[key] = (_Param(name, tensor, transposed),
                                  _Value(self.fresh("w"), shape))
        return self.captures[key][1]

    def empty(self, shape: Shape) -> str:
        name = self.fresh()
        dynamic = ", ".join("%B" for d in shape if d == BATCH)
        self.emit(f"{name} = tensor.empty({dynamic}) : {_type(shape)}")
        return name

    def sizes(self, shape: Shape) -> str:
        return ", ".join("%B" if d == BATCH else str(d) for d in shape)

    def collapse_units(self, value: _Value, keep: Sequence[int]) -> _Value:
        """`value` without its dimensions outside `keep` (all of size 1)."""
        if len(keep) == len(value.shape):
            return value
        groups: List[List[int]] = []
        pending: List[int] = []
        for d in range(len(value.shape)):
            pending.append(d)
            if d in keep:  # the unit dimensions before it join it
                groups.append(pending)
                pending = []
        if pending and groups:  # trailing unit dimensions join the last kept one
            groups[-1] += pending
        shape = tuple(value.shape[d] for d in keep)
        name = self.fresh()
        association = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups)
        self.emit(f"{name} = tensor.collapse_shape {value.name} [{association}] : "
                  f"{value.type} into {_type(shape)}")
        return _Value(name, shape)

    def pointwise(self, operands: Sequence[Union[_Value, float]],
                  body: Callable[..., str], where: str) -> _Value:
        """An elementwise linalg.generic over torch's broadcast of the
        operands' shapes (floats are constants); body(b, *scalars) gives the
        result's scalar."""
        tensors = [o for o in operands if isinstance(o, _Value)]
        rank = max((len(t.shape) for t in tensors), default=0)
        shape: List[Union[int, str]] = [1] * rank
        for t in tensors:
            for i, d in enumerate(t.shape):
                j = rank - len(t.shape) + i
                if d == 1 or d == shape[j]:
                    continue
                if shape[j] != 1:
                    raise RecurError(f"{where}: shapes {self.show(tensors)} do not broadcast")
                shape[j] = d
        dims = [f"d{i}" for i in range(rank)]
        maps, inputs = [], []
        for t in tensors:
            offset = rank - len(t.shape)
            keep = [i for i, d in enumerate(t.shape) if not (d == 1 and shape[offset + i] != 1)]
            t = self.collapse_units(t, keep)
            inputs.append(t)
            maps.append("affine_map<(" + ", ".join(dims) + ") -> (" +
                        ", ".join(dims[offset + i] for i in keep) + ")>")
        out = self.empty(tuple(shape))
        identity = "affine_map<(" + ", ".join(dims) + ") -> (" + ", ".join(dims) + ")>"
        b = _Body(self)
        arguments = [self.fresh("a") for _ in inputs]
        scalars, k = [], 0
        for o in operands:
            if isinstance(o, _Value):
                scalars.append(arguments[k])
                k += 1
            else:
                scalars.append(b.const(float(o)))
        result = body(b, *scalars)
        name = self.fresh()
        block = ", ".join(f"{a}: f32" for a in arguments + [self.fresh("o")])
        parallel = ", ".join(['"parallel"'] * rank)
        self.emit(f"{name} = linalg.generic {{indexing_maps = [{', '.join(maps + [identity])}], "
                  f"iterator_types = [{parallel}]}} "
                  f"ins({', '.join(t.name for t in inputs)} : "
                  f"{', '.join(t.type for t in inputs)}) "
                  f"outs({out} : {_type(tuple(shape))}) {{")
        self.emit(f"^bb0({block}):")
        self.lines += ["  " + line for line in b.lines]
        self.emit(f"  linalg.yield {result} : f32")
        self.emit(f"}} -> {_type(tuple(shape))}")
        return _Value(name, tuple(shape))

    def sum_last(self, value: _Value, keepdim: bool) -> _Value:
        """The sum over the last dimension."""
        shape = value.shape[:-1]
        rank = len(value.shape)
        dims = [f"d{i}" for i in range(rank)]
        zero = self.fresh()
        self.emit(f"{zero} = arith.constant 0.0 : f32")
        init = self.empty(shape)
        filled = self.fresh()
        self.emit(f"{filled} = linalg.fill ins({zero} : f32) outs({init} : {_type(shape)}) "
                  f"-> {_type(shape)}")
        name, a, o, s = self.fresh(), self.fresh("a"), self.fresh("o"), self.fresh("s")
        iterators = ", ".join(['"parallel"'] * (rank - 1) + ['"reduction"'])
        self.emit(f"{name} = linalg.generic {{indexing_maps = ["
                  f"affine_map<({', '.join(dims)}) -> ({', '.join(dims)})>, "
                  f"affine_map<({', '.join(dims)}) -> ({', '.join(dims[:-1])})>], "
                  f"iterator_types = [{iterators}]}} ins({value.name} : {value.type}) "
                  f"outs({filled} : {_type(shape)}) {{")
        self.emit(f"^bb0({a}: f32, {o}: f32):")
        self.emit(f"  {s} = arith.addf {a}, {o} : f32")
        self.emit(f"  linalg.yield {s} : f32")
        self.emit(f"}} -> {_type(shape)}")
        result = _Value(name, shape)
        if keepdim:
            expanded = self.fresh()
            # [..., n] -> [..., 1]: the last dimension joins the new unit one.
            groups = [[i] for i in range(rank - 2)] + ([[rank - 2, rank - 1]] if rank > 1 else [])
            association = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups)
            full = shape + (1,)
            self.emit(f"{expanded} = tensor.expand_shape {name} [{association}] "
                      f"output_shape [{self.sizes(full)}] : {_type(shape)} into {_type(full)}")
            result = _Value(expanded, full)
        return result

    def slice_last(self, value: _Value, start: int, size: int) -> _Value:
        """Columns [start, start + size) of the last dimension."""
        rank = len(value.shape)
        shape = value.shape[:-1] + (size,)
        name = self.fresh()
        offsets = ", ".join(["0"] * (rank - 1) + [str(start)])
        self.emit(f"{name} = tensor.extract_slice {value.name}[{offsets}] [{self.sizes(shape)}] "
                  f"[{', '.join(['1'] * rank)}] : {value.type} to {_type(shape)}")
        return _Value(name, shape)

    def concat_last(self, values: Sequence[_Value], where: str) -> _Value:
        """The values side by side along the last dimension."""
        leading = {v.shape[:-1] for v in values}
        if len(leading) != 1:
            raise RecurError(f"{where}: cannot concatenate {self.show(values)} along the "
                             f"last dimension")
        shape = values[0].shape[:-1] + (sum(v.shape[-1] for v in values),)
        result = self.empty(shape)
        start = 0
        for v in values:
            name = self.fresh()
            offsets = ", ".join(["0"] * (len(shape) - 1) + [str(start)])
            self.emit(f"{name} = tensor.insert_slice {v.name} into {result}[{offsets}] "
                      f"[{self.sizes(v.shape)}] [{', '.join(['1'] * len(shape))}] : "
                      f"{v.type} into {_type(shape)}")
            result, start = name, start + v.shape[-1]
        return _Value(result, shape)

    def linear(self, x: _Value, weight: _Value, bias: Optional[_Value], where: str) -> _Value:
        """x · weightᵀ + bias, weight [N, K]."""
        if len(x.shape) != 2 or len(weight.shape) != 2 or x.shape[1] != weight.shape[1]:
            raise RecurError(f"{where}: a product of {self.show([x])} with a weight of shape "
                             f"{list(weight.shape)[::-1]} (transposed: [N, K] = "
                             f"{list(weight.shape)}) does not fit")
        shape = (x.shape[0], weight.shape[0])
        name = self.fresh()
        operands, types = [x.name, weight.name], [x.type, weight.type]
        text = f"{name} = recur.linear {x.name}, {weight.name}"
        if bias is not None:
            text += f" bias({bias.name})"
            types.append(bias.type)
        self.emit(f"{text} : ({', '.join(types)}) -> {_type(shape)}")
        return _Value(name, shape)

    @staticmethod
    def show(values: Sequence[_Value]) -> str:
        return ", ".join("[" + ", ".join(map(str, v.shape)) + "]" for v in values)


class _Param:
    """A parameter, buffer or constant tensor the cell reads, by its name in
    the model; `transposed` after .t(). Captured by the recur.rnn when an
    op reads it (its transpose computed once per binding, outside the time
    loop), bound by name."""

    def __init__(self, name: str, tensor: Any, transposed: bool = False) -> None:
        self.name, self.tensor, self.transposed = name, tensor, transposed


def _source_line(node: Any, cell: Any) -> str:
    """Where in the cell's source `node` comes from: "file:line: code"."""
    trace = getattr(node, "stack_trace", None) or ""
    lines = trace.strip().splitlines()
    try:
        cell_file = inspect.getsourcefile(type(cell))
    except TypeError:
        cell_file = None
    fallback = ""
    # Innermost frame first: the first in the cell's file is the op's line.
    for i, line in enumerate(lines):
        line = line.strip()
        if not line.startswith('File "') or ", line " not in line:
            continue
        path = line.split('"')[1]
        number = line.split(", line ")[1].split(",")[0]
        code = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if path == cell_file:
            return f"{path}:{number}: {code}"
        if not fallback and "/torch/" not in path and "<" not in path:
            fallback = f"{path}:{number}: {code}"
    return fallback or "(no source line: the op was not recorded from Python code)"


def _describe(node: Any) -> str:
    """The op a node calls, as the user wrote it."""
    target = node.target
    if node.op == "call_method":
        return f"Tensor.{target}"
    if node.op == "call_module":
        return f"module '{target}'"
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__name__", str(target))
    if module.startswith("torch.nn.functional") or module == "torch._C._nn":
        return f"torch.nn.functional.{name}"
    if module == "_operator":
        return f"operator.{name}"
    return f"torch.{name}" if "torch" in module or module == "" else f"{module}.{name}"


def _dim_is_last(dim: Any, rank: int) -> bool:
    if isinstance(dim, (list, tuple)):
        if len(dim) != 1:
            return False
        dim = dim[0]
    return isinstance(dim, int) and dim in (-1, rank - 1)


class _Translator:
    """One traced cell (a torch.fx GraphModule of wrapper(x_t, *state)) to
    the text of its region."""

    UNARY: Dict[str, Callable[[_Body, str], str]] = {
        "sigmoid": lambda b, a: b.sigmoid(a),
        "tanh": lambda b, a: b.unary("math.tanh", a),
        "relu": lambda b, a: b.binary("arith.maximumf", a, b.const(0.0)),
        "exp": lambda b, a: b.unary("math.exp", a),
        "log": lambda b, a: b.unary("math.log", a),
        "sqrt": lambda b, a: b.unary("math.sqrt", a),
        "rsqrt": lambda b, a: b.unary("math.rsqrt", a),
        "neg": lambda b, a: b.unary("arith.negf", a),
        # log σ(a) = min(a, 0) - log1p(exp(-|a|)), without overflow.
        "logsigmoid": lambda b, a: b.binary(
            "arith.subf", b.binary("arith.minimumf", a, b.const(0.0)),
            b.unary("math.log1p", b.unary("math.exp", b.unary("arith.negf",
                                                              b.unary("math.absf", a))))),
    }
    # Other names torch gives the same ops.
    ALIASES = {"log_sigmoid": "logsigmoid", "negative": "neg", "multiply": "mul",
               "subtract": "sub", "divide": "div", "true_divide": "div", "__neg__": "neg",
               "__matmul__": "matmul", "__getitem__": "getitem"}
    BINARY = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf",
              "truediv": "arith.divf", "div": "arith.divf", "maximum": "arith.maximumf",
              "minimum": "arith.minimumf"}

    def __init__(self, graph_module: Any, cell: Any, emitter: _Emitter, prefix: str) -> None:
        self.gm, self.cell, self.e, self.prefix = graph_module, cell, emitter, prefix

    # -- values -------------------------------------------------------------

    def tensor(self, value: Any, where: str) -> _Value:
        """An operand as a region value (a parameter is captured here)."""
        if isinstance(value, _Value):
            return value
        if isinstance(value, _Param):
            if value.tensor.dtype != _torch().float32:
                raise RecurError(f"{where}: '{value.name}' is {value.tensor.dtype}; cells "
                                 f"compute in float32")
            return self.e.capture(value.name, value.tensor, value.transposed)
        raise RecurError(f"{where}: expected a tensor, got {type(value).__name__}")

    def operand(self, value: Any, where: str) -> Union[_Value, float]:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        return self.tensor(value, where)

    def pointwise(self, operands: Sequence[Any], body: Callable[..., str], where: str) -> _Value:
        values = [self.operand(o, where) for o in operands]
        if not any(isinstance(v, _Value) for v in values):
            raise RecurError(f"{where}: an op on constants alone")
        return self.e.pointwise(values, body, where)

    def reduce(self, x: Any, dim: Any, keepdim: bool, kind: str, correction: int,
               where: str) -> _Value:
        """sum, mean, var or std over the last dimension."""
        x = self.tensor(x, where)
        if not x.shape:
            raise RecurError(f"{where}: {kind} of a scalar: cells reduce over the last "
                             f"(feature) dimension of a tensor")
        if dim is None or not _dim_is_last(dim, len(x.shape)):
            raise RecurError(f"{where}: {kind} over dim={dim}: cells reduce over the last "
                             f"(feature) dimension only, dim=-1")
        n = x.shape[-1]
        if n == BATCH:
            raise RecurError(f"{where}: {kind} over the batch dimension")
        if kind == "sum":
            return self.e.sum_last(x, keepdim)
        total = self.e.sum_last(x, True)
        mean = self.e.pointwise([total], lambda b, s: b.binary("arith.mulf", s,
                                                                 b.const(1.0 / n)), where)
        if kind != "mean":
            squares = self.e.pointwise([x, mean], lambda b, v, m: b.binary(
                "arith.mulf", b.binary("arith.subf", v, m), b.binary("arith.subf", v, m)),
                where)
            if n - correction <= 0:
                raise RecurError(f"{where}: {kind} of {n} values with correction {correction}")
            scale = 1.0 / (n - correction)
            mean = self.e.pointwise(
                [self.e.sum_last(squares, True)],
                (lambda b, s: b.binary("arith.mulf", s, b.const(scale))) if kind == "var" else
                (lambda b, s: b.unary("math.sqrt", b.binary("arith.mulf", s, b.const(scale)))),
                where)
        if keepdim:
            return mean
        return self.e.collapse_units(mean, list(range(len(mean.shape) - 1)))

    def layer_norm(self, x: Any, shape: Any, weight: Any, bias: Any, eps: float,
                   where: str) -> _Value:
        x = self.tensor(x, where)
        shape = [shape] if isinstance(shape, int) else list(shape)
        if shape != [x.shape[-1]]:
            raise RecurError(f"{where}: layer norm over {shape} of a {self.e.show([x])} "
                             f"value: cells normalise over the last dimension only")
        mean = self.reduce(x, -1, True, "mean", 0, where)
        var = self.reduce(x, -1, True, "var", 0, where)
        operands = [x, mean, var] + [self.tensor(v, where) for v in (weight, bias)
                                     if v is not None]

        def body(b, v, m, s, *affine):
            r = b.binary("arith.mulf", b.binary("arith.subf", v, m), b.unary(
                "math.rsqrt", b.binary("arith.addf", s, b.const(eps))))
            if weight is not None:
                r = b.binary("arith.mulf", r, affine[0])
            if bias is not None:
                r = b.binary("arith.addf", r, affine[-1])
            return r
        return self.e.pointwise(operands, body, where)

    def matmul(self, a: Any, b: Any, where: str) -> _Value:
        """a @ b with b a parameter [K, N] or a parameter's .t()."""
        if not isinstance(b, _Param) or b.tensor.dim() != 2:
            raise RecurError(f"{where}: a product's right operand must be a 2-D parameter (or "
                             f"its .t()); products of two activations are not supported")
        # recur.linear takes [N, K]: W.t() is W itself; W needs its transpose.
        weight = self.tensor(_Param(b.name, b.tensor, not b.transposed), where)
        return self.e.linear(self.tensor(a, where), weight, None, where)

    def feature_size(self, x: _Value, what: str, where: str) -> int:
        """The last dimension of `x`, which `what` takes apart: a feature
        dimension, not the batch."""
        if not x.shape or x.shape[-1] == BATCH:
            raise RecurError(f"{where}: {what} of a {self.e.show([x])} value: cells take "
                             f"apart the last (feature) dimension only, not the batch")
        return int(x.shape[-1])

    def pieces(self, x: Any, sizes: List[int], dim: Any, where: str) -> List[_Value]:
        x = self.tensor(x, where)
        self.feature_size(x, "a split", where)
        if not _dim_is_last(dim, len(x.shape)):
            raise RecurError(f"{where}: split along dim={dim}: cells split the last (feature) "
                             f"dimension only")
        if sum(sizes) != x.shape[-1]:
            raise RecurError(f"{where}: sizes {sizes} do not add up to {x.shape[-1]}")
        result, start = [], 0
        for size in sizes:
            result.append(self.e.slice_last(x, start, size))
            start += size
        return result

    def index(self, x: Any, key: Any, where: str) -> Any:
        if isinstance(x, (list, tuple)):
            return x[key]
        x = self.tensor(x, where)
        key = key if isinstance(key, tuple) else (key,)
        if key and key[0] is Ellipsis:
            key = (slice(None),) * (len(x.shape) - len(key) + 1) + key[1:]
        full = slice(None)
        if len(key) != len(x.shape) or any(k != full for k in key[:-1]) or \
                not isinstance(key[-1], slice) or key[-1].step not in (None, 1):
            raise RecurError(f"{where}: indexing {key}: cells take slices of the last "
                             f"dimension only, x[:, a:b]")
        start, stop, _ = key[-1].indices(self.feature_size(x, "a slice", where))
        if stop <= start:
            raise RecurError(f"{where}: the slice {key[-1].start}:{key[-1].stop} of a "
                             f"dimension of {x.shape[-1]} is empty")
        return self.e.slice_last(x, start, stop - start)

    # -- nodes --------------------------------------------------------------

    def call(self, node: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
        torch = _torch()
        F = torch.nn.functional
        where = f"{_describe(node)} at {_source_line(node, self.cell)}"
        if node.op == "call_module":
            return self.module(self.gm.get_submodule(node.target), node.target, args, kwargs,
                               where)
        target = node.target
        name = target if node.op == "call_method" else getattr(target, "__name__", "")
        if node.op == "call_function" and target is getattr:
            if args[1] == "T":
                name = "t"
                args = args[:1]
            elif args[1] == "shape":
                return self.tensor(args[0], where).shape
            else:
                raise RecurError(f"{where}: attribute '{args[1]}' of a traced value")
        name = self.ALIASES.get(name, name)
        if name in ("__radd__", "__rsub__", "__rmul__", "__rtruediv__"):
            name, args = name[3:-2], (args[1], args[0])
        if name in ("iadd", "isub", "imul", "itruediv"):
            name = name[1:]

        def arg(i, key, default=None):
            return args[i] if len(args) > i else kwargs.get(key, default)

        if name in ("add", "sub") and (kwargs.get("alpha", 1) != 1 or len(args) > 2):
            raise RecurError(f"{where}: alpha is not supported")
        if name in self.BINARY and name not in ("maximum", "minimum") or \
                name in ("maximum", "minimum") and len(args) == 2:
            if name == "div" and kwargs.get("rounding_mode"):
                raise RecurError(f"{where}: rounding_mode is not supported")
            op = self.BINARY[name]
            return self.pointwise([arg(0, "input"), arg(1, "other")],
                                  lambda b, x, y: b.binary(op, x, y), where)
        if name in self.UNARY and not kwargs.get("inplace") and len(args) == 1:
            return self.pointwise([args[0]], self.UNARY[name], where)
        if name in ("pow", "__pow__"):
            exponent = arg(1, "exponent")
            if not isinstance(exponent, (int, float)):
                raise RecurError(f"{where}: pow by a tensor; cells raise to a constant power")
            return self.pointwise([args[0]], lambda b, x: self.power(b, x, float(exponent)),
                                  where)
        if name in ("clamp", "clip", "clamp_min", "clamp_max"):
            low = arg(1, "min") if name != "clamp_max" else None
            high = arg(2, "max") if name == "clamp" or name == "clip" else (
                arg(1, "max") if name == "clamp_max" else None)
            for bound in (low, high):
                if bound is not None and not isinstance(bound, (int, float)):
                    raise RecurError(f"{where}: clamp by a tensor; use torch.maximum/minimum")

            def clamp(b, x):
                if low is not None:
                    x = b.binary("arith.maximumf", x, b.const(float(low)))
                if high is not None:
                    x = b.binary("arith.minimumf", x, b.const(float(high)))
                return x
            return self.pointwise([args[0]], clamp, where)
        if name in ("threshold", "_threshold"):  # F.threshold: x where x > threshold, else value
            threshold, value = arg(1, "threshold"), arg(2, "value")
            if not all(isinstance(v, (int, float)) for v in (threshold, value)) or \
                    arg(3, "inplace", False):
                raise RecurError(f"{where}: threshold and value must be constants "
                                 f"(not in place)")

            def thresholded(b, x):
                above = b._new(f"arith.cmpf ogt, {x}, {b.const(float(threshold))} : f32")
                return b._new(f"arith.select {above}, {x}, {b.const(float(value))} : f32")
            return self.pointwise([args[0]], thresholded, where)
        if name in ("sum", "mean", "var", "std"):
            if kwargs.get("dtype") is not None:
                raise RecurError(f"{where}: dtype is not supported")
            dim = arg(1, "dim")
            keepdim = bool(kwargs.get("keepdim", False))
            correction = 0
            if name in ("var", "std"):
                unbiased = kwargs.get("unbiased", True)
                if len(args) > 2 and isinstance(args[2], bool):
                    unbiased = args[2]
                if len(args) > 3:
                    keepdim = bool(args[3])
                correction = int(kwargs.get("correction", 1 if unbiased else 0))
            elif len(args) > 2:
                keepdim = bool(args[2])
            return self.reduce(args[0], dim, keepdim, name, correction, where)
        if target is F.layer_norm:
            return self.layer_norm(args[0], arg(1, "normalized_shape"), arg(2, "weight"),
                                   arg(3, "bias"), arg(4, "eps", 1e-5), where)
        if name in ("t",) or name == "transpose" and sorted(
                int(d) % 2 for d in args[1:3]) == [0, 1]:
            x = args[0]
            if isinstance(x, _Param) and x.tensor.dim() == 2:
                return _Param(x.name, x.tensor, not x.transposed)
            raise RecurError(f"{where}: transposes of activations are not supported; "
                             f"transpose a parameter, as W.t() in x @ W.t()")
        if name in ("mm", "matmul"):
            return self.matmul(arg(0, "input"), arg(1, "other", arg(1, "mat2")), where)
        if target is F.linear:
            weight, bias = arg(1, "weight"), arg(2, "bias")
            if not isinstance(weight, _Param) or weight.transposed:
                raise RecurError(f"{where}: F.linear's weight must be a parameter")
            return self.e.linear(self.tensor(args[0], where), self.tensor(weight, where),
                                 None if bias is None else self.tensor(bias, where), where)
        if name == "chunk":
            x, chunks = self.tensor(args[0], where), int(arg(1, "chunks"))
            features = self.feature_size(x, "a chunk", where)
            size = -(-features // chunks)
            sizes = [min(size, features - i) for i in range(0, features, size)]
            return self.pieces(x, sizes, arg(2, "dim", 0), where)
        if name == "split":
            x, sizes = self.tensor(args[0], where), arg(1, "split_size_or_sections",
                                                      kwargs.get("split_size"))
            if isinstance(sizes, int):
                features = self.feature_size(x, "a split", where)
                sizes = [min(sizes, features - i) for i in range(0, features, sizes)]
            if not all(isinstance(size, int) for size in sizes):
                raise RecurError(f"{where}: split sizes {sizes}: the batch size is not known "
                                 f"when the cell compiles")
            return self.pieces(x, list(sizes), arg(2, "dim", 0), where)
        if name in ("cat", "concat"):
            values = [self.tensor(v, where) for v in arg(0, "tensors")]
            if not _dim_is_last(arg(1, "dim", 0), len(values[0].shape)):
                raise RecurError(f"{where}: concatenation along dim={arg(1, 'dim', 0)}: cells "
                                 f"concatenate along the last (feature) dimension only")
            return self.e.concat_last(values, where)
        if name == "getitem":
            return self.index(args[0], args[1], where)
        if name in ("contiguous", "float") and not kwargs:
            return args[0]
        if name == "size" and len(args) == 2:
            size = self.tensor(args[0], where).shape[args[1]]
            if size == BATCH:
                raise RecurError(f"{where}: the batch size is not known when the cell compiles")
            return size
        raise RecurError(f"{where}: {_describe(node)} is not supported in a compiled cell "
                         f"(supported: nn.Linear, nn.LayerNorm, mm/matmul/@ with a parameter, "
                         f"+ - * /, neg, pow by a constant, sqrt, rsqrt, sigmoid, tanh, relu, "
                         f"exp, log, logsigmoid, clamp, threshold, maximum, minimum, chunk, "
                         f"split, cat, "
                         f"slices of the last dimension, sum/mean/var/std over it, layer_norm)")

    @staticmethod
    def power(b: _Body, x: str, exponent: float) -> str:
        if exponent == 1.0:
            return x
        if exponent == 2.0:
            return b.binary("arith.mulf", x, x)
        if exponent == 0.5:
            return b.unary("math.sqrt", x)
        if exponent == -0.5:
            return b.unary("math.rsqrt", x)
        if exponent == -1.0:
            return b.binary("arith.divf", b.const(1.0), x)
        return b.binary("math.powf", x, b.const(exponent))

    def module(self, module: Any, target: str, args: Sequence[Any], kwargs: Dict[str, Any],
               where: str) -> Any:
        nn = _torch().nn
        target = self.prefix + _local(target)
        if isinstance(module, nn.Linear):
            return self.e.linear(
                self.tensor(args[0], where), self.tensor(_Param(
                    f"{target}.weight", module.weight), where),
                None if module.bias is None else self.tensor(
                    _Param(f"{target}.bias", module.bias), where), where)
        if isinstance(module, nn.LayerNorm):
            return self.layer_norm(args[0], module.normalized_shape, None if module.weight is None
                                   else _Param(f"{target}.weight", module.weight),
                                   None if getattr(module, "bias", None) is None
                                   else _Param(f"{target}.bias", module.bias),
                                   module.eps, where)
        activations = {nn.Sigmoid: "sigmoid", nn.Tanh: "tanh", nn.ReLU: "relu",
                       nn.LogSigmoid: "logsigmoid"}
        for kind, name in activations.items():
            if type(module) is kind:
                return self.pointwise([args[0]], self.UNARY[name], where)
        if isinstance(module, nn.Identity) or isinstance(module, nn.Dropout) and (
                not module.training or module.p == 0):
            return args[0]
        if isinstance(module, nn.Dropout):
            raise RecurError(f"{where}: nn.Dropout in train mode: call .eval()")
        raise RecurError(f"{where}: {type(module).__name__} is not supported in a compiled cell")


def _torch() -> Any:
    import torch
    return torch


def _pieces_of(node: Any) -> Optional[int]:
    """How many values a chunk or split node gives, when tracing knows."""
    name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
    if name == "chunk":
        chunks = node.args[1] if len(node.args) > 1 else node.kwargs.get("chunks")
        return chunks if isinstance(chunks, int) else None
    if name == "split":
        sizes = node.args[1] if len(node.args) > 1 else node.kwargs.get(
            "split_size_or_sections", node.kwargs.get("split_size"))
        return len(sizes) if isinstance(sizes, (list, tuple)) else None
    return None


def _trace(cell: Any, states: int, tuple_state: bool) -> Any:
    """A GraphModule of step(x, s0, s1, ...) = cell(x, (s0, s1, ...)) (or
    cell(x, s0) for a tensor state): the state is a real tuple while
    tracing, so the cell may unpack it."""
    import torch
    import torch.fx

    class Pieces(torch.fx.Proxy):
        """chunk's and split's results unpack into their count: fx would read
        the count from the caller's bytecode, which torch 1.13 cannot on
        Python 3.11."""

        def __init__(self, node, tracer, count):
            super().__init__(node, tracer)
            self.count = count

        def __iter__(self):
            return iter([self[i] for i in range(self.count)])

    class Unsized(torch.fx.Proxy):
        """split by a size: how many pieces depends on the feature size,
        which tracing does not know."""

        def __iter__(self):
            raise RecurError(
                f"{_describe(self.node)} at {_source_line(self.node, cell)}: the pieces of a "
                f"split by a size cannot be unpacked while tracing (the feature size is not "
                f"known yet): give the sizes as a list, split([a, b, ...], dim=-1), or use "
                f"chunk")

    class Tracer(torch.fx.Tracer):
        def __init__(self):
            super().__init__()
            self.record_stack_traces = True

        def proxy(self, node):
            count = _pieces_of(node)
            if count:
                return Pieces(node, self, count)
            name = node.target if node.op == "call_method" else \
                getattr(node.target, "__name__", "")
            return Unsized(node, self) if name == "split" else super().proxy(node)

    if states == 0:
        raise RecurError(f"{type(cell).__name__}'s state is empty: a cell's state holds at "
                         f"least one [B, n] tensor")
    names = ", ".join(f"s{i}" for i in range(states))
    state = f"({names},)" if tuple_state else "s0"
    namespace: Dict[str, Any] = {}
    exec(f"def forward(self, x, {names}):\n    return self.cell(x, {state})\n", namespace)
    step = type("Step", (torch.nn.Module,), {"forward": namespace["forward"]})()
    step.cell = cell
    try:
        graph = Tracer().trace(step)
    except RecurError:
        raise
    except Exception as error:  # fx raises many kinds
        raise RecurError(f"cannot trace {type(cell).__name__}.forward with torch.fx: "
                         f"{type(error).__name__}: {error}") from error
    return torch.fx.GraphModule(step, graph)


def _local(target: str) -> str:
    """A traced attribute's name in the cell (the trace's root holds it as
    `cell`)."""
    return target[len("cell."):] if target.startswith("cell.") else target


def _fetch(module: Any, target: str) -> Any:
    for part in target.split("."):
        module = getattr(module, part)
    return module


class _Layer:
    """One cell translated: its region's text, what it captures, its output
    size."""

    def __init__(self, text: List[str], captures: List[Tuple["_Param", _Value]],
                 output: int, argument_types: List[str]) -> None:
        self.text, self.captures, self.output = text, captures, output
        self.argument_types = argument_types


def _translate(cell: Any, input_size: int, state_sizes: List[int], tuple_state: bool,
               prefix: str) -> _Layer:
    """The region of `cell` for x_t [B, input_size] and states [B, n]."""
    import torch.fx
    gm = _trace(cell, len(state_sizes), tuple_state)
    emitter = _Emitter("")
    translator = _Translator(gm, cell, emitter, prefix)
    x = _Value("%xt", (BATCH, input_size))
    states = [_Value(f"%state{i}", (BATCH, n)) for i, n in enumerate(state_sizes)]
    placeholders = iter([x] + states)
    env: Dict[Any, Any] = {}
    result = None
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            env[node] = next(placeholders)
        elif node.op == "get_attr":
            tensor = _fetch(gm, node.target)
            env[node] = _Param(prefix + _local(node.target), tensor.detach())
        elif node.op == "output":
            result = torch.fx.node.map_arg(node.args[0], lambda n: env[n])
        else:
            args = torch.fx.node.map_arg(node.args, lambda n: env[n])
            kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: env[n])
            env[node] = translator.call(node, args, kwargs)
    name = type(cell).__name__
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise RecurError(f"{name}.forward must return (h_t, new_state), got "
                         f"{type(result).__name__}")
    output, new_state = result
    is_tuple = isinstance(new_state, (tuple, list))
    new_states = list(new_state) if is_tuple else [new_state]
    if is_tuple != tuple_state or len(new_states) != len(states):
        raise RecurError(f"{name}.forward's new state must have the structure of its state: "
                         f"{'a tuple of ' + str(len(states)) if tuple_state else 'one tensor'}")
    where = f"{name}.forward's result"
    output = translator.tensor(output, where)
    if len(output.shape) != 2 or output.shape[0] != BATCH:
        raise RecurError(f"{where}: h_t has shape {_Emitter.show([output])}, expected [B, n]")
    yielded = [output]
    for i, (value, state) in enumerate(zip(new_states, states)):
        value = translator.tensor(value, where)
        if value.shape != state.shape:
            raise RecurError(f"{where}: new state {i} has shape {_Emitter.show([value])}, the "
                             f"state {_Emitter.show([state])}")
        yielded.append(value)
    captures = list(emitter.captures.values())
    argument_types = [x.type] + [s.type for s in states] + [v.type for _, v in captures]
    block = ", ".join(f"{v.name}: {t}" for v, t in zip(
        [x] + states + [v for _, v in captures], argument_types))
    text = [f"^bb0({block}):", "  %c0 = arith.constant 0 : index",
            f"  %B = tensor.dim %xt, %c0 : {x.type}"]
    text += ["  " + line for line in emitter.lines]
    text.append(f"  recur.yield {', '.join(v.name for v in yielded)} : "
                f"{', '.join(v.type for v in yielded)}")
    return _Layer(text, captures, output.shape[1], argument_types)


def _module_text(layers: List[_Layer], input_size: int, state_sizes: List[List[int]],
                 lengths: bool = False, attribute: str = "") -> Tuple[str, Dict[str, Any]]:
    """The model: `input` [T, B, I] through every layer's recur.rnn, the
    states by layer as inputs and outputs, the captured tensors as weights;
    with `lengths`, an input `lengths` [B] that every layer takes; with
    `attribute`, the function carries it (recur.vjp, recur.keep_activations).
    Returns the IR and the weights to bind by name."""
    x, x_type = "%input", f"tensor<?x?x{input_size}xf32>"
    arguments = [f"{x}: {x_type} {{recur.input = \"input\"}}"]
    if lengths:
        arguments.append('%lengths: tensor<?xi64> {recur.input = "lengths"}')
    results, result_values, weights, body = [], [], {}, []
    weight_values: Dict[str, str] = {}
    for k, sizes in enumerate(state_sizes):
        for j, n in enumerate(sizes):
            arguments.append(f"%s{k}_{j}: {_type((BATCH, n))} "
                             f"{{recur.input = \"state_l{k}_{j}\"}}")
    for layer in layers:
        for capture, value in layer.captures:
            if capture.name not in weight_values:
                weight_values[capture.name] = f"%weight{len(weight_values)}"
                tensor = capture.tensor
                weights[capture.name] = tensor
                arguments.append(f"{weight_values[capture.name]}: "
                                 f"{_type(tuple(tensor.shape))} "
                                 f"{{recur.weight = \"{capture.name}\"}}")
    final_types = []
    for k, (layer, sizes) in enumerate(zip(layers, state_sizes)):
        captures = []
        for capture, value in layer.captures:
            operand = weight_values[capture.name]
            if capture.transposed:
                source = _type(tuple(capture.tensor.shape))
                transposed = f"%l{k}_t{len(captures)}"
                body.append(f"{transposed} = recur.transpose {operand} [1, 0] : {source} -> "
                            f"{value.type}")
                operand = transposed
            captures.append((operand, value.type))
        states = [(f"%s{k}_{j}", _type((BATCH, n))) for j, n in enumerate(sizes)]
        y_type = f"tensor<?x?x{layer.output}xf32>"
        results_k = [f"%y{k}"] + [f"%n{k}_{j}" for j in range(len(sizes))]
        operand_types = [x_type] + [t for _, t in states] + [t for _, t in captures]
        line = f"{', '.join(results_k)} = recur.rnn {x}"
        if states:
            line += f" init({', '.join(s for s, _ in states)})"
        if captures:
            line += f" captures({', '.join(c for c, _ in captures)})"
        if lengths:
            line += " lengths(%lengths)"
            operand_types.append("tensor<?xi64>")
        line += (f" : ({', '.join(operand_types)}) -> "
                 f"({', '.join([y_type] + [t for _, t in states])}) {{")
        body.append(line)
        body += ["  " + text for text in layer.text]
        body.append("}")
        for j, (_, t) in enumerate(states):
            results.append(f"{t} {{recur.output = \"state_n_l{k}_{j}\"}}")
            result_values.append(f"%n{k}_{j}")
            final_types.append(t)
        x, x_type = f"%y{k}", y_type
    results.insert(0, f"{x_type} {{recur.output = \"output\"}}")
    result_values.insert(0, x)
    final_types.insert(0, x_type)
    attributes = f" attributes {{{attribute}}}" if attribute else ""
    text = ["module {", f"  func.func @forward({', '.join(arguments)}) -> "
            f"({', '.join(results)}){attributes} {{"]
    text += ["    " + line for line in body]
    text.append(f"    return {', '.join(result_values)} : {', '.join(final_types)}")
    text += ["  }", "}", ""]
    return "\n".join(text), weights


class CompiledCells:
    """Recurrent cells compiled by Recur (recur.compile_rnn), called as
    `y, states = compiled(x, states)`: x [T, B, I], the states per layer in
    each cell's own structure (a tensor or a tuple of [B, n] tensors; for a
    single cell, not in a list). y is the last layer's h_t at every step,
    [T, B, n]. The model compiles on the first call with each input size and
    state structure, and binds the cells' parameters as they are then;
    `refresh()` binds their current values."""

    def __init__(self, cells: List[Any], single: bool, target: str, fusion: Optional[str],
                 threads: Optional[int], extra_flags: Sequence[str], verbose: bool) -> None:
        self.cells, self.single = cells, single
        self.target, self.fusion, self.threads = target, fusion, threads
        self.extra_flags, self.verbose = list(extra_flags), verbose
        self._models: Dict[Any, Tuple[Any, Dict[str, Any], str]] = {}

    def _structure(self, x: Any, states: Any) -> Tuple[List[List[Any]], List[bool]]:
        """The states as tensors per layer, and which layers' are tuples."""
        import torch
        if not isinstance(x, torch.Tensor) or x.dim() != 3:
            raise RecurError(f"x must be a [T, B, I] tensor, got "
                             f"{list(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__}")
        per_layer = [states] if self.single else states
        # A list, never a tuple: a tuple is one cell's state.
        if not isinstance(per_layer, list) or len(per_layer) != len(self.cells):
            got = f"a list of {len(per_layer)}" if isinstance(per_layer, list) else \
                type(states).__name__
            raise RecurError(f"states: expected a list of {len(self.cells)} (one per cell), "
                             f"got {got}")
        tensors, tuples = [], []
        for k, state in enumerate(per_layer):
            is_tuple = isinstance(state, (tuple, list))
            values = list(state) if is_tuple else [state]
            for j, value in enumerate(values):
                label = f"cell {k}'s state" + (f"[{j}]" if is_tuple else "")
                if not isinstance(value, torch.Tensor) or value.dim() != 2 or \
                        value.shape[0] != x.shape[1]:
                    shape = list(value.shape) if isinstance(value, torch.Tensor) else \
                        type(value).__name__
                    raise RecurError(f"{label} has shape {shape}, expected [B, n] with "
                                     f"B = {x.shape[1]} (x's batch)")
                if value.dtype != torch.float32:
                    raise RecurError(f"{label} is {value.dtype}; expected torch.float32")
            tensors.append(values)
            tuples.append(is_tuple)
        if x.dtype != torch.float32:
            raise RecurError(f"x is {x.dtype}; expected torch.float32")
        return tensors, tuples

    def _key(self, x: Any, states: Any,
             lengths: Any = None) -> Tuple[Any, List[List[Any]]]:
        """What a model is compiled for, (input size, each layer's state
        sizes, which layers' states are tuples, whether it takes lengths),
        and the states as tensors per layer."""
        tensors, tuples = self._structure(x, states)
        sizes = tuple(tuple(v.shape[1] for v in values) for values in tensors)
        return (x.shape[2], sizes, tuple(tuples), lengths is not None), tensors

    def _traced(self, key: Any) -> Tuple[str, Dict[str, Any]]:
        """The cells traced for `key` (_key): the IR and the weights by name."""
        input_size, sizes, tuples, lengths = key
        layers, size = [], input_size
        for k, (cell, width, is_tuple) in enumerate(zip(self.cells, sizes, tuples)):
            prefix = "" if self.single else f"{k}."
            layer = _translate(cell, size, list(width), is_tuple, prefix)
            layers.append(layer)
            size = layer.output
        return _module_text(layers, input_size, [list(w) for w in sizes], lengths)

    def _compiled(self, key: Any) -> Tuple[Any, Dict[str, Any], str]:
        """The model for `key` (traced and compiled on first use), its
        weights by name, and its IR."""
        from ._compile import _build
        from ._model import Model
        if key not in self._models:
            ir, weights = self._traced(key)
            flags = [f"--target={self.target}"] + \
                ([f"--fusion={self.fusion}"] if self.fusion else []) + self.extra_flags
            names = ", ".join(type(c).__name__ for c in self.cells)
            library, _ = _build(ir, flags, f"{names} ({self.target})", self.verbose)
            model = Model(library)
            if self.threads is not None:
                model.set_threads(self.threads)
            model.bind(weights)
            self._models[key] = (model, weights, ir)
        return self._models[key]

    def refresh(self) -> None:
        """Binds the cells' parameters' current values (after training them)."""
        for model, weights, _ in self._models.values():
            model.bind(weights)

    def ir(self, x: Any, states: Any, lengths: Any = None) -> str:
        """The recur IR the cells compile to for these shapes (traced, not
        compiled)."""
        return self._traced(self._key(x, states, lengths)[0])[0]

    def model(self, x: Any, states: Any, lengths: Any = None) -> Any:
        """The compiled recur.Model that runs these shapes (its `path` is the
        library, for recur-run)."""
        return self._compiled(self._key(x, states, lengths)[0])[0]

    def __call__(self, x: Any, states: Any, lengths: Any = None) -> Tuple[Any, Any]:
        """y, states for x [T, B, I]. With `lengths` ([B] integers in [1, T]),
        row b runs steps 0 .. lengths[b] - 1 as a packed batch does in
        PyTorch: its y is zero past its length and its final states are those
        after its own last step."""
        from ._compile import _sequence_lengths
        key, tensors = self._key(x, states, lengths)
        if lengths is not None:
            lengths = _sequence_lengths(lengths, x.shape[1])
        model = self._compiled(key)[0]
        inputs = [x] + ([lengths] if lengths is not None else [])
        outputs = model.run(*inputs, *[v for values in tensors for v in values])
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        y, rest, result = outputs[0], list(outputs[1:]), []
        for values, is_tuple in zip(tensors, key[2]):
            mine, rest = rest[:len(values)], rest[len(values):]
            result.append(tuple(mine) if is_tuple else mine[0])
        return y, (result[0] if self.single else result)


def compile_rnn(cells: Any, target: str = "cpu", fusion: Optional[str] = None,
                threads: Optional[int] = None, extra_flags: Sequence[str] = (),
                verbose: bool = False, train: bool = False) -> Any:
    """Compiles recurrent cells written in PyTorch: one nn.Module, or a list
    of them, one per layer, each layer's h_t the next one's x_t. A cell's
    `forward(x_t, state)` returns `(h_t, new_state)`, the state a tensor or
    a tuple of tensors. Returns a CompiledCells, `y, states = f(x,
    states)`, or `f(x, states, lengths=lengths)` for sequences of different
    lengths in one batch (PyTorch's packed semantics). target: "cpu", "cuda" or "cuda-emulator"; fusion: recur-compile
    --fusion (default: the target's).

    train=True returns a recur.TrainableCells instead: an nn.Module called the
    same way whose outputs carry a grad_fn, so that `loss.backward()` fills
    the cells' parameters' .grad (docs/training.md)."""
    import torch
    single = isinstance(cells, torch.nn.Module)
    cell_list = [cells] if single else list(cells)
    if not cell_list or not all(isinstance(c, torch.nn.Module) for c in cell_list):
        raise RecurError("compile_rnn takes an nn.Module or a list of them, one per layer")
    for cell in cell_list:
        dtypes = {p.dtype for p in cell.parameters()}
        if dtypes - {torch.float32}:
            raise RecurError(f"{type(cell).__name__} has parameters of dtype "
                             f"{', '.join(sorted(map(str, dtypes)))}: cells compile in float32")
        if any(isinstance(m, torch.nn.Dropout) and m.training and m.p for m in cell.modules()):
            raise RecurError(f"{type(cell).__name__} has nn.Dropout in train mode: call .eval()")
    if train:
        from ._train import TrainableCells
        return TrainableCells(cell_list, single, target, fusion, threads, extra_flags, verbose)
    return CompiledCells(cell_list, single, target, fusion, threads, extra_flags, verbose)
