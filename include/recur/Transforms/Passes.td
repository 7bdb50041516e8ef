//===- Passes.td - Recur's own transformation passes ----------------------===//

#ifndef RECUR_TRANSFORMS_PASSES_TD
#define RECUR_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SpecializeShapes : Pass<"recur-specialize-shapes", "::mlir::ModuleOp"> {
  let summary = "Fix the dynamic sizes of named model inputs and refine the types that follow";
  let description = [{
    A model generated without `--seq`/`--batch` takes `tokens : tensor<?x?xi64>`.
    This pass gives named inputs (function arguments with a `recur.input`
    attribute) static shapes, e.g. `inputs=tokens=50x128`, then refines the
    result types of every recur op from its operands and updates the function's
    result types. Users that are neither recur ops nor `func.return` keep the
    type they had, through a `tensor.cast`.

    ```
    recur-opt model.mlir --recur-specialize-shapes="inputs=tokens=50x128"
    ```
  }];
  let options = [
    ListOption<"inputs", "inputs", "std::string",
               "Static shapes of named inputs as NAME=D0xD1x..., e.g. tokens=50x128">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def ConvertRecurToLinalg : Pass<"convert-recur-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower recur ops to linalg, tensor, arith, math and scf on tensors";
  let description = [{
    The straightforward (unfused) lowering of every recur op:

    - `recur.embedding`: a `linalg.generic` that gathers table rows with
      `tensor.extract`.
    - `recur.lstm`: an `scf.for` over time (never unrolled, so compile time does
      not grow with T) carrying `h`, `c` and the output sequence. Each step
      computes `x_t W_ih^T + h W_hh^T + (b_ih + b_hh)` as two matmul-like
      `linalg.generic`s into a `[B, 4H]` gate tensor, then one elementwise
      `linalg.generic` for the cell (gates i, f, g, o, as in PyTorch).
    - `recur.linear`: one `linalg.generic` contraction over the last dimension,
      initialized with the broadcast bias.
    - `recur.log_softmax` and `recur.cross_entropy`: max, sum of exponentials and
      the result as `linalg.generic` reductions over the last dimension.

    Contractions carry `fastmath<reassoc, contract>` so that LLVM may vectorize
    the reductions; the summation order is therefore not fixed. Only f32 models
    are lowered for now; f16/bf16 models get a diagnostic.

    Arguments named by `recur.input`/`recur.weight` are marked
    `bufferization.writable = false`: they belong to the caller.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"];
}

def LowerCopiesToLinalg : Pass<"recur-lower-copies-to-linalg"> {
  let summary = "Rewrite memref.copy as linalg.copy";
  let description = [{
    Upstream lowers a `memref.copy` between non-identity layouts (e.g. storing
    `h_t` into the `t`-th slice of an LSTM's output sequence) to a call of
    `memrefCopy` from MLIR's C runner-utils library. A compiled model must not
    depend on MLIR libraries, so copies become `linalg.copy`, which lowers to
    plain (parallel) loops with everything else.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// GPU preparation: every loop nest becomes a kernel, every buffer lives on the
// device (recur-lower-to-cuda).
//===----------------------------------------------------------------------===//

def AddUnitParallelDims : Pass<"recur-add-unit-parallel-dims"> {
  let summary = "Give linalg.generic ops without a parallel loop a unit parallel one";
  let description = [{
    A full reduction (e.g. the mean of `recur.cross_entropy`) or a 0-d
    elementwise op has no parallel loop, so `convert-linalg-to-parallel-loops`
    leaves it as host loops that would read device memory. This pass expands
    each 0-d output into a `memref<1xT>` view and prepends a parallel loop of
    extent 1, which maps to a one-thread kernel. Runs on buffers, after
    `linalg-generalize-named-ops`.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def CollapseParallelLoops : Pass<"recur-collapse-parallel-loops"> {
  let summary = "Collapse every outermost scf.parallel into one dimension";
  let description = [{
    One linear iteration space per kernel: after tiling by the block size, the
    innermost (contiguous) dimension varies fastest across the threads of a
    warp, so loads and stores of row-major buffers coalesce, and every loop
    nest gets the same block shape whatever its rank.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def GpuDeviceMemory : Pass<"recur-gpu-device-memory", "::mlir::func::FuncOp"> {
  let summary = "Allocate host-side buffers on the device; reject host accesses to them";
  let description = [{
    After `convert-parallel-loops-to-gpu` all computation sits in `gpu.launch`
    bodies and the host function only orchestrates. Its `memref.alloc` and
    `memref.dealloc` become `gpu.alloc` and `gpu.dealloc`, so the model's
    temporaries and outputs live in device memory (the runtime passes device
    pointers for inputs and weights too). A `memref.load`/`memref.store` left
    on the host on such a buffer would dereference a device pointer on the CPU:
    it is reported as an error instead.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif // RECUR_TRANSFORMS_PASSES_TD
