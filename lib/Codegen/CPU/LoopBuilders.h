//===- LoopBuilders.h - loops whose bodies the caller's builder fills -----===//
//
// The CPU kernel emitters build loop bodies with their own rewriter (and its
// helpers) rather than with the nested builder an op's body callback gets.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_LIB_CODEGEN_CPU_LOOPBUILDERS_H
#define RECUR_LIB_CODEGEN_CPU_LOOPBUILDERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::recur {

/// scf.for from `begin` to `end` by `step`, without results; `body(iv)` runs
/// with `b` inserting into the loop body. `b`'s insertion point is restored.
inline void buildFor(OpBuilder &b, Location loc, Value begin, Value end,
                     Value step, function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, loc, begin, end, step);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(loop.getInductionVar());
}

/// scf.for from `begin` to `end` by `step` carrying `initial`; `body(iv,
/// carried)` returns the values for the next iteration. Returns the loop's
/// results. `b`'s insertion point is restored.
inline SmallVector<Value>
buildForWithValues(OpBuilder &b, Location loc, Value begin, Value end,
                   Value step, ValueRange initial,
                   function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto loop = scf::ForOp::create(b, loc, begin, end, step, initial);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  scf::YieldOp::create(b, loc,
                       body(loop.getInductionVar(), loop.getRegionIterArgs()));
  return llvm::to_vector_of<Value>(loop.getResults());
}

/// `value` rounded down to a multiple of `multiple` (> 0): the end of the
/// whole vectors, tiles or chunks in `value` elements.
inline Value roundDown(OpBuilder &b, Location loc, Value value,
                       int64_t multiple) {
  Value step = arith::ConstantIndexOp::create(b, loc, multiple);
  return arith::MulIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, value, step), step);
}

/// scf.parallel over [lower, upper) by `steps`; `body(ivs)` as for buildFor.
inline void buildParallel(OpBuilder &b, Location loc, ValueRange lower,
                          ValueRange upper, ValueRange steps,
                          function_ref<void(ValueRange)> body) {
  auto loop = scf::ParallelOp::create(b, loc, lower, upper, steps);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(loop.getInductionVars());
}

} // namespace mlir::recur

#endif // RECUR_LIB_CODEGEN_CPU_LOOPBUILDERS_H
