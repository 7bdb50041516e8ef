//===- ExpandBf16Conversions.cpp - bf16 conversions as integer arithmetic -===//
//
// LLVM lowers `fptrunc float to bfloat` to a call to `__truncsfbf2` on CPUs
// without AVX512-BF16, a libgcc function that GCC 12's libgcc (Debian 12)
// lacks: a bf16 model compiled for such a CPU would not load. Upstream's
// expansion rounds to nearest even with shifts and adds instead.
//
//===----------------------------------------------------------------------===//

#include "recur/Codegen/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::recur {
#define GEN_PASS_DEF_EXPANDBF16CONVERSIONS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

using namespace mlir;

namespace {
struct ExpandBf16ConversionsPass
    : mlir::recur::impl::ExpandBf16ConversionsBase<ExpandBf16ConversionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation()->emitError()
          << getArgument() << ": the rewrites did not converge";
      signalPassFailure();
    }
  }
};
} // namespace
