//===- LoweringUtils.cpp - the lowerings' shared IR builders --------------===//
//
// The Emitter's builders: tensors, fills, broadcasts, the products in the
// layouts the fusion stages produce, reductions, elementwise maps.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "recur/Utils/TensorCasts.h"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::to_linalg;

namespace mlir::recur::to_linalg {

Value Emitter::constantFloat(Type type, double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

Value Emitter::constantIndex(int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value Emitter::empty(ArrayRef<OpFoldResult> sizes, Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

Value Emitter::filled(ArrayRef<OpFoldResult> sizes, Type elementType,
                      double value) {
  return linalg::FillOp::create(b, loc,
                                ValueRange{constantFloat(elementType, value)},
                                ValueRange{empty(sizes, elementType)})
      .getResult(0);
}

Value Emitter::broadcastLast(Value vector, ArrayRef<OpFoldResult> sizes) {
  return broadcastLastInto(
      vector,
      empty(sizes, cast<RankedTensorType>(vector.getType()).getElementType()));
}

Value Emitter::broadcastLastInto(Value vector, Value target) {
  unsigned rank = cast<RankedTensorType>(target.getType()).getRank();
  MLIRContext *context = b.getContext();
  AffineMap last = AffineMap::get(rank, 0, b.getAffineDimExpr(rank - 1));
  return linalg::GenericOp::create(
             b, loc, TypeRange{target.getType()}, ValueRange{vector},
             ValueRange{target},
             ArrayRef<AffineMap>{
                 last, AffineMap::getMultiDimIdentityMap(rank, context)},
             SmallVector<IteratorType>(rank, IteratorType::parallel),
             [](OpBuilder &nested, Location loc, ValueRange args) {
               linalg::YieldOp::create(nested, loc, args[0]);
             })
      .getResult(0);
}

Value Emitter::productInput(Value x, Value w) {
  if (!isPairPacked(w.getType(), x.getType()))
    return x;
  // A bf16 model's own input, extended to f32 at the entry, is its own
  // rounding.
  if (auto extension = x.getDefiningOp<arith::ExtFOp>();
      extension && getElementTypeOrSelf(extension.getIn()).isBF16())
    return extension.getIn();
  Value init = empty(tensor::getMixedSizes(b, loc, x), b.getBF16Type());
  return elementwiseInto(
      x, init, [&](OpBuilder &nested, Location loc, ValueRange args) {
        return arith::TruncFOp::create(nested, loc, nested.getBF16Type(),
                                       args[0])
            .getResult();
      });
}

Value Emitter::accumulateMatmulTransposed(Value x, Value w, Value acc) {
  bool pairs = isPairPacked(w.getType(), acc.getType());
  if (pairs)
    x = productInput(x, w);
  unsigned rank = cast<RankedTensorType>(x.getType()).getRank();
  unsigned loops = rank + 1; // leading dims, n, k
  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> leading;
  for (unsigned dim = 0; dim + 1 < rank; ++dim)
    leading.push_back(b.getAffineDimExpr(dim));
  AffineExpr n = b.getAffineDimExpr(rank - 1), k = b.getAffineDimExpr(rank);
  auto withLast = [&](AffineExpr expr) {
    SmallVector<AffineExpr> exprs = leading;
    exprs.push_back(expr);
    return AffineMap::get(loops, 0, exprs, context);
  };
  auto weightType = cast<RankedTensorType>(w.getType());
  AffineMap weightMap = AffineMap::get(loops, 0, {n, k}, context);
  PanelGemmAttr config;
  if (pairs) {
    int64_t tile = weightType.getDimSize(2);
    weightMap = AffineMap::get(
        loops, 0, {n.floorDiv(tile), k.floorDiv(2), n % tile, k % 2}, context);
    config = PanelGemmAttr::get(context, tile, PanelLayout::pairs);
  } else if (weightType.getRank() == 3) {
    int64_t tile = weightType.getDimSize(2);
    weightMap =
        AffineMap::get(loops, 0, {n.floorDiv(tile), k, n % tile}, context);
    config = PanelGemmAttr::get(context, tile, PanelLayout::packed);
  }
  SmallVector<IteratorType> iterators(loops, IteratorType::parallel);
  iterators.back() = IteratorType::reduction;
  Value product = multiplyAccumulate(
      {x, w}, acc, {withLast(k), weightMap, withLast(n)}, iterators);
  // A weight in panels (recur.pack_panels) is there for the CPU's kernels.
  if (config)
    product.getDefiningOp()->setAttr(RecurDialect::kPanelGemmAttrName, config);
  return product;
}

Value Emitter::accumulateMatmul(Value x, Value w, Value acc) {
  unsigned rank = cast<RankedTensorType>(x.getType()).getRank();
  unsigned loops = rank + 1; // leading dims, k, n
  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> leading;
  for (unsigned dim = 0; dim + 1 < rank; ++dim)
    leading.push_back(b.getAffineDimExpr(dim));
  AffineExpr k = b.getAffineDimExpr(rank - 1), n = b.getAffineDimExpr(rank);
  auto withLast = [&](AffineExpr expr) {
    SmallVector<AffineExpr> exprs = leading;
    exprs.push_back(expr);
    return AffineMap::get(loops, 0, exprs, context);
  };
  SmallVector<IteratorType> iterators(loops, IteratorType::parallel);
  iterators.back() = IteratorType::reduction;
  return multiplyAccumulate(
      {x, w}, acc,
      {withLast(n), AffineMap::get(loops, 0, {n, k}, context), withLast(k)},
      iterators);
}

Value Emitter::accumulateRowProducts(Value a, Value x, Value acc) {
  unsigned rank = cast<RankedTensorType>(x.getType()).getRank();
  unsigned loops = rank + 1; // n, k, leading dims
  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> leading;
  for (unsigned dim = 0; dim + 1 < rank; ++dim)
    leading.push_back(b.getAffineDimExpr(dim + 2));
  auto withLast = [&](unsigned dim) {
    SmallVector<AffineExpr> exprs = leading;
    exprs.push_back(b.getAffineDimExpr(dim));
    return AffineMap::get(loops, 0, exprs, context);
  };
  SmallVector<IteratorType> iterators(loops, IteratorType::reduction);
  iterators[0] = iterators[1] = IteratorType::parallel;
  return multiplyAccumulate(
      {a, x}, acc,
      {withLast(0), withLast(1),
       AffineMap::getMultiDimIdentityMap(loops, context).getMajorSubMap(2)},
      iterators);
}

Value Emitter::accumulateColumnSums(Value a, Value acc) {
  unsigned rank = cast<RankedTensorType>(a.getType()).getRank();
  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> exprs;
  for (unsigned dim = 1; dim < rank; ++dim)
    exprs.push_back(b.getAffineDimExpr(dim));
  exprs.push_back(b.getAffineDimExpr(0));
  SmallVector<IteratorType> iterators(rank, IteratorType::reduction);
  iterators[0] = IteratorType::parallel;
  return linalg::GenericOp::create(
             b, loc, TypeRange{acc.getType()}, ValueRange{a}, ValueRange{acc},
             ArrayRef<AffineMap>{
                 AffineMap::get(rank, 0, exprs, context),
                 AffineMap::get(rank, 0, b.getAffineDimExpr(0))},
             iterators,
             [&](OpBuilder &nested, Location loc, ValueRange args) {
               linalg::YieldOp::create(nested, loc,
                                       arith::AddFOp::create(nested, loc,
                                                             args[1], args[0],
                                                             fastMath)
                                           .getResult());
             })
      .getResult(0);
}

Value Emitter::total(Value a, bool squares) {
  auto type = cast<RankedTensorType>(a.getType());
  unsigned rank = type.getRank();
  auto term = [squares](OpBuilder &nested, Location loc, Value x) {
    return squares ? arith::MulFOp::create(nested, loc, x, x).getResult() : x;
  };
  if (rank >= 2) {
    Value rowSums = reduceLast(
        a, {}, 0.0,
        [&](OpBuilder &nested, Location loc, Value acc, Value x, ValueRange) {
          return arith::AddFOp::create(nested, loc, acc, term(nested, loc, x),
                                       fastMath)
              .getResult();
        });
    return total(rowSums, /*squares=*/false);
  }
  MLIRContext *context = b.getContext();
  Value init = filled({}, type.getElementType(), 0.0);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{a}, ValueRange{init},
             ArrayRef<AffineMap>{
                 AffineMap::getMultiDimIdentityMap(rank, context),
                 AffineMap::get(rank, 0, {}, context)},
             SmallVector<IteratorType>(rank, IteratorType::reduction),
             [&](OpBuilder &nested, Location loc, ValueRange args) {
               linalg::YieldOp::create(
                   nested, loc,
                   arith::AddFOp::create(nested, loc, args[1],
                                         term(nested, loc, args[0]), fastMath)
                       .getResult());
             })
      .getResult(0);
}

Value Emitter::multiplyAccumulate(ValueRange inputs, Value acc,
                                  ArrayRef<AffineMap> maps,
                                  ArrayRef<IteratorType> iterators) {
  return linalg::GenericOp::create(
             b, loc, TypeRange{acc.getType()}, inputs, ValueRange{acc}, maps,
             iterators,
             [&](OpBuilder &nested, Location loc, ValueRange args) {
               // bf16 operands (bf16 products) are exact in f32.
               auto extended = [&](Value value) {
                 return value.getType() == args[2].getType()
                            ? value
                            : arith::ExtFOp::create(nested, loc,
                                                    args[2].getType(), value)
                                  .getResult();
               };
               Value product = arith::MulFOp::create(
                   nested, loc, extended(args[0]), extended(args[1]), fastMath);
               Value sum = arith::AddFOp::create(nested, loc, args[2], product,
                                                 fastMath);
               linalg::YieldOp::create(nested, loc, sum);
             })
      .getResult(0);
}

Value Emitter::countOf(ArrayRef<OpFoldResult> sizes, Type type) {
  Value count = constantIndex(1);
  for (OpFoldResult size : sizes)
    count = arith::MulIOp::create(
        b, loc, count, getValueOrCreateConstantIndexOp(b, loc, size));
  Value countInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  return arith::SIToFPOp::create(b, loc, type, countInt);
}

Value Emitter::reduceLast(Value input, ValueRange perRow, double init,
                          Combine combine) {
  auto type = cast<RankedTensorType>(input.getType());
  unsigned rank = type.getRank();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, input);
  sizes.pop_back();
  Value acc = filled(sizes, type.getElementType(), init);
  SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  iterators.back() = IteratorType::reduction;
  SmallVector<Value> inputs = {input};
  llvm::append_range(inputs, perRow);
  SmallVector<AffineMap> maps(inputs.size() + 1, leadingMap(rank));
  maps.front() = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  return linalg::GenericOp::create(
             b, loc, TypeRange{acc.getType()}, inputs, ValueRange{acc}, maps,
             iterators,
             [&](OpBuilder &nested, Location loc, ValueRange args) {
               linalg::YieldOp::create(nested, loc,
                                       combine(nested, loc, args.back(),
                                               args.front(),
                                               args.drop_front().drop_back()));
             })
      .getResult(0);
}

std::pair<Value, Value> Emitter::logSumExpParts(Value input) {
  Value max = reduceLast(
      input, {}, -std::numeric_limits<double>::infinity(),
      [](OpBuilder &nested, Location loc, Value acc, Value x, ValueRange) {
        return arith::MaximumFOp::create(nested, loc, acc, x).getResult();
      });
  Value sum =
      reduceLast(input, max, 0.0,
                 [&](OpBuilder &nested, Location loc, Value acc, Value x,
                     ValueRange rowMax) {
                   Value shifted =
                       arith::SubFOp::create(nested, loc, x, rowMax[0]);
                   Value exp = math::ExpOp::create(nested, loc, shifted);
                   return arith::AddFOp::create(nested, loc, acc, exp, fastMath)
                       .getResult();
                 });
  Value logSum = elementwise(
      {sum}, sum, [](OpBuilder &nested, Location loc, ValueRange args) {
        return math::LogOp::create(nested, loc, args[0]).getResult();
      });
  return {max, logSum};
}

Value Emitter::elementwise(
    ValueRange inputs, Value like,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto type = cast<RankedTensorType>(like.getType());
  Value init =
      empty(tensor::getMixedSizes(b, loc, like), type.getElementType());
  return elementwiseInto(inputs, init,
                         [&](OpBuilder &nested, Location loc, ValueRange args) {
                           return body(nested, loc, args.drop_back());
                         });
}

Value Emitter::elementwiseInto(
    ValueRange inputs, Value target,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  unsigned rank = cast<RankedTensorType>(target.getType()).getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, b.getContext());
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(cast<RankedTensorType>(input.getType()).getRank() == 0
                       ? AffineMap::get(rank, 0, {}, b.getContext())
                       : identity);
  maps.push_back(identity);
  return linalg::GenericOp::create(
             b, loc, TypeRange{target.getType()}, inputs, ValueRange{target},
             maps, SmallVector<IteratorType>(rank, IteratorType::parallel),
             [&](OpBuilder &nested, Location loc, ValueRange args) {
               linalg::YieldOp::create(nested, loc, body(nested, loc, args));
             })
      .getResult(0);
}

AffineMap Emitter::leadingMap(unsigned rank) {
  return AffineMap::getMultiDimIdentityMap(rank, b.getContext())
      .getMajorSubMap(rank - 1);
}

void replaceWithCasts(PatternRewriter &rewriter, Operation *op,
                      ValueRange values) {
  SmallVector<Value> results;
  for (auto [value, type] : llvm::zip(values, op->getResultTypes()))
    results.push_back(
        value.getType() == type
            ? value
            : tensor::CastOp::create(rewriter, op->getLoc(), type, value)
                  .getResult());
  rewriter.replaceOp(op, results);
}

/// Rows [start, start + rows) of a [B, width] tensor, or of row `t` of a
/// [T, B, width] one, as a slice's offsets, sizes and strides.
struct RowRange {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};

static RowRange rowRange(OpBuilder &b, int64_t width, OpFoldResult start,
                         OpFoldResult rows, Value t) {
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  RowRange range{{start, zero}, {rows, b.getIndexAttr(width)}, {one, one}};
  if (t) {
    range.offsets.insert(range.offsets.begin(), t);
    range.sizes.insert(range.sizes.begin(), one);
    range.strides.push_back(one);
  }
  return range;
}

/// The [?, width] type of rows of `of` ([B, width] or [T, B, width]).
static RankedTensorType rowsType(Value of) {
  auto type = cast<RankedTensorType>(of.getType());
  return RankedTensorType::get({ShapedType::kDynamic, type.getShape().back()},
                               type.getElementType());
}

Value leadingRows(OpBuilder &b, Location loc, Value value, Value rows,
                  Value t) {
  RankedTensorType type = rowsType(value);
  RowRange range = rowRange(b, type.getDimSize(1), b.getIndexAttr(0), rows, t);
  return tensor::ExtractSliceOp::create(b, loc, type, value, range.offsets,
                                        range.sizes, range.strides);
}

Value insertRows(OpBuilder &b, Location loc, Value value, Value dest,
                 OpFoldResult start, Value rows, Value t) {
  RankedTensorType type = rowsType(dest);
  RowRange range = rowRange(b, type.getDimSize(1), start, rows, t);
  return tensor::InsertSliceOp::create(b, loc, castTo(b, loc, value, type),
                                       dest, range.offsets, range.sizes,
                                       range.strides);
}

Value insertActiveStep(OpBuilder &b, Location loc, Value value, Value y,
                       Value t, Value rows, OpFoldResult batch) {
  y = insertRows(b, loc, value, y, b.getIndexAttr(0), rows, t);
  // The finished rows' y_t: zeros, written in place.
  Value finished = arith::SubIOp::create(
      b, loc, getValueOrCreateConstantIndexOp(b, loc, batch), rows);
  RankedTensorType type = rowsType(y);
  RowRange range = rowRange(b, type.getDimSize(1), rows, finished, t);
  Value padding = tensor::ExtractSliceOp::create(b, loc, type, y, range.offsets,
                                                 range.sizes, range.strides);
  padding =
      linalg::FillOp::create(b, loc,
                             ValueRange{arith::ConstantOp::create(
                                 b, loc, b.getZeroAttr(type.getElementType()))},
                             ValueRange{padding})
          .getResult(0);
  return insertRows(b, loc, padding, y, rows, finished, t);
}

Value timeSlice(OpBuilder &b, Location loc, Value sequence, Value t,
                OpFoldResult batch, int64_t offset, int64_t width) {
  auto type = cast<RankedTensorType>(sequence.getType());
  auto sliceType =
      RankedTensorType::get({type.getShape()[1], width}, type.getElementType());
  OpFoldResult oneAttr = b.getIndexAttr(1);
  return tensor::ExtractSliceOp::create(
      b, loc, sliceType, sequence,
      ArrayRef<OpFoldResult>{t, b.getIndexAttr(0), b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{oneAttr, batch, b.getIndexAttr(width)},
      ArrayRef<OpFoldResult>{oneAttr, oneAttr, oneAttr});
}

Value insertStep(OpBuilder &b, Location loc, Value h, Value y, Value t,
                 OpFoldResult batch, int64_t hidden) {
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  return tensor::InsertSliceOp::create(
      b, loc, h, y, ArrayRef<OpFoldResult>{t, zero, zero},
      ArrayRef<OpFoldResult>{one, batch, b.getIndexAttr(hidden)},
      ArrayRef<OpFoldResult>{one, one, one});
}

} // namespace mlir::recur::to_linalg

SmallVector<Value> mlir::recur::to_linalg::inlineCell(
    PatternRewriter &rewriter, Location loc, Block &cell, Block *dest,
    SmallVector<Value> arguments, RankedTensorType rowType) {
  for (auto [argument, value] : llvm::zip_equal(cell.getArguments(), arguments))
    if (argument.getType() != value.getType())
      value = tensor::CastOp::create(rewriter, loc, argument.getType(), value);
  Operation *yield = cell.getTerminator();
  rewriter.inlineBlockBefore(&cell, dest, dest->end(), arguments);
  rewriter.setInsertionPoint(yield);
  SmallVector<Value> values(yield->getOperands());
  if (values[0].getType() != rowType)
    values[0] = tensor::CastOp::create(rewriter, loc, rowType, values[0]);
  rewriter.eraseOp(yield);
  return values;
}

Value mlir::recur::to_linalg::copyInto(OpBuilder &b, Location loc, Value value,
                                       Value buffer) {
  if (value.getType() != buffer.getType())
    value = tensor::CastOp::create(b, loc, buffer.getType(), value);
  return linalg::CopyOp::create(b, loc, value, buffer).getResult(0);
}
