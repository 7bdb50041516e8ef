"""Recur from Python: compile a PyTorch LSTM language model, or load a model
compiled ahead of time, and run it on torch tensors (or NumPy arrays) without
copies, through librecur-runtime (docs/python.md).

    import recur
    compiled = recur.compile(lm)              # an Embedding -> LSTM -> Linear module
    logits = compiled(tokens)                 # tokens [T, B] int64, as lm(tokens)

    model = recur.load("liblm.so")            # from recur-compile
    print(model.describe())
"""

import ctypes
import json

from . import _runtime as rt

__all__ = ["RecurError", "Model", "load", "compile", "CompiledLM", "CompiledLSTM"]


class RecurError(RuntimeError):
    """An error from the runtime or the compiler; the message names the tensor
    (or option), what was expected and what was given."""


_DTYPES = {(rt.kDLFloat, 32): "f32", (rt.kDLFloat, 64): "f64", (rt.kDLBfloat, 16): "bf16",
           (rt.kDLFloat, 16): "f16", (rt.kDLInt, 64): "i64", (rt.kDLInt, 32): "i32"}


class TensorSpec:
    """A model tensor: name, dtype ("f32", "i64", ...), shape (None for a
    dynamic size) and, for dynamic sizes, their symbols ("T", "B")."""

    def __init__(self, info):
        self.name = info.name.decode()
        self.dtype = _DTYPES.get((info.dtype.code, info.dtype.bits),
                                 f"code{info.dtype.code}x{info.dtype.bits}")
        self.shape = tuple(None if info.shape[i] < 0 else info.shape[i] for i in range(info.ndim))
        self.dims = tuple(info.dims[i].decode() if info.dims[i] else "" for i in range(info.ndim))

    def __repr__(self):
        sizes = ", ".join(dim or str(size) for size, dim in zip(self.shape, self.dims))
        return f"{self.name}: {self.dtype}[{sizes}]"


def _to_dlpack(value, what):
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

    def __init__(self, managed):
        self.managed = managed

    def __dlpack__(self, stream=None):
        return rt.capsule_of(self.managed)

    def __dlpack_device__(self):
        device = self.managed.contents.dl_tensor.device
        return (device.device_type, device.device_id)


class Model:
    """A compiled model (a recur-compile library) loaded by the runtime."""

    def __init__(self, path, tensors=None):
        """`tensors`: what runs return, "torch" (default when torch imports)
        or "numpy"."""
        lib = rt.library()
        handle = rt._model_p()
        rt.check(lib.recur_model_load(str(path).encode(), ctypes.byref(handle)))
        self._lib, self._handle, self.path = lib, handle, str(path)
        if tensors is None:
            try:
                import torch  # noqa: F401
                tensors = "torch"
            except ImportError:
                tensors = "numpy"
        if tensors not in ("torch", "numpy"):
            raise RecurError(f"tensors must be 'torch' or 'numpy', got {tensors!r}")
        self._tensors = tensors
        self.inputs = self._specs(rt.INPUT)
        self.weights = self._specs(rt.WEIGHT)
        self.outputs = self._specs(rt.OUTPUT)

    def _specs(self, kind):
        specs = []
        for index in range(self._lib.recur_model_num_tensors(self._handle, kind)):
            info = rt.TensorInfo()
            rt.check(self._lib.recur_model_tensor_info(self._handle, kind, index,
                                                       ctypes.byref(info)))
            specs.append(TensorSpec(info))
        return specs

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.recur_model_free(self._handle)
            self._handle = None

    @property
    def device(self):
        """"cpu", or the GPU a CUDA model runs on."""
        return self._lib.recur_model_device(self._handle).decode()

    @property
    def target(self):
        """"cpu" or "cuda": what the model was compiled for."""
        return ("cpu", "cuda")[self._lib.recur_model_target(self._handle)]

    def describe(self):
        """The model's description (inputs, weights, outputs, how it was
        compiled), as recur-compile wrote it."""
        return json.loads(self._lib.recur_model_description(self._handle).decode())

    def __repr__(self):
        return (f"recur.Model({self.path!r} on {self.device}: inputs {self.inputs}, "
                f"{len(self.weights)} weights, outputs {self.outputs})")

    def bind(self, state_dict, strict=True):
        """Copies weights into the model by name (PyTorch's state_dict names).
        strict (as load_state_dict): every weight given, nothing else."""
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

    def bind_weight(self, name, value):
        capsule = _to_dlpack(value, f"weight '{name}'")
        managed = rt.managed_of(capsule)
        rt.check(self._lib.recur_model_bind_weight(
            self._handle, name.encode(), ctypes.byref(managed.contents.dl_tensor)))

    def bind_file(self, path):
        """Binds every weight from a safetensors file, strictly."""
        rt.check(self._lib.recur_model_bind_weights_file(self._handle, str(path).encode()))

    def set_threads(self, threads):
        rt.check(self._lib.recur_model_set_threads(self._handle, int(threads)))

    def save_weights(self, path):
        """The weights' current values (trained, for a training step) to a
        safetensors file under their PyTorch names."""
        rt.check(self._lib.recur_model_save_weights(self._handle, str(path).encode()))

    def run(self, *inputs, **named):
        """Runs the model on its inputs (in description order, or by name);
        returns its outputs, one tensor or a tuple, as torch tensors (or
        NumPy arrays) that hold the runtime's buffers without a copy."""
        order = [spec.name for spec in self.inputs]
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
        capsules = [_to_dlpack(given[name], f"input '{name}'") for name in order]
        pointers = (ctypes.POINTER(rt.DLTensor) * len(order))(*[
            ctypes.pointer(rt.managed_of(capsule).contents.dl_tensor) for capsule in capsules])
        results = (ctypes.POINTER(rt.DLManagedTensor) * len(self.outputs))()
        rt.check(self._lib.recur_model_run(self._handle, pointers, len(order), results,
                                           len(self.outputs)))
        outputs = tuple(self._wrap(result) for result in results)
        return outputs[0] if len(outputs) == 1 else outputs

    __call__ = run

    def _wrap(self, managed):
        if self._tensors == "torch":
            import torch.utils.dlpack
            return torch.utils.dlpack.from_dlpack(rt.capsule_of(managed))
        import numpy
        return numpy.from_dlpack(_Exported(managed))


def load(path, tensors=None):
    """Opens a library compiled by recur-compile (weights still to bind)."""
    return Model(path, tensors)


from ._compile import CompiledLM, CompiledLSTM, compile  # noqa: E402
