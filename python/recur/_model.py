"""A compiled model (a recur-compile library) loaded by librecur-runtime,
run on torch tensors or NumPy arrays through DLPack, without copies."""

import ctypes
import json
import os
import weakref
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _runtime as rt
from ._errors import RecurError

PathLike = Union[str, bytes, "os.PathLike[str]"]

_DTYPES = {(rt.kDLFloat, 32): "f32", (rt.kDLFloat, 64): "f64", (rt.kDLBfloat, 16): "bf16",
           (rt.kDLFloat, 16): "f16", (rt.kDLInt, 64): "i64", (rt.kDLInt, 32): "i32"}


class TensorSpec:
    """A model tensor: name, dtype ("f32", "i64", ...), shape (None for a
    dynamic size) and, for dynamic sizes, their symbols ("T", "B")."""

    def __init__(self, info: rt.TensorInfo) -> None:
        self.name = info.name.decode()
        self.dtype = _DTYPES.get((info.dtype.code, info.dtype.bits),
                                 f"code{info.dtype.code}x{info.dtype.bits}")
        self.shape = tuple(None if info.shape[i] < 0 else info.shape[i] for i in range(info.ndim))
        self.dims = tuple(info.dims[i].decode() if info.dims[i] else "" for i in range(info.ndim))

    def __repr__(self) -> str:
        sizes = ", ".join(dim or str(size) for size, dim in zip(self.shape, self.dims))
        return f"{self.name}: {self.dtype}[{sizes}]"


def _torch_available() -> bool:
    """Whether torch imports (it is optional: NumPy arrays work too)."""
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def _to_dlpack(value: Any, what: str) -> Any:
    """A DLPack capsule of `value` (a torch tensor or a NumPy array), made
    contiguous (row-major) if it was not: the runtime reads dense tensors."""
    if hasattr(value, "is_contiguous"):  # torch
        import torch.utils.dlpack
        return torch.utils.dlpack.to_dlpack(value.detach().contiguous())
    if hasattr(value, "__dlpack__"):  # NumPy and other array libraries
        try:
            import numpy
            if isinstance(value, numpy.ndarray):
                value = numpy.ascontiguousarray(value)
        except ImportError:
            pass
        return value.__dlpack__()
    raise RecurError(f"{what}: expected a torch tensor or a NumPy array, got "
                     f"{type(value).__name__}")


class _Exported:
    """A runtime output as a DLPack producer (for numpy.from_dlpack)."""

    def __init__(self, managed: Any) -> None:
        self.managed = managed

    def __dlpack__(self, stream=None):
        return rt.capsule_of(self.managed)

    def __dlpack_device__(self):
        device = self.managed.contents.dl_tensor.device
        return (device.device_type, device.device_id)


def inputs_by_name(order: List[str], inputs: Sequence[Any],
                   named: Mapping[str, Any]) -> Dict[str, Any]:
    """A call's inputs (positional in `order`, then by name) by name; a
    RecurError for too many, unknown, repeated or missing ones."""
    if len(inputs) > len(order):
        raise RecurError(f"the model takes {len(order)} inputs ({', '.join(order)}), "
                         f"got {len(inputs)}")
    given = dict(zip(order, inputs))
    for name, value in named.items():
        if name not in order:
            raise RecurError(f"the model has no input '{name}'; its inputs: "
                             f"{', '.join(order)}")
        if name in given:
            raise RecurError(f"input '{name}' given twice")
        given[name] = value
    missing = [name for name in order if name not in given]
    if missing:
        raise RecurError(f"missing input {', '.join(missing)}")
    return given


