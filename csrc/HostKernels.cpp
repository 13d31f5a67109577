//===- HostKernels.cpp - aten ops run by PyTorch's CPU kernels at run time ===//
//
// Trace side: describeHostKernel encodes an op call (HostKernels.h has the
// format). Run side: the bridge calls runHostKernel with the program's
// buffers; it decodes the call once per description (cached), wraps the
// buffers as CPU tensors, runs the op and copies its results into the
// program's result buffers.
//
//===----------------------------------------------------------------------===//
#include "HostKernels.h"

#include <omp.h>

#include "bridge/Bridge.h"

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

namespace poptorch {
namespace {

/// Ends the message of a host kernel whose result shape differs from the
/// traced one (an op whose shapes depend on values): python/poptorch
/// raises it as poptorch.errors.GuardFailedError.
constexpr const char *kShapeGuardMarker =
    " (a shape that depends on the values of its inputs: guard failed)";

bool hostDtype(at::ScalarType t) {
  switch (t) {
  case at::kFloat:
  case at::kDouble:
  case at::kHalf:
  case at::kBFloat16:
  case at::kBool:
  case at::kChar:
  case at::kByte:
  case at::kShort:
  case at::kInt:
  case at::kLong:
  case at::kComplexHalf:
  case at::kComplexFloat:
  case at::kComplexDouble:
    return true;
  default:
    return false;
  }
}

/// Appends the encoding of `v`; false (with `why`) for values it cannot hold.
bool encode(const c10::IValue &v, std::string &out,
            std::vector<at::Tensor> &inputs, std::string &why) {
  if (v.isNone()) {
    out += 'N';
  } else if (v.isBool()) {
    out += v.toBool() ? "b1" : "b0";
  } else if (v.isInt()) {
    out += "i" + std::to_string(v.toInt()) + ";";
  } else if (v.isDouble()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", v.toDouble());
    out += "d" + std::string(buf) + ";";
  } else if (v.isString()) {
    const std::string &s = v.toStringRef();
    if (s.find('\0') != std::string::npos) {
      why = "a string argument holds a NUL byte";
      return false;
    }
    out += "s" + std::to_string(s.size()) + ":" + s;
  } else if (v.isTensor()) {
    const at::Tensor &t = v.toTensor();
    if (!t.defined()) {
      out += 'U';
      return true;
    }
    if (!hostDtype(t.scalar_type())) {
      why = "an argument has dtype " +
            std::string(c10::toString(t.scalar_type()));
      return false;
    }
    out += "T" + std::to_string(inputs.size()) + ";";
    inputs.push_back(t);
  } else if (v.isDevice()) {
    out += 'D';
  } else if (v.isList()) {
    c10::ArrayRef<c10::IValue> items = v.toListRef();
    out += "L" + std::to_string(items.size()) + ";";
    for (const c10::IValue &item : items)
      if (!encode(item, out, inputs, why))
        return false;
  } else {
    why = "an argument is a " + v.tagKind();
    return false;
  }
  return true;
}

std::string dtypeList(const std::vector<at::ScalarType> &types) {
  std::string s;
  for (size_t i = 0; i < types.size(); ++i)
    s += (i ? "," : "") + std::to_string(static_cast<int>(types[i]));
  return s;
}

//===----------------------------------------------------------------------===//
// Run time
//===----------------------------------------------------------------------===//

/// A decoded value: a leaf IValue, an input index, or a list.
struct Node {
  enum Kind { Value, Input, Device, List, Result } kind = Value;
  c10::IValue value;
  int64_t input = -1;  // Input: the input; Result: the input it starts from
  int64_t result = -1; // Result: the result buffer
  std::vector<Node> items;
};

struct Decoder {
  const char *p;
  [[noreturn]] void bad() {
    throw std::runtime_error("malformed host kernel description");
  }
  int64_t integer(char end) {
    char *e = nullptr;
    long long v = std::strtoll(p, &e, 10);
    if (e == p || *e != end)
      bad();
    p = e + 1;
    return v;
  }
  Node node() {
    Node n;
    switch (*p++) {
    case 'N':
      break;
    case 'U':
      n.value = at::Tensor();
      break;
    case 'b':
      n.value = *p++ == '1';
      break;
    case 'i':
      n.value = integer(';');
      break;
    case 'd': {
      char *e = nullptr;
      double v = std::strtod(p, &e);
      if (e == p || *e != ';')
        bad();
      p = e + 1;
      n.value = v;
      break;
    }
    case 's': {
      int64_t len = integer(':');
      n.value = std::string(p, len);
      p += len;
      break;
    }
    case 'T':
      n.kind = Node::Input;
      n.input = integer(';');
      break;
    case 'D':
      n.kind = Node::Device;
      break;
    case 'O':
      n.kind = Node::Result;
      n.result = integer(';');
      break;
    case 'I':
      n.kind = Node::Result;
      n.result = integer(':');
      n.input = integer(';');
      break;
    case 'L': {
      n.kind = Node::List;
      int64_t len = integer(';');
      for (int64_t i = 0; i < len; ++i)
        n.items.push_back(node());
      break;
    }
    default:
      bad();
    }
    return n;
  }
};

std::vector<at::ScalarType> parseDtypes(const std::string &line) {
  std::vector<at::ScalarType> out;
  std::stringstream ss(line);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty())
      out.push_back(static_cast<at::ScalarType>(std::stoi(item)));
  return out;
}

struct HostKernel {
  std::string name;
  c10::OperatorHandle op;
  std::vector<at::ScalarType> in, out;
  std::vector<Node> args;

