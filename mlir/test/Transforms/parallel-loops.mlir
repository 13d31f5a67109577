// poptorch-parallel-loops numbers the iterations of an outermost scf.forall
// and makes it a poptorch.parallel_for whose body runs a range of them;
// poptorch-outline-parallel makes that body a function the runtime calls.
// RUN: poptorch-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(poptorch-parallel-loops))' | FileCheck %s
// RUN: poptorch-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(poptorch-parallel-loops, convert-scf-to-cf), convert-to-llvm, reconcile-unrealized-casts, poptorch-outline-parallel)' | FileCheck %s --check-prefix=LLVM

// A 2-D forall of 3 x 4 iterations with offsets and steps: 12 iterations,
// the second induction variable the faster one. The nested forall runs
// sequentially inside.
// CHECK-LABEL: func.func @two_dims
// CHECK: %[[N:.*]] = arith.constant 12 : i64
// CHECK: poptorch.parallel_for %[[N]] {
// CHECK: ^bb0(%[[BEGIN:.*]]: i64, %[[END:.*]]: i64):
// CHECK: %[[B:.*]] = arith.index_cast %[[BEGIN]] : i64 to index
// CHECK: %[[E:.*]] = arith.index_cast %[[END]] : i64 to index
// CHECK: scf.for %[[K:.*]] = %[[B]] to %[[E]]
// CHECK: %[[J0:.*]] = arith.remui %[[K]], %[[C4:.*]] :
// CHECK: %[[J1:.*]] = arith.muli %[[J0]], %{{.*}}
// CHECK: %[[J:.*]] = arith.addi %[[J1]], %{{.*}}
// CHECK: %[[I0:.*]] = arith.divui %[[K]], %[[C4]] :
// CHECK: %[[I1:.*]] = arith.muli %[[I0]], %{{.*}}
// CHECK: %[[I:.*]] = arith.addi %[[I1]], %{{.*}}
// CHECK-NOT: scf.forall
// CHECK: scf.for %[[L:.*]] =
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[I]], %[[J]], %[[L]]]
// CHECK: poptorch.parallel_yield
// CHECK-NOT: scf.forall
func.func @two_dims(%m: memref<8x16x2xf32>, %v: f32) {
  scf.forall (%i, %j) = (1, 2) to (7, 16) step (2, 4) {
    scf.forall (%l) in (2) {
      memref.store %v, %m[%i, %j, %l] : memref<8x16x2xf32>
    }
  }
  return
}

// The body reads the aligned pointer of the memref (a field of its
// descriptor) and the scalar: only those two cross, in a frame on the
// caller's stack; the constants are cloned into the body.
// LLVM-LABEL: llvm.func @two_dims
// LLVM: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// LLVM: %[[FRAME:.*]] = llvm.alloca %[[ONE]] x !llvm.struct<(ptr, f32)>
// LLVM: %[[PTR:.*]] = llvm.extractvalue %{{.*}}[1] : !llvm.struct<(ptr, ptr, i64, array<3 x i64>, array<3 x i64>)>
// LLVM: %[[A0:.*]] = llvm.getelementptr %[[FRAME]][0, 0]
// LLVM: llvm.store %[[PTR]], %[[A0]] : !llvm.ptr, !llvm.ptr
// LLVM: %[[A1:.*]] = llvm.getelementptr %[[FRAME]][0, 1]
// LLVM: llvm.store %{{.*}}, %[[A1]] : f32, !llvm.ptr
// LLVM: %[[BODY:.*]] = llvm.mlir.addressof @two_dims_parallel : !llvm.ptr
// LLVM: llvm.call @poptorch_parallel_for(%[[BODY]], %[[FRAME]], %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// LLVM-NOT: poptorch.parallel_for
// LLVM: llvm.func internal @two_dims_parallel(%[[F:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
// LLVM: %[[P0:.*]] = llvm.getelementptr %[[F]][0, 0]
// LLVM: %[[BASE:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.ptr
// LLVM: %[[P1:.*]] = llvm.getelementptr %[[F]][0, 1]
// LLVM: %[[V:.*]] = llvm.load %[[P1]] : !llvm.ptr -> f32
// LLVM: llvm.mlir.constant(4 : index)
// LLVM: llvm.icmp "slt" %{{.*}}, %[[END]]
// LLVM: llvm.store %[[V]], %{{.*}} : f32, !llvm.ptr
// LLVM: llvm.return
// LLVM: llvm.func @poptorch_parallel_for(!llvm.ptr, !llvm.ptr, i64)

// -----

// Bounds known only at run time: the trip count is computed before the loop
// (an empty range counts no iterations) and crosses into the body.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[SPAN:.*]] = arith.subi %{{.*}}, %{{.*}} : index
// CHECK: %[[POS:.*]] = arith.maxsi %[[SPAN]], %{{.*}} : index
// CHECK: %[[TRIPS:.*]] = arith.ceildivsi %[[POS]], %{{.*}} : index
// CHECK: %[[N:.*]] = arith.index_cast %[[TRIPS]] : index to i64
// CHECK: poptorch.parallel_for %[[N]] {
// LLVM-LABEL: llvm.func @dynamic
// LLVM: llvm.call @poptorch_parallel_for
// LLVM: llvm.func internal @dynamic_parallel
func.func @dynamic(%m: memref<?xf32>, %lo: index, %hi: index, %v: f32) {
  scf.forall (%i) = (%lo) to (%hi) step (3) {
    memref.store %v, %m[%i] : memref<?xf32>
  }
  return
}

// -----

// A buffer that every iteration allocates and frees (a register tile's
// packed panel) is allocated once per range: the alloc goes before the
// range's loop and the dealloc after it. One whose size depends on the
// iteration stays.
// CHECK-LABEL: func.func @iteration_buffers
// CHECK: poptorch.parallel_for
// CHECK: %[[BUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
// CHECK: scf.for %[[K:.*]] =
// CHECK-NOT: memref.alloc()
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: memref.dealloc %{{.*}} : memref<?xf32>
// CHECK-NOT: memref.dealloc %[[BUF]]
// CHECK: }
// CHECK: memref.dealloc %[[BUF]] : memref<4x16xf32>
// CHECK: poptorch.parallel_yield
func.func @iteration_buffers(%m: memref<8x16xf32>, %v: f32) {
  scf.forall (%i) in (8) {
    %buf = memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
    %c0 = arith.constant 0 : index
    %dyn = memref.alloc(%i) : memref<?xf32>
    memref.store %v, %buf[%c0, %i] : memref<4x16xf32>
    %x = memref.load %buf[%c0, %i] : memref<4x16xf32>
    memref.store %x, %m[%i, %i] : memref<8x16xf32>
    memref.dealloc %dyn : memref<?xf32>
    memref.dealloc %buf : memref<4x16xf32>
  }
  return
}
