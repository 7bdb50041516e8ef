//===- RecurOps.cpp - recur dialect operations ----------------------------===//

#include "recur/IR/RecurOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "recur/IR/ShapeChecker.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::recur;

#include "recur/IR/RecurEnums.cpp.inc"
#include "recur/IR/RecurInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared verification and inference
//===----------------------------------------------------------------------===//
//
// Each op has one signature function that checks its operand types and returns
// the symbolic shapes of its results. The verifier then checks the actual
// results against those shapes; builders and shape refinement turn them into
// result types.

/// "operand 'name'" / "result 'name'", the way messages name values.
static std::string operandName(StringRef name) {
  return ("operand '" + name + "'").str();
}
static std::string resultName(StringRef name) {
  return ("result '" + name + "'").str();
}

static ShapeChecker verifyingChecker(Operation *op) {
  return ShapeChecker([op] { return op->emitOpError(); });
}

/// Checks `op`'s results, named `names`, against the inferred `shapes`.
static LogicalResult verifyResults(Operation *op, ShapeChecker &checker,
                                   ArrayRef<StringRef> names,
                                   ArrayRef<SymbolicShape> shapes) {
  for (auto [result, name, shape] :
       llvm::zip_equal(op->getResults(), names, shapes)) {
    std::string what = resultName(name);
    if (failed(checker.checkShape(what, result.getType(), shape)) ||
        failed(checker.checkFloatElementType(what, result.getType())))
      return failure();
  }
  return success();
}

/// Result types for `shapes`, or unranked placeholders (which fail
/// verification with the operand's message) when the operands are invalid.
static SmallVector<Type>
resultTypes(MLIRContext *context, ShapeChecker &checker,
            FailureOr<SmallVector<SymbolicShape>> shapes, unsigned numResults) {
  if (failed(shapes))
    return SmallVector<Type>(
        numResults, UnrankedTensorType::get(Float32Type::get(context)));
  SmallVector<Type> types;
  for (const SymbolicShape &shape : *shapes)
    types.push_back(checker.floatTensorOf(shape));
  return types;
}

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

static FailureOr<SmallVector<SymbolicShape>>
checkEmbedding(ShapeChecker &checker, Type table, Type ids) {
  if (failed(checker.checkShape(operandName("table"), table, {"V", "E"},
                                /*requireStatic=*/true)) ||
      failed(checker.checkFloatElementType(operandName("table"), table)))
    return failure();
  FailureOr<int64_t> idsRank =
      checker.checkRankAtLeast(operandName("ids"), ids, 0);
  if (failed(idsRank) ||
      failed(checker.checkElementType(operandName("ids"), ids,
                                      IntegerType::get(ids.getContext(), 64))))
    return failure();
  SymbolicShape idsShape = leadingDims(*idsRank);
  if (failed(checker.checkShape(operandName("ids"), ids, idsShape)))
    return failure();
  SymbolicShape resultShape = idsShape;
  resultShape.emplace_back("E");
  return SmallVector<SymbolicShape>{resultShape};
}

LogicalResult EmbeddingOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes =
      checkEmbedding(checker, getTable().getType(), getIds().getType());
  return failure(failed(shapes) ||
                 failed(verifyResults(*this, checker, {"result"}, *shapes)));
}

SmallVector<Type> EmbeddingOp::inferResultTypes() {
  ShapeChecker checker;
  return resultTypes(
      getContext(), checker,
      checkEmbedding(checker, getTable().getType(), getIds().getType()), 1);
}

void EmbeddingOp::build(OpBuilder &builder, OperationState &state, Value table,
                        Value ids) {
  ShapeChecker checker;
  auto types =
      resultTypes(builder.getContext(), checker,
                  checkEmbedding(checker, table.getType(), ids.getType()), 1);
  build(builder, state, types.front(), table, ids);
}

//===----------------------------------------------------------------------===//
// LSTMOp
//===----------------------------------------------------------------------===//

/// A float operand of an LSTM form and the symbolic shape it must have.
struct ExpectedOperand {
  StringRef name;
  Type type;
  SymbolicShape shape;
  bool isWeight;
};

/// Checks `operands`, then the optional initial states `h0` [B, R] and `c0`
/// [B, H]; returns the shapes of the results y [T, B, R], h_n [B, R] and c_n
/// [B, H]. R, the hidden state's size, is `out`: H, or P with a projection.
static FailureOr<SmallVector<SymbolicShape>>
checkLSTMOperands(ShapeChecker &checker, SmallVector<ExpectedOperand> operands,
                  Type h0, Type c0, const char *out = "H") {
  if (h0)
    operands.push_back({"h0", h0, {"B", out}, false});
  if (c0)
    operands.push_back({"c0", c0, {"B", "H"}, false});
  for (const ExpectedOperand &operand : operands) {
    std::string what = operandName(operand.name);
    if (failed(checker.checkShape(what, operand.type, operand.shape,
                                  operand.isWeight)) ||
        failed(checker.checkFloatElementType(what, operand.type)))
      return failure();
  }
  return SmallVector<SymbolicShape>{{"T", "B", out}, {"B", out}, {"B", "H"}};
}

static FailureOr<SmallVector<SymbolicShape>>
checkLSTM(ShapeChecker &checker, Type input, Type wIh, Type wHh, Type bIh,
          Type bHh, Type wHr, Type h0, Type c0) {
  // The input fixes T, B and I; w_ih then fixes H, which w_hh and the biases
  // must agree with. The hidden state has w_hr's P rows, or H.
  const char *out = wHr ? "P" : "H";
  SmallVector<ExpectedOperand> operands = {
      {"input", input, {"T", "B", "I"}, false},
      {"w_ih", wIh, {{"H", 4}, "I"}, true}};
  if (wHr)
    operands.push_back({"w_hr", wHr, {"P", "H"}, true});
  operands.push_back({"w_hh", wHh, {{"H", 4}, out}, true});
  if (bIh)
    operands.push_back({"b_ih", bIh, {{"H", 4}}, true});
  if (bHh)
    operands.push_back({"b_hh", bHh, {{"H", 4}}, true});
  return checkLSTMOperands(checker, std::move(operands), h0, c0, out);
}

static Type typeOrNull(Value value) { return value ? value.getType() : Type(); }

