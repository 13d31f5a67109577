// Verifier errors of the poptorch dialect (PoptorchDialect.cpp).
// RUN: poptorch-opt %s -split-input-file -verify-diagnostics

func.func @elementwise_element_type(%x: tensor<2xf32>, %y: tensor<2xf64>) -> tensor<2xf32> {
  // expected-error @+1 {{operand element type 'f64' differs from the result element type 'f32'}}
  %0 = poptorch.add %x, %y : (tensor<2xf32>, tensor<2xf64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @elementwise_broadcast(%x: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{does not broadcast to the result shape}}
  %0 = poptorch.neg %x : (tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @constant_type() -> tensor<3xf32> {
  // expected-error @+1 {{value type 'tensor<2xf32>' differs from result type 'tensor<3xf32>'}}
  %0 = poptorch.constant dense<1.0> : tensor<2xf32> : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @cast_shape(%x: tensor<2xf32>) -> tensor<3xi32> {
  // expected-error @+1 {{cast must not change the shape}}
  %0 = poptorch.cast %x : tensor<2xf32> -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @dropout_p(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{probability 1.500000e+00 is not in [0, 1]}}
  %0 = poptorch.dropout %x {p = 1.5 : f64, train = false} : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dropout_type(%x: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result type must equal the input type}}
  %0 = poptorch.dropout %x {p = 0.5 : f64, train = false} : tensor<2xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @matmul_rank0(%x: tensor<f32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{operands must be at least 1-D}}
  %0 = poptorch.matmul %x, %y : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @matmul_types(%x: tensor<2x3xf32>, %y: tensor<3x2xf16>) -> tensor<2x2xf32> {
  // expected-error @+1 {{operands and result must share one element type}}
  %0 = poptorch.matmul %x, %y : (tensor<2x3xf32>, tensor<3x2xf16>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @matmul_contraction(%x: tensor<2x3xf32>, %y: tensor<4x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{contraction sizes differ: 3 vs 4}}
  %0 = poptorch.matmul %x, %y : (tensor<2x3xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @linear_weight_rank(%x: tensor<2x3xf32>, %w: tensor<1x4x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{weight must be 1-D or 2-D}}
  %0 = poptorch.linear %x, %w : (tensor<2x3xf32>, tensor<1x4x3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @linear_features(%x: tensor<2x3xf32>, %w: tensor<4x5xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{input features 3 differ from weight features 5}}
  %0 = poptorch.linear %x, %w : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @sdpa_rank(%q: tensor<4xf32>, %k: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{query, key and value must have the same rank >= 2}}
  %0 = poptorch.sdpa %q, %k, %v : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @sdpa_embedding(%q: tensor<2x4xf32>, %k: tensor<3x5xf32>, %v: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{query and key embedding sizes differ}}
  %0 = poptorch.sdpa %q, %k, %v : (tensor<2x4xf32>, tensor<3x5xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @sdpa_dropout(%q: tensor<2x4xf32>, %k: tensor<3x4xf32>, %v: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{use dropout_p=0}}
  %0 = poptorch.sdpa %q, %k, %v {dropout_p = 0.1 : f64} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @conv_rank(%x: tensor<3x8xf32>, %w: tensor<4x3x3xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{input and weight must both be N, C, spatial... tensors}}
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>} : (tensor<3x8xf32>, tensor<4x3x3xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @conv_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{stride must have 2 entries}}
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1, 1, 1>, padding = array<i64: 0>, dilation = array<i64: 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @conv_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{input channels 3 != weight in-channels 3 * groups 2}}
  %0 = poptorch.convolution %x, %w {stride = array<i64: 1>, padding = array<i64: 0>, dilation = array<i64: 1>, groups = 2 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @pool_rank(%x: tensor<8x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{input must be (N,) C and 2 spatial dims}}
  %0, %i = poptorch.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>} : tensor<8x8xf32> -> tensor<4x4xf32>, tensor<4x4xi64>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @pool_entries(%x: tensor<1x8x8xf32>) -> tensor<1x4x4xf32> {
  // expected-error @+1 {{kernel_size must have 1 or 2 entries}}
  %0 = poptorch.avg_pool2d %x {kernel_size = array<i64: 2, 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : tensor<1x8x8xf32> -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}

// -----

func.func @pool_padding(%x: tensor<1x8x8xf32>) -> tensor<1x5x5xf32> {
  // expected-error @+1 {{padding should be at most half of the kernel size}}
  %0, %i = poptorch.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 2, 2>, dilation = array<i64: 1, 1>} : tensor<1x8x8xf32> -> tensor<1x5x5xf32>, tensor<1x5x5xi64>
  return %0 : tensor<1x5x5xf32>
}

// -----

func.func @adaptive_output_size(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x1x1xf32> {
  // expected-error @+1 {{output_size must have 2 entries}}
  %0 = poptorch.adaptive_avg_pool2d %x {output_size = array<i64: 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x1x1xf32>
  return %0 : tensor<1x3x1x1xf32>
}

// -----

func.func @batch_norm_no_stats(%x: tensor<2x3xf32>, %m: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{running_mean and running_var are required in inference}}
  %0 = poptorch.batch_norm %x mean %m {eps = 1.0e-5 : f64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @batch_norm_stats(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{running_mean and running_var are required in inference}}
  %0 = poptorch.batch_norm %x {eps = 1.0e-5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @batch_norm_rank(%x: tensor<3xf32>, %m: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{input must be at least 2-D (N, C, ...)}}
  %0 = poptorch.batch_norm %x mean %m var %m {eps = 1.0e-5 : f64} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @layer_norm_shape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{normalized_shape must match the trailing input dims}}
  %0 = poptorch.layer_norm %x {normalized_shape = array<i64: 2>, eps = 1.0e-5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @softmax_type(%x: tensor<2x3xf32>) -> tensor<2x3xf16> {
  // expected-error @+1 {{result type must equal the input type}}
  %0 = poptorch.softmax %x {dim = 1 : i64} : tensor<2x3xf32> -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

func.func @log_softmax_dim(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = poptorch.log_softmax %x {dim = 2 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @reduce_dim_twice(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{dim 0 appears more than once}}
  %0 = poptorch.reduce_sum %x {dims = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reduce_rank(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result rank 1 should be 2}}
  %0 = poptorch.reduce_max %x {dims = array<i64: 0>, keepdim = true} : tensor<2x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reduce_dim_range(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{dim 5 is out of range for rank 2}}
  %0 = poptorch.reduce_mean %x {dims = array<i64: 5>} : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{cannot reshape 'tensor<2x3xf32>' to 'tensor<5xf32>'}}
  %0 = poptorch.reshape %x : tensor<2x3xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @reshape_type(%x: tensor<2x3xf32>) -> tensor<6xf16> {
  // expected-error @+1 {{reshape must not change the element type}}
  %0 = poptorch.reshape %x : tensor<2x3xf32> -> tensor<6xf16>
  return %0 : tensor<6xf16>
}

// -----

func.func @permute_dims(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{dims must list every input dim}}
  %0 = poptorch.permute %x {dims = array<i64: 1>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @permute_not_permutation(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{dims is not a permutation}}
  %0 = poptorch.permute %x {dims = array<i64: 1, 1>} : tensor<2x2xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @permute_shape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{result shape does not match the permutation}}
  %0 = poptorch.permute %x {dims = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @transpose_dim(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{dim 3 is out of range for rank 2}}
  %0 = poptorch.transpose %x {dim0 = 0 : i64, dim1 = 3 : i64} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @expand_shape(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{cannot expand 'tensor<2x3xf32>' to 'tensor<4x3xf32>'}}
  %0 = poptorch.expand %x : tensor<2x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @slice_step(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{step must be positive}}
  %0 = poptorch.slice %x {dim = 0 : i64, start = 0 : i64, step = 0 : i64} : tensor<4xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @slice_insert_bounds(%x: tensor<8xf32>, %y: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{slice [2 +4 x2] exceeds size 8}}
  %0 = poptorch.slice_insert %y into %x {dim = 0 : i64, start = 2 : i64, step = 2 : i64} : tensor<4xf32> into tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @slice_insert_shape(%x: tensor<8x3xf32>, %y: tensor<4x2xf32>) -> tensor<8x3xf32> {
  // expected-error @+1 {{source dim 1 must equal the input's}}
  %0 = poptorch.slice_insert %y into %x {dim = 0 : i64, start = 0 : i64, step = 2 : i64} : tensor<4x2xf32> into tensor<8x3xf32> -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

func.func @slice_bounds(%x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{slice [1 +3 x2] exceeds size 4}}
  %0 = poptorch.slice %x {dim = 0 : i64, start = 1 : i64, step = 2 : i64} : tensor<4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @select_index(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{index 2 is out of range}}
  %0 = poptorch.select %x {dim = 0 : i64, index = 2 : i64} : tensor<2x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @cat_empty() -> tensor<2xf32> {
  // expected-error @+1 {{needs at least one input}}
  %0 = poptorch.cat {dim = 0 : i64} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @cat_rank(%x: tensor<2xf32>, %y: tensor<1x2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{inputs must have the result's rank and element type}}
  %0 = poptorch.cat %x, %y {dim = 0 : i64} : (tensor<2xf32>, tensor<1x2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @cat_size(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{concatenated size 4 differs from result}}
  %0 = poptorch.cat %x, %y {dim = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @embedding_weight(%w: tensor<10xf32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{weight must be 2-D}}
  %0 = poptorch.embedding %w, %i : (tensor<10xf32>, tensor<3xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @embedding_indices(%w: tensor<10x4xf32>, %i: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{indices must be integers}}
  %0 = poptorch.embedding %w, %i : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @compare_result_not_bool(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = poptorch.lt %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @compare_operand_types(%x: tensor<2xf32>, %y: tensor<2xi64>) -> tensor<2xi1> {
  // expected-error @+1 {{operand element types 'f32' and 'i64' differ}}
  %0 = poptorch.eq %x, %y : (tensor<2xf32>, tensor<2xi64>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

func.func @where_condition_not_bool(%c: tensor<2xf32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = poptorch.where %c, %x, %x : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @where_branch_types(%c: tensor<2xi1>, %x: tensor<2xf32>, %y: tensor<2xi32>) -> tensor<2xf32> {
  // expected-error @+1 {{operand element type 'i32' differs from the result element type 'f32'}}
  %0 = poptorch.where %c, %x, %y : (tensor<2xi1>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @where_condition_broadcast(%c: tensor<3xi1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{does not broadcast to the result shape}}
  %0 = poptorch.where %c, %x, %x : (tensor<3xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @clamp_types(%x: tensor<2xf32>, %lo: tensor<i32>) -> tensor<2xf32> {
  // expected-error @+1 {{input, bounds and result must share one element type}}
  %0 = poptorch.clamp %x min %lo : (tensor<2xf32>, tensor<i32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @clamp_broadcast(%x: tensor<2xf32>, %hi: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{does not broadcast to the result shape}}
  %0 = poptorch.clamp %x max %hi : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @addmm_mixed_dtypes(%b: tensor<2xf32>, %x: tensor<3x4xf64>, %w: tensor<4x2xf32>) -> tensor<3x2xf64> {
  // expected-error @+1 {{operands must share the result element type 'f64', got 'f32'}}
  %0 = poptorch.addmm %b, %x, %w : (tensor<2xf32>, tensor<3x4xf64>, tensor<4x2xf32>) -> tensor<3x2xf64>
  return %0 : tensor<3x2xf64>
}

// -----

func.func @grid_sampler_bicubic(%x: tensor<1x2x4x5xf32>, %g: tensor<1x2x3x2xf32>) -> tensor<1x2x2x3xf32> {
  // expected-error @+1 {{bicubic is not}}
  %0 = poptorch.grid_sampler %x, %g {interpolation_mode = 2 : i64, padding_mode = 0 : i64, align_corners = false} : (tensor<1x2x4x5xf32>, tensor<1x2x3x2xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----

func.func @glu_odd(%x: tensor<2x5xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{halves dim 1 of odd size}}
  %0 = poptorch.glu %x {dim = 1 : i64} : tensor<2x5xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
