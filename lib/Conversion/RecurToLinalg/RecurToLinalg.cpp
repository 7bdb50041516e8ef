//===- RecurToLinalg.cpp - recur ops to linalg/tensor/scf on tensors ------===//
//
// The pass: every recur op becomes upstream tensor-level IR that one-shot
// bufferization understands. The fusion passes work on recur ops before
// this runs; the lowerings, one file per op family beside this one, only
// have to be obviously right.
//
//===----------------------------------------------------------------------===//

#include "recur/Conversion/RecurToLinalg.h"

#include "LoweringUtils.h"
#include "recur/Conversion/Passes.h"

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::recur {
#define GEN_PASS_DEF_CONVERTRECURTOLINALG
#include "recur/Conversion/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

void mlir::recur::populateRecurToLinalgPatterns(RewritePatternSet &patterns,
                                                int64_t embeddingGradRowBlocks,
                                                bool activeRowProducts) {
  to_linalg::populateDenseOpPatterns(patterns, activeRowProducts);
  to_linalg::populateRecurrencePatterns(patterns);
  to_linalg::populateWavefrontPatterns(patterns);
  to_linalg::populateLayoutPatterns(patterns);
  to_linalg::populateTrainingPatterns(patterns, embeddingGradRowBlocks);
}

namespace {

/// Only f32 has a lowering so far; say so rather than produce slow or wrong
/// code for narrower types. Layout ops (packing, gate interleaving) move
/// elements of any type, and a weight packed in bf16 pairs of k is what an
/// f32 op's bf16 products read.
LogicalResult checkLowerable(Operation *op) {
  if (isa<PackPanelsOp, InterleaveGatesOp>(op))
    return success();
  Type computeType = op->getNumResults() ? op->getResult(0).getType() : Type();
  for (Type type :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    if (computeType && isPairPacked(type, computeType))
      continue;
    Type element = cast<ShapedType>(type).getElementType();
    if (isa<FloatType>(element) && !element.isF32())
      return op->emitOpError("has element type ")
             << element
             << "; the lowering computes in f32 (recur-compute-in-f32 "
                "converts bf16 and f16 models)";
  }
  return success();
}

struct ConvertRecurToLinalgPass
    : mlir::recur::impl::ConvertRecurToLinalgBase<ConvertRecurToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    // Diagnose every op that cannot be lowered before changing anything.
    bool lowerable = true;
    getOperation().walk([&](Operation *op) {
      if (isa<RecurDialect>(op->getDialect()))
        lowerable &= succeeded(checkLowerable(op));
    });
    if (!lowerable)
      return signalPassFailure();
    RewritePatternSet patterns(context);
    populateRecurToLinalgPatterns(patterns, embeddingGradRowBlocks,
                                  activeRowProducts);
    ConversionTarget target(*context);
    target.addIllegalDialect<RecurDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
