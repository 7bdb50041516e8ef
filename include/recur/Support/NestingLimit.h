//===- NestingLimit.h - Refuse IR nested deeper than the parser's stack -*- C++ -*-===//
//
// MLIR's parser recurses once per nested region, type or attribute, so text
// nested a few thousand levels deep overflows the stack: a crash instead of a
// diagnostic. The tools check the text first and refuse it with a location.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_SUPPORT_NESTINGLIMIT_H
#define RECUR_SUPPORT_NESTINGLIMIT_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/MemoryBuffer.h"

namespace mlir::recur {

/// Far deeper than any model (an LSTM stack nests 3-5 levels), far shallower
/// than what overflows the parser's stack, sanitizers included.
constexpr unsigned kMaxNestingDepth = 256;

/// Where `text` first nests brackets ({ ( [ <) deeper than `maxDepth`,
/// outside string literals and comments; nullptr if it never does.
const char *findExcessiveNesting(StringRef text,
                                 unsigned maxDepth = kMaxNestingDepth);

/// Reports excessive nesting in `buffer` as an error at its location (on
/// stderr, in the usual file:line:col form) and fails.
LogicalResult checkNestingDepth(const llvm::MemoryBuffer &buffer,
                                unsigned maxDepth = kMaxNestingDepth);

} // namespace mlir::recur

#endif // RECUR_SUPPORT_NESTINGLIMIT_H
