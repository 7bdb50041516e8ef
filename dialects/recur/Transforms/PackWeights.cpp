//===- PackWeights.cpp - GEMM weights in register-tile panels -------------===//
//
// recur.linear(x, w, b) -> recur.linear(x, recur.pack_panels(w), b) where w
// is a model weight, so that recur-outline-weight-prologue packs it once per
// weight binding; with bf16-pairs, in bf16 pairs of k (bf16 products).
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"
#include "recur/Utils/Remarks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::recur {
#define GEN_PASS_DEF_PACKWEIGHTS
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {

/// `weight` (f32) rounded to bf16, built from the bf16 model weight it
/// extends where it does (through a gate interleaving): no rounding then.
Value roundedToBf16(OpBuilder &builder, Value weight) {
  Location loc = weight.getLoc();
  if (auto extension = weight.getDefiningOp<arith::ExtFOp>();
      extension && getElementTypeOrSelf(extension.getIn()).isBF16())
    return extension.getIn();
  if (auto interleaved = weight.getDefiningOp<InterleaveGatesOp>()) {
    Value input = roundedToBf16(builder, interleaved.getInput());
    return InterleaveGatesOp::create(builder, loc, input.getType(), input,
                                     interleaved.getTile(),
                                     interleaved.getGates());
  }
  auto type = cast<RankedTensorType>(weight.getType());
  return arith::TruncFOp::create(builder, loc,
                                 type.clone(builder.getBF16Type()), weight);
}

struct PackWeightsPass : mlir::recur::impl::PackWeightsBase<PackWeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    // One packed copy per weight and panel width, however many ops read it.
    llvm::DenseMap<std::pair<Value, int64_t>, Value> packed;
    // `weight` packed in panels of `panelRows`, right after its definition;
    // with bf16-pairs, an f32 weight with an even K rounded to bf16 and
    // packed in pairs of k.
    // What the packed weights were made from, erased where nothing else
    // reads it (the f32 copy of a weight packed from its bf16 original).
    SmallVector<Operation *> replaced;
    auto pack = [&](OpOperand &weight, int64_t panelRows) {
      if (Operation *producer = weight.get().getDefiningOp())
        replaced.push_back(producer);
      Value &panels = packed[{weight.get(), panelRows}];
      if (!panels) {
        OpBuilder builder(&getContext());
        builder.setInsertionPointAfterValue(weight.get());
        auto type = cast<RankedTensorType>(weight.get().getType());
        bool pairs = bf16Pairs && type.getElementType().isF32() &&
                     type.getDimSize(1) % 2 == 0;
        if (bf16Pairs && !pairs)
          remarkMissed(weight.getOwner(), getArgument(),
                       "this GEMM multiplies in f32, not in bf16 pairs",
                       "its depth K = " + Twine(type.getDimSize(1)) +
                           " is odd");
        Value source =
            pairs ? roundedToBf16(builder, weight.get()) : weight.get();
        panels = PackPanelsOp::create(builder, weight.get().getLoc(), source,
                                      panelRows, pairs);
      }
      weight.assign(panels);
    };
    auto isMatrix = [](Value value) {
      auto type = dyn_cast<RankedTensorType>(value.getType());
      return type && type.getRank() == 2;
    };
    getOperation()->walk([&](Operation *op) {
      if (auto linear = dyn_cast<LinearOp>(op)) {
        if (tile <= 0 || !isMatrix(linear.getWeight()))
          return;
        if (isWeightOnly(linear.getWeight()))
          return pack(linear.getWeightMutable(), tile);
        // A product in a recurrence's cell with a captured model weight:
        // the capture is packed (once per binding), and the cell takes it
        // so, if every use in the cell is a product's weight.
        Value argument = linear.getWeight();
        OpOperand *captured = getCapturedOperand(argument);
        if (!captured)
          return;
        OpOperand &capture = *captured;
        bool onlyWeights = llvm::all_of(argument.getUses(), [](OpOperand &use) {
          auto user = dyn_cast<LinearOp>(use.getOwner());
          return user && &use == &user.getWeightMutable();
        });
        if (!onlyWeights || !isWeightOnly(capture.get()))
          return remarkMissed(op, getArgument(),
                              "this product in a recurrence's cell reads its "
                              "weight unpacked, by a scalar loop nest",
                              "the captured weight is not a model weight "
                              "that only products read");
        // A fused cell step's tile: the G gates of K units, one panel.
        auto interleaved = capture.get().getDefiningOp<InterleaveGatesOp>();
        pack(capture, interleaved
                          ? interleaved.getGates() * interleaved.getTile()
                          : int64_t(tile));
        argument.setType(capture.get().getType());
        return;
      }
      if (tile > 0 && isa<LSTMWavefrontOp>(op))
        return remarkMissed(op, getArgument(),
                            "the wavefront's weights are read unpacked, by a "
                            "scalar loop nest on the CPU",
                            "the register-tile kernels take one layer's step "
                            "(--fusion=cell)");
      auto recurrence = dyn_cast<LSTMRecurrenceOp>(op);
      if (!recurrence || !isMatrix(recurrence.getWHh()))
        return;
      // A projected step's recurrent GEMM has P columns, not H: unpacked.
      if (recurrence.getWHr()) {
        if (tile > 0)
          remarkMissed(op, getArgument(),
                       "this projected layer's recurrent weights are packed "
                       "at every run, not once per binding",
                       "the projected step's GEMMs are not packed by "
                       "recur-pack-weights");
        return;
      }
      // The separate schedule's recurrent GEMM is a GEMM like any other.
      if (tile > 0 && recurrence.getCell() == CellSchedule::separate &&
          isWeightOnly(recurrence.getWHh()))
        pack(recurrence.getWHhMutable(), tile);
      // The fused step's tile: the four gates of K units, one panel.
      auto interleaved = recurrence.getWHh().getDefiningOp<InterleaveGatesOp>();
      if (gateTile > 0 && recurrence.getCell() == CellSchedule::fused &&
          recurrence.getGateTile() == gateTile && interleaved &&
          isWeightOnly(interleaved.getInput()))
        pack(recurrence.getWHhMutable(), 4 * gateTile);
    });
    llvm::DenseSet<Operation *> erased;
    while (!replaced.empty()) {
      Operation *op = replaced.pop_back_val();
      if (erased.contains(op) || !isOpTriviallyDead(op))
        continue;
      erased.insert(op);
      for (Value operand : op->getOperands())
        if (Operation *producer = operand.getDefiningOp())
          replaced.push_back(producer);
      op->erase();
    }
  }
};

} // namespace
