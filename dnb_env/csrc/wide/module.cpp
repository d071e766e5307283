// The wide build of ../module.cpp: see wide.hpp.
#include "wide.hpp"
#include "../module.cpp"
