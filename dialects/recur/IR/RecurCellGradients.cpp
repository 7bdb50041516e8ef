//===- RecurCellGradients.cpp - the vector-Jacobian product of recur.rnn --===//
//
// The backward of a recurrence whose cell is a region is a recurrence too: a
// recur.rnn running the other way, so every fusion stage applies to it as to
// any cell. Its cell recomputes the forward step from the states that
// entered it (the forward keeps them after y_t: cloneKeepingStates), then
// runs the step's ops in reverse, each by its rule below, carrying the
// states' gradients from step to step. Per step it returns each product's
// output gradient, so that the weights' gradients are GEMMs over all T·B
// rows after the loop, as the named cells' are; a parameter's per-row
// contributions are summed in states it carries.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Utils/TensorCasts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::recur;

//===----------------------------------------------------------------------===//
// Keeping the states that enter each step
//===----------------------------------------------------------------------===//

/// Whether two sizes may be equal (either is dynamic, or they are).
static bool isCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

static int64_t featureSize(Value value) {
  return cast<RankedTensorType>(value.getType()).getDimSize(1);
}

std::optional<int64_t> RNNOp::getKeptStatesOffset() {
  unsigned states = getInit().size();
  auto yield = cast<YieldOp>(getCell().getTerminator());
  auto concat = yield.getValues().front().getDefiningOp<tensor::ConcatOp>();
  if (states == 0 || !concat || concat.getDim() != 1 ||
      concat.getInputs().size() <= states ||
      !llvm::equal(concat.getInputs().take_back(states), getStateArguments()))
    return std::nullopt;
  int64_t offset = 0;
  for (Value piece : concat.getInputs().drop_back(states)) {
    if (ShapedType::isDynamic(featureSize(piece)))
      return std::nullopt;
    offset += featureSize(piece);
  }
  return offset;
}

RNNOp RNNOp::cloneKeepingStates(OpBuilder &builder) {
  auto yType = cast<RankedTensorType>(getY().getType());
  int64_t width = yType.getDimSize(2);
  for (Value state : getStateArguments())
    width += featureSize(state);
  auto keptType =
      RankedTensorType::get({yType.getDimSize(0), yType.getDimSize(1), width},
                            yType.getElementType());
  auto kept = RNNOp::create(
      builder, getLoc(), keptType, getFinalStates().getTypes(), getInput(),
      getInit(), getCaptures(), getLengths(), getReverse(), getLengthsSorted());
  IRMapping mapping;
  getBody().cloneInto(&kept.getBody(), mapping);
  auto yield = cast<YieldOp>(kept.getCell().getTerminator());
  OpBuilder atYield(yield);
  SmallVector<Value> pieces = {yield.getValues().front()};
  llvm::append_range(pieces, kept.getStateArguments());
  Value y = tensor::ConcatOp::create(atYield, yield.getLoc(), 1, pieces);
  yield.getValuesMutable()[0].set(y);
  return kept;
}

bool mlir::recur::isPrologueOp(Operation *op) {
  if (op->getNumRegions() == 0)
    return isPure(op);
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureTensorSemantics())
    return false;
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(generic.getRegion(), above);
  return above.empty();
}

bool mlir::recur::isWeightOnly(Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    auto function =
        dyn_cast<FunctionOpInterface>(argument.getOwner()->getParentOp());
    return function && argument.getOwner()->isEntryBlock() &&
           function.getArgAttr(argument.getArgNumber(),
                               RecurDialect::kWeightAttrName);
  }
  Operation *producer = value.getDefiningOp();
  if (producer->hasTrait<OpTrait::ConstantLike>())
    return true;
  return isPrologueOp(producer) &&
         llvm::all_of(producer->getOperands(), isWeightOnly);
}

void mlir::recur::eraseUnusedOps(Block &block) {
  SmallVector<Operation *> ops = llvm::map_to_vector(
      block.without_terminator(), [](Operation &op) { return &op; });
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty() && isMemoryEffectFree(op))
      op->erase();
}

//===----------------------------------------------------------------------===//
// Rules of the scalar ops (a linalg.generic's body, elementwise tensor ops)
//===----------------------------------------------------------------------===//

namespace {

/// A float constant of `type` (a scalar).
Value constant(OpBuilder &b, Location loc, Type type, double value) {
  return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, value));
}

bool isConstant(Value value, double expected) {
  APFloat constant(0.0);
  return matchPattern(value, m_ConstantFloat(&constant)) &&
         constant.convertToDouble() == expected;
}

/// x when `value` is σ(x) written as 1 / (1 + exp(-x)), as cells write it.
Value sigmoidArgument(arith::DivFOp div) {
  if (!isConstant(div.getLhs(), 1.0))
    return {};
  auto add = div.getRhs().getDefiningOp<arith::AddFOp>();
  if (!add)
    return {};
  Value other = isConstant(add.getLhs(), 1.0)   ? add.getRhs()
                : isConstant(add.getRhs(), 1.0) ? add.getLhs()
                                                : Value();
  auto exp = other ? other.getDefiningOp<math::ExpOp>() : math::ExpOp();
  auto negated =
      exp ? exp.getOperand().getDefiningOp<arith::NegFOp>() : arith::NegFOp();
  return negated ? negated.getOperand() : Value();
}

