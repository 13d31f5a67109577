// RUN: poptorch-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(poptorch-distinct-results))' | FileCheck %s

// CHECK-LABEL: func.func @repeated
// CHECK: %[[V:.*]] = poptorch.add
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3xf32>
// CHECK: %[[C:.*]] = linalg.copy ins(%[[V]] : tensor<3xf32>) outs(%[[E]] : tensor<3xf32>)
// CHECK: return %[[V]], %[[C]], %arg0
func.func @repeated(%arg0: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0 = poptorch.add %arg0, %arg0 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %0, %arg0 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @distinct
// CHECK-NOT: linalg.copy
// CHECK: return %arg0, %arg1
func.func @distinct(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  return %arg0, %arg1 : tensor<3xf32>, tensor<3xf32>
}
