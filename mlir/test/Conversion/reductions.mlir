// convert-poptorch-to-linalg of the reductions family: reduce_min/prod/all,
// arg-reductions, scans and sorts.
// RUN: poptorch-opt %s -split-input-file --convert-poptorch-to-linalg | FileCheck %s

// Unsigned minimum: identity 255, unsigned compare on the signless bits.
// CHECK-LABEL: func.func @reduce_min_u8
// CHECK: %[[MAX:.*]] = arith.constant -1 : i8
// CHECK: linalg.fill ins(%[[MAX]] : i8)
// CHECK: linalg.reduce ins(%{{.*}} : tensor<2x3xi8>) outs(%{{.*}} : tensor<2xi8>) dimensions = [1]
// CHECK: arith.minui
func.func @reduce_min_u8(%x: tensor<2x3xui8>) -> tensor<2xui8> {
  %0 = poptorch.reduce_min %x {dims = array<i64: 1>} : tensor<2x3xui8> -> tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

// NaN-propagating minimum for floats.
// CHECK-LABEL: func.func @reduce_min_f32
// CHECK: arith.constant 0x7F800000 : f32
// CHECK: arith.minimumf
func.func @reduce_min_f32(%x: tensor<4xf32>) -> tensor<f32> {
  %0 = poptorch.reduce_min %x {dims = array<i64: 0>} : tensor<4xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @reduce_prod_i64
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: linalg.fill ins(%[[ONE]] : i64)
// CHECK: arith.muli
func.func @reduce_prod_i64(%x: tensor<2x3xi64>) -> tensor<3xi64> {
  %0 = poptorch.reduce_prod %x {dims = array<i64: 0>} : tensor<2x3xi64> -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// The product of booleans is their logical and.
// CHECK-LABEL: func.func @reduce_prod_i1
// CHECK: %[[T:.*]] = arith.constant true
// CHECK: linalg.fill ins(%[[T]] : i1)
// CHECK: arith.andi
func.func @reduce_prod_i1(%x: tensor<2x3xi1>) -> tensor<2xi1> {
  %0 = poptorch.reduce_prod %x {dims = array<i64: 1>} : tensor<2x3xi1> -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// all: x != 0 (NaN is true), reduced with andi, uint8 result for uint8 input.
// CHECK-LABEL: func.func @reduce_all_f32
// CHECK: arith.cmpf une
// CHECK: %[[T:.*]] = arith.constant true
// CHECK: linalg.fill ins(%[[T]] : i1)
// CHECK: arith.andi
func.func @reduce_all_f32(%x: tensor<2x3xf32>) -> tensor<2xi1> {
  %0 = poptorch.reduce_all %x {dims = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// max_dim: one generic, reduction along dim 1, value and index accumulators;
// a strictly greater value or the first NaN replaces them.
// CHECK-LABEL: func.func @max_dim
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xi64>)
// CHECK-DAG: arith.cmpf ogt
// CHECK-DAG: arith.cmpf uno
// CHECK: linalg.index 1
// CHECK: arith.select
// CHECK: arith.select
// CHECK: tensor.expand_shape
func.func @max_dim(%x: tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x1xi64>) {
  %0:2 = poptorch.max_dim %x {dim = 1 : i64, keepdim = true} : tensor<2x3xf32> -> tensor<2x1xf32>, tensor<2x1xi64>
  return %0#0, %0#1 : tensor<2x1xf32>, tensor<2x1xi64>
}

// -----

// argmin without dim: over the flattened input.
// CHECK-LABEL: func.func @argmin_all
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<2x3xi32> into tensor<6xi32>
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]}
// CHECK: arith.cmpi slt
func.func @argmin_all(%x: tensor<2x3xi32>) -> tensor<i64> {
  %0 = poptorch.argmin %x : tensor<2x3xi32> -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// cumsum: a pairwise generic (the result position i, the extra loop j), the
// f32 sum accumulated in f64 as PyTorch's CPU kernel.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @cumsum
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: %[[I:.*]] = linalg.index 1
// CHECK: %[[J:.*]] = linalg.index 2
// CHECK: arith.cmpi sle
// CHECK: arith.addf
// CHECK: arith.select
// CHECK: arith.truncf %{{.*}} : f64 to f32
func.func @cumsum(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = poptorch.cumsum %x {dim = 1 : i64} : tensor<2x5xf32> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// cummax takes the later index on ties (>=) and any NaN.
// CHECK-LABEL: func.func @cummax
// CHECK-DAG: arith.cmpf uno
// CHECK-DAG: arith.cmpf oge
func.func @cummax(%x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xi64>) {
  %0:2 = poptorch.cummax %x {dim = 0 : i64} : tensor<5xf32> -> tensor<5xf32>, tensor<5xi64>
  return %0#0, %0#1 : tensor<5xf32>, tensor<5xi64>
}

// -----

// sort (first 2 of 4, as topk): the ranks, then a gather by rank.
// CHECK-LABEL: func.func @sort_topk
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<3x4xf32>, tensor<3x4xf32>) outs(%{{.*}} : tensor<3x4xi64>)
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf oeq
// CHECK: arith.extui
// CHECK: arith.addi
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<3x4xf32>, tensor<3x4xi64>) outs(%{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<3x2xi64>)
// CHECK: arith.cmpi eq
func.func @sort_topk(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %0:2 = poptorch.sort %x {dim = 1 : i64, descending = true} : tensor<3x4xf32> -> tensor<3x2xf32>, tensor<3x2xi64>
  return %0#0, %0#1 : tensor<3x2xf32>, tensor<3x2xi64>
}
