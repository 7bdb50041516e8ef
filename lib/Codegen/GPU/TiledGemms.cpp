//===- TiledGemms.cpp - GEMMs as shared-memory, register-tiled kernels ----===//
//
// Mapped like any loop nest, a GEMM gets one thread per output element, whose
// reduction loop reads both operands from global memory and accumulates in
// the output: two loads and a load-store per multiply-add. Here each GEMM
// that recur-gpu-kernel-config gave a #recur.gpu_gemm becomes a kernel of
// the classic SIMT form (or, at tf32 and bf16, MmaGemms.cpp's): a block
// computes a tile of the output, staging k-slices of both operands in shared
// memory; each thread keeps a small tile of accumulators in registers and
// reads the operands it needs from shared memory; the next slice is loaded
// from global memory (vectorized where alignment allows) while the current
// one is multiplied.
//
//===----------------------------------------------------------------------===//

#include "GemmKernels.h"
#include "recur/Codegen/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUTILEDGEMMS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::gemm;

//===----------------------------------------------------------------------===//
// What both kernel forms share (GemmKernels.h)
//===----------------------------------------------------------------------===//

/// Whether `op`'s body is that of a GEMM with active rows: `c + a * b`
/// where `index(tDim) < lengths`, else c.
static bool isActiveRowsBody(linalg::GenericOp op, unsigned tDim) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto select = yield.getValues()[0].getDefiningOp<arith::SelectOp>();
  Value c = body.getArguments().back();
  if (!select || select.getFalseValue() != c)
    return false;
  auto sum = select.getTrueValue().getDefiningOp<arith::AddFOp>();
  if (!sum || !llvm::is_contained(sum->getOperands(), c))
    return false;
  auto product = (sum.getLhs() == c ? sum.getRhs() : sum.getLhs())
                     .getDefiningOp<arith::MulFOp>();
  if (!product || product.getLhs() != body.getArgument(0) ||
      product.getRhs() != body.getArgument(1))
    return false;
  auto active = select.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!active || active.getPredicate() != arith::CmpIPredicate::slt ||
      active.getRhs() != body.getArgument(2))
    return false;
  auto cast = active.getLhs().getDefiningOp<arith::IndexCastOp>();
  auto index = cast ? cast.getIn().getDefiningOp<linalg::IndexOp>() : nullptr;
  return index && index.getDim() == tDim;
}

