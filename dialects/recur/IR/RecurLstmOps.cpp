//===- RecurLstmOps.cpp - the LSTM forms and weight layouts ---------------===//
//
// recur.lstm, lstm_recurrence, lstm_wavefront, interleave_gates and
// pack_panels (OpVerification.h).
//
//===----------------------------------------------------------------------===//

#include "OpVerification.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::recur;
using namespace mlir::recur::detail;

//===----------------------------------------------------------------------===//
// LSTMOp
//===----------------------------------------------------------------------===//

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
  if (failed(checkFloatOperands(checker, operands)))
    return failure();
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

Type mlir::recur::detail::typeOrNull(Value value) {
  return value ? value.getType() : Type();
}

LogicalResult mlir::recur::detail::verifyLengths(Operation *op, Value lengths,
                                                 Value input) {
  if (!lengths)
    return success();
  auto type = dyn_cast<RankedTensorType>(lengths.getType());
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  if (!type || type.getRank() != 1 ||
      !type.getElementType().isSignlessInteger() || !inputType ||
      inputType.getRank() != 3 ||
      failed(verifyCompatibleShape(ArrayRef<int64_t>{type.getDimSize(0)},
                                   ArrayRef<int64_t>{inputType.getDimSize(1)})))
    return op->emitOpError("expects lengths to be a [B] tensor of integers "
                           "with the input's B, got ")
           << lengths.getType();
  return success();
}

/// nn.LSTM's rules for the unit counts: a hidden size above zero, and a
/// projection (`projected`: w_hr's rows) that makes the hidden state smaller
/// but leaves it some units.
LogicalResult
mlir::recur::detail::verifyUnitCounts(Operation *op, int64_t hidden,
                                      std::optional<int64_t> projected) {
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
  if (failed(verifyLengths(*this, getLengths(), getInput())))
    return failure();
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
                   Value c0, bool reverse, Value wHr, Value lengths) {
  ShapeChecker checker;
  auto types =
      resultTypes(builder.getContext(), checker,
                  checkLSTM(checker, input.getType(), wIh.getType(),
                            wHh.getType(), typeOrNull(bIh), typeOrNull(bHh),
                            typeOrNull(wHr), typeOrNull(h0), typeOrNull(c0)),
                  3);
  build(builder, state, types[0], types[1], types[2], input, wIh, wHh, bIh, bHh,
        wHr, h0, c0, lengths, reverse);
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
LogicalResult mlir::recur::detail::checkPairPacked(ShapeChecker &checker,
                                                   StringRef what, Type weight,
                                                   Type computeType) {
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
    if (failed(checker.checkShape(what, wHh,
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
  int64_t gates = getGates();
  SymbolicShape shape = {{"H", gates}};
  // [GH] or [GH, K]; other ranks are reported against the 2-D form.
  if (type && type.getRank() != 1)
    shape.emplace_back("K");
  if (failed(checker.checkShape(what, getInput().getType(), shape,
                                /*requireStatic=*/true)) ||
      failed(checker.checkFloatElementType(what, getInput().getType())))
    return failure();
  return checkGateTile(*this, getTile(), type.getDimSize(0) / gates);
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
