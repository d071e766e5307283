// dnb_env._native: bindings of the PUCT tree search (search.hpp); called from module.cpp's PYBIND11_MODULE.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "engine.hpp"

namespace py = pybind11;

namespace dnb {

void bind_search(py::module_& m) { (void)m; }

}  // namespace dnb
