//===- CellProgram.cpp - a recur.rnn cell as a reference program ----------===//
//
// The cell region of a recur.rnn written as JSON that the double-precision
// reference (runtime/reference/CellInterpreter.cpp) interprets: tensors by
// name, each op with its operands and what it needs of its attributes
// (linalg.generic's indexing maps, iterators and scalar body; slices'
// offsets and sizes, static or by the name of an index value). A region
// holding anything else has no program, and the model then none either.
//
//===----------------------------------------------------------------------===//

#include "CellProgram.h"

#include "recur/IR/RecurOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::recur;

namespace {

/// Names the values of one region (and its generics' bodies) as it is
/// written out.
class CellWriter {
public:
  std::string name(Value value) {
    auto [it, inserted] = names.try_emplace(value, "");
    if (inserted)
      it->second = "v" + std::to_string(names.size() - 1);
    return it->second;
  }
  llvm::json::Array names_(ValueRange values) {
    llvm::json::Array result;
    for (Value value : values)
      result.push_back(name(value));
    return result;
  }
  /// Static sizes as numbers, dynamic ones by their value's name.
  llvm::json::Array mixed(ArrayRef<OpFoldResult> sizes) {
    llvm::json::Array result;
    for (OpFoldResult size : sizes) {
      if (auto attr = dyn_cast<Attribute>(size))
        result.push_back(cast<IntegerAttr>(attr).getInt());
      else
        result.push_back(name(cast<Value>(size)));
    }
    return result;
  }

  std::optional<llvm::json::Object> scalarOp(Operation &op);
  std::optional<llvm::json::Object> tensorOp(Operation &op);
  std::optional<llvm::json::Object> block(Block &block);

private:
  llvm::DenseMap<Value, std::string> names;
};

/// The elementwise scalar functions, by the name the reference knows them.
std::optional<StringRef> scalarFunction(Operation &op) {
  return llvm::TypeSwitch<Operation *, std::optional<StringRef>>(&op)
      .Case([](arith::AddFOp) { return "add"; })
      .Case([](arith::SubFOp) { return "sub"; })
      .Case([](arith::MulFOp) { return "mul"; })
      .Case([](arith::DivFOp) { return "div"; })
      .Case([](arith::MaximumFOp) { return "maximum"; })
      .Case([](arith::MinimumFOp) { return "minimum"; })
      .Case([](arith::MaxNumFOp) { return "maxnum"; })
      .Case([](arith::MinNumFOp) { return "minnum"; })
      .Case([](arith::NegFOp) { return "neg"; })
      .Case([](math::ExpOp) { return "exp"; })
      .Case([](math::LogOp) { return "log"; })
      .Case([](math::Log1pOp) { return "log1p"; })
      .Case([](math::TanhOp) { return "tanh"; })
      .Case([](math::SqrtOp) { return "sqrt"; })
      .Case([](math::RsqrtOp) { return "rsqrt"; })
      .Case([](math::AbsFOp) { return "abs"; })
      .Case([](math::PowFOp) { return "pow"; })
      .Case([](arith::SelectOp) { return "select"; })
      .Case([](arith::CmpFOp cmp) -> std::optional<StringRef> {
        switch (cmp.getPredicate()) {
        case arith::CmpFPredicate::OGT:
          return "greater";
        case arith::CmpFPredicate::OLT:
          return "less";
        case arith::CmpFPredicate::OGE:
          return "greater_equal";
        case arith::CmpFPredicate::OLE:
          return "less_equal";
        default:
          return std::nullopt;
        }
      })
      .Default([](Operation *) { return std::nullopt; });
}

std::optional<llvm::json::Object> CellWriter::scalarOp(Operation &op) {
  llvm::json::Object description{{"results", names_(op.getResults())}};
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (auto value = dyn_cast<FloatAttr>(constant.getValue()))
      description["value"] = value.getValueAsDouble();
    else if (auto value = dyn_cast<IntegerAttr>(constant.getValue()))
      description["value"] = double(value.getInt());
    else
      return std::nullopt;
    description["op"] = "constant";
    return description;
  }
  std::optional<StringRef> function = scalarFunction(op);
  if (!function)
    return std::nullopt;
  description["op"] = *function;
  description["operands"] = names_(op.getOperands());
  return description;
}

/// An affine map's results as dimension numbers, {"constant": c} for a
/// constant; nullopt for anything else.
std::optional<llvm::json::Array> mapResults(AffineMap map) {
  llvm::json::Array results;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      results.push_back(int64_t(dim.getPosition()));
    else if (auto constant = dyn_cast<AffineConstantExpr>(expr))
      results.push_back(llvm::json::Object{{"constant", constant.getValue()}});
    else
      return std::nullopt;
  }
  return results;
}

