#include <gtest/gtest.h>

#include "core/random.h"
#include "graph/memory_plan.h"

namespace tenfold {
namespace {

TEST(MemoryPlan, BuffersLiveTogetherNeverOverlap) {
  Random random(3);
  MemoryPlan plan;
  for (int i = 0; i < 60; ++i) {
    int first = int(random.below(40));
    plan.add(64 * (1 + random.below(100)), first, first + int(random.below(10)));
  }
  plan.finalize();
  for (int a = 0; a < 60; ++a) {
    EXPECT_EQ(plan.offset(a) % 64, 0u);
    EXPECT_LE(plan.offset(a) + plan.bytes(a), plan.total_bytes());
    for (int b = a + 1; b < 60; ++b) {
      if (!plan.live_together(a, b)) continue;
      bool disjoint = plan.offset(a) + plan.bytes(a) <= plan.offset(b) ||
                      plan.offset(b) + plan.bytes(b) <= plan.offset(a);
      EXPECT_TRUE(disjoint) << "buffers " << a << " and " << b << " overlap";
    }
  }
  EXPECT_LT(plan.total_bytes(), plan.unshared_bytes());
}

TEST(MemoryPlan, ReusesMemoryOfDeadBuffers) {
  MemoryPlan plan;
  int a = plan.add(1000, 0, 1);
  int b = plan.add(1000, 2, 3);  // starts after a dies: same memory
  int c = plan.add(500, 1, 2);   // overlaps both
  plan.finalize();
  EXPECT_EQ(plan.offset(a), plan.offset(b));
  EXPECT_EQ(plan.total_bytes(), 1024u + 512u);
  EXPECT_NE(plan.offset(c), plan.offset(a));
}

TEST(MemoryPlan, ExtendWidensALifetime) {
  MemoryPlan plan;
  int a = plan.add(64, 0, 1);
  int b = plan.add(64, 2, 3);
  plan.extend(a, 0, 2);
  plan.finalize();
  EXPECT_TRUE(plan.live_together(a, b));
  EXPECT_NE(plan.offset(a), plan.offset(b));
}

}  // namespace
}  // namespace tenfold
