//===- StationaryWeights.cpp - a block per group of units, weights on chip ===//
//
// Mapped like any loop nest, a fused LSTM step gives each block 256
// consecutive (batch row, unit, layer) iterations: every block reads the
// recurrent weights of the units it happens to cover from L2 at every step,
// each row once per batch row. Here the step is scheduled the way a
// persistent RNN kernel is written by hand: a block owns a group of U hidden
// units of one layer, for every batch row, and keeps the four gate rows of
// those units of every weight the step reads in shared memory; its threads
// then read the weights from there, all at once for a warp (the batch row
// is the fastest index). recur-gpu-persistent-kernels loads them once per
// kernel instead of once per step when every block owns one group.
// At tf32 and bf16 the step's products (its sums over K) run on tensor
// cores instead: a block's warps compute them for a chunk of batch rows
// into shared memory with MMAs, then its threads run the pointwise tail.
//
//===----------------------------------------------------------------------===//

#include "StationaryWeights.h"
#include "GemmKernels.h"
#include "recur/Codegen/Passes.h"
#include "recur/IR/RecurOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/Support/Debug.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUSTATIONARYWEIGHTS
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

#define DEBUG_TYPE "recur-gpu-stationary-weights"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::stationary;

namespace {

/// The most static shared memory a kernel has (the slot is a static
/// workgroup buffer).
constexpr int64_t kStaticSharedMemoryBytes = 49152;

/// A step, scheduled.
struct Plan {
  linalg::GenericOp step;
  StationaryStepAttr config;
  UnitStep info;
  Slot slot;
  SmallVector<Product> products; // empty: SIMT
};

struct GpuStationaryWeightsPass
    : mlir::recur::impl::GpuStationaryWeightsBase<GpuStationaryWeightsPass> {
  using Base::Base;

  /// The plan that `config` (recur-gpu-kernel-config's) says for `step`;
  /// an error at the step if its weights or products do not match it.
  FailureOr<Plan> planFor(linalg::GenericOp step, UnitStepAttr attr,
                          StationaryStepAttr config) {
    auto fail = [&](const Twine &whyNot) {
      return step.emitError()
             << getArgument() << ": the step does not match its " << config
             << ": " << whyNot;
    };
    if (!llvm::all_equal(attr.getHidden()))
      return fail("its layers have different hidden sizes");
    UnitStep info = readUnitStep(attr);
    if (std::string whyNot = whyNotByUnitGroups(step, info); !whyNot.empty())
      return fail(whyNot);
    std::string whyNot;
    FailureOr<Slot> slot = findWeights(step, info, whyNot);
    if (failed(slot))
      return fail(whyNot);
    slot->units = config.getUnits();
    if (llvm::any_of(llvm::seq<int64_t>(0, info.layers()), [&](int64_t l) {
          return info.gateStride(l) % slot->units != 0;
        }))
      return fail("its gate tiles are not whole groups of units");
    if (config.onTensorCores() && !slot->elementType.isF32())
      return fail("its weights are not f32, which the tensor cores' operands "
                  "are rounded from");
    // The slot is a static workgroup buffer: at most 48 KiB.
    auto fits = [&](const Slot &slot) -> LogicalResult {
      if (slot.allocatedRows() * slot.stride() *
              (slot.elementType.getIntOrFloatBitWidth() / 8) <=
          kStaticSharedMemoryBytes)
        return success();
      return fail("a group of " + Twine(slot.units) +
                  " units' weights do not fit in " +
                  Twine(kStaticSharedMemoryBytes) + " bytes of shared memory");
    };
    Plan plan{step, config, info, *slot, {}};
    if (!config.onTensorCores()) {
      if (failed(fits(plan.slot)))
        return failure();
      return plan;
    }
    FailureOr<SmallVector<Product>> products =
        matchProducts(step, info, plan.slot, whyNot);
    if (failed(products))
      return fail(whyNot);
    for (const Product &product : *products)
      plan.slot.productsPerLayer =
          std::max(plan.slot.productsPerLayer, product.position + 1);
    plan.slot.elementType = plan.slot.operandType =
        mlir::recur::gemm::mmaOperandType(&getContext(), config.getPrecision());
    plan.products = std::move(*products);
    if (failed(fits(plan.slot)))
      return failure();
    return plan;
  }

  void runOnOperation() override {
    std::vector<Plan> plans;
    WalkResult walk = getOperation()->walk([&](linalg::GenericOp step) {
      auto attr =
          step->getAttrOfType<UnitStepAttr>(RecurDialect::kUnitStepAttrName);
      auto config = step->getAttrOfType<StationaryStepAttr>(
          RecurDialect::kStationaryStepAttrName);
      if (!attr || !config)
        return WalkResult::advance();
      FailureOr<Plan> plan = planFor(step, attr, config);
      if (failed(plan))
        return WalkResult::interrupt();
      plans.push_back(std::move(*plan));
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    // Steps that read the same weights in the same way (the two steps of a
    // double-buffered time loop) share a slot (and buffer of sums), so that
    // their kernel's shared memory holds them once.
    struct SharedBuffers {
      Slot slot;
      StationaryStepAttr config;
      Value slotBuffer, sums;
    };
    SmallVector<SharedBuffers> shared;
    for (Plan &plan : plans) {
      StationaryStepAttr config = plan.config;
      Slot &slot = plan.slot;
      LLVM_DEBUG(llvm::dbgs()
                 << DEBUG_TYPE << ": " << plan.step.getLoc() << ": groups of "
                 << slot.units << " units, a slot of " << slot.rows() << " x "
                 << slot.stride() << " " << slot.elementType << ", "
                 << (plan.products.empty()
                         ? std::string("SIMT FMAs")
                         : std::to_string(plan.products.size()) +
                               " products on tensor cores")
                 << "\n");
      auto found = llvm::find_if(shared, [&](const auto &entry) {
        return entry.slot == slot && entry.config == config;
      });
      if (found == shared.end()) {
        // Shared-memory buffers at the function's entry, made workgroup
        // attributions of the kernel that uses them by
        // recur-gpu-workgroup-attributions.
        rewriter.setInsertionPointToStart(
            &getOperation().getFunctionBody().front());
        Location loc = plan.step.getLoc();
        auto type =
            MemRefType::get({slot.allocatedRows(), slot.stride()},
                            slot.elementType, AffineMap(),
                            gpu::AddressSpaceAttr::get(
                                &getContext(), gpu::AddressSpace::Workgroup));
        SharedBuffers buffers{slot, config,
                              memref::AllocOp::create(rewriter, loc, type),
                              nullptr};
        if (slot.operandType)
          buffers.sums = memref::AllocOp::create(
              rewriter, loc,
              sumsType(&getContext(), slot, config.getBlockSize()));
        shared.push_back(buffers);
        found = std::prev(shared.end());
      }
      if (plan.products.empty())
        scheduleByUnitGroups(rewriter, plan.step, plan.info, slot,
                             found->slotBuffer, config.getBlockSize(),
                             config.getMaxLanes());
      else
        scheduleOnTensorCores(rewriter, plan.step, plan.info, slot,
                              found->slotBuffer, found->sums, plan.products,
                              config.getBlockSize());
    }
  }
};

} // namespace
