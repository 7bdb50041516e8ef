//===- RecurDialect.cpp - The recur dialect -------------------------------===//

#include "recur/IR/RecurDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "recur/IR/RecurOps.h"
#include "llvm/ADT/TypeSwitch.h" // used by the generated attribute parser
#include "llvm/Support/InterleavedRange.h"

#include <cmath>

using namespace mlir;
using namespace mlir::recur;

#include "recur/IR/RecurDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "recur/IR/RecurAttrs.cpp.inc"

//===----------------------------------------------------------------------===//
// SGDAttr
//===----------------------------------------------------------------------===//

Attribute SGDAttr::parse(AsmParser &parser, Type) {
  double lr = 0, clipNorm = 0;
  if (parser.parseLess() || parser.parseKeyword("lr") || parser.parseEqual() ||
      parser.parseFloat(lr))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("clip_norm") || parser.parseEqual() ||
       parser.parseFloat(clipNorm)))
    return {};
  if (parser.parseGreater())
    return {};
  return SGDAttr::getChecked(
      [&] { return parser.emitError(parser.getNameLoc()); },
      parser.getContext(), APFloat(lr), APFloat(clipNorm));
}

void SGDAttr::print(AsmPrinter &printer) const {
  printer << "<lr = " << getLearningRate();
  if (getMaxNorm() != 0)
    printer << ", clip_norm = " << getMaxNorm();
  printer << ">";
}

LogicalResult SGDAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              APFloat lrValue, APFloat clipNormValue) {
  double lr = lrValue.convertToDouble();
  double clipNorm = clipNormValue.convertToDouble();
  if (!std::isfinite(lr) || lr <= 0)
    return emitError() << "the learning rate lr must be finite and positive, "
                          "got "
                       << lr;
  if (!std::isfinite(clipNorm) || clipNorm < 0)
    return emitError() << "clip_norm must be finite and at least 0 (0: no "
                          "clipping), got "
                       << clipNorm;
  return success();
}

LogicalResult UnitStepAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   int64_t batch, int64_t unit,
                                   std::optional<int64_t> layer,
                                   ArrayRef<int64_t> hidden,
                                   ArrayRef<int64_t> gateTiles, int64_t gates) {
  if (gates < 1)
    return emitError() << "a step has at least one gate per unit, got "
                       << gates;
  SmallVector<int64_t> dims = {batch, unit};
  if (layer)
    dims.push_back(*layer);
  for (auto [index, dim] : llvm::enumerate(dims))
    if (dim < 0 || llvm::is_contained(ArrayRef(dims).take_front(index), dim))
      return emitError() << "the batch, unit and layer dimensions must be "
                            "distinct and non-negative, got "
                         << llvm::interleaved_array(dims);
  if (hidden.empty() || hidden.size() != gateTiles.size())
    return emitError() << "expected hidden sizes and gate tiles for every "
                          "layer, got "
                       << hidden.size() << " and " << gateTiles.size();
  if (hidden.size() > 1 && !layer)
    return emitError() << "a step of " << hidden.size()
                       << " layers needs its layer dimension";
  for (auto [size, tile] : llvm::zip(hidden, gateTiles))
    if (size <= 0 || tile < 0 || (tile && size % tile))
      return emitError() << "each layer's gate tile must be 0 or divide its "
                            "hidden size, got tile "
                         << tile << " for " << size << " units";
  return success();
}

void RecurDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "recur/IR/RecurOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "recur/IR/RecurAttrs.cpp.inc"
      >();
}

/// The external name of argument/result `index` of `op` under `attrName`.
static StringAttr externalName(Operation *op, unsigned index, bool isResult,
                               StringRef attrName) {
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return {};
  DictionaryAttr attrs = isResult ? function.getResultAttrDict(index)
                                  : function.getArgAttrDict(index);
  return attrs ? attrs.getAs<StringAttr>(attrName) : StringAttr();
}

