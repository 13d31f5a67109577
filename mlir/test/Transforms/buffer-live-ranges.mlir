// poptorch-buffer-live-ranges: each allocation moves down to its first use,
// each deallocation up to the last use of the buffer or of anything that may
// alias it. poptorch-overlap-stages then keeps a stage's deallocations after
// the awaits of its overlapped group.
// RUN: poptorch-opt %s -split-input-file --poptorch-buffer-live-ranges | FileCheck %s
// RUN: poptorch-opt %s -split-input-file --poptorch-buffer-live-ranges --poptorch-overlap-stages | FileCheck %s --check-prefix=OVERLAP

func.func private @use(memref<16xf32>)
func.func private @produce(memref<16xf32>)

// Two temporaries in a straight line: the second reuses the first's memory
// only if the first is freed before the second is allocated.
// CHECK-LABEL: func.func @straight_line
// CHECK: %[[A:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: call @produce(%[[A]])
// CHECK-NEXT: %[[V:.*]] = memref.expand_shape %[[A]]
// CHECK-NEXT: %[[C:.*]] = memref.collapse_shape %[[V]]
// CHECK-NEXT: call @use(%[[C]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: call @produce(%[[B]])
// CHECK-NEXT: call @use(%[[B]])
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @straight_line() {
  %a = memref.alloc() : memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  call @produce(%a) : (memref<16xf32>) -> ()
  %v = memref.expand_shape %a [[0, 1]] output_shape [4, 4] : memref<16xf32> into memref<4x4xf32>
  %c = memref.collapse_shape %v [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  call @use(%c) : (memref<16xf32>) -> ()
  call @produce(%b) : (memref<16xf32>) -> ()
  call @use(%b) : (memref<16xf32>) -> ()
  memref.dealloc %a : memref<16xf32>
  memref.dealloc %b : memref<16xf32>
  return
}

// -----

func.func private @use(memref<16xf32>)
func.func private @produce(memref<16xf32>)

// A buffer carried by a loop is live until the loop's result is last used.
// CHECK-LABEL: func.func @carried_by_loop
// CHECK: %[[A:.*]] = memref.alloc()
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[A]])
// CHECK: call @use(%[[R]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: call @produce
// CHECK-NEXT: return
func.func @carried_by_loop(%other: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<16xf32>
  call @produce(%a) : (memref<16xf32>) -> ()
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%it = %a) -> (memref<16xf32>) {
    func.call @use(%it) : (memref<16xf32>) -> ()
    scf.yield %it : memref<16xf32>
  }
  call @use(%r) : (memref<16xf32>) -> ()
  call @produce(%other) : (memref<16xf32>) -> ()
  memref.dealloc %a : memref<16xf32>
  return
}

// -----

func.func private @use(memref<16xf32>)
func.func private @use_index(index)

// A buffer whose address is taken as an integer keeps its deallocation.
// CHECK-LABEL: func.func @address_taken
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: call @use(%
// CHECK-NEXT: call @use(%
// CHECK-NEXT: memref.dealloc
func.func @address_taken(%other: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<16xf32> -> index
  call @use_index(%p) : (index) -> ()
  call @use(%other) : (memref<16xf32>) -> ()
  call @use(%other) : (memref<16xf32>) -> ()
  memref.dealloc %a : memref<16xf32>
  return
}

// -----

// Pipeline stages overlapped as tasks: the input of the first stage, freed
// after its call, is freed after the group's await instead.
// OVERLAP-LABEL: func.func @stages
// OVERLAP: %[[T:.*]] = async.execute
// OVERLAP-NEXT: func.call @stage0(%[[X:.*]], %{{.*}})
// OVERLAP: call @stage1
// OVERLAP-NEXT: async.await %[[T]]
// OVERLAP-NEXT: memref.dealloc %[[X]]
func.func private @stage0(%x: memref<16xf32>, %y: memref<16xf32>) attributes {poptorch.pipeline_stage = 0 : i64} {
  memref.copy %x, %y : memref<16xf32> to memref<16xf32>
  return
}
func.func private @stage1(%x: memref<16xf32>, %y: memref<16xf32>) attributes {poptorch.pipeline_stage = 1 : i64} {
  memref.copy %x, %y : memref<16xf32> to memref<16xf32>
  return
}
func.func @stages(%in: memref<16xf32>, %prev: memref<16xf32>, %out0: memref<16xf32>, %out1: memref<16xf32>) {
  %x = memref.alloc() : memref<16xf32>
  memref.copy %in, %x : memref<16xf32> to memref<16xf32>
  call @stage0(%x, %out0) : (memref<16xf32>, memref<16xf32>) -> ()
  call @stage1(%prev, %out1) : (memref<16xf32>, memref<16xf32>) -> ()
  memref.dealloc %x : memref<16xf32>
  return
}

// -----

func.func private @produce(memref<16xf32>)
func.func private @use(memref<16xf32>)

// A new value computed into a buffer of its own and copied into the caller's
// result buffer is computed into the result buffer. A copy into a caller's
// input (it carries poptorch.role), or from a buffer used after the copy,
// stays.
// CHECK-LABEL: func.func @into_results
// CHECK-SAME: (%[[IN:[^:]*]]: memref<16xf32> {poptorch.role = "parameter"}, %[[R0:[^:]*]]: memref<16xf32>, %[[R1:[^:]*]]: memref<16xf32>)
// CHECK-NEXT: call @produce(%[[R0]])
// CHECK-NEXT: call @use(%[[R0]])
// CHECK-NEXT: %[[B:.*]] = memref.alloc()
// CHECK-NEXT: call @produce(%[[B]])
// CHECK-NEXT: memref.copy %[[B]], %[[R1]]
// CHECK-NEXT: call @use(%[[B]])
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: %[[C:.*]] = memref.alloc()
// CHECK-NEXT: call @produce(%[[C]])
// CHECK-NEXT: memref.copy %[[C]], %[[IN]]
// CHECK-NEXT: memref.dealloc %[[C]]
// CHECK-NEXT: return
func.func @into_results(%in: memref<16xf32> {poptorch.role = "parameter"}, %r0: memref<16xf32>, %r1: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  %c = memref.alloc() : memref<16xf32>
  call @produce(%a) : (memref<16xf32>) -> ()
  call @use(%a) : (memref<16xf32>) -> ()
  memref.copy %a, %r0 : memref<16xf32> to memref<16xf32>
  call @produce(%b) : (memref<16xf32>) -> ()
  memref.copy %b, %r1 : memref<16xf32> to memref<16xf32>
  call @use(%b) : (memref<16xf32>) -> ()
  call @produce(%c) : (memref<16xf32>) -> ()
  memref.copy %c, %in : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  memref.dealloc %b : memref<16xf32>
  memref.dealloc %c : memref<16xf32>
  return
}
