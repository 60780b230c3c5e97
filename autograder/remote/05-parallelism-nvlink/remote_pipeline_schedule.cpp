// The contract of pipeline_schedule, as the judge and the worker exchange it
// (../course_remote.hpp, ../remote_ranks.hpp). Schedules and timelines are plain data in
// vectors: they cross element by element.
#include "pipeline_schedule.hpp"

#include "remote_ranks.hpp"

namespace course {
namespace remote {

template <>
struct Marshal<PipeTimeline> {
  static void put(Writer& out, const PipeTimeline& timeline) {
    Marshal<std::vector<std::vector<PipeSlot>>>::put(out, timeline.stages);
    out.put<std::int32_t>(timeline.makespan);
    out.put(timeline.bubble);
    Marshal<std::vector<int>>::put(out, timeline.peak_stash);
  }
  static PipeTimeline get(Reader& in) {
    PipeTimeline timeline;
    timeline.stages = Marshal<std::vector<std::vector<PipeSlot>>>::get(in);
    timeline.makespan = in.get<std::int32_t>();
    timeline.bubble = in.get<double>();
    timeline.peak_stash = Marshal<std::vector<int>>::get(in);
    return timeline;
  }
};

}  // namespace remote
}  // namespace course

using PipeOrders = std::vector<std::vector<PipeOp>>;

COURSE_REMOTE_FUNCTION(PipeOrders, make_schedule, (PipeKind kind, int stages, int micro), (kind, stages, micro))
COURSE_REMOTE_FUNCTION(PipeTimeline, record_timeline,
                       (const PipeOrders& orders, int forward_time, int backward_time),
                       (orders, forward_time, backward_time))
COURSE_REMOTE_FUNCTION(void, run_pipeline,
                       (course::RankGroup& group, const PipeTimeline& timeline, int width, int rows,
                        course::SymmetricBuffer<float>& params, course::SymmetricBuffer<float>& x,
                        course::SymmetricBuffer<float>& t, course::SymmetricBuffer<float>& y,
                        course::SymmetricBuffer<float>& grad),
                       (group, timeline, width, rows, params, x, t, y, grad))
