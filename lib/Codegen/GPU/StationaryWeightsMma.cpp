//===- StationaryWeightsMma.cpp - a group's products on tensor cores ------===//
//
// At tf32 and bf16 a block's warps compute the step's products (its sums
// over K) for a chunk of batch rows into shared memory with MMAs, then its
// threads run the pointwise tail.
//
//===----------------------------------------------------------------------===//

#include "GemmKernels.h"
#include "StationaryWeights.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::recur;

namespace mlir::recur::stationary {

/// k per trip of a product's k loop: each lane loads 4 consecutive k of its
/// rows, which serve two tf32 MMAs (m16n8k8) or one bf16 MMA (m16n8k16).
constexpr int64_t kProductDepthTile = 16;
constexpr int64_t kLaneElements = 4;
/// Batch rows per warp and chunk: an MMA's n.
constexpr int64_t kWarpBatchRows = 8;

/// Whether `index` is the step's batch row.
bool isBatchRow(Value index, linalg::GenericOp step, const UnitStep &info) {
  auto loopIndex = index.getDefiningOp<linalg::IndexOp>();
  return loopIndex && loopIndex->getBlock() == step.getBody() &&
         loopIndex.getDim() == info.batchDim;
}

/// `loop` as a Product, if it is one; a sum over K that is not says why in
/// `whyNot`.
std::optional<Product> matchProduct(scf::ForOp loop, linalg::GenericOp step,
                                    const UnitStep &info, const Slot &slot,
                                    std::string &whyNot) {
  if (!isLaneSplittableSum(loop, step, info))
    return std::nullopt;
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> stride = getConstantIntValue(loop.getStep());
  if (lower != 0 || stride != 1 || !upper || *upper <= 0) {
    whyNot = "a sum over K does not run over a static 0..K";
    return std::nullopt;
  }
  if (*upper % kProductDepthTile != 0) {
    whyNot = ("a sum over K = " + Twine(*upper) + " is not in whole tiles of " +
              Twine(kProductDepthTile) + " k")
                 .str();
    return std::nullopt;
  }
  Value k = loop.getInductionVar();
  Product product{loop};
  product.depth = *upper;
  for (BlockArgument sum : loop.getRegionIterArgs()) {
    auto add = cast<arith::AddFOp>(*sum.getUsers().begin());
    Value term = add.getLhs() == sum ? add.getRhs() : add.getLhs();
    auto multiply = term.getDefiningOp<arith::MulFOp>();
    if (!multiply || !multiply->hasOneUse())
      return std::nullopt;
    auto lhs = multiply.getLhs().getDefiningOp<memref::LoadOp>();
    auto rhs = multiply.getRhs().getDefiningOp<memref::LoadOp>();
    if (!lhs || !rhs)
      return std::nullopt;
    memref::LoadOp weightLoad = slot.find(lhs.getMemRef()) ? lhs : rhs;
    memref::LoadOp activation = weightLoad == lhs ? rhs : lhs;
    const StationaryWeight *weight = slot.find(weightLoad.getMemRef());
    if (!weight || slot.find(activation.getMemRef()) ||
        (product.activation && product.activation != activation))
      return std::nullopt;
    int64_t index = weight - slot.weights.data();
    if (product.weight >= 0 && product.weight != index)
      return std::nullopt;
    // w[row, k], the row the same at every k.
    if (weightLoad.getIndices()[1] != k ||
        !loop.isDefinedOutsideOfLoop(weightLoad.getIndices()[0]) ||
        cast<MemRefType>(weight->buffer.getType()).getDimSize(1) <
            product.depth)
      return std::nullopt;
    product.activation = activation;
    product.weight = index;
    product.weightLoads.push_back(weightLoad);
  }
  // Nothing else: the activation's load, a load, multiply and add per sum.
  size_t sums = product.weightLoads.size();
  if (loop.getBody()->getOperations().size() != 3 * sums + 2)
    return std::nullopt;
  // a[..., k]: every index but k the batch row or uniform; a buffer the step
  // does not write (later batch rows are read after earlier ones' results
  // are stored).
  memref::LoadOp activation = product.activation;
  ValueRange indices = activation.getIndices();
  if (indices.empty() || indices.back() != k ||
      !isUniform(activation.getMemRef(), step, info) ||
      !activation.getMemRefType().getElementType().isF32())
    return std::nullopt;
  bool batchRow = false;
  for (Value index : indices.drop_back()) {
    if (isBatchRow(index, step, info))
      batchRow = true;
    else if (!isUniform(index, step, info))
      return std::nullopt;
  }
  if (!batchRow ||
      llvm::is_contained(step.getDpsInits(), activation.getMemRef()))
    return std::nullopt;
  std::optional<int64_t> layer = layerOf(loop, info, step.getBody());
  if (!layer)
    return std::nullopt;
  product.layer = *layer;
  return product;
}

/// The step's products, if every load of a stationary weight is in one;
/// otherwise says why in `whyNot`.
FailureOr<SmallVector<Product>> matchProducts(linalg::GenericOp step,
                                              const UnitStep &info,
                                              const Slot &slot,
                                              std::string &whyNot) {
  SmallVector<Product> products;
  SmallVector<int64_t> perLayer(info.layers(), 0);
  llvm::SmallPtrSet<Operation *, 16> covered;
  step.getRegion().walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
    std::optional<Product> product =
        matchProduct(loop, step, info, slot, whyNot);
    if (!product)
      return;
    product->position = perLayer[product->layer]++;
    for (memref::LoadOp load : product->weightLoads)
      covered.insert(load);
    products.push_back(std::move(*product));
  });
  WalkResult uncovered = step.getRegion().walk([&](memref::LoadOp load) {
    return slot.find(load.getMemRef()) && !covered.contains(load)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (products.empty() || uncovered.wasInterrupted()) {
    if (whyNot.empty())
      whyNot = "a weight is read outside a sum over K of weight rows times "
               "the batch row's inputs";
    return failure();
  }
  return products;
}

/// The block's buffers of sums, [productsPerLayer][batch rows][slot rows,
/// whole MMA tiles, + 1]
/// (f32; the odd row length spreads a warp's stores and loads over the
/// banks), for `threads` threads.
MemRefType sumsType(MLIRContext *context, const Slot &slot, int64_t threads) {
  return MemRefType::get(
      {slot.productsPerLayer, kWarpBatchRows * (threads / 32),
       slot.allocatedRows() + 1},
      Float32Type::get(context), AffineMap(),
      gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup));
}