/// Reverse mode over scalar ops: `ops` (in program order, already built)
/// from the seeds (their values to their adjoints); returns the adjoint of
/// each of `inputs` (null where none reaches it), or failure naming an op
/// without a rule.
FailureOr<SmallVector<Value>>
scalarAdjoints(OpBuilder &b, Location loc, ArrayRef<Operation *> ops,
               ArrayRef<std::pair<Value, Value>> seeds, ValueRange inputs,
               function_ref<InFlightDiagnostic()> error) {
  DenseMap<Value, Value> adjoint;
  auto add = [&](Value value, Value gradient) {
    Value &sum = adjoint[value];
    sum = sum ? arith::AddFOp::create(b, loc, sum, gradient).getResult()
              : gradient;
  };
  for (auto [value, seed] : seeds)
    add(value, seed);
  for (Operation *op : llvm::reverse(ops)) {
    if (op->getNumResults() != 1)
      continue;
    Value g = adjoint.lookup(op->getResult(0));
    if (!g)
      continue;
    Value r = op->getResult(0);
    Type type = r.getType();
    auto mul = [&](Value x, Value y) -> Value {
      return arith::MulFOp::create(b, loc, x, y);
    };
    auto neg = [&](Value x) -> Value {
      return arith::NegFOp::create(b, loc, x);
    };
    auto select = [&](arith::CmpFPredicate predicate, Value x, Value y,
                      Value ifTrue, Value ifFalse) -> Value {
      Value condition = arith::CmpFOp::create(b, loc, predicate, x, y);
      return arith::SelectOp::create(b, loc, condition, ifTrue, ifFalse);
    };
    Value zero = [&]() -> Value {
      return isa<FloatType>(type) ? constant(b, loc, type, 0.0) : Value();
    }();
    LogicalResult handled =
        llvm::TypeSwitch<Operation *, LogicalResult>(op)
            .Case([&](arith::ConstantOp) { return success(); })
            .Case([&](arith::CmpFOp) { return success(); })
            .Case([&](arith::AddFOp o) {
              add(o.getLhs(), g);
              add(o.getRhs(), g);
              return success();
            })
            .Case([&](arith::SubFOp o) {
              add(o.getLhs(), g);
              add(o.getRhs(), neg(g));
              return success();
            })
            .Case([&](arith::MulFOp o) {
              add(o.getLhs(), mul(g, o.getRhs()));
              add(o.getRhs(), mul(g, o.getLhs()));
              return success();
            })
            .Case([&](arith::DivFOp o) {
              // σ'(x) = σ(x)(1 - σ(x)): through exp(-x) it would be
              // 0 · inf for a very negative x.
              if (Value x = sigmoidArgument(o)) {
                Value one = constant(b, loc, type, 1.0);
                add(x, mul(g, mul(r, arith::SubFOp::create(b, loc, one, r))));
                return success();
              }
              add(o.getLhs(), arith::DivFOp::create(b, loc, g, o.getRhs()));
              add(o.getRhs(),
                  neg(arith::DivFOp::create(b, loc, mul(g, r), o.getRhs())));
              return success();
            })
            .Case([&](arith::NegFOp o) {
              add(o.getOperand(), neg(g));
              return success();
            })
            // Ties go to the first operand (relu's gradient at 0 is 0).
            .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](Operation *o) {
              Value x = o->getOperand(0), y = o->getOperand(1);
              add(x, select(arith::CmpFPredicate::OGT, x, y, g, zero));
              add(y, select(arith::CmpFPredicate::OGT, x, y, zero, g));
              return success();
            })
            .Case<arith::MinimumFOp, arith::MinNumFOp>([&](Operation *o) {
              Value x = o->getOperand(0), y = o->getOperand(1);
              add(x, select(arith::CmpFPredicate::OLT, x, y, g, zero));
              add(y, select(arith::CmpFPredicate::OLT, x, y, zero, g));
              return success();
            })
            .Case([&](arith::SelectOp o) {
              add(o.getTrueValue(),
                  arith::SelectOp::create(b, loc, o.getCondition(), g, zero));
              add(o.getFalseValue(),
                  arith::SelectOp::create(b, loc, o.getCondition(), zero, g));
              return success();
            })
            .Case([&](math::ExpOp o) {
              add(o.getOperand(), mul(g, r));
              return success();
            })
            .Case([&](math::LogOp o) {
              add(o.getOperand(),
                  arith::DivFOp::create(b, loc, g, o.getOperand()));
              return success();
            })
            .Case([&](math::Log1pOp o) {
              Value one = constant(b, loc, type, 1.0);
              add(o.getOperand(),
                  arith::DivFOp::create(
                      b, loc, g,
                      arith::AddFOp::create(b, loc, one, o.getOperand())));
              return success();
            })
            .Case([&](math::TanhOp o) {
              Value one = constant(b, loc, type, 1.0);
              add(o.getOperand(),
                  mul(g, arith::SubFOp::create(b, loc, one, mul(r, r))));
              return success();
            })
            .Case([&](math::SqrtOp o) {
              Value half = constant(b, loc, type, 0.5);
              add(o.getOperand(),
                  arith::DivFOp::create(b, loc, mul(g, half), r));
              return success();
            })
            .Case([&](math::RsqrtOp o) {
              // d(a^-1/2) = -1/2 a^-3/2 = -1/2 r³.
              Value half = constant(b, loc, type, -0.5);
              add(o.getOperand(), mul(mul(g, half), mul(r, mul(r, r))));
              return success();
            })
            .Case([&](math::AbsFOp o) {
              Value x = o.getOperand();
              Value sign =
                  select(arith::CmpFPredicate::OLT, x, zero, neg(g),
                         select(arith::CmpFPredicate::OGT, x, zero, g, zero));
              add(x, sign);
              return success();
            })
            .Case([&](math::PowFOp o) {
              Value x = o.getLhs(), e = o.getRhs();
              Value one = constant(b, loc, type, 1.0);
              Value lower = math::PowFOp::create(
                  b, loc, x, arith::SubFOp::create(b, loc, e, one));
              add(x, mul(g, mul(e, lower)));
              if (!isa_and_nonnull<arith::ConstantOp>(e.getDefiningOp()))
                add(e, mul(g, mul(r, math::LogOp::create(b, loc, x))));
              return success();
            })
            .Default([&](Operation *o) {
              return error() << "computes '" << o->getName()
                             << "', which recur-differentiate has no "
                                "gradient rule for";
            });
    if (failed(handled))
      return failure();
  }
  return llvm::map_to_vector(
      inputs, [&](Value input) { return adjoint.lookup(input); });
}

/// A product whose weight gradient (and, for a product with x_t, input
/// gradient) is one recur.linear_grad over all T·B rows after the loop.
struct DeferredProduct {
  LinearOp linear;
  unsigned outputPiece = 0;
  /// Where its input comes from outside the loop: x (`fromStep`), the kept
  /// state `state`, or the backward's piece `inputPiece`.
  bool fromStep = false;
  int state = -1;
  std::optional<unsigned> inputPiece;
  bool inputGradient = false;
  /// Whether the weight's (bias's) gradient is wanted.
  bool weight = false, bias = false;
};

/// A loop-invariant value (a capture, or computed from captures only) read
/// per row: its per-step contribution, [B, n], summed over the steps in a
/// state the reverse loop carries (a row keeps it past its length, as any
/// state), and over B after the loop for a [n] vector broadcast over the
/// rows.
struct DeferredInvariant {
  Value value;
  Value contribution;
  bool overRows;
};

/// Builds the backward recurrence of one recur.rnn.
class CellBackward {
public:
  CellBackward(RNNOp forward, ArrayRef<bool> needed)
      : forward(forward), needed(needed) {}