std::optional<llvm::json::Object> CellWriter::tensorOp(Operation &op) {
  llvm::json::Object description{{"results", names_(op.getResults())}};
  auto set = [&](StringRef kind, llvm::json::Object fields) {
    description["op"] = kind;
    for (auto &field : fields)
      description[field.first] = std::move(field.second);
    return std::move(description);
  };
  if (auto linear = dyn_cast<LinearOp>(op))
    return set("linear",
               llvm::json::Object{
                   {"input", name(linear.getInput())},
                   {"weight", name(linear.getWeight())},
                   {"bias", linear.getBias()
                                ? llvm::json::Value(name(linear.getBias()))
                                : llvm::json::Value(nullptr)}});
  if (isa<arith::ConstantOp>(op) &&
      op.getResult(0).getType().isIntOrIndexOrFloat())
    return scalarOp(op);
  if (auto dim = dyn_cast<tensor::DimOp>(op)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!index)
      return std::nullopt;
    return set("dim", llvm::json::Object{{"source", name(dim.getSource())},
                                         {"index", *index}});
  }
  if (auto empty = dyn_cast<tensor::EmptyOp>(op))
    return set("empty",
               llvm::json::Object{{"sizes", mixed(empty.getMixedSizes())}});
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return set("fill",
               llvm::json::Object{{"value", name(fill.getInputs()[0])},
                                  {"init", name(fill.getOutputs()[0])}});
  // A rank-reducing slice names the unit dimensions it drops.
  auto droppedDims = [](const llvm::SmallBitVector &dims) {
    llvm::json::Array result;
    for (int dim : dims.set_bits())
      result.push_back(int64_t(dim));
    return result;
  };
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    if (!slice.hasUnitStride())
      return std::nullopt;
    return set(
        "extract_slice",
        llvm::json::Object{{"source", name(slice.getSource())},
                           {"offsets", mixed(slice.getMixedOffsets())},
                           {"sizes", mixed(slice.getMixedSizes())},
                           {"dropped", droppedDims(slice.getDroppedDims())}});
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    if (!insert.hasUnitStride())
      return std::nullopt;
    return set("insert_slice",
               llvm::json::Object{{"source", name(insert.getSource())},
                                  {"dest", name(insert.getDest())},
                                  {"offsets", mixed(insert.getMixedOffsets())},
                                  {"sizes", mixed(insert.getMixedSizes())}});
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return set("reshape", llvm::json::Object{
                              {"source", name(expand.getSrc())},
                              {"sizes", mixed(expand.getMixedOutputShape())}});
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    llvm::json::Array groups;
    for (ReassociationIndices group : collapse.getReassociationIndices())
      groups.push_back(llvm::json::Array(group));
    return set("collapse",
               llvm::json::Object{{"source", name(collapse.getSrc())},
                                  {"groups", std::move(groups)}});
  }
  if (auto cast = dyn_cast<tensor::CastOp>(op))
    return set("copy", llvm::json::Object{{"source", name(cast.getSource())}});
  if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    return set("concat",
               llvm::json::Object{{"inputs", names_(concat.getInputs())},
                                  {"dim", int64_t(concat.getDim())}});
  if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
    llvm::json::Array maps, iterators;
    for (AffineMap map : generic.getIndexingMapsArray()) {
      if (map.getNumSymbols())
        return std::nullopt;
      std::optional<llvm::json::Array> results = mapResults(map);
      if (!results)
        return std::nullopt;
      maps.push_back(std::move(*results));
    }
    for (utils::IteratorType iterator : generic.getIteratorTypesArray())
      iterators.push_back(
          iterator == utils::IteratorType::parallel ? "parallel" : "reduction");
    std::optional<llvm::json::Object> body = block(generic.getRegion().front());
    if (!body)
      return std::nullopt;
    return set("generic",
               llvm::json::Object{{"inputs", names_(generic.getDpsInputs())},
                                  {"outputs", names_(generic.getDpsInits())},
                                  {"maps", std::move(maps)},
                                  {"loops", int64_t(generic.getNumLoops())},
                                  {"iterators", std::move(iterators)},
                                  {"body", std::move(*body)}});
  }
  // Elementwise arith and math on whole tensors of one shape.
  if (op.getNumResults() == 1 &&
      isa<RankedTensorType>(op.getResult(0).getType()))
    if (std::optional<StringRef> function = scalarFunction(op))
      return set("elementwise",
                 llvm::json::Object{{"function", *function},
                                    {"operands", names_(op.getOperands())}});
  return std::nullopt;
}

std::optional<llvm::json::Object> CellWriter::block(Block &block) {
  llvm::json::Array ops;
  bool scalar = !isa<RNNOp>(block.getParentOp());
  for (Operation &op : block.without_terminator()) {
    std::optional<llvm::json::Object> description =
        scalar ? scalarOp(op) : tensorOp(op);
    if (!description)
      return std::nullopt;
    ops.push_back(std::move(*description));
  }
  return llvm::json::Object{
      {"arguments", names_(block.getArguments())},
      {"ops", std::move(ops)},
      {"yield", names_(block.getTerminator()->getOperands())}};
}

} // namespace

std::optional<llvm::json::Object> mlir::recur::describeCell(RNNOp op) {
  CellWriter writer;
  return writer.block(op.getCell());
}

std::optional<llvm::json::Object> mlir::recur::describeTensorOp(Operation &op) {
  CellWriter writer;
  llvm::json::Array arguments = writer.names_(op.getOperands());
  std::optional<llvm::json::Object> description = writer.tensorOp(op);
  if (!description)
    return std::nullopt;
  return llvm::json::Object{{"arguments", std::move(arguments)},
                            {"ops", llvm::json::Array{std::move(*description)}},
                            {"yield", writer.names_(op.getResults())}};
}
