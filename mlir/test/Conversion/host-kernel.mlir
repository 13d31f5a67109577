// poptorch.host_kernel (an aten op without a lowering): a call of the
// runtime's poptorch_host_kernel_<n>_<k> with the call's description (a
// constant NUL-terminated global), a read-only view of each input's buffer
// and a fresh buffer per result, all unranked; the results are those buffers.
// Declarations differ in <k> when their element types differ.
// The second RUN line takes it through the whole pipeline to LLVM.
// RUN: poptorch-opt %s -split-input-file --convert-poptorch-to-linalg | FileCheck %s
// RUN: poptorch-opt %s -split-input-file --poptorch-stage-decompose --poptorch-stage-to-linalg --poptorch-stage-tile-and-vectorize --poptorch-stage-bufferize --poptorch-stage-to-llvm | FileCheck %s --check-prefix=LLVM

// CHECK-DAG: memref.global "private" constant @__poptorch_host_kernel_call_0 : memref<4xi8> = dense<[97, 98, 99, 0]>
// CHECK-DAG: func.func private @poptorch_host_kernel_4_0(memref<*xi8>, memref<*xf32>, memref<*xf32>, memref<*xi32>)
// CHECK-DAG: func.func private @poptorch_host_kernel_3_0(memref<*xi8>, memref<*xf32>, memref<*xf32>)
// CHECK-LABEL: func.func @kernels
// CHECK: %[[X:.*]] = linalg.generic
// CHECK: %[[D:.*]] = memref.get_global @__poptorch_host_kernel_call_0 : memref<4xi8>
// CHECK: %[[DU:.*]] = memref.cast %[[D]] : memref<4xi8> to memref<*xi8>
// CHECK: %[[B:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<3x3xf32> to memref<3x3xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[BU:.*]] = memref.cast %[[B]]
// CHECK: %[[R0:.*]] = memref.alloc() : memref<3x3xf32>
// CHECK: %[[R0U:.*]] = memref.cast %[[R0]] : memref<3x3xf32> to memref<*xf32>
// CHECK: %[[R1:.*]] = memref.alloc() : memref<3xi32>
// CHECK: %[[R1U:.*]] = memref.cast %[[R1]] : memref<3xi32> to memref<*xi32>
// CHECK: call @poptorch_host_kernel_4_0(%[[DU]], %[[BU]], %[[R0U]], %[[R1U]])
// CHECK: %[[T0:.*]] = bufferization.to_tensor %[[R0]] restrict writable : memref<3x3xf32> to tensor<3x3xf32>
// CHECK: bufferization.to_tensor %[[R1]] restrict writable
// CHECK: call @poptorch_host_kernel_3_0
// LLVM-LABEL: llvm.func @kernels
// LLVM: llvm.call @poptorch_host_kernel_4_0
// LLVM: llvm.call @poptorch_host_kernel_3_0
func.func @kernels(%x: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>, tensor<3x3xf32>) {
  %0 = poptorch.neg %x : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %1:2 = poptorch.host_kernel "aten::a" (%0) {call = "abc"} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xi32>)
  %2 = poptorch.host_kernel "aten::b" (%1#0) {call = "de"} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %1#0, %1#1, %2 : tensor<3x3xf32>, tensor<3xi32>, tensor<3x3xf32>
}

// -----

// Pure: a host kernel whose results are unused is removed.
// CHECK-LABEL: func.func @dead
// CHECK-NOT: poptorch_host_kernel
func.func @dead(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = poptorch.host_kernel "aten::a" (%x) {call = "abc"} : (tensor<2xf32>) -> tensor<2xf32>
  return %x : tensor<2xf32>
}
