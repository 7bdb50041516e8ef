//===- Passes.td - Conversions out of the recur dialect -------------------===//

#ifndef RECUR_CONVERSION_PASSES_TD
#define RECUR_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

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
    - Training ops (docs/training.md): scalars such as the loss scale and
      the clipping coefficient stay rank-0 tensors read by the generics;
      `recur.embedding_grad` is a loop over ids adding whole rows, or with
      `embedding-grad-row-blocks` an `scf.forall` over blocks of rows and
      the table's columns.
    - A `recur.linear` that a recurrence on rows sorted by length reads as
      its hoisted input: with `active-row-products`, a loop over time of
      GEMMs of each step's active rows.

    Contractions carry `fastmath<reassoc, contract>` so that LLVM may vectorize
    the reductions; the summation order is therefore not fixed. Only f32 models
    are lowered for now; f16/bf16 models get a diagnostic.

    The patterns are grouped by op family (dense ops, recurrences, the
    wavefront, layouts, training), one file each in
    `lib/Conversion/RecurToLinalg`; `populateRecurToLinalgPatterns` adds
    them all. Which arguments bufferization may write is decided later, by
    `recur-mark-writable-arguments`.
  }];
  let options = [
    Option<"embeddingGradRowBlocks", "embedding-grad-row-blocks", "int64_t",
           "0",
           "0: `recur.embedding_grad` is one loop over the ids adding whole "
           "rows; N > 0: an `scf.forall` over up to N blocks of table rows "
           "times the table's columns, each task walking every id and adding "
           "those in its block to its column (the GPU's form: no host loop "
           "over ids, no two threads on one element)">,
    Option<"activeRowProducts", "active-row-products", "bool", "true",
           "The product hoisted out of a recurrence whose rows are sorted by "
           "length runs step by step on each step's active rows (the "
           "CPU's: its work follows the tokens); false: one GEMM over "
           "every row (the GPU's: one tiled kernel, whose rows past a "
           "length the recurrence never reads)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"];
}

#endif // RECUR_CONVERSION_PASSES_TD