std::optional<Gemm> mlir::recur::gemm::matchGemm(linalg::GenericOp op,
                                                 std::string *whyNot) {
  bool activeRows = op->hasAttr(RecurDialect::kActiveRowsAttrName);
  if (!op.hasPureBufferSemantics() ||
      (activeRows ? op.getNumDpsInputs() < 4 || op.getNumDpsInputs() > 5
                  : op.getNumDpsInputs() != 2) ||
      op.getNumDpsInits() != 1 ||
      (!activeRows && !linalg::isaContractionOpInterface(op)))
    return std::nullopt;
  auto refuse = [&](StringRef reason) -> std::optional<Gemm> {
    if (whyNot)
      *whyNot = reason.str();
    return std::nullopt;
  };
  FailureOr<linalg::ContractionDimensions> dims =
      activeRows ? linalg::inferContractionDims(ArrayRef<AffineMap>{
                       op.getMatchingIndexingMap(op.getDpsInputOperand(0)),
                       op.getMatchingIndexingMap(op.getDpsInputOperand(1)),
                       op.getMatchingIndexingMap(op.getDpsInitOperand(0))})
                 : linalg::inferContractionDims(op);
  if (failed(dims) || !dims->batch.empty() || dims->m.empty() ||
      dims->n.empty())
    return refuse("it is not a matrix product of an m by k and a k by n "
                  "operand");
  if (dims->k.size() != 1)
    return refuse("it sums over more than one dimension (a weight "
                  "gradient's over T and B)");
  Gemm gemm{op,
            op.getDpsInputOperand(0),
            op.getDpsInputOperand(1),
            op.getDpsInitOperand(0),
            {},
            {},
            dims->k.front()};
  for (OpOperand *operand : {gemm.a, gemm.b, gemm.c}) {
    auto type = dyn_cast<MemRefType>(operand->get().getType());
    if (!type || !type.getElementType().isF32())
      return refuse("an operand is not an f32 buffer");
    if (!op.getMatchingIndexingMap(operand).isProjectedPermutation())
      return refuse("an operand's indexing is not a projected permutation");
  }
  // Each operand indexes its own loop dimensions once, k last.
  auto indexes = [&](OpOperand *operand, ArrayRef<unsigned> rowDims) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    return map.getNumResults() == rowDims.size() + 1 &&
           map.getDimPosition(map.getNumResults() - 1) == gemm.kDim;
  };
  AffineMap cMap = op.getMatchingIndexingMap(gemm.c);
  for (unsigned i = 0; i < cMap.getNumResults(); ++i) {
    unsigned dim = cMap.getDimPosition(i);
    (llvm::is_contained(dims->m, dim) ? gemm.mDims : gemm.nDims).push_back(dim);
  }
  if (!indexes(gemm.a, gemm.mDims) || !indexes(gemm.b, gemm.nDims))
    return refuse("k is not the innermost index of both operands (a "
                  "product with a weight, not its transpose)");
  if (!activeRows)
    return gemm;
  // (x, w, lengths [B], tokens before each step [T][, order [B]]) over
  // rows (t, b).
  gemm.lengths = op.getDpsInputOperand(2);
  gemm.tokensBefore = op.getDpsInputOperand(3);
  if (op.getNumDpsInputs() == 5)
    gemm.order = op.getDpsInputOperand(4);
  auto indexedBy = [&](OpOperand *operand, unsigned dim) {
    auto type = dyn_cast<MemRefType>(operand->get().getType());
    AffineMap map = op.getMatchingIndexingMap(operand);
    return type && type.getRank() == 1 &&
           type.getElementType().isSignlessInteger() &&
           map.getNumResults() == 1 && map.getResult(0).isFunctionOfDim(dim) &&
           map.isProjectedPermutation();
  };
  if (gemm.mDims.size() != 2 || !indexedBy(gemm.lengths, gemm.mDims[1]) ||
      !indexedBy(gemm.tokensBefore, gemm.mDims[0]) ||
      (gemm.order && !indexedBy(gemm.order, gemm.mDims[1])) ||
      !isActiveRowsBody(op, gemm.mDims[0]))
    return refuse("its rows are not (t, b) with a product for t < "
                  "lengths[b] and the tokens before each step");
  return gemm;
}

/// The buffer that `value` is a view of.
static Value rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

bool mlir::recur::gemm::canLoadRowVectors(Value buffer, int64_t width) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getLayout().isIdentity()) {
    // Every stride is a multiple of the innermost extent.
    int64_t innermost = type.getShape().back();
    if (ShapedType::isDynamic(innermost) || innermost % width != 0)
      return false;
  } else {
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) ||
        strides.back() != 1 || ShapedType::isDynamic(offset) ||
        offset % width != 0)
      return false;
    for (int64_t stride : ArrayRef(strides).drop_back())
      if (ShapedType::isDynamic(stride) || stride % width != 0)
        return false;
  }
  auto argument = dyn_cast<BlockArgument>(rootBuffer(buffer));
  if (!argument)
    return true;
  auto func = dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp());
  return func && !func.getArgAttr(argument.getArgNumber(), "recur.input");
}

