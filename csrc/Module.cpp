//===- Module.cpp - the poptorch._C Python extension --------------------===//
#include "Device.h"
#include "HostKernels.h"
#include "MetaCache.h"
#include "MetaKernels.h"
#include "Tracer.h"
#include "bridge/Bridge.h"
#include "bridge/BufferPool.h"
#include "bridge/TaskRuntime.h"

#include "llvm/Support/ErrorHandling.h"

#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/extension.h>

#include <ATen/Parallel.h>

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <cxxabi.h>
#include <exception>
#include <thread>

namespace py = pybind11;
using namespace poptorch;
using poptorch_bridge::BufferRef;
using poptorch_bridge::Program;

namespace {

/// Compiled programs run their parallel loops on torch's intra-op threads
/// (torch.get_num_threads() of them): one pool for eager ops and compiled
/// programs, so neither waits for the other's spinning or sleeping threads.
void runOnTorchThreads(poptorch_bridge::TeamBody body, void *context) {
  at::parallel_for(
      0, at::get_num_threads(), 1,
      [&](int64_t begin, int64_t end) { body(context, begin, end); });
}

/// PyThread_get_thread_ident() of the main thread.
unsigned long gMainThread = 0;

/// Runs `fn` without the GIL, for another Python thread to run meanwhile.
///
/// Not py::gil_scoped_release: its destructor takes the GIL back, and a
/// daemon thread taking the GIL while the interpreter exits is ended there
/// by pthread_exit, whose unwinding out of a destructor (noexcept) aborts the
/// process ("terminate called without an active exception"). A call that
/// returns while the interpreter is exiting parks its thread instead, as
/// Python 3.14 does with daemon threads; exit() ends it with the process.
/// So does a call of another thread than the main one that finds its program
/// released by the exit (poptorch's atexit handler, releaseAllPrograms).
template <typename Fn> void withoutGil(Fn &&fn) {
  PyThreadState *state = PyEval_SaveThread();
  std::exception_ptr error;
  bool exiting = false;
  try {
    fn();
  } catch (abi::__forced_unwind &) {
    throw;
  } catch (const poptorch_bridge::ProgramReleased &) {
    exiting = PyThread_get_thread_ident() != gMainThread;
    error = std::current_exception();
  } catch (...) {
    error = std::current_exception();
  }
#if PY_VERSION_HEX >= 0x030D0000
  exiting = exiting || Py_IsFinalizing();
#else
  exiting = exiting || _Py_IsFinalizing();
#endif
  while (exiting)
    std::this_thread::sleep_for(std::chrono::hours(1));
  PyEval_RestoreThread(state);
  if (error)
    std::rethrow_exception(error);
}

/// A forked child has only the thread that forked: the parent's OpenMP team
/// is gone, and a parallel region there waits for it forever (torch's own ops
/// too, unless the child calls torch.set_num_threads(1)). In a child, program
/// calls run on the calling thread alone.
std::atomic<bool> gForkedChild{false};
void runAloneInForkedChild() {
  gForkedChild = true;
  poptorch_bridge::setTeamRunner(nullptr);
}

/// The shape of a program buffer holding a tensor of these sizes: a complex
/// tensor is held as its (real, imaginary) pairs (Tracer.h, tensorTypeOf).
std::vector<int64_t> bufferShape(c10::IntArrayRef sizes, at::ScalarType t) {
  std::vector<int64_t> shape = sizes.vec();
  if (at::isComplexType(t))
    shape.push_back(2);
  return shape;
}

BufferRef bufferOf(const at::Tensor &t) {
  TORCH_CHECK(t.device().is_cpu() && t.is_contiguous() && !t.is_conj() &&
                  !t.is_neg(),
              "poptorch internal error: program buffers must be contiguous CPU "
              "tensors with no conjugate or negative bit");
  return BufferRef{t.data_ptr(), bufferShape(t.sizes(), t.scalar_type())};
}

/// The common call of a compiled model, done without Python in between: one
/// micro-batch, tensor inputs, no writes to arguments. Checks the inputs
/// against the traced shapes and dtypes (a mismatch returns None, and the
/// caller takes the general path that recompiles or explains), allocates the
/// outputs and runs the program. `state` is appended to the inputs
/// (parameters and buffers on the device).
class CallPlan {
public:
  /// A traced input: its sizes, dtype and, unless it was contiguous, its
  /// strides (the program is specialised on the layout, see
  /// _tracing.layout_of).
  using InputSpec = std::tuple<std::vector<int64_t>, at::ScalarType,
                               std::optional<std::vector<int64_t>>>;