  HostKernel(std::string n, c10::OperatorHandle h)
      : name(std::move(n)), op(std::move(h)) {}

  /// Whether the kernel writes the result buffers itself (out=, in place).
  bool writesResults = false;

  c10::IValue build(const Node &n, const c10::TypePtr &type,
                    const std::vector<at::Tensor> &inputs,
                    const std::vector<at::Tensor> &results = {}) const {
    switch (n.kind) {
    case Node::Value:
      return n.value;
    case Node::Input:
      return inputs.at(n.input);
    case Node::Result:
      if (n.input >= 0)
        results.at(n.result).copy_(inputs.at(n.input));
      return results.at(n.result);
    case Node::Device:
      return c10::Device(c10::kCPU);
    case Node::List:
      break;
    }
    c10::TypePtr t = type;
    if (auto opt = t->cast<c10::OptionalType>())
      t = opt->getElementType();
    auto list = t->cast<c10::ListType>();
    if (!list)
      throw std::runtime_error("a list where the schema has " + type->str());
    c10::TypePtr elem = list->getElementType();
    if (elem->kind() == c10::TypeKind::TensorType) {
      c10::List<at::Tensor> l;
      for (const Node &i : n.items)
        l.push_back(build(i, elem, inputs).toTensor());
      return l;
    }
    if (auto opt = elem->cast<c10::OptionalType>()) {
      c10::List<std::optional<at::Tensor>> l;
      for (const Node &i : n.items) {
        c10::IValue v = build(i, opt->getElementType(), inputs);
        l.push_back(v.isTensor() && v.toTensor().defined()
                        ? std::optional<at::Tensor>(v.toTensor())
                        : std::nullopt);
      }
      return l;
    }
    if (elem->kind() == c10::TypeKind::IntType ||
        elem->kind() == c10::TypeKind::SymIntType) {
      c10::List<int64_t> l;
      for (const Node &i : n.items)
        l.push_back(i.value.toInt());
      return l;
    }
    if (elem->kind() == c10::TypeKind::FloatType) {
      c10::List<double> l;
      for (const Node &i : n.items)
        l.push_back(i.value.toDouble());
      return l;
    }
    if (elem->kind() == c10::TypeKind::BoolType) {
      c10::List<bool> l;
      for (const Node &i : n.items)
        l.push_back(i.value.toBool());
      return l;
    }
    throw std::runtime_error("unsupported list type " + type->str());
  }
};

const HostKernel &kernelFor(const char *text) {
  static std::mutex m;
  static std::unordered_map<std::string, std::unique_ptr<HostKernel>> cache;
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find(text);
  if (it != cache.end())
    return *it->second;
  std::string s(text);
  std::vector<std::string> lines;
  size_t start = 0;
  for (int i = 0; i < 4; ++i) {
    size_t end = s.find('\n', start);
    if (end == std::string::npos)
      throw std::runtime_error("malformed host kernel description");
    lines.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(
      lines[0].c_str(), lines[1].c_str());
  auto k = std::make_unique<HostKernel>(
      lines[0] + (lines[1].empty() ? "" : "." + lines[1]), handle);
  k->in = parseDtypes(lines[2]);
  k->out = parseDtypes(lines[3]);
  Decoder d{s.c_str() + start};
  for (size_t i = 0; i < handle.schema().arguments().size(); ++i) {
    k->args.push_back(d.node());
    k->writesResults |= k->args.back().kind == Node::Result;
  }
  return *cache.emplace(s, std::move(k)).first->second;
}

/// The CPU tensor over an unranked memref's buffer (rank, descriptor). The
/// buffer of a complex tensor holds its (real, imaginary) pairs.
at::Tensor tensorOver(intptr_t rank, intptr_t descriptor, at::ScalarType t) {
  auto *words = reinterpret_cast<int64_t *>(descriptor);
  char *aligned = reinterpret_cast<char *>(words[1]);
  std::vector<int64_t> sizes(words + 3, words + 3 + rank);
  std::vector<int64_t> strides(words + 3 + rank, words + 3 + 2 * rank);
  at::ScalarType stored = c10::toRealValueType(t);
  at::Tensor buffer =
      at::from_blob(aligned + words[2] * c10::elementSize(stored), sizes,
                    strides, at::TensorOptions().dtype(stored));
  return at::isComplexType(t) ? at::view_as_complex(buffer) : buffer;
}

namespace {
/// A program runs inside torch's OpenMP team (TaskRuntime.cpp): a kernel that
/// opens a parallel region of its own there gets a nested team of one, and
/// oneDNN's convolution backward waits forever for the threads it planned
/// with. Host kernels run single-threaded on the thread that calls them.
struct SingleThreadedKernel {
  int saved = omp_get_max_threads();
  SingleThreadedKernel() { omp_set_num_threads(1); }
  ~SingleThreadedKernel() { omp_set_num_threads(saved); }
};
} // namespace

void runHostKernel(int64_t n, const intptr_t *words) {
  std::string name = "a host kernel";
  SingleThreadedKernel singleThreaded;
  try {
    const char *text = reinterpret_cast<const char *>(
        reinterpret_cast<int64_t *>(words[1])[1]);
    const HostKernel &k = kernelFor(text);
    name = k.name;
    if (n != static_cast<int64_t>(1 + k.in.size() + k.out.size()))
      throw std::runtime_error("called with " + std::to_string(n) + " buffers");
    // A program run while tracing computes values inside functionalization.
    PlainCpuDispatch plain;
    std::vector<at::Tensor> inputs;
    for (size_t i = 0; i < k.in.size(); ++i)
      inputs.push_back(tensorOver(words[2 + 2 * i], words[3 + 2 * i], k.in[i]));
    std::vector<at::Tensor> results;
    size_t base = 2 + 2 * k.in.size();
    for (size_t r = 0; r < k.out.size(); ++r)
      results.push_back(
          tensorOver(words[base + 2 * r], words[base + 2 * r + 1], k.out[r]));
    torch::jit::Stack stack;
    const auto &schemaArgs = k.op.schema().arguments();
    for (size_t i = 0; i < k.args.size(); ++i)
      stack.push_back(
          k.build(k.args[i], schemaArgs[i].type(), inputs, results));
    k.op.callBoxed(&stack);
    std::vector<at::Tensor> values; // tensor lists flattened
    for (const c10::IValue &v : stack) {
      if (v.isTensorList())
        for (const at::Tensor &t : v.toTensorList().vec())
          values.push_back(t);
      else if (v.toTensor().defined()) // (no buffer for an undefined result)
        values.push_back(v.toTensor());
    }
    if (values.size() != k.out.size())
      throw std::runtime_error("returned " + std::to_string(values.size()) +
                               " tensors, the program expected " +
                               std::to_string(k.out.size()));
    for (size_t r = 0; r < k.out.size(); ++r) {
      at::Tensor &out = results[r];
      const at::Tensor &value = values[r];
      if (k.writesResults && value.data_ptr() == out.data_ptr())
        continue; // written in place by the kernel
      if (value.sizes() != out.sizes())
        throw std::runtime_error("result " + std::to_string(r) + " has shape " +
                                 c10::str(value.sizes()) +
                                 ", the program expected " +
                                 c10::str(out.sizes()) + kShapeGuardMarker);
      out.copy_(value);
    }
  } catch (const std::exception &e) {
    poptorch_bridge::hostKernelFailed("poptorch: host kernel " + name +
                                      " failed: " + e.what());
  }
}

/// Whether an op tagged as random draws nothing with these arguments: its
/// dropout probability is 0 or it is not training (scaled_dot_product_attention
/// with dropout_p=0, native_dropout with train=False).
bool drawsNothing(const c10::OperatorHandle &op,
                  const std::vector<c10::IValue> &args) {
  const c10::FunctionSchema &schema = op.schema();
  bool found = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &name = schema.arguments()[i].name();
    if (name == "dropout_p" || name == "p") {
      if (!args[i].isDouble() || args[i].toDouble() != 0.0)
        return false;
      found = true;
    } else if (name == "train" && args[i].isBool()) {
      if (!args[i].toBool())
        return true;
    }
  }
  return found;
}

} // namespace

