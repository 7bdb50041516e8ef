// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-fusion="fusion=none" | FileCheck %s --check-prefix=NONE
// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-fusion="fusion=hoist" | FileCheck %s --check-prefix=HOIST
// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-fusion="fusion=cell" | FileCheck %s --check-prefix=CELL
// RUN: recur-gen lstm-lm --vocab 11 --embed 4 --hidden 6 --layers 2 \
// RUN:   | recur-opt --recur-fusion | FileCheck %s --check-prefix=CELL

// Each fusion level of the reference LM's shape, as recur-opt shows it.

// NONE-LABEL: func.func @forward
// NONE-COUNT-2: recur.lstm %
// NONE-NOT: recur.lstm_recurrence

// HOIST-LABEL: func.func @forward
// HOIST: %[[X:.*]] = recur.embedding
// HOIST: %[[B0:.*]] = arith.addf
// HOIST: %[[G0:.*]] = recur.linear %[[X]], %{{.*}} bias(%[[B0]]) : {{.*}} -> tensor<?x?x24xf32>
// HOIST: %[[Y0:.*]], %{{.*}}, %{{.*}} = recur.lstm_recurrence %[[G0]], %{{.*}} : (tensor<?x?x24xf32>, tensor<24x6xf32>)
// HOIST: %[[B1:.*]] = arith.addf
// HOIST: %[[G1:.*]] = recur.linear %[[Y0]], %{{.*}} bias(%[[B1]])
// HOIST: %[[Y1:.*]], %{{.*}}, %{{.*}} = recur.lstm_recurrence %[[G1]], %{{.*}} :
// HOIST: recur.linear %[[Y1]]
// HOIST-NOT: recur.lstm %
// HOIST-NOT: cell<fused>

// CELL-LABEL: func.func @forward
// CELL-COUNT-2: recur.lstm_recurrence {{.*}} cell<fused> :
// CELL-NOT: recur.lstm %