/// External names must be non-empty strings, unique among the function's
/// arguments (or results): a runtime binds tensors by them.
static LogicalResult verifyExternalName(Operation *op, unsigned index,
                                        bool isResult, NamedAttribute attr) {
  StringRef kind = isResult ? "result" : "argument";
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.getValue().empty())
    return op->emitError() << "'" << attr.getName().getValue() << "' of "
                           << kind << " " << index
                           << " must be a non-empty string, got "
                           << attr.getValue();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return success();
  // Report a clash at the later of the two, naming the first.
  for (unsigned other = 0; other < index; ++other) {
    for (StringRef otherAttr :
         {RecurDialect::kInputAttrName, RecurDialect::kWeightAttrName,
          RecurDialect::kOutputAttrName, RecurDialect::kDerivedAttrName}) {
      if (externalName(op, other, isResult, otherAttr) == name)
        return op->emitError()
               << "name '" << name.getValue() << "' of " << kind << " " << index
               << " is already used by " << kind << " " << other;
    }
  }
  return success();
}

bool RecurDialect::isInTrainingStep(Operation *op) {
  auto function = isa<FunctionOpInterface>(op)
                      ? cast<FunctionOpInterface>(op)
                      : op->getParentOfType<FunctionOpInterface>();
  if (!function)
    return false;
  if (function->hasAttr(kTrainAttrName) || function->hasAttr(kVjpAttrName) ||
      function->hasAttr(kBackwardAttrName) ||
      function->hasAttr(kKeepActivationsAttrName))
    return true;
  return llvm::any_of(llvm::seq(function.getNumResults()), [&](unsigned index) {
    return function.getResultAttr(index, kKeptAttrName);
  });
}

/// An update result names a weight argument of its function, has its type,
/// and is the only update of that weight.
static LogicalResult verifyUpdate(Operation *op, unsigned index,
                                  NamedAttribute attr) {
  auto name = dyn_cast<StringAttr>(attr.getValue());
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!name || !function)
    return op->emitError() << "'" << RecurDialect::kUpdateAttrName
                           << "' must be a weight's name on a function "
                              "result, got "
                           << attr.getValue();
  for (unsigned other = 0; other < index; ++other)
    if (externalName(op, other, /*isResult=*/true,
                     RecurDialect::kUpdateAttrName) == name)
      return op->emitError()
             << "weight '" << name.getValue() << "' is updated by result "
             << other << " and result " << index;
  for (unsigned arg = 0; arg < function.getNumArguments(); ++arg) {
    if (externalName(op, arg, /*isResult=*/false,
                     RecurDialect::kWeightAttrName) != name)
      continue;
    Type argType = function.getArgumentTypes()[arg];
    Type resultType = function.getResultTypes()[index];
    if (argType != resultType)
      return op->emitError()
             << "result " << index << " updates weight '" << name.getValue()
             << "' of type " << argType << " but has type " << resultType;
    return success();
  }
  return op->emitError() << "result " << index << " updates weight '"
                         << name.getValue()
                         << "', which no argument of the function names";
}

LogicalResult
PanelGemmAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t tile, PanelLayout layout) {
  if (tile <= 0)
    return emitError() << "the panel width must be positive, got " << tile;
  return success();
}

int64_t GpuGemmAttr::threads(ArrayRef<int64_t> tile,
                             ArrayRef<int64_t> threadTile,
                             ArrayRef<int64_t> warpTile) {
  if (!warpTile.empty())
    return (tile[0] / warpTile[0]) * (tile[1] / warpTile[1]) * 32;
  return (tile[0] / threadTile[0]) * (tile[1] / threadTile[1]);
}

