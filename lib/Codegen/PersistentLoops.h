//===- PersistentLoops.h - serial loops that can run on a team of workers -===//
//
// One schedule, two targets: a time loop whose steps are parallel loops runs
// as one team of workers (OpenMP threads on the CPU, co-resident blocks of a
// persistent kernel on the GPU) that all execute the serial loop, share out
// each parallel loop, and meet at a barrier after it. Both lowerings take the
// loops this analysis accepts.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_LIB_CODEGEN_PERSISTENTLOOPS_H
#define RECUR_LIB_CODEGEN_PERSISTENTLOOPS_H

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <string>

namespace mlir::recur {

/// Whether every worker of a team may run `loop` itself, sharing out its
/// parallel loops: it has no results, holds at least one parallel loop, each
/// outermost parallel loop in it satisfies `canShareOut`, and every other op
/// computes values only (each worker gets the same ones) or is scf.for /
/// scf.if around such ops. Anything that reads or writes memory outside a
/// parallel loop would race with the other workers.
bool isPersistentLoop(scf::ForOp loop,
                      function_ref<bool(scf::ParallelOp)> canShareOut);
/// Why isPersistentLoop refuses `loop`, or "" if it accepts it.
std::string whyNotPersistent(scf::ForOp loop,
                             function_ref<bool(scf::ParallelOp)> canShareOut);

/// The outermost parallel loops in `loop`'s body (nested ones stay inside
/// them), in program order.
SmallVector<scf::ParallelOp> outermostParallelLoops(scf::ForOp loop);

/// The outermost loops under `root` that `isPersistentLoop` accepts, not
/// looking into parallel loops or into ops `skip` names (regions already run
/// by a team). `refused`, if given, hears of every loop holding parallel
/// loops that it refuses, and why.
SmallVector<scf::ForOp>
findPersistentLoops(Operation *root,
                    function_ref<bool(scf::ParallelOp)> canShareOut,
                    function_ref<bool(Operation *)> skip,
                    function_ref<void(scf::ForOp, StringRef)> refused = {});

} // namespace mlir::recur

#endif // RECUR_LIB_CODEGEN_PERSISTENTLOOPS_H