  LogicalResult build(OpBuilder &outside, RNNOp op, Value dY, bool peeled,
                      ArrayRef<Value> dFinal,
                      SmallVectorImpl<Value> &gradients);

private:
  Location loc() { return forward.getLoc(); }
  bool isActive(Value value) { return active.contains(value); }
  int stateIndex(Value value) {
    for (auto [index, argument] : llvm::enumerate(forward.getStateArguments()))
      if (argument == value)
        return index;
    return -1;
  }
  Value primal(Value value) { return mapping->lookup(value); }
  void accumulate(Value value, Value gradient) {
    gradient = castTo(b, loc(), gradient, primal(value).getType());
    Value &sum = adjoints[value];
    sum = sum ? arith::AddFOp::create(b, loc(), sum, gradient).getResult()
              : gradient;
  }
  /// The gradient `g` of a slice of `source` at `offsets`/`sizes` (unit
  /// strides) added to `source`'s.
  void accumulateSlice(Value source, Value g, ArrayRef<OpFoldResult> offsets,
                       ArrayRef<OpFoldResult> sizes);
  unsigned addPiece(Value perStep) {
    if (auto *found = llvm::find(pieces, perStep); found != pieces.end())
      return found - pieces.begin();
    pieces.push_back(perStep);
    return pieces.size() - 1;
  }
  Value zerosLike(Value like);
  /// The sizes of `value`; in the loop a dynamic one is the batch's, so
  /// that every buffer of the step has a size known before the loop.
  SmallVector<OpFoldResult> sizesOf(Value value) {
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc(), value);
    if (!afterLoop)
      for (OpFoldResult &size : sizes)
        if (isa<Value>(size))
          size = rows;
    return sizes;
  }
  Value transposed(Value invariant);

  LogicalResult backward(Operation *op);
  LogicalResult linearBackward(LinearOp linear, Value g);
  LogicalResult genericBackward(linalg::GenericOp generic,
                                ArrayRef<Value> dResults);
  LogicalResult reductionBackward(linalg::GenericOp generic, Value g);
  LogicalResult elementwiseBackward(Operation *op, Value g);
  /// The adjoints of `op`'s active operands (`inputs`, in the loop's
  /// values) through an elementwise map, accumulated: per output map one
  /// linalg.generic over the iteration space of `result` whose body
  /// (`body`: scalar inputs and output adjoints to the ops it builds and
  /// the seeds) is recomputed and swept backward.
  LogicalResult pointwiseAdjoints(
      Operation *op, ValueRange inputs, ArrayRef<AffineMap> inputMaps,
      ArrayRef<Value> dResults, Value result,
      function_ref<std::pair<SmallVector<Operation *>,
                             SmallVector<std::pair<Value, Value>>>(
          OpBuilder &, ValueRange, ValueRange)>
          body);

  RNNOp forward;
  ArrayRef<bool> needed;
  OpBuilder b{forward.getContext()};
  OpBuilder *outer = nullptr;
  Block *cell = nullptr;
  /// The forward cell's values in the reverse step (`inside`) and, for the
  /// loop-invariant ones, before the loop (`invariants`, captures as their
  /// operands); `mapping` is the one the rules build in.
  IRMapping inside, invariants;
  IRMapping *mapping = &inside;
  /// Values that depend on captures only: their gradients are summed over
  /// the steps and taken through their ops once, after the loop.
  DenseSet<Value> invariant;
  bool afterLoop = false;
  /// The batch size in the loop (the stream row's).
  OpFoldResult rows;
  DenseSet<Value> active;
  DenseMap<Value, Value> adjoints;
  SmallVector<Value> pieces;
  SmallVector<DeferredProduct> products;
  SmallVector<DeferredInvariant> deferred;
  DenseMap<Value, BlockArgument> transposes;
  SmallVector<Value> extraCaptures;
};

Value CellBackward::zerosLike(Value like) {
  SmallVector<OpFoldResult> sizes = sizesOf(like);
  Type element = getElementTypeOrSelf(like.getType());
  Value empty = tensor::EmptyOp::create(b, loc(), sizes, element);
  Value zeros =
      linalg::FillOp::create(b, loc(), constant(b, loc(), element, 0.0), empty)
          .getResult(0);
  return castTo(b, loc(), zeros, like.getType());
}

/// Whether the regions at `offsets`/`sizes` of `a` and `b` are apart along
/// some dimension where both are static.
static bool disjoint(ArrayRef<OpFoldResult> aOffsets,
                     ArrayRef<OpFoldResult> aSizes,
                     ArrayRef<OpFoldResult> bOffsets,
                     ArrayRef<OpFoldResult> bSizes) {
  for (size_t dim = 0; dim < aOffsets.size(); ++dim) {
    std::optional<int64_t> aStart = getConstantIntValue(aOffsets[dim]),
                           aSize = getConstantIntValue(aSizes[dim]),
                           bStart = getConstantIntValue(bOffsets[dim]),
                           bSize = getConstantIntValue(bSizes[dim]);
    if (aStart && aSize && bStart && bSize &&
        (*aStart + *aSize <= *bStart || *bStart + *bSize <= *aStart))
      return true;
  }
  return false;
}

void CellBackward::accumulateSlice(Value source, Value g,
                                   ArrayRef<OpFoldResult> offsets,
                                   ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  // While the source's gradient is only other slices' gradients inserted
  // into zeros, apart from this one, this one is inserted there too: the
  // gates' gradients fill one tensor, rather than each padded with zeros
  // and the padded ones summed (a fill, a copy and an add of the whole per
  // gate).
  Value &sum = adjoints[source];
  auto apart = [&](tensor::InsertSliceOp insert) {
    return disjoint(insert.getMixedOffsets(), insert.getMixedSizes(), offsets,
                    sizes);
  };
  bool intoSum = false;
  if (sum && sum.getType() == primal(source).getType()) {
    Value dest = sum;
    while (auto insert = dest.getDefiningOp<tensor::InsertSliceOp>()) {
      if (!insert.hasUnitStride() || !apart(insert))
        break;
      dest = insert.getDest();
    }
    auto fill = dest.getDefiningOp<linalg::FillOp>();
    intoSum = fill && matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  }
  if (intoSum) {
    sum = tensor::InsertSliceOp::create(b, loc(), g, sum, offsets, sizes,
                                        strides);
    return;
  }
  accumulate(source, tensor::InsertSliceOp::create(b, loc(), g,
                                                   zerosLike(primal(source)),
                                                   offsets, sizes, strides));
}

Value CellBackward::transposed(Value weight) {
  auto [it, inserted] = transposes.try_emplace(weight, BlockArgument());
  if (inserted) {
    Value transpose = TransposeOp::create(
        *outer, loc(), invariants.lookup(weight), ArrayRef<int64_t>{1, 0});
    extraCaptures.push_back(transpose);
    it->second = cell->addArgument(transpose.getType(), loc());
  }
  return it->second;
}

