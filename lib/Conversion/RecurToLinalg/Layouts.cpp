//===- Layouts.cpp - weight layouts ---------------------------------------===//
//
// recur.interleave_gates and recur.pack_panels, the layouts fusion gives
// weights once per binding, as gathers into a new tensor.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "recur/Utils/PackPanels.h"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::to_linalg;

namespace {

/// A gather: every row of the result reads the row of the input it holds.
struct LowerInterleaveGates : OpRewritePattern<InterleaveGatesOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(InterleaveGatesOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    int64_t tile = op.getTile(), gates = op.getGates(),
            hidden = type.getDimSize(0) / gates;
    unsigned rank = type.getRank();
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
        AffineMap::getMultiDimIdentityMap(rank, rewriter.getContext()),
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &b, Location loc, ValueRange) {
          auto constant = [&](int64_t value) {
            return arith::ConstantIndexOp::create(b, loc, value).getResult();
          };
          // Row r = (j / K) * GK + g * K + j % K holds input row g * H + j.
          Value row = linalg::IndexOp::create(b, loc, 0);
          Value tileRows = constant(gates * tile);
          Value tiles = arith::DivUIOp::create(b, loc, row, tileRows);
          Value inTile = arith::RemUIOp::create(b, loc, row, tileRows);
          Value gate = arith::DivUIOp::create(b, loc, inTile, constant(tile));
          Value lane = arith::RemUIOp::create(b, loc, inTile, constant(tile));
          Value unit = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, tiles, constant(tile)),
              lane);
          SmallVector<Value> indices = {arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, gate, constant(hidden)),
              unit)};
          for (unsigned dim = 1; dim < rank; ++dim)
            indices.push_back(linalg::IndexOp::create(b, loc, dim));
          Value value =
              tensor::ExtractOp::create(b, loc, op.getInput(), indices);
          linalg::YieldOp::create(b, loc, value);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

/// result[p, k, r] = input[p * tile + r, k], zero past the last row.
struct LowerPackPanels : OpRewritePattern<PackPanelsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PackPanelsOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, packPanels(rewriter, op.getLoc(), op.getInput(),
                                      op.getTile(), op.getPairs()));
    return success();
  }
};

} // namespace

void mlir::recur::to_linalg::populateLayoutPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerInterleaveGates, LowerPackPanels>(patterns.getContext());
}
