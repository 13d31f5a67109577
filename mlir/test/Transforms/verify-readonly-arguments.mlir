// RUN: poptorch-opt %s -split-input-file -poptorch-verify-readonly-arguments -verify-diagnostics | FileCheck %s

// Reads of the caller's memory, through views and into a callee, pass.
// CHECK-LABEL: func.func @reads
func.func private @read_callee(%arg0: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %arg0[%c0] : memref<4xf32>
  return %v : f32
}
func.func @reads(%arg0: memref<8xf32> {poptorch.role = "input"}, %out: memref<4xf32>) {
  %s = memref.subview %arg0[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  %c = memref.cast %s : memref<4xf32, strided<[1], offset: 2>> to memref<4xf32, strided<[?], offset: ?>>
  memref.copy %c, %out : memref<4xf32, strided<[?], offset: ?>> to memref<4xf32>
  %v = func.call @read_callee(%out) : (memref<4xf32>) -> f32
  return
}

// -----

// A write through a view of an input is rejected, naming the argument.
func.func @write_view(%arg0: memref<8xf32> {poptorch.role = "input", poptorch.name = "input0"}) {
  %cst = arith.constant 1.0 : f32
  %s = memref.subview %arg0[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  // expected-error @+1 {{'linalg.fill' op writes argument #0 of @write_view ('input0', poptorch.role = input), memory its caller owns}}
  linalg.fill ins(%cst : f32) outs(%s : memref<4xf32, strided<[1], offset: 2>>)
  return
}

// -----

// A write inside a callee that the input is passed to is found as well.
func.func private @writes(%arg0: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 1.0 : f32
  // expected-error @+1 {{'memref.store' op writes argument #0 of @caller (poptorch.role = parameter)}}
  memref.store %cst, %arg0[%c0] : memref<4xf32>
  return
}
func.func @caller(%arg0: memref<4xf32> {poptorch.role = "parameter"}) {
  func.call @writes(%arg0) : (memref<4xf32>) -> ()
  return
}

// -----

// Loop-carried memory of an input is the input's.
func.func @loop(%arg0: memref<4xf32> {poptorch.role = "buffer"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 1.0 : f32
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%m = %arg0) -> (memref<4xf32>) {
    // expected-error @+1 {{'memref.store' op writes argument #0 of @loop}}
    memref.store %cst, %m[%i] : memref<4xf32>
    scf.yield %m : memref<4xf32>
  }
  return
}
