//===- PackGemmOperands.cpp - backward GEMMs in the packed kernel form ----===//
//
// A training step's backward GEMMs multiply by weights that change every
// run (x · wᵀ, d · w) and reduce over the rows of every step (dᵀ · x). On
// tensors, before bufferization, each is put in a form that
// recur-vectorize-packed-matmuls turns into register-tiled kernels: x · wᵀ
// with w packed into panels right before it (or before the loops it is
// invariant in); d · w is already one (w read in place); dᵀ · x with its
// rows collapsed, d and x read in place (columns of a wider sequence read
// from its collapsed whole, with its row stride, not copied).
//
//===----------------------------------------------------------------------===//

#include "Contractions.h"
#include "recur/Codegen/Passes.h"
#include "recur/IR/RecurOps.h"
#include "recur/Utils/PackPanels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

namespace mlir::recur {
#define GEN_PASS_DEF_PACKGEMMOPERANDS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

using utils::IteratorType;

bool isStaticF32(Value value, int64_t rank) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() && type.getRank() == rank &&
         type.getElementType().isF32();
}

/// f32 of `rank` dimensions, the last static (the rows before it may not
/// be: T and B of a model generated without them).
bool isRowsOfStaticF32(Value value, int64_t rank) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getRank() == rank && !type.isDynamicDim(rank - 1) &&
         type.getElementType().isF32();
}

/// Whether `slice` keeps its source's rank and all of its first
/// `leadingRank` dimensions, with unit strides: some columns of every row.
bool takesWholeRows(tensor::ExtractSliceOp slice, unsigned leadingRank) {
  if (!slice.hasUnitStride() ||
      slice.getSourceType().getRank() != slice.getType().getRank() ||
      slice.getType().getRank() != leadingRank + 1)
    return false;
  for (unsigned dim = 0; dim < leadingRank; ++dim) {
    if (!isZeroInteger(slice.getMixedOffsets()[dim]))
      return false;
    FailureOr<bool> whole = ValueBoundsConstraintSet::areEqual(
        slice.getMixedSizes()[dim], {slice.getSource(), dim});
    if (failed(whole) || !*whole)
      return false;
  }
  return true;
}

/// A multiply-accumulate contraction on f32 tensors: its operands and maps.
/// Read when it is rewritten, since rewriting an earlier one replaces its
/// accumulator.
struct Contraction {
  linalg::GenericOp op;
  Value a, b, c;
  SmallVector<AffineMap> maps;
  unsigned loops;
};

bool isContraction(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isMultiplyAccumulate(op))
    return false;
  return llvm::all_of(op->getOperands(), [](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return type && type.getElementType().isF32();
  });
}

Contraction operandsOf(linalg::GenericOp op) {
  return {op,
          op.getDpsInputs()[0],
          op.getDpsInputs()[1],
          op.getDpsInits()[0],
          op.getIndexingMapsArray(),
          op.getNumLoops()};
}

/// (d0, ..., d_{n-1}) -> (the given dims).
AffineMap dimsMap(unsigned loops, ArrayRef<unsigned> dims, MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (unsigned dim : dims)
    exprs.push_back(getAffineDimExpr(dim, ctx));
  return AffineMap::get(loops, 0, exprs, ctx);
}

SmallVector<unsigned> range(unsigned begin, unsigned end) {
  SmallVector<unsigned> dims;
  for (unsigned dim = begin; dim < end; ++dim)
    dims.push_back(dim);
  return dims;
}

SmallVector<unsigned> concat(ArrayRef<unsigned> a, ArrayRef<unsigned> b) {
  SmallVector<unsigned> all(a);
  all.append(b.begin(), b.end());
  return all;
}

class Packer {
public:
  Packer(OpBuilder &b, Location loc, int64_t tile)
      : b(b), loc(loc), tile(tile) {}

  Value pack(Value source) { return packPanels(b, loc, source, tile); }

