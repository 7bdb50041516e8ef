//===- FuseLSTMCell.cpp - one loop nest per step for GEMM and cell --------===//
//
// The decision is recorded on the op (cell<fused>, and the layout of w_hh it
// reads: interleaved(K)); convert-recur-to-linalg realizes it as a single
// loop nest per step for both targets.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"
#include "recur/Utils/Remarks.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Debug.h"

namespace mlir::recur {
#define GEN_PASS_DEF_FUSELSTMCELL
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

#define DEBUG_TYPE "recur-fuse-lstm-cell"

using namespace mlir;
using namespace mlir::recur;

namespace {

/// The largest power of two that is at most `limit` and divides `hidden`.
int64_t gateTileFor(int64_t hidden, int64_t limit) {
  int64_t tile = 1;
  while (tile * 2 <= limit && hidden % (tile * 2) == 0)
    tile *= 2;
  return tile;
}

struct FuseLSTMCellPass
    : mlir::recur::impl::FuseLSTMCellBase<FuseLSTMCellPass> {
  using FuseLSTMCellBase::FuseLSTMCellBase;

  LogicalResult initialize(MLIRContext *context) override {
    if (gateTile < 1)
      return emitError(UnknownLoc::get(context))
             << "recur-fuse-lstm-cell: gate-tile must be at least 1, got "
             << gateTile.getValue();
    return success();
  }

  void runOnOperation() override {
    getOperation()->walk([&](LSTMRecurrenceOp op) {
      // Already fused: its w_hh may be interleaved already. A projected
      // step (proj_size) keeps the separate schedule.
      if (op.getCell() == CellSchedule::fused)
        return;
      auto missed = [&](const Twine &reason) {
        remarkMissed(op, getArgument(),
                     "the LSTM step runs with the separate schedule (a [B, "
                     "4H] gate tensor, then the cell)",
                     reason);
      };
      if (op.getWHr())
        return missed("the layer projects its hidden state (proj_size)");
      int64_t tile = gateTileFor(op.getHiddenSize(), gateTile);
      if (wholeTilesOnly && tile != gateTile)
        return missed("its " + Twine(op.getHiddenSize()) +
                      " units are not whole tiles of " + Twine(gateTile) +
                      ", the CPU's vector width");
      LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": " << op.getLoc()
                              << ": fused, w_hh gate-interleaved with tile "
                              << tile << "\n");
      op.setCell(CellSchedule::fused);
      OpBuilder builder(op);
      Value interleaved = InterleaveGatesOp::create(
          builder, op.getLoc(), op.getWHh().getType(), op.getWHh(), tile);
      op.getWHhMutable().assign(interleaved);
      op.setGateTile(tile);
    });
  }
};
} // namespace