/// nn.LSTM's rules for the unit counts: a hidden size above zero, and a
/// projection (`projected`: w_hr's rows) that makes the hidden state smaller
/// but leaves it some units.
static LogicalResult verifyUnitCounts(Operation *op, int64_t hidden,
                                      std::optional<int64_t> projected = {}) {
  if (hidden < 1)
    return op->emitOpError()
           << "has " << hidden << " hidden units; an LSTM needs at least one";
  if (!projected || (*projected >= 1 && *projected < hidden))
    return success();
  return op->emitOpError() << "projects the hidden state to " << *projected
                           << " of " << hidden
                           << " units; a projection (w_hr) must make it "
                              "smaller and keep at least one";
}

template <typename LSTMLike>
static LogicalResult verifyProjection(LSTMLike op) {
  return verifyUnitCounts(op, op.getHiddenSize(),
                          op.getWHr() ? std::optional(op.getOutputSize())
                                      : std::nullopt);
}

LogicalResult LSTMOp::verify() {
  if (bool(getBIh()) != bool(getBHh()))
    return emitOpError("takes both biases b_ih and b_hh or neither");
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes =
      checkLSTM(checker, getInput().getType(), getWIh().getType(),
                getWHh().getType(), typeOrNull(getBIh()), typeOrNull(getBHh()),
                typeOrNull(getWHr()), typeOrNull(getH0()), typeOrNull(getC0()));
  if (failed(shapes) ||
      failed(verifyResults(*this, checker, {"y", "h_n", "c_n"}, *shapes)))
    return failure();
  return verifyProjection(*this);
}

SmallVector<Type> LSTMOp::inferResultTypes() {
  ShapeChecker checker;
  return resultTypes(
      getContext(), checker,
      checkLSTM(checker, getInput().getType(), getWIh().getType(),
                getWHh().getType(), typeOrNull(getBIh()), typeOrNull(getBHh()),
                typeOrNull(getWHr()), typeOrNull(getH0()), typeOrNull(getC0())),
      3);
}

void LSTMOp::build(OpBuilder &builder, OperationState &state, Value input,
                   Value wIh, Value wHh, Value bIh, Value bHh, Value h0,
                   Value c0, bool reverse, Value wHr) {
  ShapeChecker checker;
  auto types =
      resultTypes(builder.getContext(), checker,
                  checkLSTM(checker, input.getType(), wIh.getType(),
                            wHh.getType(), typeOrNull(bIh), typeOrNull(bHh),
                            typeOrNull(wHr), typeOrNull(h0), typeOrNull(c0)),
                  3);
  build(builder, state, types[0], types[1], types[2], input, wIh, wHh, bIh, bHh,
        wHr, h0, c0, reverse);
}

namespace {
/// An explicit all-zero initial state means the same as an absent one.
template <typename LSTMLike>
struct DropZeroInitialState : OpRewritePattern<LSTMLike> {
  using OpRewritePattern<LSTMLike>::OpRewritePattern;
  LogicalResult matchAndRewrite(LSTMLike op,
                                PatternRewriter &rewriter) const override {
    bool zeroH0 = op.getH0() && matchPattern(op.getH0(), m_AnyZeroFloat());
    bool zeroC0 = op.getC0() && matchPattern(op.getC0(), m_AnyZeroFloat());
    if (!zeroH0 && !zeroC0)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      if (zeroH0)
        op.getH0Mutable().clear();
      if (zeroC0)
        op.getC0Mutable().clear();
    });
    return success();
  }
};
} // namespace

void LSTMOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<DropZeroInitialState<LSTMOp>>(context);
}

//===----------------------------------------------------------------------===//
// LSTMRecurrenceOp
//===----------------------------------------------------------------------===//

/// A weight packed in pairs of k for bf16 products (recur.pack_panels ...
/// pairs): a static bf16 [P, K / 2, t, 2] read by an op that computes in
/// f32 (the element type of `computeType`).
static LogicalResult checkPairPacked(ShapeChecker &checker, StringRef what,
                                     Type weight, Type computeType) {
  auto type = cast<RankedTensorType>(weight);
  if (!type.hasStaticShape() || type.getDimSize(3) != 2)
    return checker.fail(what,
                        " packed in pairs of k must have a static shape [P, "
                        "K/2, t, 2], got ",
                        weight);
  if (!isPairPacked(weight, computeType))
    return checker.fail(what,
                        " packed in pairs of k must be bf16 and read by an "
                        "f32 op, got ",
                        weight, " read by ", computeType);
  return success();
}

static FailureOr<SmallVector<SymbolicShape>>
checkLSTMRecurrence(ShapeChecker &checker, Type inputGates, Type wHh, Type wHr,
                    Type h0, Type c0) {
  if (wHr)
    // Projected (proj_size): w_hr [P, H] fixes H and P; PyTorch's layout.
    return checkLSTMOperands(
        checker,
        {
            {"w_hr", wHr, {"P", "H"}, true},
            {"w_hh", wHh, {{"H", 4}, "P"}, true},
            {"input_gates", inputGates, {"T", "B", {"H", 4}}, false},
        },
        h0, c0, "P");
  auto packed = dyn_cast<RankedTensorType>(wHh);
  if (packed && (packed.getRank() == 3 || packed.getRank() == 4)) {
    // Packed by recur.pack_panels: [ceil(4H / t), H, t]; in pairs of k
    // (bf16 products of an f32 step): [ceil(4H / t), H / 2, t, 2] bf16.
    std::string what = operandName("w_hh");
    bool pairs = packed.getRank() == 4;
    if (pairs && failed(checkPairPacked(checker, what, wHh, inputGates)))
      return failure();
    if (failed(checker.checkShape(
            what, wHh,
            pairs ? SymbolicShape{"P", "H2", "t", "2"}
                  : SymbolicShape{"P", "H", "t"},
            /*requireStatic=*/true)) ||
        (!pairs && failed(checker.checkFloatElementType(what, wHh))))
      return failure();
    int64_t hidden = (pairs ? 2 : 1) * packed.getDimSize(1),
            rows = packed.getDimSize(2);
    if (rows < 1)
      return checker.fail(what, " packed in panels of ", rows,
                          " rows; a panel holds at least one");
    if (pairs)
      checker.assumeSize("H", hidden);
    int64_t panels = llvm::divideCeilSigned(4 * hidden, rows);
    if (panels != packed.getDimSize(0))
      return checker.fail(what, " packed in panels of ", rows,
                          " rows for 4*H = ", 4 * hidden, " needs ", panels,
                          " panels, got ", packed.getDimSize(0));
    return checkLSTMOperands(
        checker, {{"input_gates", inputGates, {"T", "B", {"H", 4}}, false}}, h0,
        c0);
  }
  // w_hh fixes H first, so that a wrong gate width is reported against it.
  return checkLSTMOperands(
      checker,
      {
          {"w_hh", wHh, {{"H", 4}, "H"}, true},
          {"input_gates", inputGates, {"T", "B", {"H", 4}}, false},
      },
      h0, c0);
}

