// The Python extension of the nbox c10d backend: `create` is what
// torch.distributed.Backend.register_backend calls (nbox_torch/__init__.py registers it).
#include <pybind11/chrono.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/python.h>

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "bridge/torch/process_group_nbox.h"

namespace {

c10::intrusive_ptr<c10d::ProcessGroup> Create(const c10::intrusive_ptr<c10d::Store>& store,
                                              int rank, int size,
                                              const std::chrono::milliseconds& /*timeout*/,
                                              const std::vector<int64_t>& global_ranks) {
  return c10::make_intrusive<nbox::torch_backend::ProcessGroupNbox>(store, rank, size,
                                                                    global_ranks);
}

}  // namespace

PYBIND11_MODULE(_nbox_c10d, module) {
  module.doc() = "torch.distributed backend over nbox's host runtime (libnbox_host.so)";
  pybind11::class_<nbox::torch_backend::ProcessGroupNbox, c10d::ProcessGroup,
                   c10::intrusive_ptr<nbox::torch_backend::ProcessGroupNbox>>(module,
                                                                              "ProcessGroupNbox")
      .def("mark_iteration", &nbox::torch_backend::ProcessGroupNbox::MarkIteration,
           pybind11::arg("iteration"), pybind11::arg("begin"),
           pybind11::call_guard<pybind11::gil_scoped_release>())
      .def("virtual_time_ns", &nbox::torch_backend::ProcessGroupNbox::VirtualTimeNs,
           pybind11::call_guard<pybind11::gil_scoped_release>());
  module.def("create", &Create, pybind11::arg("store"), pybind11::arg("rank"),
             pybind11::arg("world_size"), pybind11::arg("timeout"),
             pybind11::arg("global_ranks") = std::vector<int64_t>{},
             pybind11::call_guard<pybind11::gil_scoped_release>());
}