  CallPlan(Program &program, std::vector<InputSpec> inputs,
           std::vector<std::pair<std::vector<int64_t>, at::ScalarType>> results,
           std::vector<at::Tensor> state)
      : program(program), inputs(std::move(inputs)),
        results(std::move(results)), state(std::move(state)) {}

  py::object call(const py::args &args) {
    if (args.size() != inputs.size())
      return py::none();
    std::vector<at::Tensor> held; // copies of non-contiguous inputs
    std::vector<BufferRef> in, out;
    in.reserve(inputs.size() + state.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      PyObject *obj = args[i].ptr();
      if (!THPVariable_Check(obj))
        return py::none();
      const at::Tensor &t = THPVariable_Unpack(obj);
      const auto &[sizes, dtype, strides] = inputs[i];
      if (t.scalar_type() != dtype || t.sizes() != c10::IntArrayRef(sizes) ||
          !t.is_cpu() || t.is_conj() || t.is_neg())
        return py::none();
      bool contiguous = t.is_contiguous();
      if (contiguous != !strides.has_value() ||
          (strides && t.strides() != c10::IntArrayRef(*strides)))
        return py::none();
      if (!contiguous) {
        held.push_back(t.contiguous());
        in.push_back(bufferOf(held.back()));
      } else {
        in.push_back(BufferRef{t.data_ptr(), bufferShape(t.sizes(), dtype)});
      }
    }
    for (const at::Tensor &t : state)
      in.push_back(bufferOf(t));
    std::vector<at::Tensor> outputs;
    outputs.reserve(results.size());
    for (const auto &[shape, dtype] : results) {
      outputs.push_back(at::empty(shape, at::TensorOptions().dtype(dtype)));
      out.push_back(
          BufferRef{outputs.back().data_ptr(), bufferShape(shape, dtype)});
    }
    withoutGil([&] { program.run(in, out); });
    py::list list(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i)
      list[i] = py::reinterpret_steal<py::object>(
          THPVariable_Wrap(std::move(outputs[i])));
    return list;
  }

private:
  Program &program;
  std::vector<InputSpec> inputs;
  std::vector<std::pair<std::vector<int64_t>, at::ScalarType>> results;
  std::vector<at::Tensor> state;
};

/// A Python callable kept by C++ (the tracer's evaluator, its decomposer):
/// released with the GIL held, whoever drops the last copy.
std::shared_ptr<py::object> holdPython(py::object fn) {
  return std::shared_ptr<py::object>(new py::object(std::move(fn)),
                                     [](py::object *o) {
                                       py::gil_scoped_acquire gil;
                                       delete o;
                                     });
}

} // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() =
      "poptorch native extension: ipu device, tracer, compiler and runtime";

  // Errors of the compiler are poptorch.errors.CompileError (a
  // poptorch.Error); the Python package is importing this module, and its
  // errors module imports nothing of ours. The class lives as long as the
  // interpreter: a reference is kept without a destructor at exit.
  static PyObject *compileError =
      py::object(py::module_::import("poptorch.errors").attr("CompileError"))
          .release()
          .ptr();
  m.attr("CompileError") = py::handle(compileError);
  py::register_exception_translator([](std::exception_ptr e) {
    try {
      if (e)
        std::rethrow_exception(e);
    } catch (const poptorch_bridge::CompileError &error) {
      PyErr_SetString(compileError, error.what());
    }
  });
  poptorch_bridge::installFatalErrorHandlers();
  poptorch_bridge::setTeamRunner(&runOnTorchThreads);
  gMainThread = py::module_::import("threading")
                    .attr("main_thread")()
                    .attr("ident")
                    .cast<unsigned long>();
  pthread_atfork(nullptr, nullptr, &runAloneInForkedChild);
  registerHostKernelRuntime();

  py::class_<CallPlan>(m, "CallPlan").def("__call__", &CallPlan::call);

  py::class_<Tracer>(m, "Tracer")
      .def(py::init<std::vector<std::string>>(), py::arg("source_excludes"))
      .def("activate", &Tracer::activate)
      .def("deactivate", &Tracer::deactivate)
      .def("add_argument", &Tracer::addArgument, py::arg("tensor"),
           py::arg("name"), py::arg("role"))
      .def("finish", &Tracer::finish, py::arg("outputs"))
      .def("module_text", &Tracer::moduleText, py::arg("debug_info") = true)
      .def_property_readonly("buffer_update_args", &Tracer::bufferUpdateArgs)
      .def_property_readonly("num_ops", &Tracer::numOps)
      .def("set_record_args", &Tracer::setRecordArgs)
      .def("module_text_with_values", &Tracer::moduleTextWithValues)
      .def_property_readonly("op_log",
                             [](const Tracer &t) {
                               py::list out;
                               for (const OpRecord &r : t.opLog()) {
                                 py::dict d;
                                 d["name"] = r.name;
                                 d["status"] = r.status;
                                 d["dialect_op"] = r.dialectOp;
                                 d["file"] = r.loc.file;
                                 d["line"] = r.loc.line;
                                 d["scope"] = r.loc.scope;
                                 d["inputs"] = r.inputs;
                                 d["outputs"] = r.outputs;
                                 auto texts = [](const auto &types) {
                                   std::vector<std::string> out;
                                   for (const TypeRecord &t : types)
                                     out.push_back(typeText(t));
                                   return out;
                                 };
                                 d["input_types"] = texts(r.inputTypes);
                                 d["output_types"] = texts(r.outputTypes);
                                 py::list args;
                                 for (const c10::IValue &a : r.args)
                                   args.append(torch::jit::toPyObject(a));
                                 d["args"] = args;
                                 out.append(d);
                               }
                               return out;
                             })
      .def_property_readonly("random_state_arg", &Tracer::randomStateArg)
      .def("set_block", &Tracer::setBlock, py::arg("block"), py::arg("stage"),
           py::arg("ipu"), py::arg("phase"), py::arg("backfill") = false)
      .def(
          "set_evaluator",
          [](Tracer &t, py::object fn) {
            if (fn.is_none())
              return t.setEvaluator(nullptr);
            std::shared_ptr<py::object> held = holdPython(std::move(fn));
            t.setEvaluator([held](const std::string &module,
                                  const std::vector<at::Tensor> &args,
                                  const std::vector<at::Tensor> &results) {
              py::gil_scoped_acquire gil;
              (*held)(module, args, results);
            });
          },
          py::arg("evaluator"),
          "evaluator(module_text, arguments, results): computes values "
          "the model reads while tracing (Tracer::readValue).")
      .def(
          "set_decomposer",
          [](Tracer &t, py::object fn) {
            if (fn.is_none())
              return t.setDecomposer(nullptr);
            std::shared_ptr<py::object> held = holdPython(std::move(fn));
            t.setDecomposer([held](const c10::OperatorHandle &op,
                                   torch::jit::Stack *stack) -> bool {
              const c10::FunctionSchema &schema = op.schema();
              size_t n = schema.arguments().size();
              // The ops of the decomposition go straight to the device:
              // below functionalization, autograd and functorch's
              // transforms, as the op itself came.
              c10::impl::ExcludeDispatchKeyGuard below(
                  c10::DispatchKeySet(
                      {c10::DispatchKey::FuncTorchDynamicLayerFrontMode,
                       c10::DispatchKey::FuncTorchDynamicLayerBackMode,
                       c10::DispatchKey::Functionalize,
                       c10::DispatchKey::ADInplaceOrView}) |
                  c10::autograd_dispatch_keyset);
              py::gil_scoped_acquire gil;
              py::list args;
              py::dict kwargs;
              for (size_t i = 0; i < n; ++i) {
                const c10::IValue &value = (*stack)[stack->size() - n + i];
                // A dtype argument is an int on the stack: Python wants a
                // torch.dtype (an int would be read as a device index).
                c10::TypePtr real = schema.arguments()[i].real_type();
                if (auto opt = real->cast<c10::OptionalType>())
                  real = opt->getElementType();
                py::object v =
                    value.isInt() &&
                            real->kind() == c10::TypeKind::ScalarTypeType
                        ? py::reinterpret_borrow<py::object>(
                              reinterpret_cast<PyObject *>(torch::getTHPDtype(
                                  static_cast<at::ScalarType>(value.toInt()))))
                        : torch::jit::toPyObject(value);
                if (schema.arguments()[i].kwarg_only())
                  kwargs[py::str(schema.arguments()[i].name())] = v;
                else
                  args.append(v);
              }
              py::object r =
                  (*held)(schema.name(), schema.overload_name(), args, kwargs);
              if (r.is_none())
                return false;
              const auto &returns = schema.returns();
              std::vector<c10::IValue> results;
              if (returns.size() == 1) {
                results.push_back(torch::jit::toIValue(r, returns[0].type()));
              } else {
                py::tuple values = r.cast<py::tuple>();
                if (values.size() != returns.size())
                  throw std::runtime_error(
                      "poptorch: the decomposition of " + schema.name() +
                      " returned " + std::to_string(values.size()) +
                      " values for " + std::to_string(returns.size()));
                for (size_t k = 0; k < returns.size(); ++k)
                  results.push_back(
                      torch::jit::toIValue(values[k], returns[k].type()));
              }
              torch::jit::drop(*stack, n);
              for (c10::IValue &v : results)
                stack->push_back(std::move(v));
              return true;
            });
          },
          py::arg("decomposer"),
          "decomposer(name, overload, args, kwargs): the results of an op "
          "without a lowering computed by other ops, or None.")
      .def_property_readonly("guards",
                             [](const Tracer &t) {
                               py::list out;
                               for (const Guard &g : t.guards()) {
                                 py::dict d;
                                 d["result"] = g.result;
                                 d["argument"] = g.argument;
                                 d["expected"] = g.expected;
                                 d["what"] = g.what;
                                 d["location"] = g.location;
                                 d["in_program"] = g.inProgram;
                                 out.append(d);
                               }
                               return out;
                             })
      .def("set_host_kernels", &Tracer::setHostKernels, py::arg("on"))
      .def("push_name_scope", &Tracer::pushNameScope, py::arg("name"))
      .def("pop_name_scope", &Tracer::popNameScope)
      .def_property_readonly(
          "host_kernel_ops",
          [](const Tracer &t) {
            std::vector<std::tuple<std::string, std::string, int, std::string>>
                out;
            auto complex = [](const std::vector<TypeRecord> &types) {
              for (const TypeRecord &t : types)
                if (t.dtype && at::isComplexType(*t.dtype))
                  return true;
              return false;
            };
            for (const OpRecord &r : t.opLog()) {
              if (std::string_view(r.status) != "host_kernel")
                continue;
              std::string why;
              auto refused = t.loweringRefused().find(r.name);
              if (complex(r.inputTypes) || complex(r.outputTypes))
                why = "for complex tensors";
              else if (!*r.dialectOp)
                why = "";
              else if (refused != t.loweringRefused().end())
                why = "for these arguments (" + refused->second + ")";
              out.emplace_back(r.name, r.loc.file, r.loc.line, why);
            }
            return out;
          },
          "(op, file, line, why) of each op captured as a host kernel; why: "
          "empty for ops without a lowering, else why no lowering was used "
          "(complex tensors, arguments the lowering refused)")
      .def("value_id", &Tracer::valueIdOf, py::arg("tensor"))
      .def("print_tensor", &Tracer::printTensor, py::arg("tensor"),
           py::arg("title"))
      .def("begin_for_loop", &Tracer::beginForLoop, py::arg("inputs"),
           py::arg("count"))
      .def("end_for_loop", &Tracer::endForLoop, py::arg("outputs"))
      .def("begin_if", &Tracer::beginIf, py::arg("condition"),
           py::arg("then_inputs"))
      .def("else_branch", &Tracer::elseBranch, py::arg("then_outputs"),
           py::arg("else_inputs"))
      .def("end_if", &Tracer::endIf, py::arg("else_outputs"));

  m.def(
      "meta_cache_load",
      [](const std::string &path, const std::string &tag) {
        return MetaCache::forThisThread().load(path, tag);
      },
      py::arg("path"), py::arg("tag"),
      "Adds the Meta results memoized in `path` (written with the same "
      "`tag`) to this thread's memo; returns how many were read.");
  m.def(
      "meta_cache_save",
      [](const std::string &path, const std::string &tag) {
        return MetaCache::forThisThread().save(path, tag);
      },
      py::arg("path"), py::arg("tag"),
      "Writes this thread's memo of Meta results to `path` if it grew; "
      "returns how many entries were written (0: nothing new or unwritable).");
  m.def("ipu_alias_of", &ipuAliasOf, py::arg("tensor"),
        "An ipu tensor sharing the memory of a CPU tensor (parameters and "
        "buffers while tracing, whose values tracing never reads or writes).");
  m.def(
      "check_meta_kernels",
      [](bool on) {
        bool was = checkCppMeta();
        setCheckCppMeta(on);
        return was;
      },
      py::arg("on"),
      "Whether the tracer checks each result of its C++ shape functions "
      "against torch's Meta kernel (initially POPTORCH_CHECK_META=1); "
      "returns the previous setting.");
  m.def("set_trace_sink", [](py::object fn) {
    if (fn.is_none())
      return setTraceSink(nullptr);
    auto holder = std::make_shared<py::object>(std::move(fn));
    setTraceSink([holder](const std::string &line) {
      py::gil_scoped_acquire gil;
      try {
        (*holder)(line);
      } catch (py::error_already_set &e) {
        e.discard_as_unraisable("poptorch trace sink");
      }
    });
  });

  py::class_<Program, std::shared_ptr<Program>>(m, "Program")
      .def_static(
          "compile",
          [](const std::string &text, const std::string &dumpDir,
             const std::string &deviceLoop, const std::string &cachePath,
             const std::string &cacheKey, bool snapshotPasses, int optLevel,
             bool pipelineStages) {
            poptorch_bridge::CompileOptions o;
            o.dumpDir = dumpDir;
            o.deviceLoop = deviceLoop;
            o.cachePath = cachePath;
            o.cacheKey = cacheKey;
            o.snapshotPasses = snapshotPasses;
            o.optLevel = optLevel;
            o.pipelineStages = pipelineStages;
            std::unique_ptr<Program> p;
            withoutGil([&] { p = Program::compile(text, o); });
            return std::shared_ptr<Program>(std::move(p));
          },
          py::arg("module_text"), py::arg("dump_dir") = "",
          py::arg("device_loop") = "", py::arg("cache_path") = "",
          py::arg("cache_key") = "", py::arg("snapshot_passes") = false,
          py::arg("opt_level") = 3, py::arg("pipeline_stages") = false)
      .def("run",
           [](Program &p, const std::vector<at::Tensor> &inputs,
              const std::vector<at::Tensor> &outputs) {
             std::vector<BufferRef> in, out;
             for (const at::Tensor &t : inputs)
               in.push_back(bufferOf(t));
             for (const at::Tensor &t : outputs)
               out.push_back(bufferOf(t));
             withoutGil([&] { p.run(in, out); });
           })
      // Replicas: one run per replica, spread over torch's intra-op thread
      // pool (no thread is created per call). The program is reentrant: it
      // keeps no state between calls, and every run has its own buffers.
      .def(
          "call_plan",
          [](Program &p, std::vector<CallPlan::InputSpec> inputs,
             std::vector<std::pair<std::vector<int64_t>, at::ScalarType>>
                 results,
             std::vector<at::Tensor> state) {
            return CallPlan(p, std::move(inputs), std::move(results),
                            std::move(state));
          },
          py::keep_alive<0, 1>(), py::arg("inputs"), py::arg("results"),
          py::arg("state"))
      .def("run_replicas",
           [](Program &p, const std::vector<std::vector<at::Tensor>> &inputs,
              const std::vector<std::vector<at::Tensor>> &outputs) {
             TORCH_CHECK(inputs.size() == outputs.size(),
                         "poptorch internal error: one input and one output "
                         "list per replica");
             std::vector<std::vector<BufferRef>> in(inputs.size()),
                 out(outputs.size());
             for (size_t r = 0; r < inputs.size(); ++r) {
               for (const at::Tensor &t : inputs[r])
                 in[r].push_back(bufferOf(t));
               for (const at::Tensor &t : outputs[r])
                 out[r].push_back(bufferOf(t));
             }
             std::vector<std::exception_ptr> errors(in.size());
             auto replicas = [&](int64_t begin, int64_t end) {
               for (int64_t r = begin; r < end; ++r) {
                 try {
                   p.run(in[r], out[r]);
                 } catch (...) {
                   errors[r] = std::current_exception();
                 }
               }
             };
             withoutGil([&] {
               if (gForkedChild)
                 replicas(0, int64_t(in.size()));
               else
                 at::parallel_for(0, int64_t(in.size()), 1, replicas);
             });
             for (std::exception_ptr &e : errors)
               if (e)
                 std::rethrow_exception(e);
           })
      .def_property_readonly("stages", &Program::stages)
      .def_property_readonly("timings", &Program::timings)
      .def_property_readonly("origin", &Program::origin)
      .def_property_readonly("pipeline_schedule", &Program::pipelineSchedule)
      .def_property_readonly(
          "passes",
          [](const Program &p) {
            py::list out;
            for (const poptorch_bridge::PassRecord &r : p.passes())
              out.append(py::make_tuple(r.stage, r.pipeline, r.name, r.seconds,
                                        r.text));
            return out;
          })
      // Per argument of @main: (view shape, permutation), either empty.
      .def_property_readonly("argument_layouts", [](const Program &p) {
        std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> out;
        for (const poptorch_bridge::ArgumentLayout &l : p.argumentLayouts())
          out.emplace_back(l.shape, l.perm);
        return out;
      });

  m.def("release_all_programs", &poptorch_bridge::releaseAllPrograms);
  m.def(
      "_report_llvm_fatal_error",
      [](const std::string &reason) {
        llvm::report_fatal_error(reason.c_str());
      },
      "Calls LLVM's report_fatal_error (for tests of the handler, see "
      "installFatalErrorHandlers): raises CompileError.");
  m.def("pipeline_stages", &poptorch_bridge::pipelineStages);
  m.def("host_cpu", &poptorch_bridge::hostCpuDescription);
  m.def("buffer_pool_cached_bytes", &poptorch_bridge::bufferPoolCachedBytes,
        "Bytes of freed intermediate buffers kept for reuse by compiled "
        "programs");
}
