// OAR_CPU_ISA_CLONES: compile a hot loop once per x86-64 level (AVX-512,
// AVX2+FMA, baseline) and let the loader pick the best the running CPU has
// (GCC function multi-versioning through an ifunc). The plugin itself is
// built for baseline x86-64, so it loads on every machine; only loops marked
// with this get the wider vectors. Elsewhere (other compilers or CPUs) the
// macro is empty and the loop is compiled once for the target.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define OAR_CPU_ISA_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OAR_CPU_ISA_CLONES
#endif