namespace {

/// Whether each `width` consecutive k elements of `operand`, starting at
/// multiples of `width`, can be loaded as one aligned vector: K is a
/// multiple of `kTile` (no slice runs past it) and the buffer's rows allow
/// it (canLoadRowVectors).
bool canLoadVectors(OpOperand *operand, Value depth, int64_t kTile,
                    int64_t width) {
  std::optional<int64_t> k = getConstantIntValue(depth);
  return k && *k % kTile == 0 && canLoadRowVectors(operand->get(), width);
}

/// The values of `dims` at linear index `linear` (row-major over their
/// extents), by loop dimension.
void delinearize(OpBuilder &b, Location loc, Value linear,
                 ArrayRef<unsigned> dims, ArrayRef<Value> extents,
                 SmallVectorImpl<Value> &byDim) {
  SmallVector<Value> basis;
  for (unsigned dim : dims)
    basis.push_back(extents[dim]);
  SmallVector<Value> values =
      *affine::delinearizeIndex(b, loc, linear, basis, /*hasOuterBound=*/true);
  for (auto [dim, value] : llvm::zip_equal(dims, values))
    byDim[dim] = value;
}

Value product(OpBuilder &b, Location loc, ArrayRef<unsigned> dims,
              ArrayRef<Value> extents) {
  Value result = arith::ConstantIndexOp::create(b, loc, 1);
  for (unsigned dim : dims)
    result = arith::MulIOp::create(b, loc, result, extents[dim]);
  return result;
}

} // namespace

GemmLaunch mlir::recur::gemm::createGemmLaunch(RewriterBase &rewriter,
                                               const Gemm &gemm, int64_t tileM,
                                               int64_t tileN, int64_t threads,
                                               StringRef name) {
  linalg::GenericOp op = gemm.op;
  Location loc = op.getLoc();
  MLIRContext *context = rewriter.getContext();
  rewriter.setInsertionPoint(op);
  GemmLaunch result;
  for (Range range : cast<linalg::LinalgOp>(op.getOperation())
                         .createLoopRanges(rewriter, loc))
    result.extents.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, range.size));
  result.rows = product(rewriter, loc, gemm.mDims, result.extents);
  result.columns = product(rewriter, loc, gemm.nDims, result.extents);
  result.depth = result.extents[gemm.kDim];
  auto constant = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value one = constant(rewriter, 1);
  result.launch = gpu::LaunchOp::create(
      rewriter, loc,
      arith::CeilDivUIOp::create(rewriter, loc, result.rows,
                                 constant(rewriter, tileM)),
      arith::CeilDivUIOp::create(rewriter, loc, result.columns,
                                 constant(rewriter, tileN)),
      one, constant(rewriter, threads), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{},
      /*workgroupAttributions=*/{}, /*privateAttributions=*/{}, nullptr,
      nullptr, nullptr, FlatSymbolRefAttr::get(context, name),
      FlatSymbolRefAttr::get(context, name));
  Block &body = result.launch.getBody().front();
  rewriter.setInsertionPointToStart(&body);
  result.bodyEnd = gpu::TerminatorOp::create(rewriter, loc);
  rewriter.setInsertionPointToStart(&body);
  result.threadId = result.launch.getThreadIds().x;
  result.rowTile = arith::MulIOp::create(
      rewriter, loc, result.launch.getBlockIds().x, constant(rewriter, tileM));
  result.columnTile = arith::MulIOp::create(
      rewriter, loc, result.launch.getBlockIds().y, constant(rewriter, tileN));
  if (gemm.lengths) {
    // Tokens are numbered first: a block past the last one has none.
    Value anyToken =
        result.tokenRow(rewriter, loc, gemm, result.rowTile).inside;
    auto ifTokens = scf::IfOp::create(rewriter, loc, anyToken,
                                      /*withElseRegion=*/false);
    result.bodyEnd = ifTokens.thenBlock()->getTerminator();
  }
  return result;
}

