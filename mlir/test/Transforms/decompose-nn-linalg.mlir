// poptorch-decompose of the nn-linalg (round 2) ops: composite nn and
// linear-algebra ops become matmul, elementwise, reduction and data-movement
// ops.
// RUN: poptorch-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(poptorch-decompose))' | FileCheck %s

// addbmm: the batch is folded into the contraction of one matmul.
// CHECK-LABEL: func.func @addbmm
// CHECK: poptorch.permute %{{.*}} : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
// CHECK: poptorch.reshape %{{.*}} : tensor<3x2x4xf32> -> tensor<3x8xf32>
// CHECK: poptorch.reshape %{{.*}} : tensor<2x4x5xf32> -> tensor<8x5xf32>
// CHECK: poptorch.matmul %{{.*}}, %{{.*}} : (tensor<3x8xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
// CHECK-NOT: poptorch.addbmm
func.func @addbmm(%s: tensor<3x5xf32>, %a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<3x5xf32> {
  %0 = poptorch.addbmm %s, %a, %b : (tensor<3x5xf32>, tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// glu: the halves of dim, in f32 for f16.
// CHECK-LABEL: func.func @glu
// CHECK: poptorch.cast %{{.*}} : tensor<2x6xf16> -> tensor<2x6xf32>
// CHECK-DAG: poptorch.slice %{{.*}} {dim = 1 : i64, start = 0 : i64} : tensor<2x6xf32> -> tensor<2x3xf32>
// CHECK-DAG: poptorch.slice %{{.*}} {dim = 1 : i64, start = 3 : i64} : tensor<2x6xf32> -> tensor<2x3xf32>
// CHECK: poptorch.sigmoid
// CHECK: poptorch.mul
// CHECK: poptorch.cast %{{.*}} : tensor<2x3xf32> -> tensor<2x3xf16>
func.func @glu(%x: tensor<2x6xf16>) -> tensor<2x3xf16> {
  %0 = poptorch.glu %x {dim = 1 : i64} : tensor<2x6xf16> -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

// CHECK-LABEL: func.func @trace
// CHECK: poptorch.diagonal %{{.*}} {dim1 = 0 : i64, dim2 = 1 : i64, offset = 0 : i64} : tensor<3x5xi64> -> tensor<3xi64>
// CHECK: poptorch.reduce_sum %{{.*}} {dims = array<i64: 0>} : tensor<3xi64> -> tensor<i64>
func.func @trace(%x: tensor<3x5xi64>) -> tensor<i64> {
  %0 = poptorch.trace %x : tensor<3x5xi64> -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// cross: a[i+1] b[i+2] - a[i+2] b[i+1] as rolls along dim.
// CHECK-LABEL: func.func @cross
// CHECK-COUNT-2: poptorch.roll %{{.*}} {dims = array<i64: 1>, shifts = array<i64: {{[12]}}>}
// CHECK: poptorch.mul
// CHECK-COUNT-2: poptorch.roll
// CHECK: poptorch.mul
// CHECK: poptorch.sub
func.func @cross(%a: tensor<4x3xi32>, %b: tensor<1x3xi32>) -> tensor<4x3xi32> {
  %0 = poptorch.cross %a, %b {dim = 1 : i64} : (tensor<4x3xi32>, tensor<1x3xi32>) -> tensor<4x3xi32>
  return %0 : tensor<4x3xi32>
}

// -----

// CHECK-LABEL: func.func @renorm
// (the vector_norm is decomposed further in the same pass)
// CHECK: poptorch.reduce_sum %{{.*}} {dims = array<i64: 1>, keepdim = true} : tensor<2x4xf32> -> tensor<2x1xf32>
// CHECK: poptorch.gt
// CHECK: poptorch.where
// CHECK: poptorch.mul %{{.*}} : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
func.func @renorm(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = poptorch.renorm %x {p = 3.0 : f64, dim = 0 : i64, maxnorm = 1.5 : f64} : tensor<2x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// max_unpool2d: a scatter into zero planes.
// CHECK-LABEL: func.func @max_unpool2d
// CHECK: poptorch.reshape %{{.*}} : tensor<1x2x2x2xf32> -> tensor<2x4xf32>
// CHECK: poptorch.scatter %{{.*}}[%{{.*}}] = %{{.*}} {dim = 1 : i64} : (tensor<2x16xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<2x16xf32>
// CHECK: poptorch.reshape %{{.*}} : tensor<2x16xf32> -> tensor<1x2x4x4xf32>
func.func @max_unpool2d(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32> {
  %0 = poptorch.max_unpool2d %x, %i : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// col2im: a zero column appended, a constant gather of columns per kernel
// position and output pixel, summed over the kernel positions.
// CHECK-LABEL: func.func @col2im
// CHECK: poptorch.reshape %{{.*}} : tensor<1x8x12xf32> -> tensor<1x2x4x12xf32>
// CHECK: poptorch.pad %{{.*}} value %{{.*}} {mode = "constant", pad = array<i64: 0, 1>} : (tensor<1x2x4x12xf32>, tensor<f32>) -> tensor<1x2x4x13xf32>
// CHECK: poptorch.index %{{.*}}[%{{.*}}, %{{.*}}] {dims = array<i64: 2, 3>} : (tensor<1x2x4x13xf32>, tensor<4x1xi64>, tensor<4x20xi64>) -> tensor<1x2x4x20xf32>
// CHECK: poptorch.reduce_sum %{{.*}} {dims = array<i64: 2>} : tensor<1x2x4x20xf32> -> tensor<1x2x20xf32>
// CHECK: poptorch.reshape %{{.*}} : tensor<1x2x20xf32> -> tensor<1x2x4x5xf32>
func.func @col2im(%x: tensor<1x8x12xf32>) -> tensor<1x2x4x5xf32> {
  %0 = poptorch.col2im %x {kernel_size = array<i64: 2, 2>, dilation = array<i64: 1, 1>, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : tensor<1x8x12xf32> -> tensor<1x2x4x5xf32>
  return %0 : tensor<1x2x4x5xf32>
}

// -----

// CHECK-LABEL: func.func @cdist
// CHECK-DAG: poptorch.reshape %{{.*}} : tensor<2x3x4xf32> -> tensor<2x3x1x4xf32>
// CHECK-DAG: poptorch.reshape %{{.*}} : tensor<2x5x4xf32> -> tensor<2x1x5x4xf32>
// CHECK: poptorch.sub {{.*}} -> tensor<2x3x5x4xf32>
// CHECK: poptorch.abs
// CHECK: poptorch.reduce_sum %{{.*}} {dims = array<i64: 3>} : tensor<2x3x5x4xf32> -> tensor<2x3x5xf32>
func.func @cdist(%a: tensor<2x3x4xf32>, %b: tensor<2x5x4xf32>) -> tensor<2x3x5xf32> {
  %0 = poptorch.cdist %a, %b {p = 1.0 : f64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// pdist: rows i < j gathered by constant indices.
// CHECK-LABEL: func.func @pdist
// CHECK-DAG: poptorch.constant dense<[0, 0, 1]> : tensor<3xi64>
// CHECK-DAG: poptorch.constant dense<[1, 2, 2]> : tensor<3xi64>
// CHECK: poptorch.embedding
// CHECK: poptorch.embedding
// CHECK: poptorch.sub
// CHECK: poptorch.reduce_sum %{{.*}} {dims = array<i64: 1>} : tensor<3x4xf32> -> tensor<3xf32>
// CHECK: poptorch.sqrt
func.func @pdist(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %0 = poptorch.pdist %x : tensor<3x4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// embedding_bag (mean): bag ids from the offsets, a scatter-sum of the rows
// and of the counts, divided.
// CHECK-LABEL: func.func @embedding_bag
// CHECK: poptorch.le %{{.*}} : (tensor<1x2xi64>, tensor<5x1xi64>) -> tensor<5x2xi1>
// CHECK: poptorch.reduce_sum %{{.*}} {dims = array<i64: 1>} : tensor<5x2xi64> -> tensor<5xi64>
// CHECK: poptorch.embedding %{{.*}} : (tensor<10x3xf32>, tensor<5xi64>) -> tensor<5x3xf32>
// CHECK: poptorch.scatter %{{.*}} {dim = 0 : i64, reduce = "sum"} : (tensor<2xf32>, tensor<5xi64>, tensor<5xf32>) -> tensor<2xf32>
// CHECK: poptorch.scatter %{{.*}} {dim = 0 : i64, reduce = "sum"} : (tensor<2x3xf32>, tensor<5x3xi64>, tensor<5x3xf32>) -> tensor<2x3xf32>
// CHECK: poptorch.div
func.func @embedding_bag(%w: tensor<10x3xf32>, %i: tensor<5xi64>, %o: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = poptorch.embedding_bag %w, %i, %o {mode = 1 : i64} : (tensor<10x3xf32>, tensor<5xi64>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @weight_norm
// CHECK: poptorch.reduce_sum %{{.*}} {dims = array<i64: 1, 2>, keepdim = true} : tensor<3x4x5xf32> -> tensor<3x1x1xf32>
// CHECK: poptorch.div
// CHECK: poptorch.mul
func.func @weight_norm(%v: tensor<3x4x5xf32>, %g: tensor<3x1x1xf32>) -> (tensor<3x4x5xf32>, tensor<3x1x1xf32>) {
  %0:2 = poptorch.weight_norm %v, %g {dim = 0 : i64} : (tensor<3x4x5xf32>, tensor<3x1x1xf32>) -> (tensor<3x4x5xf32>, tensor<3x1x1xf32>)
  return %0#0, %0#1 : tensor<3x4x5xf32>, tensor<3x1x1xf32>
}

// -----

// grid_sampler (bilinear, zeros): four corners, each a gather at a flat
// index into the input plane, weighted and masked where outside.
// CHECK-LABEL: func.func @grid_sampler
// CHECK: poptorch.floor
// CHECK: poptorch.floor
// CHECK-COUNT-4: poptorch.gather %{{.*}}, %{{.*}} {dim = 2 : i64} : (tensor<1x2x20xf32>, tensor<1x2x6xi64>) -> tensor<1x2x6xf32>
// CHECK-NOT: poptorch.grid_sampler
func.func @grid_sampler(%x: tensor<1x2x4x5xf32>, %g: tensor<1x2x3x2xf32>) -> tensor<1x2x2x3xf32> {
  %0 = poptorch.grid_sampler %x, %g {interpolation_mode = 0 : i64, padding_mode = 0 : i64, align_corners = false} : (tensor<1x2x4x5xf32>, tensor<1x2x3x2xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----

// Antialiased bilinear: the last dim, then the one before, each a matmul with
// constant weights (a dim whose weights are the identity is left alone).
// CHECK-LABEL: func.func @upsample_linear_aa
// CHECK: poptorch.matmul %{{.*}}, %{{.*}} : (tensor<1x2x4x8xf32>, tensor<8x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NOT: poptorch.matmul
// CHECK-NOT: poptorch.upsample
func.func @upsample_linear_aa(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32> {
  %0 = poptorch.upsample %x {mode = "linear_aa"} : tensor<1x2x4x8xf32> -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}