LogicalResult GpuGemmAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  Precision precision, ArrayRef<int64_t> tile,
                                  ArrayRef<int64_t> threadTile,
                                  ArrayRef<int64_t> warpTile) {
  bool mma = precision != Precision::fp32;
  ArrayRef<int64_t> subTile = mma ? warpTile : threadTile;
  StringRef subTileName = mma ? "warp_tile" : "thread_tile";
  if (tile.size() != 3)
    return emitError() << "tile must be [m, n, k], got " << tile.size()
                       << " sizes";
  if (subTile.size() != 2 || !(mma ? threadTile : warpTile).empty())
    return emitError() << "precision " << stringifyPrecision(precision)
                       << " takes a " << subTileName << " of [m, n] ("
                       << (mma ? "tensor cores, a tile per warp"
                               : "SIMT, a tile per thread")
                       << ") and no other";
  if (llvm::any_of(tile, [](int64_t size) { return size <= 0; }) ||
      subTile[0] <= 0 || subTile[1] <= 0 || tile[0] % subTile[0] != 0 ||
      tile[1] % subTile[1] != 0)
    return emitError() << "tile sizes must be positive, each " << subTileName
                       << " dividing its block tile";
  if (mma && (subTile[0] % 16 != 0 || subTile[1] % 8 != 0))
    return emitError() << "warp tiles must be multiples of 16 rows and 8 "
                          "columns (mma.sync's m16n8)";
  // k of one mma.sync: m16n8k8 for tf32, m16n8k16 for bf16.
  int64_t mmaK = precision == Precision::tf32 ? 8 : 16;
  if (mma && tile[2] % mmaK != 0)
    return emitError() << "the k-slice must be a multiple of " << mmaK
                       << ", the k of one " << stringifyPrecision(precision)
                       << " mma.sync";
  int64_t threadCount = threads(tile, threadTile, warpTile);
  for (int64_t rows : {tile[0], tile[1]}) {
    // A thread loads its elements of a slice in parts of up to 4
    // consecutive k: the same number per thread; on SIMT, one part.
    int64_t elements = rows * tile[2] / threadCount;
    bool whole =
        rows * tile[2] % threadCount == 0 && llvm::isPowerOf2_64(elements) &&
        (mma || (elements <= kMaxLoadWidth && tile[2] % elements == 0));
    if (!whole)
      return emitError() << "a slice of " << rows << " rows and " << tile[2]
                         << " k must split into parts of "
                         << (mma ? "up to 4 consecutive k, the same number "
                                   "per thread"
                                 : "1, 2 or 4 consecutive k, one per thread")
                         << " (" << threadCount << " threads)";
  }
  return success();
}

LogicalResult
StationaryStepAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                           Precision precision, int64_t units,
                           int64_t blockSize, int64_t maxLanes) {
  if (units <= 0 || !llvm::isPowerOf2_64(units))
    return emitError() << "units must be a power of two, got " << units;
  if (blockSize <= 0)
    return emitError() << "block_size must be positive, got " << blockSize;
  if (maxLanes <= 0 || maxLanes > 32 || !llvm::isPowerOf2_64(maxLanes))
    return emitError() << "max_lanes must be a power of two up to 32 (a "
                          "warp), got "
                       << maxLanes;
  if (precision != Precision::fp32 && (units % 4 != 0 || blockSize % 32 != 0))
    return emitError() << "on tensor cores, units must be a multiple of 4 "
                          "(16 slot rows, an MMA's m) and block_size of 32 "
                          "(whole warps), got "
                       << units << " and " << blockSize;
  return success();
}

LogicalResult
GpuRowGroupAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t blockSize) {
  if (blockSize < 32 || blockSize > 1024 || blockSize % 32 != 0)
    return emitError() << "block_size must be whole warps, 32 to 1024 "
                          "threads, got "
                       << blockSize;
  return success();
}

/// W's indexing map that `config` says a panel GEMM of `loops` loops (...,
/// n, k) reads it by.
static AffineMap panelWeightMap(PanelGemmAttr config, unsigned loops) {
  MLIRContext *context = config.getContext();
  AffineExpr n = getAffineDimExpr(loops - 2, context),
             k = getAffineDimExpr(loops - 1, context);
  int64_t tile = config.getTile();
  switch (config.getLayout()) {
  case PanelLayout::packed:
    return AffineMap::get(loops, 0, {n.floorDiv(tile), k, n % tile}, context);
  case PanelLayout::pairs:
    return AffineMap::get(
        loops, 0, {n.floorDiv(tile), k.floorDiv(2), n % tile, k % 2}, context);
  case PanelLayout::in_place:
    return AffineMap::get(loops, 0, {k, n}, context);
  }
  llvm_unreachable("unknown panel layout");
}

