// convert-poptorch-to-linalg for the search / statistics / special ops of
// round 2: searchsorted, isin and histc fold over a second operand in one
// generic with a trailing reduction loop; the orthogonal polynomials run
// their recurrence in an scf.while bounded by the degree; frexp reads the
// bits in f64.
// RUN: poptorch-opt %s -split-input-file --convert-poptorch-to-linalg | FileCheck %s

// A batched sorted sequence: the row is picked by the leading loop, the
// entries by the reduction loop; `right` compares with ule.
// CHECK-DAG: #[[SORTED:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[VALUES:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @searchsorted
// CHECK: linalg.generic {indexing_maps = [#[[SORTED]], #[[VALUES]], #[[VALUES]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: arith.cmpf ule
// CHECK: arith.extui %{{.*}} : i1 to i64
// CHECK: arith.addi
func.func @searchsorted(%s: tensor<2x5xf32>, %v: tensor<2x3xf32>) -> tensor<2x3xi64> {
  %0 = poptorch.searchsorted %s, %v {right = true} : (tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// 1-D sorted sequence, int32 result, side = "left": signed integers use slt.
// CHECK-LABEL: func.func @bucketize
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.cmpi slt
// CHECK: arith.extui %{{.*}} : i1 to i32
func.func @bucketize(%s: tensor<6xi16>, %v: tensor<4xi16>) -> tensor<4xi32> {
  %0 = poptorch.searchsorted %s, %v {side = "left"} : (tensor<6xi16>, tensor<4xi16>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// The test elements are flattened; invert folds with `and` over `une`.
// CHECK-LABEL: func.func @isin
// CHECK: tensor.collapse_shape
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.cmpf une
// CHECK: arith.andi
func.func @isin(%e: tensor<2x3xf32>, %t: tensor<2x2xf32>) -> tensor<2x3xi1> {
  %0 = poptorch.isin %e, %t {invert = true} : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// Static range: the bin of each element is compared with the bin loop.
// CHECK-LABEL: func.func @histc
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.fptosi
// CHECK: arith.minsi
// CHECK: linalg.index 0
// CHECK: arith.addf
func.func @histc(%x: tensor<3x4xf32>) -> tensor<5xf32> {
  %0 = poptorch.histc %x {bins = 5 : i64, min = -2.0 : f64, max = 2.0 : f64} : tensor<3x4xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// min == max: the data's range first (two reductions).
// CHECK-LABEL: func.func @histc_data_range
// CHECK: arith.minimumf
// CHECK: arith.maximumf
// CHECK: arith.fptosi
func.func @histc_data_range(%x: tensor<7xf64>) -> tensor<3xf64> {
  %0 = poptorch.histc %x {bins = 3 : i64} : tensor<7xf64> -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

// CHECK-LABEL: func.func @chebyshev
// CHECK: linalg.generic
// CHECK: math.acos
// CHECK: math.cos
// CHECK: scf.while
// CHECK: scf.condition
// CHECK: scf.yield
func.func @chebyshev(%x: tensor<4xf32>, %n: tensor<4xf32>) -> tensor<4xf32> {
  %0 = poptorch.chebyshev_polynomial_t %x, %n : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @frexp
// CHECK: arith.bitcast %{{.*}} : f64 to i64
// CHECK: arith.bitcast %{{.*}} : i64 to f64
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.trunci %{{.*}} : i64 to i32
func.func @frexp(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %m, %e = poptorch.frexp %x : tensor<4xf32> -> tensor<4xf32>, tensor<4xi32>
  return %m, %e : tensor<4xf32>, tensor<4xi32>
}
