//===- MetaCache.h - memoized Meta kernel results, kept across runs -----===//
//
// The tracer learns the dtype, sizes and strides of every captured op's
// results from a C++ shape function (MetaKernels.h) or by re-dispatching the
// op on Meta tensors, whose kernels are mostly Python functions
// (torch._meta_registrations): tens of microseconds a call, and the first of
// them in a process imports sympy and torch._dynamo (1.1-1.8 s). A model
// repeats the same op on the same shapes, so results are memoized on
// everything a Meta kernel can see; with executable caching the memo is also
// written next to the cache entries, so that a later process tracing the
// same model computes no shapes at all.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace poptorch {

class MetaCache {
public:
  /// The memo of the calling thread (tracing happens on one thread).
  static MetaCache &forThisThread();

  /// What the Meta kernel of `op` can depend on in `args` (tensor metadata,
  /// wrapped numbers' values, scalars, lists, the default dtype), or none
  /// when an argument cannot be described (the call is not memoized).
  static std::optional<std::string> keyOf(const c10::OperatorHandle &op,
                                          const std::vector<c10::IValue> &args);

  /// The memoized results for `key`, or null.
  const std::vector<c10::IValue> *find(const std::string &key) const;
  /// Memoizes `results` if they are all tensors (Meta tensors or undefined).
  void insert(std::string key, const std::vector<c10::IValue> &results);

  /// Adds the entries of the file at `path` written with the same `tag`
  /// (the torch and poptorch builds) and returns how many were read; a
  /// missing, foreign or damaged file reads as empty.
  size_t load(const std::string &path, const std::string &tag);
  /// Writes every entry to `path` (atomically, by rename) if any was added
  /// since the last load or save, and returns how many were written (0 when
  /// there was nothing new or it could not write: the memo is only a cache).
  size_t save(const std::string &path, const std::string &tag);

private:
  std::unordered_map<std::string, std::vector<c10::IValue>> entries;
  bool dirty = false;
};

} // namespace poptorch
