//===- TiledGemms.cpp - GEMMs as shared-memory, register-tiled kernels ----===//
//
// Mapped like any loop nest, a GEMM gets one thread per output element, whose
// reduction loop reads both operands from global memory and accumulates in
// the output: two loads and a load-store per multiply-add. Here each GEMM
// outside a time loop becomes a kernel of the classic SIMT form: a block
// computes a tile of the output, staging k-slices of both operands in shared
// memory; each thread keeps a small tile of accumulators in registers and
// reads the operands it needs from shared memory; the next slice is loaded
// from global memory (vectorized where alignment allows) while the current
// one is multiplied.
//
//===----------------------------------------------------------------------===//

#include "recur/Codegen/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUTILEDGEMMS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {

/// Shared-memory rows are padded by this many elements: the transposing
/// stores of a k-slice then spread over banks, and rows stay 16-byte aligned.
constexpr int64_t kSharedPadding = 4;

/// The widest vector a thread loads from global memory (16 bytes of f32).
constexpr int64_t kMaxLoadWidth = 4;

struct GemmTiles {
  int64_t m, n, k;          // the block's output tile and k-slice
  int64_t threadM, threadN; // each thread's accumulators
  int64_t threads() const { return (m / threadM) * (n / threadN); }
  /// Elements of a k-slice each thread loads, for an operand of `rows` rows.
  int64_t loadWidth(int64_t rows) const { return rows * k / threads(); }
};

/// A GEMM that the kernel computes: `c[m..., n...] += a[m..., k] * b[n..., k]`
/// for a linalg.generic on buffers, with m and n standing for any number of
/// loop dimensions (the output's rows and columns, in the output's order) and
/// k the one reduction, the innermost index of both operands.
struct Gemm {
  linalg::GenericOp op;
  OpOperand *a, *b, *c;
  SmallVector<unsigned> mDims, nDims;
  unsigned kDim;
};

/// `op` as a Gemm the kernel handles, if it is one.
std::optional<Gemm> matchGemm(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || !dims->batch.empty() || dims->m.empty() ||
      dims->n.empty() || dims->k.size() != 1)
    return std::nullopt;
  Gemm gemm{op,
            op.getDpsInputOperand(0),
            op.getDpsInputOperand(1),
            op.getDpsInitOperand(0),
            {},
            {},
            dims->k.front()};
  for (OpOperand *operand : {gemm.a, gemm.b, gemm.c}) {
    auto type = dyn_cast<MemRefType>(operand->get().getType());
    if (!type || !type.getElementType().isF32() ||
        !op.getMatchingIndexingMap(operand).isProjectedPermutation())
      return std::nullopt;
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
    return std::nullopt;
  return gemm;
}

/// The buffer that `value` is a view of.
Value rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// Whether each `width` consecutive k elements of `operand`, starting at
/// multiples of `width`, can be loaded as one aligned vector: the layout
/// keeps them contiguous and aligned, K is a multiple of `kTile` (no slice
/// runs past it), and the buffer is the model's own (a caller's CUDA input is
/// used in place, with whatever alignment it has).
bool canLoadVectors(OpOperand *operand, Value depth, int64_t kTile,
                    int64_t width) {
  std::optional<int64_t> k = getConstantIntValue(depth);
  if (!k || *k % kTile != 0)
    return false;
  // In an identity layout, k is the innermost dimension: every stride is a
  // multiple of K.
  auto type = cast<MemRefType>(operand->get().getType());
  if (!type.getLayout().isIdentity()) {
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
  auto argument = dyn_cast<BlockArgument>(rootBuffer(operand->get()));
  if (!argument)
    return true;
  auto func = dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp());
  return func && !func.getArgAttr(argument.getArgNumber(), "recur.input");
}