GemmLaunch::Row GemmLaunch::tokenRow(OpBuilder &b, Location loc,
                                     const Gemm &gemm, Value token) const {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value one = constant(1);
  Row result;
  result.byDim.resize(extents.size());
  unsigned tDim = gemm.mDims[0], bDim = gemm.mDims[1];
  Value steps = extents[tDim], batch = extents[bDim];
  Value before = gemm.tokensBefore->get(), lengths = gemm.lengths->get();
  auto loadIndex = [&](OpBuilder &b, Value buffer, Value at) -> Value {
    return arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, buffer, ValueRange{at}));
  };
  // The token's step: the last t with before[t] <= token, bisecting [lo, hi)
  // (before[0] = 0).
  Type index = b.getIndexType();
  auto bisection = scf::WhileOp::create(
      b, loc, TypeRange{index, index}, ValueRange{constant(0), steps},
      [&](OpBuilder &b, Location loc, ValueRange bounds) {
        Value width = arith::SubIOp::create(b, loc, bounds[1], bounds[0]);
        scf::ConditionOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, width,
                                  one),
            bounds);
      },
      [&](OpBuilder &b, Location loc, ValueRange bounds) {
        Value middle = arith::ShRUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, bounds[0], bounds[1]), one);
        Value atOrBefore =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                  loadIndex(b, before, middle), token);
        scf::YieldOp::create(
            b, loc,
            ValueRange{
                arith::SelectOp::create(b, loc, atOrBefore, middle, bounds[0]),
                arith::SelectOp::create(b, loc, atOrBefore, bounds[1],
                                        middle)});
      });
  Value t = bisection.getResult(0);
  Value offset = arith::SubIOp::create(b, loc, token, loadIndex(b, before, t));
  Value rowOfBatch = arith::MinUIOp::create(
      b, loc, offset, arith::SubIOp::create(b, loc, batch, one));
  if (gemm.order)
    rowOfBatch = loadIndex(b, gemm.order->get(), rowOfBatch);
  Value length =
      memref::LoadOp::create(b, loc, lengths, ValueRange{rowOfBatch});
  Value time = arith::IndexCastOp::create(b, loc, length.getType(), t);
  result.inside = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, offset, batch),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, time, length));
  result.byDim[tDim] = t;
  result.byDim[bDim] = rowOfBatch;
  return result;
}

Value GemmLaunch::addSharedBuffer(ArrayRef<int64_t> shape, Type elementType) {
  MLIRContext *context = launch.getContext();
  auto workgroup =
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
  return launch.addWorkgroupAttribution(
      MemRefType::get(shape, elementType, AffineMap(), workgroup),
      launch.getLoc());
}

void GemmLaunch::accumulate(
    OpBuilder &b, const Gemm &gemm, Value row,
    ArrayRef<std::pair<Value, Value>> columnSums) const {
  Location loc = launch->getLoc();
  linalg::GenericOp op = gemm.op;
  AffineMap cMap = op.getMatchingIndexingMap(gemm.c);
  Row token;
  if (gemm.lengths)
    token = tokenRow(b, loc, gemm, row);
  Value rowInside =
      gemm.lengths
          ? token.inside
          : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, rows);
  scf::IfOp::create(b, loc, rowInside, [&](OpBuilder &b, Location loc) {
    SmallVector<Value> byDim = token.byDim;
    if (!gemm.lengths) {
      byDim.resize(extents.size());
      delinearize(b, loc, row, gemm.mDims, extents, byDim);
    }
    for (const auto &columnSum : columnSums) {
      Value column = columnSum.first, sum = columnSum.second;
      Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           column, columns);
      scf::IfOp::create(b, loc, inside, [&](OpBuilder &b, Location loc) {
        delinearize(b, loc, column, gemm.nDims, extents, byDim);
        SmallVector<Value> indices;
        for (unsigned r = 0; r < cMap.getNumResults(); ++r)
          indices.push_back(byDim[cMap.getDimPosition(r)]);
        Value c = gemm.c->get();
        Value total = arith::AddFOp::create(
            b, loc, memref::LoadOp::create(b, loc, c, indices), sum);
        memref::StoreOp::create(b, loc, total, c, indices);
        scf::YieldOp::create(b, loc);
      });
    }
    scf::YieldOp::create(b, loc);
  });
}

