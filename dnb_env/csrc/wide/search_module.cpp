// The wide build of ../search_module.cpp: see wide.hpp.
#include "wide.hpp"
#include "../search_module.cpp"