/// One operand's side of the kernel: how a thread loads its part of each
/// k-slice into registers and stores it into shared memory, transposed to
/// [k][row] so that the threads multiplying read rows contiguously.
struct OperandTile {
  OpOperand *operand;
  AffineMap map;
  Value shared;  // [tiles.k][rows + padding] in workgroup memory
  int64_t width; // elements per thread per k-slice
  bool vectorLoads;
  Value row;                     // the thread's row within the tile
  Value kOffset;                 // the thread's first k within the slice
  SmallVector<Value> rowIndices; // per loop dim: the thread's row's index
  Value depth;                   // K
  int64_t kTileSize;             // k per slice
  unsigned kDim;                 // the reduction's loop dimension

  VectorType registerType() const {
    return VectorType::get({width}, Float32Type::get(shared.getContext()));
  }

  /// Loads the thread's part of k-slice `kTile` from global memory.
  Value load(OpBuilder &b, Location loc, Value kTile) const {
    Value k0 = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(
            b, loc, kTile, arith::ConstantIndexOp::create(b, loc, kTileSize)),
        kOffset);
    auto indicesAt = [&](Value k) {
      SmallVector<Value> indices;
      for (unsigned i = 0; i < map.getNumResults(); ++i) {
        unsigned dim = map.getDimPosition(i);
        indices.push_back(dim == kDim ? k : rowIndices[dim]);
      }
      return indices;
    };
    if (vectorLoads)
      return vector::LoadOp::create(b, loc, registerType(), operand->get(),
                                    indicesAt(k0), /*nontemporal=*/false,
                                    llvm::MaybeAlign(width * 4));
    // Past K, a slice holds zeros: they add nothing to the sums.
    Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
    Value zero =
        arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
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
    return vector::FromElementsOp::create(b, loc, registerType(), elements);
  }

  /// Stores a slice part loaded by `load` into shared memory.
  void store(OpBuilder &b, Location loc, Value part) const {
    for (int64_t w = 0; w < width; ++w) {
      Value element = vector::ExtractOp::create(b, loc, part, w);
      Value k = arith::AddIOp::create(
          b, loc, kOffset, arith::ConstantIndexOp::create(b, loc, w));
      memref::StoreOp::create(b, loc, element, shared, ValueRange{k, row});
    }
  }
};

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