OperandSlices mlir::recur::gemm::makeOperandSlices(
    OpBuilder &b, Location loc, const GemmLaunch &launch, const Gemm &gemm,
    OpOperand *operand, ArrayRef<unsigned> rowDims, int64_t tileRows,
    Value tileStart, Value rowCount, int64_t kTile, int64_t width,
    int64_t threads) {
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  OperandSlices slices;
  slices.operand = operand;
  linalg::GenericOp op = gemm.op;
  slices.map = op.getMatchingIndexingMap(operand);
  slices.width = width;
  slices.vectorLoads = canLoadVectors(operand, launch.depth, kTile, width);
  slices.depth = launch.depth;
  slices.kTileSize = kTile;
  slices.kDim = gemm.kDim;
  Value partsPerRow = constant(kTile / width);
  int64_t partCount = tileRows * kTile / (width * threads);
  for (int64_t p = 0; p < partCount; ++p) {
    Value part = launch.threadId;
    if (p > 0)
      part = arith::AddIOp::create(b, loc, part, constant(p * threads));
    OperandSlices::Part &slicePart = slices.parts.emplace_back();
    slicePart.row = arith::DivUIOp::create(b, loc, part, partsPerRow);
    slicePart.kOffset = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, part, partsPerRow),
        constant(width));
    Value row = arith::AddIOp::create(b, loc, tileStart, slicePart.row);
    if (gemm.lengths && operand == gemm.a) {
      slicePart.rowIndices = launch.tokenRow(b, loc, gemm, row).byDim;
      continue;
    }
    row = arith::MinUIOp::create(
        b, loc, row, arith::SubIOp::create(b, loc, rowCount, constant(1)));
    slicePart.rowIndices.resize(launch.extents.size());
    delinearize(b, loc, row, rowDims, launch.extents, slicePart.rowIndices);
  }
  return slices;
}

VectorType OperandSlices::registerType() const {
  return VectorType::get({width},
                         Float32Type::get(operand->get().getContext()));
}

SmallVector<Value> OperandSlices::zeros(OpBuilder &b, Location loc) const {
  return SmallVector<Value>(
      parts.size(), arith::ConstantOp::create(
                        b, loc, DenseElementsAttr::get(registerType(), 0.0f)));
}

SmallVector<Value> OperandSlices::load(OpBuilder &b, Location loc,
                                       Value kTile) const {
  SmallVector<Value> loaded;
  for (const Part &part : parts) {
    Value k0 = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(
            b, loc, kTile, arith::ConstantIndexOp::create(b, loc, kTileSize)),
        part.kOffset);
    auto indicesAt = [&](Value k) {
      SmallVector<Value> indices;
      for (unsigned i = 0; i < map.getNumResults(); ++i) {
        unsigned dim = map.getDimPosition(i);
        indices.push_back(dim == kDim ? k : part.rowIndices[dim]);
      }
      return indices;
    };
    if (vectorLoads) {
      loaded.push_back(vector::LoadOp::create(
          b, loc, registerType(), operand->get(), indicesAt(k0),
          /*nontemporal=*/false, llvm::MaybeAlign(width * 4)));
      continue;
    }
    // Past K, a slice holds zeros: they add nothing to the sums.
    Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    SmallVector<Value> elements;
    for (int64_t w = 0; w < width; ++w) {
      Value k = arith::AddIOp::create(
          b, loc, k0, arith::ConstantIndexOp::create(b, loc, w));
      Value inside =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, k, depth);
      Value safeK = arith::SelectOp::create(b, loc, inside, k, zeroIndex);
      Value element =
          memref::LoadOp::create(b, loc, operand->get(), indicesAt(safeK));
      elements.push_back(
          arith::SelectOp::create(b, loc, inside, element, zero));
    }
    loaded.push_back(
        vector::FromElementsOp::create(b, loc, registerType(), elements));
  }
  return loaded;
}

