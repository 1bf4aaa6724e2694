// Tiered internal assertions, chosen at build time with -DMEMLAKE_DEBUG=N
// (CMake sets 2 for Debug builds, 0 otherwise):
//   ML_ASSERT(cond)        level >= 1: cheap checks of invariants
//   ML_DEBUG_ASSERT(cond)  level >= 2: checks that cost O(n) per operation
// A failed check throws Errc::internal naming the condition and the place,
// like PagePool::check(); at level 0 the condition is not even evaluated.
#pragma once

#include "core/error.h"

#ifndef MEMLAKE_DEBUG
#define MEMLAKE_DEBUG 0
#endif

#define ML_ASSERT_IMPL(cond)                                                                                  \
  do {                                                                                                        \
    if (!(cond))                                                                                              \
      ::memlake::throw_error(::memlake::Errc::internal,                                                      \
                             std::string("assertion failed: " #cond " at ") + __FILE__ + ":" + std::to_string(__LINE__)); \
  } while (0)

#if MEMLAKE_DEBUG >= 1
#define ML_ASSERT(cond) ML_ASSERT_IMPL(cond)
#else
#define ML_ASSERT(cond) ((void)0)
#endif

#if MEMLAKE_DEBUG >= 2
#define ML_DEBUG_ASSERT(cond) ML_ASSERT_IMPL(cond)
#else
#define ML_DEBUG_ASSERT(cond) ((void)0)
#endif
