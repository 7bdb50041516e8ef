//===- PackedMatmulKernel.cpp - a packed GEMM as register tiles -----------===//
//
// C[d..., n] += A[d..., k] * W[n floordiv t, k, n mod t] on buffers, as a
// parallel loop over (blocks of rows, panels of t columns) whose body keeps a
// rows x t tile of C in vector registers across the K loop: per step, one
// contiguous row of the panel, one broadcast element of A per row, and an FMA
// per (row, vector). A fused LSTM step's cell runs on the accumulators.
//
//===----------------------------------------------------------------------===//

#include "../BufferViews.h"
#include "Contractions.h"
#include "ElementwiseVectors.h"
#include "LoopBuilders.h"
#include "PackedMatmuls.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "recur/Codegen/CpuGemmTile.h"
#include "recur/Codegen/Passes.h"
#include "recur/Codegen/Passes.h.inc"
#include "recur/IR/RecurDialect.h"
#include "recur/Utils/Remarks.h"
#include "llvm/Support/Debug.h"
#include <algorithm>

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::cpu;
using utils::IteratorType;

namespace {

class KernelEmitter {
  /// The part of K a tile sums: [begin, begin + length), starting from C
  /// (`fromOutput`, a later chunk) or from what C was set to. `length` is
  /// ShapedType::kDynamic for the last chunk of a dynamic K, which ends at
  /// `end`.
  struct KRange {
    Value begin;
    int64_t length;
    bool fromOutput;
    Value end = {};
  };

public:
  KernelEmitter(RewriterBase &rewriter, PackedMatmul &matmul,
                int64_t vectorWidth, int64_t tileRows, int64_t blockFloats,
                bool bf16Dot)
      : b(rewriter), loc(matmul.op->getLoc()), matmul(matmul),
        vectorWidth(vectorWidth), tileRows(tileRows), blockFloats(blockFloats),
        bf16Dot(bf16Dot) {
    auto weightType = cast<MemRefType>(matmul.weight.getType());
    auto outputType = cast<MemRefType>(matmul.output.getType());
    rank = outputType.getRank();
    columns = outputType.getDimSize(rank - 1);
    tile = matmul.tile;
    kStep = matmul.pairs ? 2 : 1;
    depth = kStep * weightType.getDimSize(matmul.inPlaceWeight ? 0 : 1);
    panels = llvm::divideCeilSigned(columns, tile);
    vectorType = VectorType::get({vectorWidth}, b.getF32Type());
  }

  void emit() {
    // A cell's output allocated as [d..., Q, K], as the [d..., Q * K] rows
    // the tail's loads and stores index.
    if (matmul.cell)
      for (Value &buffer : matmul.cell->unitBuffers)
        if (buffer &&
            cast<MemRefType>(buffer.getType()).getRank() ==
                cast<MemRefType>(matmul.output.getType()).getRank() + 1) {
          int64_t last = cast<MemRefType>(buffer.getType()).getRank() - 1;
          SmallVector<ReassociationIndices> groups;
          for (int64_t dim = 0; dim < last - 1; ++dim)
            groups.push_back({dim});
          groups.push_back({last - 1, last});
          Value rows = memref::CollapseShapeOp::create(b, loc, buffer, groups);
          if (matmul.cell->copied == buffer)
            matmul.cell->copied = rows;
          buffer = rows;
        }
    // A panel row of pairs, [t, 2], as one run of 2t bf16 for the loads.
    if (matmul.pairs)
      pairPanels = memref::CollapseShapeOp::create(
          b, loc, matmul.weight,
          ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
    // Rows: the product of C's leading sizes.
    Value rows = index(1);
    for (unsigned dim = 0; dim + 1 < rank; ++dim) {
      leadingSizes.push_back(
          memref::DimOp::create(b, loc, matmul.output, dim).getResult());
      rows = arith::MulIOp::create(b, loc, rows, leadingSizes.back());
    }
    if (isDeep()) {
      emitChunked(rows);
      return;
    }
    if (!matmul.cell || matmul.gateSource) {
      emitTiles(rows);
      return;
    }
    // A recur.rnn cell's tail on the tiles pays where the step is short; with
    // many rows the separate GEMM and tail ran faster (fastrnns' GRU and a
    // peephole LSTM, I = H = 512: 4-9% at B = 64, level at 16, 3-21% slower
    // at B = 1 without the fusion). Both are built; the rows choose.
    Value few = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, rows,
                                      index(kMaxFusedCellRows));
    auto branches = scf::IfOp::create(b, loc, few, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branches.thenBlock()->getTerminator());
    emitTiles(rows);
    b.setInsertionPoint(branches.elseBlock()->getTerminator());
    FusedCell cell = *matmul.cell;
    matmul.cell.reset();
    SmallVector<Operation *> fusedWrites = std::move(matmul.outputWrites);
    matmul.outputWrites.clear();
    emitTiles(rows);
    matmul.separateAccesses = std::move(matmul.outputWrites);
    matmul.outputWrites = std::move(fusedWrites);
    matmul.cell = cell;
    emitSeparateCell(rows);
  }

