//===- Remarks.h - a remark wherever a fast path is missed ------*- C++ -*-===//
//
// Every place where a pass leaves an op it targets to a slower form (a plain
// loop nest instead of a register tile, SIMT instead of tensor cores, an
// unfused layer) says so as an MLIR optimization remark of kind "missed",
// its category the pass's name. recur-compile --remarks prints them;
// recur-opt takes MLIR's --remarks-filter-missed=REGEX.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_UTILS_REMARKS_H
#define RECUR_UTILS_REMARKS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Remarks.h"

namespace mlir::recur {

/// Reports that `op` gets a slower form than `pass` (its command-line name)
/// gives when it can: `what` says which ("the fused step runs as a plain
/// loop nest"), `reason` why. `pass` and `what` must outlive the remark
/// (string literals).
inline void remarkMissed(Operation *op, StringRef pass, StringRef what,
                         const llvm::Twine &reason) {
  remark::missed(op->getLoc(), remark::RemarkOpts::name(what).category(pass))
      << remark::reason("{0}", reason.str());
}

} // namespace mlir::recur

#endif // RECUR_UTILS_REMARKS_H
