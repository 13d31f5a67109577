//===- Module.cpp - the poptorch._C Python extension --------------------===//
#include "Tracer.h"
#include "bridge/Bridge.h"

#include <torch/extension.h>

namespace py = pybind11;
using namespace poptorch;
using poptorch_bridge::BufferRef;
using poptorch_bridge::Program;

namespace {

BufferRef bufferOf(const at::Tensor &t) {
  TORCH_CHECK(t.device().is_cpu() && t.is_contiguous(),
              "poptorch internal error: program buffers must be contiguous CPU "
              "tensors");
  return BufferRef{t.data_ptr(), t.sizes().vec()};
}

} // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() =
      "poptorch native extension: ipu device, tracer, compiler and runtime";

  py::register_exception<poptorch_bridge::CompileError>(m, "CompileError",
                                                        PyExc_RuntimeError);

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
      .def_property_readonly("random_state_arg", &Tracer::randomStateArg);

  py::class_<Program, std::shared_ptr<Program>>(m, "Program")
      .def_static(
          "compile",
          [](const std::string &text, const std::string &dumpDir) {
            poptorch_bridge::CompileOptions o;
            o.dumpDir = dumpDir;
            std::unique_ptr<Program> p;
            {
              py::gil_scoped_release release;
              p = Program::compile(text, o);
            }
            return std::shared_ptr<Program>(std::move(p));
          },
          py::arg("module_text"), py::arg("dump_dir") = "")
      .def("run",
           [](Program &p, const std::vector<at::Tensor> &inputs,
              const std::vector<at::Tensor> &outputs) {
             std::vector<BufferRef> in, out;
             for (const at::Tensor &t : inputs)
               in.push_back(bufferOf(t));
             for (const at::Tensor &t : outputs)
               out.push_back(bufferOf(t));
             py::gil_scoped_release release;
             p.run(in, out);
           })
      .def_property_readonly("stages", &Program::stages)
      .def_property_readonly("timings", &Program::timings)
      .def_property_readonly("argument_permutations",
                             &Program::argumentPermutations);

  m.def("release_all_programs", &poptorch_bridge::releaseAllPrograms);
  m.def("pipeline_stages", &poptorch_bridge::pipelineStages);
}