  /// The tail of `matmul.cell` as a pass of its own over C: per (row,
  /// panel), the panel's gate sums loaded from C and the cell applied (x_t's
  /// parts added by the cell's body, not by the tiles).
  void emitSeparateCell(Value rows) {
    FusedCell cell = *matmul.cell;
    cell.startOperand.assign(cell.startOperand.size(), -1);
    cell.startAdds.clear();
    int64_t vectors = tile / vectorWidth;
    buildParallel(
        b, loc, ValueRange{index(0), index(0)}, ValueRange{rows, index(panels)},
        ValueRange{index(1), index(1)}, [&](ValueRange ivs) {
          SmallVector<Value> leading = leadingIndices(ivs[0]);
          Value firstColumn =
              arith::MulIOp::create(b, loc, ivs[1], index(tile));
          SmallVector<Value> sums;
          for (int64_t v = 0; v < vectors; ++v) {
            auto load = vector::LoadOp::create(
                b, loc, vectorType, matmul.output,
                withLast(leading,
                         arith::AddIOp::create(b, loc, firstColumn,
                                               index(v * vectorWidth))));
            matmul.separateAccesses.push_back(load);
            sums.push_back(load);
          }
          applyCell(cell, leading,
                    arith::MulIOp::create(b, loc, ivs[1], index(cell.gateTile)),
                    sums);
        });
  }

  /// The tiles of the product (and of a fused cell) for `rows` rows, blocks
  /// of rows and panels in parallel.
  void emitTiles(Value rows) {
    // A block of rows of A fills at most its L2 share. The rows are shared
    // evenly among the blocks (boundaries on whole tiles): blocks of the
    // largest size and a short last one would leave the threads that get the
    // short block idle for most of the product (B = 16: 252 + 252 rows on one
    // thread, 252 + 44 on the other).
    int64_t maxBlockRows =
        std::max(tileRows, blockFloats / depth / tileRows * tileRows);
    Value blocks =
        arith::CeilDivUIOp::create(b, loc, rows, index(maxBlockRows));
    auto blockStart = [&](Value block) {
      Value share = arith::DivUIOp::create(
          b, loc, arith::MulIOp::create(b, loc, block, rows), blocks);
      return roundDown(b, loc, share, tileRows);
    };
    buildParallel(b, loc, ValueRange{index(0), index(0)},
                  ValueRange{blocks, index(panels)},
                  ValueRange{index(1), index(1)}, [&](ValueRange ivs) {
                    Value first = blockStart(ivs[0]);
                    Value next =
                        arith::AddIOp::create(b, loc, ivs[0], index(1));
                    Value end = arith::SelectOp::create(
                        b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              next, blocks),
                        rows, blockStart(next));
                    rowTiles(first, end, ivs[1]);
                  });
  }

  /// Rows [first, end) of one panel in full tiles, then one tile of the
  /// rows left.
  void rowTiles(Value first, Value end, Value panel,
                std::optional<KRange> range = std::nullopt) {
    Value fullEnd = arith::AddIOp::create(
        b, loc, first,
        roundDown(b, loc, arith::SubIOp::create(b, loc, end, first), tileRows));
    tileLoop(first, fullEnd, panel, tileRows, range);
    remainderTile(fullEnd, arith::SubIOp::create(b, loc, end, fullEnd), panel,
                  range);
  }