  /// The kernels' form `C[..., c] += A[..., r] * P[c floordiv tile, r,
  /// c mod tile]` over loops (..., c, r), replacing `op`; with `transposedA`
  /// (C of rank 2), `C[n, c] += A[r, n] * P[...]`; with `inPlace`, P is
  /// X [r, c] itself.
  void replaceWithKernelForm(linalg::GenericOp op, Value a, Value packed,
                             Value c, bool transposedA = false,
                             bool inPlace = false) {
    unsigned rank = cast<RankedTensorType>(c.getType()).getRank();
    unsigned loops = rank + 1;
    MLIRContext *ctx = b.getContext();
    AffineExpr column = getAffineDimExpr(rank - 1, ctx),
               row = getAffineDimExpr(rank, ctx);
    SmallVector<unsigned> leading = range(0, rank - 1);
    SmallVector<AffineMap> maps = {
        transposedA ? dimsMap(loops, {rank, 0}, ctx)
                    : dimsMap(loops, concat(leading, {rank}), ctx),
        inPlace
            ? AffineMap::get(loops, 0, {row, column}, ctx)
            : AffineMap::get(loops, 0,
                             {column.floorDiv(tile), row, column % tile}, ctx),
        dimsMap(loops, concat(leading, {rank - 1}), ctx)};
    SmallVector<IteratorType> iterators(loops, IteratorType::parallel);
    iterators.back() = IteratorType::reduction;
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{c.getType()}, ValueRange{a, packed}, ValueRange{c},
        maps, iterators, [](OpBuilder &nb, Location loc, ValueRange args) {
          Value product = arith::MulFOp::create(nb, loc, args[0], args[1]);
          linalg::YieldOp::create(
              nb, loc,
              arith::AddFOp::create(nb, loc, args[2], product).getResult());
        });
    generic->setAttr(RecurDialect::kPanelGemmAttrName,
                     PanelGemmAttr::get(ctx, tile,
                                        inPlace ? PanelLayout::in_place
                                                : PanelLayout::packed));
    op->replaceAllUsesWith(generic->getResults());
    op->erase();
  }

  /// Packs a weight before the outermost loop around `op` that it is
  /// invariant in.
  void setInsertionPointForInvariant(Operation *op, Value weight) {
    Operation *before = op;
    for (Operation *parent = op->getParentOp();
         isa_and_nonnull<scf::ForOp>(parent) &&
         !parent->getRegion(0).isAncestor(weight.getParentRegion());
         parent = parent->getParentOp())
      before = parent;
    b.setInsertionPoint(before);
  }

  OpBuilder &b;
  Location loc;
  int64_t tile;
};

