//===- Passes.td - Target code generation passes -------------------------===//
//
// Passes on bufferized (linalg, scf, memref) IR that prepare it for a target:
// the CPU and the GPU pipelines in lib/Pipelines run them after
// convert-recur-to-linalg and bufferization.
//

#ifndef RECUR_CODEGEN_PASSES_TD
#define RECUR_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerCopiesToLinalg : Pass<"recur-lower-copies-to-linalg"> {
  let summary = "Rewrite memref.copy as linalg.copy";
  let description = [{
    Upstream lowers a `memref.copy` between non-identity layouts (e.g. storing
    `h_t` into the `t`-th slice of an LSTM's output sequence) to a call of
    `memrefCopy` from MLIR's C runner-utils library. A compiled model must not
    depend on MLIR libraries, so copies become `linalg.copy`, which lowers to
    plain (parallel) loops with everything else. A copy from a subview onto
    an identical one (bufferization's, for a slice updated in place and
    inserted back where it came from) is erased.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def HoistConditionalBuffers : Pass<"recur-hoist-conditional-buffers",
                                   "::mlir::func::FuncOp"> {
  let summary = "Move a loop's allocations out of the conditions in its body";
  let description = [{
    A `memref.alloc` in an `scf.if` whose sizes are defined outside it moves
    before the `scf.if`, when the `scf.if` is inside a loop: a wavefront's
    layer computes its step only in the diagonals in which it has one, and
    its temporaries, out of the condition, can then leave the time loop
    (`buffer-loop-hoisting`), which runs on one thread team only if it
    allocates nothing (`recur-persistent-parallel-loops`). Runs before
    deallocation is placed: moving an allocation up keeps it valid.
  }];
}

def AllocateAtBound : Pass<"recur-allocate-at-bound", "::mlir::func::FuncOp"> {
  let summary = "Allocate a loop's buffers of a bounded row count at their bound";
  let description = [{
    A `memref.alloc` in an `scf.for` whose one dynamic size, its rows, is
    `arith.minui(n, b)` with `b` defined outside the loop (a packed batch's
    step on its active rows: n ≤ B) becomes a view of its n rows
    (`memref.reinterpret_cast`, identity layout) of a buffer of b rows, the
    view placed right after n. `buffer-loop-hoisting` then moves the buffer
    out of the loop, which allocates nothing at its steps and can run on
    one thread team (`recur-persistent-parallel-loops`). Runs before
    deallocation is placed.
  }];
}

def ExpandShapesBySizes : Pass<"recur-expand-shapes-by-sizes"> {
  let summary = "Lower memref.expand_shape into several run-time sizes as a reinterpret_cast";
  let description = [{
    Upstream's `expand-strided-metadata` (LLVM 22) infers the sizes of an
    expanded group from the source, which it cannot do when a group has
    more than one dynamic size (`[T * B, V]` into `[T, B, V]`, as an ONNX
    graph's Reshape back from a flattened projection writes): it crashes.
    Such an expand_shape becomes a `memref.reinterpret_cast` of the
    source's base buffer (`memref.extract_strided_metadata`) to its
    `output_shape`, each group's strides row-major from its source
    dimension's; the others stay for upstream.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect"];
}

def MarkWritableArguments : Pass<"recur-mark-writable-arguments",
                                 "::mlir::func::FuncOp"> {
  let summary = "Tell bufferization which model arguments it may write";
  let description = [{
    Runs right before one-shot bufferization (the first stage of
    `recur-bufferize`). Model inputs, weights and derived tensors
    (`recur.input`, `recur.weight`, `recur.derived`) belong to the caller:
    they get `bufferization.writable = false`, so bufferization copies
    rather than updates them in place. The weights a training step updates
    (named by a result's `recur.update`) are the exception: they are
    writable, so the update is written over the bound weight
    (`recur-update-weights-in-place` then checks that it was).
  }];
}

def UpdateWeightsInPlace : Pass<"recur-update-weights-in-place",
                                "::mlir::func::FuncOp"> {
  let summary = "Drop a training step's weight-update results, written in place";
  let description = [{
    Runs right after one-shot bufferization. A training step returns each
    updated weight as a result with `recur.update = "name"`; the lowering
    writes the update into the buffer of the weight argument of that name
    (`recur-mark-writable-arguments` makes those arguments writable), so each such
    result must be that very argument's buffer. The pass checks it and
    removes the result: the bound weight has changed, and no copy is made.
    An update that bufferization could not do in place is an error (it
    would be a copy per step, and the bound weight would not change).
  }];
}

include "recur/Codegen/CpuPasses.td"
include "recur/Codegen/GpuPasses.td"

#endif // RECUR_CODEGEN_PASSES_TD
