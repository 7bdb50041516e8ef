//===- PackedMatmuls.cpp - a packed GEMM and what surrounds it ------------===//
//
// The packed GEMMs the kernels take, with what sets C before them (a bias,
// the step's input gates, a copy, zeros) and what follows (a fused step's
// cell, the rounding to bf16).
//
//===----------------------------------------------------------------------===//

#include "PackedMatmuls.h"
#include "../BufferViews.h"
#include "Contractions.h"
#include "ElementwiseVectors.h"
#include "LoopBuilders.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "recur/Codegen/CpuGemmTile.h"
#include "recur/Codegen/Passes.h"
#include "recur/Codegen/Passes.h.inc"
#include "recur/IR/RecurDialect.h"
#include "recur/IR/RecurOps.h"
#include "recur/Utils/Remarks.h"
#include "llvm/Support/Debug.h"
#include <algorithm>

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::cpu;
using utils::IteratorType;

namespace {

/// The op before `op` that may touch memory (ops without memory effects,
/// such as views, skipped), or null.
Operation *previousWithEffects(Operation *op) {
  Operation *previous = op->getPrevNode();
  while (previous && isMemoryEffectFree(previous) &&
         previous->getNumRegions() == 0)
    previous = previous->getPrevNode();
  return previous;
}

/// `view` = memref.expand_shape of a buffer whose last dimension it splits
/// into `parts` dimensions (the others kept); returns that buffer.
Value splitLastSource(Value view, unsigned parts) {
  auto expand = view.getDefiningOp<memref::ExpandShapeOp>();
  if (!expand)
    return {};
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  auto sourceType = cast<MemRefType>(expand.getSrc().getType());
  unsigned rank = sourceType.getRank();
  if (groups.size() != rank || groups.back().size() != parts ||
      !sourceType.isLastDimUnitStride())
    return {};
  for (unsigned dim = 0; dim + 1 < rank; ++dim)
    if (groups[dim].size() != 1)
      return {};
  return expand.getSrc();
}

bool isF32MemRef(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getElementType().isF32();
}

/// `fill` broadcasts a vector of C's last size along C's other dimensions.
Value matchBiasFill(linalg::GenericOp fill, Value output) {
  if (!fill || !fill.hasPureBufferSemantics() || fill.getNumDpsInputs() != 1 ||
      fill.getNumDpsInits() != 1 || fill.getDpsInits()[0] != output ||
      fill.getNumReductionLoops() != 0)
    return {};
  Value bias = fill.getDpsInputs()[0];
  auto outputType = cast<MemRefType>(output.getType());
  auto biasType = dyn_cast<MemRefType>(bias.getType());
  unsigned rank = outputType.getRank();
  MLIRContext *context = fill.getContext();
  Block &body = fill.getRegion().front();
  if (!biasType || biasType.getRank() != 1 || !isF32MemRef(bias) ||
      biasType.getShape() != outputType.getShape().take_back() ||
      body.getOperations().size() != 1 ||
      body.getTerminator()->getOperand(0) != body.getArgument(0))
    return {};
  SmallVector<AffineMap> expected = {
      AffineMap::get(rank, 0, getAffineDimExpr(rank - 1, context)),
      AffineMap::getMultiDimIdentityMap(rank, context)};
  return fill.getIndexingMapsArray() == expected ? bias : Value();
}

/// C [d..., N] set by `transpose` from the [d..., 4, Q, K] view of a
/// [d..., N] buffer into C's [d..., Q, 4, K] view, with panels of 4K
/// columns (the four gates of K units) and K a multiple of the vector width.
bool matchGateTranspose(linalg::TransposeOp transpose, PackedMatmul &matmul,
                        int64_t vectorWidth) {
  if (!transpose || !transpose.hasPureBufferSemantics())
    return false;
  auto outputType = cast<MemRefType>(matmul.output.getType());
  unsigned rank = outputType.getRank();
  Value source = splitLastSource(transpose.getInput(), 3);
  if (!source || splitLastSource(transpose.getInit(), 3) != matmul.output)
    return false;
  auto sourceType = cast<MemRefType>(source.getType());
  ArrayRef<int64_t> split =
      transpose.getInit().getType().getShape().take_back(3);
  int64_t gateTile = split[2];
  SmallVector<int64_t> permutation =
      llvm::to_vector(llvm::seq<int64_t>(0, rank + 2));
  std::swap(permutation[rank - 1], permutation[rank]);
  int64_t tile = matmul.tile;
  if (matmul.inPlaceWeight || split[1] != 4 || tile != 4 * gateTile ||
      gateTile % vectorWidth != 0 ||
      sourceType.getShape() != outputType.getShape() ||
      !sourceType.getElementType().isF32() ||
      transpose.getPermutation() != ArrayRef(permutation))
    return false;
  matmul.gateSource = source;
  matmul.gateTile = gateTile;
  return true;
}

/// The gates of `cell` whose one use adds an input operand used for nothing
/// else: x_t's part of a gate's sum, which the tile can start from (see
/// FusedCell::startOperand).
void matchStartOperands(FusedCell &cell) {
  Block &body = cell.op.getRegion().front();
  SmallVector<int64_t> readers(cell.startOperand.size(), 0);
  for (int64_t gate : cell.gateOf)
    if (gate >= 0)
      ++readers[gate];
  for (auto [number, gate] : llvm::enumerate(cell.gateOf)) {
    BlockArgument sum = body.getArgument(number);
    if (gate < 0 || readers[gate] != 1 || !sum.hasOneUse())
      continue;
    auto add = dyn_cast<arith::AddFOp>(*sum.getUsers().begin());
    if (!add)
      continue;
    auto input = dyn_cast<BlockArgument>(add.getLhs() == sum ? add.getRhs()
                                                             : add.getLhs());
    if (!input || input == sum || input.getOwner() != &body ||
        !input.hasOneUse() ||
        input.getArgNumber() >= cell.op.getNumDpsInputs() ||
        cell.gateOf[input.getArgNumber()] >= 0 ||
        cell.columns[input.getArgNumber()] ||
        llvm::is_contained(cell.startOperand, input.getArgNumber()))
      continue;
    cell.startOperand[gate] = input.getArgNumber();
    cell.startAdds.push_back(add);
  }
}

/// The cell that follows a contraction into gate-interleaved C (see
/// FusedCell), if its kernel can run on the tiles: every buffer it writes is
/// an allocation of its own, which no tile reads. The gate tile K is the
/// LSTM's (matmul.gateTile) or, for another cell, read from the cell's view
/// of C ([d..., Q, G, K] with G K the panel's columns).
std::optional<FusedCell> matchFusedCell(const PackedMatmul &matmul,
                                        int64_t vectorWidth) {
  auto op = dyn_cast_or_null<linalg::GenericOp>(nextWithEffects(matmul.op));
  unsigned rank = cast<MemRefType>(matmul.output.getType()).getRank();
  if (!op || !op.hasPureBufferSemantics() || op.getNumLoops() != rank + 1 ||
      op.getNumParallelLoops() != rank + 1 || matmul.inPlaceWeight ||
      !isElementwiseF32Body(op.getRegion().front()))
    return std::nullopt;
  MLIRContext *context = op.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank + 1, context);
  // A [Q * K] vector read at (q, l): a column operand (a peephole weight).
  AffineMap unitsOnly = AffineMap::get(
      rank + 1, 0,
      {getAffineDimExpr(rank - 1, context), getAffineDimExpr(rank, context)},
      context);
  FusedCell cell{op, matmul.gateTile, {}, {}, {}, {}, {}, {}, {}};
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (splitLastSource(operand.get(), 3) == matmul.output) {
      // C as [d..., Q, G, K], read at (d..., q, l) -> (d..., q, g, l).
      ArrayRef<int64_t> split =
          cast<MemRefType>(operand.get().getType()).getShape().take_back(3);
      if (!cell.gateTile)
        cell.gateTile = split[2];
      auto gate = map.getNumResults() == rank + 2
                      ? dyn_cast<AffineConstantExpr>(map.getResult(rank))
                      : AffineConstantExpr();
      if (op.isDpsInit(&operand) || split[1] * split[2] != matmul.tile ||
          split[2] != cell.gateTile || cell.gateTile % vectorWidth != 0 ||
          !gate || gate.getValue() < 0 || gate.getValue() >= split[1] ||
          map.dropResult(rank) != identity)
        return std::nullopt;
      cell.gateOf.push_back(gate.getValue());
      cell.unitBuffers.push_back({});
      cell.columns.push_back(false);
      continue;
    }
    auto type = cast<MemRefType>(operand.get().getType());
    bool column = map == unitsOnly && !op.isDpsInit(&operand);
    Value buffer = splitLastSource(operand.get(), 2);
    // An output allocated as [d..., Q, K] (bufferization's for an empty
    // tensor expanded so): the kernel views it as [d..., Q * K].
    if (!buffer && op.isDpsInit(&operand) && ownAllocation(operand.get()) &&
        type.getLayout().isIdentity())
      buffer = operand.get();
    if (!buffer || (map != identity && !column) ||
        !type.getElementType().isF32() ||
        type.getRank() != (column ? 2 : int64_t(rank) + 1) ||
        !definedBefore(buffer, matmul.op))
      return std::nullopt;
    cell.gateOf.push_back(-1);
    cell.unitBuffers.push_back(buffer);
    cell.columns.push_back(column);
  }
  // Every operand's last dimension is K, the tile's units.
  if (!cell.gateTile || !llvm::all_of(op->getOperands(), [&](Value operand) {
        return cast<MemRefType>(operand.getType()).getShape().back() ==
               cell.gateTile;
      }))
    return std::nullopt;
  // What the tiles read must not change under them: the outputs are
  // allocations distinct from A, W, C, the gate source, each other and the
  // cell's inputs (but the input an output updates in place, read at the
  // same elements only).
  SmallVector<Value> tileReads = {matmul.input,  matmul.weight,
                                  matmul.output, matmul.gateSource,
                                  matmul.bias,   matmul.initial};
  SmallVector<Value> cellReads, written;
  for (auto [operand, buffer] :
       llvm::zip(op->getOpOperands(), cell.unitBuffers))
    if (buffer && !op.isDpsInit(&operand))
      cellReads.push_back(buffer);
  for (OpOperand &init : op.getDpsInitsMutable()) {
    Value buffer = cell.unitBuffers[init.getOperandNumber()];
    memref::AllocOp root = rootAllocation(buffer);
    auto sharesRoot = [&](Value other) {
      return other && rootBuffer(other) == root.getResult();
    };
    if (!root || llvm::any_of(tileReads, sharesRoot) ||
        llvm::any_of(written, sharesRoot) ||
        llvm::any_of(cellReads, [&](Value other) {
          return other != buffer && sharesRoot(other);
        }))
      return std::nullopt;
    written.push_back(buffer);
  }
  SmallVector<Value> operands;
  for (Value read : tileReads)
    if (read)
      operands.push_back(read);
  llvm::append_range(operands, cellReads);
  llvm::append_range(operands, written);
  cell.copy = matchCopiedOutput(op, written, operands, matmul.op, cell.copied);
  cell.startOperand.assign(matmul.tile / cell.gateTile, -1);
  if (!matmul.gateSource)
    matchStartOperands(cell);
  return cell;
}

