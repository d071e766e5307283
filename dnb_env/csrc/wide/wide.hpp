// The wide build, dnb_env._native_wide: the same sources compiled for boards of up to 12x12 boxes (edges
// in 5 x 64 bits, boxes in 3, edge indices in 16 bits), so that the default build keeps its compact
// records (64-byte boards, 32-byte solver table entries) for boards of up to 9x9. The namespace is renamed
// so that the two extensions' types stay apart in pybind11's registry when both are loaded.
#pragma once
#define DNB_MAX_SIZE 12
#define DNB_MODULE _native_wide
#define dnb dnb_wide
