//===- RecurLoweringConfigs.td - decisions code generation reads ----------===//
//
// What the conversion (or a config pass) decides about a loop nest it emits,
// attached to it as a typed attribute, so that code generation reads the
// decision instead of recognising the loop nest's shape. The dialect
// verifies each where it is attached.
//
//===----------------------------------------------------------------------===//

#ifndef RECUR_IR_RECURLOWERINGCONFIGS_TD
#define RECUR_IR_RECURLOWERINGCONFIGS_TD

include "recur/IR/RecurBase.td"

def Recur_PanelLayout : I32EnumAttr<"PanelLayout",
    "how a panel GEMM's weight holds its panels", [
      I32EnumAttrCase<"packed", 0>,
      I32EnumAttrCase<"pairs", 1>,
      I32EnumAttrCase<"in_place", 2>]> {
  let cppNamespace = "::mlir::recur";
  let genSpecializedAttr = 0;
}

def Recur_UnitStepAttr : AttrDef<Recur_Dialect, "UnitStep"> {
  let mnemonic = "unit_step";
  let summary = "a fused LSTM step: one iteration per batch row, hidden unit and layer";
  let description = [{
    On the `linalg.generic` of a fused step (`recur.lstm_recurrence` or
    `recur.lstm_wavefront` with `cell<fused>`), as `recur.unit_step`: its
    iterations are (batch row, hidden unit[, layer]), each summing the four
    gates of its unit in registers and applying the cell. `batch`, `unit`
    and `layer` (wavefronts only) name those iteration dimensions;
    `hidden` gives every layer's H; `gate_tiles` the tile each layer's
    weights are gate interleaved with (0: PyTorch's layout, gate g of unit
    j at row g * H + j). `recur-gpu-stationary-weights` schedules such a
    step as blocks that own groups of units with their weights on chip.

    ```mlir
    #recur.unit_step<batch = 0, unit = 1, layer = 2, hidden = [8, 8],
                     gate_tiles = [0, 0]>
    ```
  }];
  let parameters = (ins "int64_t":$batch, "int64_t":$unit,
                        OptionalParameter<"std::optional<int64_t>">:$layer,
                        ArrayRefParameter<"int64_t">:$hidden,
                        ArrayRefParameter<"int64_t">:$gateTiles);
  let assemblyFormat = [{
    `<` `batch` `=` $batch `,` `unit` `=` $unit `,` (`layer` `=` $layer^ `,`)?
    `hidden` `=` `[` $hidden `]` `,` `gate_tiles` `=` `[` $gateTiles `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumLayers() const { return getHidden().size(); }
    /// Rows between gate g and gate g + 1 of one unit in layer `layer`'s
    /// weights.
    int64_t getGateStride(int64_t layer) const {
      return getGateTiles()[layer] ? getGateTiles()[layer] : getHidden()[layer];
    }
  }];
}

def Recur_PanelGemmAttr : AttrDef<Recur_Dialect, "PanelGemm"> {
  let mnemonic = "panel_gemm";
  let summary = "a GEMM over a weight in panels of columns: the CPU's register-tiled kernel";
  let description = [{
    On the `linalg.generic` of a contraction `C[..., n] += A[..., k] *
    W(n, k)` (loops `(..., n, k)`, `k` the one reduction), as
    `recur.panel_gemm`: W is read in panels of `tile` columns of C, and
    `recur-vectorize-packed-matmuls` makes it a register tile of vector FMAs
    over one panel. `layout` says how W holds a panel:

    - `packed`: `W[n floordiv tile, k, n mod tile]` (`recur.pack_panels`),
      one contiguous panel row per k;
    - `pairs`: bf16 pairs of k, `W[n floordiv tile, k floordiv 2, n mod
      tile, k mod 2]` (`recur.pack_panels ... pairs`), for bf16 products;
    - `in_place`: `W[k, n]` unpacked, its panels read in place (a training
      step's weight gradients, whose W changes every step).

    `convert-recur-to-linalg` sets it on every product with a packed weight,
    `recur-pack-gemm-operands` on the backward GEMMs it puts in this form.
    The dialect checks that W's indexing map is the layout's.

    ```mlir
    #recur.panel_gemm<tile = 64, layout = packed>
    ```
  }];
  let parameters = (ins "int64_t":$tile,
                        EnumParameter<Recur_PanelLayout>:$layout);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // RECUR_IR_RECURLOWERINGCONFIGS_TD