/// A gate tile must divide the hidden size H.
static LogicalResult checkGateTile(Operation *op, int64_t tile,
                                   int64_t hidden) {
  if (hidden % tile != 0)
    return op->emitOpError()
           << "gate tile " << tile
           << " does not divide the hidden size H = " << hidden;
  return success();
}

LogicalResult LSTMRecurrenceOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes = checkLSTMRecurrence(checker, getInputGates().getType(),
                                    getWHh().getType(), typeOrNull(getWHr()),
                                    typeOrNull(getH0()), typeOrNull(getC0()));
  if (failed(shapes) ||
      failed(verifyResults(*this, checker, {"y", "h_n", "c_n"}, *shapes)))
    return failure();
  if (getWHr() && (getCell() != CellSchedule::separate || getGateTile()))
    return emitOpError("a projected recurrence (w_hr) has the separate "
                       "schedule and PyTorch's layout");
  if (failed(verifyProjection(*this)))
    return failure();
  std::optional<int64_t> tile = getGateTile();
  if (tile && getCell() != CellSchedule::fused)
    return emitOpError("an interleaved w_hh needs cell<fused>; the "
                       "separate schedule reads PyTorch's layout");
  if (tile && failed(checkGateTile(*this, *tile, getHiddenSize())))
    return failure();
  auto wHhType = cast<ShapedType>(getWHh().getType());
  // The fused step's register tile reads the four gates of K units from one
  // panel.
  // [P, H, 4K], or in pairs [P, H / 2, 4K, 2].
  int64_t panelRows = wHhType.getRank() >= 3 ? wHhType.getDimSize(2) : 0;
  if (wHhType.getRank() >= 3 && getCell() == CellSchedule::fused &&
      (!tile || panelRows != 4 * *tile))
    return emitOpError("a packed w_hh read by cell<fused> needs "
                       "interleaved(K) and panels of 4*K rows (the four "
                       "gates of K units), got panels of ")
           << panelRows << " rows"
           << (tile ? " for K = " + std::to_string(*tile)
                    : std::string(" without interleaved(K)"));
  return success();
}

//===----------------------------------------------------------------------===//
// LSTMWavefrontOp
//===----------------------------------------------------------------------===//

/// "name[index]": operand or result `index` of a per-layer list.
static std::string layerName(StringRef name, size_t layer) {
  return (name + "[" + Twine(layer) + "]").str();
}

/// The operand lists' lengths: L w_hh, L-1 w_ih and bias, none or L h0/c0.
/// Reports through `op` when given.
static LogicalResult checkWavefrontArity(Operation *op, size_t layers,
                                         size_t wIh, size_t bias, size_t h0,
                                         size_t c0) {
  auto fail = [&](StringRef what, StringRef expected, size_t actual) {
    if (op)
      op->emitOpError() << "expected " << expected << " " << what
                        << " operands for " << layers << " layers, got "
                        << actual;
    return failure();
  };
  if (layers == 0) {
    if (op)
      op->emitOpError("needs at least one layer, got no w_hh operand");
    return failure();
  }
  std::string inner = std::to_string(layers - 1);
  if (wIh != layers - 1)
    return fail("w_ih", inner, wIh);
  if (bias != layers - 1)
    return fail("bias", inner, bias);
  std::string each = "0 or " + std::to_string(layers);
  if (h0 != 0 && h0 != layers)
    return fail("h0", each, h0);
  if (c0 != 0 && c0 != layers)
    return fail("c0", each, c0);
  return success();
}

static FailureOr<SmallVector<SymbolicShape>>
checkLSTMWavefront(ShapeChecker &checker, Operation *op, Type inputGates,
                   TypeRange wHh, TypeRange wIh, TypeRange bias, TypeRange h0,
                   TypeRange c0) {
  size_t layers = wHh.size();
  if (failed(checkWavefrontArity(op, layers, wIh.size(), bias.size(), h0.size(),
                                 c0.size())))
    return failure();
  auto hidden = [](size_t layer) { return "H" + std::to_string(layer); };
  auto check = [&](const std::string &what, Type type,
                   const SymbolicShape &shape, bool isWeight) {
    return success(
        succeeded(
            checker.checkShape(operandName(what), type, shape, isWeight)) &&
        succeeded(checker.checkFloatElementType(operandName(what), type)));
  };
  for (size_t layer = 0; layer < layers; ++layer) {
    // Layer l's w_hh fixes H_l, so that a wrong width elsewhere is reported
    // against it.
    std::string h = hidden(layer);
    if (failed(check(layerName("w_hh", layer), wHh[layer], {{h, 4}, h}, true)))
      return failure();
    if (layer == 0) {
      if (failed(check("input_gates", inputGates, {"T", "B", {h, 4}}, false)))
        return failure();
    } else if (failed(check(layerName("w_ih", layer), wIh[layer - 1],
                            {{h, 4}, hidden(layer - 1)}, true)) ||
               failed(check(layerName("bias", layer), bias[layer - 1], {{h, 4}},
                            true))) {
      return failure();
    }
    if (!h0.empty() &&
        failed(check(layerName("h0", layer), h0[layer], {"B", h}, false)))
      return failure();
    if (!c0.empty() &&
        failed(check(layerName("c0", layer), c0[layer], {"B", h}, false)))
      return failure();
  }
  SmallVector<SymbolicShape> results = {{"T", "B", hidden(layers - 1)}};
  for (int stateKind = 0; stateKind < 2; ++stateKind)
    for (size_t layer = 0; layer < layers; ++layer)
      results.push_back({"B", hidden(layer)});
  return results;
}

