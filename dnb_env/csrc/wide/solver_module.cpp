// The wide build of ../solver_module.cpp: see wide.hpp.
#include "wide.hpp"
#include "../solver_module.cpp"
