//===- UnitStepCells.cpp - a cell that is one fused unit step -------------===//

#include "recur/IR/UnitStepCells.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::recur;

namespace {

/// The static offsets of `slice` if it has unit strides and static offsets.
std::optional<SmallVector<int64_t>>
staticOffsets(tensor::ExtractSliceOp slice) {
  if (!slice.hasUnitStride() ||
      ShapedType::isDynamicShape(slice.getStaticOffsets()))
    return std::nullopt;
  return llvm::to_vector(slice.getStaticOffsets());
}

bool isIdentity2d(AffineMap map) {
  return map.getNumDims() == 2 && map.isIdentity();
}

} // namespace

FailureOr<UnitStepCell> mlir::recur::analyzeUnitStepCell(Block &cell,
                                                         int64_t states,
                                                         std::string &whyNot) {
  auto fail = [&](const Twine &reason) {
    whyNot = reason.str();
    return failure();
  };
  UnitStepCell result;
  for (Operation &op : cell.without_terminator()) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic ||
        !generic->hasAttrOfType<UnitStepAttr>(RecurDialect::kUnitStepAttrName))
      continue;
    if (result.step)
      return fail("its cell has two fused steps");
    result.step = generic;
  }
  if (!result.step)
    return fail("its cell is not one fused unit step (recur-fuse-cell-step's "
                "recur.unit_step)");
  linalg::GenericOp step = result.step;
  result.config =
      step->getAttrOfType<UnitStepAttr>(RecurDialect::kUnitStepAttrName);
  if (result.config.getLayer() || result.config.getBatch() != 0 ||
      result.config.getUnit() != 1 || result.config.getNumLayers() != 1 ||
      result.config.getGateTiles()[0] != 0)
    return fail("its unit step is not one layer's in PyTorch's gate layout");
  auto yield = cast<YieldOp>(cell.getTerminator());
  for (Value value : yield.getOperands()) {
    auto index = dyn_cast<OpResult>(value);
    if (!index || index.getOwner() != step)
      return fail("its cell yields a value that its unit step does not "
                  "compute");
    result.yielded.push_back(index.getResultNumber());
  }
  if (int64_t(result.yielded.size()) != 1 + states)
    return fail("its cell yields " + Twine(result.yielded.size()) +
                " values for " + Twine(states) + " states");
  // What a block argument is to the cell.
  auto sourceOf = [&](Value value, UnitStepRead &read) {
    auto argument = dyn_cast<BlockArgument>(value);
    if (!argument || argument.getOwner() != &cell)
      return false;
    unsigned number = argument.getArgNumber();
    read.source = number == 0                  ? UnitStepRead::Source::input
                  : number <= unsigned(states) ? UnitStepRead::Source::state
                                               : UnitStepRead::Source::capture;
    read.index = number == 0                  ? 0
                 : number <= unsigned(states) ? number - 1
                                              : number - 1 - states;
    return true;
  };
  auto isCapture = [&](Value value) {
    auto argument = dyn_cast<BlockArgument>(value);
    return argument && argument.getOwner() == &cell &&
           argument.getArgNumber() > unsigned(states);
  };
  int64_t hidden = result.hidden();
  for (OpOperand *operand : step.getDpsInputOperands()) {
    Value value = operand->get();
    AffineMap map = step.getMatchingIndexingMap(operand);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return fail("an operand of its unit step is not indexed by a "
                  "projected permutation");
    UnitStepRead read;
    auto rank = cast<ShapedType>(value.getType()).getRank();
    read.offsets.assign(rank, 0);
    if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>()) {
      std::optional<SmallVector<int64_t>> offsets = staticOffsets(slice);
      if (!offsets || slice.getSourceType().getRank() != rank)
        return fail("its unit step reads a slice at dynamic offsets or "
                    "strides, or of another rank");
      read.offsets = *offsets;
      value = slice.getSource();
    }
    if (auto product = value.getDefiningOp<LinearOp>()) {
      // x_t times a captured weight, read by (b, j) as one gate's column
      // block (the whole product, for one gate).
      if (product.getInput() != cell.getArgument(0) ||
          !isCapture(product.getWeight()) ||
          (product.getBias() && !isCapture(product.getBias())) ||
          !product.getWeight().getType().hasStaticShape() ||
          !isIdentity2d(map) || read.offsets[0] != 0 ||
          cast<ShapedType>(operand->get().getType()).getDimSize(1) != hidden)
        return fail("its unit step reads a product that is not x_t's with "
                    "a captured weight by gate columns");
      read.source = UnitStepRead::Source::inputProduct;
      read.product = product;
      result.reads.push_back(read);
      continue;
    }
    if (!sourceOf(value, read))
      return fail("its unit step reads a tensor that the cell computes");
    if (read.source == UnitStepRead::Source::input &&
        (!isIdentity2d(map) || read.offsets[0] != 0 ||
         cast<ShapedType>(operand->get().getType()).getDimSize(1) != hidden))
      result.inputInColumns = false;
    result.reads.push_back(read);
  }
  for (OpOperand &init : step.getDpsInitsMutable()) {
    if (!init.get().getDefiningOp<tensor::EmptyOp>())
      return fail("its unit step writes into a tensor that is not new");
    if (!step.getMatchingBlockArgument(&init).use_empty())
      return fail("its unit step reads its own outputs");
    if (cast<ShapedType>(init.get().getType()).getRank() != 2)
      return fail("its unit step's outputs are not [B, H]");
  }
  // The body: x_t and the states only by tensor.extract; other values of
  // the cell are captures or constants, which the fused wavefront maps or
  // clones.
  WalkResult walk = step.getRegion().walk([&](Operation *op) {
    for (Value operand : op->getOperands()) {
      if (step.getRegion().isAncestor(operand.getParentRegion()) ||
          isCapture(operand) || matchPattern(operand, m_Constant()))
        continue;
      auto argument = dyn_cast<BlockArgument>(operand);
      if (argument && argument.getOwner() == &cell) {
        auto extract = dyn_cast<tensor::ExtractOp>(op);
        if (!extract || extract.getTensor() != operand ||
            extract.getIndices().size() != 2) {
          whyNot = "its unit step reads x_t or a state other than by element";
          return WalkResult::interrupt();
        }
        if (argument.getArgNumber() == 0)
          result.inputInColumns = false;
        continue;
      }
      if (step->getParentRegion()->isAncestor(operand.getParentRegion())) {
        whyNot = "its unit step's body reads a value its cell computes";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  for (Operation &op : cell.without_terminator())
    if (&op != step && !isMemoryEffectFree(&op))
      return fail("its cell has an op with side effects besides its step");
  return result;
}

bool mlir::recur::sameUnitStepShape(const UnitStepCell &a,
                                    const UnitStepCell &b) {
  return a.hidden() == b.hidden() &&
         a.config.getGates() == b.config.getGates() && a.yielded == b.yielded &&
         a.step->getResultTypes() == b.step->getResultTypes();
}