LogicalResult CellBackward::pointwiseAdjoints(
    Operation *op, ValueRange inputs, ArrayRef<AffineMap> inputMaps,
    ArrayRef<Value> dResults, Value result,
    function_ref<std::pair<SmallVector<Operation *>,
                           SmallVector<std::pair<Value, Value>>>(
        OpBuilder &, ValueRange, ValueRange)>
        body) {
  MLIRContext *context = op->getContext();
  int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
  AffineMap rowVector = AffineMap::get(2, 0, getAffineDimExpr(1, context));
  // The active operands by the map of their gradient: the identity for an
  // operand read whole and for a loop-invariant vector (its contribution
  // stays per row, summed after the loop), the operand's own map for
  // another broadcast value (summed here over the dimensions it drops).
  // Each group is one generic, one output per operand.
  llvm::MapVector<AffineMap, SmallVector<unsigned>> groups;
  DenseSet<unsigned> deferredOperands;
  for (auto [index, map] : llvm::enumerate(inputMaps)) {
    if (!isActive(op->getOperand(index)))
      continue;
    if (!map.isProjectedPermutation())
      return op->emitOpError()
             << "reads an operand through " << AffineMapAttr::get(map)
             << ", which recur-differentiate cannot differentiate (not a "
                "projection)";
    bool deferred = !afterLoop && invariant.contains(op->getOperand(index)) &&
                    map != identity;
    if (deferred && !(rank == 2 && map == rowVector))
      return op->emitOpError()
             << "reads a parameter through " << AffineMapAttr::get(map)
             << ", which recur-differentiate cannot differentiate (a "
                "parameter is a [n] vector over the features or one per row)";
    if (deferred)
      deferredOperands.insert(index);
    groups[deferred ? identity : map].push_back(index);
  }

  SmallVector<Value> operands(inputs);
  SmallVector<AffineMap> maps(inputMaps);
  SmallVector<Value> gradients;
  for (Value g : dResults)
    if (g) {
      operands.push_back(g);
      maps.push_back(identity);
      gradients.push_back(g);
    }
  for (auto &[outputMap, indices] : groups) {
    bool reduces = outputMap != identity;
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    SmallVector<Value> inits;
    if (reduces) {
      llvm::SmallBitVector used(rank);
      for (AffineExpr expr : outputMap.getResults())
        used.set(cast<AffineDimExpr>(expr).getPosition());
      for (int64_t d = 0; d < rank; ++d)
        if (!used.test(d))
          iterators[d] = utils::IteratorType::reduction;
      for (unsigned index : indices)
        inits.push_back(zerosLike(inputs[index]));
    } else {
      // Sized by an operand read whole, if any: the result itself may
      // otherwise be recomputed for its size alone.
      Value like = result;
      for (auto [operand, map] : llvm::zip(inputs, inputMaps))
        if (map == identity && operand.getType() == result.getType())
          like = operand;
      for (unsigned index : indices)
        inits.push_back(tensor::EmptyOp::create(
            b, loc(), sizesOf(like),
            getElementTypeOrSelf(inputs[index].getType())));
    }
    SmallVector<AffineMap> allMaps(maps);
    allMaps.append(indices.size(), outputMap);
    LogicalResult status = success();
    auto generic = linalg::GenericOp::create(
        b, loc(), ValueRange(inits).getTypes(), operands, inits, allMaps,
        iterators, [&](OpBuilder &nested, Location loc, ValueRange args) {
          ValueRange scalars = args.take_front(inputs.size());
          ValueRange seeds = args.slice(inputs.size(), gradients.size());
          auto [ops, seedPairs] = body(nested, scalars, seeds);
          SmallVector<Value> wanted = llvm::map_to_vector(
              indices, [&](unsigned index) { return scalars[index]; });
          FailureOr<SmallVector<Value>> adjoint =
              scalarAdjoints(nested, loc, ops, seedPairs, wanted,
                             [&] { return op->emitOpError(); });
          if (failed(adjoint))
            status = failure();
          SmallVector<Value> yielded;
          for (auto [k, index] : llvm::enumerate(indices)) {
            Value d = succeeded(adjoint) ? (*adjoint)[k] : Value();
            if (!d)
              d = constant(nested, loc, scalars[index].getType(), 0.0);
            if (reduces)
              d = arith::AddFOp::create(nested, loc, args[operands.size() + k],
                                        d);
            yielded.push_back(d);
          }
          linalg::YieldOp::create(nested, loc, yielded);
        });
    if (failed(status))
      return failure();
    // What recomputing the forward left unread.
    Block &adjointBody = generic.getRegion().front();
    eraseUnusedOps(adjointBody);
    bool computed = false;
    for (auto [k, index] : llvm::enumerate(indices)) {
      Value adjoint = generic.getResult(k);
      // A gradient passed through unchanged (a sum's) needs no loop.
      Value yielded = adjointBody.getTerminator()->getOperand(k);
      for (auto [j, g] : llvm::enumerate(gradients))
        if (!reduces && yielded == adjointBody.getArgument(inputs.size() + j) &&
            g.getType() == adjoint.getType())
          adjoint = g;
      computed |= adjoint == generic.getResult(k);
      if (deferredOperands.contains(index))
        deferred.push_back({op->getOperand(index), adjoint, true});
      else
        accumulate(op->getOperand(index), adjoint);
    }
    if (!computed)
      generic.erase();
  }
  return success();
}

LogicalResult CellBackward::genericBackward(linalg::GenericOp generic,
                                            ArrayRef<Value> dResults) {
  if (generic.getNumReductionLoops() > 0) {
    if (generic.getNumResults() != 1)
      return generic.emitOpError()
             << "reduces into several results, which recur-differentiate "
                "cannot differentiate";
    return reductionBackward(generic, dResults[0]);
  }
  Block &body = generic.getRegion().front();
  for (OpOperand &init : generic.getDpsInitsMutable())
    if (!generic.getMatchingIndexingMap(&init).isIdentity() ||
        !generic.getMatchingBlockArgument(&init).use_empty())
      return generic.emitOpError()
             << "reads its outputs or writes them through a map other than "
                "the identity, which recur-differentiate cannot "
                "differentiate";
  SmallVector<Value> inputs = llvm::map_to_vector(
      generic.getDpsInputs(), [&](Value v) { return primal(v); });
  SmallVector<AffineMap> inputMaps = llvm::map_to_vector(
      generic.getDpsInputOperands(), [&](OpOperand *operand) {
        return generic.getMatchingIndexingMap(operand);
      });
  auto bodyFn = [&](OpBuilder &nested, ValueRange scalars, ValueRange seeds) {
    IRMapping scalarMapping = *mapping;
    for (auto [argument, scalar] :
         llvm::zip(body.getArguments().take_front(scalars.size()), scalars))
      scalarMapping.map(argument, scalar);
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(nested.clone(op, scalarMapping));
    SmallVector<std::pair<Value, Value>> seedPairs;
    unsigned next = 0;
    for (auto [yielded, g] :
         llvm::zip(body.getTerminator()->getOperands(), dResults))
      if (g)
        seedPairs.push_back(
            {scalarMapping.lookupOrDefault(yielded), seeds[next++]});
    return std::make_pair(ops, seedPairs);
  };
  return pointwiseAdjoints(generic, inputs, inputMaps, dResults,
                           primal(generic.getResult(0)), bodyFn);
}

