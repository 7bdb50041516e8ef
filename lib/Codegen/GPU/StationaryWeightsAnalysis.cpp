//===- StationaryWeightsAnalysis.cpp - what a fused step reads ------------===//
//
// Whether and how a fused step can be scheduled by groups of units: the
// weights it reads by gate rows, the slot that holds a group's rows of them.
//
//===----------------------------------------------------------------------===//

#include "StationaryWeights.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::recur;

namespace mlir::recur::stationary {

UnitStep readUnitStep(UnitStepAttr attr) {
  return {attr.getBatch(),
          attr.getUnit(),
          attr.getLayer(),
          attr.getHidden()[0],
          llvm::to_vector(attr.getGateTiles()),
          attr.getGates()};
}

int64_t tensorCoreStride(int64_t columns, Type operandType) {
  int64_t perWord = 32 / operandType.getIntOrFloatBitWidth();
  int64_t rowWords = operandType.isF32() ? 16 : 8;
  int64_t words = llvm::divideCeil(columns, perWord);
  words += (rowWords - words % 32 + 32) % 32;
  return words * perWord;
}

std::optional<int64_t> layerOf(Operation *op, const UnitStep &info,
                               Block *body) {
  if (!info.layerDim)
    return 0;
  for (Operation *parent = op->getParentOp(); parent && parent->getBlock();
       op = parent, parent = parent->getParentOp()) {
    auto perLayer = dyn_cast<scf::IndexSwitchOp>(parent);
    if (!perLayer)
      continue;
    auto index = perLayer.getArg().getDefiningOp<linalg::IndexOp>();
    if (!index || index->getBlock() != body || index.getDim() != *info.layerDim)
      continue;
    for (auto [value, region] :
         llvm::zip(perLayer.getCases(), perLayer.getCaseRegions()))
      if (&region == op->getParentRegion())
        return value;
    return std::nullopt;
  }
  return std::nullopt;
}

FailureOr<Slot> findWeights(linalg::GenericOp step, const UnitStep &info,
                            std::string &whyNot) {
  Slot slot;
  slot.gates = info.gates;
  SmallVector<int64_t> layerColumns(info.layers(), 0);
  SmallVector<SmallVector<std::pair<Value, int64_t>>> perLayer(info.layers());
  Block *body = step.getBody();
  bool computedWeights = false;
  WalkResult walk = step.getRegion().walk([&](memref::LoadOp load) {
    auto argument = dyn_cast<BlockArgument>(load.getMemRef());
    auto type = cast<MemRefType>(load.getMemRef().getType());
    if (type.getRank() != 2 || !type.hasStaticShape() ||
        type.getDimSize(0) != info.gates * info.hidden)
      return WalkResult::advance();
    auto function =
        argument
            ? dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp())
            : FunctionOpInterface();
    if (!function) {
      computedWeights = true;
      return WalkResult::advance();
    }
    // A model input of that shape (a static batch of H rows, one gate) is
    // read by batch row, not by gate rows.
    if (function.getArgAttr(argument.getArgNumber(),
                            RecurDialect::kInputAttrName))
      return WalkResult::advance();
    std::optional<int64_t> layer = layerOf(load, info, body);
    if (!layer || *layer < 0 || *layer >= info.layers()) {
      whyNot = "it reads a weight outside its layer's case";
      return WalkResult::interrupt();
    }
    if (slot.elementType && slot.elementType != type.getElementType()) {
      whyNot = "its weights have different element types";
      return WalkResult::interrupt();
    }
    slot.elementType = type.getElementType();
    for (const auto &found : perLayer)
      for (auto [buffer, unused] : found)
        if (buffer == argument && &found != &perLayer[*layer]) {
          whyNot = "two of its layers read the same weight";
          return WalkResult::interrupt();
        }
    if (!llvm::is_contained(llvm::make_first_range(perLayer[*layer]),
                            load.getMemRef()))
      perLayer[*layer].push_back({argument, type.getDimSize(1)});
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!slot.elementType) {
    whyNot = computedWeights
                 ? "its weights are computed at every run (a training "
                   "step's, which has no weight prologue)"
                 : "it reads no [" + std::to_string(info.gates) +
                       " H, K] weight by gate rows";
    return failure();
  }
  for (auto [layer, weights] : llvm::enumerate(perLayer)) {
    int64_t column = 0;
    for (auto [buffer, columns] : weights) {
      slot.weights.push_back({buffer, static_cast<int64_t>(layer), column});
      column += columns;
    }
    slot.columns = std::max(slot.columns, column);
  }
  return slot;
}

int64_t unitsPerBlock(const UnitStep &info, const Slot &slot, int64_t maxUnits,
                      int64_t sharedMemoryBytes, int64_t unitMultiple,
                      function_ref<int64_t(int64_t)> otherBytes) {
  int64_t bytes = slot.elementType.getIntOrFloatBitWidth() / 8;
  auto sized = [&](int64_t units) {
    Slot group = slot;
    group.units = units;
    return group;
  };
  for (int64_t units = llvm::bit_floor(static_cast<uint64_t>(maxUnits));
       units >= unitMultiple; units /= 2) {
    bool divides =
        llvm::all_of(llvm::seq<int64_t>(0, info.layers()), [&](int64_t layer) {
          return info.gateStride(layer) % units == 0;
        });
    if (divides && units % unitMultiple == 0 &&
        sized(units).allocatedRows() * slot.stride() * bytes +
                otherBytes(units) <=
            sharedMemoryBytes)
      return units;
  }
  return 0;
}

std::string whyNotByUnitGroups(linalg::GenericOp step, const UnitStep &info) {
  if (!step.hasPureBufferSemantics())
    return "it is not on buffers";
  if (step.getNumReductionLoops() != 0)
    return "it has reduction loops";
  for (AffineMap map : step.getIndexingMapsArray())
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return "an operand's indexing is not a projected permutation";
  SmallVector<int64_t> ranges = step.getStaticLoopRanges();
  if (ranges[info.unitDim] != info.hidden ||
      (info.layerDim && ranges[*info.layerDim] != info.layers()))
    return "its unit (or layer) loop does not span every unit (or layer)";
  std::string whyNot;
  step.getRegion().walk([&](Operation *op) {
    if (isa<linalg::IndexOp>(op) && op->getBlock() != step.getBody())
      whyNot = "it reads a loop index inside a nested region";
    else if (hasEffect<MemoryEffects::Write>(op))
      whyNot = "its body writes memory";
    return whyNot.empty() ? WalkResult::advance() : WalkResult::interrupt();
  });
  return whyNot;
}

SmallVector<Value> elementIndices(linalg::GenericOp step, OpOperand &operand,
                                  ArrayRef<Value> ivs) {
  SmallVector<Value> indices;
  for (AffineExpr result : step.getMatchingIndexingMap(&operand).getResults())
    indices.push_back(ivs[cast<AffineDimExpr>(result).getPosition()]);
  return indices;
}

bool isUniform(Value value, linalg::GenericOp step, const UnitStep &info) {
  Operation *definition = value.getDefiningOp();
  if (!definition)
    return !step.getRegion().isAncestor(value.getParentRegion());
  if (!step->isProperAncestor(definition))
    return true;
  if (auto index = dyn_cast<linalg::IndexOp>(definition))
    return info.layerDim && index.getDim() == *info.layerDim;
  return definition->getNumRegions() == 0 && isMemoryEffectFree(definition) &&
         llvm::all_of(definition->getOperands(), [&](Value operand) {
           return isUniform(operand, step, info);
         });
}

bool isLaneSplittableSum(scf::ForOp loop, linalg::GenericOp step,
                         const UnitStep &info) {
  if (loop.getNumRegionIterArgs() == 0)
    return false;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (auto [position, carried] : llvm::enumerate(loop.getRegionIterArgs())) {
    if (!carried.getType().isF32() || !carried.hasOneUse())
      return false;
    auto add = dyn_cast<arith::AddFOp>(*carried.getUsers().begin());
    if (!add || add->getBlock() != loop.getBody() ||
        add.getLhs() == add.getRhs() || !add->hasOneUse() ||
        yield.getOperand(position) != add.getResult())
      return false;
  }
  for (Operation *parent = loop->getParentOp(); parent != step;
       parent = parent->getParentOp()) {
    Value condition;
    if (auto branch = dyn_cast<scf::IfOp>(parent))
      condition = branch.getCondition();
    else if (auto cases = dyn_cast<scf::IndexSwitchOp>(parent))
      condition = cases.getArg();
    if (!condition || !isUniform(condition, step, info))
      return false;
  }
  return true;
}

} // namespace mlir::recur::stationary
