"""ctypes bindings of librecur-runtime's C API (runtime/include/recur/runtime.h).

ctypes rather than a compiled extension: the C API is small and already speaks
DLPack, so the package needs no compiler, builds nothing, and works from the
build tree as from an installed copy. Tensors cross as DLPack capsules, so
nothing is copied on the way in (the runtime copies weights into the model
once, at binding) or on the way out.
"""

import ctypes
import os
from typing import Iterator, Optional

from ._errors import RecurError

# dlpack.h (v0.8, Debian's libdlpack-dev), the parts the runtime uses.
kDLCPU, kDLCUDA, kDLCUDAHost = 1, 2, 3
kDLInt, kDLUInt, kDLFloat, kDLBfloat = 0, 1, 2, 4


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", DELETER)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", DLDataType), ("ndim", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("dims", ctypes.POINTER(ctypes.c_char_p)), ("index_bound", ctypes.c_int64),
                ("lengths_steps", ctypes.c_int64)]


INPUT, WEIGHT, OUTPUT = 0, 1, 2

_error_p = ctypes.c_void_p
_model_p = ctypes.c_void_p


def _signatures(lib: ctypes.CDLL) -> None:
    def sig(name, restype, *argtypes):
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, list(argtypes)

    sig("recur_error_message", ctypes.c_char_p, _error_p)
    sig("recur_error_free", None, _error_p)
    sig("recur_model_load", _error_p, ctypes.c_char_p, ctypes.POINTER(_model_p))
    sig("recur_model_free", None, _model_p)
    sig("recur_model_description", ctypes.c_char_p, _model_p)
    sig("recur_model_num_tensors", ctypes.c_size_t, _model_p, ctypes.c_int)
    sig("recur_model_tensor_info", _error_p, _model_p, ctypes.c_int, ctypes.c_size_t,
        ctypes.POINTER(TensorInfo))
    sig("recur_model_device", ctypes.c_char_p, _model_p)
    sig("recur_model_target", ctypes.c_int, _model_p)
    sig("recur_model_bind_weight", _error_p, _model_p, ctypes.c_char_p,
        ctypes.POINTER(DLTensor))
    sig("recur_model_bind_weights_file", _error_p, _model_p, ctypes.c_char_p)
    sig("recur_model_read_weight", _error_p, _model_p, ctypes.c_char_p,
        ctypes.POINTER(DLTensor))
    sig("recur_model_save_weights", _error_p, _model_p, ctypes.c_char_p)
    sig("recur_model_set_threads", _error_p, _model_p, ctypes.c_int)
    sig("recur_model_set_host_outputs", _error_p, _model_p, ctypes.c_int)
    sig("recur_model_run", _error_p, _model_p, ctypes.POINTER(ctypes.POINTER(DLTensor)),
        ctypes.c_size_t, ctypes.POINTER(ctypes.POINTER(DLManagedTensor)), ctypes.c_size_t)


def _candidates() -> Iterator[str]:
    """Where librecur-runtime.so may be: $RECUR_RUNTIME_LIBRARY, the
    package's own lib/ (an installed copy carries it, with the tools it
    matches), the build tree this package sits in (python/ next to build/,
    or $RECUR_BUILD_DIR), then the loader's search path: the order in which
    _compile._tool looks for the tools."""
    if os.environ.get("RECUR_RUNTIME_LIBRARY"):
        yield os.environ["RECUR_RUNTIME_LIBRARY"]
        return
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.environ.get("RECUR_BUILD_DIR", os.path.join(here, "..", "..", "build"))
    yield os.path.join(here, "lib", "librecur-runtime.so")
    yield os.path.join(build, "lib", "librecur-runtime.so")
    yield "librecur-runtime.so"


_lib: Optional[ctypes.CDLL] = None


def library() -> ctypes.CDLL:
    """librecur-runtime, loaded once."""
    global _lib
    if _lib is None:
        tried = []
        for path in _candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append(path)
                continue
            try:
                _lib = ctypes.CDLL(path)
                break
            except OSError as error:
                tried.append(f"{path} ({error})")
        if _lib is None:
            raise RecurError("cannot load librecur-runtime.so; tried " + ", ".join(tried) +
                             ". Build Recur (scripts/build.sh) or set RECUR_RUNTIME_LIBRARY")
        _signatures(_lib)
    return _lib


def check(error: Optional[int]) -> None:
    """Raises the runtime's error (a RecurError* or None) as a RecurError."""
    if error:
        lib = library()
        message = lib.recur_error_message(error).decode()
        lib.recur_error_free(error)
        raise RecurError(message)


# PyCapsule access, for DLPack's "dltensor" capsules.
_pythonapi = ctypes.pythonapi
_pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_pythonapi.PyCapsule_New.restype = ctypes.py_object
_pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_pythonapi.PyCapsule_IsValid.restype = ctypes.c_int
_pythonapi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def managed_of(capsule: object) -> "ctypes._Pointer[DLManagedTensor]":
    """The DLManagedTensor a "dltensor" capsule holds (still owned by it)."""
    if not _pythonapi.PyCapsule_IsValid(capsule, b"dltensor"):
        raise RecurError("expected an unconsumed DLPack capsule (a tensor's "
                         "__dlpack__()), got one already consumed or of another kind")
    pointer = _pythonapi.PyCapsule_GetPointer(capsule, b"dltensor")
    return ctypes.cast(pointer, ctypes.POINTER(DLManagedTensor))


_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _pythonapi))


@ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
def _free_unconsumed(capsule):
    """DLPack's rule: a capsule still named "dltensor" when it dies was never
    consumed, so its producer frees the tensor."""
    if _capsule_is_valid(capsule, b"dltensor"):
        managed = ctypes.cast(_capsule_pointer(capsule, b"dltensor"),
                              ctypes.POINTER(DLManagedTensor))
        if managed.contents.deleter:
            managed.contents.deleter(managed)


def capsule_of(managed: "ctypes._Pointer[DLManagedTensor]") -> object:
    """A "dltensor" capsule that hands `managed` (a DLManagedTensor* from the
    runtime) to whoever consumes it; the consumer calls its deleter, which
    frees the runtime's buffer (or the capsule does, if never consumed)."""
    return _pythonapi.PyCapsule_New(ctypes.cast(managed, ctypes.c_void_p), b"dltensor",
                                    ctypes.cast(_free_unconsumed, ctypes.c_void_p))