LogicalResult CellBackward::reductionBackward(linalg::GenericOp generic,
                                              Value g) {
  Block &body = generic.getRegion().front();
  auto add = dyn_cast<arith::AddFOp>(
      body.getTerminator()->getOperand(0).getDefiningOp());
  Value in = body.getArgument(0), out = body.getArgument(1);
  if (generic.getNumDpsInputs() != 1 || !add ||
      !((add.getLhs() == in && add.getRhs() == out) ||
        (add.getLhs() == out && add.getRhs() == in)) ||
      !generic.getMatchingIndexingMap(generic.getDpsInputOperand(0))
           .isIdentity())
    return generic.emitOpError()
           << "is a reduction other than a sum, which recur-differentiate "
              "cannot differentiate";
  Value input = generic.getDpsInputs()[0];
  if (isActive(input)) {
    // Every summed element gets the sum's gradient.
    Value source = primal(input);
    int64_t rank = cast<RankedTensorType>(source.getType()).getRank();
    Value init = tensor::EmptyOp::create(
        b, loc(), sizesOf(source), getElementTypeOrSelf(source.getType()));
    AffineMap outputMap =
        generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
    auto broadcast = linalg::GenericOp::create(
        b, loc(), init.getType(), ValueRange{g}, ValueRange{init},
        ArrayRef<AffineMap>{outputMap, AffineMap::getMultiDimIdentityMap(
                                           rank, generic.getContext())},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &nested, Location loc, ValueRange args) {
          linalg::YieldOp::create(nested, loc, args[0]);
        });
    accumulate(input, broadcast.getResult(0));
  }
  Value init = generic.getDpsInits()[0];
  if (isActive(init))
    accumulate(init, g);
  return success();
}

LogicalResult CellBackward::elementwiseBackward(Operation *op, Value g) {
  Value result = primal(op->getResult(0));
  int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
  SmallVector<Value> inputs = llvm::map_to_vector(
      op->getOperands(), [&](Value v) { return primal(v); });
  SmallVector<AffineMap> maps(
      inputs.size(), AffineMap::getMultiDimIdentityMap(rank, op->getContext()));
  Type element = getElementTypeOrSelf(result.getType());
  auto bodyFn = [&](OpBuilder &nested, ValueRange scalars, ValueRange seeds) {
    OperationState state(op->getLoc(), op->getName(), scalars,
                         TypeRange{element}, op->getAttrs());
    Operation *scalar = nested.create(state);
    return std::make_pair(
        SmallVector<Operation *>{scalar},
        SmallVector<std::pair<Value, Value>>{{scalar->getResult(0), seeds[0]}});
  };
  return pointwiseAdjoints(op, inputs, maps, {g}, result, bodyFn);
}

LogicalResult CellBackward::linearBackward(LinearOp linear, Value g) {
  Value v = linear.getInput(), w = linear.getWeight(), bias = linear.getBias();
  if (!invariant.contains(w) || (bias && !invariant.contains(bias)))
    return linear.emitOpError()
           << "multiplies by a weight that changes from step to step, which "
              "recur-differentiate cannot differentiate";
  if (afterLoop)
    return linear.emitOpError()
           << "multiplies two parameters, which recur-differentiate cannot "
              "differentiate";
  bool weightActive = isActive(w), biasActive = bias && isActive(bias);
  bool inputActive = isActive(v);
  bool fromStep = v == forward.getStepInput();
  if (weightActive || biasActive || (inputActive && fromStep)) {
    DeferredProduct product;
    product.linear = linear;
    product.outputPiece = addPiece(g);
    product.fromStep = v == forward.getStepInput();
    product.state = stateIndex(v);
    if (!product.fromStep && product.state < 0)
      product.inputPiece = addPiece(primal(v));
    product.inputGradient = inputActive && fromStep;
    product.weight = weightActive;
    product.bias = biasActive;
    products.push_back(product);
  }
  if (inputActive && !fromStep)
    accumulate(v, LinearOp::create(b, loc(), g, transposed(w), Value()));
  return success();
}

LogicalResult CellBackward::backward(Operation *op) {
  SmallVector<Value> dResults = llvm::map_to_vector(
      op->getResults(), [&](Value r) { return adjoints.lookup(r); });
  if (llvm::all_of(dResults, [](Value g) { return !g; }) ||
      llvm::none_of(op->getOperands(), [&](Value v) { return isActive(v); }))
    return success();
  Value g = dResults.empty() ? Value() : dResults[0];
  auto noRule = [&] {
    return op->emitOpError()
           << "is in a recur.rnn cell on the path to its outputs, and "
              "recur-differentiate has no gradient rule for it";
  };
  auto slices = [&](auto slice) {
    return std::make_tuple(slice.getMixedOffsets(), slice.getMixedSizes(),
                           slice.getMixedStrides());
  };
  auto remap = [&](SmallVector<OpFoldResult> values) {
    for (OpFoldResult &value : values)
      if (auto v = dyn_cast<Value>(value))
        value = primal(v);
    return values;
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](LinearOp linear) { return linearBackward(linear, g); })
      .Case([&](linalg::GenericOp generic) {
        return genericBackward(generic, dResults);
      })
      .Case([&](linalg::FillOp) { return success(); }) // overwrites
      .Case([&](tensor::ExtractSliceOp slice) -> LogicalResult {
        if (!slice.hasUnitStride() || slice.getDroppedDims().any())
          return noRule();
        auto [offsets, sizes, strides] = slices(slice);
        accumulateSlice(slice.getSource(), g, remap(offsets), remap(sizes));
        return success();
      })
      .Case([&](tensor::InsertSliceOp insert) -> LogicalResult {
        if (!insert.hasUnitStride() ||
            insert.getSourceType().getRank() != insert.getDestType().getRank())
          return noRule();
        auto [offsets, sizes, strides] = slices(insert);
        if (isActive(insert.getSource()))
          accumulate(insert.getSource(), tensor::ExtractSliceOp::create(
                                             b, loc(), g, remap(offsets),
                                             remap(sizes), remap(strides)));
        if (isActive(insert.getDest()))
          accumulate(insert.getDest(),
                     tensor::InsertSliceOp::create(
                         b, loc(), zerosLike(primal(insert.getSource())), g,
                         remap(offsets), remap(sizes), remap(strides)));
        return success();
      })
      .Case([&](tensor::ConcatOp concat) -> LogicalResult {
        int64_t dim = concat.getDim();
        OpFoldResult offset = b.getIndexAttr(0);
        for (Value input : concat.getInputs()) {
          Value source = primal(input);
          SmallVector<OpFoldResult> sizes = sizesOf(source);
          int64_t rank = sizes.size();
          SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
          offsets[dim] = offset;
          if (isActive(input))
            accumulate(input,
                       tensor::ExtractSliceOp::create(
                           b, loc(), g, offsets, sizes,
                           SmallVector<OpFoldResult>(rank, b.getIndexAttr(1))));
          std::optional<int64_t> start = getConstantIntValue(offset),
                                 size = getConstantIntValue(sizes[dim]);
          if (!start || !size)
            return concat.emitOpError()
                   << "joins pieces of dynamic size, which "
                      "recur-differentiate cannot differentiate";
          offset = b.getIndexAttr(*start + *size);
        }
        return success();
      })
      .Case([&](tensor::ExpandShapeOp expand) {
        accumulate(expand.getSrc(),
                   tensor::CollapseShapeOp::create(
                       b, loc(), g, expand.getReassociationIndices()));
        return success();
      })
      .Case([&](tensor::CollapseShapeOp collapse) {
        Value source = primal(collapse.getSrc());
        accumulate(collapse.getSrc(),
                   tensor::ExpandShapeOp::create(
                       b, loc(), source.getType(), g,
                       collapse.getReassociationIndices(), sizesOf(source)));
        return success();
      })
      .Case([&](tensor::CastOp cast) {
        accumulate(cast.getSource(), g);
        return success();
      })
      .Case([&](arith::AddFOp add) {
        for (Value operand : add->getOperands())
          if (isActive(operand))
            accumulate(operand, g);
        return success();
      })
      .Case([&](arith::SubFOp sub) {
        if (isActive(sub.getLhs()))
          accumulate(sub.getLhs(), g);
        if (isActive(sub.getRhs()))
          accumulate(sub.getRhs(), arith::NegFOp::create(b, loc(), g));
        return success();
      })
      .Case([&](arith::NegFOp neg) {
        accumulate(neg.getOperand(), arith::NegFOp::create(b, loc(), g));
        return success();
      })
      .Default([&](Operation *op) -> LogicalResult {
        // arith and math ops on whole tensors.
        if (op->getNumResults() == 1 &&
            isa<RankedTensorType>(op->getResult(0).getType()) &&
            isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
          return elementwiseBackward(op, g);
        return noRule();
      });
}

