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

#endif // RECUR_IR_RECURLOWERINGCONFIGS_TD
