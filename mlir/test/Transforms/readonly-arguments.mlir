// RUN: poptorch-opt %s -split-input-file -poptorch-readonly-arguments | FileCheck %s --check-prefix=MARK
// RUN: poptorch-opt %s -split-input-file -poptorch-readonly-arguments -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -buffer-results-to-out-params="modify-public-functions" -poptorch-verify-readonly-arguments | FileCheck %s --check-prefix=BUF

// The caller's tensors (arguments with a poptorch.role) are read-only; an
// argument without a role (none exist in captured programs) is left alone.
// MARK-LABEL: func.func @insert_into_input
// MARK-SAME: %arg0: tensor<5xf32> {bufferization.writable = false, poptorch.role = "input"}
// MARK-SAME: %arg1: tensor<f32> {bufferization.writable = false, poptorch.role = "parameter"}
// MARK-SAME: %arg2: tensor<5xf32>)
// An update of the input in place gets a buffer of its own: the input is
// copied, never written.
// BUF-LABEL: func.func @insert_into_input
// BUF: %[[NEW:.*]] = memref.alloc() {{.*}} : memref<5xf32>
// BUF: memref.copy %arg0, %[[NEW]]
// BUF: memref.store %{{.*}}, %[[NEW]]
func.func @insert_into_input(%arg0: tensor<5xf32> {poptorch.role = "input"}, %arg1: tensor<f32> {poptorch.role = "parameter"}, %arg2: tensor<5xf32>) -> tensor<5xf32> {
  %c1 = arith.constant 1 : index
  %v = tensor.extract %arg1[] : tensor<f32>
  %0 = tensor.insert %v into %arg0[%c1] : tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// A linalg op whose init is a slice of an input computes into a new buffer.
// BUF-LABEL: func.func @fill_slice_of_input
// BUF-NOT: linalg.fill ins(%{{.*}} : f32) outs(%arg0
// BUF: linalg.fill
func.func @fill_slice_of_input(%arg0: tensor<8xf32> {poptorch.role = "buffer"}) -> tensor<8xf32> {
  %cst = arith.constant 2.0 : f32
  %s = tensor.extract_slice %arg0[2] [4] [1] : tensor<8xf32> to tensor<4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%s : tensor<4xf32>) -> tensor<4xf32>
  %r = tensor.insert_slice %f into %arg0[2] [4] [1] : tensor<4xf32> into tensor<8xf32>
  return %r : tensor<8xf32>
}
