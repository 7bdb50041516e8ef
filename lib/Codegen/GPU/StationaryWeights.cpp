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
#include "recur/Utils/Remarks.h"

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

/// A step, scheduled.
struct Plan {
  linalg::GenericOp step;
  UnitStep info;
  Slot slot;
  SmallVector<Product> products; // empty: SIMT
};

struct GpuStationaryWeightsPass
    : mlir::recur::impl::GpuStationaryWeightsBase<GpuStationaryWeightsPass> {
  using Base::Base;

  /// The step's plan on tensor cores, if its products all qualify and a
  /// group of a multiple of 4 units (16 slot rows: an MMA's m) fits;
  /// otherwise says why in `whyNot`.
  std::optional<Plan> planOnTensorCores(linalg::GenericOp step,
                                        const UnitStep &info, Slot slot,
                                        Type operandType, std::string &whyNot) {
    if (!slot.elementType.isF32()) {
      whyNot = "its weights are not f32";
      return std::nullopt;
    }
    if (blockSize % 32 != 0) {
      whyNot = "the block size is not a multiple of a warp";
      return std::nullopt;
    }
    FailureOr<SmallVector<Product>> products =
        matchProducts(step, info, slot, whyNot);
    if (failed(products))
      return std::nullopt;
    for (const Product &product : *products)
      slot.productsPerLayer =
          std::max(slot.productsPerLayer, product.position + 1);
    slot.elementType = slot.operandType = operandType;
    slot.units = unitsPerBlock(info, slot, maxUnits, sharedMemoryBytes,
                               /*unitMultiple=*/4, [&](int64_t units) {
                                 Slot sized = slot;
                                 sized.units = units;
                                 MemRefType type =
                                     sumsType(&getContext(), sized, blockSize);
                                 return type.getNumElements() * 4;
                               });
    if (slot.units == 0) {
      whyNot = "no group of a multiple of 4 units fits in shared memory";
      return std::nullopt;
    }
    return Plan{step, info, slot, std::move(*products)};
  }

  void runOnOperation() override {
    Type operandType =
        mlir::recur::gemm::mmaOperandType(&getContext(), precision);
    std::vector<Plan> plans;
    getOperation()->walk([&](linalg::GenericOp step) {
      auto attr =
          step->getAttrOfType<UnitStepAttr>(RecurDialect::kUnitStepAttrName);
      if (!attr)
        return;
      // Mapped like any loop nest instead.
      auto plainLoopNest = [&](const Twine &reason) {
        remarkMissed(step, getArgument(),
                     "the fused step runs as a plain loop nest, its weights "
                     "read from L2 at every step",
                     reason);
      };
      if (!llvm::all_equal(attr.getHidden()))
        return plainLoopNest("its layers have different hidden sizes");
      UnitStep info = readUnitStep(attr);
      if (std::string whyNot = whyNotByUnitGroups(step, info); !whyNot.empty())
        return plainLoopNest(whyNot);
      std::string whyNot;
      FailureOr<Slot> slot = findWeights(step, info, whyNot);
      if (failed(slot))
        return plainLoopNest(whyNot);
      if (operandType) {
        if (std::optional<Plan> plan =
                planOnTensorCores(step, info, *slot, operandType, whyNot)) {
          plans.push_back(std::move(*plan));
          return;
        }
        remarkMissed(step, getArgument(),
                     "the fused step's products run as SIMT FMAs instead of "
                     "on tensor cores",
                     whyNot);
      }
      slot->units =
          unitsPerBlock(info, *slot, maxUnits, sharedMemoryBytes,
                        /*unitMultiple=*/1, [](int64_t) { return 0; });
      if (slot->units == 0)
        return plainLoopNest(
            "one unit's gate rows of every weight (" +
            Twine(4 * slot->stride() *
                  slot->elementType.getIntOrFloatBitWidth() / 8) +
            " bytes) do not fit in " + Twine(sharedMemoryBytes) +
            " bytes of shared memory");
      plans.push_back(Plan{step, info, *slot, {}});
    });
    IRRewriter rewriter(&getContext());
    // Steps that read the same weights in the same way (the two steps of a
    // double-buffered time loop) share a slot (and buffer of sums), so that
    // their kernel's shared memory holds them once.
    struct SharedBuffers {
      Slot slot;
      Value slotBuffer, sums;
    };
    SmallVector<SharedBuffers> shared;
    for (Plan &plan : plans) {
      Slot &slot = plan.slot;
      LLVM_DEBUG(llvm::dbgs()
                 << DEBUG_TYPE << ": " << plan.step.getLoc() << ": groups of "
                 << slot.units << " units, a slot of " << 4 * slot.units
                 << " x " << slot.stride() << " " << slot.elementType << ", "
                 << (plan.products.empty()
                         ? std::string("SIMT FMAs")
                         : std::to_string(plan.products.size()) +
                               " products on tensor cores")
                 << "\n");
      auto found = llvm::find_if(
          shared, [&](const auto &entry) { return entry.slot == slot; });
      if (found == shared.end()) {
        // Shared-memory buffers at the function's entry, made workgroup
        // attributions of the kernel that uses them by
        // recur-gpu-workgroup-attributions.
        rewriter.setInsertionPointToStart(
            &getOperation().getFunctionBody().front());
        Location loc = plan.step.getLoc();
        auto type = MemRefType::get(
            {4 * slot.units, slot.stride()}, slot.elementType, AffineMap(),
            gpu::AddressSpaceAttr::get(&getContext(),
                                       gpu::AddressSpace::Workgroup));
        SharedBuffers buffers{
            slot, memref::AllocOp::create(rewriter, loc, type), nullptr};
        if (slot.operandType)
          buffers.sums = memref::AllocOp::create(
              rewriter, loc, sumsType(&getContext(), slot, blockSize));
        shared.push_back(buffers);
        found = std::prev(shared.end());
      }
      if (plan.products.empty())
        scheduleByUnitGroups(rewriter, plan.step, plan.info, slot,
                             found->slotBuffer, blockSize, maxLanes);
      else
        scheduleOnTensorCores(rewriter, plan.step, plan.info, slot,
                              found->slotBuffer, found->sums, plan.products,
                              blockSize);
    }
  }
};

} // namespace
