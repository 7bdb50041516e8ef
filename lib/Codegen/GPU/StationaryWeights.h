//===- StationaryWeights.h - a block per group of units ---------*- C++ -*-===//
//
// What recur-gpu-stationary-weights' parts share: the analysis of a fused
// step (its #recur.unit_step, the weights it reads by gate rows, the slot a
// block keeps them in), the group's staging and iterations, and the two
// schedules, SIMT FMAs (StationaryWeightsSimt.cpp) and tensor cores
// (StationaryWeightsMma.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_LIB_CODEGEN_GPU_STATIONARYWEIGHTS_H
#define RECUR_LIB_CODEGEN_GPU_STATIONARYWEIGHTS_H

#include "recur/IR/RecurOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/Support/MathExtras.h"

#include <optional>
#include <string>

namespace mlir::recur::stationary {

/// What a fused step's #recur.unit_step says, for layers of one size.
struct UnitStep {
  int64_t batchDim, unitDim;
  std::optional<int64_t> layerDim;
  int64_t hidden;                 // every layer's H
  SmallVector<int64_t> gateTiles; // per layer; 0: PyTorch's layout
  int64_t gates = 4;              // gates per unit: 4 (LSTM), 3 (GRU), ...

  int64_t layers() const { return gateTiles.size(); }
  /// Rows between gate g and gate g + 1 of one unit in layer `layer`'s
  /// weights.
  int64_t gateStride(int64_t layer) const {
    return gateTiles[layer] ? gateTiles[layer] : hidden;
  }
};

UnitStep readUnitStep(UnitStepAttr attr);

/// A weight the step reads by its gate rows, and where a block keeps them.
struct StationaryWeight {
  Value buffer;
  int64_t layer;
  int64_t slotColumn; // first column in the shared-memory slot
};

/// The elements per slot row on tensor cores: at least `columns`, rows
/// padded so that the 16-byte (f32) or 8-byte (bf16) loads of a quarter or
/// half warp (two or four rows, 4 k of each from each of 4 lanes) fall into
/// different banks.
int64_t tensorCoreStride(int64_t columns, Type operandType);

/// The slot: for a group of `units` units, gates * units rows (gate g of
/// the group's unit j at row g * units + j), each the concatenated rows of
/// the layer's weights, `stride()` elements apart.
struct Slot {
  SmallVector<StationaryWeight> weights;
  int64_t gates = 4;
  int64_t units = 0;
  int64_t columns = 0;
  Type elementType;
  /// On tensor cores: the MMA operand type the weights are rounded to (f32
  /// holding tf32, or bf16), and how many products a layer has at most (the
  /// block's buffers of sums). Null: SIMT FMAs on the weights as they are.
  Type operandType;
  int64_t productsPerLayer = 0;

  bool operator==(const Slot &other) const {
    auto key = [](const Slot &slot) {
      return std::make_tuple(slot.gates, slot.units, slot.columns,
                             slot.elementType, slot.operandType,
                             slot.productsPerLayer);
    };
    auto weightKey = [](const StationaryWeight &weight) {
      return std::make_tuple(weight.buffer, weight.layer, weight.slotColumn);
    };
    return key(*this) == key(other) &&
           llvm::equal(llvm::map_range(weights, weightKey),
                       llvm::map_range(other.weights, weightKey));
  }

  /// Its rows: every gate of every unit of the group.
  int64_t rows() const { return gates * units; }
  /// The rows of its buffer: on tensor cores, whole MMA tiles (m = 16), the
  /// rows past rows() never staged and their sums never read (a GRU's 8
  /// units: 24 rows in 32).
  int64_t allocatedRows() const {
    return operandType ? llvm::alignTo(rows(), 16) : rows();
  }

  int64_t stride() const {
    return operandType ? tensorCoreStride(columns, operandType) : columns;
  }