/// A #recur.panel_gemm agrees with the loop nest it is on.
static LogicalResult verifyPanelGemm(Operation *op, Attribute value) {
  auto config = dyn_cast<PanelGemmAttr>(value);
  if (!config)
    return op->emitError() << "'" << RecurDialect::kPanelGemmAttrName
                           << "' must be a #recur.panel_gemm attribute, got "
                           << value;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 2 ||
      generic.getNumDpsInits() != 1)
    return op->emitError() << "'" << RecurDialect::kPanelGemmAttrName
                           << "' belongs on a linalg.generic contraction of "
                              "two inputs into one output";
  unsigned loops = generic.getNumLoops();
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::parallel);
  if (loops >= 2)
    iterators.back() = utils::IteratorType::reduction;
  if (loops < 2 || generic.getIteratorTypesArray() != iterators)
    return op->emitError() << "'" << RecurDialect::kPanelGemmAttrName
                           << "' needs loops (..., n, k) with k the only "
                              "reduction";
  AffineMap expected = panelWeightMap(config, loops);
  AffineMap weightMap =
      generic.getMatchingIndexingMap(generic.getDpsInputOperand(1));
  if (weightMap != expected)
    return op->emitError() << "'" << RecurDialect::kPanelGemmAttrName
                           << "' with layout "
                           << stringifyPanelLayout(config.getLayout())
                           << " reads the weight by "
                           << AffineMapAttr::get(expected)
                           << ", but the loop nest reads it by "
                           << AffineMapAttr::get(weightMap);
  return success();
}

LogicalResult RecurDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  if (attr.getName() == kPanelGemmAttrName)
    return verifyPanelGemm(op, attr.getValue());
  if (attr.getName() == kGpuGemmAttrName) {
    if (!isa<GpuGemmAttr>(attr.getValue()) || !isa<linalg::GenericOp>(op))
      return op->emitError() << "'" << kGpuGemmAttrName
                             << "' must be a #recur.gpu_gemm on a "
                                "linalg.generic";
    return success();
  }
  if (attr.getName() == kActiveRowsAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<linalg::GenericOp>(op))
      return op->emitError() << "'" << kActiveRowsAttrName
                             << "' must be a unit attribute on a "
                                "linalg.generic";
    return success();
  }
  if (attr.getName() == kGpuRowGroupAttrName) {
    if (!isa<GpuRowGroupAttr>(attr.getValue()) || !isa<linalg::GenericOp>(op))
      return op->emitError() << "'" << kGpuRowGroupAttrName
                             << "' must be a #recur.gpu_row_group on a "
                                "linalg.generic";
    return success();
  }
  if (attr.getName() == kStationaryStepAttrName) {
    if (!isa<StationaryStepAttr>(attr.getValue()) ||
        !op->hasAttr(kUnitStepAttrName))
      return op->emitError() << "'" << kStationaryStepAttrName
                             << "' must be a #recur.stationary_step on a "
                                "fused step (a linalg.generic with '"
                             << kUnitStepAttrName << "')";
    return success();
  }
  if (attr.getName() == kUnitStepAttrName) {
    auto step = dyn_cast<UnitStepAttr>(attr.getValue());
    if (!step)
      return op->emitError() << "'" << kUnitStepAttrName
                             << "' must be a #recur.unit_step attribute, got "
                             << attr.getValue();
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic)
      return op->emitError()
             << "'" << kUnitStepAttrName << "' belongs on a linalg.generic";
    int64_t loops = generic.getNumLoops();
    for (int64_t dim : {step.getBatch(), step.getUnit(),
                        step.getLayer().value_or(step.getUnit())})
      if (dim >= loops)
        return op->emitError()
               << "'" << kUnitStepAttrName << "' names iteration dimension "
               << dim << " of a loop nest of " << loops;
    return success();
  }
  if (attr.getName() == kBackwardAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << kBackwardAttrName
                             << "' is a unit attribute of a function";
    return success();
  }
  if (attr.getName() == kVjpAttrName ||
      attr.getName() == kKeepActivationsAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<FunctionOpInterface>(op) ||
        op->hasAttr(kTrainAttrName))
      return op->emitError() << "'" << attr.getName().getValue()
                             << "' is a unit attribute of a function that is "
                                "not a training step";
    return success();
  }
  if (attr.getName() != kTrainAttrName)
    return success();
  if (!isa<SGDAttr>(attr.getValue()))
    return op->emitError() << "'" << kTrainAttrName
                           << "' must be a #recur.sgd<lr = ..., clip_norm = "
                              "...> attribute, got "
                           << attr.getValue();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return op->emitError() << "'" << kTrainAttrName
                           << "' belongs on a function (a model's entry)";
  return success();
}