/// Replaces `gemm` by a launch of kernel `name` that computes it in tiles.
void buildGemmKernel(RewriterBase &rewriter, const Gemm &gemm,
                     const GemmTiles &tiles, StringRef name) {
  linalg::GenericOp op = gemm.op;
  Location loc = op.getLoc();
  MLIRContext *context = rewriter.getContext();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> extents;
  for (Range range : cast<linalg::LinalgOp>(op.getOperation())
                         .createLoopRanges(rewriter, loc))
    extents.push_back(
        getValueOrCreateConstantIndexOp(rewriter, loc, range.size));
  Value rows = product(rewriter, loc, gemm.mDims, extents);
  Value columns = product(rewriter, loc, gemm.nDims, extents);
  Value depth = extents[gemm.kDim];
  auto constant = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  Value one = constant(rewriter, 1);
  auto launch = gpu::LaunchOp::create(
      rewriter, loc,
      arith::CeilDivUIOp::create(rewriter, loc, rows,
                                 constant(rewriter, tiles.m)),
      arith::CeilDivUIOp::create(rewriter, loc, columns,
                                 constant(rewriter, tiles.n)),
      one, constant(rewriter, tiles.threads()), one, one,
      /*dynamicSharedMemorySize=*/nullptr, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/{},
      /*workgroupAttributions=*/{}, /*privateAttributions=*/{}, nullptr,
      nullptr, nullptr, FlatSymbolRefAttr::get(context, name),
      FlatSymbolRefAttr::get(context, name));
  auto workgroup =
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
  auto sharedTile = [&](int64_t tileRows) {
    return launch.addWorkgroupAttribution(
        MemRefType::get({tiles.k, tileRows + kSharedPadding},
                        rewriter.getF32Type(), AffineMap(), workgroup),
        loc);
  };
  Value aShared = sharedTile(tiles.m), bShared = sharedTile(tiles.n);

  Block &body = launch.getBody().front();
  rewriter.setInsertionPointToStart(&body);
  auto terminator = gpu::TerminatorOp::create(rewriter, loc);
  OpBuilder b(terminator);
  Value threadId = launch.getThreadIds().x;
  Value rowTile = arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                                        constant(b, tiles.m));
  Value columnTile = arith::MulIOp::create(b, loc, launch.getBlockIds().y,
                                           constant(b, tiles.n));

  // Loading: thread t loads `width` consecutive k of one row of each tile.
  // Rows past the end are loaded from the last row instead (never stored).
  auto operandTile = [&](OpOperand *operand, ArrayRef<unsigned> rowDims,
                         Value shared, int64_t tileRows, Value tileStart,
                         Value rowCount) {
    OperandTile tile;
    tile.operand = operand;
    tile.map = op.getMatchingIndexingMap(operand);
    tile.shared = shared;
    tile.width = tiles.loadWidth(tileRows);
    tile.vectorLoads = canLoadVectors(operand, depth, tiles.k, tile.width);
    tile.depth = depth;
    tile.kTileSize = tiles.k;
    tile.kDim = gemm.kDim;
    Value partsPerRow = constant(b, tiles.k / tile.width);
    tile.row = arith::DivUIOp::create(b, loc, threadId, partsPerRow);
    tile.kOffset = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, threadId, partsPerRow),
        constant(b, tile.width));
    Value row = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, tileStart, tile.row),
        arith::SubIOp::create(b, loc, rowCount, constant(b, 1)));
    tile.rowIndices.resize(extents.size());
    delinearize(b, loc, row, rowDims, extents, tile.rowIndices);
    return tile;
  };
  OperandTile aTile =
      operandTile(gemm.a, gemm.mDims, aShared, tiles.m, rowTile, rows);
  OperandTile bTile =
      operandTile(gemm.b, gemm.nDims, bShared, tiles.n, columnTile, columns);

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

  // The first slice is loaded before the loop; each iteration loads the next
  // (the last reloads itself) while it multiplies the current one.
  Value sliceCount =
      arith::CeilDivUIOp::create(b, loc, depth, constant(b, tiles.k));
  Value zero = constant(b, 0);
  Value anySlice = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                         sliceCount, zero);
  auto firstParts = scf::IfOp::create(
      b, loc, anySlice,
      [&](OpBuilder &b, Location loc) {
        scf::YieldOp::create(
            b, loc,
            ValueRange{aTile.load(b, loc, zero), bTile.load(b, loc, zero)});
      },
      [&](OpBuilder &b, Location loc) {
        SmallVector<Value> none;
        for (const OperandTile *tile : {&aTile, &bTile})
          none.push_back(arith::ConstantOp::create(
              b, loc, DenseElementsAttr::get(tile->registerType(), 0.0f)));
        scf::YieldOp::create(b, loc, none);
      });
  initial.append(firstParts.getResults().begin(),
                 firstParts.getResults().end());
  auto sliceLoop = scf::ForOp::create(
      b, loc, zero, sliceCount, constant(b, 1), initial,
      [&](OpBuilder &b, Location loc, Value slice, ValueRange carried) {
        aTile.store(b, loc, carried[accumulatorCount]);
        bTile.store(b, loc, carried[accumulatorCount + 1]);
        gpu::BarrierOp::create(b, loc);
        Value next = arith::MinUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, slice, constant(b, 1)),
            arith::SubIOp::create(b, loc, sliceCount, constant(b, 1)));
        Value nextA = aTile.load(b, loc, next);
        Value nextB = bTile.load(b, loc, next);
        // Unrolled over the slice: fragment addresses become immediates.
        SmallVector<Value> sums(carried.take_front(accumulatorCount));
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
        gpu::BarrierOp::create(b, loc);
        sums.append({nextA, nextB});
        scf::YieldOp::create(b, loc, sums);
      });

  // c += the sums, for the elements inside the output.
  AffineMap cMap = op.getMatchingIndexingMap(gemm.c);
  for (int64_t i = 0; i < tiles.threadM; ++i) {
    Value row = arith::AddIOp::create(b, loc, rowTile, aFragment.at(b, loc, i));
    Value rowInside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, rows);
    scf::IfOp::create(b, loc, rowInside, [&](OpBuilder &b, Location loc) {
      SmallVector<Value> byDim(extents.size());
      delinearize(b, loc, row, gemm.mDims, extents, byDim);
      for (int64_t j = 0; j < tiles.threadN; ++j) {
        Value column =
            arith::AddIOp::create(b, loc, columnTile, bFragment.at(b, loc, j));
        Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             column, columns);
        Value sums =
            sliceLoop.getResult(i * bFragment.groups + j / bFragment.width);
        scf::IfOp::create(b, loc, inside, [&](OpBuilder &b, Location loc) {
          delinearize(b, loc, column, gemm.nDims, extents, byDim);
          SmallVector<Value> indices;
          for (unsigned r = 0; r < cMap.getNumResults(); ++r)
            indices.push_back(byDim[cMap.getDimPosition(r)]);
          Value c = gemm.c->get();
          Value sum = arith::AddFOp::create(
              b, loc, memref::LoadOp::create(b, loc, c, indices),
              vector::ExtractOp::create(b, loc, sums, j % bFragment.width));
          memref::StoreOp::create(b, loc, sum, c, indices);
          scf::YieldOp::create(b, loc);
        });
      }
      scf::YieldOp::create(b, loc);
    });
  }
  rewriter.eraseOp(op);
}