/// `value`, uniform in the step (isUniform), at the insertion point outside
/// it: what the step computes it from is cloned, with the layer's index
/// `layer`.
Value materializeUniform(OpBuilder &b, Value value, linalg::GenericOp step,
                         Value layer, IRMapping &map) {
  if (Value mapped = map.lookupOrNull(value))
    return mapped;
  Operation *definition = value.getDefiningOp();
  if (!definition || !step->isProperAncestor(definition))
    return value;
  if (isa<linalg::IndexOp>(definition)) {
    map.map(value, layer);
    return layer;
  }
  for (Value operand : definition->getOperands())
    materializeUniform(b, operand, step, layer, map);
  b.clone(*definition, map);
  return map.lookup(value);
}

/// Whether the block's iterations reach `loop`: the conditions of the
/// scf.if and scf.index_switch ops around it in the step (uniform, as
/// isLaneSplittableSum requires), at the insertion point.
Value reachedCondition(OpBuilder &b, Location loc, scf::ForOp loop,
                       linalg::GenericOp step, Value layer, IRMapping &map) {
  Value reached = arith::ConstantIntOp::create(b, loc, 1, 1);
  auto both = [&](Value condition) {
    reached = arith::AndIOp::create(b, loc, reached, condition);
  };
  Operation *op = loop;
  for (Operation *parent = loop->getParentOp(); parent != step;
       op = parent, parent = parent->getParentOp()) {
    Region *region = op->getParentRegion();
    if (auto branch = dyn_cast<scf::IfOp>(parent)) {
      Value condition =
          materializeUniform(b, branch.getCondition(), step, layer, map);
      if (region == &branch.getElseRegion())
        condition = arith::XOrIOp::create(
            b, loc, condition, arith::ConstantIntOp::create(b, loc, 1, 1));
      both(condition);
    } else if (auto cases = dyn_cast<scf::IndexSwitchOp>(parent)) {
      Value argument = materializeUniform(b, cases.getArg(), step, layer, map);
      bool isDefault = region == &cases.getDefaultRegion();
      for (auto [value, caseRegion] :
           llvm::zip(cases.getCases(), cases.getCaseRegions())) {
        if (!isDefault && &caseRegion != region)
          continue;
        both(arith::CmpIOp::create(
            b, loc,
            isDefault ? arith::CmpIPredicate::ne : arith::CmpIPredicate::eq,
            argument, arith::ConstantIndexOp::create(b, loc, value)));
      }
    }
  }
  return reached;
}

