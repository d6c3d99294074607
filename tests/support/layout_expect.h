// Golden-layout assertions for the C ABIs (plugin and adapter driver): a
// struct's size and alignment, a field's offset and size, as numbers written
// in the test for x86_64 LP64.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>

#if !(defined(__x86_64__) && defined(__LP64__))
#error "the golden ABI layouts are for x86_64 LP64; add the numbers for this target"
#endif

#define EXPECT_STRUCT(type, size, align) \
  do {                                   \
    EXPECT_EQ(sizeof(type), size##u);    \
    EXPECT_EQ(alignof(type), align##u);  \
  } while (0)

#define EXPECT_FIELD(type, field, offset, size)                      \
  do {                                                               \
    EXPECT_EQ(offsetof(type, field), offset##u) << #type "." #field; \
    EXPECT_EQ(sizeof(type::field), size##u) << #type "." #field;     \
  } while (0)