struct GpuTiledGemmsPass
    : mlir::recur::impl::GpuTiledGemmsBase<GpuTiledGemmsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    GemmTiles tiles{tileM, tileN, tileK, threadTileM, threadTileN};
    if (failed(verify(func, tiles)))
      return signalPassFailure();
    // Inside a time loop, a GEMM is a step of the persistent kernel.
    SmallVector<Gemm> gemms;
    func.walk([&](linalg::GenericOp op) {
      if (!op->getParentOfType<LoopLikeOpInterface>())
        if (std::optional<Gemm> gemm = matchGemm(op))
          gemms.push_back(*gemm);
    });
    IRRewriter rewriter(&getContext());
    for (auto [index, gemm] : llvm::enumerate(gemms)) {
      std::string name = (func.getSymName() + "_gemm_" + Twine(index)).str();
      buildGemmKernel(rewriter, gemm, tiles, name);
    }
  }

  LogicalResult verify(func::FuncOp func, const GemmTiles &tiles) {
    auto fail = [&](const Twine &message) {
      return func.emitError("recur-gpu-tiled-gemms: ") << message;
    };
    if (tiles.m <= 0 || tiles.n <= 0 || tiles.k <= 0 || tiles.threadM <= 0 ||
        tiles.threadN <= 0 || tiles.m % tiles.threadM != 0 ||
        tiles.n % tiles.threadN != 0)
      return fail("tile sizes must be positive, each thread tile dividing "
                  "its block tile");
    for (int64_t rows : {tiles.m, tiles.n}) {
      int64_t width = tiles.loadWidth(rows);
      if (rows * tiles.k % tiles.threads() != 0 || width > kMaxLoadWidth ||
          !llvm::isPowerOf2_64(width) || tiles.k % width != 0)
        return fail("a slice of " + Twine(rows) + " rows and " +
                    Twine(tiles.k) +
                    " k must split into parts of 1, 2 or "
                    "4 consecutive k, one per thread (" +
                    Twine(tiles.threads()) + " threads)");
    }
    return success();
  }
};

} // namespace