SmallVector<Value> mlir::recur::gemm::buildSliceLoop(
    OpBuilder &b, Location loc, const GemmLaunch &launch, int64_t kTile,
    const OperandSlices &aSlices, const OperandSlices &bSlices,
    ValueRange initialSums,
    function_ref<void(OpBuilder &, ValueRange, ValueRange)> stage,
    function_ref<void(OpBuilder &, SmallVectorImpl<Value> &)> multiply) {
  auto constant = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value sliceCount =
      arith::CeilDivUIOp::create(b, loc, launch.depth, constant(b, kTile));
  Value zero = constant(b, 0);
  Value anySlice = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                         sliceCount, zero);
  auto firstParts = scf::IfOp::create(
      b, loc, anySlice,
      [&](OpBuilder &b, Location loc) {
        SmallVector<Value> parts = aSlices.load(b, loc, zero);
        llvm::append_range(parts, bSlices.load(b, loc, zero));
        scf::YieldOp::create(b, loc, parts);
      },
      [&](OpBuilder &b, Location loc) {
        SmallVector<Value> none = aSlices.zeros(b, loc);
        llvm::append_range(none, bSlices.zeros(b, loc));
        scf::YieldOp::create(b, loc, none);
      });
  SmallVector<Value> initial(initialSums);
  llvm::append_range(initial, firstParts.getResults());
  size_t sumCount = initialSums.size(), aParts = aSlices.parts.size();
  auto sliceLoop = scf::ForOp::create(
      b, loc, zero, sliceCount, constant(b, 1), initial,
      [&](OpBuilder &b, Location loc, Value slice, ValueRange carried) {
        ValueRange loaded = carried.drop_front(sumCount);
        stage(b, loaded.take_front(aParts), loaded.drop_front(aParts));
        gpu::BarrierOp::create(b, loc);
        Value next = arith::MinUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, slice, constant(b, 1)),
            arith::SubIOp::create(b, loc, sliceCount, constant(b, 1)));
        SmallVector<Value> nextParts = aSlices.load(b, loc, next);
        llvm::append_range(nextParts, bSlices.load(b, loc, next));
        SmallVector<Value> sums(carried.take_front(sumCount));
        multiply(b, sums);
        gpu::BarrierOp::create(b, loc);
        sums.append(nextParts);
        scf::YieldOp::create(b, loc, sums);
      });
  return SmallVector<Value>(sliceLoop.getResults().take_front(sumCount));
}

//===----------------------------------------------------------------------===//
// The SIMT kernel (fp32)
//===----------------------------------------------------------------------===//