  /// The rows left after the full tiles (fewer than `tileRows`) as one tile
  /// of exactly that height, so that e.g. B = 16 runs 6 + 6 + 4 rows rather
  /// than four one-row tiles that load a panel row per FMA.
  void remainderTile(Value firstRow, Value count, Value panel,
                     std::optional<KRange> range = std::nullopt) {
    SmallVector<int64_t> heights;
    for (int64_t height = 1; height < tileRows; ++height)
      heights.push_back(height);
    auto cases = scf::IndexSwitchOp::create(b, loc, TypeRange{}, count, heights,
                                            heights.size());
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(&cases.getDefaultRegion());
    scf::YieldOp::create(b, loc); // no rows left
    for (auto [region, height] : llvm::zip(cases.getCaseRegions(), heights)) {
      b.createBlock(&region);
      registerTile(firstRow, panel, height, range);
      scf::YieldOp::create(b, loc);
    }
  }

  /// A deep product (the gradients' K = T x B or the vocabulary), whose
  /// panel is larger than a block of A (`blockFloats`): the panels' rows a
  /// tile reads over all of K would not stay in cache for the next tile, so
  /// every tile would stream its panel from memory (a 6-row tile of dᵀ · x
  /// reads a 1.6 MB panel for 2.5 M FMAs). K runs in chunks instead: per
  /// block of `chunkTiles` tiles of rows, for each chunk, for each panel,
  /// the block's tiles accumulate the chunk into C, so a panel's chunk
  /// (`kChunk` x t) is read from cache by every tile of the block, and the
  /// block's rows of A for the chunk stay in cache across the panels. The
  /// first chunk starts from what C was set to, the others from C. Blocks
  /// run in parallel; with fewer than `parallelBlocks` of them (a GEMV's
  /// single row), blocks and panels do, each panel's chunks in turn.
  void emitChunked(Value rows) {
    int64_t blockRows = chunkTiles * tileRows;
    Value blocks = arith::CeilDivUIOp::create(b, loc, rows, index(blockRows));
    auto blockOfRows = [&](Value block, ValueRange panelIndices) {
      Value first = arith::MulIOp::create(b, loc, block, index(blockRows));
      Value end = arith::MinUIOp::create(
          b, loc, rows, arith::AddIOp::create(b, loc, first, index(blockRows)));
      auto chunk = [&](Value kBegin, int64_t length, bool fromOutput,
                       Value kEnd = {}) {
        KRange range{kBegin, length, fromOutput, kEnd};
        auto panelTiles = [&](Value panel) {
          rowTiles(first, end, panel, range);
        };
        if (!panelIndices.empty())
          panelTiles(panelIndices[0]);
        else
          buildFor(b, loc, index(0), index(panels), index(1), panelTiles);
      };
      if (ShapedType::isDynamic(depth)) {
        // Whole chunks, then the rest; C holds what it was set to.
        assert(matmul.inPlaceWeight &&
               "only a weight read in place has a dynamic depth");
        Value total = memref::DimOp::create(b, loc, matmul.weight, 0);
        Value whole = roundDown(b, loc, total, kChunk);
        buildFor(b, loc, index(0), whole, index(kChunk),
                 [&](Value kBegin) { chunk(kBegin, kChunk, true); });
        chunk(whole, ShapedType::kDynamic, true, total);
        return;
      }
      int64_t wholeChunks = depth / kChunk;
      chunk(index(0), kChunk, /*fromOutput=*/false);
      buildFor(b, loc, index(kChunk), index(wholeChunks * kChunk),
               index(kChunk),
               [&](Value kBegin) { chunk(kBegin, kChunk, true); });
      if (depth % kChunk)
        chunk(index(wholeChunks * kChunk), depth % kChunk, true);
    };
    Value many = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                       blocks, index(parallelBlocks));
    auto branches = scf::IfOp::create(b, loc, many, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branches.thenBlock()->getTerminator());
    buildParallel(b, loc, ValueRange{index(0)}, ValueRange{blocks},
                  ValueRange{index(1)},
                  [&](ValueRange ivs) { blockOfRows(ivs[0], {}); });
    b.setInsertionPoint(branches.elseBlock()->getTerminator());
    buildParallel(
        b, loc, ValueRange{index(0), index(0)},
        ValueRange{blocks, index(panels)}, ValueRange{index(1), index(1)},
        [&](ValueRange ivs) { blockOfRows(ivs[0], ivs.drop_front()); });
  }

  /// Whether the product runs K in chunks (emitChunked), each from C.
  bool isDeep() const { return cpu::isDeep(matmul, blockFloats); }

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }

  /// Tiles of `height` rows from `first` to `end` (a multiple apart).
  void tileLoop(Value first, Value end, Value panel, int64_t height,
                std::optional<KRange> range = std::nullopt) {
    buildFor(b, loc, first, end, index(height),
             [&](Value row) { registerTile(row, panel, height, range); });
  }

  /// The indices into C's (and A's) leading dimensions of row `row`.
  SmallVector<Value> leadingIndices(Value row) {
    SmallVector<Value> indices(leadingSizes.size());
    for (size_t dim = leadingSizes.size(); dim-- > 0;) {
      if (dim == 0) {
        indices[dim] = row;
        break;
      }
      indices[dim] = arith::RemUIOp::create(b, loc, row, leadingSizes[dim]);
      row = arith::DivUIOp::create(b, loc, row, leadingSizes[dim]);
    }
    return indices;
  }

  SmallVector<Value> withLast(ArrayRef<Value> leading, Value last) {
    SmallVector<Value> indices(leading);
    indices.push_back(last);
    return indices;
  }

  /// C[row .. row + height, panel * t .. + t] in registers over all of K,
  /// or over `range`.
  void registerTile(Value firstRow, Value panel, int64_t height,
                    std::optional<KRange> range = std::nullopt) {
    KRange part = range ? *range : KRange{index(0), depth, false};
    int64_t vectors = tile / vectorWidth;
    // Every column of the tile is inside C unless t does not divide N.
    bool inBounds = columns % tile == 0;
    Value firstColumn = arith::MulIOp::create(b, loc, panel, index(tile));
    SmallVector<Value> columnOf;
    for (int64_t v = 0; v < vectors; ++v)
      columnOf.push_back(
          arith::AddIOp::create(b, loc, firstColumn, index(v * vectorWidth)));
    SmallVector<SmallVector<Value>> rowIndices;
    for (int64_t r = 0; r < height; ++r)
      rowIndices.push_back(leadingIndices(
          r ? arith::AddIOp::create(b, loc, firstRow, index(r)).getResult()
            : firstRow));

    Value zero = arith::ConstantOp::create(b, loc, b.getF32Type(),
                                           b.getF32FloatAttr(0.0f));
    // The panel's first unit when its columns are the gates of K units.
    Value firstUnit;
    if (matmul.gateTile)
      firstUnit = arith::MulIOp::create(b, loc, panel, index(matmul.gateTile));
    SmallVector<Value> initial;
    if (part.fromOutput) {
      for (int64_t r = 0; r < height; ++r)
        for (int64_t v = 0; v < vectors; ++v)
          initial.push_back(vector::TransferReadOp::create(
              b, loc, vectorType, matmul.output,
              withLast(rowIndices[r], columnOf[v]), zero,
              ArrayRef<bool>{inBounds}));
    } else if (matmul.zeroStart) {
      initial.assign(
          height * vectors,
          arith::ConstantOp::create(b, loc, vectorType,
                                    DenseElementsAttr::get(vectorType, 0.0f)));
    } else if (matmul.bias) {
      SmallVector<Value> biasVectors;
      for (int64_t v = 0; v < vectors; ++v)
        biasVectors.push_back(vector::TransferReadOp::create(
            b, loc, vectorType, matmul.bias, ValueRange{columnOf[v]}, zero,
            ArrayRef<bool>{inBounds}));
      for (int64_t r = 0; r < height; ++r)
        llvm::append_range(initial, biasVectors);
    } else if (matmul.gateSource) {
      // Vector v of the panel: gate (v W) / K of units panel * K + (v W) % K,
      // at column gate * H + unit of the source.
      int64_t hidden = columns / 4, gateTile = matmul.gateTile;
      for (int64_t r = 0; r < height; ++r)
        for (int64_t v = 0; v < vectors; ++v) {
          int64_t gate = v * vectorWidth / gateTile,
                  lane = v * vectorWidth % gateTile;
          Value column = arith::AddIOp::create(b, loc, firstUnit,
                                               index(gate * hidden + lane));
          initial.push_back(
              vector::LoadOp::create(b, loc, vectorType, matmul.gateSource,
                                     withLast(rowIndices[r], column)));
        }
    } else {
      Value start = matmul.initial ? matmul.initial : matmul.output;
      for (int64_t r = 0; r < height; ++r)
        for (int64_t v = 0; v < vectors; ++v)
          initial.push_back(vector::TransferReadOp::create(
              b, loc, vectorType, start, withLast(rowIndices[r], columnOf[v]),
              zero, ArrayRef<bool>{inBounds}));
    }

    // A gate the cell adds x_t's part to starts from it (bias + x).
    if (matmul.cell &&
        llvm::any_of(matmul.cell->startOperand,
                     [](int64_t operand) { return operand >= 0; })) {
      FusedCell &cell = *matmul.cell;
      int64_t chunks = cell.gateTile / vectorWidth;
      for (int64_t r = 0; r < height; ++r)
        for (int64_t v = 0; v < vectors; ++v) {
          int64_t operand = cell.startOperand[v / chunks];
          if (operand < 0)
            continue;
          Value unit = chunkUnit(firstUnit, v % chunks);
          Value start = vector::LoadOp::create(b, loc, vectorType,
                                               cell.unitBuffers[operand],
                                               withLast(rowIndices[r], unit));
          Value &value = initial[r * vectors + v];
          value = matmul.zeroStart
                      ? start
                      : arith::AddFOp::create(b, loc, value, start).getResult();
        }
    }

    // What the cell reads besides the tile (a step's input gates, the
    // state), requested now so that it arrives during the K loop: read
    // after it, row by row, each line would stall the tile (a peephole
    // LSTM's step took 17% longer than with a separate pass).
    if (matmul.cell)
      prefetchCellInputs(*matmul.cell, rowIndices, firstUnit);

    // A short tile (B = 1's recurrent GEMV, a remainder tile) has too few
    // accumulators to hide the FMA latency: it keeps `splits` sets, one per
    // k mod splits, in the registers a full tile's accumulators would use,
    // and adds them up after the K loop.
    int64_t splits = std::clamp<int64_t>(tileRows / height, 1, 4);
    bool dynamicLength = ShapedType::isDynamic(part.length);
    int64_t perSet = height * vectors;
    SmallVector<Value> sets(initial);
    Value zeroVector = arith::ConstantOp::create(
        b, loc, vectorType, DenseElementsAttr::get(vectorType, 0.0f));
    for (int64_t set = 1; set < splits; ++set)
      sets.append(perSet, zeroVector);

    // Adds A[rows, k] * W[panel, k, :] to `accumulators` (in pairs: A[rows,
    // k..k+1] * W[panel, k / 2, :]).
    auto multiplyAdd = [&](Value k, ValueRange accumulators) {
      if (matmul.pairs)
        return multiplyAddPairs(k, panel, rowIndices, accumulators);
      SmallVector<Value> weights;
      for (int64_t v = 0; v < vectors; ++v)
        weights.push_back(
            matmul.inPlaceWeight
                ? vector::TransferReadOp::create(b, loc, vectorType,
                                                 matmul.weight,
                                                 ValueRange{k, columnOf[v]},
                                                 zero, ArrayRef<bool>{inBounds})
                      .getResult()
                : vector::LoadOp::create(
                      b, loc, vectorType, matmul.weight,
                      ValueRange{panel, k, index(v * vectorWidth)})
                      .getResult());
      SmallVector<Value> next;
      for (int64_t r = 0; r < height; ++r) {
        Value a = memref::LoadOp::create(
            b, loc, matmul.input,
            matmul.transposedInput ? SmallVector<Value>{k, rowIndices[r][0]}
                                   : withLast(rowIndices[r], k));
        Value broadcast = vector::BroadcastOp::create(b, loc, vectorType, a);
        for (int64_t v = 0; v < vectors; ++v)
          next.push_back(vector::FMAOp::create(b, loc, broadcast, weights[v],
                                               accumulators[r * vectors + v]));
      }
      return next;
    };
    // k's range: its end, and the end of the part the sets split.
    Value kEnd = dynamicLength ? part.end
                               : arith::AddIOp::create(b, loc, part.begin,
                                                       index(part.length))
                                     .getResult();
    // A step of k covers `kStep` of K (a pair of k in pairs).
    int64_t splitStep = splits * kStep;
    Value splitEnd =
        dynamicLength
            ? arith::AddIOp::create(
                  b, loc, part.begin,
                  roundDown(b, loc,
                            arith::SubIOp::create(b, loc, kEnd, part.begin),
                            splitStep))
                  .getResult()
            : arith::AddIOp::create(b, loc, part.begin,
                                    index(part.length / splitStep * splitStep))
                  .getResult();
    auto kLoop = [&](Value begin, Value end, int64_t step,
                     ValueRange accumulators,
                     function_ref<SmallVector<Value>(Value, ValueRange)> body) {
      return buildForWithValues(b, loc, begin, end, index(step), accumulators,
                                body);
    };
    sets = kLoop(
        part.begin, splitEnd, splitStep, sets,
        [&](Value k, ValueRange accumulators) {
          SmallVector<Value> next;
          for (int64_t set = 0; set < splits; ++set) {
            Value kSet =
                set ? arith::AddIOp::create(b, loc, k, index(set * kStep))
                          .getResult()
                    : k;
            llvm::append_range(
                next,
                multiplyAdd(kSet, accumulators.slice(set * perSet, perSet)));
          }
          return next;
        });
    SmallVector<Value> tileSums(ArrayRef(sets).take_front(perSet));
    for (int64_t set = 1; set < splits; ++set)
      for (int64_t i = 0; i < perSet; ++i)
        tileSums[i] =
            arith::AddFOp::create(b, loc, tileSums[i], sets[set * perSet + i]);
    if (dynamicLength || part.length % splitStep)
      tileSums = kLoop(splitEnd, kEnd, kStep, tileSums, multiplyAdd);

    auto roundedType = VectorType::get({vectorWidth}, b.getBF16Type());
    for (int64_t r = 0; r < height; ++r)
      for (int64_t v = 0; v < vectors; ++v) {
        Value sum = tileSums[r * vectors + v];
        SmallVector<Value> indices = withLast(rowIndices[r], columnOf[v]);
        if (matmul.rounded)
          vector::TransferWriteOp::create(
              b, loc, arith::TruncFOp::create(b, loc, roundedType, sum),
              matmul.rounded, indices, ArrayRef<bool>{inBounds});
        else
          matmul.outputWrites.push_back(vector::TransferWriteOp::create(
              b, loc, sum, matmul.output, indices, ArrayRef<bool>{inBounds}));
      }
    if (matmul.cell)
      for (int64_t r = 0; r < height; ++r)
        applyCell(*matmul.cell, rowIndices[r], firstUnit,
                  ArrayRef(tileSums).slice(r * vectors, vectors));
  }

  /// Adds A[rows, k..k+1] * W[panel, k / 2, :] to `accumulators`: bf16
  /// pairs, a panel row of 2t bf16 (the t columns' elements at k and k + 1
  /// side by side) and per row one pair of A as 32 bits, broadcast. With
  /// AVX512-BF16 each vector is one `vdpbf16ps` (x86vector.avx512.dot: per
  /// lane acc + a_k w_k + a_k+1 w_k+1); without, the pairs are widened to
  /// f32 (a bf16 is the top half of an f32) and multiplied by two FMAs.
  SmallVector<Value> multiplyAddPairs(Value k, Value panel,
                                      ArrayRef<SmallVector<Value>> rowIndices,
                                      ValueRange accumulators) {
    int64_t vectors = tile / vectorWidth;
    auto pairType = VectorType::get({2 * vectorWidth}, b.getBF16Type());
    auto wordsType = VectorType::get({vectorWidth}, b.getI32Type());
    Value pairIndex = arith::DivUIOp::create(b, loc, k, index(2));
    SmallVector<Value> weights;
    for (int64_t v = 0; v < vectors; ++v)
      weights.push_back(vector::LoadOp::create(
          b, loc, pairType, pairPanels,
          ValueRange{panel, pairIndex, index(2 * v * vectorWidth)}));
    // f32 lanes of the k (`high`: k + 1) halves of the 32-bit pairs.
    auto widened = [&](Value words, bool high) {
      Type wordType = words.getType();
      Value bits = high ? arith::AndIOp::create(
                              b, loc, words,
                              createScalarOrSplatConstant(
                                  b, loc, wordType, APInt(32, 0xFFFF0000u)))
                              .getResult()
                        : arith::ShLIOp::create(
                              b, loc, words,
                              createScalarOrSplatConstant(b, loc, wordType, 16))
                              .getResult();
      Type floatType =
          isa<VectorType>(wordType) ? Type(vectorType) : Type(b.getF32Type());
      return arith::BitcastOp::create(b, loc, floatType, bits).getResult();
    };
    SmallVector<Value> widenedWeights[2];
    if (!bf16Dot)
      for (Value weight : weights) {
        Value words = vector::BitCastOp::create(b, loc, wordsType, weight);
        widenedWeights[0].push_back(widened(words, false));
        widenedWeights[1].push_back(widened(words, true));
      }
    SmallVector<Value> next;
    for (auto [r, indices] : llvm::enumerate(rowIndices)) {
      Value pair =
          vector::LoadOp::create(b, loc, VectorType::get({2}, b.getBF16Type()),
                                 matmul.input, withLast(indices, k));
      Value word = vector::ExtractOp::create(
          b, loc,
          vector::BitCastOp::create(b, loc,
                                    VectorType::get({1}, b.getI32Type()), pair),
          ArrayRef<int64_t>{0});
      if (bf16Dot) {
        Value broadcast = vector::BitCastOp::create(
            b, loc, pairType,
            vector::BroadcastOp::create(b, loc, wordsType, word));
        for (int64_t v = 0; v < vectors; ++v)
          next.push_back(x86vector::DotBF16Op::create(
              b, loc, vectorType, accumulators[r * vectors + v], broadcast,
              weights[v]));
        continue;
      }
      Value low =
          vector::BroadcastOp::create(b, loc, vectorType, widened(word, false));
      Value high =
          vector::BroadcastOp::create(b, loc, vectorType, widened(word, true));
      for (int64_t v = 0; v < vectors; ++v) {
        Value sum = vector::FMAOp::create(b, loc, low, widenedWeights[0][v],
                                          accumulators[r * vectors + v]);
        next.push_back(
            vector::FMAOp::create(b, loc, high, widenedWeights[1][v], sum));
      }
    }
    return next;
  }

  /// Prefetches the rows' units of every buffer the cell reads besides
  /// the tile, one request per vector.
  void prefetchCellInputs(FusedCell &cell, ArrayRef<SmallVector<Value>> rows,
                          Value firstUnit) {
    for (OpOperand *operand : cell.op.getDpsInputOperands()) {
      Value buffer = cell.unitBuffers[operand->getOperandNumber()];
      if (!buffer || cell.columns[operand->getOperandNumber()] ||
          cell.op.getMatchingBlockArgument(operand).use_empty() ||
          llvm::is_contained(cell.startOperand, operand->getOperandNumber()))
        continue;
      for (ArrayRef<Value> leading : rows)
        for (int64_t chunk = 0; chunk < cell.gateTile / vectorWidth; ++chunk)
          memref::PrefetchOp::create(
              b, loc, buffer, withLast(leading, chunkUnit(firstUnit, chunk)),
              /*isWrite=*/false, /*localityHint=*/3,
              /*isDataCache=*/true);
    }
  }

  /// The first unit of vector `chunk` of the K units from `firstUnit`.
  Value chunkUnit(Value firstUnit, int64_t chunk) {
    if (!chunk)
      return firstUnit;
    return arith::AddIOp::create(b, loc, firstUnit, index(chunk * vectorWidth));
  }

  /// The fused cell on one row of the tile: `sums` holds the G gates of K
  /// units (K / W vectors per gate), the cell's other operands are read
  /// and its outputs written at those units.
  void applyCell(FusedCell &cell, ArrayRef<Value> leading, Value firstUnit,
                 ArrayRef<Value> sums) {
    linalg::GenericOp op = cell.op;
    int64_t chunks = cell.gateTile / vectorWidth;
    BodyVectorizer vectors(b, loc, vectorWidth);
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      Value unit = chunkUnit(firstUnit, chunk);
      SmallVector<Value> indices = withLast(leading, unit);
      IRMapping mapping;
      for (OpOperand &operand : op->getOpOperands()) {
        BlockArgument argument = op.getMatchingBlockArgument(&operand);
        int64_t gate = cell.gateOf[operand.getOperandNumber()];
        if (gate >= 0)
          mapping.map(argument, sums[gate * chunks + chunk]);
        else if (!argument.use_empty() &&
                 !llvm::is_contained(cell.startOperand,
                                     operand.getOperandNumber()))
          mapping.map(argument,
                      vector::LoadOp::create(
                          b, loc, vectorType,
                          cell.unitBuffers[operand.getOperandNumber()],
                          cell.columns[operand.getOperandNumber()]
                              ? ValueRange{unit}
                              : ValueRange(indices)));
      }
      // The sums started from x_t's parts: the additions are done.
      for (Operation *add : cell.startAdds)
        for (Value operand : add->getOperands())
          if (auto argument = dyn_cast<BlockArgument>(operand);
              argument && cell.gateOf[argument.getArgNumber()] >= 0)
            mapping.map(add->getResult(0), mapping.lookup(argument));
      vectors.cloneBody(op, mapping, cell.startAdds);
      auto yield =
          cast<linalg::YieldOp>(op.getRegion().front().getTerminator());
      for (auto [value, init] :
           llvm::zip(yield.getOperands(), op.getDpsInitsMutable())) {
        Value result = vectors.vectorValue(mapping, value);
        Value buffer = cell.unitBuffers[init.getOperandNumber()];
        vector::StoreOp::create(b, loc, result, buffer, indices);
        if (cell.copy && buffer == cell.copied)
          vector::StoreOp::create(b, loc, result, cell.copy.getOutputs()[0],
                                  indices);
      }
    }
  }

  /// The most rows a recur.rnn cell's tail runs on the tiles for (see
  /// emit).
  static constexpr int64_t kMaxFusedCellRows = 16;
  /// K's chunk in the deep schedule: a 64-column panel's chunk is 64 KiB,
  /// four panels' fit a core's L2 with the block's rows of A.
  static constexpr int64_t kChunk = 256;
  /// Tiles of rows per block in the deep schedule.
  static constexpr int64_t chunkTiles = 8;
  /// Blocks enough to share among threads without splitting the panels.
  static constexpr int64_t parallelBlocks = 16;

  RewriterBase &b;
  Location loc;
  PackedMatmul &matmul;
  int64_t vectorWidth, tileRows, blockFloats;
  bool bf16Dot;
  int64_t panels = 0, depth = 0, tile = 0, columns = 0, kStep = 1;
  /// W in pairs, [P, K / 2, t, 2], viewed as [P, K / 2, 2t] (set by emit).
  Value pairPanels;
  unsigned rank = 0;
  VectorType vectorType;
  /// C's leading sizes, whose product is the row count (set by emit).
  SmallVector<Value> leadingSizes;
};

} // namespace

bool mlir::recur::cpu::isDeep(const PackedMatmul &matmul, int64_t blockFloats) {
  auto weightType = cast<MemRefType>(matmul.weight.getType());
  int64_t depth = (matmul.pairs ? 2 : 1) *
                  weightType.getDimSize(matmul.inPlaceWeight ? 0 : 1);
  return (ShapedType::isDynamic(depth) || depth * matmul.tile > blockFloats) &&
         !matmul.gateSource && !matmul.cell;
}

void mlir::recur::cpu::emitPackedMatmulKernel(
    RewriterBase &rewriter, PackedMatmul &matmul, int64_t vectorWidth,
    int64_t tileRows, int64_t blockFloats, bool bf16Dot) {
  KernelEmitter(rewriter, matmul, vectorWidth, tileRows, blockFloats, bf16Dot)
      .emit();
}
