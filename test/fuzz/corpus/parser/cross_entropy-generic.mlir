"builtin.module"() ({
  "func.func"() <{function_type = (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> (tensor<f32>, tensor<f32>, tensor<?x?xf32>), sym_name = "cross_entropy"}> ({
  ^bb0(%arg0: tensor<?x?x10001xf32>, %arg1: tensor<?x?xi64>):
    %0 = "recur.cross_entropy"(%arg0, %arg1) <{reduction = #recur.reduction<mean>}> : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<f32>
    %1 = "recur.cross_entropy"(%arg0, %arg1) <{reduction = #recur.reduction<sum>}> : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<f32>
    %2 = "recur.cross_entropy"(%arg0, %arg1) <{reduction = #recur.reduction<none>}> : (tensor<?x?x10001xf32>, tensor<?x?xi64>) -> tensor<?x?xf32>
    "func.return"(%0, %1, %2) : (tensor<f32>, tensor<f32>, tensor<?x?xf32>) -> ()
  }) : () -> ()
}) : () -> ()

