//===- KernelConfig.cpp - the GPU's kernel choices, as lowering configs ---===//
//
// Every decision the GPU's kernels need is made here, once, from the
// pipeline's options and the ops, and attached to the op it is for:
// #recur.gpu_gemm on each GEMM outside a time loop, #recur.stationary_step on
// each fused step whose weights can stay on chip, #recur.gpu_row_group on
// each row op of a group with a long reduction. recur-gpu-tiled-gemms,
// recur-gpu-stationary-weights and recur-gpu-row-groups then build what the
// attribute says. An op
// left without a config, or given SIMT where tensor cores were asked for,
// gets a missed remark with the reason.
//
//===----------------------------------------------------------------------===//

#include "../RowOps.h"
#include "GemmKernels.h"
#include "StationaryWeights.h"
#include "recur/Codegen/Passes.h"
#include "recur/IR/RecurOps.h"
#include "recur/Utils/Remarks.h"

#include "mlir/Interfaces/LoopLikeInterface.h"

#include "llvm/Support/Debug.h"

namespace mlir::recur {
#define GEN_PASS_DEF_GPUKERNELCONFIG
#include "recur/Codegen/Passes.h.inc"
} // namespace mlir::recur

#define DEBUG_TYPE "recur-gpu-kernel-config"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::stationary;

