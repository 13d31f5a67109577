// poptorch-tile-and-vectorize on several cores: ops at or above
// min-parallel-cost get one scf.forall over whole tiles of their outermost
// evenly divided parallel loop, with the register tiling inside; cheaper ops
// and loops whose tiles would not divide stay sequential.
// RUN: poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize=min-parallel-cost=1000 --canonicalize --cse | FileCheck %s
// RUN: poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize=min-parallel-cost=-1 | FileCheck %s --check-prefix=SEQ
// RUN: poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize=min-parallel-cost=1000 --poptorch-stage-bufferize --poptorch-stage-to-llvm | FileCheck %s --check-prefix=LLVM
// A module whose ops add up to less than min-program-parallel-cost keeps
// every op on one thread, whatever each op costs.
// RUN: poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize="min-parallel-cost=1000 min-program-parallel-cost=1000000000" | FileCheck %s --check-prefix=PROG
// PROG-NOT: scf.forall
// An op in a loop of the program counts once per iteration.
// RUN: poptorch-opt %s -split-input-file --poptorch-tile-and-vectorize="min-parallel-cost=1000 min-program-parallel-cost=20000" | FileCheck %s --check-prefix=LOOP

// Rows are distributed in 4 chunks of 16 (two register tiles each, so that
// a task reuses each column block of B across its rows); the fill, the
// matmul and its bias + relu consumer all run inside the forall, and the
// 8x32 accumulator loop is unchanged inside.
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK-NOT: linalg.
// CHECK: scf.forall (%[[I:.*]]) = (0) to (64) step (16) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<64x64xf32>)
// CHECK: scf.for {{.*}} step %c32
// CHECK: scf.for {{.*}} step %c8 iter_args(%{{.*}} = %{{.*}}) -> (vector<8x32xf32>)
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: arith.maximumf {{.*}} : vector<8x32xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[I]], 0] [16, 64] [1, 1]
// SEQ-LABEL: func.func @matmul_bias_relu
// SEQ-NOT: scf.forall
// LLVM-LABEL: llvm.func @matmul_bias_relu
// LLVM-NOT: scf.
// LLVM: llvm.func @__kernel(
// LLVM: %[[BODY:.*]] = llvm.mlir.addressof @__kernel_parallel
// LLVM: llvm.call @poptorch_parallel_for(%[[BODY]], %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// LLVM: llvm.func internal @__kernel_parallel(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64)
// LLVM-NOT: llvm.call @mlirAsyncRuntime
func.func @matmul_bias_relu(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %bias: tensor<64xf32>) -> tensor<64x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias, %m : tensor<64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.maximumf %s, %cst : f32
    linalg.yield %t : f32
  } -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// A long reduction (3072) with an unpacked B (rows 512 bytes apart) runs in
// blocks of 768 inside each column task: the accumulator tile goes back to
// memory between blocks, so the fill runs before the blocks and the bias +
// relu consumer after them, each in its own vectorized loop.
// CHECK-LABEL: func.func @long_reduction
// CHECK-NOT: linalg.
// CHECK: scf.forall (%{{.*}}) = (0) to (128) step (32)
// CHECK: vector.transfer_write %{{.*}} : vector<1x32xf32>, tensor<64x32xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c3072 step %c768 iter_args(%{{.*}}) -> (tensor<64x32xf32>)
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c8
// CHECK: scf.for %{{.*}} = %c0 to %c768 step %c8 iter_args(%{{.*}}) -> (vector<8x32xf32>)
// CHECK: vector.fma {{.*}} : vector<32xf32>
// CHECK: arith.maximumf {{.*}} : vector<1x32xf32>
// CHECK: scf.forall.in_parallel
func.func @long_reduction(%a: tensor<64x3072xf32>, %b: tensor<3072x128xf32>, %bias: tensor<128xf32>) -> tensor<64x128xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<64x3072xf32>, tensor<3072x128xf32>) outs(%f : tensor<64x128xf32>) -> tensor<64x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%bias, %m : tensor<128xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.maximumf %s, %cst : f32
    linalg.yield %t : f32
  } -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// -----

// One row (m = 1): the columns are distributed, in blocks of the 128-wide
// register tile.
// CHECK-LABEL: func.func @matvec
// CHECK: scf.forall (%{{.*}}) = (0) to (768) step (128)
// CHECK: vector.fma {{.*}} : vector<128xf32>
func.func @matvec(%a: tensor<1x64xf32>, %b: tensor<64x768xf32>) -> tensor<1x768xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x768xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x768xf32>) -> tensor<1x768xf32>
  %m = linalg.matmul ins(%a, %b : tensor<1x64xf32>, tensor<64x768xf32>) outs(%f : tensor<1x768xf32>) -> tensor<1x768xf32>
  return %m : tensor<1x768xf32>
}

// -----

// batch_matmul: the batch loop is the outermost with enough trips.
// CHECK-LABEL: func.func @batch_matmul
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK: -> (vector<1x8x32xf32>)
func.func @batch_matmul(%a: tensor<8x16x32xf32>, %b: tensor<8x32x64xf32>) -> tensor<8x16x64xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<8x16x32xf32>, tensor<8x32x64xf32>) outs(%f : tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return %m : tensor<8x16x64xf32>
}

// -----

