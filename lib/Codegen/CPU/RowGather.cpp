//===- RowGather.cpp - an embedding's gather on vectors -------------------===//

#include "../BufferViews.h"
#include "ElementwiseVectors.h"
#include "LoopBuilders.h"
#include "RowKernels.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::cpu;
using utils::IteratorType;

std::optional<RowGather>
mlir::recur::cpu::matchRowGather(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 ||
      llvm::any_of(op.getIteratorTypesArray(), [](IteratorType iterator) {
        return iterator != IteratorType::parallel;
      }))
    return std::nullopt;
  OpOperand *ids = op.getDpsInputOperand(0);
  OpOperand *output = op.getDpsInitOperand(0);
  auto outputType = dyn_cast<MemRefType>(output->get().getType());
  if (!isRowMap(op.getMatchingIndexingMap(ids)) ||
      !op.getMatchingIndexingMap(output).isIdentity() || !outputType ||
      !outputType.getElementType().isF32() || !outputType.isLastDimUnitStride())
    return std::nullopt;
  // The body: index_cast of the id, the last loop's index, the load, yield.
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto load = yield.getValues().size() == 1
                  ? yield.getValues()[0].getDefiningOp<memref::LoadOp>()
                  : memref::LoadOp();
  if (!load || body.getOperations().size() != 4 ||
      load.getIndices().size() != 2)
    return std::nullopt;
  auto row = load.getIndices()[0].getDefiningOp<arith::IndexCastOp>();
  auto column = load.getIndices()[1].getDefiningOp<linalg::IndexOp>();
  auto tableType = load.getMemRefType();
  if (!row || row.getIn() != op.getMatchingBlockArgument(ids) || !column ||
      column.getDim() != op.getNumLoops() - 1 ||
      !tableType.getElementType().isF32() || !tableType.isLastDimUnitStride() ||
      !definedBefore(load.getMemRef(), op))
    return std::nullopt;
  return RowGather{op, ids->get(), load.getMemRef(), output->get()};
}

/// A parallel loop over the rows; each row's id is loaded once, and the
/// table row is copied in vectors (the partial last one masked).
void mlir::recur::cpu::emitRowGather(RewriterBase &b, RowGather &gather,
                                     int64_t vectorWidth) {
  Location loc = gather.op.getLoc();
  unsigned rank = gather.op.getNumLoops();
  Value size = memref::DimOp::create(b, loc, gather.output, rank - 1);
  auto vectorType = VectorType::get({vectorWidth}, b.getF32Type());
  Value zero = arith::ConstantOp::create(b, loc, b.getF32Type(),
                                         b.getF32FloatAttr(0.0f));
  buildRowLoop(b, loc, gather.output, rank, [&](ValueRange leading) {
    Value id = memref::LoadOp::create(b, loc, gather.ids, leading);
    Value row = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
    buildVectorLoops(b, loc, size, vectorWidth, [&](Value j, bool inBounds) {
      Value vector = vector::TransferReadOp::create(
          b, loc, vectorType, gather.table, ValueRange{row, j}, zero,
          ArrayRef<bool>{inBounds});
      SmallVector<Value> indices(leading);
      indices.push_back(j);
      vector::TransferWriteOp::create(b, loc, vector, gather.output, indices,
                                      ArrayRef<bool>{inBounds});
    });
  });
}