  const StationaryWeight *find(Value buffer) const {
    for (const StationaryWeight &weight : weights)
      if (weight.buffer == buffer)
        return &weight;
    return nullptr;
  }
};

/// The case of the layer switch that `op` is in (the body's scf.index_switch
/// on the layer index), or 0 without layers. Null if it is in none.
std::optional<int64_t> layerOf(Operation *op, const UnitStep &info,
                               Block *body);

/// The weights the step reads by gate rows: [G H, K] function arguments
/// (weights never change during a run) loaded in the step's body, grouped by
/// layer. Fails, saying why in `whyNot`, if one is read by two layers or
/// outside the layer switch.
FailureOr<Slot> findWeights(linalg::GenericOp step, const UnitStep &info,
                            std::string &whyNot);

/// The most units (a power of two up to `maxUnits`, a multiple of
/// `unitMultiple`, that divides every layer's gate stride) whose slot and
/// `otherBytes(units)` fit in `sharedMemoryBytes`; 0 if none does.
int64_t unitsPerBlock(const UnitStep &info, const Slot &slot, int64_t maxUnits,
                      int64_t sharedMemoryBytes, int64_t unitMultiple,
                      function_ref<int64_t(int64_t)> otherBytes);

/// Why `step` cannot be scheduled by unit groups, or "" if it can: it needs
/// buffers, one iteration per output element (projected permutation maps),
/// a body that writes no memory (a thread may repeat an iteration) and has
/// linalg.index only in its own block, the unit dimension of extent H.
std::string whyNotByUnitGroups(linalg::GenericOp step, const UnitStep &info);

/// The element of `operand` that iteration `ivs` of `step` reads or writes
/// (its indexing map is a projected permutation).
SmallVector<Value> elementIndices(linalg::GenericOp step, OpOperand &operand,
                                  ArrayRef<Value> ivs);

/// Whether `value` is the same for every iteration of `step` (so for every
/// thread of a block, which owns one layer at one time step): defined
/// outside the step, the layer's index, or computed from such values alone.
bool isUniform(Value value, linalg::GenericOp step, const UnitStep &info);

/// Whether `loop`, in `step`'s body, is a sum that the threads of one
/// iteration can share: every value it carries is an f32 accumulated by one
/// addf, and every condition around it is uniform, so that all threads of a
/// warp reach the shuffles after it together.
bool isLaneSplittableSum(scf::ForOp loop, linalg::GenericOp step,
                         const UnitStep &info);

//===----------------------------------------------------------------------===//
// A block per group of units: staging its weights, running its iterations
//===----------------------------------------------------------------------===//

/// Index arithmetic at a builder's insertion point.
struct IndexMath {
  OpBuilder &b;
  Location loc;

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivUIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemUIOp::create(b, loc, x, y); }
};

/// The row of gate 0 of unit `unit` in layer `layer`'s weights: j in
/// PyTorch's layout, j + (G - 1) K * (j / K) interleaved with tile K (as the
/// conversion's gateRows).
Value firstGateRow(IndexMath &e, const UnitStep &info, int64_t layer,
                   Value unit);

/// Copies the rows of group `firstUnit`'s units of every weight of `layer`
/// into `slot`, the block's `threads` threads sharing out the elements
/// (consecutive threads, consecutive columns).
void emitLoadLayer(IndexMath &e, const UnitStep &info, const Slot &slot,
                   Value slotBuffer, int64_t layer, Value firstUnit,
                   Value thread, int64_t threads);

/// The staging of a group's weights, between two block barriers: an scf.if
/// marked kStageWeightsAttrName, always taken here;
/// recur-gpu-persistent-kernels takes it only when a block owns several
/// groups, and otherwise loads the weights once before the time loop.
void emitStage(IndexMath &e, const UnitStep &info, const Slot &slot,
               Value slotBuffer, Value layer, Value firstUnit, Value thread,
               int64_t threads);

/// Where a step's schedule stands: in the thread loop of the group loop
/// (mapped to blocks and threads), after the weights' stage.
struct GroupLoops {
  Value layer, firstUnit, thread, batch;
};