LogicalResult LSTMWavefrontOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes = checkLSTMWavefront(checker, *this, getInputGates().getType(),
                                   getWHh().getTypes(), getWIh().getTypes(),
                                   getBias().getTypes(), getH0().getTypes(),
                                   getC0().getTypes());
  if (failed(shapes))
    return failure();
  int64_t layers = getNumLayers();
  SmallVector<std::string> names = {"y"};
  for (StringRef state : {"h_n", "c_n"})
    for (int64_t layer = 0; layer < layers; ++layer)
      names.push_back(layerName(state, layer));
  if (getFinalStates().size() != size_t(2 * layers))
    return emitOpError() << "expected " << 2 * layers
                         << " final states (h_n and c_n of " << layers
                         << " layers), got " << getFinalStates().size();
  SmallVector<StringRef> nameRefs(names.begin(), names.end());
  if (failed(verifyResults(*this, checker, nameRefs, *shapes)))
    return failure();
  for (int64_t layer = 0; layer < layers; ++layer)
    if (failed(verifyUnitCounts(*this, getHiddenSize(layer))))
      return failure();
  std::optional<ArrayRef<int64_t>> tiles = getGateTiles();
  if (!tiles)
    return success();
  if (getCell() != CellSchedule::fused)
    return emitOpError("interleaved weights need cell<fused>; the separate "
                       "schedule reads PyTorch's layout");
  if (int64_t(tiles->size()) != layers)
    return emitOpError() << "expected one gate tile per layer (" << layers
                         << "), got " << tiles->size();
  for (auto [layer, tile] : llvm::enumerate(*tiles)) {
    if (tile < 1)
      return emitOpError() << "gate tile of layer " << layer
                           << " must be positive, got " << tile;
    if (failed(checkGateTile(*this, tile, getHiddenSize(layer))))
      return failure();
  }
  return success();
}

SmallVector<Type> LSTMWavefrontOp::inferResultTypes() {
  ShapeChecker checker;
  return resultTypes(
      getContext(), checker,
      checkLSTMWavefront(checker, nullptr, getInputGates().getType(),
                         getWHh().getTypes(), getWIh().getTypes(),
                         getBias().getTypes(), getH0().getTypes(),
                         getC0().getTypes()),
      getNumResults());
}

void LSTMWavefrontOp::build(OpBuilder &builder, OperationState &state,
                            Value inputGates, ValueRange wHh, ValueRange wIh,
                            ValueRange bias, ValueRange h0, ValueRange c0,
                            CellSchedule cell, DenseI64ArrayAttr gateTiles) {
  ShapeChecker checker;
  auto types = resultTypes(
      builder.getContext(), checker,
      checkLSTMWavefront(checker, nullptr, inputGates.getType(), wHh.getTypes(),
                         wIh.getTypes(), bias.getTypes(), h0.getTypes(),
                         c0.getTypes()),
      1 + 2 * wHh.size());
  build(builder, state, types.front(), ArrayRef<Type>(types).drop_front(),
        inputGates, wHh, wIh, bias, h0, c0, gateTiles, cell);
}

//===----------------------------------------------------------------------===//
// InterleaveGatesOp
//===----------------------------------------------------------------------===//

LogicalResult InterleaveGatesOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  std::string what = operandName("input");
  auto type = dyn_cast<RankedTensorType>(getInput().getType());
  SymbolicShape shape = {{"H", 4}};
  // [4H] or [4H, K]; other ranks are reported against the 2-D form.
  if (type && type.getRank() != 1)
    shape.emplace_back("K");
  if (failed(checker.checkShape(what, getInput().getType(), shape,
                                /*requireStatic=*/true)) ||
      failed(checker.checkFloatElementType(what, getInput().getType())))
    return failure();
  return checkGateTile(*this, getTile(), type.getDimSize(0) / 4);
}

SmallVector<Type> InterleaveGatesOp::inferResultTypes() {
  return {getInput().getType()};
}

SmallVector<Type> LSTMRecurrenceOp::inferResultTypes() {
  ShapeChecker checker;
  return resultTypes(
      getContext(), checker,
      checkLSTMRecurrence(checker, getInputGates().getType(),
                          getWHh().getType(), typeOrNull(getWHr()),
                          typeOrNull(getH0()), typeOrNull(getC0())),
      3);
}

void LSTMRecurrenceOp::build(OpBuilder &builder, OperationState &state,
                             Value inputGates, Value wHh, Value h0, Value c0,
                             CellSchedule cell, bool reverse, Value wHr) {
  ShapeChecker checker;
  auto types = resultTypes(builder.getContext(), checker,
                           checkLSTMRecurrence(checker, inputGates.getType(),
                                               wHh.getType(), typeOrNull(wHr),
                                               typeOrNull(h0), typeOrNull(c0)),
                           3);
  build(builder, state, types[0], types[1], types[2], inputGates, wHh, wHr, h0,
        c0, /*gate_tile=*/IntegerAttr(), cell, reverse);
}

void LSTMRecurrenceOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                   MLIRContext *context) {
  patterns.add<DropZeroInitialState<LSTMRecurrenceOp>>(context);
}

//===----------------------------------------------------------------------===//
// PackPanelsOp
//===----------------------------------------------------------------------===//

static LogicalResult checkPackPanels(ShapeChecker &checker, Type input) {
  std::string what = operandName("input");
  return failure(failed(checker.checkShape(what, input, {"N", "K"},
                                           /*requireStatic=*/true)) ||
                 failed(checker.checkFloatElementType(what, input)));
}

bool mlir::recur::isPairPacked(Type weight, Type computeType) {
  auto type = dyn_cast<RankedTensorType>(weight);
  return type && type.getRank() == 4 && type.getElementType().isBF16() &&
         getElementTypeOrSelf(computeType).isF32();
}

/// [ceil(N / tile), K, tile] for a static [N, K] input ([ceil(N / tile),
/// K / 2, tile, 2] in `pairs`), else null.
static RankedTensorType packedType(Type input, int64_t tile, bool pairs) {
  auto type = dyn_cast<RankedTensorType>(input);
  if (!type || type.getRank() != 2 || !type.hasStaticShape())
    return {};
  int64_t panels = llvm::divideCeilSigned(type.getDimSize(0), tile);
  if (pairs)
    return RankedTensorType::get({panels, type.getDimSize(1) / 2, tile, 2},
                                 type.getElementType());
  return RankedTensorType::get({panels, type.getDimSize(1), tile},
                               type.getElementType());
}

