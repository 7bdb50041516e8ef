//===- RecurDialect.h - The recur dialect -----------------------*- C++ -*-===//

#ifndef RECUR_IR_RECURDIALECT_H
#define RECUR_IR_RECURDIALECT_H

#include "mlir/IR/Dialect.h"

#include "recur/IR/RecurDialect.h.inc"

#endif // RECUR_IR_RECURDIALECT_H