/// Creates, before `step` (left in place), the loop over its groups of
/// `slot.units` units (mapped to blocks) and in it the loop over `threads`
/// threads, which stages the group's weights; leaves the insertion point
/// after the stage.
GroupLoops createGroupLoops(RewriterBase &rewriter, linalg::GenericOp step,
                            const UnitStep &info, const Slot &slot,
                            Value slotBuffer, int64_t threads);

/// Clones `step`'s body for iteration `ivs` at the insertion point; its
/// results are stored where `stores` holds. Returns the clone's mapping.
IRMapping cloneIteration(RewriterBase &rewriter, linalg::GenericOp step,
                         ArrayRef<Value> ivs, Value stores);

/// The slot row that holds row `row` of `weight` (gate g of unit firstUnit
/// + j, at row first + g * stride + j of the weight, is at slot row g * U +
/// j).
Value slotRowOf(IndexMath &e, const UnitStep &info, const Slot &slot,
                const StationaryWeight &weight, Value row, Value firstUnit);

/// Replaces `step` by a loop over groups (mapped to blocks) of a loop over
/// `threads` threads. An iteration (unit, batch row) of the group, batch row
/// fastest, is run by `lanes` consecutive threads, which share its sums over
/// K (splitAcrossLanes): as many as leave no thread idle, up to `maxLanes`,
/// so that a small batch still keeps the block busy. Every thread makes the
/// same number of trips, so that warps reach the shuffles whole: threads
/// past the last iteration repeat it and store nothing.
void scheduleByUnitGroups(RewriterBase &rewriter, linalg::GenericOp step,
                          const UnitStep &info, const Slot &slot,
                          Value slotBuffer, int64_t threads, int64_t maxLanes);

//===----------------------------------------------------------------------===//
// The step's products on tensor cores
//===----------------------------------------------------------------------===//

/// A sum over K in the step's body that a block computes on tensor cores
/// for all its iterations at once: `scf.for %k = 0 to K` carrying f32 sums,
/// each `sum_g += a[..., k] * w[row_g, k]`, with `a` an activation (indexed
/// by the batch row, values the same for the whole block, and k innermost)
/// and `w` one stationary weight.
struct Product {
  scf::ForOp loop;
  memref::LoadOp activation;
  SmallVector<memref::LoadOp> weightLoads; // by carried sum
  int64_t weight = -1;                     // in Slot::weights
  int64_t depth = 0;                       // K
  int64_t layer = 0;
  int64_t position = 0; // among its layer's products, in program order
};

/// The step's products, if every load of a stationary weight is in one;
/// otherwise says why in `whyNot`.
FailureOr<SmallVector<Product>> matchProducts(linalg::GenericOp step,
                                              const UnitStep &info,
                                              const Slot &slot,
                                              std::string &whyNot);

/// The block's buffers of sums, [productsPerLayer][batch rows][4U + 1]
/// (f32; the odd row length spreads a warp's stores and loads over the
/// banks), for `threads` threads.
MemRefType sumsType(MLIRContext *context, const Slot &slot, int64_t threads);

/// Replaces `step` by the schedule of scheduleByUnitGroups with its
/// products on tensor cores. The block takes its batch rows by chunks of 8
/// per warp: it computes the chunk's products into `sums` (emitProduct),
/// waits at a barrier, runs the chunk's (unit, batch row) iterations, a
/// thread each, with each product's loop replaced by its initial values
/// plus the sums, and waits at a second barrier before the next chunk's
/// products overwrite them.
void scheduleOnTensorCores(RewriterBase &rewriter, linalg::GenericOp step,
                           const UnitStep &info, const Slot &slot,
                           Value slotBuffer, Value sums,
                           ArrayRef<Product> products, int64_t threads);

} // namespace mlir::recur::stationary

#endif // RECUR_LIB_CODEGEN_GPU_STATIONARYWEIGHTS_H
