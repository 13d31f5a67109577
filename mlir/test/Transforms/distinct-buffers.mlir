// RUN: poptorch-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(poptorch-distinct-buffers))' | FileCheck %s

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

// -----

// Two pads share one CSE'd zero fill: the second insert gets its own fill,
// and the producer it inserts is redirected to a slice of that fill, so that
// bufferization needs no copy.
// CHECK-LABEL: func.func @shared_fill
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<6xf32>
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<6xf32>
// CHECK: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<6xf32>)
// CHECK: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<6xf32>)
// CHECK-DAG: %[[S1:.*]] = tensor.extract_slice %[[F1]][1] [4] [1]
// CHECK-DAG: %[[S2:.*]] = tensor.extract_slice %[[F2]][1] [4] [1]
// CHECK: %[[A:.*]] = linalg.copy ins(%arg0 : tensor<4xf32>) outs(%[[S1]] : tensor<4xf32>)
// CHECK: tensor.insert_slice %[[A]] into %[[F1]][1] [4] [1]
// CHECK: %[[B:.*]] = linalg.copy ins(%arg1 : tensor<4xf32>) outs(%[[S2]] : tensor<4xf32>)
// CHECK: tensor.insert_slice %[[B]] into %[[F2]][1] [4] [1]
func.func @shared_fill(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<6xf32>, tensor<6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %s = tensor.extract_slice %fill[1] [4] [1] : tensor<6xf32> to tensor<4xf32>
  %a = linalg.copy ins(%arg0 : tensor<4xf32>) outs(%s : tensor<4xf32>) -> tensor<4xf32>
  %pa = tensor.insert_slice %a into %fill[1] [4] [1] : tensor<4xf32> into tensor<6xf32>
  %b = linalg.copy ins(%arg1 : tensor<4xf32>) outs(%s : tensor<4xf32>) -> tensor<4xf32>
  %pb = tensor.insert_slice %b into %fill[1] [4] [1] : tensor<4xf32> into tensor<6xf32>
  return %pa, %pb : tensor<6xf32>, tensor<6xf32>
}

// -----

// A fill that two ops accumulate into: the second gets its own.
// CHECK-LABEL: func.func @shared_accumulator
// CHECK-COUNT-2: linalg.fill
// CHECK-NOT: linalg.fill
func.func @shared_accumulator(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%fill : tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = linalg.matmul ins(%b, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%fill : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Values computed into a tensor.empty and then inserted into a zero fill (a
// fused elementwise op writing a channels-last convolution input into its
// padded tensor) are computed into the slice of the fill instead: the first
// into the fill itself, the second into its own clone.
// CHECK-LABEL: func.func @computed_into_empty
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<6xf32>
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<6xf32>
// CHECK: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<6xf32>)
// CHECK: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<6xf32>)
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[F1]][1] [4] [1]
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4xf32>) outs(%[[S1]] : tensor<4xf32>)
// CHECK: tensor.insert_slice %[[A]] into %[[F1]][1] [4] [1]
// CHECK: %[[S2:.*]] = tensor.extract_slice %[[F2]][1] [4] [1]
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<4xf32>) outs(%[[S2]] : tensor<4xf32>)
// CHECK: tensor.insert_slice %[[B]] into %[[F2]][1] [4] [1]
#id = affine_map<(d0) -> (d0)>
func.func @computed_into_empty(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> (tensor<6xf32>, tensor<6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %t = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%arg0 : tensor<4xf32>) outs(%t : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %pa = tensor.insert_slice %a into %fill[1] [4] [1] : tensor<4xf32> into tensor<6xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%arg1 : tensor<4xf32>) outs(%t : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %pb = tensor.insert_slice %b into %fill[1] [4] [1] : tensor<4xf32> into tensor<6xf32>
  return %pa, %pb : tensor<6xf32>, tensor<6xf32>
}

// -----

// The value reaches the insert through a collapse (channels computed in
// blocks of 4, (1, 2, 4, 5, 5), inserted as (1, 8, 5, 5) into a padded
// tensor): it is computed into the fill's slice expanded back to its shape,
// and read by another op too (a depthwise convolution's centre tap), which
// then reads it there.
// CHECK-LABEL: func.func @computed_into_empty_through_collapse
// CHECK: %[[F:.*]] = linalg.fill {{.*}} -> tensor<1x8x7x7xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[F]][0, 0, 1, 1] [1, 8, 5, 5] [1, 1, 1, 1]
// CHECK: %[[X:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0], [1, 2], [3], [4]] output_shape [1, 2, 4, 5, 5]
// CHECK: %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<1x2x4x5x5xbf16>) outs(%[[X]] : tensor<1x2x4x5x5xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[A]]
// CHECK: tensor.insert_slice %[[C]] into %[[F]][0, 0, 1, 1] [1, 8, 5, 5] [1, 1, 1, 1]
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @computed_into_empty_through_collapse(%arg0: tensor<1x2x4x5x5xbf16>) -> (tensor<1x8x7x7xf32>, tensor<1x8x5x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x7x7xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x7x7xf32>) -> tensor<1x8x7x7xf32>
  %t = tensor.empty() : tensor<1x2x4x5x5xf32>
  %a = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x2x4x5x5xbf16>) outs(%t : tensor<1x2x4x5x5xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %r = arith.extf %x : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x5x5xf32>
  %c = tensor.collapse_shape %a [[0], [1, 2], [3], [4]] : tensor<1x2x4x5x5xf32> into tensor<1x8x5x5xf32>
  %p = tensor.insert_slice %c into %fill[0, 0, 1, 1] [1, 8, 5, 5] [1, 1, 1, 1] : tensor<1x8x5x5xf32> into tensor<1x8x7x7xf32>
  return %p, %c : tensor<1x8x7x7xf32>, tensor<1x8x5x5xf32>
}
