//===- ParserFuzzer.cpp - Fuzz parsing and verifying recur IR -------------===//
//
// Parses the input as MLIR with the dialects of recur IR, verifies it, and
// round-trips a valid module through the printer in both the custom and the
// generic form: the printed text must parse and verify again and print the
// same. Malformed input must end in a diagnostic, never a crash.
//
//===----------------------------------------------------------------------===//

#include "recur/IR/RecurOps.h"
#include "recur/Support/NestingLimit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;

namespace {

/// The dialects of recur IR, as mlir::recur::registerRecurDialects registers
/// them; calling that would link all of RecurCompiler for four lines.
const DialectRegistry &recurRegistry() {
  static const DialectRegistry *registry = [] {
    auto *result = new DialectRegistry();
    result->insert<recur::RecurDialect, arith::ArithDialect, func::FuncDialect,
                   tensor::TensorDialect>();
    return result;
  }();
  return *registry;
}

[[noreturn]] void fail(const char *what, llvm::StringRef first,
                       llvm::StringRef second = "") {
  llvm::errs() << "parser fuzzer: " << what << "\n--- first:\n"
               << first << "\n--- second:\n"
               << second << "\n";
  std::abort();
}

OwningOpRef<ModuleOp> parseAndVerify(llvm::StringRef text,
                                     MLIRContext &context) {
  // Verified below, so that the verifier runs even where parsing succeeds.
  ParserConfig config(&context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, config);
  if (!module || failed(verify(*module)))
    return nullptr;
  return module;
}

std::string print(ModuleOp module, bool generic) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  module->print(stream, flags);
  return text;
}

void checkRoundTrip(ModuleOp module, bool generic, MLIRContext &context) {
  std::string printed = print(module, generic);
  OwningOpRef<ModuleOp> again = parseAndVerify(printed, context);
  if (!again)
    fail(generic ? "the generic form does not parse and verify"
                 : "the custom form does not parse and verify",
         printed);
  std::string reprinted = print(*again, generic);
  if (reprinted != printed)
    fail("printing is not stable across a round trip", printed, reprinted);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh context per input: nothing uniqued by one input changes how the
  // next one is handled, so every crash reproduces from its input alone.
  MLIRContext context(recurRegistry(), MLIRContext::Threading::DISABLED);
  // Diagnostics are the expected outcome for most inputs.
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  // NUL-terminated, as a file read by recur-opt is: the lexer looks one
  // character past the end.
  std::string text(reinterpret_cast<const char *>(data), size);
  // The tools refuse text nested past the parser's stack before parsing it
  // (recur-opt, recur-compile); so does this target.
  if (recur::findExcessiveNesting(text))
    return 0;
  OwningOpRef<ModuleOp> module = parseAndVerify(text, context);
  if (!module)
    return 0;
  checkRoundTrip(*module, /*generic=*/false, context);
  checkRoundTrip(*module, /*generic=*/true, context);
  return 0;
}