LogicalResult PackPanelsOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  if (failed(checkPackPanels(checker, getInput().getType())))
    return failure();
  if (getPairs() && !getInput().getType().getElementType().isBF16())
    return emitOpError() << "packs " << getInput().getType()
                         << " in pairs of k; pairs are of bf16";
  if (getPairs() && getInput().getType().getDimSize(1) % 2)
    return emitOpError() << "packs K = " << getInput().getType().getDimSize(1)
                         << " in pairs; pairs need an even K";
  RankedTensorType expected =
      packedType(getInput().getType(), getTile(), getPairs());
  if (getType() != expected)
    return emitOpError() << "result expected " << expected << ", got "
                         << getType();
  return success();
}

SmallVector<Type> PackPanelsOp::inferResultTypes() {
  if (RankedTensorType type =
          packedType(getInput().getType(), getTile(), getPairs()))
    return {type};
  return {getType()};
}

void PackPanelsOp::build(OpBuilder &builder, OperationState &state, Value input,
                         int64_t tile, bool pairs) {
  build(builder, state, packedType(input.getType(), tile, pairs), input, tile,
        pairs);
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

/// A weight packed by recur.pack_panels, [ceil(N / t), K, t] (in pairs of
/// k: [ceil(N / t), K / 2, t, 2] bf16), with N the last dimension of
/// `result`: the checker learns N from it.
static LogicalResult checkPackedWeight(ShapeChecker &checker, Type weight,
                                       Type input, Type result,
                                       const SymbolicShape &resultShape) {
  std::string weightName = operandName("weight");
  int64_t rank = cast<RankedTensorType>(weight).getRank();
  if (rank != 3 && rank != 4)
    return checker.fail(weightName,
                        " packed in panels must be [P, K, t], or [P, K/2, t, "
                        "2] in pairs of k, got ",
                        weight);
  if (rank == 4) {
    if (failed(checkPairPacked(checker, weightName, weight, input)))
      return failure();
    auto type = cast<RankedTensorType>(weight);
    int64_t depth = checker.sizesOf({"K"}).front();
    if (ShapedType::isDynamic(depth) || 2 * type.getDimSize(1) != depth)
      return checker.fail(weightName,
                          " packed in pairs of k expected shape [P, K/2 = ",
                          ShapedType::isDynamic(depth)
                              ? std::string("?")
                              : std::to_string(depth / 2) +
                                    (depth % 2 ? " (K odd)" : ""),
                          ", t, 2] with K static, got ", weight);
    // The checks below, on the panels' shape in single k.
    weight = RankedTensorType::get(
        {type.getDimSize(0), depth, type.getDimSize(2)}, type.getElementType());
  } else if (failed(checker.checkShape(weightName, weight, {"P", "K", "t"},
                                       /*requireStatic=*/true)) ||
             failed(checker.checkFloatElementType(weightName, weight))) {
    return failure();
  }
  if (cast<RankedTensorType>(weight).getDimSize(2) < 1)
    return checker.fail(weightName, " packed in panels of ",
                        cast<RankedTensorType>(weight).getDimSize(2),
                        " rows; a panel holds at least one");
  auto resultType = dyn_cast_or_null<RankedTensorType>(result);
  if (!resultType || resultType.getRank() == 0 ||
      resultType.isDynamicDim(resultType.getRank() - 1))
    return checker.fail("a packed weight needs the result's last dimension "
                        "N to be static, got ",
                        result);
  ArrayRef<int64_t> packed = cast<RankedTensorType>(weight).getShape();
  int64_t outFeatures = resultType.getShape().back();
  if (llvm::divideCeilSigned(outFeatures, packed[2]) != packed[0])
    return checker.fail(weightName, " packed in panels of ", packed[2],
                        " rows for N = ", outFeatures, " needs ",
                        llvm::divideCeilSigned(outFeatures, packed[2]),
                        " panels, got ", packed[0]);
  return checker.checkShape(resultName("result"), result, resultShape);
}

static FailureOr<SmallVector<SymbolicShape>> checkLinear(ShapeChecker &checker,
                                                         Type input,
                                                         Type weight, Type bias,
                                                         Type result) {
  std::string inputName = operandName("input");
  FailureOr<int64_t> rank = checker.checkRankAtLeast(inputName, input, 1);
  if (failed(rank))
    return failure();
  SymbolicShape inputShape = leadingDims(*rank - 1);
  SymbolicShape resultShape = inputShape;
  inputShape.emplace_back("K");
  resultShape.emplace_back("N");
  auto weightType = dyn_cast<RankedTensorType>(weight);
  bool packed = weightType && weightType.getRank() >= 3;
  // A bf16 weight packed in pairs is read by an f32 linear (bf16 products).
  bool pairs = weightType && weightType.getRank() == 4;
  if (failed(checker.checkShape(inputName, input, inputShape)) ||
      failed(checker.checkFloatElementType(inputName, input)) ||
      failed(packed ? checkPackedWeight(checker, weight, input, result,
                                        resultShape)
                    : checker.checkShape(operandName("weight"), weight,
                                         {"N", "K"}, /*requireStatic=*/true)) ||
      (!pairs &&
       failed(checker.checkFloatElementType(operandName("weight"), weight))))
    return failure();
  if (bias &&
      (failed(checker.checkShape(operandName("bias"), bias, {"N"},
                                 /*requireStatic=*/true)) ||
       failed(checker.checkFloatElementType(operandName("bias"), bias))))
    return failure();
  return SmallVector<SymbolicShape>{resultShape};
}

LogicalResult LinearOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes =
      checkLinear(checker, getInput().getType(), getWeight().getType(),
                  typeOrNull(getBias()), getType());
  return failure(failed(shapes) ||
                 failed(verifyResults(*this, checker, {"result"}, *shapes)));
}

SmallVector<Type> LinearOp::inferResultTypes() {
  ShapeChecker checker;
  return resultTypes(getContext(), checker,
                     checkLinear(checker, getInput().getType(),
                                 getWeight().getType(), typeOrNull(getBias()),
                                 getType()),
                     1);
}