namespace {

/// Shared-memory rows are padded by this many elements: the transposing
/// stores of a k-slice then spread over banks, and rows stay 16-byte aligned.
constexpr int64_t kSharedPadding = 4;

struct GemmTiles {
  int64_t m, n, k;          // the block's output tile and k-slice
  int64_t threadM, threadN; // each thread's accumulators
  int64_t threads() const { return (m / threadM) * (n / threadN); }
  /// Elements of a k-slice each thread loads, for an operand of `rows` rows.
  int64_t loadWidth(int64_t rows) const { return rows * k / threads(); }
};

/// Stores a thread's part of a k-slice, loaded by OperandSlices::load, into
/// shared memory transposed to [k][row], so that the threads multiplying
/// read rows contiguously.
void storeTransposed(OpBuilder &b, Location loc, const OperandSlices &slices,
                     Value shared, ValueRange loaded) {
  for (auto [part, value] : llvm::zip_equal(slices.parts, loaded))
    for (int64_t w = 0; w < slices.width; ++w) {
      Value element = vector::ExtractOp::create(b, loc, value, w);
      Value k = arith::AddIOp::create(
          b, loc, part.kOffset, arith::ConstantIndexOp::create(b, loc, w));
      memref::StoreOp::create(b, loc, element, shared, ValueRange{k, part.row});
    }
}

/// The vector in which a thread reads its rows (or columns) of a shared
/// tile: up to 16 bytes of f32, dividing the thread's `threadTile`.
int64_t fragmentWidth(int64_t threadTile) {
  int64_t width = kMaxLoadWidth;
  while (threadTile % width != 0)
    width /= 2;
  return width;
}

/// The alignment of a `width`-element fragment, at a multiple of `width`, in
/// a shared tile of `tileRows` rows (buffers are 16-byte aligned:
/// recur-gpu-align-workgroup-memory).
llvm::MaybeAlign fragmentAlignment(int64_t width, int64_t tileRows) {
  bool aligned = (tileRows + kSharedPadding) % width == 0;
  return llvm::MaybeAlign(aligned ? width * 4 : 4);
}

/// Replaces `gemm` by a launch of kernel `name` that computes it in tiles.
void buildGemmKernel(RewriterBase &rewriter, const Gemm &gemm,
                     const GemmTiles &tiles, StringRef name) {
  linalg::GenericOp op = gemm.op;
  Location loc = op.getLoc();
  GemmLaunch launch =
      createGemmLaunch(rewriter, gemm, tiles.m, tiles.n, tiles.threads(), name);
  auto constant = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto sharedTile = [&](int64_t tileRows) {
    return launch.addSharedBuffer({tiles.k, tileRows + kSharedPadding},
                                  rewriter.getF32Type());
  };
  Value aShared = sharedTile(tiles.m), bShared = sharedTile(tiles.n);

  OpBuilder b(launch.bodyEnd);
  Value threadId = launch.threadId;
  // Loading: thread t loads `width` consecutive k of one row of each tile.
  OperandSlices aSlices = makeOperandSlices(
      b, loc, launch, gemm, gemm.a, gemm.mDims, tiles.m, launch.rowTile,
      launch.rows, tiles.k, tiles.loadWidth(tiles.m), tiles.threads());
  OperandSlices bSlices = makeOperandSlices(
      b, loc, launch, gemm, gemm.b, gemm.nDims, tiles.n, launch.columnTile,
      launch.columns, tiles.k, tiles.loadWidth(tiles.n), tiles.threads());

  // Multiplying: thread (ty, tx) accumulates threadM rows and threadN
  // columns of the block's tile, taken as groups of `width` consecutive
  // ones spread over the tile (rows g * (tile / groups) + ty * width + l):
  // the threads of a quarter warp then read one contiguous run of shared
  // memory per vector, without bank conflicts.
  struct Fragment {
    int64_t width, groups;
    Value first;     // the thread's first row (or column) in the tile
    int64_t spacing; // between its groups
    /// The tile row of the thread's element `index`.
    Value at(OpBuilder &b, Location loc, int64_t index) const {
      int64_t offset = index / width * spacing + index % width;
      return arith::AddIOp::create(
          b, loc, first, arith::ConstantIndexOp::create(b, loc, offset));
    }
  };
  auto fragment = [&](int64_t threadTile, int64_t tile, Value threadIndex) {
    Fragment f;
    f.width = fragmentWidth(threadTile);
    f.groups = threadTile / f.width;
    f.spacing = tile / f.groups;
    f.first = arith::MulIOp::create(b, loc, threadIndex, constant(b, f.width));
    return f;
  };
  Value threadsAlongN = constant(b, tiles.n / tiles.threadN);
  Fragment aFragment =
      fragment(tiles.threadM, tiles.m,
               arith::DivUIOp::create(b, loc, threadId, threadsAlongN));
  Fragment bFragment =
      fragment(tiles.threadN, tiles.n,
               arith::RemUIOp::create(b, loc, threadId, threadsAlongN));
  // Accumulators: for each of the thread's rows, one vector per column group.
  auto accumulatorType = VectorType::get({bFragment.width}, b.getF32Type());
  Value zeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accumulatorType, 0.0f));
  int64_t accumulatorCount = tiles.threadM * bFragment.groups;
  SmallVector<Value> initial(accumulatorCount, zeros);

  // Unrolled over the slice: fragment addresses become immediates.
  auto multiply = [&](OpBuilder &b, SmallVectorImpl<Value> &sums) {
    auto loadGroups = [&](Value shared, const Fragment &f, int64_t tile,
                          Value k) {
      SmallVector<Value> groups;
      for (int64_t g = 0; g < f.groups; ++g)
        groups.push_back(vector::LoadOp::create(
            b, loc, VectorType::get({f.width}, b.getF32Type()), shared,
            ValueRange{k, f.at(b, loc, g * f.width)}, false,
            fragmentAlignment(f.width, tile)));
      return groups;
    };
    for (int64_t k = 0; k < tiles.k; ++k) {
      Value kIndex = constant(b, k);
      SmallVector<Value> aGroups =
          loadGroups(aShared, aFragment, tiles.m, kIndex);
      SmallVector<Value> bGroups =
          loadGroups(bShared, bFragment, tiles.n, kIndex);
      for (int64_t i = 0; i < tiles.threadM; ++i) {
        Value aValue = vector::BroadcastOp::create(
            b, loc, accumulatorType,
            vector::ExtractOp::create(b, loc, aGroups[i / aFragment.width],
                                      i % aFragment.width));
        for (int64_t g = 0; g < bFragment.groups; ++g) {
          Value &sum = sums[i * bFragment.groups + g];
          sum = vector::FMAOp::create(b, loc, aValue, bGroups[g], sum);
        }
      }
    }
  };
  SmallVector<Value> sums = buildSliceLoop(
      b, loc, launch, tiles.k, aSlices, bSlices, initial,
      [&](OpBuilder &b, ValueRange aParts, ValueRange bParts) {
        storeTransposed(b, loc, aSlices, aShared, aParts);
        storeTransposed(b, loc, bSlices, bShared, bParts);
      },
      multiply);

  // c += the sums, for the elements inside the output.
  for (int64_t i = 0; i < tiles.threadM; ++i) {
    Value row =
        arith::AddIOp::create(b, loc, launch.rowTile, aFragment.at(b, loc, i));
    SmallVector<std::pair<Value, Value>> columnSums;
    for (int64_t j = 0; j < tiles.threadN; ++j) {
      Value column = arith::AddIOp::create(b, loc, launch.columnTile,
                                           bFragment.at(b, loc, j));
      Value group = sums[i * bFragment.groups + j / bFragment.width];
      columnSums.push_back({column, vector::ExtractOp::create(
                                        b, loc, group, j % bFragment.width)});
    }
    launch.accumulate(b, gemm, row, columnSums);
  }
  rewriter.eraseOp(op);
}