LogicalResult CellBackward::build(OpBuilder &outside, RNNOp op, Value dY,
                                  bool peeled, ArrayRef<Value> dFinal,
                                  SmallVectorImpl<Value> &gradients) {
  outer = &outside;
  Location location = loc();
  MLIRContext *context = forward.getContext();
  unsigned numStates = forward.getInit().size();
  int64_t yWidth = *forward.getKeptStatesOffset();
  auto keptType = cast<RankedTensorType>(forward.getY().getType());
  auto inputType = cast<RankedTensorType>(forward.getInput().getType());
  Type element = inputType.getElementType();
  Block &forwardCell = forward.getCell();
  SmallVector<Operation *> ops = llvm::map_to_vector(
      forwardCell.without_terminator(), [](Operation &op) { return &op; });

  // What depends on what is differentiated, and what on captures only.
  if (needed[op.getInputMutable().getOperandNumber()])
    active.insert(forward.getStepInput());
  for (Value state : forward.getStateArguments())
    active.insert(state);
  for (auto [index, capture] : llvm::enumerate(forward.getCaptureArguments())) {
    invariant.insert(capture);
    if (needed[op.getCapturesMutable()[index].getOperandNumber()])
      active.insert(capture);
  }
  SmallVector<Operation *> invariantOps;
  for (Operation *inner : ops) {
    // Sizes and indices carry no gradient.
    if (llvm::any_of(inner->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value result : inner->getResults())
        if (isa<FloatType>(getElementTypeOrSelf(result.getType())))
          active.insert(result);
    if (llvm::all_of(inner->getOperands(),
                     [&](Value v) { return invariant.contains(v); }) &&
        inner->getNumRegions() == (isa<linalg::GenericOp>(inner) ? 1 : 0)) {
      invariant.insert(inner->result_begin(), inner->result_end());
      invariantOps.push_back(inner);
    }
  }
  // The invariant values once, before the loop: the products' weights and
  // their transposes, and the ops the gradients take after it.
  for (auto [capture, operand] :
       llvm::zip(forward.getCaptureArguments(), forward.getCaptures()))
    invariants.map(capture, operand);
  for (Operation *inner : invariantOps)
    outside.clone(*inner, invariants);

  // What each reverse step reads: x_t (or, for its products with weights,
  // those products, computed before the loop as one GEMM over all T·B
  // rows, as recur-hoist-input-projection does for the forward), the kept
  // y_t and states, d_y_t.
  Value stepInput = forward.getStepInput();
  SmallVector<LinearOp> inputProducts;
  for (Operation *user : stepInput.getUsers())
    if (auto linear = dyn_cast<LinearOp>(user);
        linear && linear.getInput() == stepInput &&
        invariant.contains(linear.getWeight()) &&
        (!linear.getBias() || invariant.contains(linear.getBias())))
      inputProducts.push_back(linear);
  bool readsInput = llvm::any_of(stepInput.getUsers(), [&](Operation *user) {
    return !isa<tensor::DimOp>(user) &&
           !llvm::is_contained(inputProducts, dyn_cast<LinearOp>(user));
  });
  SmallVector<Value> streams;
  if (readsInput)
    streams.push_back(forward.getInput());
  for (LinearOp product : inputProducts)
    streams.push_back(LinearOp::create(
        outside, location, forward.getInput(),
        invariants.lookup(product.getWeight()),
        product.getBias() ? invariants.lookup(product.getBias()) : Value()));
  unsigned keptStream = streams.size();
  streams.push_back(forward.getY());
  if (dY)
    streams.push_back(dY);
  SmallVector<int64_t> widths = llvm::map_to_vector(streams, [](Value v) {
    return cast<RankedTensorType>(v.getType()).getDimSize(2);
  });
  if (llvm::any_of(widths, ShapedType::isDynamic))
    return op.emitOpError() << "has a gradient of dynamic width, which "
                               "recur-differentiate cannot differentiate";
  Value stream =
      streams.size() == 1
          ? streams[0]
          : tensor::ConcatOp::create(outside, location, 2, streams).getResult();
  int64_t streamWidth = 0;
  for (int64_t width : widths)
    streamWidth += width;

  // The reverse step's block: the stream row, the states' gradients, the
  // captures (and transposed weights, added as the products ask for them).
  auto stepType = cast<RankedTensorType>(forward.getStepInput().getType());
  cell = new Block();
  llvm::scope_exit ownCell([&] {
    if (cell && !cell->getParent())
      delete cell;
  });
  Value streamRow = cell->addArgument(
      RankedTensorType::get({stepType.getDimSize(0), streamWidth}, element),
      location);
  SmallVector<Value> stateGradients;
  for (Value state : forward.getStateArguments())
    stateGradients.push_back(cell->addArgument(state.getType(), location));
  for (Value capture : forward.getCaptureArguments())
    inside.map(capture, cell->addArgument(capture.getType(), location));
  b.setInsertionPointToStart(cell);

  rows = tensor::getMixedSize(b, location, streamRow, 0);
  auto columns = [&](int64_t offset, int64_t width, Type type) {
    Value slice = tensor::ExtractSliceOp::create(
        b, location, streamRow,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(offset)},
        ArrayRef<OpFoldResult>{rows, b.getIndexAttr(width)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    return type ? castTo(b, location, slice, type) : slice;
  };
  SmallVector<int64_t> starts = {0};
  for (int64_t width : widths)
    starts.push_back(starts.back() + width);
  if (readsInput) {
    inside.map(stepInput,
               columns(0, inputType.getDimSize(2), stepInput.getType()));
  } else {
    // Only its batch size is read.
    auto type = cast<RankedTensorType>(stepInput.getType());
    inside.map(stepInput,
               castTo(b, location,
                      tensor::EmptyOp::create(
                          b, location,
                          ArrayRef<OpFoldResult>{
                              rows, b.getIndexAttr(type.getDimSize(1))},
                          element),
                      type));
  }
  for (auto [index, product] : llvm::enumerate(inputProducts))
    inside.map(product.getResult(),
               columns(starts[readsInput + index], widths[readsInput + index],
                       product.getType()));
  int64_t offset = starts[keptStream] + yWidth;
  for (Value state : forward.getStateArguments()) {
    inside.map(state, columns(offset, featureSize(state), state.getType()));
    offset += featureSize(state);
  }

  // The forward step, recomputed (but its products with x_t).
  for (Operation *inner : ops)
    if (!llvm::is_contained(inputProducts, dyn_cast<LinearOp>(inner)))
      b.clone(*inner, inside);

  // The seeds: d_y_t and the states' gradients.
  auto yield = cast<YieldOp>(forwardCell.getTerminator());
  if (dY) {
    int64_t dyOffset = starts[keptStream] + keptType.getDimSize(2);
    auto concat = yield.getValues()[0].getDefiningOp<tensor::ConcatOp>();
    if (peeled) {
      // Only y_t's part has a gradient: the kept states' is zero.
      int64_t pieceOffset = 0;
      for (Value piece : concat.getInputs().drop_back(numStates)) {
        if (isActive(piece))
          accumulate(piece, columns(dyOffset + pieceOffset, featureSize(piece),
                                    primal(piece).getType()));
        pieceOffset += featureSize(piece);
      }
    } else if (isActive(concat.getResult())) {
      accumulate(concat.getResult(),
                 columns(dyOffset, widths.back(),
                         primal(concat.getResult()).getType()));
    }
  }
  for (auto [value, gradient] :
       llvm::zip(yield.getValues().drop_front(), stateGradients))
    if (isActive(value))
      accumulate(value, gradient);

  for (Operation *inner : llvm::reverse(ops))
    if (!invariant.contains(inner->getResult(0)) && failed(backward(inner)))
      return failure();

  // Invariant [B, n] values read whole per row: their per-step gradient,
  // summed over the steps.
  for (Operation *inner : invariantOps)
    for (Value result : inner->getResults())
      if (Value gradient = adjoints.lookup(result))
        deferred.push_back({result, gradient, false});
  for (Value capture : forward.getCaptureArguments())
    if (Value gradient = adjoints.lookup(capture))
      deferred.push_back({capture, gradient, false});
  for (const DeferredInvariant &value : deferred) {
    auto type = cast<RankedTensorType>(value.value.getType());
    bool fits = value.overRows ? type.getRank() == 1
                               : type.getRank() == 2 &&
                                     isCompatible(type.getDimSize(0),
                                                  stepType.getDimSize(0));
    if (!fits)
      return op.emitOpError()
             << "reads a parameter of type " << value.value.getType()
             << " in a way recur-differentiate cannot differentiate: a "
                "parameter is a weight of a product, a [n] vector over the "
                "features, or [B, n], one row per batch row";
  }

  // The step's results: the pieces, then the states' gradients before it.
  std::optional<unsigned> inputPiece;
  if (needed[op.getInputMutable().getOperandNumber()])
    if (Value dx = adjoints.lookup(forward.getStepInput()))
      inputPiece = addPiece(dx);
  if (pieces.empty())
    addPiece(zerosLike(columns(0, 1, Type())));
  SmallVector<int64_t> pieceWidths;
  for (Value &piece : pieces) {
    pieceWidths.push_back(featureSize(piece));
    if (ShapedType::isDynamic(pieceWidths.back()))
      return op.emitOpError()
             << "has a value of dynamic width in its cell, which "
                "recur-differentiate cannot differentiate";
    piece = castTo(b, location, piece,
                   RankedTensorType::get(
                       {stepType.getDimSize(0), pieceWidths.back()}, element));
  }
  Value stepOutput =
      pieces.size() == 1
          ? pieces[0]
          : tensor::ConcatOp::create(b, location, 1, pieces).getResult();
  SmallVector<Value> yielded = {stepOutput};
  for (auto [index, state] : llvm::enumerate(forward.getStateArguments())) {
    Value gradient = adjoints.lookup(state);
    yielded.push_back(castTo(b, location,
                             gradient ? gradient : zerosLike(primal(state)),
                             state.getType()));
  }
  // The invariants' sums over the steps, carried after the states'
  // gradients: in registers and cache, not [T, B, n] stored and re-read.
  SmallVector<Type> sumTypes;
  for (const DeferredInvariant &value : deferred) {
    auto type = RankedTensorType::get(
        {stepType.getDimSize(0), featureSize(value.contribution)}, element);
    sumTypes.push_back(type);
    Value sum = cell->insertArgument(1 + numStates + (sumTypes.size() - 1),
                                     type, location);
    yielded.push_back(arith::AddFOp::create(
        b, location, sum, castTo(b, location, value.contribution, type)));
  }
  YieldOp::create(b, location, yielded);
  eraseUnusedOps(*cell);
  afterLoop = true;

  // The reverse recurrence.
  b.setInsertionPoint(outside.getInsertionBlock(), outside.getInsertionPoint());
  mapping = &invariants;
  int64_t total = 0;
  for (int64_t width : pieceWidths)
    total += width;
  auto yType = RankedTensorType::get(
      {inputType.getDimSize(0), inputType.getDimSize(1), total}, element);
  SmallVector<Value> init;
  for (auto [index, state] : llvm::enumerate(forward.getInit())) {
    Value gradient = dFinal[index] ? dFinal[index] : zerosLike(state);
    init.push_back(castTo(b, location, gradient, state.getType()));
  }
  SmallVector<Type> finalTypes(forward.getFinalStates().getTypes());
  for (Type type : sumTypes) {
    auto sumType = RankedTensorType::get(
        {inputType.getDimSize(1), cast<RankedTensorType>(type).getDimSize(1)},
        element);
    Value empty = tensor::EmptyOp::create(
        b, location,
        ArrayRef<OpFoldResult>{
            tensor::getMixedSize(b, location, forward.getInput(), 1),
            b.getIndexAttr(sumType.getDimSize(1))},
        element);
    Value zeros = linalg::FillOp::create(
                      b, location, constant(b, location, element, 0.0), empty)
                      .getResult(0);
    init.push_back(castTo(b, location, zeros, sumType));
    finalTypes.push_back(sumType);
  }
  SmallVector<Value> captures(forward.getCaptures());
  llvm::append_range(captures, extraCaptures);
  auto reverse = RNNOp::create(
      b, location, yType, finalTypes, stream, init, captures,
      forward.getLengths(), !forward.getReverse(), forward.getLengthsSorted());
  reverse.getBody().push_back(cell);
  // One generic per operand recomputes the same body: a sum's operands get
  // the same gradient, computed once.
  {
    IRRewriter rewriter(context);
    DominanceInfo dominance(reverse);
    eliminateCommonSubExpressions(rewriter, dominance, reverse);
  }

  // After the loop: the pieces over all T·B rows.
  auto sequence = [&](Value of, int64_t start, int64_t width) -> Value {
    return tensor::ExtractSliceOp::create(
        b, location, of,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                               b.getIndexAttr(start)},
        ArrayRef<OpFoldResult>{tensor::getMixedSize(b, location, of, 0),
                               tensor::getMixedSize(b, location, of, 1),
                               b.getIndexAttr(width)},
        SmallVector<OpFoldResult>(3, b.getIndexAttr(1)));
  };
  auto piece = [&](unsigned index) -> Value {
    if (pieces.size() == 1)
      return reverse.getY();
    int64_t start = 0;
    for (unsigned k = 0; k < index; ++k)
      start += pieceWidths[k];
    return sequence(reverse.getY(), start, pieceWidths[index]);
  };
  auto keptState = [&](int state) -> Value {
    int64_t start = yWidth;
    for (int k = 0; k < state; ++k)
      start += featureSize(forward.getStateArguments()[k]);
    return sequence(forward.getY(), start,
                    featureSize(forward.getStateArguments()[state]));
  };
  DenseMap<unsigned, Value> sums;
  auto add = [&](unsigned operand, Value gradient) {
    gradient = castTo(b, location, gradient, op->getOperand(operand).getType());
    Value &sum = sums[operand];
    sum = sum ? arith::AddFOp::create(b, location, sum, gradient).getResult()
              : gradient;
  };
  unsigned inputOperand = op.getInputMutable().getOperandNumber();
  if (inputPiece)
    add(inputOperand, piece(*inputPiece));
  adjoints.clear();
  for (DeferredProduct &product : products) {
    Value input = product.fromStep     ? Value(forward.getInput())
                  : product.state >= 0 ? keptState(product.state)
                                       : piece(*product.inputPiece);
    auto grad = LinearGradOp::create(b, location, piece(product.outputPiece),
                                     input, primal(product.linear.getWeight()));
    if (product.inputGradient)
      add(inputOperand, grad.getDInput());
    if (product.weight)
      accumulate(product.linear.getWeight(), grad.getDWeight());
    if (product.bias)
      accumulate(product.linear.getBias(), grad.getDBias());
  }
  for (auto [k, value] : llvm::enumerate(deferred)) {
    Value steps = reverse.getFinalStates()[numStates + k];
    if (!value.overRows) {
      accumulate(value.value, steps);
      continue;
    }
    // Σ over B of the sums over the steps, [B, n] -> [n].
    Value zeros = zerosLike(primal(value.value));
    auto d = [&](unsigned k) { return getAffineDimExpr(k, context); };
    auto sum = linalg::GenericOp::create(
        b, location, zeros.getType(), steps, zeros,
        ArrayRef<AffineMap>{AffineMap::getMultiDimIdentityMap(2, context),
                            AffineMap::get(2, 0, {d(1)}, context)},
        ArrayRef<utils::IteratorType>{utils::IteratorType::reduction,
                                      utils::IteratorType::parallel},
        [](OpBuilder &nested, Location loc, ValueRange args) {
          linalg::YieldOp::create(
              nested, loc,
              arith::AddFOp::create(nested, loc, args[0], args[1]).getResult());
        });
    accumulate(value.value, sum.getResult(0));
  }
  // The invariant ops' gradients, once: down to the captures.
  for (Operation *inner : llvm::reverse(invariantOps))
    if (failed(backward(inner)))
      return failure();
  for (auto [index, capture] : llvm::enumerate(forward.getCaptureArguments()))
    if (Value gradient = adjoints.lookup(capture))
      add(op.getCapturesMutable()[index].getOperandNumber(), gradient);
  for (auto [index, state] : llvm::enumerate(forward.getInit()))
    add(op.getInitMutable()[index].getOperandNumber(),
        reverse.getFinalStates()[index]);
  outside.setInsertionPoint(b.getInsertionBlock(), b.getInsertionPoint());

  gradients.assign(op->getNumOperands(), Value());
  for (auto [operand, sum] : sums)
    if (needed[operand])
      gradients[operand] = sum;
  return success();
}

} // namespace

