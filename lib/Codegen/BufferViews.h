//===- BufferViews.h - the buffers that memref views look into ------------===//
//
// Kernel emitters on buffers must know when two memrefs may share memory:
// views (subviews, reshapes, casts) of one allocation do, distinct
// allocations never do.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_LIB_CODEGEN_BUFFERVIEWS_H
#define RECUR_LIB_CODEGEN_BUFFERVIEWS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::recur {

/// The buffer `memref` is a view of, looking through view-like ops: an
/// allocation, a function or loop argument, a global...
inline Value rootBuffer(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  return memref;
}

/// The allocation `memref` is a view of, or null.
inline memref::AllocOp rootAllocation(Value memref) {
  return rootBuffer(memref).getDefiningOp<memref::AllocOp>();
}

/// The allocation `memref` is, whole or as the view of its leading rows
/// that recur-allocate-at-bound makes of a step's buffer (a
/// memref.reinterpret_cast of it), or null.
inline memref::AllocOp ownAllocation(Value memref) {
  if (auto view = memref.getDefiningOp<memref::ReinterpretCastOp>())
    memref = view.getSource();
  return memref.getDefiningOp<memref::AllocOp>();
}

} // namespace mlir::recur

#endif // RECUR_LIB_CODEGEN_BUFFERVIEWS_H
