// The data behind lesson 05's picture of GPipe against 1F1B (pipeline-schedules.svg): the two
// schedules of 4 stages and 8 micro-batches, with a backward pass twice as long as a forward
// one, as record_timeline() places them. Built from the reference solution by the course's
// tests, which compare its output with the committed pipeline-schedules.json; the picture is
// drawn from that file by tools/course/pictures.py. Prints JSON on stdout.
//
//   ./course run lessons/05-parallelism-nvlink/pipeline_picture_data.cu exercises/05-parallelism-nvlink/05_pipeline_schedule.cu
//
// prints the same for your own schedules.

#include <cstdio>

#include "pipeline_schedule.hpp"

namespace {

constexpr int kStages = 4, kMicro = 8, kForward = 1, kBackward = 2;

void print_timeline(const char* name, PipeKind kind, bool last) {
  const PipeTimeline timeline = record_timeline(make_schedule(kind, kStages, kMicro), kForward, kBackward);
  std::printf("    \"%s\": {\"makespan\": %d, \"bubble\": %.4f, \"peak_stash\": [", name, timeline.makespan,
              timeline.bubble);
  for (std::size_t s = 0; s < timeline.peak_stash.size(); ++s)
    std::printf("%s%d", s ? ", " : "", timeline.peak_stash[s]);
  std::printf("],\n      \"stages\": [\n");
  for (std::size_t s = 0; s < timeline.stages.size(); ++s) {
    std::printf("        [");
    for (std::size_t k = 0; k < timeline.stages[s].size(); ++k) {
      const PipeSlot& slot = timeline.stages[s][k];
      std::printf("%s[\"%c\", %d, %d, %d]", k ? ", " : "", slot.op.forward ? 'F' : 'B', slot.op.micro, slot.start,
                  slot.end);
    }
    std::printf("]%s\n", s + 1 < timeline.stages.size() ? "," : "");
  }
  std::printf("      ]}%s\n", last ? "" : ",");
}

}  // namespace

int main() {
  std::printf("{\"stages\": %d, \"micro\": %d, \"forward\": %d, \"backward\": %d,\n  \"schedules\": {\n", kStages,
              kMicro, kForward, kBackward);
  print_timeline("GPipe", PipeKind::GPipe, false);
  print_timeline("1F1B", PipeKind::OneFOneB, true);
  std::printf("  }\n}\n");
  return 0;
}