LogicalResult RNNOp::buildGradients(OpBuilder &builder,
                                    ArrayRef<Value> resultGradients,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &gradients) {
  gradients.assign(getNumOperands(), Value());
  if (llvm::all_of(resultGradients, [](Value g) { return !g; }))
    return success();
  // The states entering each step: kept by this recurrence (recur-
  // differentiate has it keep them), or by a copy run again here.
  RNNOp forward = *this;
  Value dY = resultGradients[0];
  bool peeled = false;
  if (getKeptStatesOffset()) {
    // The kept states have no gradient of their own when the caller's
    // seeds zero them (recur-differentiate pads y_t's with zeros).
    int64_t yWidth = *getKeptStatesOffset();
    if (auto insert = dY ? dY.getDefiningOp<tensor::InsertSliceOp>()
                         : tensor::InsertSliceOp()) {
      auto fill = insert.getDest().getDefiningOp<linalg::FillOp>();
      if (fill && isConstant(fill.getInputs()[0], 0.0) &&
          llvm::all_of(
              insert.getMixedOffsets(),
              [](OpFoldResult o) { return isConstantIntValue(o, 0); }) &&
          insert.getSourceType().getDimSize(2) == yWidth) {
        dY = insert.getSource();
        peeled = true;
      }
    }
  } else {
    forward = cloneKeepingStates(builder);
    peeled = true;
  }
  CellBackward backward(forward, needed);
  return backward.build(builder, *this, dY, peeled,
                        resultGradients.drop_front(), gradients);
}
