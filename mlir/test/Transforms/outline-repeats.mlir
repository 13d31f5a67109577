// RUN: poptorch-opt %s -pass-pipeline='builtin.module(poptorch-outline-repeats)' | FileCheck %s

// Three layers of eight ops that read their values the same way become one
// function called three times; the fourth layer scales by another constant
// and stays inline. The constants, the empty tensor and the fill that CSE
// shared between the layers are cloned into the function; the hidden state,
// the layer's weight and the bias every layer reads are its arguments.

// CHECK-LABEL: func.func private @main_repeat
// CHECK-SAME: (%[[H:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32>, %[[B:.*]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[E:.*]] = tensor.empty()
// CHECK-NEXT: %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E]]
// CHECK-NEXT: %[[HALF:.*]] = arith.constant dense<5.0
// CHECK-NEXT: %[[M:.*]] = linalg.matmul ins(%[[H]], %[[W]] : {{.*}}) outs(%[[FILL]]
// CHECK-NEXT: %[[A:.*]] = linalg.add ins(%[[M]], %[[B]] :
// CHECK-NEXT: linalg.mul ins(%[[A]], %[[HALF]] :
// CHECK-COUNT-4: linalg.
// CHECK-NEXT: %[[OUT:.*]] = linalg.add ins(%{{.*}}, %[[H]] :
// CHECK-NEXT: return %[[OUT]]

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W0:.*]]: tensor<8x8xf32>, %[[W1:.*]]: tensor<8x8xf32>, %[[W2:.*]]: tensor<8x8xf32>, %[[W3:.*]]: tensor<8x8xf32>, %[[BIAS:.*]]: tensor<4x8xf32>)
// CHECK: %[[QUARTER:.*]] = arith.constant dense<2.5
// CHECK-NEXT: %[[C0:.*]] = call @main_repeat(%[[X]], %[[W0]], %[[BIAS]])
// CHECK-NEXT: %[[C1:.*]] = call @main_repeat(%[[C0]], %[[W1]], %[[BIAS]])
// CHECK-NEXT: %[[C2:.*]] = call @main_repeat(%[[C1]], %[[W2]], %[[BIAS]])
// CHECK-NEXT: linalg.matmul ins(%[[C2]], %[[W3]]
// CHECK-NEXT: linalg.add
// CHECK-NEXT: linalg.mul ins(%{{.*}}, %[[QUARTER]]

// The first layer reads %p as its bias and as its residual, the second reads
// %p and %q: no argument list describes both, so both stay inline.

// CHECK-LABEL: func.func @inconsistent
// CHECK-NOT: call
// CHECK-COUNT-2: linalg.matmul
// CHECK-NOT: call
// CHECK: return

// The layers inside a loop's body: the induction variable's value and the
// loop-carried tensor are arguments like any other value from before.

// CHECK-LABEL: func.func private @loop_repeat
// CHECK-SAME: (%{{.*}}: tensor<4x8xf32>, %{{.*}}: tensor<8x8xf32>, %{{.*}}: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-LABEL: func.func @loop
// CHECK-SAME: (%{{.*}}: tensor<4x8xf32>, %[[LW0:.*]]: tensor<8x8xf32>, %[[LW1:.*]]: tensor<8x8xf32>, %[[LB:.*]]: tensor<4x8xf32>)
// CHECK: scf.for {{.*}} iter_args(%[[LH:.*]] = %{{.*}})
// CHECK-NEXT: %[[L0:.*]] = func.call @loop_repeat(%[[LH]], %[[LW0]], %[[LB]])
// CHECK-NEXT: %[[L1:.*]] = func.call @loop_repeat(%[[L0]], %[[LW1]], %[[LB]])
// CHECK-NEXT: scf.yield %[[L1]]

// Runs of fewer than eight ops stay inline: the call would cost the fusion
// across it and save little.

// CHECK-LABEL: func.func @short
// CHECK-NOT: call
// CHECK: return

// Layers that pass a tensor through a buffer (a host kernel's call, as the
// conversion makes it) stay inline: buffers must not cross function
// boundaries before bufferization.

// CHECK-LABEL: func.func @buffers
// CHECK-NOT: call @buffers_repeat
// CHECK: return

