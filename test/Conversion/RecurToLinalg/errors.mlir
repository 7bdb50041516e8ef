// RUN: recur-opt %s -split-input-file --convert-recur-to-linalg -verify-diagnostics

func.func @bf16_lstm(%x: tensor<3x2x4xbf16>, %wih: tensor<24x4xbf16>, %whh: tensor<24x6xbf16>,
                     %b: tensor<24xbf16>) -> tensor<3x2x6xbf16> {
  // expected-error @+1 {{'recur.lstm' op has element type 'bf16'; the lowering computes in f32 (recur-compute-in-f32 converts bf16 and f16 models)}}
  %y, %h, %c = recur.lstm %x, %wih, %whh, %b, %b
      : (tensor<3x2x4xbf16>, tensor<24x4xbf16>, tensor<24x6xbf16>, tensor<24xbf16>, tensor<24xbf16>)
      -> (tensor<3x2x6xbf16>, tensor<2x6xbf16>, tensor<2x6xbf16>)
  return %y : tensor<3x2x6xbf16>
}
