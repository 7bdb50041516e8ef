//===- ShapeChecker.h - Symbolic shape checks for recur ops -----*- C++ -*-===//
//
// Recur ops describe their operands with symbolic shapes such as [T, B, I] and
// [4*H, H]. The checker learns each symbol's size from the first static
// dimension that fixes it and reports any later disagreement naming the value,
// the expected and the actual shape. The verifiers use it with an error
// emitter; builders and shape refinement use it silently to infer results.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_IR_SHAPECHECKER_H
#define RECUR_IR_SHAPECHECKER_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <string>

namespace mlir::recur {

/// One dimension of a symbolic shape: `factor * symbol`, e.g. 4*H.
struct SymbolicDim {
  SymbolicDim(std::string symbol, int64_t factor = 1)
      : symbol(std::move(symbol)), factor(factor) {}
  SymbolicDim(const char *symbol, int64_t factor = 1)
      : symbol(symbol), factor(factor) {}
  std::string symbol;
  int64_t factor;
};
using SymbolicShape = llvm::SmallVector<SymbolicDim, 4>;

/// Symbols d0, d1, ... for `rank` leading dimensions that pass through an op.
SymbolicShape leadingDims(int64_t rank);

class ShapeChecker {
public:
  using ErrorEmitter = std::function<InFlightDiagnostic()>;

  /// Without an emitter the checker is silent: failures are only returned.
  explicit ShapeChecker(ErrorEmitter emitError = nullptr)
      : emitError(std::move(emitError)) {}

  /// `type` must be a ranked tensor whose shape matches `shape`. `what` names
  /// the value in messages ("operand 'w_hh'").
  LogicalResult checkShape(StringRef what, Type type,
                           const SymbolicShape &shape,
                           bool requireStatic = false);

  /// `type` must be a ranked tensor of rank >= `minRank`; returns its rank.
  FailureOr<int64_t> checkRankAtLeast(StringRef what, Type type,
                                      int64_t minRank);

  /// Every floating-point tensor of an op shares one element type: the first
  /// one checked sets it.
  LogicalResult checkFloatElementType(StringRef what, Type type);

  /// The element type of `type` must be exactly `expected`.
  LogicalResult checkElementType(StringRef what, Type type, Type expected);

  /// Fixes `symbol` to `size`, known from somewhere other than an operand
  /// (an attribute).
  void assumeSize(StringRef symbol, int64_t size) { sizes[symbol] = size; }

  /// The sizes known so far for `shape` (kDynamic where a symbol is unknown).
  SmallVector<int64_t> sizesOf(const SymbolicShape &shape) const;

  /// The ranked tensor type of `shape` with the shared float element type.
  RankedTensorType floatTensorOf(const SymbolicShape &shape) const;

  /// Reports the message made of `parts` (unless silent) and fails. An
  /// inactive InFlightDiagnostic converts to success, hence not returned.
  template <typename... Parts> LogicalResult fail(const Parts &...parts) {
    if (emitError) {
      InFlightDiagnostic diag = emitError();
      (diag << ... << parts);
    }
    return failure();
  }

private:
  ErrorEmitter emitError;
  llvm::StringMap<int64_t> sizes;
  Type floatType;
  std::string floatTypeSource;
};

} // namespace mlir::recur

#endif // RECUR_IR_SHAPECHECKER_H
