// RUN: poptorch-opt %s -split-input-file -pass-pipeline='builtin.module(poptorch-strided-reads)' | FileCheck %s

// A stride-2 row read becomes one contiguous load of the 7 elements it spans
// and a shuffle of the even lanes.
// CHECK-LABEL: func.func @stride2
// CHECK: %[[BASE:.*]], %[[OFF:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%{{.*}}], strides: [1]
// CHECK: %[[V:.*]] = vector.load %[[FLAT]][%{{.*}}] : memref<?xf32>, vector<7xf32>
// CHECK: %[[S:.*]] = vector.shuffle %[[V]], %[[V]] [0, 2, 4, 6] : vector<7xf32>, vector<7xf32>
// CHECK: vector.shape_cast %[[S]] : vector<4xf32> to vector<1x4xf32>
// CHECK-NOT: vector.transfer_read
func.func @stride2(%arg0: memref<4x4xf32, strided<[16, 2], offset: 1>>, %i: index) -> vector<1x4xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %arg0[%i, %c0], %pad {in_bounds = [true, true]} : memref<4x4xf32, strided<[16, 2], offset: 1>>, vector<1x4xf32>
  return %v : vector<1x4xf32>
}

// -----

// Unit stride, a read that may leave the buffer and a transposed read are
// left to the usual lowering.
// CHECK-LABEL: func.func @untouched
// CHECK-COUNT-3: vector.transfer_read
// CHECK-NOT: vector.shuffle
func.func @untouched(%a: memref<4x4xf32>, %b: memref<4x4xf32, strided<[16, 2]>>, %c: memref<4x4xf32, strided<[16, 2]>>, %i: index) -> (vector<1x4xf32>, vector<1x4xf32>, vector<4x1xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %0 = vector.transfer_read %a[%c0, %c0], %pad {in_bounds = [true, true]} : memref<4x4xf32>, vector<1x4xf32>
  %1 = vector.transfer_read %b[%c0, %i], %pad {in_bounds = [true, false]} : memref<4x4xf32, strided<[16, 2]>>, vector<1x4xf32>
  %2 = vector.transfer_read %c[%c0, %c0], %pad {in_bounds = [true, true], permutation_map = affine_map<(d0, d1) -> (d1, d0)>} : memref<4x4xf32, strided<[16, 2]>>, vector<4x1xf32>
  return %0, %1, %2 : vector<1x4xf32>, vector<1x4xf32>, vector<4x1xf32>
}

// -----

// A 0-d vector read of a strided 1-D buffer (x[::2][1].sin()) is a scalar
// load: the vector lowering has no 0-d read of a strided memref.
// CHECK-LABEL: func.func @zero_d
// CHECK: %[[S:.*]] = memref.load %arg0[%{{.*}}] : memref<4xf32, strided<[2]>>
// CHECK: vector.broadcast %[[S]] : f32 to vector<f32>
// CHECK-NOT: vector.transfer_read
func.func @zero_d(%arg0: memref<4xf32, strided<[2]>>) -> vector<f32> {
  %c1 = arith.constant 1 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %arg0[%c1], %pad : memref<4xf32, strided<[2]>>, vector<f32>
  return %v : vector<f32>
}

// -----

// A read that broadcasts one element of a strided buffer (x[0, 2::3] - y with y
// of shape (1, 5)) is a scalar load and a broadcast: convert-vector-to-scf
// would make a 0-d read of it, which the vector lowering cannot lower.
// CHECK-LABEL: func.func @broadcast_one_element
// CHECK: %[[S:.*]] = memref.load %arg0[%{{.*}}] : memref<1xf32, strided<[3], offset: 2>>
// CHECK: vector.broadcast %[[S]] : f32 to vector<1x5xf32>
// CHECK-NOT: vector.transfer_read
func.func @broadcast_one_element(%arg0: memref<1xf32, strided<[3], offset: 2>>) -> vector<1x5xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %arg0[%c0], %pad {in_bounds = [true, true], permutation_map = affine_map<(d0) -> (0, 0)>} : memref<1xf32, strided<[3], offset: 2>>, vector<1x5xf32>
  return %v : vector<1x5xf32>
}

// -----

// A gather from a stepped slice (x[26::3].gather(-1, idx)) gathers from the flat buffer at
// the indices times the stride: the vector lowering has no gather from a strided memref.
// CHECK-LABEL: func.func @strided_gather
// CHECK-DAG: %[[S:.*]] = arith.constant dense<3> : vector<3xindex>
// CHECK-DAG: %[[START:.*]] = arith.constant 125 : index
// CHECK: %[[BASE:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %arg0
// CHECK: %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%{{.*}}], strides: [1]
// CHECK: %[[I:.*]] = arith.muli %arg1, %[[S]] : vector<3xindex>
// CHECK: vector.gather %[[FLAT]][%[[START]]] [%[[I]]]
func.func @strided_gather(%arg0: memref<3xf32, strided<[3], offset: 125>>, %idx: vector<3xindex>) -> vector<3xf32> {
  %c0 = arith.constant 0 : index
  %mask = arith.constant dense<true> : vector<3xi1>
  %pass = arith.constant dense<0.0> : vector<3xf32>
  %v = vector.gather %arg0[%c0] [%idx], %mask, %pass : memref<3xf32, strided<[3], offset: 125>>, vector<3xindex>, vector<3xi1>, vector<3xf32> into vector<3xf32>
  return %v : vector<3xf32>
}

// -----

// A transfer whose vector ends in unit dims is one without them on a
// rank-reduced view: convert-vector-to-scf unrolled it into a scalar access
// per element.
// CHECK-LABEL: func.func @trailing_unit_write
// CHECK: %[[V:.*]] = memref.subview %arg0[0, 0, 0] [8, 96, 1] [1, 1, 1] : memref<8x96x1xf32> to memref<8x96xf32, strided<[96, 1]>>
// CHECK: vector.transfer_write %{{.*}}, %[[V]]{{.*}} : vector<1x64xf32>, memref<8x96xf32, strided<[96, 1]>>
func.func @trailing_unit_write(%arg0: memref<8x96x1xf32>, %v: vector<1x64x1xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  vector.transfer_write %v, %arg0[%i, %c0, %c0] {in_bounds = [true, true, true]} : vector<1x64x1xf32>, memref<8x96x1xf32>
  return
}

// -----

// A transfer of unit dims only keeps them: dropped, it became a 0-d transfer
// that convert-vector-to-scf left for the LLVM conversion, which failed (HF
// EfficientNet).
// CHECK-LABEL: func.func @all_unit_write
// CHECK-NOT: memref.subview
// CHECK: vector.transfer_write %{{.*}} : vector<1x1xf32>, memref<320x1xf32>
func.func @all_unit_write(%arg0: memref<320x1xf32>, %v: vector<1x1xf32>, %i: index) {
  %c0 = arith.constant 0 : index
  vector.transfer_write %v, %arg0[%i, %c0] {in_bounds = [true, true]} : vector<1x1xf32>, memref<320x1xf32>
  return
}
