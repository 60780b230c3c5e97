// The simulator's fiber stacks (src/fiber.hpp), as plain C++: a guarded stack faults below its
// bottom; slab stacks (those a process gets past FiberStack::kGuardedStackBudget, as a large
// cooperative grid does) sit side by side in one mapping, each with a canary that shows an
// overflow, and a guard page below each chunk.
#include "fiber.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace {

using cudasim::detail::FiberStack;
using cudasim::detail::StackSlab;

constexpr std::size_t kStackBytes = 64 * 1024;

TEST(FiberStacks, AGuardedStackHasItsGuardPageBelowIt) {
  FiberStack stack(kStackBytes);
  EXPECT_EQ(stack.size(), kStackBytes);
  EXPECT_EQ(stack.top(), stack.base() + kStackBytes);
  EXPECT_TRUE(stack.in_guard(stack.base() - 1));
  EXPECT_FALSE(stack.in_guard(stack.base()));
  std::memset(stack.base(), 0x5a, 128);  // its bottom bytes: a guarded stack needs no canary
  EXPECT_FALSE(stack.overflowed());
}

TEST(FiberStacks, SlabStacksLieSideBySideWithOneGuardPagePerChunk) {
  StackSlab slab(kStackBytes);
  FiberStack lowest(slab), next(slab);
  EXPECT_EQ(next.base(), lowest.base() + kStackBytes);
  EXPECT_EQ(next.size(), kStackBytes);
  EXPECT_TRUE(lowest.in_guard(lowest.base() - 1));  // the chunk's guard page
  EXPECT_TRUE(next.in_guard(lowest.base() - 1));
  EXPECT_FALSE(next.in_guard(next.base() - 1));  // below `next` lies `lowest`, not a guard page
  EXPECT_FALSE(lowest.overflowed());
  EXPECT_FALSE(next.overflowed());
}

TEST(FiberStacks, AnOverflowOfASlabStackDamagesItsCanaryOnly) {
  StackSlab slab(kStackBytes);
  FiberStack lowest(slab), next(slab);
  next.base()[kStackBytes - 1] = 1;  // frames at the top: not an overflow
  EXPECT_FALSE(next.overflowed());
  next.base()[5] = 1;  // a thread that reached its stack's lowest bytes, on its way below them
  EXPECT_TRUE(next.overflowed());
  EXPECT_FALSE(lowest.overflowed());
}

TEST(FiberStacks, AStackGivenBackIsCleanWhenTakenAgain) {
  StackSlab slab(kStackBytes);
  auto first = std::make_unique<FiberStack>(slab);
  char* base = first->base();
  std::memset(base, 0x77, 4096);
  EXPECT_TRUE(first->overflowed());
  first.reset();
  FiberStack again(slab);
  EXPECT_EQ(again.base(), base);
  EXPECT_FALSE(again.overflowed());
}

TEST(FiberStacks, AChunkHoldsSixtyFourStacksThenANewOneStarts) {
  StackSlab slab(kStackBytes);
  std::vector<std::unique_ptr<FiberStack>> stacks;
  for (std::size_t i = 0; i <= StackSlab::kStacksPerChunk; ++i) stacks.push_back(std::make_unique<FiberStack>(slab));
  const FiberStack& first_of_second_chunk = *stacks.back();
  EXPECT_TRUE(first_of_second_chunk.in_guard(first_of_second_chunk.base() - 1));
  EXPECT_FALSE(first_of_second_chunk.overflowed());
}

}  // namespace
