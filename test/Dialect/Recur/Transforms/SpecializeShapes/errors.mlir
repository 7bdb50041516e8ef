// RUN: not recur-opt %s --recur-specialize-shapes="inputs=tokens=50x0" 2>&1 | FileCheck %s --check-prefix=PARSE
// RUN: not recur-opt %s --recur-specialize-shapes="inputs=words=5x2" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not recur-opt %s --recur-specialize-shapes="inputs=tokens=5x2x3" 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not recur-opt %s --recur-specialize-shapes="inputs=tokens=6x2" 2>&1 | FileCheck %s --check-prefix=STATIC

// PARSE: error: recur-specialize-shapes: cannot parse input shape 'tokens=50x0'; expected NAME=D0xD1x... with positive sizes, e.g. tokens=50x128
// UNKNOWN: error: recur-specialize-shapes: no function argument is named 'words' (by a 'recur.input' attribute)
// RANK: errors.mlir:[[@LINE+2]]:1: error: recur-specialize-shapes: input 'tokens' has type 'tensor<5x?xi64>', which cannot take the shape 5x2x3
// STATIC: error: recur-specialize-shapes: input 'tokens' has type 'tensor<5x?xi64>', which cannot take the shape 6x2
func.func @forward(%tokens: tensor<5x?xi64> {recur.input = "tokens"}) -> tensor<5x?xi64> {
  return %tokens : tensor<5x?xi64>
}