/// `fill` sets all of `output` to 0.
bool isZeroFill(linalg::FillOp fill, Value output) {
  if (!fill || !fill.hasPureBufferSemantics() || fill.getOutputs()[0] != output)
    return false;
  auto value = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto zero = value ? dyn_cast<FloatAttr>(value.getValue()) : FloatAttr();
  return zero && zero.getValue().isPosZero();
}

} // namespace

/// Whether `buffer`, or a view of it, is used by anything but views,
/// deallocations, size queries and `ignored` ops.
bool mlir::recur::cpu::usedElsewhere(Value buffer,
                                     const DenseSet<Operation *> &ignored) {
  for (Operation *user : buffer.getUsers()) {
    if (ignored.contains(user) || isa<memref::DeallocOp, memref::DimOp>(user))
      continue;
    auto view = dyn_cast<ViewLikeOpInterface>(user);
    if (!view || view.getViewSource() != buffer ||
        usedElsewhere(view->getResult(0), ignored))
      return true;
  }
  return false;
}

/// The generic after the contraction that rounds C, an allocation of its
/// own that nothing else reads, to a bf16 buffer of C's shape (see
/// PackedMatmul::rounding).
void mlir::recur::cpu::matchRounding(PackedMatmul &matmul) {
  // Past the allocation of the rounded buffer, if that comes first.
  Operation *next = nextWithEffects(matmul.op);
  while (isa_and_nonnull<memref::AllocOp>(next))
    next = nextWithEffects(next);
  auto op = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!op || !op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getDpsInputs()[0] != matmul.output ||
      op.getNumReductionLoops() != 0 ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return;
  Block &body = op.getRegion().front();
  auto truncation = dyn_cast<arith::TruncFOp>(&body.front());
  Value target = op.getDpsInits()[0];
  auto targetType = cast<MemRefType>(target.getType());
  if (body.getOperations().size() != 2 || !truncation ||
      truncation.getIn() != body.getArgument(0) ||
      body.getTerminator()->getOperand(0) != truncation.getResult() ||
      !targetType.getElementType().isBF16() ||
      targetType.getShape() !=
          cast<MemRefType>(matmul.output.getType()).getShape() ||
      !targetType.isLastDimUnitStride())
    return;
  // The kernel writes the target while tiles still read A, W and what C
  // starts from: it must be an allocation of its own (bufferization's, right
  // before the rounding, whose sizes are known before the kernel).
  memref::AllocOp targetRoot = rootAllocation(target);
  auto sharesTarget = [&](Value read) {
    return read && rootBuffer(read) == targetRoot.getResult();
  };
  if (!targetRoot ||
      llvm::any_of(ArrayRef<Value>{matmul.input, matmul.weight, matmul.bias,
                                   matmul.initial, matmul.output,
                                   matmul.gateSource},
                   sharesTarget))
    return;
  auto allocation = target.getDefiningOp<memref::AllocOp>();
  if (!definedBefore(target, matmul.op) &&
      (!allocation || !llvm::all_of(allocation->getOperands(), [&](Value size) {
        return definedBefore(size, matmul.op);
      })))
    return;
  memref::AllocOp root = rootAllocation(matmul.output);
  DenseSet<Operation *> readers = {matmul.op, op};
  if (matmul.initialization)
    readers.insert(matmul.initialization);
  if (!root || root.getResult() != matmul.output ||
      usedElsewhere(root.getResult(), readers))
    return;
  matmul.rounding = op;
  matmul.rounded = target;
}