/// Rewrites `contraction` into the kernels' form if it is one of the three
/// (with `pack`; else only marks those already in it: d · w, and dᵀ · x
/// over one leading dimension), with its #recur.panel_gemm; returns whether
/// it did.
bool packContraction(linalg::GenericOp op, int64_t tile, bool pack) {
  Contraction contraction = operandsOf(op);
  MLIRContext *ctx = op.getContext();
  OpBuilder b(op);
  Packer packer(b, op.getLoc(), tile);
  unsigned loops = contraction.loops;
  unsigned rank = cast<RankedTensorType>(contraction.c.getType()).getRank();
  SmallVector<IteratorType> iterators = op.getIteratorTypesArray();
  auto parallelThenReduction = [&](unsigned parallel) {
    if (iterators.size() != loops)
      return false;
    for (unsigned dim = 0; dim < loops; ++dim)
      if ((iterators[dim] == IteratorType::parallel) != (dim < parallel))
        return false;
    return true;
  };
  const SmallVector<AffineMap> &maps = contraction.maps;

  if (loops == rank + 1 && parallelThenReduction(rank) &&
      isStaticF32(contraction.b, 2)) {
    SmallVector<unsigned> leading = range(0, rank - 1);
    // Loops (d.., c, r): the output's columns c and the reduction r. With
    // W[c, r] (x · wᵀ) the panels are W's rows, packed. (With W[r, c], d · w,
    // the panels are W's columns, which the kernels read in place: the
    // contraction is already in their form.)
    if (pack && maps[0] == dimsMap(loops, concat(leading, {rank}), ctx) &&
        maps[1] == dimsMap(loops, {rank - 1, rank}, ctx) &&
        maps[2] == dimsMap(loops, concat(leading, {rank - 1}), ctx)) {
      packer.setInsertionPointForInvariant(op, contraction.b);
      Value packed = packer.pack(contraction.b);
      b.setInsertionPoint(op);
      packer.replaceWithKernelForm(op, contraction.a, packed, contraction.c);
      return true;
    }
    if (maps[0] == dimsMap(loops, concat(leading, {rank}), ctx) &&
        maps[1] == dimsMap(loops, {rank, rank - 1}, ctx) &&
        maps[2] == dimsMap(loops, concat(leading, {rank - 1}), ctx)) {
      op->setAttr(RecurDialect::kPanelGemmAttrName,
                  PanelGemmAttr::get(ctx, tile, PanelLayout::in_place));
      return true;
    }
  }

  // dᵀ · x: C[n, k] += A[d.., n] * X[d.., k], loops (n, k, d..); with one
  // leading dimension already the kernels' form (A transposed, X in place).
  if (rank == 2 && loops >= 3 && parallelThenReduction(2) &&
      (pack || loops == 3)) {
    unsigned leadingRank = loops - 2;
    SmallVector<unsigned> leading = range(2, loops);
    if (maps[0] != dimsMap(loops, concat(leading, {0}), ctx) ||
        maps[1] != dimsMap(loops, concat(leading, {1}), ctx) ||
        maps[2] != dimsMap(loops, {0, 1}, ctx) ||
        !isRowsOfStaticF32(contraction.a, leadingRank + 1) ||
        !isRowsOfStaticF32(contraction.b, leadingRank + 1))
      return false;
    if (!pack) {
      op->setAttr(RecurDialect::kPanelGemmAttrName,
                  PanelGemmAttr::get(ctx, tile, PanelLayout::in_place));
      return true;
    }
    Location loc = op.getLoc();
    // Rows: the leading dimensions as one.
    auto collapse = [&](Value value) -> Value {
      if (leadingRank == 1)
        return value;
      ReassociationIndices rows;
      for (unsigned dim = 0; dim < leadingRank; ++dim)
        rows.push_back(dim);
      SmallVector<ReassociationIndices> groups = {rows, {leadingRank}};
      // Columns of whole rows (a piece of a concatenated sequence): the
      // columns of the collapsed whole, read with its row stride, since
      // the slice's own rows cannot be collapsed without a copy.
      if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
          slice && takesWholeRows(slice, leadingRank)) {
        Value whole =
            tensor::CollapseShapeOp::create(b, loc, slice.getSource(), groups);
        OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
        return tensor::ExtractSliceOp::create(
            b, loc, whole,
            ArrayRef<OpFoldResult>{zero, slice.getMixedOffsets()[leadingRank]},
            ArrayRef<OpFoldResult>{tensor::getMixedSize(b, loc, whole, 0),
                                   slice.getMixedSizes()[leadingRank]},
            ArrayRef<OpFoldResult>{one, one});
      }
      return tensor::CollapseShapeOp::create(b, loc, value, groups);
    };
    // The kernel reads d [rows, n] as it is (a tile's rows of C are
    // consecutive elements of one row of d at each step of the reduction),
    // and x [rows, k] too (a panel's row is a piece of a row of x).
    Value a = collapse(contraction.a), x = collapse(contraction.b);
    packer.replaceWithKernelForm(op, a, x, contraction.c, /*transposedA=*/true,
                                 /*inPlace=*/true);
    return true;
  }
  return false;
}

struct PackGemmOperandsPass
    : mlir::recur::impl::PackGemmOperandsBase<PackGemmOperandsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> contractions;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isContraction(op))
        contractions.push_back(op);
    });
    for (linalg::GenericOp op : contractions)
      packContraction(op, tile, pack);
  }
};

} // namespace
