// poptorch.print_tensor (poptorch.ipu_print_tensor): a call of the runtime's
// poptorch_print_tensor_<type> with a read-only view of the input's buffer and
// the title as a constant NUL-terminated global; the result is the input.
// The second RUN line takes it through the whole pipeline to LLVM.
// RUN: poptorch-opt %s -split-input-file --convert-poptorch-to-linalg | FileCheck %s
// RUN: poptorch-opt %s -split-input-file --poptorch-stage-decompose --poptorch-stage-to-linalg --poptorch-stage-tile-and-vectorize --poptorch-stage-bufferize --poptorch-stage-to-llvm | FileCheck %s --check-prefix=LLVM

// CHECK-DAG: memref.global "private" constant @__poptorch_print_title_0 : memref<3xi8> = dense<[104, 105, 0]>
// CHECK-DAG: func.func private @poptorch_print_tensor_f32(memref<*xf32>, memref<*xi8>)
// CHECK-LABEL: func.func @print
// CHECK: %[[X:.*]] = linalg.generic
// CHECK: %[[T:.*]] = memref.get_global @__poptorch_print_title_0 : memref<3xi8>
// CHECK: %[[TU:.*]] = memref.cast %[[T]] : memref<3xi8> to memref<*xi8>
// CHECK: %[[B:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<2x3xf32> to memref<2x3xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[U:.*]] = memref.cast %[[B]] : memref<2x3xf32, strided<[?, ?], offset: ?>> to memref<*xf32>
// CHECK: call @poptorch_print_tensor_f32(%[[U]], %[[TU]]) : (memref<*xf32>, memref<*xi8>) -> ()
// CHECK: return %[[X]]
// LLVM-LABEL: llvm.func @print
// LLVM: llvm.call @poptorch_print_tensor_f32
func.func @print(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = poptorch.neg %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = poptorch.print_tensor %0 {title = "hi"} : tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// An unused print is kept (it writes to stdout); unsigned and bool inputs keep
// their element type in the runtime function's name.
// CHECK-LABEL: func.func @unused
// CHECK-DAG: call @poptorch_print_tensor_ui8
// CHECK-DAG: call @poptorch_print_tensor_i1
// LLVM-LABEL: llvm.func @unused
// LLVM-DAG: llvm.call @poptorch_print_tensor_ui8
// LLVM-DAG: llvm.call @poptorch_print_tensor_i1
func.func @unused(%x: tensor<4xui8>, %m: tensor<i1>) -> tensor<4xui8> {
  %0 = poptorch.print_tensor %x {title = ""} : tensor<4xui8>
  %1 = poptorch.print_tensor %m {title = "mask"} : tensor<i1>
  return %x : tensor<4xui8>
}