namespace {

struct GpuKernelConfigPass
    : mlir::recur::impl::GpuKernelConfigBase<GpuKernelConfigPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    GpuGemmAttr gemmConfig;
    if (tiledGemms && !(gemmConfig = gemmConfigFromOptions(func)))
      return signalPassFailure();
    func.walk([&](linalg::GenericOp op) {
      if (gemmConfig)
        configureGemm(op, gemmConfig);
      if (stationaryWeights)
        if (auto step = op->getAttrOfType<UnitStepAttr>(
                RecurDialect::kUnitStepAttrName))
          configureStep(op, step);
    });
    if (rowGroups)
      configureRowGroups(func);
  }

  /// The row ops of `func` grouped as recur-gpu-row-groups will group them
  /// (the fills that it folds into reductions not in the way); a group of
  /// rows with a reduction of a warp's worth of terms or more (or a
  /// run-time number) gets a block per row. Without one, a thread per
  /// element (or per short row) is as fast.
  void configureRowGroups(func::FuncOp func) {
    SmallVector<RowOp> rowOps;
    func.walk([&](linalg::GenericOp op) {
      if (op->hasAttr(RecurDialect::kUnitStepAttrName) ||
          op->hasAttr(RecurDialect::kGpuGemmAttrName))
        return;
      if (std::optional<RowOp> rowOp = matchRowOp(op, /*bf16Vectors=*/false))
        rowOps.push_back(*rowOp);
    });
    DenseSet<Operation *> foldedFills;
    for (auto [reduction, fill] : initializingFills(rowOps))
      foldedFills.insert(fill);
    auto config = GpuRowGroupAttr::getChecked(
        [&] { return func.emitError() << getArgument() << ": "; },
        &getContext(), int64_t(blockSize));
    if (!config)
      return signalPassFailure();
    for (RowGroup &group :
         formRowGroups(rowOps, /*pass=*/"", [&](Operation *op) {
           return foldedFills.contains(op);
         })) {
      // A full reduction (one loop) becomes a one-thread kernel of a unit
      // row (recur-add-unit-parallel-dims), not a row op.
      if (group.rank < 2)
        continue;
      bool longReduction = llvm::any_of(group.members, [](RowOp &member) {
        if (member.reductions.empty())
          return false;
        int64_t terms = member.op.getStaticLoopRanges().back();
        return ShapedType::isDynamic(terms) || terms >= 32;
      });
      if (!longReduction)
        continue;
      for (RowOp &member : group.members)
        member.op->setAttr(RecurDialect::kGpuRowGroupAttrName, config);
    }
  }

  /// The tiles of every GEMM, checked by the attribute: an error at the
  /// function if the options do not make a valid kernel.
  GpuGemmAttr gemmConfigFromOptions(func::FuncOp func) {
    auto emitError = [&] { return func.emitError() << getArgument() << ": "; };
    if (precision == Precision::fp32)
      return GpuGemmAttr::getChecked(
          emitError, &getContext(), precision,
          {int64_t(tileM), int64_t(tileN), int64_t(tileK)},
          {int64_t(threadTileM), int64_t(threadTileN)}, {});
    return GpuGemmAttr::getChecked(
        emitError, &getContext(), precision,
        {int64_t(tileM), int64_t(tileN), int64_t(mmaTileK)}, {},
        {int64_t(warpTileM), int64_t(warpTileN)});
  }

  void configureGemm(linalg::GenericOp op, GpuGemmAttr config) {
    std::string whyNot;
    std::optional<gemm::Gemm> gemm = gemm::matchGemm(op, &whyNot);
    if (gemm && !op->getParentOfType<LoopLikeOpInterface>()) {
      op->setAttr(RecurDialect::kGpuGemmAttrName, config);
      return;
    }
    if (gemm)
      remarkMissed(op, getArgument(),
                   "this GEMM runs as a plain loop nest, a thread per output",
                   "it is inside a time loop, a step of the persistent "
                   "kernel");
    else if (!whyNot.empty())
      remarkMissed(op, getArgument(),
                   "this contraction runs as a plain loop nest, a thread "
                   "per output",
                   whyNot);
  }

  void configureStep(linalg::GenericOp step, UnitStepAttr attr) {
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
    Precision stepPrecision = Precision::fp32;
    int64_t units = 0;
    if (precision != Precision::fp32) {
      units = unitsOnTensorCores(step, info, *slot, whyNot);
      if (units)
        stepPrecision = precision;
      else
        remarkMissed(step, getArgument(),
                     "the fused step's products run as SIMT FMAs instead of "
                     "on tensor cores",
                     whyNot);
    }
    if (!units)
      units = unitsPerBlock(info, *slot, maxUnits, sharedMemoryBytes,
                            /*unitMultiple=*/1, [](int64_t) { return 0; });
    if (!units)
      return plainLoopNest("one unit's gate rows of every weight (" +
                           Twine(slot->gates * slot->stride() *
                                 slot->elementType.getIntOrFloatBitWidth() /
                                 8) +
                           " bytes) do not fit in " + Twine(sharedMemoryBytes) +
                           " bytes of shared memory");
    auto config = StationaryStepAttr::getChecked(
        [&] { return step.emitError() << getArgument() << ": "; },
        &getContext(), stepPrecision, units, int64_t(blockSize),
        int64_t(maxLanes));
    if (!config)
      return signalPassFailure();
    LLVM_DEBUG(llvm::dbgs() << DEBUG_TYPE << ": " << step.getLoc() << ": "
                            << config << "\n");
    step->setAttr(RecurDialect::kStationaryStepAttrName, config);
  }

  /// The units per block of `step` on tensor cores, if its products all
  /// qualify and a group whose slot rows are whole MMAs' m (16; 4 units of
  /// an LSTM, 16 of a GRU) fits with its buffer of sums; otherwise 0, saying
  /// why in `whyNot`.
  int64_t unitsOnTensorCores(linalg::GenericOp step, const UnitStep &info,
                             Slot slot, std::string &whyNot) {
    if (!slot.elementType.isF32()) {
      whyNot = "its weights are not f32";
      return 0;
    }
    if (blockSize % 32 != 0) {
      whyNot = "the block size is not a multiple of a warp";
      return 0;
    }
    FailureOr<SmallVector<Product>> products =
        matchProducts(step, info, slot, whyNot);
    if (failed(products))
      return 0;
    for (const Product &product : *products)
      slot.productsPerLayer =
          std::max(slot.productsPerLayer, product.position + 1);
    slot.elementType = slot.operandType =
        gemm::mmaOperandType(&getContext(), precision);
    // The fewest units whose slot rows fill at least 3/4 of an MMA's m (16;
    // the rest padding): 4 of an LSTM, 4 of a GRU (12 rows), 16 of an RNN.
    int64_t unitMultiple = 1;
    while (info.gates * unitMultiple < 12)
      unitMultiple *= 2;
    int64_t units = unitsPerBlock(
        info, slot, std::max<int64_t>(maxUnits, unitMultiple),
        sharedMemoryBytes, unitMultiple, [&](int64_t units) {
          Slot sized = slot;
          sized.units = units;
          return sumsType(&getContext(), sized, blockSize).getNumElements() * 4;
        });
    if (!units)
      whyNot = "no group of a multiple of " + std::to_string(unitMultiple) +
               " units fits in shared memory";
    return units;
  }
};

} // namespace