/// What every product's MMAs share: the warp's place in the chunk of batch
/// rows, and the lane's in PTX's fragments.
struct ProductLanes {
  Value warpColumn; // the warp's first batch row in the chunk
  Value group;      // lane / 4: a fragment's row (A) or column (B)
  Value kGroup;     // lane % 4: which 4 k of each 16 the lane holds
  Value batchRow;   // the batch row whose activations the lane loads
};

/// The block's sums of `product` for the chunk of batch rows `lanes` are in,
/// on tensor cores, stored at `sums[position][batch row in the chunk][slot
/// row]`. Warp w computes batch rows 8w..8w+7 of the chunk for all 4U slot
/// rows: the slot rows are the MMAs' m (16 per tile), the batch rows their
/// n. Each trip of the k loop takes 16 k: each lane loads 4 consecutive k
/// (4 kGroup + [0, 4)) of its two A rows from the slot and of its batch row
/// from the activation, rounded to the operand type. The k within those 16
/// are permuted alike in both operands, which the sums do not see: PTX's
/// logical k kGroup, kGroup + 4 of a tf32 MMA (its registers 2r, 2r + 1)
/// are the lane's elements 2s, 2s + 1 in MMA s; a bf16 MMA's k pairs 2
/// kGroup + [0, 2) and 2 kGroup + 8 + [0, 2) its elements [0, 2), [2, 4).
void emitProduct(OpBuilder &b, Location loc, const Product &product,
                 linalg::GenericOp step, const UnitStep &info, const Slot &slot,
                 Value slotBuffer, Value sums, Value layer,
                 const ProductLanes &lanes) {
  IndexMath e{b, loc};
  IRMapping map;
  Value reached = reachedCondition(b, loc, product.loop, step, layer, map);
  auto inProduct = scf::IfOp::create(b, loc, reached, /*withElse=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(inProduct.thenBlock());

  Type operandType = slot.operandType;
  bool tf32 = operandType.isF32();
  int64_t pack = 32 / operandType.getIntOrFloatBitWidth();
  int64_t mmaK = tf32 ? 8 : 16;
  int64_t mmaTiles = slot.allocatedRows() / 16;
  auto accumulatorType = VectorType::get({2, 2}, b.getF32Type());
  Value zeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accumulatorType, 0.0f));

  // The activation's indices but k, at the lane's batch row.
  memref::LoadOp activation = product.activation;
  SmallVector<Value> indices;
  for (Value index : activation.getIndices().drop_back()) {
    indices.push_back(isBatchRow(index, step, info)
                          ? lanes.batchRow
                          : materializeUniform(b, index, step, layer, map));
  }
  Value activationBuffer =
      materializeUniform(b, activation.getMemRef(), step, layer, map);
  bool vectorLoads =
      mlir::recur::gemm::canLoadRowVectors(activationBuffer, kLaneElements);
  const StationaryWeight &weight = slot.weights[product.weight];
  auto laneVector = VectorType::get({kLaneElements}, operandType);

  auto kLoop = scf::ForOp::create(
      b, loc, e.index(0), e.index(product.depth), e.index(kProductDepthTile),
      SmallVector<Value>(mmaTiles, zeros),
      [&](OpBuilder &nb, Location loc, Value kTile, ValueRange accumulators) {
        IndexMath n{nb, loc};
        Value k = n.add(kTile, n.mul(lanes.kGroup, n.index(kLaneElements)));
        SmallVector<Value> at(indices);
        at.push_back(k);
        Value loaded;
        auto f32Vector = VectorType::get({kLaneElements}, nb.getF32Type());
        if (vectorLoads) {
          loaded = vector::LoadOp::create(nb, loc, f32Vector, activationBuffer,
                                          at, /*nontemporal=*/false,
                                          llvm::MaybeAlign(16));
        } else {
          SmallVector<Value> elements;
          for (int64_t i = 0; i < kLaneElements; ++i) {
            at.back() = n.add(k, n.index(i));
            elements.push_back(
                memref::LoadOp::create(nb, loc, activationBuffer, at));
          }
          loaded = vector::FromElementsOp::create(nb, loc, f32Vector, elements);
        }
        Value activations =
            mlir::recur::gemm::roundToOperandType(nb, loc, loaded, operandType);
        Value column = n.add(k, n.index(weight.slotColumn));
        auto weightRows = [&](int64_t row) -> Value {
          return vector::LoadOp::create(
              nb, loc, laneVector, slotBuffer,
              ValueRange{n.add(lanes.group, n.index(row)), column},
              /*nontemporal=*/false,
              llvm::MaybeAlign(kLaneElements *
                               operandType.getIntOrFloatBitWidth() / 8));
        };
        // Registers of `pack` elements, elements `first` + [0, pack) of
        // each source.
        auto fragment = [&](ArrayRef<std::pair<Value, int64_t>> registers) {
          auto type = VectorType::get(
              {static_cast<int64_t>(registers.size()), pack}, operandType);
          Value result = arith::ConstantOp::create(
              nb, loc,
              DenseElementsAttr::get(type, nb.getZeroAttr(operandType)));
          for (auto [r, source] : llvm::enumerate(registers)) {
            SmallVector<Value> elements;
            for (int64_t i = 0; i < pack; ++i)
              elements.push_back(vector::ExtractOp::create(
                  nb, loc, source.first, source.second + i));
            Value piece = vector::FromElementsOp::create(
                nb, loc, VectorType::get({pack}, operandType), elements);
            result = vector::InsertOp::create(nb, loc, piece, result,
                                              static_cast<int64_t>(r));
          }
          return result;
        };
        SmallVector<Value> updated(accumulators);
        for (int64_t tile = 0; tile < mmaTiles; ++tile) {
          Value upper = weightRows(16 * tile),
                lower = weightRows(16 * tile + 8);
          for (int64_t first = 0; first < kLaneElements; first += 2 * pack) {
            Value a = fragment({{upper, first},
                                {lower, first},
                                {upper, first + pack},
                                {lower, first + pack}});
            Value bFragment =
                fragment({{activations, first}, {activations, first + pack}});
            updated[tile] =
                nvgpu::MmaSyncOp::create(nb, loc, a, bFragment, updated[tile],
                                         ArrayRef<int64_t>{16, 8, mmaK}, tf32);
          }
        }
        scf::YieldOp::create(nb, loc, updated);
      });

  // Accumulator (i, j) of tile t: slot row 16 t + group + 8 i, batch row
  // warpColumn + 2 kGroup + j of the chunk.
  Value position = e.index(product.position);
  Value firstColumn = e.add(lanes.warpColumn, e.mul(lanes.kGroup, e.index(2)));
  for (int64_t tile = 0; tile < mmaTiles; ++tile)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        Value sum = vector::ExtractOp::create(b, loc, kLoop.getResult(tile),
                                              ArrayRef<int64_t>{i, j});
        memref::StoreOp::create(
            b, loc, sum, sums,
            ValueRange{position, e.add(firstColumn, e.index(j)),
                       e.add(lanes.group, e.index(16 * tile + 8 * i))});
      }
}

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
                           ArrayRef<Product> products, int64_t threads) {
  Location loc = step.getLoc();
  GroupLoops loops =
      createGroupLoops(rewriter, step, info, slot, slotBuffer, threads);
  IndexMath e{rewriter, loc};
  int64_t chunkRows = kWarpBatchRows * (threads / 32);
  Value warp = e.div(loops.thread, e.index(32));
  Value lane = e.rem(loops.thread, e.index(32));
  ProductLanes lanes;
  lanes.warpColumn = e.mul(warp, e.index(kWarpBatchRows));
  lanes.group = e.div(lane, e.index(4));
  lanes.kGroup = e.rem(lane, e.index(4));
  Value lastRow = e.sub(loops.batch, e.index(1));
  Value chunks =
      e.div(e.add(loops.batch, e.index(chunkRows - 1)), e.index(chunkRows));
  auto chunkLoop =
      scf::ForOp::create(rewriter, loc, e.index(0), chunks, e.index(1));
  rewriter.setInsertionPointToStart(chunkLoop.getBody());
  Value chunkStart = e.mul(chunkLoop.getInductionVar(), e.index(chunkRows));
  // Rows past the batch load the last row's activations; their sums are
  // never read.
  lanes.batchRow = arith::MinUIOp::create(
      rewriter, loc, e.add(chunkStart, e.add(lanes.warpColumn, lanes.group)),
      lastRow);
  for (const Product &product : products)
    emitProduct(rewriter, loc, product, step, info, slot, slotBuffer, sums,
                loops.layer, lanes);
  gpu::BarrierOp::create(rewriter, loc);

  auto elements =
      scf::ForOp::create(rewriter, loc, loops.thread,
                         e.index(slot.units * chunkRows), e.index(threads));
  gpu::BarrierOp::create(rewriter, loc);
  rewriter.setInsertionPointToStart(elements.getBody());
  Value element = elements.getInductionVar();
  Value chunkRow = e.rem(element, e.index(chunkRows));
  Value batchRow = e.add(chunkStart, chunkRow);
  Value inBatch = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ult, batchRow, loops.batch);
  auto iteration = scf::IfOp::create(rewriter, loc, inBatch, false);
  rewriter.setInsertionPointToStart(iteration.thenBlock());
  SmallVector<Value> ivs(step.getNumLoops());
  ivs[info.batchDim] = batchRow;
  ivs[info.unitDim] =
      e.add(loops.firstUnit, e.div(element, e.index(chunkRows)));
  if (info.layerDim)
    ivs[*info.layerDim] = loops.layer;
  Value always = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
  IRMapping map = cloneIteration(rewriter, step, ivs, always);
  for (const Product &product : products) {
    auto loop = cast<scf::ForOp>(map.lookup(product.loop));
    rewriter.setInsertionPoint(loop);
    IndexMath n{rewriter, loop.getLoc()};
    const StationaryWeight &weight = slot.weights[product.weight];
    for (auto [load, init, result] : llvm::zip_equal(
             product.weightLoads, loop.getInitArgs(), loop.getResults())) {
      Value row = map.lookup(memref::LoadOp(load).getIndices()[0]);
      Value slotRow = slotRowOf(n, info, slot, weight, row, loops.firstUnit);
      Value sum = memref::LoadOp::create(
          rewriter, loop.getLoc(), sums,
          ValueRange{n.index(product.position), chunkRow, slotRow});
      rewriter.replaceAllUsesWith(
          result, arith::AddFOp::create(rewriter, loop.getLoc(), init, sum));
    }
    rewriter.eraseOp(loop);
  }
  rewriter.eraseOp(step);
}
} // namespace mlir::recur::stationary
