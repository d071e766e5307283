// The wide build of ../env_module.cpp: see wide.hpp.
#include "wide.hpp"
#include "../env_module.cpp"
