//===- ExpandShapesBySizes.cpp - expand_shape with several run-time sizes -===//
//
// Upstream's expand-strided-metadata cannot infer two dynamic sizes of one
// expanded group from the source (and crashes on it); the op's output_shape
// has them, so such an expand_shape becomes a reinterpret_cast of the
// source's base with the expanded strides.
//
//===----------------------------------------------------------------------===//

#include "recur/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::recur {
#define GEN_PASS_DEF_EXPANDSHAPESBYSIZES
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

/// Whether a group of `expand`'s result has more than one dynamic size.
bool hasGroupOfDynamicSizes(memref::ExpandShapeOp expand) {
  MemRefType result = expand.getResultType();
  for (const ReassociationIndices &group : expand.getReassociationIndices())
    if (llvm::count_if(
            group, [&](int64_t dim) { return result.isDynamicDim(dim); }) > 1)
      return true;
  return false;
}

OpFoldResult multiply(OpBuilder &builder, Location loc, OpFoldResult a,
                      OpFoldResult b) {
  std::optional<int64_t> x = getConstantIntValue(a);
  std::optional<int64_t> y = getConstantIntValue(b);
  if (x && y)
    return builder.getIndexAttr(*x * *y);
  return arith::MulIOp::create(builder, loc,
                               getValueOrCreateConstantIndexOp(builder, loc, a),
                               getValueOrCreateConstantIndexOp(builder, loc, b))
      .getResult();
}

struct ExpandShapesBySizesPass
    : mlir::recur::impl::ExpandShapesBySizesBase<ExpandShapesBySizesPass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> expands;
    getOperation()->walk([&](memref::ExpandShapeOp expand) {
      if (hasGroupOfDynamicSizes(expand))
        expands.push_back(expand);
    });
    IRRewriter rewriter(&getContext());
    for (memref::ExpandShapeOp expand : expands) {
      rewriter.setInsertionPoint(expand);
      Location loc = expand.getLoc();
      // The source's base, offset and strides: any layout (a slice's too).
      auto metadata = memref::ExtractStridedMetadataOp::create(rewriter, loc,
                                                               expand.getSrc());
      SmallVector<OpFoldResult> sourceStrides =
          metadata.getConstifiedMixedStrides();
      SmallVector<OpFoldResult> sizes = expand.getMixedOutputShape();
      SmallVector<OpFoldResult> strides(sizes.size());
      // Within a group, row-major from the source dimension's stride.
      for (auto [source, group] :
           llvm::enumerate(expand.getReassociationIndices())) {
        OpFoldResult stride = sourceStrides[source];
        for (int64_t dim : llvm::reverse(group)) {
          strides[dim] = stride;
          if (dim != group.front())
            stride = multiply(rewriter, loc, stride, sizes[dim]);
        }
      }
      rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
          expand, expand.getResultType(), metadata.getBaseBuffer(),
          metadata.getConstifiedMixedOffset(), sizes, strides);
    }
  }
};

} // namespace
