//===- CellProgram.h - a recur.rnn cell as a reference program --*- C++ -*-===//

#ifndef RECUR_TARGET_CELLPROGRAM_H
#define RECUR_TARGET_CELLPROGRAM_H

#include "llvm/Support/JSON.h"

#include <optional>

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::recur {
class RNNOp;

/// The cell region of `op` as a program of the reference's cell
/// interpreter: {"arguments", "ops", "yield"}, values by name; nullopt when
/// the region holds an op the interpreter does not know.
std::optional<llvm::json::Object> describeCell(RNNOp op);

/// One op outside any cell (a slice, a sum, an elementwise generic) as a
/// program of one op of the cell interpreter, whose arguments are the op's
/// operands and whose yield its results; nullopt for an op it does not know.
std::optional<llvm::json::Object> describeTensorOp(Operation &op);
} // namespace mlir::recur

#endif // RECUR_TARGET_CELLPROGRAM_H
