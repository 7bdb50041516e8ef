//===- LoweringUtils.h - the lowerings' shared builders ---------*- C++ -*-===//
//
// The tensor-level IR builders the op lowerings share (Emitter), and the
// op families' pattern entry points (RecurToLinalg.cpp gathers them).
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_LIB_CONVERSION_RECURTOLINALG_LOWERINGUTILS_H
#define RECUR_LIB_CONVERSION_RECURTOLINALG_LOWERINGUTILS_H

#include "recur/IR/CellMath.h"
#include "recur/IR/RecurOps.h"
#include "recur/Utils/GateSums.h"
#include "recur/Utils/SequenceLengths.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::recur::to_linalg {

using ::mlir::utils::IteratorType;

/// Builds the tensor-level IR shared by the op lowerings.
class Emitter {
public:
  Emitter(OpBuilder &builder, Location loc)
      : b(builder), loc(loc), fastMath(reassociable(builder.getContext())) {}

  Value constantFloat(Type type, double value);
  Value constantIndex(int64_t value);

  /// An uninitialized tensor with the given (static or SSA) sizes.
  Value empty(ArrayRef<OpFoldResult> sizes, Type elementType);

  Value filled(ArrayRef<OpFoldResult> sizes, Type elementType, double value);

  /// A tensor of `sizes` whose last dimension is `vector` (rank 1), repeated.
  Value broadcastLast(Value vector, ArrayRef<OpFoldResult> sizes);
  /// The same, written into `target` (whose last dimension is `vector`'s).
  Value broadcastLastInto(Value vector, Value target);

  /// `x` as the input of a product with `w`: rounded to bf16 (to nearest
  /// even) where `w` is packed in pairs of k for bf16 products, else `x`.
  /// The products' callers round first, so that what sets the accumulator
  /// stays right before the product (the CPU kernels start from it).
  Value productInput(Value x, Value w);

  /// `acc[d..., n] += sum_k x[d..., k] * w[n, k]`: x times w transposed, the
  /// PyTorch weight layout, accumulated into `acc`. A rank-3 `w` is that
  /// weight packed by recur.pack_panels: w[n floordiv t, k, n mod t]; a
  /// rank-4 bf16 one in pairs of k, w[n floordiv t, k floordiv 2, n mod t,
  /// k mod 2], whose products are of bf16 operands (x rounded by
  /// productInput) with f32 sums.
  Value accumulateMatmulTransposed(Value x, Value w, Value acc);

  /// `acc[d..., k] += sum_n x[d..., n] * w[n, k]`: x times w (not
  /// transposed), the input gradient of a product with a PyTorch weight.
  Value accumulateMatmul(Value x, Value w, Value acc);

  /// `acc[n, k] += sum over d... of a[d..., n] * x[d..., k]`: a weight's
  /// gradient, one contraction over the rows of every step at once.
  Value accumulateRowProducts(Value a, Value x, Value acc);

  /// `acc[n] += sum over d... of a[d..., n]`.
  Value accumulateColumnSums(Value a, Value acc);

  /// The sum of the squares of every element of `a`, as a rank-0 tensor.
  Value sumOfSquares(Value a) { return total(a, /*squares=*/true); }

  /// Σ a (or Σ a², `squares`) into a rank-0 tensor. With two or more
  /// dimensions, the rows' sums first and then theirs: the rows run in
  /// parallel (threads on the GPU, threads and vectors on the CPU) rather
  /// than every element in one loop (one GPU thread).
  Value total(Value a, bool squares);

  /// `acc += inputs[0] * inputs[1]` over the iteration space of `maps`
  /// (inputs', then acc's).
  Value multiplyAccumulate(ValueRange inputs, Value acc,
                           ArrayRef<AffineMap> maps,
                           ArrayRef<IteratorType> iterators);

  /// The product of `sizes` as a float of `type`.
  Value countOf(ArrayRef<OpFoldResult> sizes, Type type);

  /// Reduces the last dimension of `input` into a tensor of its leading
  /// dimensions, starting from `init` and combining with
  /// `combine(acc, x, rowValues)`, where `rowValues` are the elements of
  /// `perRow` (tensors of the leading dimensions) for the current row.
  using Combine =
      function_ref<Value(OpBuilder &, Location, Value, Value, ValueRange)>;
  Value reduceLast(Value input, ValueRange perRow, double init,
                   Combine combine);

