// RUN: poptorch-opt %s -pass-pipeline='builtin.module(poptorch-outline-kernels)' | FileCheck %s
// RUN: poptorch-opt %s -pass-pipeline='builtin.module(poptorch-outline-kernels, convert-scf-to-cf, convert-to-llvm, reconcile-unrealized-casts, poptorch-kernel-codegen)' | FileCheck %s --check-prefix=LLVM

// LLVM: llvm.func @main({{.*}}) attributes {no_inline, optimize_none}
// LLVM: llvm.func @__kernel({{.*}}) attributes {no_inline, sym_visibility = "private"}
// LLVM-NOT: poptorch.

// Two loops with the same body on the same types become one kernel called
// twice; the loop with another constant is a kernel of its own; constants are
// cloned into kernels, memrefs and the other scalars are arguments; the
// device-iteration loop stays, and the kernel inside it is outlined.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>, %[[C:.*]]: memref<4xf32>, %[[N:.*]]: index)
// CHECK-SAME: attributes {poptorch.glue}
// CHECK: call @__kernel(%[[A]], %[[B]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT: call @__kernel(%[[B]], %[[C]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT: call @[[OTHER:__kernel_[0-9]+]](%[[A]], %[[C]]) : (memref<4xf32>, memref<4xf32>) -> ()
// CHECK-NEXT: scf.for %[[I:.*]] = {{.*}} {
// CHECK-NEXT:   func.call @[[INNER:__kernel_[0-9]+]](%[[A]], %[[I]], %[[C]])
// CHECK-NEXT: } {poptorch.device_loop}
// CHECK-NEXT: return

// CHECK: func.func private @__kernel(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>) attributes {poptorch.kernel}
// CHECK: arith.constant 2.000000e+00 : f32
// CHECK: scf.for
// CHECK: func.func private @[[OTHER]]
// CHECK: arith.constant 3.000000e+00 : f32
// CHECK: func.func private @[[INNER]]({{.*}}: memref<4xf32>, {{.*}}: index, {{.*}}: memref<4xf32>)
func.func @main(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  %three = arith.constant 3.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %b[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %b[%i] : memref<4xf32>
    %y = arith.mulf %x, %two : f32
    memref.store %y, %c[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.mulf %x, %three : f32
    memref.store %y, %c[%i] : memref<4xf32>
  }
  scf.for %it = %c0 to %n step %c1 {
    scf.for %i = %c0 to %c4 step %c1 {
      %x = memref.load %a[%it] : memref<4xf32>
      memref.store %x, %c[%i] : memref<4xf32>
    }
  } {poptorch.device_loop}
  return
}