void LinearOp::build(OpBuilder &builder, OperationState &state, Value input,
                     Value weight, Value bias) {
  ShapeChecker checker;
  auto types = resultTypes(builder.getContext(), checker,
                           checkLinear(checker, input.getType(),
                                       weight.getType(), typeOrNull(bias),
                                       /*result=*/{}),
                           1);
  build(builder, state, types.front(), input, weight, bias);
}

namespace {
/// An explicit all-zero bias means the same as an absent one.
struct DropZeroBias : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getBias() || !matchPattern(op.getBias(), m_AnyZeroFloat()))
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op.getBiasMutable().clear(); });
    return success();
  }
};
} // namespace

void LinearOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<DropZeroBias>(context);
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

/// `input` with its dimensions permuted, or null unless `permutation` is a
/// permutation of its rank.
static RankedTensorType transposedType(Type input,
                                       ArrayRef<int64_t> permutation) {
  auto type = dyn_cast<RankedTensorType>(input);
  if (!type || int64_t(permutation.size()) != type.getRank())
    return {};
  llvm::SmallBitVector seen(permutation.size());
  for (int64_t dim : permutation) {
    if (dim < 0 || dim >= type.getRank() || seen.test(dim))
      return {};
    seen.set(dim);
  }
  SmallVector<int64_t> shape = llvm::map_to_vector(
      permutation, [&](int64_t dim) { return type.getDimSize(dim); });
  return RankedTensorType::get(shape, type.getElementType());
}

LogicalResult TransposeOp::verify() {
  auto inputType = cast<RankedTensorType>(getInput().getType());
  RankedTensorType expected = transposedType(inputType, getPermutation());
  if (!expected)
    return emitOpError() << "permutation [" << getPermutation()
                         << "] is not a permutation of the "
                         << inputType.getRank() << " dimensions of "
                         << operandName("input");
  if (getResult().getType() != expected)
    return emitOpError() << resultName("result") << " expected type "
                         << expected << ", got " << getResult().getType();
  return success();
}

SmallVector<Type> TransposeOp::inferResultTypes() {
  RankedTensorType type =
      transposedType(getInput().getType(), getPermutation());
  return {type ? Type(type) : getResult().getType()};
}

void TransposeOp::build(OpBuilder &builder, OperationState &state, Value input,
                        ArrayRef<int64_t> permutation) {
  RankedTensorType type = transposedType(input.getType(), permutation);
  build(builder, state, type ? Type(type) : input.getType(), input,
        permutation);
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> permutation = getPermutation();
  if (llvm::equal(permutation, llvm::seq<int64_t>(0, permutation.size())) &&
      getInput().getType() == getType())
    return getInput();
  // A transpose undoing the one that produced its input.
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> first = inner.getPermutation();
    bool undoes =
        llvm::all_of(llvm::seq<size_t>(0, permutation.size()), [&](size_t k) {
          return first[permutation[k]] == int64_t(k);
        });
    if (undoes && inner.getInput().getType() == getType())
      return inner.getInput();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// LogSoftmaxOp
//===----------------------------------------------------------------------===//

static FailureOr<SmallVector<SymbolicShape>>
checkLogSoftmax(ShapeChecker &checker, Type input) {
  std::string inputName = operandName("input");
  FailureOr<int64_t> rank = checker.checkRankAtLeast(inputName, input, 1);
  if (failed(rank))
    return failure();
  SymbolicShape shape = leadingDims(*rank);
  if (failed(checker.checkShape(inputName, input, shape)) ||
      failed(checker.checkFloatElementType(inputName, input)))
    return failure();
  return SmallVector<SymbolicShape>{shape};
}

LogicalResult LogSoftmaxOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  if (failed(checkLogSoftmax(checker, getInput().getType())))
    return failure();
  // Exact equality keeps the fold log_softmax(log_softmax(x)) -> log_softmax(x)
  // type-preserving.
  if (getResult().getType() != getInput().getType())
    return emitOpError() << "result 'result' expected type "
                         << getInput().getType()
                         << " (that of operand 'input'), got "
                         << getResult().getType();
  return success();
}

SmallVector<Type> LogSoftmaxOp::inferResultTypes() {
  ShapeChecker checker;
  return resultTypes(getContext(), checker,
                     checkLogSoftmax(checker, getInput().getType()), 1);
}

void LogSoftmaxOp::build(OpBuilder &builder, OperationState &state,
                         Value input) {
  build(builder, state, input.getType(), input);
}

OpFoldResult LogSoftmaxOp::fold(FoldAdaptor) {
  // log_softmax is idempotent: its result already sums to one after exp.
  if (getInput().getDefiningOp<LogSoftmaxOp>())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// CrossEntropyOp
//===----------------------------------------------------------------------===//

static FailureOr<SmallVector<SymbolicShape>>
checkCrossEntropy(ShapeChecker &checker, Type logits, Type targets,
                  Reduction reduction) {
  std::string logitsName = operandName("logits");
  std::string targetsName = operandName("targets");
  FailureOr<int64_t> rank = checker.checkRankAtLeast(logitsName, logits, 1);
  if (failed(rank))
    return failure();
  SymbolicShape targetShape = leadingDims(*rank - 1);
  SymbolicShape logitsShape = targetShape;
  logitsShape.emplace_back("C");
  if (failed(checker.checkShape(logitsName, logits, logitsShape)) ||
      failed(checker.checkFloatElementType(logitsName, logits)) ||
      failed(checker.checkShape(targetsName, targets, targetShape)) ||
      failed(checker.checkElementType(
          targetsName, targets, IntegerType::get(targets.getContext(), 64))))
    return failure();
  if (reduction == Reduction::none)
    return SmallVector<SymbolicShape>{targetShape};
  return SmallVector<SymbolicShape>{SymbolicShape{}};
}

LogicalResult CrossEntropyOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes = checkCrossEntropy(checker, getLogits().getType(),
                                  getTargets().getType(), getReduction());
  return failure(failed(shapes) ||
                 failed(verifyResults(*this, checker, {"loss"}, *shapes)));
}

SmallVector<Type> CrossEntropyOp::inferResultTypes() {
  ShapeChecker checker;
  return resultTypes(getContext(), checker,
                     checkCrossEntropy(checker, getLogits().getType(),
                                       getTargets().getType(), getReduction()),
                     1);
}

