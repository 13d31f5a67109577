// convert-poptorch-to-linalg: gathers (flip, pad, index, ...), scatters and
// resampling of the data-movement family.
// RUN: poptorch-opt %s -split-input-file --convert-poptorch-to-linalg | FileCheck %s

// A gather: one linalg.generic over the result reading the input at the
// reversed position.
// CHECK-LABEL: func.func @flip
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: %[[J:.*]] = arith.subi %{{.*}}, %[[I]] : index
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %[[J]]] : tensor<2x3xui8>
func.func @flip(%x: tensor<2x3xui8>) -> tensor<2x3xui8> {
  %0 = poptorch.flip %x {dims = array<i64: 1>} : tensor<2x3xui8> -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

// Constant padding is a fill of the value with the input copied into its
// interior, the form the convolution lowering gives its own padding.
// CHECK-LABEL: func.func @pad_constant
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[V:.*]]: tensor<f32>)
// CHECK: %[[S:.*]] = tensor.extract %[[V]][] : tensor<f32>
// CHECK: %[[F:.*]] = linalg.fill ins(%[[S]] : f32) outs(%{{.*}} : tensor<2x6xf32>)
// CHECK: %[[I:.*]] = tensor.extract_slice %[[F]][0, 1] [2, 3] [1, 1]
// CHECK: %[[C:.*]] = linalg.copy ins(%[[X]] : tensor<2x3xf32>) outs(%[[I]] : tensor<2x3xf32>)
// CHECK: tensor.insert_slice %[[C]] into %[[F]][0, 1] [2, 3] [1, 1]
func.func @pad_constant(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<2x6xf32> {
  %0 = poptorch.pad %x value %v {pad = array<i64: 1, 2>, mode = "constant"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// Constant padding that crops (or of booleans) is a gather that selects the
// value outside the input.
// CHECK-LABEL: func.func @pad_constant_cropping
// CHECK: linalg.generic
// CHECK: tensor.extract %{{.*}} : tensor<2x3xf32>
// CHECK: %[[V:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[V]] : f32
func.func @pad_constant_cropping(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<2x4xf32> {
  %0 = poptorch.pad %x value %v {pad = array<i64: -1, 2>, mode = "constant"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Advanced indexing reads the index tensors through broadcast maps and
// wraps/clamps each index.
// CHECK-LABEL: func.func @index
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2xi64>, tensor<2xi64>)
// CHECK: arith.minsi
// CHECK: tensor.extract %{{.*}} : tensor<3x4x5xf32>
func.func @index(%x: tensor<3x4x5xf32>, %i: tensor<2xi64>, %j: tensor<2xi64>) -> tensor<2x4xf32> {
  %0 = poptorch.index %x[%i, %j] {dims = array<i64: 0, 2>} : (tensor<3x4x5xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// A scatter is a sequential loop nest carrying the result tensor.
// CHECK-LABEL: func.func @scatter_sum
// CHECK: scf.for
// CHECK: scf.for
// CHECK: tensor.extract
// CHECK: arith.addf
// CHECK: tensor.insert
func.func @scatter_sum(%x: tensor<3x4xf32>, %i: tensor<2x4xi64>, %s: tensor<2x4xf32>) -> tensor<3x4xf32> {
  %0 = poptorch.scatter %x[%i] = %s {dim = 0 : i64, reduce = "sum"} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Bilinear interpolation: two taps per spatial dim, summed in f32 for f16.
// CHECK-LABEL: func.func @bilinear_f16
// CHECK: linalg.generic
// CHECK-COUNT-4: tensor.extract %{{.*}} : tensor<1x1x2x2xf16>
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @bilinear_f16(%x: tensor<1x1x2x2xf16>) -> tensor<1x1x4x4xf16> {
  %0 = poptorch.upsample %x {mode = "linear", align_corners = false} : tensor<1x1x2x2xf16> -> tensor<1x1x4x4xf16>
  return %0 : tensor<1x1x4x4xf16>
}

// -----

// A strided update of a view (x[1::2] = y) is one strided tensor.insert_slice.
// CHECK-LABEL: func.func @slice_insert
// CHECK: tensor.insert_slice %arg1 into %arg0[1, 0] [4, 3] [2, 1] : tensor<4x3xf32> into tensor<8x3xf32>
func.func @slice_insert(%x: tensor<8x3xf32>, %y: tensor<4x3xf32>) -> tensor<8x3xf32> {
  %0 = poptorch.slice_insert %y into %x {dim = 0 : i64, start = 1 : i64, step = 2 : i64} : tensor<4x3xf32> into tensor<8x3xf32> -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}
