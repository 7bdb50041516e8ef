//===- ShapeChecker.cpp - Symbolic shape checks for recur ops -------------===//

#include "recur/IR/ShapeChecker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::recur;

SymbolicShape mlir::recur::leadingDims(int64_t rank) {
  SymbolicShape dims;
  for (int64_t i = 0; i < rank; ++i)
    dims.emplace_back("d" + std::to_string(i));
  return dims;
}

static std::string formatSizes(ArrayRef<int64_t> sizes) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(sizes, os, [&](int64_t size) {
    if (ShapedType::isDynamic(size))
      os << '?';
    else
      os << size;
  });
  os << ']';
  return text;
}

static std::string formatSymbols(const SymbolicShape &shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os, [&](const SymbolicDim &dim) {
    if (dim.factor != 1)
      os << dim.factor << '*';
    os << dim.symbol;
  });
  os << ']';
  return text;
}

LogicalResult ShapeChecker::checkShape(StringRef what, Type type,
                                       const SymbolicShape &shape,
                                       bool requireStatic) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() != static_cast<int64_t>(shape.size()))
    return fail(what, " must be a ranked tensor of rank ", shape.size(), " ",
                formatSymbols(shape), ", got ", type);
  if (requireStatic && !tensor.hasStaticShape())
    return fail(what, " must have a static shape ", formatSymbols(shape),
                ", got ", type);

  // Learn unknown symbols from this value first, so that a mismatch reports a
  // fully populated expected shape.
  llvm::StringMap<int64_t> learned = sizes;
  bool mismatch = false;
  for (auto [index, dim] : llvm::enumerate(shape)) {
    int64_t actual = tensor.getDimSize(index);
    if (ShapedType::isDynamic(actual))
      continue;
    if (actual % dim.factor != 0)
      return fail(what, " dimension ", index, " (", dim.factor, '*', dim.symbol,
                  ") must be a multiple of ", dim.factor, ", got ", actual);
    auto [it, inserted] = learned.try_emplace(dim.symbol, actual / dim.factor);
    if (!inserted && it->second != actual / dim.factor)
      mismatch = true;
  }
  if (mismatch) {
    SmallVector<int64_t> expected;
    for (const SymbolicDim &dim : shape) {
      // Sizes known before this value win: they are what it disagrees with.
      auto known = sizes.find(dim.symbol);
      auto fromThis = learned.find(dim.symbol);
      if (known != sizes.end())
        expected.push_back(known->second * dim.factor);
      else if (fromThis != learned.end())
        expected.push_back(fromThis->second * dim.factor);
      else
        expected.push_back(ShapedType::kDynamic);
    }
    return fail(what, " expected shape ", formatSymbols(shape), " = ",
                formatSizes(expected), ", got ",
                formatSizes(tensor.getShape()));
  }
  sizes = std::move(learned);
  return success();
}

FailureOr<int64_t> ShapeChecker::checkRankAtLeast(StringRef what, Type type,
                                                  int64_t minRank) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() < minRank) {
    std::string rankText =
        minRank > 0 ? " of rank >= " + std::to_string(minRank) : std::string();
    return fail(what, " must be a ranked tensor", rankText, ", got ", type);
  }
  return tensor.getRank();
}

LogicalResult ShapeChecker::checkFloatElementType(StringRef what, Type type) {
  Type element = cast<ShapedType>(type).getElementType();
  if (!isa<FloatType>(element))
    return fail(what, " must have a floating-point element type, got ",
                element);
  if (!floatType) {
    floatType = element;
    floatTypeSource = what.str();
    return success();
  }
  if (element != floatType)
    return fail(what, " expected element type ", floatType, " (that of ",
                floatTypeSource, "), got ", element);
  return success();
}

LogicalResult ShapeChecker::checkElementType(StringRef what, Type type,
                                             Type expected) {
  Type element = cast<ShapedType>(type).getElementType();
  if (element != expected)
    return fail(what, " expected element type ", expected, ", got ", element);
  return success();
}

SmallVector<int64_t> ShapeChecker::sizesOf(const SymbolicShape &shape) const {
  SmallVector<int64_t> result;
  for (const SymbolicDim &dim : shape) {
    auto it = sizes.find(dim.symbol);
    result.push_back(it == sizes.end() ? ShapedType::kDynamic
                                       : it->second * dim.factor);
  }
  return result;
}

RankedTensorType ShapeChecker::floatTensorOf(const SymbolicShape &shape) const {
  assert(floatType && "no floating-point operand was checked");
  return RankedTensorType::get(sizesOf(shape), floatType);
}