void CrossEntropyOp::build(OpBuilder &builder, OperationState &state,
                           Value logits, Value targets, Reduction reduction) {
  ShapeChecker checker;
  auto types = resultTypes(builder.getContext(), checker,
                           checkCrossEntropy(checker, logits.getType(),
                                             targets.getType(), reduction),
                           1);
  build(builder, state, types.front(), logits, targets, reduction);
}

namespace {
/// cross_entropy applies log_softmax itself, and log_softmax is idempotent.
struct SkipLogSoftmaxOfLogits : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    auto logSoftmax = op.getLogits().getDefiningOp<LogSoftmaxOp>();
    if (!logSoftmax)
      return failure();
    rewriter.modifyOpInPlace(
        op, [&] { op.getLogitsMutable().assign(logSoftmax.getInput()); });
    return success();
  }
};
} // namespace

void CrossEntropyOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                 MLIRContext *context) {
  patterns.add<SkipLogSoftmaxOfLogits>(context);
}

//===----------------------------------------------------------------------===//
// Training ops
//===----------------------------------------------------------------------===//

/// Checks float `operands` against their shapes in order.
static LogicalResult checkFloatOperands(ShapeChecker &checker,
                                        ArrayRef<ExpectedOperand> operands) {
  for (const ExpectedOperand &operand : operands) {
    std::string what = operandName(operand.name);
    if (failed(checker.checkShape(what, operand.type, operand.shape,
                                  operand.isWeight)) ||
        failed(checker.checkFloatElementType(what, operand.type)))
      return failure();
  }
  return success();
}

/// Builds an op's result types from its signature function, with unranked
/// placeholders where the operands are invalid.
template <typename Check>
static SmallVector<Type> inferredTypes(MLIRContext *context,
                                       unsigned numResults, Check check) {
  ShapeChecker checker;
  return resultTypes(context, checker, check(checker), numResults);
}

static FailureOr<SmallVector<SymbolicShape>>
checkCrossEntropyGrad(ShapeChecker &checker, Type logits, Type targets,
                      Type dLoss, Reduction reduction) {
  auto lossShape = checkCrossEntropy(checker, logits, targets, reduction);
  if (failed(lossShape) ||
      failed(checkFloatOperands(
          checker, {{"d_loss", dLoss, lossShape->front(), false}})))
    return failure();
  SymbolicShape logitsShape =
      leadingDims(cast<RankedTensorType>(logits).getRank() - 1);
  logitsShape.emplace_back("C");
  return SmallVector<SymbolicShape>{logitsShape};
}

LogicalResult CrossEntropyGradOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes = checkCrossEntropyGrad(checker, getLogits().getType(),
                                      getTargets().getType(),
                                      getDLoss().getType(), getReduction());
  return failure(failed(shapes) ||
                 failed(verifyResults(*this, checker, {"d_logits"}, *shapes)));
}

SmallVector<Type> CrossEntropyGradOp::inferResultTypes() {
  return inferredTypes(getContext(), 1, [&](ShapeChecker &checker) {
    return checkCrossEntropyGrad(checker, getLogits().getType(),
                                 getTargets().getType(), getDLoss().getType(),
                                 getReduction());
  });
}

void CrossEntropyGradOp::build(OpBuilder &builder, OperationState &state,
                               Value logits, Value targets, Value dLoss,
                               Reduction reduction) {
  auto types = inferredTypes(builder.getContext(), 1, [&](ShapeChecker &c) {
    return checkCrossEntropyGrad(c, logits.getType(), targets.getType(),
                                 dLoss.getType(), reduction);
  });
  build(builder, state, types.front(), logits, targets, dLoss, reduction);
}

static FailureOr<SmallVector<SymbolicShape>>
checkLinearGrad(ShapeChecker &checker, Type dResult, Type input, Type weight) {
  FailureOr<int64_t> rank =
      checker.checkRankAtLeast(operandName("input"), input, 1);
  if (failed(rank))
    return failure();
  SymbolicShape inputShape = leadingDims(*rank - 1);
  SymbolicShape resultShape = inputShape;
  inputShape.emplace_back("K");
  resultShape.emplace_back("N");
  if (failed(checkFloatOperands(checker,
                                {{"input", input, inputShape, false},
                                 {"weight", weight, {"N", "K"}, true},
                                 {"d_result", dResult, resultShape, false}})))
    return failure();
  return SmallVector<SymbolicShape>{inputShape, {"N", "K"}, {"N"}};
}

LogicalResult LinearGradOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes = checkLinearGrad(checker, getDResult().getType(),
                                getInput().getType(), getWeight().getType());
  return failure(
      failed(shapes) ||
      failed(verifyResults(*this, checker, {"d_input", "d_weight", "d_bias"},
                           *shapes)));
}

SmallVector<Type> LinearGradOp::inferResultTypes() {
  return inferredTypes(getContext(), 3, [&](ShapeChecker &checker) {
    return checkLinearGrad(checker, getDResult().getType(),
                           getInput().getType(), getWeight().getType());
  });
}

void LinearGradOp::build(OpBuilder &builder, OperationState &state,
                         Value dResult, Value input, Value weight) {
  auto types = inferredTypes(builder.getContext(), 3, [&](ShapeChecker &c) {
    return checkLinearGrad(c, dResult.getType(), input.getType(),
                           weight.getType());
  });
  build(builder, state, types, dResult, input, weight);
}

static FailureOr<SmallVector<SymbolicShape>>
checkLSTMGrad(ShapeChecker &checker, Type input, Type wIh, Type wHh, Type bIh,
              Type bHh, Type y, Type dY) {
  if (failed(
          checkFloatOperands(checker, {{"input", input, {"T", "B", "I"}, false},
                                       {"w_ih", wIh, {{"H", 4}, "I"}, true},
                                       {"w_hh", wHh, {{"H", 4}, "H"}, true},
                                       {"b_ih", bIh, {{"H", 4}}, true},
                                       {"b_hh", bHh, {{"H", 4}}, true},
                                       {"y", y, {"T", "B", "H"}, false},
                                       {"d_y", dY, {"T", "B", "H"}, false}})))
    return failure();
  return SmallVector<SymbolicShape>{
      {"T", "B", "I"}, {{"H", 4}, "I"}, {{"H", 4}, "H"}, {{"H", 4}}};
}

