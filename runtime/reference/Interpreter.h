//===- Interpreter.h - run a model's program on the reference ops -*- C++
//-*-===//
//
// A compiled model's description carries its recur program as a small JSON
// graph (ops, operands by name, outputs). This interprets it with the reference
// ops, so `recur-run --check` and the tests can compare any compiled model with
// an implementation that shares no code with the compiler's output.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_REFERENCE_INTERPRETER_H
#define RECUR_REFERENCE_INTERPRETER_H

#include "reference/Reference.h"

#include <nlohmann/json.hpp>

#include <variant>

namespace recur::reference {

using Value = std::variant<FloatTensor, IdTensor>;

/// Runs `program` ({"ops": [...], "outputs": [...]}) on `arguments`, keyed by
/// input and weight names; returns the outputs in order. Throws
/// std::invalid_argument naming the op or value on malformed programs or
/// mismatched tensors.
std::vector<Value> interpret(const nlohmann::json &program,
                             const std::map<std::string, Value> &arguments);

/// A recur.rnn whose cell region is `cell` (as lib/Target/CellProgram.cpp
/// writes it) over `input [T, B, I]`, from the states `init` with the
/// `captures`, in double; `reverse` runs t = T-1 down to 0; `lengths` (if
/// any) each row's length (sequenceLengths). Returns y [T, B, outputSize]
/// and the final states.
std::vector<FloatTensor>
rnnRegion(const nlohmann::json &cell, const FloatTensor &input,
          const std::vector<const FloatTensor *> &init,
          const std::vector<const FloatTensor *> &captures, bool reverse,
          int64_t outputSize, const IdTensor *lengths = nullptr);

/// A program of cell ops outside any cell ({"arguments", "ops", "yield"}, as
/// lib/Target/CellProgram.cpp's describeTensorOp writes one op) on
/// `arguments`, in double; index scalars are tensors of shape [].
std::vector<FloatTensor>
tensorProgram(const nlohmann::json &program,
              const std::vector<const FloatTensor *> &arguments);

} // namespace recur::reference

#endif // RECUR_REFERENCE_INTERPRETER_H