// Neither 17 rows nor 65 columns divide into register tiles: sequential.
// CHECK-LABEL: func.func @matmul_odd
// CHECK-NOT: scf.forall
// CHECK: scf.for {{.*}} = %c0 to %c16 step %c8
func.func @matmul_odd(%a: tensor<17x33xf32>, %b: tensor<33x65xf32>) -> tensor<17x65xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<17x65xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<17x65xf32>) -> tensor<17x65xf32>
  %m = linalg.matmul ins(%a, %b : tensor<17x33xf32>, tensor<33x65xf32>) outs(%f : tensor<17x65xf32>) -> tensor<17x65xf32>
  return %m : tensor<17x65xf32>
}

// -----

// Columns that the register tile does not divide, with enough whole tiles (a
// vocabulary head): the whole tiles run in parallel by columns, each task
// reading its own columns of B, and the 16 columns left over on their own;
// the rows are not split (each task would read all of B).
// CHECK-LABEL: func.func @wide_odd_columns
// CHECK: scf.forall (%{{.*}}) = (0) to (1024) step (32)
// CHECK: scf.for {{.*}} = %c0 to %c16 step %c8
// CHECK: scf.forall (%{{.*}}) = (0) to (16) step (8)
func.func @wide_odd_columns(%a: tensor<16x64xf32>, %b: tensor<64x1040xf32>) -> tensor<16x1040xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x1040xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<16x1040xf32>) -> tensor<16x1040xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x1040xf32>) outs(%f : tensor<16x1040xf32>) -> tensor<16x1040xf32>
  return %m : tensor<16x1040xf32>
}

// -----

// Elementwise: rows are distributed, each row one 64-lane vector.
// CHECK-LABEL: func.func @elementwise
// CHECK: scf.forall (%{{.*}}) in (32)
// CHECK: math.exp {{.*}} : vector<1x64xf32>
// CHECK-NOT: scf.for {{.*}} iter_args
func.func @elementwise(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %e = tensor.empty() : tensor<32x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<32x64xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}

// -----

// Below the threshold (8 x 8 points x 1 op < 1000): sequential.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.forall
// CHECK: scf.for
// CHECK: math.exp {{.*}} : vector<1x8xf32>
func.func @small(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// Convolution: batch 1 and 2 blocks of 8 output channels are too few
// trips, so the 8 output rows are distributed; each tile is decomposed to
// 1-D and vectorized as before.
// CHECK-LABEL: func.func @conv
// CHECK: scf.forall (%{{.*}}) in (8)
// CHECK-NOT: linalg.conv_2d
// CHECK: vector.fma
func.func @conv(%x: tensor<1x3x10x10xf32>, %w: tensor<16x3x3x3xf32>, %init: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x10x10xf32>, tensor<16x3x3x3xf32>) outs(%init : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  return %r : tensor<1x16x8x8xf32>
}

// -----

// Channels-last convolution: 4 blocks of 32 output channels are enough
// trips, so they are distributed (each core reads only its blocks' weights);
// a task runs every output pixel with its 8x32 accumulators.
// CHECK-LABEL: func.func @conv_nhwc
// CHECK: scf.forall (%{{.*}}) = (0) to (128) step (32)
// CHECK-NOT: linalg.conv_2d
// CHECK: vector.fma
// SEQ-LABEL: func.func @conv_nhwc
// SEQ-NOT: scf.forall
func.func @conv_nhwc(%x: tensor<1x10x10x8xf32>, %w: tensor<3x3x8x128xf32>, %init: tensor<1x8x8x128xf32>) -> tensor<1x8x8x128xf32> {
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x10x10x8xf32>, tensor<3x3x8x128xf32>) outs(%init : tensor<1x8x8x128xf32>) -> tensor<1x8x8x128xf32>
  return %r : tensor<1x8x8x128xf32>
}

// -----

// An op in a loop of the program (an im2col's loop over kernel offsets) is
// tiled and vectorized inside that loop, and counts once per iteration
// towards min-program-parallel-cost: one 64x64 transpose costs 4096, the
// loop's 8 of them 32768.
// CHECK-LABEL: func.func @op_in_program_loop
// CHECK-NOT: linalg.
// CHECK: scf.for %[[K:.*]] = %c0 to %c8 step %c1 iter_args(%{{.*}}) -> (tensor<8x64x64xf32>)
// CHECK: scf.forall
// CHECK: vector.transfer_write
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%[[K]], 0, 0] [1, 64, 64] [1, 1, 1]
// CHECK-NOT: linalg.
// LOOP-LABEL: func.func @op_in_program_loop
// LOOP: scf.for
// LOOP: scf.forall
func.func @op_in_program_loop(%x: tensor<64x64xf32>) -> tensor<8x64x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %e = tensor.empty() : tensor<8x64x64xf32>
  %r = scf.for %k = %c0 to %c8 step %c1 iter_args(%acc = %e) -> (tensor<8x64x64xf32>) {
    %d = tensor.extract_slice %acc[%k, 0, 0] [1, 64, 64] [1, 1, 1] : tensor<8x64x64xf32> to tensor<64x64xf32>
    %t = linalg.transpose ins(%x : tensor<64x64xf32>) outs(%d : tensor<64x64xf32>) permutation = [1, 0]
    %n = tensor.insert_slice %t into %acc[%k, 0, 0] [1, 64, 64] [1, 1, 1] : tensor<64x64xf32> into tensor<8x64x64xf32>
    scf.yield %n : tensor<8x64x64xf32>
  }
  return %r : tensor<8x64x64xf32>
}
