//===- RecurOps.cpp - recur dialect operations ----------------------------===//
//
// The ops' shared verification, and the ops around the recurrences:
// embedding, linear, transpose, log_softmax and cross_entropy
// (OpVerification.h).
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
std::string mlir::recur::detail::operandName(StringRef name) {
  return ("operand '" + name + "'").str();
}
std::string mlir::recur::detail::resultName(StringRef name) {
  return ("result '" + name + "'").str();
}

LogicalResult
mlir::recur::detail::checkFloatOperands(ShapeChecker &checker,
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

ShapeChecker mlir::recur::detail::verifyingChecker(Operation *op) {
  return ShapeChecker([op] { return op->emitOpError(); });
}

/// Checks `op`'s results, named `names`, against the inferred `shapes`.
LogicalResult
mlir::recur::detail::verifyResults(Operation *op, ShapeChecker &checker,
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
SmallVector<Type>
mlir::recur::detail::resultTypes(MLIRContext *context, ShapeChecker &checker,
                                 FailureOr<SmallVector<SymbolicShape>> shapes,
                                 unsigned numResults) {
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
      return checker.fail(
          weightName, " packed in pairs of k expected shape [P, K/2 = ",
          ShapedType::isDynamic(depth)
              ? std::string("?")
              : std::to_string(depth / 2) + (depth % 2 ? " (K odd)" : ""),
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

FailureOr<SmallVector<SymbolicShape>>
mlir::recur::detail::checkCrossEntropy(ShapeChecker &checker, Type logits,
                                       Type targets, Reduction reduction) {
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

#define GET_OP_CLASSES
#include "recur/IR/RecurOps.cpp.inc"
