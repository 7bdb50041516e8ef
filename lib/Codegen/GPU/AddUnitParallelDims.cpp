//===- AddUnitParallelDims.cpp - a parallel loop for every linalg.generic -===//

#include "recur/Codegen/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir::recur {
#define GEN_PASS_DEF_ADDUNITPARALLELDIMS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {
/// Rewrites `generic` (no parallel loop, so only 0-d outputs) to iterate over
/// a leading parallel dimension of extent 1 that indexes 1-element views of
/// its outputs.
LogicalResult addUnitParallelDim(linalg::GenericOp generic,
                                 RewriterBase &rewriter) {
  if (!generic.hasPureBufferSemantics())
    return generic.emitOpError("expected buffer semantics; run after "
                               "bufferization");
  rewriter.setInsertionPoint(generic);
  Location loc = generic.getLoc();
  SmallVector<Value> outputs;
  for (Value output : generic.getDpsInits()) {
    auto type = cast<MemRefType>(output.getType());
    if (type.getRank() != 0)
      return generic.emitOpError("has no parallel loop but a ranked output");
    outputs.push_back(memref::ExpandShapeOp::create(
        rewriter, loc, ArrayRef<int64_t>{1}, output,
        ArrayRef<ReassociationIndices>{}));
  }

  unsigned numLoops = generic.getNumLoops() + 1;
  MLIRContext *context = generic.getContext();
  SmallVector<AffineMap> maps;
  for (OpOperand *input : generic.getDpsInputOperands())
    maps.push_back(generic.getMatchingIndexingMap(input).shiftDims(1));
  for (size_t i = 0; i < outputs.size(); ++i)
    maps.push_back(
        AffineMap::get(numLoops, 0, getAffineDimExpr(0, context), context));
  SmallVector<utils::IteratorType> iterators{utils::IteratorType::parallel};
  llvm::append_range(iterators, generic.getIteratorTypesArray());

  auto replacement = linalg::GenericOp::create(
      rewriter, loc, TypeRange{}, generic.getDpsInputs(), outputs, maps,
      iterators);
  rewriter.inlineRegionBefore(generic.getRegion(), replacement.getRegion(),
                              replacement.getRegion().end());
  // The body's view of the loops moved by one.
  replacement.getBody()->walk([&](linalg::IndexOp index) {
    index.setDim(index.getDim() + 1);
  });
  rewriter.eraseOp(generic);
  return success();
}

struct AddUnitParallelDimsPass
    : mlir::recur::impl::AddUnitParallelDimsBase<AddUnitParallelDimsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> serial;
    getOperation()->walk([&](linalg::GenericOp generic) {
      if (generic.getNumParallelLoops() == 0)
        serial.push_back(generic);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp generic : serial)
      if (failed(addUnitParallelDim(generic, rewriter)))
        return signalPassFailure();
  }
};
} // namespace
