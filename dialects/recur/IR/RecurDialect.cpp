//===- RecurDialect.cpp - The recur dialect -------------------------------===//

#include "recur/IR/RecurDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "recur/IR/RecurOps.h"
#include "llvm/ADT/TypeSwitch.h" // used by the generated attribute parser

using namespace mlir;
using namespace mlir::recur;

#include "recur/IR/RecurDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "recur/IR/RecurAttrs.cpp.inc"

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

LogicalResult RecurDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kInputAttrName || name == kWeightAttrName ||
      name == kDerivedAttrName)
    return verifyExternalName(op, argIndex, /*isResult=*/false, attr);
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
  return op->emitError() << "unknown result attribute '" << name
                         << "'; expected '" << kOutputAttrName << "'";
}
