// OAR_KP_CPU_ISA_CLONES: compile a hot loop once per x86-64 level (AVX-512,
// AVX2+FMA, baseline) and let the loader pick the best the running CPU has
// (GCC function multi-versioning through an ifunc). Plugins are built for
// baseline x86-64, so they load on every machine; only loops marked with this
// get the wider vectors, and the libmvec variants of the math they call
// (kp/cpu/vector_math.h) for that width. Elsewhere (other compilers, device
// compilers, other CPUs) the macro is empty and the loop is compiled once.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define OAR_KP_CPU_ISA_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OAR_KP_CPU_ISA_CLONES
#endif