  /// Row statistics for a softmax over the last dimension: the maximum and
  /// log(sum(exp(x - max))).
  std::pair<Value, Value> logSumExpParts(Value input);

  /// An elementwise map over tensors of the shape of `like`.
  Value
  elementwise(ValueRange inputs, Value like,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body);

  /// An elementwise map written into `target`, whose element the body
  /// receives after the inputs' (a weight updated in place, a sum
  /// accumulated into a row, the next slice of a scan). A rank-0 input is
  /// broadcast: a scalar that stays in a tensor (on the device, for CUDA).
  Value
  elementwiseInto(ValueRange inputs, Value target,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body);

  /// (d0, ..., d{rank-1}) -> (d0, ..., d{rank-2})
  AffineMap leadingMap(unsigned rank);

  OpBuilder &b;
  Location loc;
  arith::FastMathFlagsAttr fastMath;
};

using ::mlir::recur::sigmoid; // recur/IR/CellMath.h

/// Replaces `op` with `values`, casting where the lowering computed a less
/// static type than the op promised (e.g. after shape specialization).
void replaceWithCasts(PatternRewriter &rewriter, Operation *op,
                      ValueRange values);

/// Row `t` of a [T, B, N] tensor as a [B, N] tensor (columns [offset,
/// offset + width) of it).
Value timeSlice(OpBuilder &b, Location loc, Value sequence, Value t,
                OpFoldResult batch, int64_t offset, int64_t width);

/// Rows [0, rows) of `value` ([B, n]), or of row `t` of `value` ([T, B, n]).
Value leadingRows(OpBuilder &b, Location loc, Value value, Value rows,
                  Value t = Value());

/// `dest` ([B, n], or [T, B, n] at row `t`) with rows [start, start +
/// rows) set to `value`.
Value insertRows(OpBuilder &b, Location loc, Value value, Value dest,
                 OpFoldResult start, Value rows, Value t = Value());

/// `y` with row `t` set to `h` ([B, H]).
Value insertStep(OpBuilder &b, Location loc, Value h, Value y, Value t,
                 OpFoldResult batch, int64_t hidden);

/// `y` ([T, B, Y]) with row `t`'s first `rows` rows set to `value` and
/// the others to zeros (in place): a step of a batch sorted by length, whose
/// rows past their length output zeros.
Value insertActiveStep(OpBuilder &b, Location loc, Value value, Value y,
                       Value t, Value rows, OpFoldResult batch);

/// Inlines a recurrence cell (a recur.rnn's, or a layer's of a
/// recur.rnn_wavefront) at the end of `dest`, with `arguments` for its
/// block arguments (cast where an argument is less static than its value),
/// and erases its recur.yield, whose values it returns: y_t as a `[B, Y]`
/// row as static as `rowType`, then the new state. The rewriter is left
/// after the cell's ops.
SmallVector<Value> inlineCell(PatternRewriter &rewriter, Location loc,
                              Block &cell, Block *dest,
                              SmallVector<Value> arguments,
                              RankedTensorType rowType);

/// `value` copied into `buffer` (cast to its type first), so that a loop
/// carries the value in one buffer from step to step.
Value copyInto(OpBuilder &b, Location loc, Value value, Value buffer);

// The patterns of each op family, one file each.
/// recur.embedding, linear, transpose, log_softmax, cross_entropy;
/// `activeRowProducts`: a product hoisted out of a sorted recurrence on its
/// active rows, step by step.
void populateDenseOpPatterns(RewritePatternSet &patterns,
                             bool activeRowProducts);
/// recur.lstm and recur.lstm_recurrence.
void populateRecurrencePatterns(RewritePatternSet &patterns);
/// recur.lstm_wavefront and recur.rnn_wavefront.
void populateWavefrontPatterns(RewritePatternSet &patterns);
/// recur.interleave_gates and recur.pack_panels.
void populateLayoutPatterns(RewritePatternSet &patterns);
/// The training ops: gradients, clipping, the SGD update.
void populateTrainingPatterns(RewritePatternSet &patterns,
                              int64_t embeddingGradRowBlocks);

} // namespace mlir::recur::to_linalg

#endif // RECUR_LIB_CONVERSION_RECURTOLINALG_LOWERINGUTILS_H