std::optional<HostKernelCall>
describeHostKernel(const c10::OperatorHandle &op,
                   const std::vector<c10::IValue> &args,
                   const std::vector<c10::IValue> &results, std::string &why) {
  const c10::FunctionSchema &schema = op.schema();
  if (op.hasTag(at::Tag::nondeterministic_seeded) && !drawsNothing(op, args)) {
    why = "it draws random numbers";
    return std::nullopt;
  }
  // The arguments it writes (out= and in-place forms): the kernel writes
  // the program's result buffers in their place, in argument order; each
  // return must alias one of them.
  std::vector<size_t> written;
  for (size_t i = 0; i < args.size(); ++i) {
    const c10::AliasInfo *alias = schema.arguments()[i].alias_info();
    if (alias && alias->isWrite()) {
      if (!args[i].isTensor()) {
        why = "it writes into a list of tensors";
        return std::nullopt;
      }
      written.push_back(i);
    }
  }
  if (!written.empty() && results.size() != written.size()) {
    why = "it writes into arguments and returns other tensors";
    return std::nullopt;
  }
  // The result buffers: one per tensor, tensor lists flattened in order.
  std::vector<at::ScalarType> out;
  for (const c10::IValue &r : results) {
    std::vector<at::Tensor> tensors;
    if (r.isTensor() && !r.toTensor().defined() && written.empty()) {
      continue; // a result the op does not compute (an output mask's false)
    } else if (r.isTensor() && r.toTensor().defined()) {
      tensors.push_back(r.toTensor());
    } else if (r.isTensorList() && written.empty()) {
      tensors = r.toTensorList().vec();
    } else {
      why = "it returns something other than tensors";
      return std::nullopt;
    }
    for (const at::Tensor &t : tensors) {
      if (!hostDtype(t.scalar_type())) {
        why = "it returns dtype " + std::string(c10::toString(t.scalar_type()));
        return std::nullopt;
      }
      if (t.layout() != at::kStrided) {
        why = "it returns a tensor of layout " + c10::str(t.layout()) +
              " (program buffers are dense)";
        return std::nullopt;
      }
      out.push_back(t.scalar_type());
    }
  }
  HostKernelCall call;
  std::string encoded;
  for (size_t i = 0; i < args.size(); ++i) {
    auto w = std::find(written.begin(), written.end(), i);
    if (w == written.end()) {
      if (!encode(args[i], encoded, call.inputs, why))
        return std::nullopt;
      continue;
    }
    // `O<j>;` the j-th result buffer; `I<j>:<k>;` the same, first given the
    // value of input k (the self of an in-place form).
    size_t j = w - written.begin();
    if (schema.arguments()[i].kwarg_only()) {
      encoded += "O" + std::to_string(j) + ";";
    } else {
      encoded += "I" + std::to_string(j) + ":" +
                 std::to_string(call.inputs.size()) + ";";
      call.inputs.push_back(args[i].toTensor());
    }
  }
  // 47 unranked memrefs at most: the description, inputs and results.
  if (1 + call.inputs.size() + out.size() > 47) {
    why = "it has too many tensor arguments";
    return std::nullopt;
  }
  std::vector<at::ScalarType> in;
  for (const at::Tensor &t : call.inputs)
    in.push_back(t.scalar_type());
  call.call = schema.name() + "\n" + schema.overload_name() + "\n" +
              dtypeList(in) + "\n" + dtypeList(out) + "\n" + encoded;
  return call;
}

void registerHostKernelRuntime() {
  poptorch_bridge::setHostKernelRunner(&runHostKernel);
}

} // namespace poptorch
