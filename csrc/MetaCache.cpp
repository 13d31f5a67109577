//===- MetaCache.cpp - memoized Meta kernel results, kept across runs ---===//
#include "MetaCache.h"
#include "bridge/Bridge.h"

#include <c10/core/DefaultDtype.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace poptorch {

namespace {

constexpr char kMagic[] = "poptorch-meta-cache 2\n";
constexpr int64_t kMaxEntries = 100000;

void putInt(std::string &out, int64_t i) {
  out.append(reinterpret_cast<const char *>(&i), sizeof i);
}

void putBytes(std::string &out, const std::string &b) {
  putInt(out, static_cast<int64_t>(b.size()));
  out += b;
}

/// Bounds-checked reading of what putInt/putBytes wrote.
struct Reader {
  const std::string &data;
  size_t pos = 0;
  bool ok = true;

  int64_t getInt() {
    int64_t i = 0;
    if (pos + sizeof i > data.size()) {
      ok = false;
      return 0;
    }
    std::memcpy(&i, data.data() + pos, sizeof i);
    pos += sizeof i;
    return i;
  }
  std::string getBytes() {
    int64_t n = getInt();
    if (!ok || n < 0 || static_cast<size_t>(n) > data.size() - pos) {
      ok = false;
      return {};
    }
    std::string b = data.substr(pos, n);
    pos += n;
    return b;
  }
};

bool appendKey(const c10::IValue &v, std::string &key) {
  if (v.isTensor()) {
    const at::Tensor &t = v.toTensor();
    if (!t.defined()) {
      key.push_back('u');
      return true;
    }
    key.push_back('t');
    putInt(key, static_cast<int64_t>(t.scalar_type()));
    putInt(key, static_cast<int64_t>(t.device().type()));
    putInt(key, t.dim());
    for (int64_t d : t.sizes())
      putInt(key, d);
    for (int64_t d : t.strides())
      putInt(key, d);
    if (t.unsafeGetTensorImpl()->is_wrapped_number()) {
      // The value's bytes (its dtype is in the key already): read directly,
      // not through item(), which dispatches a host op per traced op.
      key.push_back('w');
      key.append(static_cast<const char *>(t.const_data_ptr()),
                 t.element_size());
    }
    return true;
  }
  if (v.isNone()) {
    key.push_back('n');
    return true;
  }
  if (v.isInt() || v.isBool()) {
    key.push_back(v.isInt() ? 'i' : 'b');
    putInt(key, v.isInt() ? v.toInt() : v.toBool());
    return true;
  }
  if (v.isDouble()) {
    key.push_back('d');
    double d = v.toDouble();
    key.append(reinterpret_cast<const char *>(&d), sizeof d);
    return true;
  }
  if (v.isString()) {
    key.push_back('s');
    key += v.toStringRef();
    key.push_back('\0');
    return true;
  }
  if (v.isDevice()) {
    key.push_back('D');
    putInt(key, static_cast<int64_t>(v.toDevice().type()));
    return true;
  }
  if (v.isList()) {
    key.push_back('[');
    for (const c10::IValue &e : v.toListRef())
      if (!appendKey(e, key))
        return false;
    key.push_back(']');
    return true;
  }
  return false; // complex scalars, generators, ...
}

} // namespace

MetaCache &MetaCache::forThisThread() {
  static thread_local MetaCache cache;
  return cache;
}

std::optional<std::string>
MetaCache::keyOf(const c10::OperatorHandle &op,
                 const std::vector<c10::IValue> &args) {
  const c10::OperatorName &name = op.operator_name();
  std::string key = name.name + "." + name.overload_name + "|";
  // Integer division and factory-like promotions produce the default dtype.
  putInt(key, static_cast<int64_t>(
                  c10::typeMetaToScalarType(c10::get_default_dtype())));
  for (const c10::IValue &a : args)
    if (!appendKey(a, key))
      return std::nullopt;
  return key;
}

const std::vector<c10::IValue> *MetaCache::find(const std::string &key) const {
  auto it = entries.find(key);
  return it == entries.end() ? nullptr : &it->second;
}

void MetaCache::insert(std::string key,
                       const std::vector<c10::IValue> &results) {
  for (const c10::IValue &v : results)
    if (!v.isTensor())
      return;
  if (static_cast<int64_t>(entries.size()) >= kMaxEntries)
    entries.clear();
  entries.emplace(std::move(key), results);
  dirty = true;
}

size_t MetaCache::load(const std::string &path, const std::string &tag) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return 0;
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string data = buffer.str();
  size_t magic = sizeof(kMagic) - 1;
  if (data.size() < magic + sizeof(uint64_t) ||
      data.compare(0, magic, kMagic) != 0)
    return 0;
  uint64_t sum;
  std::memcpy(&sum, data.data() + data.size() - sizeof sum, sizeof sum);
  data.resize(data.size() - sizeof sum);
  if (poptorch_bridge::cacheChecksum(data) != sum)
    return 0;
  Reader r{data, magic};
  if (r.getBytes() != tag || !r.ok)
    return 0;
  int64_t count = r.getInt();
  std::vector<std::pair<std::string, std::vector<c10::IValue>>> read;
  for (int64_t e = 0; r.ok && e < count && e < kMaxEntries; ++e) {
    std::string key = r.getBytes();
    int64_t n = r.getInt();
    std::vector<c10::IValue> results;
    for (int64_t i = 0; r.ok && i < n && i < 64; ++i) {
      int64_t dtype = r.getInt();
      if (dtype < 0) {
        results.emplace_back(at::Tensor());
        continue;
      }
      int64_t dim = r.getInt();
      if (!r.ok || dim < 0 || dim > 64 ||
          dtype >= static_cast<int64_t>(c10::ScalarType::NumOptions)) {
        r.ok = false;
        break;
      }
      std::vector<int64_t> sizes(dim), strides(dim);
      for (int64_t &s : sizes)
        s = r.getInt();
      for (int64_t &s : strides)
        s = r.getInt();
      if (!r.ok)
        break;
      results.emplace_back(
          at::empty_strided(sizes, strides,
                            at::TensorOptions()
                                .dtype(static_cast<c10::ScalarType>(dtype))
                                .device(c10::kMeta)));
    }
    if (!r.ok || static_cast<int64_t>(results.size()) != n)
      return 0;
    read.emplace_back(std::move(key), std::move(results));
  }
  if (!r.ok || r.pos != data.size())
    return 0;
  for (auto &[key, results] : read)
    entries.emplace(std::move(key), std::move(results));
  return read.size();
}

size_t MetaCache::save(const std::string &path, const std::string &tag) {
  if (!dirty)
    return 0;
  std::string data(kMagic, sizeof(kMagic) - 1);
  putBytes(data, tag);
  putInt(data, static_cast<int64_t>(entries.size()));
  for (const auto &[key, results] : entries) {
    putBytes(data, key);
    putInt(data, static_cast<int64_t>(results.size()));
    for (const c10::IValue &v : results) {
      const at::Tensor &t = v.toTensor();
      if (!t.defined()) {
        putInt(data, -1);
        continue;
      }
      putInt(data, static_cast<int64_t>(t.scalar_type()));
      putInt(data, t.dim());
      for (int64_t d : t.sizes())
        putInt(data, d);
      for (int64_t d : t.strides())
        putInt(data, d);
    }
  }
  uint64_t sum = poptorch_bridge::cacheChecksum(data);
  data.append(reinterpret_cast<const char *>(&sum), sizeof sum);
  if (!poptorch_bridge::writeFileAtomically(path, data))
    return 0;
  dirty = false;
  return entries.size();
}

} // namespace poptorch