class Model:
    """A compiled model (a recur-compile library) loaded by the runtime."""

    def __init__(self, path: PathLike, tensors: Optional[str] = None) -> None:
        """`tensors`: what runs return, "torch" (default when torch imports)
        or "numpy"."""
        if tensors is None:
            tensors = "torch" if _torch_available() else "numpy"
        if tensors not in ("torch", "numpy"):
            raise RecurError(f"tensors must be 'torch' or 'numpy', got {tensors!r}")
        lib = rt.library()
        handle = rt._model_p()
        rt.check(lib.recur_model_load(os.fsencode(path), ctypes.byref(handle)))
        self._lib, self._handle, self.path = lib, handle, os.fsdecode(path)
        # Frees the model when it is collected, or at close(); outputs
        # already returned own their buffers and outlive it.
        self._finalizer = weakref.finalize(self, lib.recur_model_free, handle)
        self._tensors = tensors
        self.inputs: List[TensorSpec] = self._specs(rt.INPUT)
        self.weights: List[TensorSpec] = self._specs(rt.WEIGHT)
        self.outputs: List[TensorSpec] = self._specs(rt.OUTPUT)

    def close(self) -> None:
        """Frees the model now (its outputs stay valid); later calls fail."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def _live(self) -> ctypes.c_void_p:
        """The runtime's handle; a RecurError once closed."""
        if not self._finalizer.alive:
            raise RecurError(f"the model '{self.path}' is closed")
        return self._handle

    def _specs(self, kind: int) -> List["TensorSpec"]:
        specs = []
        for index in range(self._lib.recur_model_num_tensors(self._handle, kind)):
            info = rt.TensorInfo()
            rt.check(self._lib.recur_model_tensor_info(self._handle, kind, index,
                                                       ctypes.byref(info)))
            specs.append(TensorSpec(info))
        return specs

    @property
    def device(self) -> str:
        """"cpu", or the GPU a CUDA model runs on."""
        return self._lib.recur_model_device(self._live()).decode()

    @property
    def target(self) -> str:
        """"cpu" or "cuda": what the model was compiled for."""
        return ("cpu", "cuda")[self._lib.recur_model_target(self._live())]

    def describe(self) -> Dict[str, Any]:
        """The model's description (inputs, weights, outputs, how it was
        compiled), as recur-compile wrote it."""
        return json.loads(self._lib.recur_model_description(self._live()).decode())

    def __repr__(self) -> str:
        if self.closed:
            return f"recur.Model({self.path!r}, closed)"
        return (f"recur.Model({self.path!r} on {self.device}: inputs {self.inputs}, "
                f"{len(self.weights)} weights, outputs {self.outputs})")

    def bind(self, state_dict: Mapping[str, Any], strict: bool = True) -> None:
        """Copies weights into the model by name (PyTorch's state_dict names).
        strict (as load_state_dict): every weight given, nothing else."""
        self._live()
        names = {spec.name for spec in self.weights}
        if strict:
            missing = sorted(names - set(state_dict))
            unexpected = sorted(set(state_dict) - names)
            if missing or unexpected:
                raise RecurError("weights do not match the model: " + "; ".join(
                    part for part in (
                        f"missing {', '.join(missing)}" if missing else "",
                        f"unexpected {', '.join(unexpected)}" if unexpected else "")
                    if part))
        for name, value in state_dict.items():
            if name in names:
                self.bind_weight(name, value)

    def bind_weight(self, name: str, value: Any) -> None:
        """Copies one weight (a torch tensor or NumPy array) into the model."""
        capsule = _to_dlpack(value, f"weight '{name}'")
        managed = rt.managed_of(capsule)
        rt.check(self._lib.recur_model_bind_weight(
            self._live(), name.encode(), ctypes.byref(managed.contents.dl_tensor)))

    def bind_file(self, path: PathLike) -> None:
        """Binds every weight from a safetensors file, strictly."""
        rt.check(self._lib.recur_model_bind_weights_file(self._live(), os.fsencode(path)))

    def set_threads(self, threads: int) -> None:
        """CPU threads for the runs (OpenMP)."""
        rt.check(self._lib.recur_model_set_threads(self._live(), int(threads)))

    def save_weights(self, path: PathLike) -> None:
        """The weights' current values (trained, for a training step) to a
        safetensors file under their PyTorch names."""
        rt.check(self._lib.recur_model_save_weights(self._live(), os.fsencode(path)))

    def run(self, *inputs: Any, **named: Any) -> Union[Any, Tuple[Any, ...]]:
        """Runs the model on its inputs (in description order, or by name);
        returns its outputs, one tensor or a tuple, as torch tensors (or
        NumPy arrays) that hold the runtime's buffers without a copy."""
        order = [spec.name for spec in self.inputs]
        given = inputs_by_name(order, inputs, named)
        capsules = [_to_dlpack(given[name], f"input '{name}'") for name in order]
        pointers = (ctypes.POINTER(rt.DLTensor) * len(order))(*[
            ctypes.pointer(rt.managed_of(capsule).contents.dl_tensor) for capsule in capsules])
        results = (ctypes.POINTER(rt.DLManagedTensor) * len(self.outputs))()
        rt.check(self._lib.recur_model_run(self._live(), pointers, len(order), results,
                                           len(self.outputs)))
        outputs = tuple(self._wrap(result) for result in results)
        return outputs[0] if len(outputs) == 1 else outputs

    __call__ = run

    def _wrap(self, managed: Any) -> Any:
        if self._tensors == "torch":
            import torch.utils.dlpack
            return torch.utils.dlpack.from_dlpack(rt.capsule_of(managed))
        import numpy
        return numpy.from_dlpack(_Exported(managed))


def load(path: PathLike, tensors: Optional[str] = None) -> Model:
    """Opens a library compiled by recur-compile (weights still to bind)."""
    return Model(path, tensors)