struct GpuTiledGemmsPass
    : mlir::recur::impl::GpuTiledGemmsBase<GpuTiledGemmsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<std::pair<Gemm, GpuGemmAttr>> gemms;
    WalkResult walk = func.walk([&](linalg::GenericOp op) {
      auto config =
          op->getAttrOfType<GpuGemmAttr>(RecurDialect::kGpuGemmAttrName);
      if (!config)
        return WalkResult::advance();
      std::string whyNot;
      std::optional<Gemm> gemm = matchGemm(op, &whyNot);
      if (!gemm) {
        op.emitError() << getArgument() << ": not a GEMM its " << config
                       << " can run: "
                       << (whyNot.empty() ? "not a contraction" : whyNot);
        return WalkResult::interrupt();
      }
      gemms.push_back({*gemm, config});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    for (auto [index, entry] : llvm::enumerate(gemms)) {
      auto [gemm, config] = entry;
      std::string name = (func.getSymName() + "_gemm_" + Twine(index)).str();
      ArrayRef<int64_t> tile = config.getTile();
      if (config.onTensorCores()) {
        ArrayRef<int64_t> warpTile = config.getWarpTile();
        buildMmaGemmKernel(
            rewriter, gemm,
            MmaTiles{tile[0], tile[1], tile[2], warpTile[0], warpTile[1],
                     mmaOperandType(&getContext(), config.getPrecision())},
            name);
      } else {
        ArrayRef<int64_t> threadTile = config.getThreadTile();
        buildGemmKernel(
            rewriter, gemm,
            GemmTiles{tile[0], tile[1], tile[2], threadTile[0], threadTile[1]},
            name);
      }
    }
  }
};

} // namespace