LogicalResult LSTMGradOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes =
      checkLSTMGrad(checker, getInput().getType(), getWIh().getType(),
                    getWHh().getType(), getBIh().getType(), getBHh().getType(),
                    getY().getType(), getDY().getType());
  if (failed(shapes) ||
      failed(verifyResults(*this, checker,
                           {"d_input", "d_w_ih", "d_w_hh", "d_bias"}, *shapes)))
    return failure();
  return verifyUnitCounts(*this,
                          cast<ShapedType>(getWHh().getType()).getDimSize(1));
}

SmallVector<Type> LSTMGradOp::inferResultTypes() {
  return inferredTypes(getContext(), 4, [&](ShapeChecker &checker) {
    return checkLSTMGrad(checker, getInput().getType(), getWIh().getType(),
                         getWHh().getType(), getBIh().getType(),
                         getBHh().getType(), getY().getType(),
                         getDY().getType());
  });
}

void LSTMGradOp::build(OpBuilder &builder, OperationState &state, Value input,
                       Value wIh, Value wHh, Value bIh, Value bHh, Value y,
                       Value dY) {
  auto types = inferredTypes(builder.getContext(), 4, [&](ShapeChecker &c) {
    return checkLSTMGrad(c, input.getType(), wIh.getType(), wHh.getType(),
                         bIh.getType(), bHh.getType(), y.getType(),
                         dY.getType());
  });
  build(builder, state, types, input, wIh, wHh, bIh, bHh, y, dY);
}

static FailureOr<SmallVector<SymbolicShape>>
checkEmbeddingGrad(ShapeChecker &checker, Type dResult, Type ids,
                   int64_t rows) {
  FailureOr<int64_t> idsRank =
      checker.checkRankAtLeast(operandName("ids"), ids, 0);
  if (failed(idsRank) ||
      failed(checker.checkElementType(operandName("ids"), ids,
                                      IntegerType::get(ids.getContext(), 64))))
    return failure();
  SymbolicShape idsShape = leadingDims(*idsRank);
  SymbolicShape dResultShape = idsShape;
  dResultShape.emplace_back("E");
  if (failed(checker.checkShape(operandName("ids"), ids, idsShape)) ||
      failed(checkFloatOperands(checker,
                                {{"d_result", dResult, dResultShape, false}})))
    return failure();
  if (ShapedType::isDynamic(checker.sizesOf({"E"}).front()))
    return checker.fail(operandName("d_result"),
                        " must have a static last dimension (the table's "
                        "columns E), got ",
                        dResult);
  checker.assumeSize("V", rows);
  return SmallVector<SymbolicShape>{{"V", "E"}};
}

LogicalResult EmbeddingGradOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto shapes = checkEmbeddingGrad(checker, getDResult().getType(),
                                   getIds().getType(), getRows());
  return failure(failed(shapes) ||
                 failed(verifyResults(*this, checker, {"d_table"}, *shapes)));
}

SmallVector<Type> EmbeddingGradOp::inferResultTypes() {
  return inferredTypes(getContext(), 1, [&](ShapeChecker &checker) {
    return checkEmbeddingGrad(checker, getDResult().getType(),
                              getIds().getType(), getRows());
  });
}

void EmbeddingGradOp::build(OpBuilder &builder, OperationState &state,
                            Value dResult, Value ids, int64_t rows) {
  auto types = inferredTypes(builder.getContext(), 1, [&](ShapeChecker &c) {
    return checkEmbeddingGrad(c, dResult.getType(), ids.getType(), rows);
  });
  build(builder, state, types.front(), dResult, ids, rows);
}

/// The norm's type, then each gradient's own, or failure.
static FailureOr<SmallVector<Type>> checkClipGradNorm(ShapeChecker &checker,
                                                      TypeRange gradients) {
  if (gradients.empty())
    return checker.fail("needs at least one gradient");
  SmallVector<Type> types;
  for (auto [index, type] : llvm::enumerate(gradients)) {
    std::string what = operandName("gradients") + " #" + std::to_string(index);
    if (failed(checker.checkRankAtLeast(what, type, 0)) ||
        failed(checker.checkFloatElementType(what, type)))
      return failure();
    if (types.empty())
      types.push_back(
          RankedTensorType::get({}, cast<ShapedType>(type).getElementType()));
    types.push_back(type);
  }
  return types;
}

LogicalResult ClipGradNormOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  auto types = checkClipGradNorm(checker, getGradients().getTypes());
  if (failed(types))
    return failure();
  if (getNumResults() != types->size())
    return emitOpError() << "expected " << types->size()
                         << " results (the norm, then one per gradient), got "
                         << getNumResults();
  for (auto [index, result, expected] : llvm::enumerate(getResults(), *types))
    if (result.getType() != expected)
      return emitOpError() << "result #" << index << " expected type "
                           << expected << ", got " << result.getType();
  return success();
}

SmallVector<Type> ClipGradNormOp::inferResultTypes() {
  ShapeChecker checker;
  auto types = checkClipGradNorm(checker, getGradients().getTypes());
  if (succeeded(types))
    return *types;
  return llvm::to_vector(getResultTypes());
}

void ClipGradNormOp::build(OpBuilder &builder, OperationState &state,
                           ValueRange gradients, double maxNorm) {
  ShapeChecker checker;
  auto types = checkClipGradNorm(checker, gradients.getTypes());
  assert(succeeded(types) && "clip_grad_norm of invalid gradients");
  build(builder, state, types->front(),
        TypeRange(ArrayRef(*types).drop_front()), gradients,
        builder.getF64FloatAttr(maxNorm));
}

LogicalResult SGDUpdateOp::verify() {
  ShapeChecker checker = verifyingChecker(*this);
  std::string what = operandName("weight");
  return failure(
      failed(checker.checkRankAtLeast(what, getWeight().getType(), 0)) ||
      failed(checker.checkFloatElementType(what, getWeight().getType())));
}

SmallVector<Type> SGDUpdateOp::inferResultTypes() {
  return {getWeight().getType()};
}

#define GET_OP_CLASSES
#include "recur/IR/RecurOps.cpp.inc"