/// A `recur.dims` attribute: "T", "B" or "" for each dimension of the
/// tensor it describes.
static LogicalResult verifyDims(Operation *op, Type type, NamedAttribute attr) {
  auto dims = dyn_cast<ArrayAttr>(attr.getValue());
  auto tensor = dyn_cast<ShapedType>(type);
  auto isSymbol = [](Attribute dim) {
    auto symbol = dyn_cast<StringAttr>(dim);
    return symbol && llvm::is_contained({"T", "B", ""}, symbol.getValue());
  };
  if (!dims || !llvm::all_of(dims, isSymbol))
    return op->emitError() << "'" << RecurDialect::kDimsAttrName
                           << "' must be an array of \"T\", \"B\" or \"\", one "
                              "per dimension, got "
                           << attr.getValue();
  // The rank is checked while the function is on tensors or memrefs (its
  // LLVM form takes pointers).
  if (tensor && tensor.hasRank() &&
      static_cast<int64_t>(dims.size()) != tensor.getRank())
    return op->emitError() << "'" << RecurDialect::kDimsAttrName << "' names "
                           << dims.size() << " dimensions of " << type;
  return success();
}

LogicalResult RecurDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kInputAttrName || name == kWeightAttrName ||
      name == kDerivedAttrName)
    return verifyExternalName(op, argIndex, /*isResult=*/false, attr);
  if (name == kDimsAttrName) {
    auto function = dyn_cast<FunctionOpInterface>(op);
    if (!function)
      return op->emitError() << "'" << name << "' belongs on a function";
    return verifyDims(op, function.getArgument(argIndex).getType(), attr);
  }
  if (name == kOutputAttrName)
    return op->emitError() << "'" << name
                           << "' names a result, but is on argument "
                           << argIndex << "; use '" << kInputAttrName
                           << "' or '" << kWeightAttrName << "'";
  return op->emitError() << "unknown argument attribute '" << name
                         << "'; expected '" << kInputAttrName << "' or '"
                         << kWeightAttrName << "'";
}

LogicalResult RecurDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kOutputAttrName || name == kDerivedAttrName)
    return verifyExternalName(op, resultIndex, /*isResult=*/true, attr);
  if (name == kUpdateAttrName)
    return verifyUpdate(op, resultIndex, attr);
  if (name == kDimsAttrName) {
    auto function = dyn_cast<FunctionOpInterface>(op);
    if (!function)
      return op->emitError() << "'" << name << "' belongs on a function";
    return verifyDims(op, function.getResultTypes()[resultIndex], attr);
  }
  if (name == kKeptAttrName) {
    auto function = dyn_cast<FunctionOpInterface>(op);
    if (!isa<UnitAttr>(attr.getValue()) || !function ||
        !function.getResultAttr(resultIndex, kOutputAttrName))
      return op->emitError() << "'" << kKeptAttrName
                             << "' is a unit attribute of a result that has a '"
                             << kOutputAttrName << "' name";
    return success();
  }
  return op->emitError() << "unknown result attribute '" << name
                         << "'; expected '" << kOutputAttrName << "'";
}
