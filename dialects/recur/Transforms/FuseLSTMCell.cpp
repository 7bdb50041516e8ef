//===- FuseLSTMCell.cpp - one loop nest per step for GEMM and cell --------===//
//
// The decision is recorded on the op (cell<fused>); convert-recur-to-linalg
// realizes it as a single loop nest per step for both targets.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Transforms/Passes.h"

namespace mlir::recur {
#define GEN_PASS_DEF_FUSELSTMCELL
#include "recur/Transforms/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;
using namespace mlir::recur;

namespace {
struct FuseLSTMCellPass
    : mlir::recur::impl::FuseLSTMCellBase<FuseLSTMCellPass> {
  void runOnOperation() override {
    getOperation()->walk([](LSTMRecurrenceOp op) {
      op.setCell(CellSchedule::fused);
    });
  }
};
} // namespace