/// `bf16Vectors`: the target converts bf16 vectors natively (see
/// VectorizeElementwise's bf16-vectors).
std::optional<PackedMatmul>
mlir::recur::cpu::matchPackedMatmul(linalg::GenericOp op, int64_t vectorWidth,
                                    bool bf16Vectors) {
  // Which contractions are panel GEMMs, and their layout, is the
  // conversion's decision; the dialect has checked W's map against it.
  auto config =
      op->getAttrOfType<PanelGemmAttr>(RecurDialect::kPanelGemmAttrName);
  if (!config || !op.hasPureBufferSemantics())
    return std::nullopt;
  PackedMatmul matmul;
  matmul.op = op;
  matmul.input = op.getDpsInputs()[0];
  matmul.weight = op.getDpsInputs()[1];
  matmul.output = op.getDpsInits()[0];
  auto isBf16MemRef = [](Value value) {
    auto type = dyn_cast<MemRefType>(value.getType());
    return type && type.getElementType().isBF16();
  };
  matmul.pairs = config.getLayout() == PanelLayout::pairs;
  matmul.inPlaceWeight = config.getLayout() == PanelLayout::in_place;
  matmul.tile = config.getTile();
  if ((matmul.pairs
           ? !isBf16MemRef(matmul.input) || !isBf16MemRef(matmul.weight)
           : !isF32MemRef(matmul.input) || !isF32MemRef(matmul.weight)) ||
      !isF32MemRef(matmul.output))
    return std::nullopt;
  auto inputType = cast<MemRefType>(matmul.input.getType());
  auto weightType = cast<MemRefType>(matmul.weight.getType());
  auto outputType = cast<MemRefType>(matmul.output.getType());
  unsigned rank = outputType.getRank();
  if (matmul.pairs &&
      (weightType.getRank() != 4 || weightType.getDimSize(3) != 2 ||
       !inputType.isLastDimUnitStride()))
    return std::nullopt;
  // A packed W [P, K, t] (in pairs, [P, K / 2, t, 2]), or a [K, N] one read
  // in place in panels of t columns.
  // An in-place W may have a dynamic K (a weight gradient's T x B rows).
  if (weightType.getRank() != (matmul.inPlaceWeight ? 2
                               : matmul.pairs       ? 4
                                                    : 3) ||
      (matmul.inPlaceWeight ? weightType.isDynamicDim(1)
                            : !weightType.hasStaticShape()) ||
      inputType.getRank() != rank ||
      (matmul.inPlaceWeight ? !weightType.isLastDimUnitStride()
                            : !weightType.getLayout().isIdentity()) ||
      !outputType.isLastDimUnitStride() || outputType.isDynamicDim(rank - 1))
    return std::nullopt;
  int64_t columns = outputType.getDimSize(rank - 1);
  int64_t tile = matmul.tile,
          depth = (matmul.pairs ? 2 : 1) *
                  weightType.getDimSize(matmul.inPlaceWeight ? 0 : 1),
          panels = matmul.inPlaceWeight ? llvm::divideCeilSigned(columns, tile)
                                        : weightType.getDimSize(0);
  if (tile <= 0 || tile % vectorWidth != 0 ||
      panels != llvm::divideCeilSigned(columns, tile) ||
      (matmul.inPlaceWeight && weightType.getDimSize(1) != columns))
    return std::nullopt;

  // Loops (d..., n, k), k the only reduction.
  SmallVector<IteratorType> iterators(rank + 1, IteratorType::parallel);
  iterators.back() = IteratorType::reduction;
  if (op.getIteratorTypesArray() != iterators ||
      !isMultiplyAccumulate(op, /*extendedInputs=*/matmul.pairs))
    return std::nullopt;
  MLIRContext *context = op.getContext();
  SmallVector<AffineExpr> leading;
  for (unsigned dim = 0; dim + 1 < rank; ++dim)
    leading.push_back(getAffineDimExpr(dim, context));
  AffineExpr n = getAffineDimExpr(rank - 1, context),
             k = getAffineDimExpr(rank, context);
  auto withLast = [&](AffineExpr last) {
    SmallVector<AffineExpr> exprs = leading;
    exprs.push_back(last);
    return AffineMap::get(rank + 1, 0, exprs, context);
  };
  SmallVector<AffineMap> expected = {
      withLast(k),
      matmul.inPlaceWeight ? AffineMap::get(rank + 1, 0, {k, n}, context)
      : matmul.pairs
          ? AffineMap::get(rank + 1, 0,
                           {n.floorDiv(tile), k.floorDiv(2), n % tile, k % 2},
                           context)
          : AffineMap::get(rank + 1, 0, {n.floorDiv(tile), k, n % tile},
                           context),
      withLast(n)};
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (rank == 2 && !matmul.pairs &&
      maps[0] == AffineMap::get(3, 0, {k, leading[0]}, context)) {
    matmul.transposedInput = true;
    expected[0] = maps[0];
  }
  if (maps != expected ||
      inputType.getDimSize(matmul.transposedInput ? 0 : rank - 1) != depth)
    return std::nullopt;

  // What C was set to right before: the tiles start from it instead.
  Operation *previous = previousWithEffects(op);
  if (matchGateTranspose(dyn_cast_or_null<linalg::TransposeOp>(previous),
                         matmul, vectorWidth)) {
    matmul.initialization = previous;
  } else if (isZeroFill(dyn_cast_or_null<linalg::FillOp>(previous),
                        matmul.output)) {
    matmul.zeroStart = true;
    matmul.initialization = previous;
  } else if (Value bias =
                 matchBiasFill(dyn_cast_or_null<linalg::GenericOp>(previous),
                               matmul.output)) {
    matmul.bias = bias;
    matmul.initialization = previous;
  } else if (auto copy = dyn_cast_or_null<linalg::CopyOp>(previous)) {
    // A fresh C (an allocation, or a view of one's leading rows) cannot
    // alias the source it was copied from, but for a view of its own buffer.
    Value source = copy.getInputs()[0];
    auto sourceType = dyn_cast<MemRefType>(source.getType());
    if (copy.getOutputs()[0] == matmul.output && ownAllocation(matmul.output) &&
        rootBuffer(source) != rootBuffer(matmul.output) && sourceType &&
        sourceType.getShape() == outputType.getShape() &&
        sourceType.getElementType() == outputType.getElementType() &&
        sourceType.isLastDimUnitStride()) {
      matmul.initial = source;
      matmul.initialization = copy;
    }
  }
  // A dynamic K runs in chunks that all start from C: what set C stays.
  if (ShapedType::isDynamic(depth)) {
    if (matmul.gateSource)
      return std::nullopt;
    matmul.bias = matmul.initial = Value();
    matmul.zeroStart = false;
    matmul.initialization = nullptr;
  } else if ((matmul.cell = matchFusedCell(matmul, vectorWidth))) {
    matmul.gateTile = matmul.cell->gateTile;
  }
  if (!matmul.cell && bf16Vectors)
    matchRounding(matmul);
  return matmul;
}
