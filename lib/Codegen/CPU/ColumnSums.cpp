//===- ColumnSums.cpp - sums over the rows of a buffer on vectors ---------===//

#include "../BufferViews.h"
#include "ElementwiseVectors.h"
#include "LoopBuilders.h"
#include "RowKernels.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <functional>

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::cpu;
using utils::IteratorType;

std::optional<ColumnSum>
mlir::recur::cpu::matchColumnSum(linalg::GenericOp op) {
  unsigned loops = op.getNumLoops();
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || loops < 2 || op.getNumParallelLoops() != 1 ||
      op.getIteratorTypesArray()[0] != IteratorType::parallel)
    return std::nullopt;
  MLIRContext *context = op.getContext();
  SmallVector<AffineExpr> rowsThenColumn;
  for (unsigned dim = 1; dim < loops; ++dim)
    rowsThenColumn.push_back(getAffineDimExpr(dim, context));
  rowsThenColumn.push_back(getAffineDimExpr(0, context));
  SmallVector<AffineMap> expected = {
      AffineMap::get(loops, 0, rowsThenColumn, context),
      AffineMap::get(loops, 0, getAffineDimExpr(0, context))};
  Value input = op.getDpsInputs()[0], output = op.getDpsInits()[0];
  auto inputType = dyn_cast<MemRefType>(input.getType());
  auto outputType = dyn_cast<MemRefType>(output.getType());
  if (op.getIndexingMapsArray() != expected || !inputType || !outputType ||
      !inputType.getElementType().isF32() ||
      !outputType.getElementType().isF32() ||
      !inputType.isLastDimUnitStride() || !outputType.isLastDimUnitStride())
    return std::nullopt;
  // The body: yield addf(value, accumulator), in either order.
  Block &body = op.getRegion().front();
  auto add = dyn_cast<arith::AddFOp>(
      body.getTerminator()->getOperand(0).getDefiningOp());
  if (!add || body.getOperations().size() != 2 ||
      !llvm::is_contained(add->getOperands(), body.getArgument(0)) ||
      !llvm::is_contained(add->getOperands(), body.getArgument(1)))
    return std::nullopt;
  return ColumnSum{op, input, output, {}};
}

/// Columns in chunks of `vectors` vectors, in parallel; each chunk's sums
/// stay in registers while the loop walks down the rows, reading a
/// contiguous piece of every row. (The loop lowering ran the parallel loop
/// over single columns and walked each down the rows: a scalar load per
/// element, a cache line per row.)
void mlir::recur::cpu::emitColumnSum(RewriterBase &b, ColumnSum &sum,
                                     int64_t vectorWidth) {
  constexpr int64_t vectors = 8; // enough independent adds to hide latency
  Location loc = sum.op.getLoc();
  auto inputType = cast<MemRefType>(sum.input.getType());
  unsigned rank = inputType.getRank();
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto vectorType = VectorType::get({vectorWidth}, b.getF32Type());
  Value zero = arith::ConstantOp::create(b, loc, b.getF32Type(),
                                         b.getF32FloatAttr(0.0f));
  Value columns = memref::DimOp::create(b, loc, sum.output, 0);
  int64_t chunk = vectors * vectorWidth;
  Value chunks = arith::CeilDivUIOp::create(b, loc, columns, index(chunk));
  SmallVector<Value> rowSizes;
  for (unsigned dim = 0; dim + 1 < rank; ++dim)
    rowSizes.push_back(memref::DimOp::create(b, loc, sum.input, dim));

  auto sumChunk = [&](Value first, bool inBounds) {
    SmallVector<Value> columnOf, accumulators;
    for (int64_t v = 0; v < vectors; ++v) {
      columnOf.push_back(
          arith::AddIOp::create(b, loc, first, index(v * vectorWidth)));
      accumulators.push_back(
          sum.initial
              ? vector::BroadcastOp::create(b, loc, vectorType, sum.initial)
                    .getResult()
              : vector::TransferReadOp::create(b, loc, vectorType, sum.output,
                                               ValueRange{columnOf[v]}, zero,
                                               ArrayRef<bool>{inBounds})
                    .getResult());
    }
    // One loop per leading dimension. An inner loop sums from zero and its
    // sums are added to the outer ones after it: blocked summation, whose
    // rounding error grows with T + B rather than T * B (the order of the
    // scalar loop before, which LLVM split across registers).
    Value zeros = arith::ConstantOp::create(
        b, loc, vectorType, DenseElementsAttr::get(vectorType, 0.0f));
    std::function<SmallVector<Value>(unsigned, SmallVector<Value>, ValueRange)>
        rowLoops = [&](unsigned dim, SmallVector<Value> indices,
                       ValueRange carried) -> SmallVector<Value> {
      if (dim + 1 == rank) {
        SmallVector<Value> next;
        for (int64_t v = 0; v < vectors; ++v) {
          SmallVector<Value> at(indices);
          at.push_back(columnOf[v]);
          Value row =
              vector::TransferReadOp::create(b, loc, vectorType, sum.input, at,
                                             zero, ArrayRef<bool>{inBounds});
          next.push_back(arith::AddFOp::create(b, loc, carried[v], row));
        }
        return next;
      }
      SmallVector<Value> start(carried);
      if (dim > 0)
        start.assign(vectors, zeros);
      SmallVector<Value> sums =
          buildForWithValues(b, loc, index(0), rowSizes[dim], index(1), start,
                             [&](Value i, ValueRange inner) {
                               SmallVector<Value> deeper(indices);
                               deeper.push_back(i);
                               return rowLoops(dim + 1, deeper, inner);
                             });
      if (dim > 0)
        for (int64_t v = 0; v < vectors; ++v)
          sums[v] = arith::AddFOp::create(b, loc, carried[v], sums[v]);
      return sums;
    };
    accumulators = rowLoops(0, {}, accumulators);
    for (int64_t v = 0; v < vectors; ++v)
      vector::TransferWriteOp::create(b, loc, accumulators[v], sum.output,
                                      ValueRange{columnOf[v]},
                                      ArrayRef<bool>{inBounds});
  };

  buildParallel(
      b, loc, ValueRange{index(0)}, ValueRange{chunks}, ValueRange{index(1)},
      [&](ValueRange ivs) {
        Value first = arith::MulIOp::create(b, loc, ivs[0], index(chunk));
        Value end = arith::AddIOp::create(b, loc, first, index(chunk));
        Value whole = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                            end, columns);
        auto branches = scf::IfOp::create(b, loc, whole,
                                          /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(branches.thenBlock()->getTerminator());
        sumChunk(first, /*inBounds=*/true);
        // The last chunk, past the end of the columns: masked.
        b.setInsertionPoint(branches.elseBlock()->getTerminator());
        sumChunk(first, /*inBounds=*/false);
      });
}
