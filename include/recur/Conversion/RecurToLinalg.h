//===- RecurToLinalg.h - recur ops to linalg on tensors ---------*- C++ -*-===//

#ifndef RECUR_CONVERSION_RECURTOLINALG_H
#define RECUR_CONVERSION_RECURTOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::recur {

/// The patterns of convert-recur-to-linalg: every recur op to linalg,
/// tensor, arith, math and scf on tensors. `embeddingGradRowBlocks` > 0
/// makes recur.embedding_grad an scf.forall over that many blocks of table
/// rows (a kernel on the GPU) instead of a loop over ids.
/// `activeRowProducts`: the hoisted input product of a recurrence on rows
/// sorted by length runs step by step on the active rows.
void populateRecurToLinalgPatterns(RewritePatternSet &patterns,
                                   int64_t embeddingGradRowBlocks = 0,
                                   bool activeRowProducts = true);

} // namespace mlir::recur

#endif // RECUR_CONVERSION_RECURTOLINALG_H