func.func @main(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>, %w2: tensor<8x8xf32>, %w3: tensor<8x8xf32>, %bias: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %half = arith.constant dense<0.5> : tensor<4x8xf32>
  %third = arith.constant dense<0.25> : tensor<4x8xf32>
  %m0 = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a0 = linalg.add ins(%m0, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s0 = linalg.mul ins(%a0, %half : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x0 = linalg.exp ins(%s0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %d0 = linalg.sub ins(%x0, %a0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v0 = linalg.div ins(%d0, %x0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r0 = linalg.max ins(%v0, %fill : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h0 = linalg.add ins(%r0, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m1 = linalg.matmul ins(%h0, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a1 = linalg.add ins(%m1, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s1 = linalg.mul ins(%a1, %half : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x1 = linalg.exp ins(%s1 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %d1 = linalg.sub ins(%x1, %a1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v1 = linalg.div ins(%d1, %x1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r1 = linalg.max ins(%v1, %fill : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h1 = linalg.add ins(%r1, %h0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m2 = linalg.matmul ins(%h1, %w2 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a2 = linalg.add ins(%m2, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s2 = linalg.mul ins(%a2, %half : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x2 = linalg.exp ins(%s2 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %d2 = linalg.sub ins(%x2, %a2 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v2 = linalg.div ins(%d2, %x2 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r2 = linalg.max ins(%v2, %fill : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h2 = linalg.add ins(%r2, %h1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m3 = linalg.matmul ins(%h2, %w3 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a3 = linalg.add ins(%m3, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s3 = linalg.mul ins(%a3, %third : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x3 = linalg.exp ins(%s3 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %d3 = linalg.sub ins(%x3, %a3 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v3 = linalg.div ins(%d3, %x3 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r3 = linalg.max ins(%v3, %fill : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h3 = linalg.add ins(%r3, %h2 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %h3 : tensor<4x8xf32>
}

func.func @inconsistent(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>, %p: tensor<4x8xf32>, %q: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %half = arith.constant dense<0.5> : tensor<4x8xf32>
  %third = arith.constant dense<0.25> : tensor<4x8xf32>
  %m0 = linalg.matmul ins(%x, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a0 = linalg.add ins(%m0, %p : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s0 = linalg.mul ins(%a0, %half : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x0 = linalg.exp ins(%s0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %d0 = linalg.sub ins(%x0, %a0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v0 = linalg.div ins(%d0, %x0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r0 = linalg.max ins(%v0, %fill : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h0 = linalg.add ins(%r0, %p : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m1 = linalg.matmul ins(%h0, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a1 = linalg.add ins(%m1, %p : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s1 = linalg.mul ins(%a1, %half : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x1 = linalg.exp ins(%s1 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %d1 = linalg.sub ins(%x1, %a1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v1 = linalg.div ins(%d1, %x1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r1 = linalg.max ins(%v1, %fill : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h1 = linalg.add ins(%r1, %q : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %h1 : tensor<4x8xf32>
}

func.func @loop(%x: tensor<4x8xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>, %bias: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %half = arith.constant dense<0.5> : tensor<4x8xf32>
  %third = arith.constant dense<0.25> : tensor<4x8xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %y = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> (tensor<4x8xf32>) {
    %m0 = linalg.matmul ins(%h, %w0 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
    %a0 = linalg.add ins(%m0, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %s0 = linalg.mul ins(%a0, %half : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %x0 = linalg.exp ins(%s0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %d0 = linalg.sub ins(%x0, %a0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %v0 = linalg.div ins(%d0, %x0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %r0 = linalg.max ins(%v0, %fill : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %h0 = linalg.add ins(%r0, %h : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %m1 = linalg.matmul ins(%h0, %w1 : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
    %a1 = linalg.add ins(%m1, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %s1 = linalg.mul ins(%a1, %half : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %x1 = linalg.exp ins(%s1 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %d1 = linalg.sub ins(%x1, %a1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %v1 = linalg.div ins(%d1, %x1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %r1 = linalg.max ins(%v1, %fill : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %h1 = linalg.add ins(%r1, %h0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.yield %h1 : tensor<4x8xf32>
  }
  return %y : tensor<4x8xf32>
}

func.func @short(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %a0 = linalg.exp ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b0 = linalg.add ins(%a0, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c0 = linalg.exp ins(%b0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %d0 = linalg.add ins(%c0, %b0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a1 = linalg.exp ins(%d0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %b1 = linalg.add ins(%a1, %d0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c1 = linalg.exp ins(%b1 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %d1 = linalg.add ins(%c1, %b1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %d1 : tensor<4x8xf32>
}

func.func private @host_kernel(memref<4x8xf32>, memref<4x8xf32>)

func.func @buffers(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %bias: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m0 = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a0 = linalg.add ins(%m0, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x0 = linalg.exp ins(%a0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s0 = linalg.sub ins(%x0, %a0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %in0 = bufferization.to_buffer %s0 : tensor<4x8xf32> to memref<4x8xf32>
  %out0 = memref.alloc() : memref<4x8xf32>
  func.call @host_kernel(%in0, %out0) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  %k0 = bufferization.to_tensor %out0 restrict : memref<4x8xf32> to tensor<4x8xf32>
  %d0 = linalg.div ins(%k0, %x0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r0 = linalg.max ins(%d0, %fill : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %n0 = linalg.mul ins(%r0, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h0 = linalg.add ins(%n0, %x : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m1 = linalg.matmul ins(%h0, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a1 = linalg.add ins(%m1, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x1 = linalg.exp ins(%a1 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s1 = linalg.sub ins(%x1, %a1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %in1 = bufferization.to_buffer %s1 : tensor<4x8xf32> to memref<4x8xf32>
  %out1 = memref.alloc() : memref<4x8xf32>
  func.call @host_kernel(%in1, %out1) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  %k1 = bufferization.to_tensor %out1 restrict : memref<4x8xf32> to tensor<4x8xf32>
  %d1 = linalg.div ins(%k1, %x1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r1 = linalg.max ins(%d1, %fill : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %n1 = linalg.mul ins(%r1, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h1 = linalg.add ins(%n1, %h0 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m2 = linalg.matmul ins(%h1, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a2 = linalg.add ins(%m2, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x2 = linalg.exp ins(%a2 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s2 = linalg.sub ins(%x2, %a2 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %in2 = bufferization.to_buffer %s2 : tensor<4x8xf32> to memref<4x8xf32>
  %out2 = memref.alloc() : memref<4x8xf32>
  func.call @host_kernel(%in2, %out2) : (memref<4x8xf32>, memref<4x8xf32>) -> ()
  %k2 = bufferization.to_tensor %out2 restrict : memref<4x8xf32> to tensor<4x8xf32>
  %d2 = linalg.div ins(%k2, %x2 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r2 = linalg.max ins(%d2, %fill : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %n2 = linalg.mul ins(%r2, %bias : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %h2 = linalg.add ins(%n2, %h1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %h2 : tensor<4x8xf32>
}
